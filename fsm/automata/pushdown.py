"""Recursive JSON schemas as a lazily determinized pushdown automaton.

A recursive ``$ref`` makes the documents a context-free language. Instead of handing it to an LALR
parser (which needs the grammar's alternatives to be told apart by one lexeme of lookahead, and
whose table for a big schema takes seconds to build), every ``$ref`` target becomes a *rule*: one
NFA fragment, entered by a call and left by a return. A configuration is an NFA state with a stack
of return states; the lazy DFA (`lazy_dfa`) determinizes sets of configurations, one state at a
time, only where a token walk goes. That is exact for any rule structure — ambiguous or not — as
long as no rule can call itself before reading a character (left recursion, refused here: the
schema then goes to the grammar engine). Compiling costs one pass over the schema, no table.

Trimming keeps only configurations that can still finish: a state is live when it reaches its
rule's end, through calls of rules that can themselves finish.

>>> from fsm.automata import Ref, alt, lit, seq
>>> rules = {"v": alt(lit("0"), seq(lit("["), Ref("v"), lit("]")))}
>>> d = pushdown_dfa(Ref("v"), rules).as_byte_dfa()
>>> [d.accepts(t) for t in (b"0", b"[[0]]", b"[[0]", b"[]")]
[True, True, False, False]
"""

from __future__ import annotations

from ..errors import SchemaTooComplex
from ..limits import DEFAULT_LIMITS, Limits
from .budget import Budget
from .build import trimmed_nfa
from .language import Node, Ref
from .lazy_dfa import LazyByteDFA
from .shared import share_values

_MAX_DEPTH = 100_000  # stack frames; reached only by a runaway closure, never by a real document


class LeftRecursive(Exception):
    """Internal: a rule can call itself without reading a character (the grammar engine handles it)."""


class Calls:
    """Rule entry/exit states and call sites of one NFA, and the interned stacks of its configurations.

    A call site is a state ``c`` whose closure enters rule ``R`` at ``start[R]`` with return state
    ``r`` pushed; reaching ``final[R]`` pops ``r``. Configuration ids: an NFA id alone (empty stack),
    or ``BASE + i`` for the i-th interned ``(NFA id, stack id)`` pair.
    """

    BASE = 1 << 62

    def __init__(self):
        self.start: dict[str, int] = {}
        self.final: dict[str, int] = {}
        self.site: dict[int, tuple[str, int]] = {}  # call state -> (rule, return state)
        self.returns: set[int] = set()  # rule final states
        self._stacks: list[tuple[int, int, int]] = [(-1, -1, 0)]  # id -> (return state, parent, depth)
        self._stack_ids: dict[tuple[int, int], int] = {}
        self._confs: list[tuple[int, int]] = []
        self._conf_ids: dict[tuple[int, int], int] = {}

    # -- configurations ---------------------------------------------------------------------------
    def conf(self, q: int, sid: int) -> int:
        """The configuration id of NFA state ``q`` with stack ``sid`` (interned)."""
        if sid == 0:
            return q
        key = (q, sid)
        c = self._conf_ids.get(key)
        if c is None:
            c = self._conf_ids[key] = self.BASE + len(self._confs)
            self._confs.append(key)
        return c

    def split(self, c: int) -> tuple[int, int]:
        """``(NFA id, stack id)`` of configuration ``c``."""
        return self._confs[c - self.BASE] if c >= self.BASE else (c, 0)

    def push(self, sid: int, ret: int) -> int:
        """The stack ``sid`` with return state ``ret`` pushed (interned; raises past the depth limit)."""
        key = (sid, ret)
        s = self._stack_ids.get(key)
        if s is None:
            depth = self._stacks[sid][2] + 1
            if depth > _MAX_DEPTH:
                raise SchemaTooComplex(
                    f"the automaton: rule calls nest past {_MAX_DEPTH:,} levels",
                    budget="recursion",
                    limit=_MAX_DEPTH,
                )
            s = self._stack_ids[key] = len(self._stacks)
            self._stacks.append((ret, sid, depth))
        return s

    def eps(self, q: int, sid: int) -> list[int]:
        """Configurations one call or return away from NFA state ``q`` with stack ``sid``."""
        out = []
        call = self.site.get(q)
        if call is not None:
            out.append(self.conf(self.start[call[0]], self.push(sid, call[1])))
        if sid and q in self.returns:
            ret, parent, _ = self._stacks[sid]
            out.append(self.conf(ret, parent))
        return out

    # -- analysis ---------------------------------------------------------------------------------
    def check_left_recursion(self, eps_of) -> None:
        """Raise `LeftRecursive` when a rule can re-enter itself without reading a character."""
        enters: dict[str, set[str]] = {}
        for name, s in self.start.items():
            seen = {s}
            stack = [s]
            out: set[str] = set()
            while stack:
                q = stack.pop()
                call = self.site.get(q)
                if call is not None:
                    out.add(call[0])
                for t in eps_of(q):
                    if t not in seen:
                        seen.add(t)
                        stack.append(t)
            enters[name] = out
        state: dict[str, int] = {}  # 1: on the path, 2: done

        def visit(name: str) -> None:
            state[name] = 1
            for nxt in enters[name]:
                if state.get(nxt) == 1:
                    raise LeftRecursive(name)
                if nxt not in state:
                    visit(nxt)
            state[name] = 2

        for name in enters:
            if name not in state:
                visit(name)


def pushdown_nfa(
    root: Node, rules: dict[str, Node], limits: Limits | None = None, budget: Budget | None = None
):
    """The trimmed character NFA of ``root`` with every `Ref` a call of its rule.

    Returns ``(trans, eps, start, final, limits, counters, calls)``. Raises `SchemaError` when no
    document is possible and `LeftRecursive` when a rule calls itself before reading a character.

    >>> from fsm.automata import Ref, alt, lit, seq
    >>> trans, eps, start, final, limits, counters, calls = pushdown_nfa(Ref("v"), {"v": alt(lit("0"), seq(lit("["), Ref("v"), lit("]")))})
    >>> sorted(calls.start)
    ['v']
    """
    limits = limits or DEFAULT_LIMITS
    calls = Calls()
    root, rules = share_values(root, rules)  # a value referred to from several places: built once
    nfa, start, final = trimmed_nfa(root, limits, calls, rules, budget)
    counters = nfa.counters

    def eps_of(q: int) -> list[int]:
        return nfa.eps[q] if q >= 0 else counters.eps(q)

    calls.check_left_recursion(eps_of)
    return nfa.trans, nfa.eps, start, final, limits, counters, calls


def pushdown_dfa(
    root: Node, rules: dict[str, Node], limits: Limits | None = None, budget: Budget | None = None
):
    """A `LazyByteDFA` over the configurations of ``root`` and its ``rules`` (see module doc);
    ``budget``: the compile's, shared by the NFA and the DFA (else a fresh one for each).

    >>> from fsm.automata import Ref, alt, lit, seq
    >>> d = pushdown_dfa(Ref("v"), {"v": alt(lit("0"), seq(lit("["), Ref("v"), lit("]")))}).as_byte_dfa()
    >>> d.accepts(b"[[0]]"), d.accepts(b"[0")
    (True, False)
    """
    trans, eps, start, final, limits, counters, calls = pushdown_nfa(root, rules, limits, budget)
    return LazyByteDFA(trans, eps, start, final, limits, counters, calls, budget=budget)


__all__ = ["Calls", "LeftRecursive", "Ref", "pushdown_dfa", "pushdown_nfa"]
