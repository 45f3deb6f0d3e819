"""Subsets without the states a counted repeat's copies repeat: a position in a later optional copy
of ``x{lo,hi}`` has only words its counterpart in an earlier copy has (one iteration fewer may
follow), and a position in a loop's copy (``x+``) the same words as in the last required copy.

Subset construction otherwise keeps every set of positions the copies can be in together:
``(.{1,63}\\.)+`` (a dot ends a label or stays in it) makes a subset of each set of label lengths
still open, 2^63 of them; without the repeated states a subset holds the shortest one, and the
DFA tracks one length. The cost avoided is those subsets. The copies are recorded by the NFA
(`nfa.NFA.copies`, plain NFAs only: no encoding, counter blocks or rule calls), where each copy
of an item is built alike, so counterparts are a fixed offset apart.

>>> from fsm.automata import cls, lit, node_to_char_dfa, rep, seq
>>> label = seq(rep(cls((0, 0x10FFFF)), 1, 63), lit("."))  # any character, the dot too
>>> len(node_to_char_dfa(seq(rep(label, 1, None), lit("x"))))
129
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import pairwise


def copy_reducer(nfa) -> Callable[[frozenset], frozenset] | None:
    """A function taking an (epsilon-closed) subset of ``nfa``'s states to a smaller one with the
    same words: loop copies' states read as the required copy's, then every state dropped whose
    counterpart in an earlier copy is there; None when ``nfa`` records no copies."""
    same: dict[int, int] = {}
    dom: dict[int, int] = {}
    for copies, loop in getattr(nfa, "copies", ()):
        for (a0, b0, e0), (a1, b1, e1) in pairwise(copies):
            # after one more copy: as many iterations or fewer — unless the copy's end is inside its
            # item (``(a b*){0,3}`` ends in b*'s loop, which the start before the copies cannot read)
            if b0 - a0 == b1 - a1 or not _inside(nfa, e1, a1, b1):
                (same if loop else dom).setdefault(e1, e0)
            if b0 - a0 == b1 - a1:  # the same item built alike in both copies
                for q in range(a1, b1):
                    (same if loop else dom).setdefault(q, q - a1 + a0)
    if not same and not dom:
        return None

    def dominated(q: int, states: frozenset) -> bool:
        d = dom.get(q)
        while d is not None:
            if d in states:
                return True
            d = dom.get(d)
        return False

    def reduce(states: frozenset) -> frozenset:
        if same:
            states = frozenset(same.get(q, q) for q in states)
        return frozenset(q for q in states if not dominated(q, states)) if dom else states

    return reduce


def _inside(nfa, q: int, a: int, b: int) -> bool:
    """Whether state ``q`` has an edge or epsilon move to a state of ``a..b-1`` (its own copy)."""
    return any(a <= t < b for _, _, t in nfa.trans[q]) or any(a <= t < b for t in nfa.eps[q])
