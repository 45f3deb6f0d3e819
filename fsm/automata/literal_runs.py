"""A literal's DFA states expanded in one run: a key's letters, one byte out of each state.

A walk reads a literal's states one after the other (a key ``"location"``: eight states, each
with one live byte), and expanding each as it is met would be a round trip through the index per
byte; `LiteralRuns._literal_run` expands the states after a literal's first one at once, a cell per
row, with no pieces to cut nor write.

>>> from fsm.automata import LazyByteDFA, lit, node_nfa
>>> lazy = LazyByteDFA(*node_nfa(lit("abc")))
>>> lazy.ensure(lazy.initial); int(lazy.row_index[lazy.step(lazy.initial, ord("a"))]) >= 0  # "b"'s, expanded with it
True
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .state_sets import _CLOSED_ONE, _ONE_KEY
from .utf8_chains import LEAD

LITERAL_RUN = 32  # states of a literal expanded in one call, at most
_WHAT = "the automaton"


class LiteralRuns:
    """`LazyByteDFA`'s literal runs (a mixin over its sets, closures, state ids and rows)."""

    if TYPE_CHECKING:  # of the other mixins (stubs here would come first in `LazyByteDFA`'s order)
        from .budget import Budget
        from .byte_classes import ClassCuts

        budget: Budget
        n_classes: int
        _cuts: ClassCuts
        _sets: dict
        _btrans: dict
        _one: dict
        _ids: dict
        _eps: tuple
        _n_real: int
        _final: int
        _calls: object
        _char_trans: tuple
        _accepting: object
        _table: object
        _row_at: memoryview
        _n: int
        _n_rows: int
        _cap: int
        _made: int
        limits: object
        _ticks: int
        _done: memoryview
        _cells: memoryview

        def _new(self, s: tuple[int, ...] | None) -> int: ...
        def _new_row(self, d: int) -> int: ...
        def _closure(self, q: int) -> tuple[int, ...]: ...
        def _closed(self, s: tuple[int, ...]) -> int: ...
        def _byte_edges(self, q: int) -> tuple: ...
        def _set(self, d: int) -> tuple[int, ...]: ...

    def _singleton(self, t: int) -> tuple[int, int]:
        """(the state of the set of NFA state ``t`` alone — a state without epsilon moves —, the
        bytes to charge for it: none when it was made before)."""
        one1 = (t,)
        tgt = self._ids.get(one1)
        if tgt is not None:
            return tgt, 0
        tgt = self._ids[one1] = self._new(one1)
        if t == self._final:
            self._accepting[tgt] = True
        return tgt, _CLOSED_ONE

    def _literal_run(self, d: int, n: int) -> None:
        """Expand ``d`` and the states after it while each reads one byte to one NFA state (as
        `_literal_next` found), ``n`` at most: one cell a row, no pieces to cut nor write."""
        # ~60 states a JSON request (its keys' letters), each step inlined: the target made as
        # `_singleton` and `_new` do, its row as `_new_row`, the next test as `_literal_next` (four
        # calls a state were a third of its time)
        sets, one, ids, eps, n_real, ct = (
            self._sets,
            self._one,
            self._ids,
            self._eps,
            self._n_real,
            self._char_trans,
        )
        single, nc, final, max_made, held = (
            self._cuts.single,
            self.n_classes,
            self._final,
            self.limits.max_states,
            0,
        )
        ((b, _, t),) = self._btrans[sets[d][0]]  # derived: `_literal_next` read it
        while True:
            tgt = one.get(t)
            if tgt is None:
                if 0 <= t < n_real and not eps[t]:
                    one1 = (t,)
                    tgt = ids.get(one1)
                    if tgt is None:
                        tgt = self._n
                        if tgt < self._cap and self._made < max_made:  # room, under max_states
                            self._made += 1
                            sets[tgt] = one1
                            self._n = tgt + 1
                        else:
                            tgt = self._new(one1)
                        ids[one1] = tgt
                        if t == final:
                            self._accepting[tgt] = True
                        held += _CLOSED_ONE
                else:
                    c = self._closure(t)
                    tgt = ids.get(c)
                    if tgt is None:
                        tgt = self._closed(c)
                one[t] = tgt
                held += _ONE_KEY
            c = single[b]
            if c < 0:
                raise AssertionError(f"byte {b:#x} shares a byte class of the lazy DFA with others")
            r = self._n_rows
            if r < len(self._table):
                self._n_rows = r + 1
                self._row_at[d] = r
            else:
                r = self._new_row(d)  # grows the table and its cells' view
            self._cells[r * nc + c] = tgt
            self._done[d] = True
            self._ticks += 1
            if not self._ticks & 15:
                self.budget.deadline.check(_WHAT)
            n -= 1
            if n <= 0 or self._done[tgt]:
                break
            s = sets.get(tgt)
            if s is None or len(s) != 1:
                break
            q = s[0]
            if not 0 <= q < n_real:
                break
            e = ct[q]
            if len(e) != 1:
                break
            b, hi, t = e[0]
            if b != hi or b >= 0x80:  # a range, or a character's lead byte: no literal goes on
                break
            d = tgt
        if held:
            self.budget.charge(held, _WHAT)

    def _literal_next(self, d: int) -> int:
        """``d`` when it reads one byte to one state (a literal goes on), else -1."""
        s = self._sets.get(d)
        if s is None or len(s) != 1 or self._done[d]:
            return -1
        e = self._one_byte_edge(s[0])
        return d if e is not None and e[2] != LEAD else -1

    def _one_byte_edge(self, q: int) -> tuple[int, int, int] | None:
        """The edge of NFA state ``q`` when it is a state of the character NFA with one edge of one byte."""
        if not 0 <= q < self._n_real:
            return None
        ev = self._btrans.get(q) or self._byte_edges(q)
        return ev[0] if len(ev) == 1 and ev[0][0] == ev[0][1] else None

    def reads_one_byte(self, d: int) -> bool:
        """Whether state ``d`` is one NFA state of the character NFA with one edge of one byte (a
        literal's character): its row has one live byte, so no wide loop and no shape to look for.

        >>> from fsm.automata import LazyByteDFA, lit, node_nfa
        >>> lazy = LazyByteDFA(*node_nfa(lit("ab")))
        >>> lazy.reads_one_byte(lazy.initial)
        True
        """
        s = self._set(d)
        return len(s) == 1 and self._calls is None and self._one_byte_edge(s[0]) is not None
