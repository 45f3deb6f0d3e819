"""A wide row from the row of the state most of its bytes lead to: only the first bytes that differ walked.

Some states inside free text also follow something narrower: a key that may be any string or one of
the declared names not written yet (``additionalProperties: true``), text that may hold an
unanchored pattern's next character (``"pattern": "[0-9a-f]{8}-..."`` inside a free string). Such a
state is no string body of its own (`fsm.index.body_rows`: the narrower part makes a new state at
every position), so each one walked the whole trie (~49k tokens on SmolLM2: ~0.4 ms compiled) and
sorted what it found (~0.1 ms), and a schema's every key position, or every character of its uuid,
is such a state.

A token's end depends only on the state after its first byte. Most of such a state's bytes lead where
they lead from its *anchor* — the state `body_rows.WIDE` or more of its bytes lead to, the free text
alone, which loops on them. So its row is the anchor's row less the tokens whose first byte leads
elsewhere from the two, plus a walk of those first bytes' subtrees from where each leads
(`sibling_row`). Exact for any pair of states; used when the differing subtrees are a small part of
the trie and the anchor's row is made anyway (it loops: the text's own row).

The row is kept as ends over the vocabulary (`SiblingRow`): its mask packed from them in one pass,
a token's end one read. Gathering the (tokens, ends) arrays (~49k tokens on SmolLM2) and packing
the mask from them was ~0.2 ms of a sibling row's ~0.5; they are made only if something reads them.
"""

from __future__ import annotations

import numpy as np

from ..automata import ByteDFA, LazyByteDFA
from ..limits import Deadline
from ..vocabulary import Vocabulary
from .contract import OnDemand
from .lazy_row import LazyRow
from .preorder import PreorderTrie
from .row_sort import dense_packed, dense_pairs, replaced_dense, set_bits
from .steps import Steps
from .trie_kernel import walk_below_to
from .walk_arrays import walk_view

MAX_WALKED_SHARE = 4  # differing subtrees over 1/4 of the trie's nodes: the row is walked whole
ABSENT = -3  # no end: the token is not in the row


class FirstBytes:
    """Per vocabulary: the trie node of each first byte (-1: none) and how many nodes its subtree holds."""

    def __init__(self, trie: PreorderTrie):
        self.node = np.full(256, -1, np.int64)
        depth1 = np.flatnonzero(trie.depth == 1)
        self.node[trie.label[depth1].astype(np.int64)] = depth1
        self.weight = np.zeros(256, np.int64)  # nodes below each first byte, its own included
        has = self.node >= 0
        self.weight[has] = trie.size[self.node[has]]


def first_bytes(trie: PreorderTrie, vocab: Vocabulary) -> FirstBytes:
    """`FirstBytes` of ``vocab``'s trie ``trie`` (kept on the vocabulary).

    >>> from fsm.index.kernels import kernels
    >>> v = Vocabulary([b"a", b"ab", b"b", None], eos_token_ids=[3])
    >>> fb = first_bytes(kernels().vocabulary_preorder(v), v)
    >>> int(fb.weight[ord("a")]), int(fb.node[ord("c")])
    (2, -1)
    """
    return vocab.derived("first_bytes", lambda: FirstBytes(trie))


def dense_ends(tok: np.ndarray, end: np.ndarray, size: int) -> np.ndarray:
    """A row as an array over the vocabulary: each token's end state, `ABSENT` for the others.

    >>> dense_ends(np.array([2, 0]), np.array([7, 5]), 4).tolist()
    [5, -3, 7, -3]
    """
    dense = np.full(size, ABSENT, np.int32)
    dense[tok] = end
    return dense


def differing_bytes(dfa: ByteDFA, on_demand: OnDemand | None, state: int, anchor: int) -> np.ndarray:
    """The bytes that lead elsewhere from ``state`` than from ``anchor`` (both expanded), a mask.

    >>> from fsm.regex import regex_to_dfa
    >>> d = regex_to_dfa("[a-z]*|x1")
    >>> np.flatnonzero(differing_bytes(d, None, d.initial, d.step(d.initial, ord("q")))).tolist()
    [120]
    """
    tbl, rows, bc, _, _ = walk_view(dfa, on_demand, False)
    return tbl[rows[state], bc] != tbl[rows[anchor], bc]


def same_beyond_ascii(lazy: LazyByteDFA, state: int, anchor: int) -> bool:
    """Whether every character past ASCII takes ``state`` and ``anchor`` to the same NFA states (their
    sets' character edges agree there), so that each lead byte's target inside a character, though
    made apart for each (`automata.utf8_chains`), has one language: on a vocabulary with half its
    trie inside multi-byte characters (Gemma's), those subtrees are the anchor's, not walked.

    >>> from fsm.automata import LazyByteDFA, alt, cls, lit, node_nfa, rep, seq
    >>> def pair(word):  # free text or ``word``: its start against the text alone
    ...     lazy = LazyByteDFA(*node_nfa(alt(rep(cls((97, 0x10FFFF)), 0, None), lit(word))))
    ...     return same_beyond_ascii(lazy, lazy.initial, lazy.step(lazy.initial, ord("q")))
    >>> pair("x!"), pair("\u00e9!")
    (True, False)
    """
    n_real = lazy.n_real

    def edges(d: int) -> set[tuple[int, int, int]] | None:
        out = set()
        for q in lazy.state_set(d):
            if q < 0 or q >= n_real:
                return None  # a block's or a character's inside: not read here
            out.update((max(lo, 0x80), hi, t) for lo, hi, t in lazy.char_edges(q) if hi >= 0x80)
        return out

    a, b = edges(state), edges(anchor)
    return a is not None and a == b


class SiblingRow(LazyRow):
    """A sibling's row (`fsm.index.rows.Row`'s interface) as ends over the vocabulary (``full``,
    `ABSENT` where a token is not allowed), EOS ids ``eos[0]`` leading to ``eos[1]`` when the state
    accepts (else None). Its mask is packed from the ends at once; its arrays when read."""

    __slots__ = ("_arrays", "eos", "full", "has_text", "packed")

    def __init__(self, full: np.ndarray, eos: tuple[np.ndarray, int] | None):
        self.full, self.eos = full, eos
        words = np.zeros((len(full) + 31) // 32, np.uint32)
        self.has_text = dense_packed(full, ABSENT, words) > 0
        if eos is not None:
            set_bits(np.ascontiguousarray(eos[0], np.int32), words)
        self.packed = words.view(np.int32)
        self.packed.setflags(write=False)
        self._arrays: tuple[np.ndarray, np.ndarray] | None = None

    def next_state(self, token_id: int) -> int | None:
        """The state ``token_id`` leads to, or None when it is not allowed."""
        e = int(self.full[token_id])
        if e != ABSENT:
            return e
        if self.eos is not None and token_id in self.eos[0]:
            return self.eos[1]
        return None

    def text_pairs(self) -> tuple[np.ndarray, np.ndarray]:
        """(tokens, end states), sorted, EOS left out."""
        return dense_pairs(self.full, ABSENT)

    def _merged(self) -> tuple[np.ndarray, np.ndarray]:
        if self._arrays is None:
            tok, end = self.text_pairs()
            if self.eos is not None and len(self.eos[0]):
                tok = np.concatenate([tok, self.eos[0].astype(np.int32)])
                end = np.concatenate([end, np.full(len(self.eos[0]), self.eos[1], np.int32)])
                order = np.argsort(tok, kind="stable")
                tok, end = tok[order], end[order]
            self._arrays = (tok, end)
        return self._arrays

    @property
    def nbytes(self) -> int:
        made = 0 if self._arrays is None else self._arrays[0].nbytes * 2
        return self.full.nbytes + self.packed.nbytes + made


def sibling_row(
    dfa: ByteDFA,
    state: int,
    anchor_dense: np.ndarray,
    differ: np.ndarray,
    trie: PreorderTrie,
    fb: FirstBytes,
    on_demand: OnDemand | None,
    deadline: Deadline | None,
    steps: Steps | None,
    anchor: int = -1,
    eos: tuple[np.ndarray, int] | None = None,
) -> SiblingRow:
    """The row of ``state`` (EOS as ``eos``, see `SiblingRow`): the anchor's row (``anchor_dense``,
    a `dense_ends` without EOS) less the tokens whose first byte is in ``differ``
    (`differing_bytes`), with a walk of those first bytes' subtrees from where each leads from
    ``state`` — stopped where it meets ``anchor`` (the anchor state, expanded; -1: none) along
    bytes that loop on it, whose subtree keeps the anchor's ends (`trie_kernel.walk_below_to`).

    >>> from fsm.index.kernels import kernels
    >>> from fsm.regex import regex_to_dfa
    >>> v = Vocabulary([b"a", b"x", b"x1", b"ab", b"1", None], eos_token_ids=[5])
    >>> d, t = regex_to_dfa("[a-z]*|x1"), kernels().vocabulary_preorder(v)
    >>> q = d.step(d.initial, ord("q")); a = dense_ends(*kernels().walk_row(d, q, t), v.size)
    >>> row = sibling_row(d, d.initial, a, differing_bytes(d, None, d.initial, q), t, first_bytes(t, v), None, None, None)
    >>> row.tokens.tolist() == sorted(kernels().walk_row(d, d.initial, t)[0].tolist()), row.next_state(4)
    (True, None)
    """
    tbl, rows, bc, _, _ = walk_view(dfa, on_demand, False)
    lo, hi, starts_s, starts_n, at_tok, at_end = [], [], [], [], [], []
    for b in np.flatnonzero(differ).tolist():
        node = int(fb.node[b])
        if node < 0:
            continue
        first = int(trie.tok_start[node])
        lo.append(first)  # the anchor's tokens that start with b: one run of the trie's ids
        hi.append(int(trie.tok_start[node + int(trie.size[node])]))
        to = int(tbl[rows[state], bc[b]])
        if to < 0:
            continue
        starts_s.append(to)
        starts_n.append(node)
        for k in range(int(trie.tok_count[node])):  # the one-byte tokens themselves
            at_tok.append(int(trie.tok_ids[first + k]))
            at_end.append(to)
    below_tok, below_end, cut = walk_below_to(
        dfa,
        (np.array(starts_s, np.int64), np.array(starts_n, np.int64)),
        trie,
        anchor,
        on_demand=on_demand,
        deadline=deadline,
        steps=steps,
    )
    x_tok = np.concatenate([np.array(at_tok, np.int32), below_tok.astype(np.int32)])
    x_end = np.concatenate([np.array(at_end, np.int32), below_end.astype(np.int32)])
    # the anchor's tokens dropped: each first byte's run less the runs of the subtrees the walk
    # stopped at (inside those runs, disjoint): the gaps between them, paired in order
    cut_lo, cut_hi = trie.tok_start[cut], trie.tok_start[cut + trie.size[cut]]
    lo_hi = (
        np.sort(np.concatenate([np.array(lo, np.int64), cut_hi])),
        np.sort(np.concatenate([cut_lo, np.array(hi, np.int64)])),
    )
    return SiblingRow(replaced_dense(anchor_dense, *lo_hi, trie.tok_ids, x_tok, x_end, ABSENT), eos)
