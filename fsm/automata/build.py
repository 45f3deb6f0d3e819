"""A tree's automaton under `Limits`: the entry points consumers call.

`trimmed_nfa` builds the NFA with counter blocks (and rule calls, for `pushdown`) and turns budget
overruns and empty languages into the schema errors; `node_nfa` hands its parts to the lazy DFA;
`node_to_dfa` expands that DFA fully.
"""

from __future__ import annotations

from ..errors import SchemaError, SchemaTooComplex, SpecTooComplex
from ..limits import DEFAULT_LIMITS, Deadline, Limits
from .budget import Budget
from .byte_dfa import ByteDFA
from .language import Node
from .lazy_dfa import LazyByteDFA
from .nfa import NFA, NotRegular


def node_nfa(node: Node, limits: Limits | None = None, budget: Budget | None = None):
    """The trimmed character NFA of ``node``: ``(trans, eps, start, final, limits, counters)``.

    ``counters`` holds the virtual states of long counted repeats (negative ids, see `Counters`).
    ``budget``: the compile's (its deadline and the bytes already held), else a fresh one.

    Raises `SchemaError` when the language is empty.

    >>> from fsm.automata import lit
    >>> trans, eps, start, final, limits, counters = node_nfa(lit("ab"))
    >>> len(trans), start
    (3, 0)
    """
    limits = limits or DEFAULT_LIMITS
    nfa, start, final = trimmed_nfa(node, limits, budget=budget)
    return nfa.trans, nfa.eps, start, final, limits, nfa.counters


def trimmed_nfa(
    node: Node, limits: Limits, calls=None, rules: dict[str, Node] | None = None, budget: Budget | None = None
):
    """``(nfa, start, final)``: ``node`` built (with ``rules`` as call targets when ``calls`` is
    given, see `pushdown`) and trimmed; budget overruns become `SchemaTooComplex`.

    Raises `SchemaError` when the language is empty.

    >>> from fsm.automata import lit
    >>> from fsm.limits import DEFAULT_LIMITS
    >>> nfa, start, final = trimmed_nfa(lit("ab"), DEFAULT_LIMITS)
    >>> final
    2
    """
    try:
        nfa = NFA(budget or Budget(limits), counters=True, calls=calls)
        start = nfa.new()
        final = nfa.build(node, start)
        if calls is not None:
            for name, rule in (rules or {}).items():
                s = calls.start[name] = nfa.new()
                calls.final[name] = nfa.build(rule, s)
                calls.returns.add(calls.final[name])
            for name, _ in calls.site.values():
                if name not in calls.start:
                    raise SchemaError(f"rule reference {name!r} has no rule")
        live = nfa.trim(final, calls)
    except NotRegular as exc:
        raise SchemaError(str(exc)) from None
    except SchemaTooComplex:
        raise
    except SpecTooComplex as exc:
        raise SchemaTooComplex(str(exc), budget=exc.budget, limit=exc.limit) from None
    except RecursionError:
        raise SchemaTooComplex("the schema is nested too deeply to compile", budget="recursion") from None
    if not live[start]:
        raise SchemaError("the schema admits no JSON document at all (its constraints contradict each other)")
    return nfa, start, final


def node_lazy_dfa(node: Node, limits: Limits | None = None, deadline: Deadline | None = None) -> LazyByteDFA:
    """A tree's byte DFA, determinized on demand (`LazyByteDFA`), under one budget: ``deadline``
    (default: ``limits.max_seconds`` from now) and ``limits.max_memory`` for everything it builds.
    Raises `SchemaError` when the language is empty and `SchemaTooComplex` over a budget.

    >>> from fsm.automata import alt, lit
    >>> node_lazy_dfa(alt(lit("yes"), lit("no"))).as_byte_dfa().accepts(b"no")
    True
    """
    limits = limits or DEFAULT_LIMITS
    budget = Budget(limits, deadline)
    nfa, start, final = trimmed_nfa(node, limits, budget=budget)
    return LazyByteDFA(nfa.trans, nfa.eps, start, final, limits, nfa.counters, budget=budget)


def node_to_dfa(node: Node, limits: Limits | None = None, deadline: Deadline | None = None) -> ByteDFA:
    """Compile a tree to a byte DFA whose every state can still reach acceptance (fully expanded):
    `node_lazy_dfa` made whole.

    >>> from fsm.automata import alt, lit
    >>> node_to_dfa(alt(lit("yes"), lit("no"))).accepts(b"no")
    True
    """
    return materialized(node_lazy_dfa(node, limits, deadline))


def materialized(lazy: LazyByteDFA) -> ByteDFA:
    """``lazy`` with every state expanded (`LazyByteDFA.materialize`), a budget overrun as `SchemaTooComplex`."""
    try:
        return lazy.materialize()
    except SchemaTooComplex:
        raise
    except SpecTooComplex as exc:
        raise SchemaTooComplex(str(exc), budget=exc.budget, limit=exc.limit) from None


# ---------------------------------------------------------------------------------------------
# Character DFA -> plain tree (state elimination), for regex text of small automata.
