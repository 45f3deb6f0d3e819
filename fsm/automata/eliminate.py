"""Character DFA -> plain tree (state elimination), for the regex text of small automata."""

from __future__ import annotations

import time
from collections import defaultdict

from ..errors import SchemaTooComplex
from ..limits import DEFAULT_LIMITS
from .budget import Budget
from .char_dfa import CharDFA, trim_dfa
from .language import EMPTY, NEVER, Auto, Node, alt, cls, rep, seq
from .nfa import small_dfa

_ELIMINATION_STATES = 3000
_ELIMINATION_SECONDS = 5.0


def dfa_to_node(dfa: CharDFA) -> Node:
    """A plain tree for a (small) character DFA, by state elimination.

    Regex text is needed only for ``to_regex`` and grammar terminals; big intersections raise
    `SchemaTooComplex` instead of growing without bound.

    >>> from fsm.automata import to_regex
    >>> to_regex(dfa_to_node(CharDFA([[(97, 97, 1)], [(98, 98, 1)]], [False, True])))
    'ab*'
    """
    n = len(dfa)
    if n > _ELIMINATION_STATES:
        raise SchemaTooComplex(
            f"a string constraint's automaton has {n:,} states, too many to write as regex text "
            f"(limit {_ELIMINATION_STATES:,}); the regular path (no grammar) handles it",
            budget="max_states",
            limit=_ELIMINATION_STATES,
        )
    stop = time.monotonic() + _ELIMINATION_SECONDS
    start, final = n, n + 1
    out: dict[int, dict[int, Node]] = {q: {} for q in range(n + 2)}
    inc: dict[int, set[int]] = {q: set() for q in range(n + 2)}

    def add(p: int, q: int, node: Node) -> None:
        out[p][q] = alt(out[p][q], node) if q in out[p] else node
        inc[q].add(p)

    add(start, 0, EMPTY)
    for q, edges in enumerate(dfa.edges):
        by_t: dict[int, list] = defaultdict(list)
        for lo, hi, t in edges:
            by_t[t].append((lo, hi))
        for t, rs in by_t.items():
            add(q, t, cls(*rs))
        if dfa.accepting[q]:
            add(q, final, EMPTY)
    remaining = set(range(n))
    while remaining:
        if time.monotonic() > stop:
            raise SchemaTooComplex(
                "writing a string constraint's automaton as regex text took too long "
                f"(over {_ELIMINATION_SECONDS:g} s)",
                budget="max_seconds",
                limit=_ELIMINATION_SECONDS,
            )
        k = min(remaining, key=lambda q: len(inc[q] - {q}) * len(set(out[q]) - {q}))
        remaining.discard(k)
        loop = out[k].pop(k, None)
        inc[k].discard(k)
        star = rep(loop, 0, None) if loop is not None else EMPTY
        for p in list(inc[k]):
            if p == k or k not in out[p]:
                continue
            pk = out[p].pop(k)
            for q, kq in out[k].items():
                add(p, q, seq(pk, star, kq))
        for q in out[k]:
            inc[q].discard(k)
        out[k] = {}
        inc[k] = set()
    return out[start].get(final, NEVER)


def as_plain(node: Node) -> Node:
    """``And``/``Minus``/``Auto`` rewritten as a plain tree (regex text needs it).

    >>> from fsm.automata import And, cls, lit, rep, to_regex
    >>> to_regex(as_plain(And((rep(cls((97, 98)), 0, None), lit("ab")))))
    'ab'
    """
    budget = Budget(DEFAULT_LIMITS)
    d = (
        small_dfa(node, budget)
        if not isinstance(node, Auto)
        else trim_dfa(CharDFA([list(r) for r in node.edges], list(node.accepting)))
    )
    if d is None or not any(d.accepting):
        return NEVER
    return dfa_to_node(d)
