"""The per-state arrays and table rows of a lazily determinized DFA (`LazyByteDFA`), grown as states
are made and expanded.

Most states a walk makes are never expanded (a walk makes every token's end, a lead byte's target per
state expanded), so a state costs a few array slots until it is, and only an expanded state has a
row of the table (``row_index``): rows for every state were most of a big walk's memory (467 MB of
0.9M states, 87k expanded). Rows are written through a flat view of the table's cells: a slice
written through it costs ~0.3 µs, through a numpy index ~0.9, and an expansion writes several.

>>> from fsm.automata import LazyByteDFA, lit, node_nfa
>>> lazy = LazyByteDFA(*node_nfa(lit("ab")))
>>> lazy.ensure(lazy.initial); int(lazy.row_index[lazy.initial]), lazy.n_states  # and "b"'s state: a literal
(0, 3)
>>> int(lazy.row_index[lazy.n_states - 1])  # the last: no row, nothing read it
-1
"""

from __future__ import annotations

import numpy as np

from ..errors import SchemaTooComplex
from ..limits import Limits
from .budget import Budget

_WHAT = "the automaton"


class StateRows:
    """`LazyByteDFA`'s states: their sets (``_sets``) and per-state arrays, and the table rows."""

    limits: Limits
    budget: Budget
    n_classes: int

    def _init_rows(self, cap: int = 64) -> None:
        """Empty arrays with room for ``cap`` states, and no state."""
        # state -> its set, once made (a state inside a character is made when read: `_insides`).
        # A dict of tuples of ints drops out of the garbage collector's view once it stops growing; a
        # list is walked by every full collection for the automaton's life: per-state lists (sets,
        # NFA edges) were 80 % of what a server's full collections walked, ~50 ms each at 200 schemas.
        self._sets: dict[int, tuple[int, ...]] = {}
        self._n = 0  # states
        self._made = 0  # states whose set is made
        self._cap = cap  # of the per-state arrays
        self._table = np.full((cap, self.n_classes), -1, dtype=np.int32)
        self._cells = memoryview(self._table.reshape(-1))
        self._n_rows = 0
        self._row_of = np.full(cap, -1, dtype=np.int32)  # a state's row, -1 before it is expanded
        self._accepting = np.zeros(cap, dtype=bool)
        self._expanded = np.zeros(cap, dtype=bool)
        # Guard points (`language.Guard`): a state whose set holds one is *guarded*; its row is the
        # row with every check failed, ``_galt`` the state with every check passed (the row walk
        # defers a byte where the two differ), ``_gdead`` whether nothing is left when all fail.
        self._galt = np.full(cap, -1, dtype=np.int32)
        self._gdead = np.zeros(cap, dtype=bool)
        # the state a target inside a character comes from and its lead byte (source << 8 | byte)
        self._lead_of = np.full(cap, -1, dtype=np.int64)
        self._views()

    def _views(self) -> None:
        # flat views of the flags and rows read and written once per expansion: a memoryview item
        # costs ~30 ns, a numpy scalar index ~50 (views of the arrays, renewed as they grow)
        self._done = memoryview(self._expanded)
        self._row_at = memoryview(self._row_of)
        self._leads = memoryview(self._lead_of)

    def _new(self, s: tuple[int, ...] | None) -> int:
        """A new state of set ``s`` (None: inside a character, see `_insides`), table rows grown."""
        d = self._n
        if s is not None:
            self._made += 1
            if self._made > self.limits.max_states:
                self._made -= 1
                self._count_set()
            self._sets[d] = s
        self._n = d + 1
        if d >= self._cap:
            self._grow()
        return d

    def _new_many(self, n: int) -> int:
        """The first of ``n`` new states whose sets are not made yet (inside a character: `_insides`)."""
        d = self._n
        self._n = d + n
        while d + n > self._cap:
            self._grow()
        return d

    def _count_set(self) -> None:
        """One more state with its set made: what ``max_states`` counts (a state inside a character
        not read yet holds no set, a few bytes of arrays, counted in ``max_memory``)."""
        self._made += 1
        if self._made > self.limits.max_states:
            raise SchemaTooComplex(
                f"the automaton: over {self.limits.max_states:,} states; simplify the spec "
                "or raise Limits.max_states",
                budget="max_states",
                limit=self.limits.max_states,
            )

    def _grow(self) -> None:
        cap = self._cap = len(self._accepting) * 3 // 2
        # per state: accepting, expanded, guard (4 + 1), lead (8) and row (4) slots
        self.budget.charge((cap - len(self._accepting)) * 19, _WHAT)
        self._row_of = np.concatenate([self._row_of, np.full(cap - len(self._row_of), -1, dtype=np.int32)])
        self._accepting = np.concatenate([self._accepting, np.zeros(cap - len(self._accepting), dtype=bool)])
        self._expanded = np.concatenate([self._expanded, np.zeros(cap - len(self._expanded), dtype=bool)])
        self._galt = np.concatenate([self._galt, np.full(cap - len(self._galt), -1, dtype=np.int32)])
        self._gdead = np.concatenate([self._gdead, np.zeros(cap - len(self._gdead), dtype=bool)])
        self._lead_of = np.concatenate([self._lead_of, np.full(cap - len(self._lead_of), -1, dtype=np.int64)])
        self._views()

    def _new_row(self, d: int) -> int:
        """A row of the table for state ``d`` (all -1), the table grown if full."""
        r = self._n_rows
        if r >= len(self._table):
            cap = len(self._table) * 3 // 2  # not twice: the last growth's spare rows are most of it
            self.budget.charge((cap - len(self._table)) * self.n_classes * 4, _WHAT)
            table = np.full((cap, self.n_classes), -1, dtype=np.int32)
            table[:r] = self._table
            self._table = table
            self._cells = memoryview(table.reshape(-1))
        self._n_rows = r + 1
        self._row_at[d] = r
        return r

    def _copy_row(self, d: int, e: int) -> None:
        """Expand state ``d`` with the row of expanded state ``e``."""
        r, n = self._new_row(d), self.n_classes
        at = self._row_at[e] * n
        self._cells[r * n : r * n + n] = self._cells[at : at + n]
        self._done[d] = True

    @property
    def n_states(self) -> int:
        return self._n

    @property
    def table_buffer(self) -> np.ndarray:
        """The transition rows of the states expanded so far (see `ensure`), in a buffer with spare
        capacity: state ``d``'s is row ``row_index[d]``."""
        return self._table

    @property
    def row_index(self) -> np.ndarray:
        """Each state's row in `table_buffer` (-1: not expanded; a buffer like `expanded_flags`)."""
        return self._row_of

    @property
    def expanded_flags(self) -> np.ndarray:
        """Whether each state's transition row is made (a buffer with spare capacity, per state)."""
        return self._expanded

    @property
    def accepting_flags(self) -> np.ndarray:
        """Whether each state made so far accepts (known as soon as the state exists)."""
        return self._accepting[: self.n_states]
