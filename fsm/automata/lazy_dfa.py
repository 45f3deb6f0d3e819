"""A byte DFA determinized on demand, for big JSON schemas.

The character NFA of a schema is read as a byte NFA (UTF-8 continuation chains shared by target,
made only once a state inside a character is read: `utf8_chains`); its byte columns are folded into
classes. DFA states — epsilon-closed sets of NFA states —
get their transition rows only when something reads them: `LazyTable` looks like the ``table``
array of a `ByteDFA` and expands the rows an index expression touches before answering it. A token
index that walks the vocabulary trie from one state therefore determinizes only the states tokens
actually reach, so the time to the first mask does not grow with the schema.

Every state can reach acceptance: the NFA is trimmed before, so every non-empty state set is live.

>>> from fsm.automata import lit, alt
>>> from fsm.automata import node_nfa
>>> d = LazyByteDFA(*node_nfa(alt(lit("yes"), lit("no")))).as_byte_dfa()
>>> d.accepts(b"yes"), d.accepts(b"ye")
(True, False)
"""

from __future__ import annotations

import numpy as np

from ..errors import SchemaTooComplex, UnsupportedSchema
from ..limits import DEFAULT_LIMITS, Deadline, DeadlineScope, Limits
from .budget import EDGE_BYTES, Budget
from .byte_classes import ClassCuts, edge_ranges
from .byte_dfa import ByteDFA, equal_rows, merge_equal_states
from .guard_points import GuardPoints
from .lazy_views import LazyFlags, LazyTable
from .literal_runs import LITERAL_RUN, LiteralRuns
from .ranges import disjoint, pieces
from .spelling import spelled_to_the_end
from .state_rows import StateRows
from .state_sets import _ONE_KEY, StateSets
from .utf8_chains import LEAD, CharacterStates, Utf8Chains

_WHAT = "the automaton"


def _leads(t) -> bool:
    """Whether a piece's target is a lead byte's (a set's targets are all inside a character or none)."""
    return t == LEAD if t.__class__ is int else LEAD in t


class LazyByteDFA(StateRows, StateSets, LiteralRuns, GuardPoints, CharacterStates, DeadlineScope):
    """Subset construction over a byte NFA, one state at a time."""

    def __init__(
        self,
        trans,
        eps,
        start: int,
        final: int,
        limits: Limits | None = None,
        counters=None,
        calls=None,
        budget: Budget | None = None,
    ):
        self.limits = limits or DEFAULT_LIMITS
        # Memory of every expansion, for the DFA's whole life (expansions made on a row's first
        # visit count too). Time: a given deadline (the compile's when ``budget`` is given, a row
        # walk's through `within`), else a fresh ``max_seconds`` per outside call.
        self.budget = budget or Budget(self.limits)
        self._given: Deadline | None = budget.deadline if budget is not None else None
        self._active = False
        self._counters = counters  # virtual (negative) NFA states of long counted repeats
        # rule calls (`pushdown.Calls`): ids from Calls.BASE up are (NFA state, stack) configurations
        self._calls = calls
        self._vbtrans: dict[int, tuple[tuple[int, int, int], ...]] = {}  # of configurations
        # The NFA as tuples, byte edges derived on first use in a dict: out of the garbage collector's
        # view (`state_rows`). States inside a character number on past the NFA's.
        self._char_trans = trans if trans.__class__ is tuple else tuple(trans)
        self._n_real = len(trans)
        self._btrans: dict[int, tuple[tuple[int, int, int], ...]] = {}
        self._eps = eps if eps.__class__ is tuple else tuple(eps)
        self._chains = Utf8Chains(len(trans), lambda n: self.budget.charge(n, _WHAT))
        # bytes no edge tells apart share a column: most states made are never expanded, yet each
        # has a row (`byte_classes`)
        self._ranges = edge_ranges(trans)  # read by the byte classes and the spelling check
        self._cuts = ClassCuts.of_edges(trans, counters, self._ranges)
        self.byte_class = self._cuts.byte_class
        self.n_classes = self._cuts.n_classes
        self._final = final
        # State sets are kept as sorted tuples of ints, never as frozensets: a tuple of ints drops out
        # of the garbage collector's view at its first collection, a frozenset is walked by every
        # full collection for the process's life (tens of thousands of them once a server has
        # compiled a few dozen schemas: ~30 ms a collection).
        self._closures: dict[int, tuple[int, ...]] = {}
        self._ids: dict[tuple[int, ...], int] = {}
        self._raw: dict[tuple[int, ...], int] = {}  # target sets of two states or more
        self._one: dict[int, int] = {}  # single target states
        # A set of states inside a character -> a state with it expanded: the target of a lead
        # byte is a state of its own (`_insides`), so the same set is expanded under several states
        # (most lead bytes' of a loop inside a string and of the state before it; ~half of those
        # expanded repeat one), and its row holds no lead byte's target of its own to tell them apart.
        self._chain_rows: dict[tuple[int, ...], int] = {}
        self._ticks = 0  # expansions: the deadline is checked every 16
        self._init_rows()  # per state: its set, flags, row (`state_rows`)
        self._points = counters.guards if counters is not None else {}  # guard points (`guard_points`)
        self.initial = self._state_of_one(start)

    def expand(self, d: int) -> None:
        """Compute the transition row of DFA state ``d`` (and of the literal it begins, if any)."""
        # A literal (a key's characters: one byte out of each state) is expanded on at once: a walk
        # reads its states one after the other, each a round trip through the index otherwise.
        d = self._expand_row(d)
        if d >= 0:
            self._literal_run(d, LITERAL_RUN - 1)

    def _expand_row(self, d: int) -> int:
        """Expand ``d``; the next state of its literal to expand, else -1."""
        if self._done[d]:
            return -1
        if self._points and self._galt[d] >= 0:
            self._expand_guarded(d)
            return -1
        self._ticks += 1
        if not self._ticks & 15:  # (the state count is checked as states are made: `_new`)
            self.budget.deadline.check(_WHAT)
        s = self._sets.get(d) or self._set(d)
        inside = bool(s) and s[0] >= self._n_real and self._calls is None
        if inside:  # inside a character: sets repeat
            e = self._chain_rows.get(s)
            if e is not None:
                self._copy_row(d, e)
                return -1
        # most sets are one NFA state (a string's loop, a chain state): its edges, nearly always
        # sorted (else not `disjoint`: `pieces` cuts them); a set's edges are cut unsorted (`pieces`
        # sorts its few wide ranges, its single bytes need no sort)
        if len(s) == 1:
            q = s[0]
            ev = self._btrans.get(q) if self._calls is None else None
            if ev is None:
                ev = self._byte_edges(q)
            if len(ev) > 1 and not disjoint(ev):
                ev = pieces(ev)
        else:
            ev = pieces(self._edges_of(s))
        # lead bytes come last (sorted, from C2): their targets inside the character made at once
        k = len(ev)
        while k and ev[k - 1][0] >= 0xC0 and _leads(ev[k - 1][2]):
            k -= 1
        one, out = self._one, []
        # A target of one NFA state without epsilon moves (most: a literal's next character, a
        # string's loop) is its own closed set: made here, not through four calls, and its bytes
        # charged once for the row (`_state_of_one`, `_closure`, `_closed` charge the same).
        plain = self._calls is None and not self._points
        eps, ids, closures, n_real, held = self._eps, self._ids, self._closures, self._n_real, 0
        for x, y, t in ev if k == len(ev) else ev[:k]:
            if t.__class__ is not int:  # several targets
                tgt = self._state_of(t)
            else:
                tgt = one.get(t)
                if tgt is None:
                    if plain and 0 <= t < n_real and not eps[t]:
                        tgt, made = self._singleton(t)
                        held += made
                        one[t] = tgt
                        held += _ONE_KEY
                    elif plain:  # its closure memoized (`_closure`), its state made if new
                        c = closures.get(t) or self._closure(t)
                        tgt = ids.get(c)
                        if tgt is None:
                            tgt = self._closed(c)
                        one[t] = tgt
                        held += _ONE_KEY
                    else:
                        tgt = self._state_of_one(t)
            out.append((x, y, tgt))
        if k < len(ev):  # the lead bytes' targets, inside the character, their sets made when read
            leads = ev[k:]
            first = self._insides(d, [e[0] for e in leads])
            out += [(x, y, first + i) for i, (x, y, _) in enumerate(leads)]
        if held:
            self.budget.charge(held, _WHAT)
        base = self._new_row(d) * self.n_classes  # may grow the table: its cells' view after
        self._cuts.write_row(self._cells, base, out)
        self._done[d] = True
        if inside:  # once its row is whole (a budget may stop an expansion half way)
            self._chain_rows[s] = d
            self.budget.charge(EDGE_BYTES, _WHAT)
        elif len(out) == 1 and plain and out[0][0] == out[0][1]:
            return self._literal_next(out[0][2])
        return -1

    def loop_ranges(self, d: int, loop: int | None = None) -> tuple[tuple[int, int], ...] | None:
        """The character ranges past ASCII of state ``d``'s NFA states (sorted, repeats kept) when
        every such character leads to ``loop`` (default ``d``) and ``loop`` is one NFA state of the
        character NFA or of a block (a free string's loop, or the state before it; a string's
        inside a `{}` value), else None. States with the
        same ranges into such loops have the same states inside a character, up to names
        (`fsm.index.body_twins`).

        >>> from fsm.automata import cls, node_nfa, rep
        >>> lazy = LazyByteDFA(*node_nfa(rep(cls((0x20, 0x10FFFF)), 0, None)))
        >>> lazy.loop_ranges(lazy.step(lazy.initial, ord("a")))  # (surrogates are no characters)
        ((128, 55295), (57344, 1114111))
        """
        if self._points:
            return None
        calls, n_real, counters = self._calls, self._n_real, self._counters
        # a rule call's configuration (NFA state, stack) reads what its NFA state reads (`pushdown`)
        split = calls.split if calls is not None else lambda c: (c, 0)
        # a block's state (a string inside a `{}` value: negative) makes its states inside a
        # character from its edges as a state of the character NFA does (`utf8_chains`)
        virtual = counters is not None and calls is None
        into = self._set(d if loop is None else loop)
        if len(into) != 1:
            return None
        q, sid = split(into[0])
        if not (0 <= q < n_real or (virtual and q < 0)):
            return None
        out = []
        for c in self._set(d):
            p, psid = split(c) if c >= 0 else (c, 0)
            if 0 <= p < n_real:
                edges = self._char_trans[p]
            elif virtual and p < 0:
                edges = counters.edges(p)
            else:
                return None
            for lo, hi, t in edges:
                if hi >= 0x80:
                    if t != q or psid != sid:
                        return None
                    out.append((max(lo, 0x80), hi))
        return tuple(sorted(out))

    def ensure(self, rows) -> None:
        """Expand every state in ``rows`` (an int or an array of ints)."""
        if rows.__class__ is int or isinstance(rows, np.integer):
            if not self._done[rows]:
                if self._active:
                    self.expand(int(rows))
                    return
                # an outside call (most: a chain's next state, one a call) starts the clock
                self._active = True
                self.budget.deadline = self._given or self.limits.deadline()
                try:
                    self.expand(int(rows))
                finally:
                    self._active = False
            return
        r = np.asarray(rows).ravel()
        if len(r) <= 8:  # most calls: a walk's start, a round of a few states (a mask costs ~3 µs)
            flags = self._done
            todo = [d for d in r.tolist() if not flags[d]]
        else:
            todo = r[~self._expanded[r]].tolist()
        if todo:
            started = self._begin()
            try:
                for d in sorted(set(todo)):  # a few states: np.unique costs ~10 µs
                    self.expand(d)
            finally:
                self._active = self._active and not started

    def expand_all(self) -> None:
        """Expand every state, including those the expansions make."""
        started = self._begin()
        try:
            d = 0
            while d < self.n_states:
                self.expand(d)
                d += 1
                if d & 63 == 0:
                    self.budget.deadline.check(_WHAT)
        finally:
            self._active = self._active and not started

    def _begin(self) -> bool:
        """Start the clock of an outside call (True), unless one runs already (False)."""
        if self._active:
            return False
        self._active = True
        self.budget.deadline = self._given or self.limits.deadline()
        return True

    def use_deadline(self, deadline: Deadline | None) -> None:
        """Check the expansions from now on against ``deadline`` (a compile's, or a row walk's);
        None: a fresh ``limits.max_seconds`` for each outside call again.

        >>> from fsm.automata import lit, node_nfa
        >>> lazy = LazyByteDFA(*node_nfa(lit("a")))
        >>> lazy.use_deadline(DEFAULT_LIMITS.deadline()); lazy.use_deadline(None)
        """
        self._given = deadline
        if deadline is not None:
            self.budget.deadline = deadline

    # -- states as NFA state sets (what `counter_shift` relates across counts) -----------------------
    @property
    def counters(self):
        """The NFA's counter blocks (`blocks.Counters`), None when it has none or calls rules."""
        return self._counters if self._calls is None else None

    def state_set(self, d: int) -> tuple[int, ...]:
        """The sorted NFA states of DFA state ``d``: real ids from 0, virtual ones negative, and
        from `n_real` up the states inside a UTF-8 character (see `chain_key`)."""
        return self._set(d)

    @property
    def n_real(self) -> int:
        """NFA states below this id are the character NFA's own."""
        return len(self._char_trans)

    def closure_of(self, q: int) -> tuple[int, ...]:
        """The sorted epsilon closure of NFA state ``q`` (`block_forms` names a block's end by it)."""
        return self._closure(q)

    def char_edges(self, q: int) -> tuple[tuple[int, int, int], ...]:
        """The character edges ``(lo, hi, target)`` of real NFA state ``q`` (below `n_real`)."""
        return tuple(self._char_trans[q])

    def state_of_set(self, s: tuple[int, ...]) -> int:
        """The DFA state of the epsilon-closed, sorted NFA state set ``s`` (made, not expanded, if new)."""
        return self._closed(s)

    def step(self, d: int, byte: int) -> int:
        """The state byte ``byte`` takes state ``d`` to (expanded first), -1 when none.

        >>> from fsm.automata import lit, node_nfa
        >>> lazy = LazyByteDFA(*node_nfa(lit("ab")))
        >>> lazy.step(lazy.step(lazy.initial, ord("a")), ord("b")) >= 0, lazy.step(lazy.initial, ord("b"))
        (True, -1)
        """
        self.ensure(d)
        return int(self._table[self._row_of[d], self.byte_class[byte]])

    def spellable(self, single_bytes: np.ndarray) -> bool:
        """True when from every state an accepting path of single-byte tokens exists
        (`spelling.spelled_to_the_end`), so a lazily computed token row never leads into a
        token-level dead end."""
        nfa = (self._char_trans, self._eps, self._final, self._counters, self._calls)
        return spelled_to_the_end(*nfa, single_bytes, self.budget.deadline, self._ranges)

    # -- views ---------------------------------------------------------------------------------------
    def as_byte_dfa(self) -> ByteDFA:
        """A `ByteDFA` whose table and accepting flags expand on access."""
        return ByteDFA(LazyTable(self), self.byte_class, self.initial, LazyFlags(self))

    def materialize(self) -> ByteDFA:
        """Every state expanded, as a plain `ByteDFA` (identical rows merged, columns folded): a
        guard point's check read as failed (`language.Guard`; refused where that is not allowed)."""
        required = self._counters.required if self._counters is not None else {}
        if required:
            keyword = next(iter(required.values()))
            raise UnsupportedSchema(
                f"{keyword} is enforced by a check of the text the matcher runs, which a plain DFA "
                "cannot hold: compile the spec into an index (fsm.compile) with a vocabulary that spells "
                "every byte on its own",
                keyword,
            )
        if self._counters is not None and self._counters.lazy_only:
            keyword = min(self._counters.lazy_only)
            raise SchemaTooComplex(
                f"{keyword} needs more states than a plain DFA can hold (its automaton makes them as a "
                "text reaches them): compile the spec into an index (fsm.compile) with a vocabulary that "
                "spells every byte on its own",
                budget="max_states",
                limit=self.limits.max_states,
            )
        self.expand_all()
        n = self.n_states
        self.budget.charge(n * (self.n_classes * 4 + 1) * 2, _WHAT)  # the copy, and the merged one
        table, accepting, initial = merge_equal_states(
            self._table[self._row_of[:n]], self._accepting[:n].copy(), self.initial, self.budget
        )
        groups = equal_rows(np.ascontiguousarray(table.T))
        cols = table[:, np.unique(groups, return_index=True)[1]]
        return ByteDFA(
            np.ascontiguousarray(cols.astype(np.int32)),
            groups[self.byte_class].astype(np.int32),
            initial,
            accepting,
        )
