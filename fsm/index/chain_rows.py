"""`ChainRow`: a row along a fixed-length run of one ASCII class, cut from a per-vocabulary table.

Every position of a fixed-length string (``minLength = maxLength = 30`` over printable ASCII:
Github_easy o10012; twelve hex digits: o10009) is a state of its own whose row holds most of the
vocabulary: every token of the class no longer than the characters left, each ending that many
positions on. The walk found them (emitting whole chains, `walk_kernel.walk_subtrees`: ~0.2 ms)
and the row sorted and packed them (~0.13 ms), at every position. Which tokens are of the class,
and how long, depends only on the vocabulary and the class: `ChainTable` holds it once per class
(each token's length when all its bytes are of the class, the packed masks of those no longer than
each length, the trie nodes where a token leaves the class), and a `ChainRow` is that table cut at
the characters left plus a walk of the few tokens that leave the class within reach (a closing
quote, an escape): its mask a copy and a few bits, its end states read off the chain when asked.

Exact when the chain's end reads none of the class (`trie_kernel.label_chain_of`'s ``kills``): a
token of the class is in the row iff it is no longer than the chain, and ends at the chain's state
of its length; any other token first leaves the class at some depth, from the chain's state before
it, and is walked from there (`trie_kernel.walk_below`), or dies past the chain's end.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numba
import numpy as np

from ..limits import Deadline
from ..vocabulary import Vocabulary
from .contract import OnDemand
from .lazy_row import LazyRow
from .preorder import PreorderTrie, tokens_at, vocabulary_preorder
from .row_lookup import find_token
from .row_sort import leaving_pairs, merge_renamed, set_bits
from .steps import Steps
from .trie_kernel import walk_below
from .walk_arrays import walk_view

CHAIN_ROW_MIN = 4  # characters a chain needs before its rows are cut from the table (else walked)
_TABLES_KEPT = 16  # classes whose tables a vocabulary keeps (each ~0.4 MB on SmolLM2)


@dataclass(frozen=True)
class ChainTable:
    """Per vocabulary and ASCII class: which tokens are of the class and how long, and where others leave it."""

    length: np.ndarray  # int16 per token: its length when every byte is of the class, else 0
    words: np.ndarray  # uint32 (max_len + 1, words): packed masks of the tokens of length 1..L
    exit_node: np.ndarray  # int64: trie nodes whose byte is not of the class, all above them are
    exit_depth: np.ndarray  # int64: their depths, ascending

    @property
    def max_len(self) -> int:
        return len(self.words) - 1


@numba.njit(cache=True, nogil=True)
def _lengths(label, depth, tok_start, tok_count, tok_ids, m0, m1, n_vocab, max_depth):  # pragma: no cover
    """Per token its length when every byte is in the class (bit sets ``m0``, ``m1`` over ASCII),
    and the preorder nodes whose byte is not in it while every byte above is."""
    on_path = np.zeros(max_depth + 2, np.bool_)  # the class holds every byte down to this depth
    on_path[0] = True
    length = np.zeros(n_vocab, np.int16)
    exits = np.empty(len(label), np.int64)
    k = 0
    for i in range(1, len(label)):
        d = depth[i]
        b = label[i]
        ok = False
        if b < 64:
            ok = (m0 >> np.uint64(b)) & np.uint64(1) != 0
        elif b < 128:
            ok = (m1 >> np.uint64(b - 64)) & np.uint64(1) != 0
        if on_path[d - 1] and ok:
            on_path[d] = True
            for j in range(tok_start[i], tok_start[i] + tok_count[i]):
                length[tok_ids[j]] = d
        else:
            on_path[d] = False
            if on_path[d - 1]:
                exits[k] = i
                k += 1
    return length, exits[:k]


@numba.njit(cache=True, nogil=True)
def _cumulative_masks(length, max_len, n_words):  # pragma: no cover
    words = np.zeros((max_len + 1, n_words), np.uint32)
    for t in range(len(length)):
        c = length[t]
        if c > 0:
            words[c, t >> 5] |= np.uint32(1) << np.uint32(t & 31)
    for n in range(1, max_len + 1):
        for j in range(n_words):
            words[n, j] |= words[n - 1, j]
    return words


def chain_table(trie: PreorderTrie, vocab: Vocabulary, m0: int, m1: int) -> ChainTable:
    """The `ChainTable` of the ASCII class with bit sets ``m0`` (bytes 0-63) and ``m1`` (64-127),
    kept on the vocabulary (the last `_TABLES_KEPT` classes).

    >>> from fsm.index.kernels import kernels
    >>> v = Vocabulary([b"ab", b"a", b"a\\"", b"b", None], eos_token_ids=[4])
    >>> t = chain_table(kernels().vocabulary_preorder(v), v, 0, (1 << 33) | (1 << 34))  # [ab]
    >>> t.length.tolist(), t.max_len
    ([2, 1, 0, 1, 0], 2)
    """
    tables = vocab.derived("chain_tables", dict)
    key = (int(m0), int(m1))
    got = tables.get(key)
    if got is None:
        got = tables[key] = ChainTable(*_table_parts(trie, vocab, m0, m1))
        while len(tables) > _TABLES_KEPT:
            del tables[next(iter(tables))]
    return got


def _table_parts(trie: PreorderTrie, vocab: Vocabulary, m0: int, m1: int) -> tuple:
    length, exits = _lengths(
        trie.label,
        trie.depth,
        trie.tok_start,
        trie.tok_count,
        trie.tok_ids,
        np.uint64(m0),
        np.uint64(m1),
        vocab.size,
        trie.max_depth,
    )
    exits = exits[np.argsort(trie.depth[exits], kind="stable")]
    words = _cumulative_masks(length, int(length.max(initial=0)), (vocab.size + 31) // 32)
    return length, words, exits, trie.depth[exits].astype(np.int64)


class ChainRow(LazyRow):
    """A row along a chain of ``r`` characters of one class (`fsm.index.rows.Row`'s interface): the
    table's tokens of the class no longer than ``r``, token of length n ending at ``states[n]``,
    and the tokens walked apart (``x_tok``, sorted; EOS among them when the state accepts). Its
    packed mask is the table's with their bits set; the merged arrays are made only if read."""

    __slots__ = ("_dense", "has_text", "packed", "r", "states", "table", "x_end", "x_tok")

    def __init__(
        self, table: ChainTable, r: int, states: np.ndarray, x_tok: np.ndarray, x_end: np.ndarray, text: bool
    ):
        self.table, self.r, self.states, self.x_tok, self.x_end = table, r, states, x_tok, x_end
        inside = table.words[min(r, table.max_len)]
        self.has_text = text or bool(inside.any())
        words = inside.copy()
        set_bits(x_tok, words)
        self.packed = words.view(np.int32)
        self.packed.setflags(write=False)
        self._dense: tuple[np.ndarray, np.ndarray] | None = None

    def _merged(self) -> tuple[np.ndarray, np.ndarray]:
        if self._dense is None:
            length = self.table.length
            inside = np.flatnonzero((length > 0) & (length <= self.r)).astype(np.int32)
            self._dense = merge_renamed(inside, length[inside], self.states, self.x_tok, self.x_end)
        return self._dense

    def next_state(self, token_id: int) -> int | None:
        """The state ``token_id`` leads to, or None when it is not allowed."""
        n = int(self.table.length[token_id])
        if 0 < n <= self.r:
            return int(self.states[n])
        i = find_token(self.x_tok, token_id)
        return int(self.x_end[i]) if i >= 0 else None

    @property
    def nbytes(self) -> int:
        return self.states.nbytes + self.x_tok.nbytes + self.x_end.nbytes + self.packed.nbytes


def chain_row(
    dfa,
    chain: np.ndarray,
    r: int,
    trie: PreorderTrie,
    table: ChainTable,
    on_demand: OnDemand | None,
    deadline: Deadline | None,
    steps: Steps | None,
    eos: tuple[np.ndarray, int] | None = None,
) -> ChainRow:
    """The `ChainRow` of ``chain[0]``, whose chain of ``r`` uniform steps of ``table``'s class
    (`trie_kernel.label_chain_of`) ends in a state that reads none of it; EOS ids ``eos[0]``
    leading to ``eos[1]`` added."""
    states = np.ascontiguousarray(chain[: r + 1], dtype=np.int64)
    if on_demand is not None:
        on_demand.ensure(states)
    k = int(np.searchsorted(table.exit_depth, r + 1, side="right"))
    nodes, depth = table.exit_node[:k], table.exit_depth[:k]
    tbl, rows, bc, _, _ = walk_view(dfa, on_demand, False)
    to = tbl[rows[states[depth - 1]], bc[trie.label[nodes]]].astype(np.int64)
    live = to >= 0
    nodes, to = nodes[live], to[live]
    at_tok, which = tokens_at(trie, nodes)
    below = walk_below(dfa, (to, nodes), trie, on_demand=on_demand, deadline=deadline, steps=steps)
    x_tok, x_end, text = leaving_pairs((at_tok, to[which]), below, eos)
    return ChainRow(table, r, states.astype(np.int32), x_tok, x_end, text)


_warm = threading.Event()


def ensure_chain_compiled() -> None:
    """Load (or compile) this module's kernels once per process, as `trie_kernel.ensure_compiled`
    does the walk's: a first chain row pays no load.

    >>> ensure_chain_compiled()
    """
    if _warm.is_set():
        return
    v = Vocabulary([b"a", b"ab", b'a"', None], eos_token_ids=[3])
    trie = vocabulary_preorder(v)
    table = ChainTable(*_table_parts(trie, v, 0, 3 << 33))
    row = ChainRow(
        table, 2, np.array([0, 1, 2], np.int32), np.array([2], np.int32), np.array([5], np.int32), True
    )
    row.tokens, row.next_state(0), row.next_state(2)
    _warm.set()
