"""The DFA states of `LazyByteDFA` as epsilon-closed sets of NFA states: each NFA state's byte edges
derived once, its closure memoized, a target set's state found by the set.

Most targets of an expansion are one NFA state without an epsilon move (a literal's next character, a
string's loop): their sets are looked up by the int (``_one``), not built as a set and sorted, and a
closure walks its epsilon moves once per NFA state, not once per DFA state that reaches it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..limits import Limits
from .budget import EDGE_BYTES, SET_BYTES, SET_MEMBER_BYTES, Budget
from .ranges import disjoint
from .utf8_chains import LEAD, Utf8Chains

_WHAT = "the automaton"
# Bytes held by a set of one NFA state: as the key of `_one`, and as a closed set (`_closed`).
_ONE_KEY = SET_BYTES + SET_MEMBER_BYTES + EDGE_BYTES
_CLOSED_ONE = SET_BYTES + SET_MEMBER_BYTES + 2 * EDGE_BYTES


class StateSets:
    """`LazyByteDFA`'s NFA side (a mixin): byte edges, closures and the state of each closed set."""

    limits: Limits
    budget: Budget
    _calls: object
    _counters: object
    _char_trans: tuple
    _eps: tuple
    _n_real: int
    _final: int
    _btrans: dict
    _vbtrans: dict
    _chains: Utf8Chains
    _closures: dict
    _ids: dict
    _raw: dict
    _one: dict
    _points: dict
    _accepting: np.ndarray
    _galt: np.ndarray
    _gdead: np.ndarray

    if TYPE_CHECKING:  # of the other mixins (stubs here would come first in `LazyByteDFA`'s order)

        def _new(self, s: tuple[int, ...] | None) -> int: ...
        def _point(self, q: int): ...
        def _resolved(self, s: tuple[int, ...], passes) -> tuple[int, ...]: ...
        def _productive(self, s: tuple[int, ...]) -> bool: ...

    def _byte_edges(self, q: int) -> tuple[tuple[int, int, int], ...]:
        if self._calls is not None and q >= self._calls.BASE:
            out = self._vbtrans.get(q)
            if out is None:
                inner, sid = self._calls.split(q)
                conf = self._calls.conf
                out = self._vbtrans[q] = tuple(
                    (lo, hi, t if t == LEAD else conf(t, sid)) for lo, hi, t in self._byte_edges(inner)
                )
            return out
        if q >= self._n_real:  # inside a character: one edge
            return self._chains.edges(q)
        if q < 0:  # a block's state: in the set of one state or a few, kept it held 157 MB of o21076
            return self._counters.byte_edges(q)
        out = self._btrans.get(q)
        if out is None:
            # tuples of ints: untracked by the garbage collector once seen
            out = Utf8Chains.byte_edges(self._char_trans[q])
            if len(out) > 1 and not disjoint(out):
                # disjoint but out of order (a string's loop: its quote and backslash edges come
                # last): kept sorted, each expansion reads them as they are, not cut by `pieces`
                ordered = tuple(sorted(out))
                if disjoint(ordered):
                    out = ordered
            self._btrans[q] = out
            self.budget.charge(len(out) * EDGE_BYTES, _WHAT)
        return out

    def _own_eps(self, q: int):
        if q >= self._n_real:
            return ()  # inside a character
        return self._eps[q] if q >= 0 else self._counters.eps(q)

    def _eps_of(self, q: int) -> list[int]:
        calls = self._calls
        if calls is None:
            return self._own_eps(q)
        inner, sid = calls.split(q)
        base = self._own_eps(inner)
        if sid:
            base = [calls.conf(t, sid) for t in base]
        more = calls.eps(inner, sid)
        return [*base, *more] if more else base

    # -- state sets -------------------------------------------------------------------------------
    def _closure(self, q: int) -> tuple[int, ...]:
        r = self._closures.get(q)
        if r is None:
            # a real state's own epsilon moves read in place: two calls less per state closed
            eps, n_real, plain = self._eps, self._n_real, self._calls is None
            if plain and 0 <= q < n_real and not eps[q]:
                return (q,)  # most states: no epsilon move
            eps_of = self._own_eps if plain else self._eps_of
            if not eps_of(q):
                return (q,)
            seen = {q}
            stack = [q]
            while stack:
                x = stack.pop()
                for y in eps[x] if plain and 0 <= x < n_real else eps_of(x):
                    if y not in seen:
                        seen.add(y)
                        stack.append(y)
            if plain and not self._points:
                # a state that only passes on (epsilon moves, no byte) changes nothing a set
                # does once its closure is in: left out, sets that differ by such states alone
                # (a value's end before ``,`` or ``}``) are one DFA state, and many sets one NFA
                # state (a literal's: one byte to follow, no walk)
                ct, final = self._char_trans, self._final
                seen = [x for x in seen if not 0 <= x < n_real or ct[x] or x == final]
            r = tuple(sorted(seen))
            self.budget.charge(len(r) * SET_MEMBER_BYTES, _WHAT)
            self._closures[q] = r
        return r

    def _state_of_one(self, q: int) -> int:
        """`_state_of` the set ``{q}``, memoized by the int: most targets are single states, and a
        dict of ints is invisible to the garbage collector where one keyed by frozensets is not."""
        d = self._one.get(q)
        if d is None:
            d = self._closed(self._closure(q))
            # what a set key cost before (kept so that budgets trip where they did)
            self.budget.charge(_ONE_KEY, _WHAT)
            self._one[q] = d
        return d

    def _state_of(self, targets: frozenset | set) -> int:
        if len(targets) == 1:
            (q,) = targets
            return self._state_of_one(q)
        raw = tuple(sorted(targets))
        d = self._raw.get(raw)
        if d is not None:
            return d
        d = self._closed(tuple(sorted(set().union(*(self._closure(q) for q in raw)))))
        # one more set kept as a key (one per new transition): they add up
        self.budget.charge(SET_BYTES + len(raw) * SET_MEMBER_BYTES + EDGE_BYTES, _WHAT)
        self._raw[raw] = d
        return d

    def _closed(self, s: tuple[int, ...]) -> int:
        """The DFA state of the epsilon-closed set ``s`` (sorted), made if new."""
        d = self._ids.get(s)
        if d is None:
            d = self._new(s)
            # the closed set, its slot in the ids dict and in the sets list
            self.budget.charge(SET_BYTES + len(s) * SET_MEMBER_BYTES + 2 * EDGE_BYTES, _WHAT)
            self._ids[s] = d
            if self._final in s:  # the arrays start all False: a numpy write is ~0.2 µs a state
                self._accepting[d] = True
            if self._points and any(self._point(q) is not None for q in s):
                alt = self._closed(self._resolved(s, lambda check: True))  # may grow: index after
                self._galt[d] = alt
                self._gdead[d] = not self._productive(self._resolved(s, lambda check: False))
        return d

    def _edges_of(self, s: tuple[int, ...]) -> list[tuple[int, int, int]]:
        """The byte edges of every NFA state of set ``s``, in no order (`ranges.pieces` cuts them)."""
        if len(s) > 64:  # a big subset: one expansion alone takes a while
            self.budget.deadline.check(_WHAT)
        ev: list[tuple[int, int, int]] = []
        btrans = self._btrans
        for i, q in enumerate(s):
            if i & 4095 == 4095:  # a subset of many thousand states (an enum of 50,000 values)
                self.budget.deadline.check(_WHAT)
            edges = btrans.get(q)  # derived already: no call
            ev.extend(edges if edges is not None else self._byte_edges(q))
        return ev
