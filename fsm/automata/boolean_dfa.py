"""Boolean combinations of character DFAs (and, or, not, exactly one), each result minimized.

A nested ``allOf``/``anyOf``/``oneOf``/``not`` of string patterns is one regular language; written
out as a union of conjunctions (one branch per choice in every ``anyOf``) it has a product of
branch counts terms, each determinized on its own (9^3 for three negated ``allOf``s of three
``anyOf``s of three), and a complement of a union determinizes the union first. Combining the
DFAs bottom-up instead, every intermediate minimized, keeps each step as small as the language it
stands for: the cost avoided is the exponential branch expansion and the unminimized products.

>>> from fsm.automata import lit, node_to_char_dfa, rep, cls
>>> from fsm.automata.budget import Budget
>>> from fsm.limits import DEFAULT_LIMITS
>>> b = Budget(DEFAULT_LIMITS)
>>> a, z = node_to_char_dfa(rep(cls((97, 97)), 1, None)), node_to_char_dfa(lit("b"))
>>> d = dfa_or(a, z, b)
>>> [d.accepts(s) for s in ("aa", "b", "ab", "")]
[True, True, False, False]
>>> n = dfa_not(d, b)
>>> [n.accepts(s) for s in ("aa", "b", "ab", "")]
[False, False, True, True]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .budget import EDGE_BYTES, Budget
from .char_dfa import EMPTY_DFA, CharDFA, Edge, minimize_dfa, pair_row, trim_dfa
from .ranges import ANY_CHAR, normalize_ranges, subtract

_DEAD = -1  # a missing edge: the state that rejects every continuation


def _complete(row: list[Edge]) -> list[Edge]:
    """``row`` with its gaps (within `ANY_CHAR`) sent to the dead state, sorted."""
    covered = normalize_ranges([(lo, hi) for lo, hi, _ in row])
    gaps = subtract(ANY_CHAR, covered) if covered else list(ANY_CHAR)
    return sorted([*row, *((lo, hi, _DEAD) for lo, hi in gaps)])


def combine(a: CharDFA, b: CharDFA, op: Callable[[bool, bool], bool], budget: Budget) -> CharDFA:
    """The minimal DFA of the strings whose acceptance by ``a`` and ``b`` satisfies ``op``
    (reachable pairs, a missing edge read as a dead state; `EMPTY_DFA` for no string).

    >>> from fsm.automata import lit, node_to_char_dfa
    >>> from fsm.limits import DEFAULT_LIMITS
    >>> x, y = node_to_char_dfa(lit("a")), node_to_char_dfa(lit("b"))
    >>> d = combine(x, y, lambda p, q: p != q, Budget(DEFAULT_LIMITS))
    >>> d.accepts("a"), d.accepts("b"), d.accepts("ab")
    (True, True, False)
    """
    dead_row = [(lo, hi, _DEAD) for lo, hi in ANY_CHAR]
    rows_a: dict[int, list[Edge]] = {}
    rows_b: dict[int, list[Edge]] = {}

    def row_of(d: CharDFA, rows: dict[int, list[Edge]], q: int) -> list[Edge]:
        if q == _DEAD:
            return dead_row
        r = rows.get(q)
        if r is None:
            r = rows[q] = _complete(d.edges[q])
        return r

    ids = {(0, 0): 0}
    pairs = [(0, 0)]
    edges: list[list[Edge]] = []
    acc: list[bool] = []
    i = 0
    while i < len(pairs):
        p, q = pairs[i]
        i += 1
        acc.append(op(p != _DEAD and a.accepting[p], q != _DEAD and b.accepting[q]))
        # both rows cover ANY_CHAR: their common refinement is the pair's whole row
        row = pair_row(row_of(a, rows_a, p), row_of(b, rows_b, q), ids, pairs, merge=True)
        edges.append(row)
        budget.tick(len(pairs), "a boolean combination of string constraints")
        budget.charge((len(row) + 2) * EDGE_BYTES, "a boolean combination of string constraints")
    trimmed = trim_dfa(CharDFA(edges, acc), budget)
    return EMPTY_DFA if trimmed is None else minimize_dfa(trimmed)


def dfa_and(a: CharDFA, b: CharDFA, budget: Budget) -> CharDFA:
    """The strings both accept (minimized)."""
    return combine(a, b, lambda p, q: p and q, budget)


def dfa_or(a: CharDFA, b: CharDFA, budget: Budget) -> CharDFA:
    """The strings either accepts (minimized)."""
    return combine(a, b, lambda p, q: p or q, budget)


def dfa_not(a: CharDFA, budget: Budget) -> CharDFA:
    """The strings ``a`` rejects (minimized)."""
    return combine(a, EMPTY_DFA, lambda p, _: not p, budget)


def exactly_one(sure: Sequence[CharDFA], maybe: Sequence[CharDFA], budget: Budget) -> CharDFA:
    """The strings that ``sure[i]`` accepts for exactly one ``i`` while no ``maybe[j]`` (``j != i``)
    does: ``oneOf`` where each branch has a language it surely matches (``sure``) inside one it may
    match (``maybe``, the same DFA when the branch is exact). One pass keeps two running languages
    (no branch so far may match; exactly one surely matched) instead of a term per branch.

    >>> from fsm.automata import lit, node_to_char_dfa, rep, cls
    >>> from fsm.limits import DEFAULT_LIMITS
    >>> ds = [node_to_char_dfa(rep(cls((97, 98)), 1, 1)), node_to_char_dfa(rep(cls((98, 99)), 1, 1))]
    >>> d = exactly_one(ds, ds, Budget(DEFAULT_LIMITS))
    >>> [d.accepts(s) for s in "abc"]
    [True, False, True]
    """
    none = dfa_not(EMPTY_DFA, budget)  # every string: no branch yet
    one = EMPTY_DFA
    for s, m in zip(sure, maybe, strict=True):
        one = dfa_or(dfa_and(one, dfa_not(m, budget), budget), dfa_and(none, s, budget), budget)
        none = dfa_and(none, dfa_not(m, budget), budget)
    return one
