"""`ComposedDFA`: the byte DFA of a `Program`, determinized lazily.

A state is a set of threads — (slot, state of the slot's leaf) — closed under "a leaf that
accepts may hand over to the slots after it". So where a part may end, the next part runs beside
it, and a token whose bytes end one part and begin the next is simply a walk through this DFA.
Token slots have no byte edge: their special id is an extra edge (`token_edges`) the index adds
to the state's row. Rows are made the first time a trie walk reads them (`table` expands on
access, as `fsm.automata.LazyByteDFA`'s does).
"""

from __future__ import annotations

import threading

import numpy as np

from ..automata import ByteDFA
from ..automata.lazy_views import LazyFlags, LazyTable
from ..limits import Deadline, DeadlineScope, Limits
from .program import JUNCTION, LEAF, TOKEN, Program

Thread = tuple[int, int]


class ComposedDFA(DeadlineScope):
    """Lazily determinized byte DFA over the threads of a `Program`.

    >>> from fsm.compose.parts import Sequence, Text
    >>> from fsm.compose.program import build_program
    >>> from fsm.limits import Limits
    >>> d = ComposedDFA(build_program(Sequence("a", Text(max_bytes=1)), None, None), Limits())
    >>> s = d.step(d.initial, ord("a")); bool(d.accepting_flags[s]), d.step(s, ord("a")) >= 0
    (True, True)
    """

    def __init__(self, program: Program, limits: Limits):
        self.program = program
        self.limits = limits
        self.byte_class = np.arange(256, dtype=np.int32)
        self.n_classes = 256
        self._sets: list[frozenset[Thread]] = []
        self._ids: dict[frozenset[Thread], int] = {}
        self._table = np.full((16, 256), -1, dtype=np.int32)
        self._accepting = np.zeros(16, dtype=bool)
        self._expanded = np.zeros(16, dtype=bool)
        self._tokens: dict[int, dict[int, int]] = {}
        self._deadline: Deadline | None = None
        self._lock = threading.RLock()  # matchers of several threads may expand states at once
        self.initial = self._state_of(self._closure([], program.start))

    # -- threads ------------------------------------------------------------------------------
    def _closure(self, threads: list[Thread], entries: list[int]) -> frozenset[Thread]:
        """``threads`` plus the slots ``entries`` entered, and whatever accepting leaves hand over to."""
        slots = self.program.slots
        out: set[Thread] = set()
        junctions: set[int] = set()
        todo_threads = list(threads)
        todo_slots = list(entries)
        while todo_threads or todo_slots:
            while todo_slots:
                n = todo_slots.pop()
                s = slots[n]
                if s.kind == LEAF:
                    todo_threads.append((n, s.leaf.initial))
                elif s.kind == JUNCTION:
                    if n not in junctions:
                        junctions.add(n)
                        todo_slots.extend(s.next)
                else:  # TOKEN waits for its id; FINAL accepts
                    out.add((n, 0))
            while todo_threads:
                t = todo_threads.pop()
                if t in out:
                    continue
                out.add(t)
                s = slots[t[0]]
                if s.leaf.accepting(t[1]):
                    todo_slots.extend(s.next)
        return frozenset(out)

    def _state_of(self, threads: frozenset[Thread]) -> int:
        d = self._ids.get(threads)
        if d is None:
            d = len(self._sets)
            self.limits.check_states(d + 1, "composed spec")
            self._sets.append(threads)
            self._ids[threads] = d
            if d >= len(self._accepting):
                self._grow()
            self._accepting[d] = (self.program.final, 0) in threads
        return d

    def _grow(self) -> None:
        cap = len(self._accepting) * 2
        table = np.full((cap, 256), -1, dtype=np.int32)
        table[: len(self._table)] = self._table
        self._table = table
        self._accepting = np.concatenate([self._accepting, np.zeros(cap - len(self._accepting), bool)])
        self._expanded = np.concatenate([self._expanded, np.zeros(cap - len(self._expanded), bool)])

    def expand(self, d: int) -> None:
        """Compute the byte row and the token edges of state ``d``."""
        if self._expanded[d]:
            return
        with self._lock:
            if not self._expanded[d]:
                self._expand(d)

    def _expand(self, d: int) -> None:
        if self._deadline is not None:
            self._deadline.check("expanding a composed spec")
        slots = self.program.slots
        buckets: dict[int, list[Thread]] = {}
        tokens: dict[int, list[int]] = {}
        for slot, st in self._sets[d]:
            s = slots[slot]
            if s.kind == TOKEN:
                tokens.setdefault(s.token_id, []).extend(s.next)
            elif s.kind == LEAF:
                row = s.leaf.row(st)
                live = np.flatnonzero(row >= 0)
                for b, nxt in zip(live.tolist(), row[live].tolist(), strict=True):
                    buckets.setdefault(b, []).append((slot, nxt))
        made: dict[tuple, int] = {}
        for b, threads in buckets.items():
            key = tuple(threads)
            tgt = made.get(key)
            if tgt is None:
                tgt = made[key] = self._state_of(self._closure(threads, []))  # may grow the table
            self._table[d, b] = tgt
        self._tokens[d] = {t: self._state_of(self._closure([], nxt)) for t, nxt in tokens.items()}
        self._expanded[d] = True

    def ensure(self, rows: int | np.ndarray) -> None:
        """Expand every state in ``rows``."""
        if isinstance(rows, (int, np.integer)):
            self.expand(int(rows))
            return
        r = np.asarray(rows).ravel()
        todo = r[~self._expanded[r]]
        if len(todo):
            for d in np.unique(todo).tolist():
                self.expand(d)

    def expand_all(self) -> None:
        """Expand every reachable state (finite unless a part is a pushdown automaton)."""
        d = 0
        while d < len(self._sets):
            self.expand(d)
            d += 1

    def use_deadline(self, deadline: Deadline | None) -> None:
        """Check expansions against ``deadline`` from now on (None: unchecked)."""
        self._deadline = deadline

    # -- what an index reads -----------------------------------------------------------------
    @property
    def n_states(self) -> int:
        return len(self._sets)

    def threads(self, d: int) -> frozenset[Thread]:
        """The threads of state ``d``."""
        return self._sets[d]

    def token_edges(self, d: int) -> dict[int, int]:
        """Special token id -> next state, for the token slots waiting in state ``d``."""
        self.expand(d)
        return self._tokens[d]

    def step(self, d: int, byte: int) -> int:
        """The state after ``byte`` (-1: rejected)."""
        self.expand(d)
        return int(self._table[d, byte])

    def table_rows(self) -> np.ndarray:
        """The transition rows made so far (a row is final once expanded, see `ensure`)."""
        return self._table[: self.n_states]

    @property
    def table_buffer(self) -> np.ndarray:
        """The transition rows, with spare capacity (a row is final once expanded, see `ensure`)."""
        return self._table

    @property
    def expanded_flags(self) -> np.ndarray:
        """Whether each state's row is made (a buffer like `table_buffer`'s)."""
        return self._expanded

    @property
    def accepting_flags(self) -> np.ndarray:
        """Whether each state made so far accepts (known as soon as the state exists)."""
        return self._accepting[: self.n_states]

    def as_byte_dfa(self) -> ByteDFA:
        """A `ByteDFA` view whose rows expand when read."""
        return ByteDFA(LazyTable(self), self.byte_class, self.initial, LazyFlags(self))
