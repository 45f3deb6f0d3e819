"""`LazyDfaIndex`: a token index over a lazily determinized byte DFA (`fsm.automata.LazyByteDFA`).

The rows are those of every `RowIndex`; what differs is the automaton: because the DFA itself is
built on demand, compiling a large schema costs only its NFA, and each new state the generation
reaches costs one trie walk plus the DFA rows that walk touches. The walk uses the byte trie (a
class trie would need every DFA row up front). Not persisted to the disk cache (it is cheap to
rebuild); ``build_all()`` expands everything.

>>> from fsm.vocabulary import Vocabulary
>>> from fsm.automata import LazyByteDFA, alt, lit, node_nfa
>>> v = Vocabulary([b"y", b"es", b"no", b"yes", None], eos_token_ids=[4])
>>> idx = LazyDfaIndex(LazyByteDFA(*node_nfa(alt(lit("yes"), lit("no")))), v)
>>> idx.matcher().allowed_token_ids().tolist()
[0, 2, 3]
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..automata import LazyByteDFA
from ..automata.block_forms import BlockForms
from ..automata.counter_shift import Shifts, shift_class
from ..limits import Deadline, Limits
from ..vocabulary import Vocabulary
from .counted_rows import KeptRow, counted_row, exit_tokens
from .kernels import kernels
from .moved_row import MovedRow
from .rows import FINISHED, Row, RowIndex
from .token_walk import walk_tokens

if TYPE_CHECKING:  # numba's module: loaded with the first row, not with ``import fsm``
    from .narrow_rows import NarrowWalk
    from .sibling_rows import SiblingRow


class LazyDfaIndex(RowIndex):
    """Lazy token index over a `LazyByteDFA`; rows are computed on first use and shared by matchers."""

    def __init__(
        self,
        lazy: LazyByteDFA,
        vocab: Vocabulary,
        fingerprint: str = "",
        limits: Limits | None = None,
        shift_rows: bool = True,
        shaped_rows: bool = True,
        shared_blocks: bool = True,
        sibling_rows: bool = True,
        literal_rows: bool = True,
        chain_rows: bool = True,
        narrow_rows: bool = True,
        name: str = "",
    ):
        """``shift_rows``: derive the rows of counter states from an earlier count's (exact, see
        the module); ``shaped_rows``: make the rows inside a string from its body's shape
        (`fsm.index.body_rows`); ``shared_blocks``: make the first row of a counter block from
        another block's (`fsm.index.counted_rows`, with ``shift_rows``); ``sibling_rows``: make a
        wide row from its anchor's (`fsm.index.sibling_rows`); ``literal_rows``: follow a literal
        state's one byte down the trie (`fsm.index.literal_rows`); ``chain_rows``: cut a fixed-length
        run's rows from its class's table (`fsm.index.chain_rows`); ``narrow_rows``: walk a row
        that turns out narrow with nothing else tried (`fsm.index.narrow_rows`); False walks every
        row (what tests compare the others with). ``name``: what a budget overrun while a row is made names
        (`RowIndex`)."""
        self.lazy = lazy
        self.shift_rows = shift_rows
        self.shaped_rows = shaped_rows
        self.n_shaped = 0  # rows made from a shape so far
        self.sibling_rows = sibling_rows
        self.literal_rows = literal_rows
        self.chain_rows = chain_rows
        self.narrow_rows = narrow_rows
        self.n_chain = 0  # rows cut from a chain table so far
        self.n_sibling = 0  # rows made from their anchor's so far
        self._anchor_row = False  # an anchor's row is being made: walked, never from its own anchor
        self._anchor_dense: dict[int, np.ndarray] = {}  # anchor -> its row's ends over the vocabulary
        self._anchor = (-1, -1)  # (state, its wide anchor) of the row being made
        self._narrow: NarrowWalk | None = None  # made with the first row
        self._below: dict = {}  # the last walks below a shape's exits (`body_rows.shaped_row`)
        # shift class key -> (count, state, row) of the row made first in the class
        self._by_shift: dict[tuple, tuple[int, int, Row]] = {}
        self.n_shifted = 0  # rows derived so far, not walked
        self._shifts = Shifts(lazy)
        self._forms = BlockForms(lazy)
        self.shared_blocks = shared_blocks
        self.n_shared = 0  # first rows of a block made from another block's
        super().__init__(lazy.as_byte_dfa(), vocab, fingerprint, limits, n_classes=lazy.n_classes, name=name)

    @staticmethod
    def usable(lazy: LazyByteDFA, vocab: Vocabulary) -> bool:
        """Lazy rows are exact when no state can need a byte the vocabulary only spells in longer tokens."""
        return lazy.spellable(np.nonzero(vocab.single_bytes)[0])

    def walk(self, states: np.ndarray, deadline: Deadline) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        with self.lazy.within(deadline):  # the DFA rows this walk expands count against it too
            return walk_tokens(self.dfa, states, self.vocabulary.trie, deadline=deadline)

    def on_demand(self) -> LazyByteDFA:
        return self.lazy

    def _counter_row(self, state: int, deadline: Deadline) -> Row | MovedRow | KeptRow | None:
        """The row of counter state ``state``: its shift class's first row moved (`MovedRow`), a
        kept first row of its unit (`KeptRow`), or walked — the first of a class kept as the
        class's; None when ``state`` is in no class and has no kept row (made as any row)."""
        horizon = kernels().vocabulary_preorder(self.vocabulary).max_depth
        cls = shift_class(self.lazy, state, horizon)
        if cls is not None and cls[0] in self._by_shift:
            return self._moved(state, *cls)
        row = self._kept_row(state, deadline)
        if row is None:
            if cls is None:
                return None
            row = self._make_row(state, *self._row_arrays(state, deadline))
        if cls is not None:
            self._by_shift[cls[0]] = (cls[2], state, row)
        return row

    def _moved(self, state: int, key: tuple, block: int, count: int) -> MovedRow:
        count0, state0, row0 = self._by_shift[key]
        leaving, _ = exit_tokens(self.vocabulary, self._forms.exits(key[0], key[1]))
        shifts, delta, dfa, spell = self._shifts, count - count0, self.dfa, self.vocabulary.tokens

        def moved(e: int) -> int:
            with self._lock:
                return shifts.moved(e, block, delta)

        def stepped(token_id: int) -> int:
            with self._lock:
                return dfa.walk(state, spell[token_id])

        self.n_shifted += 1
        self._charge(MovedRow.HELD_BYTES)
        return MovedRow(row0, self.bitmask(state0), moved, stepped, leaving)

    def _kept_row(self, state: int, deadline: Deadline) -> Row | KeptRow | None:
        """`counted_rows.counted_row` when ``shared_blocks`` (kept rows counted in ``n_shared``)."""
        if not self.shared_blocks:
            return None
        eos = self.eos_ids if self.dfa.accepting[state] else None
        with self.lazy.within(deadline):
            got = counted_row(
                self.dfa,
                state,
                self.lazy,
                self._forms,
                deadline,
                self.steps,
                self.vocabulary,
                eos,
                self._lock,
            )
        if got is None:
            return None
        if isinstance(got, KeptRow):
            self.n_shared += 1
            self._charge(got.nbytes)
            return got
        return self._make_row(state, *got)

    def _row_arrays(self, state: int, deadline: Deadline) -> tuple[np.ndarray, np.ndarray]:
        got = self._unwalked_row(state, deadline)
        return got if got is not None else super()._row_arrays(state, deadline)

    def _unwalked_row(self, state: int, deadline: Deadline) -> tuple[np.ndarray, np.ndarray] | None:
        """``state``'s (tokens, end states) as a literal's row or a sibling's, or None: walk it."""
        got = self._literal_row(state, deadline)
        if got is not None:
            return got
        row = self._sibling_row(state, deadline)
        return None if row is None else row.text_pairs()

    def _narrow_row(self, state: int, deadline: Deadline) -> Row | None:
        """``state``'s row by this index's `narrow_rows.NarrowWalk`, None when it gives up."""
        if not self.narrow_rows or self.lazy.has_guards:
            return None  # a guarded state's row defers nodes (`fsm.index.guarded`): walked
        if self._narrow is None:  # numba's module: loaded with the first row, not at compile
            k = kernels()
            self._narrow = k.NarrowWalk(k.vocabulary_preorder(self.vocabulary), len(self.eos_ids))
        eos = (self.eos_ids, FINISHED) if self.dfa.accepting[state] else None
        got = self._narrow.row(self.dfa, state, self.lazy, deadline, eos)
        return None if got is None else self._sorted_row(*got)

    def _new_row(self, state: int, deadline: Deadline):
        """``state``'s row, the kinds tried cheapest first: a counter state's moved or kept row; a
        narrow row (`narrow_rows`: most rows, and told early when not); a shape's or a sibling's
        from the state's wide anchor; then `_walked_row`."""
        blocks = self._has_blocks(state)
        if blocks and self.shift_rows:
            # a counted string's states (virtual NFA states, negative, sort first) never loop, and
            # telling so would expand the next count, which a moved row never needs; a state the
            # counter rows do not make (a string inside a `{}` value's pushdown block: it loops) is
            # made as any other, which expands as much
            row = self._counter_row(state, deadline)
            if row is not None:
                return row
        # most rows are narrow: told by a walk that gives up early on a wide one (a string's
        # characters: past `narrow_rows.MAX_TOKENS` tokens, ~2 µs), before a wide anchor is looked for
        row = self._narrow_row(state, deadline)
        if row is not None:
            return row
        # a literal's state (one live byte, no wide loop) has no shape: `_walked_row` follows it
        if self.shaped_rows and (blocks or not (self.literal_rows and self.lazy.reads_one_byte(state))):
            row = self._shaped_row(state, deadline)
            if row is not None:
                return row
        return self._walked_row(state, deadline)

    def _walked_row(self, state: int, deadline: Deadline):
        """A literal's row, a sibling's (`sibling_rows.SiblingRow`), a chain row, or the walk's
        where the walk would have found a chain to emit (the chain found once: `_chain_row`'s is
        handed to the walk)."""
        got = self._literal_row(state, deadline)
        if got is None:
            row = self._sibling_row(state, deadline)
            if row is not None:
                return row
            row, chain = self._chain_row(state, deadline)
            if row is not None:
                return row
            got = (
                self.kernel_row(state, deadline)
                if chain is kernels().UNKNOWN
                else self._walk_row(state, deadline, None, chain)
            )
        return self._make_row(state, *got)

    def _literal_row(self, state: int, deadline: Deadline) -> tuple[np.ndarray, np.ndarray] | None:
        """`literal_rows.literal_row` of ``state`` (None: several bytes live from it, walk it)."""
        if not self.literal_rows or self.lazy.has_guards:
            return None  # a guarded state's row defers nodes (`fsm.index.guarded`): walked
        k = kernels()
        with self.lazy.within(deadline):
            return k.literal_row(
                self.dfa, state, k.vocabulary_preorder(self.vocabulary), self.lazy, deadline, self.steps
            )

    def _sibling_row(self, state: int, deadline: Deadline) -> SiblingRow | None:
        """`sibling_rows.sibling_row` of ``state`` from its wide anchor's row, or None: walk it (no
        anchor, a counter's or guarded state, or most first bytes lead elsewhere from the two)."""
        if not self.sibling_rows or self._anchor_row or self.lazy.has_guards or self._has_blocks(state):
            return None
        anchor = self._wide_anchor(state, deadline)
        if anchor < 0 or anchor == state or self._has_blocks(anchor):
            return None
        k = kernels()
        trie = k.vocabulary_preorder(self.vocabulary)
        with self.lazy.within(deadline):
            differ = k.differing_bytes(self.dfa, self.lazy, state, anchor)
        fb = k.first_bytes(trie, self.vocabulary)
        if differ[0x80:].any() and k.same_beyond_ascii(self.lazy, state, anchor):
            # the lead bytes' targets differ by name only: the anchor's ends kept, their subtrees
            # (every lead byte's: ~50 subtrees, ~10 states inside characters expanded) not walked
            differ = differ.copy()
            differ[0x80:] = False
        if int(fb.weight[differ].sum()) * k.MAX_WALKED_SHARE > trie.n_nodes:
            return None
        dense = self._anchor_dense.get(anchor)
        if dense is None:
            self._anchor_row = True
            try:
                row = self.row(anchor)  # the text's own row: made once, read by every sibling
            finally:
                self._anchor_row = False
            text = row.next_states != FINISHED
            dense = k.dense_ends(row.tokens[text], row.next_states[text], self.vocabulary.size)
            self._anchor_dense[anchor] = dense
            self._charge(dense.nbytes)
        eos = (self.eos_ids, FINISHED) if self.dfa.accepting[state] else None
        with self.lazy.within(deadline):
            row = k.sibling_row(
                self.dfa, state, dense, differ, trie, fb, self.lazy, deadline, self.steps, anchor, eos
            )
        self.n_sibling += 1
        self._charge(row.nbytes)
        return row

    def _wide_anchor(self, state: int, deadline: Deadline) -> int:
        """`body_rows.wide_anchor` of ``state``, asked once a row (by its shape, then its sibling)."""
        if self._anchor[0] != state:
            with self.lazy.within(deadline):
                self._anchor = (state, kernels().wide_anchor(self.dfa, state, self.lazy))
        return self._anchor[1]

    def _has_blocks(self, state: int) -> bool:
        """Whether ``state``'s set holds a block's (virtual, negative, sorted first) NFA states: no
        shifted or kept row is for a set without (most rows; telling so costs two scans of the set)."""
        states = self.lazy.state_set(state)
        return len(states) > 0 and states[0] < 0

    def _shaped_row(self, state: int, deadline: Deadline):
        """The row of a state inside a text (a string's body, a key's prefix) from its wide anchor:
        the anchor's shape (`body_rows.shaped_row`) or, when the anchor's row is made, a sibling's;
        None when the state has no wide anchor (most rows past a narrow one: walked)."""
        anchor = self._wide_anchor(state, deadline)
        if anchor < 0:
            return None  # most rows: narrow
        if anchor != state and anchor in self._anchor_dense:
            # a state that leads into a text it is not (a key's prefix, the first character of a
            # string with a pattern): a shape with it as its root is its own, walked whole on its
            # second sighting (~1 ms), where its anchor's row, made already, needs only the first
            # bytes that differ walked
            row = self._sibling_row(state, deadline)
            if row is not None:
                return row
        k = kernels()
        trie = k.vocabulary_preorder(self.vocabulary)
        eos = (self.eos_ids, FINISHED) if self.dfa.accepting[state] else None
        with self.lazy.within(deadline):
            row = k.shaped_row(
                self.dfa,
                state,
                trie,
                self.lazy,
                deadline,
                self.steps,
                self.vocabulary,
                eos,
                anchor,
                self._lock,
                self._below,
            )
        if row is not None:
            self._charge(row.nbytes)
            self.n_shaped += 1
        return row

    def _chain_row(self, state: int, deadline: Deadline) -> tuple:
        """(``state``'s `chain_rows.ChainRow` when a chain of `CHAIN_ROW_MIN` or more characters of
        one ASCII class starts at it and ends reading none of it — a fixed-length string —, else
        None; the chain found, for the walk: `trie_kernel.UNKNOWN` when none was looked for)."""
        k = kernels()
        if not self.chain_rows or self.lazy.has_guards:
            return None, k.UNKNOWN
        trie = k.vocabulary_preorder(self.vocabulary)
        with self.lazy.within(deadline):
            k.expand_chain(self.dfa, state, trie, False, self.lazy, self.steps, None)
            chain = k.label_chain_of(self.dfa, state, trie, False, self.lazy, self.steps)
            if chain is None:
                return None, chain
            states, m0, m1, r, kills = chain
            if not kills or r < k.CHAIN_ROW_MIN:
                return None, chain
            table = k.chain_table(trie, self.vocabulary, m0, m1)
            eos = (self.eos_ids, FINISHED) if self.dfa.accepting[state] else None
            row = k.chain_row(self.dfa, states, r, trie, table, self.lazy, deadline, self.steps, eos)
        self._charge(row.nbytes)
        self.n_chain += 1
        return row, chain

    @property
    def n_states(self) -> int:
        return self.lazy.n_states

    def build_all(self, deadline: Deadline | None = None) -> LazyDfaIndex:
        """Expand the whole DFA and compute every row now, within ``deadline`` (default:
        ``limits.max_seconds`` from now); returns self."""
        deadline = deadline or self.limits.deadline()
        with self._lock:
            with self.lazy.within(deadline):
                self.lazy.expand_all()
            self.fill_rows(self.missing_rows(), deadline)
        return self

    @property
    def nbytes(self) -> int:
        return self._nbytes + self.lazy.n_states * (self.lazy.n_classes * 4 + 1)

    def __repr__(self) -> str:
        return f"LazyDfaIndex({self.fingerprint[:24]}, states={self.lazy.n_states}, rows={len(self._rows)})"
