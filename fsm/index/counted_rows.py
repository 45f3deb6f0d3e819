"""The first row of a counted string from another block's, across strings and schemas.

Inside a ``maxLength`` string the count is part of the state, so each string's first row walks
the vocabulary trie through ~100 states never expanded before (every count a token's length away,
escapes and multi-byte characters at each): ~4 ms, where rows further along the same string are
moved from it (`counter_shift`). Blocks of the same unit read a token that never leaves them alike
(`fsm.automata.block_forms`), so the first row walked for one is kept per vocabulary with its end
states as forms, and the first row of the next is the kept tokens that hold no exit byte with
their forms made in its block, plus a walk of the few tokens that hold one (a JSON string's ``"``:
163 of SmolLM2's 49k tokens, most of them a quote and a byte or two). Exact for any such block:
a token without an exit byte never takes an edge out of the block.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ..automata.block_forms import Anchor, BlockForms, need
from ..limits import Deadline
from ..vocabulary import TokenTrie, Vocabulary
from .contract import OnDemand
from .kernels import kernels
from .lazy_row import LazyRow
from .row_lookup import find_token
from .rows import FINISHED

if TYPE_CHECKING:  # numba's modules: loaded with the first row, not with ``import fsm``
    from .preorder import PreorderTrie
    from .steps import Steps

# First rows kept per vocabulary, by what they hold (~8 bytes a token inside and a mask per room
# asked: 0.4 to 0.9 MB a row on SmolLM2, ~2 to 5 MB on a 262k vocabulary): 35 to 80 and 6 to 16 rows. A count of 16
# rows re-walked a unit's first row (~25 ms) once a server had seen 16 others: 6 of 59 over 200
# JSONSchemaBench schemas.
KEPT_BYTES = 32 << 20
ROWS_KEPT = 1024  # and at most this many keys (a key whose row cannot be shared holds little)


@dataclass(frozen=True)
class _Kept:
    """A first row's tokens without exit bytes (sorted), each with the index of its end's form,
    and the room each form needs (`block_forms.need`); the packed masks of the tokens that fit
    in a given room, made on first use (rows near the bound of any block of the unit share them)."""

    tokens: np.ndarray  # int32, sorted
    which: np.ndarray  # int32, into forms
    forms: list
    need: np.ndarray  # int32, per form
    masks: dict = field(default_factory=dict)  # room (at most the greatest need) -> packed mask

    def mask(self, room: int, size: int) -> np.ndarray:
        """The packed mask of the tokens whose end fits in ``room`` (never written to)."""
        room = min(room, int(self.need.max(initial=0)))
        got = self.masks.get(room)
        if got is None:
            fit = self.need[self.which] <= room
            got = kernels().pack_tokens(self.tokens[fit], size)
            got.setflags(write=False)
            self.masks[room] = got
        return got

    @property
    def nbytes(self) -> int:
        """What the row holds: its arrays, its forms (~100 bytes each) and the masks made so far."""
        masks = sum(m.nbytes for m in list(self.masks.values()))
        return self.tokens.nbytes + self.which.nbytes + self.need.nbytes + 100 * len(self.forms) + masks


class _KeptRows:
    """A vocabulary's kept first rows by anchor key, most recently used kept (`KEPT_BYTES` in all);
    a key whose row cannot be shared (an end state left the block on a byte not an exit) maps to
    None."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.by_key: OrderedDict[tuple, _Kept | None] = OrderedDict()

    def get(self, key: tuple) -> _Kept | bool | None:
        """The kept row of ``key``, None (not shareable), or False (not seen)."""
        with self.lock:
            if key not in self.by_key:
                return False
            self.by_key.move_to_end(key)
            return self.by_key[key]

    def put(self, key: tuple, kept: _Kept | None) -> None:
        with self.lock:
            self.by_key[key] = kept
            self.by_key.move_to_end(key)
            # (sized when a row comes in: the masks made since count then, ~6 kB each on SmolLM2)
            held = self._held()
            while len(self.by_key) > 1 and (held > KEPT_BYTES or len(self.by_key) > ROWS_KEPT):
                _, gone = self.by_key.popitem(last=False)
                held -= gone.nbytes if gone is not None else 0

    @property
    def nbytes(self) -> int:
        """What the kept rows hold."""
        with self.lock:
            return self._held()

    def _held(self) -> int:
        return sum(k.nbytes for k in self.by_key.values() if k is not None)


def exit_tokens(vocab: Vocabulary, exits: bytes) -> tuple[np.ndarray, PreorderTrie]:
    """(whether each token id holds a byte of ``exits``, the preorder trie of those tokens alone),
    built once per vocabulary and exit bytes.

    >>> v = Vocabulary([b"a", b'a"', b'"', None], eos_token_ids=[3])
    >>> has, trie = exit_tokens(v, b'"'); has.tolist(), sorted(trie.tok_ids.tolist())
    ([False, True, True, False], [1, 2])
    """

    def build() -> tuple[np.ndarray, PreorderTrie]:
        # from the whole trie, not token by token (a loop over 49k tokens and a `Vocabulary` of the
        # kept ones: ~45 ms on a process's first request with a counted class, e.g. a regex's
        # ``[a-z0-9._%+-]{1,30}``): in depth-first order the tokens at and below a node are one run
        k = kernels()
        full = k.vocabulary_preorder(vocab)
        node = np.flatnonzero(np.isin(full.label, np.frombuffer(exits, np.uint8)))
        node = node[node > 0]  # (the root's label is no byte)
        runs = np.zeros(len(full.tok_ids) + 1, np.int32)
        np.add.at(runs, full.tok_start[node], 1)
        np.add.at(runs, full.tok_start[node + full.size[node]], -1)
        kept = full.tok_ids[np.cumsum(runs[:-1]) > 0]
        has = np.zeros(vocab.size, dtype=np.bool_)
        has[kept] = True
        tokens = vocab.tokens
        # (a trie of the kept tokens alone: a scan of all 49k for them was ~4 ms)
        return has, k.preorder(TokenTrie.of_ids(kept, [tokens[i] for i in kept.tolist()]))

    return vocab.derived("exit_tokens:" + exits.hex(), build)


def exit_walk(
    dfa, state: int, exit_trie: PreorderTrie, lazy: OnDemand, deadline: Deadline | None, steps: Steps | None
) -> tuple[np.ndarray, np.ndarray]:
    """(tokens, end states) of ``state`` among the tokens of ``exit_trie`` alone: a walk from its
    root, without expanding the string's chain of counts ahead as a whole row's walk does (these
    few tokens leave within a byte or two: walked lean first, `narrow_rows.narrow_below`)."""
    starts = (np.array([state], dtype=np.int64), np.zeros(1, dtype=np.int64))
    k = kernels()
    got = k.narrow_below(dfa, starts, exit_trie, lazy, deadline)
    if got is not None:
        return got
    return k.walk_below(dfa, starts, exit_trie, on_demand=lazy, deadline=deadline, steps=steps)


def counted_row(
    dfa,
    state: int,
    lazy: OnDemand,
    forms: BlockForms,
    deadline: Deadline | None,
    steps: Steps | None,
    vocab: Vocabulary,
    eos: np.ndarray | None,
    lock: AbstractContextManager,
) -> KeptRow | tuple[np.ndarray, np.ndarray] | None:
    """The row of counter state ``state``: a `KeptRow` when its unit has a kept first row (near
    the block's bound, its tokens that still fit), else (tokens, end states) walked (and kept when
    shareable: far from the bound) — or None when ``state`` is not an `Anchor`, or is near its
    bound with nothing kept (walk it as any row). ``eos``: the EOS ids when ``state`` accepts;
    ``lock``: the index's, held while an end state is made later."""
    k = kernels()
    trie = k.vocabulary_preorder(vocab)
    anchor = forms.anchor(state, trie.max_depth)
    if anchor is None:
        return None
    rows = vocab.derived("counted_rows", _KeptRows)
    has_exit, exit_trie = exit_tokens(vocab, anchor.exits)
    kept = rows.get(anchor.key)
    if kept is None or kept is False:
        if not anchor.far:
            return None  # a row near the bound is no other block's row: walked, not kept
        tok, end = k.walk_row(dfa, state, trie, on_demand=lazy, deadline=deadline, steps=steps)
        if kept is False:
            rows.put(anchor.key, _keep(forms, anchor, tok, end, has_exit))
        return tok, end
    x_tok, x_end = exit_walk(dfa, state, exit_trie, lazy, deadline, steps)
    return KeptRow(kept, anchor, forms, x_tok.astype(np.int32), x_end.astype(np.int32), eos, vocab.size, lock)


class KeptRow(LazyRow):
    """A counted string's first row from a kept one of its unit (`fsm.index.rows.Row`'s interface):
    the kept tokens whose end fits, each ending in its form made in this block, plus the walked
    tokens that hold an exit byte (and EOS when the state accepts). Its mask is the kept mask for
    its room with the walked tokens' bits set (a few µs); an end state is made when `advance` asks
    for it, the whole arrays (~100 states made, 49k tokens gathered and sorted: ~0.5 ms on
    SmolLM2) only if something reads them."""

    __slots__ = (
        "_arrays",
        "_leaving",
        "_lock",
        "_made",
        "anchor",
        "eos",
        "forms",
        "has_text",
        "kept",
        "packed",
    )

    def __init__(
        self,
        kept: _Kept,
        anchor: Anchor,
        forms: BlockForms,
        x_tok: np.ndarray,
        x_end: np.ndarray,
        eos: np.ndarray | None,
        size: int,
        lock: AbstractContextManager,
    ):
        self.kept, self.anchor, self.forms, self._lock = kept, anchor, forms, lock
        self.eos = eos if eos is not None else np.zeros(0, np.int32)
        self._leaving = dict(zip(x_tok.tolist(), x_end.tolist(), strict=True))
        for t in self.eos.tolist():
            self._leaving[t] = FINISHED
        words = kept.mask(anchor.room, size).view(np.uint32).copy()
        kernels().set_bits(np.concatenate([x_tok, self.eos.astype(np.int32)]), words)
        self.packed = words.view(np.int32)
        self.packed.setflags(write=False)
        self.has_text = len(x_tok) > 0 or (len(kept.tokens) > 0 and int(kept.need.min()) <= anchor.room)
        self._made: dict[int, int] = {}  # form index -> its state in this block
        self._arrays: tuple[np.ndarray, np.ndarray] | None = None

    def _end(self, f: int) -> int:
        e = self._made.get(f)
        if e is None:
            with self._lock:  # the lazy DFA grows: under its index's lock, as a row's walk
                e = self._made[f] = self.forms.make(self.kept.forms[f], self.anchor)
        return e

    def next_state(self, token_id: int) -> int | None:
        """The state ``token_id`` leads to, or None when it is not allowed."""
        got = self._leaving.get(token_id)
        if got is not None:
            return got
        kept = self.kept
        i = find_token(kept.tokens, token_id)
        if i < 0:
            return None
        f = int(kept.which[i])
        return self._end(f) if int(kept.need[f]) <= self.anchor.room else None

    def _merged(self) -> tuple[np.ndarray, np.ndarray]:
        if self._arrays is None:
            kept = self.kept
            fit = np.flatnonzero(kept.need <= self.anchor.room)
            ends = np.full(len(kept.forms), -1, dtype=np.int32)
            ends[fit] = [self._end(f) for f in fit.tolist()]
            end = ends[kept.which]
            inside = end >= 0
            tok = np.concatenate([kept.tokens[inside], np.array(list(self._leaving), dtype=np.int32)])
            end = np.concatenate([end[inside], np.array(list(self._leaving.values()), dtype=np.int32)])
            order = np.argsort(tok, kind="stable")
            self._arrays = (tok[order], end[order])
        return self._arrays

    @property
    def nbytes(self) -> int:
        return self.packed.nbytes + (0 if self._arrays is None else self._arrays[0].nbytes * 2)


def distinct_ends(end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(the distinct states of ``end``, sorted; the index of each entry's among them): np.unique's
    with ``return_inverse``, by a table over the states rather than a sort (~49k ends: 2 ms).

    >>> ends, where = distinct_ends(np.array([7, 3, 7, 9])); ends.tolist(), where.tolist()
    ([3, 7, 9], [1, 0, 1, 2])
    """
    if not len(end):
        return np.zeros(0, np.int64), np.zeros(0, np.int32)
    present = np.zeros(int(end.max()) + 1, dtype=np.bool_)
    present[end] = True
    ends = np.flatnonzero(present)
    index = np.empty(len(present), dtype=np.int32)
    index[ends] = np.arange(len(ends), dtype=np.int32)
    return ends, index[end]


def _keep(
    forms: BlockForms, anchor: Anchor, tok: np.ndarray, end: np.ndarray, has_exit: np.ndarray
) -> _Kept | None:
    """The part of a walked first row another block can take: its tokens without exit bytes and
    their ends' forms; None when one of those ends is not of the block alone."""
    inside = ~has_exit[tok]
    tok, end = kernels().sorted_pairs(tok[inside], end[inside])
    ends, which = distinct_ends(end)
    kept_forms = []
    for e in ends.tolist():
        f = forms.form(e, anchor)
        if f is None:
            return None
        kept_forms.append(f)
    needs = np.array([need(f) for f in kept_forms], dtype=np.int32)
    return _Kept(tok.astype(np.int32), which.astype(np.int32), kept_forms, needs)
