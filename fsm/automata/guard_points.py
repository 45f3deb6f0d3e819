"""Guard points in a lazily determinized DFA (`language.Guard`): states decided by the matcher's text.

A DFA state whose NFA set holds a guard point is *guarded*: the automaton cannot tell which way the
text goes there. Its row is the one with every check failed, and beside it the state with every check
passed (`guard_arrays`), so the row walk (`fsm.index.trie_kernel`) only sets aside the bytes on which
the two differ instead of walking each decision; `resolve` gives the state once the checks are run.
What it costs a DFA without guard points: one dict test per state made.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


class GuardPoints:
    """`LazyByteDFA`'s guard points (a mixin over its sets, closures and state ids)."""

    _points: dict[int, tuple[Callable[[bytes], bool], int]]  # NFA guard point -> (check, after)
    _galt: np.ndarray  # per DFA state: the state with every check passed, -1 when not guarded
    _gdead: np.ndarray  # per DFA state: nothing is left when every check fails
    _sets: list[tuple[int, ...]]
    _final: int
    _calls: object
    _table: np.ndarray
    _row_of: np.ndarray
    _expanded: np.ndarray

    def _closure(self, q: int) -> tuple[int, ...]: ...
    def _closed(self, s: tuple[int, ...]) -> int: ...
    def _byte_edges(self, q: int) -> tuple: ...
    def _new_row(self, d: int) -> int: ...
    def expand(self, d: int) -> None: ...

    def _expand_guarded(self, d: int) -> None:
        """The row of guarded state ``d``: that of every check failed; both sides expanded."""
        fail = self.resolve(d, lambda check: False)
        for x in (fail, int(self._galt[d])):
            if x >= 0:
                self.expand(x)
        r = self._new_row(d)
        if fail >= 0:
            self._table[r] = self._table[self._row_of[fail]]
        self._expanded[d] = True

    def _point(self, q: int) -> tuple[Callable[[bytes], bool], int] | None:
        """(check, the state after it) when NFA state ``q`` is a guard point, else None."""
        if q < 0:
            return None
        if self._calls is None:
            return self._points.get(q)
        inner, sid = self._calls.split(q)
        hit = self._points.get(inner)
        if hit is None or not sid:
            return hit
        return hit[0], self._calls.conf(hit[1], sid)

    def _resolved(
        self, s: tuple[int, ...], passes: Callable[[Callable[[bytes], bool]], bool]
    ) -> tuple[int, ...]:
        """``s`` without its guard points, with the states after those whose check passes (and so on,
        when a point follows a point)."""
        done: set[int] = set()
        while True:
            points = [(q, hit) for q in s if q not in done and (hit := self._point(q)) is not None]
            if not points:
                return s
            done.update(q for q, _ in points)
            keep = {q for q in s if q not in done}
            for _, (check, after) in points:
                if passes(check):
                    keep.update(self._closure(after))
            s = tuple(sorted(keep))

    @property
    def has_guards(self) -> bool:
        """Whether the NFA holds guard points (`language.Guard`)."""
        return bool(self._points)

    def is_guarded(self, d: int) -> bool:
        """Whether state ``d``'s set holds a guard point (a matcher never rests there: `resolve`)."""
        return bool(self._galt[d] >= 0)

    def resolve(self, d: int, passes: Callable[[Callable[[bytes], bool]], bool]) -> int:
        """The state guarded state ``d`` stands for once each check is decided (``passes(check)``):
        its set without the points, with the states after those that pass; -1 when nothing is left.

        >>> from fsm.automata import Guard, LazyByteDFA, alt, lit, node_nfa, seq
        >>> lazy = LazyByteDFA(*node_nfa(seq(lit("a"), alt(lit("b"), seq(Guard(bool), lit("c"))))))
        >>> d = lazy.as_byte_dfa().step(lazy.initial, ord("a"))
        >>> lazy.is_guarded(d), lazy.resolve(d, lambda c: False) != lazy.resolve(d, lambda c: True)
        (True, True)
        """
        s = self._resolved(self._sets[d], passes)
        return self._closed(s) if self._productive(s) else -1

    def _productive(self, s: tuple[int, ...]) -> bool:
        """Whether set ``s`` reads a byte or accepts: states whose way on was a guard point's do not."""
        return self._final in s or any(self._byte_edges(q) for q in s)

    @property
    def guard_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """Per state (buffers like `expanded_flags`): the state with every check passed (-1: not
        guarded) and whether nothing is left when every check fails."""
        return self._galt, self._gdead
