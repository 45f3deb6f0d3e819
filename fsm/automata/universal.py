"""States that accept every continuation, merged into one.

A pattern with search semantics (``"pattern": "[0-9a-f]{8}-..."``, no anchors) is ``.*P.*``; its
determinized product with a string's body keeps, after a match, one state per partial match still
being tracked (``.*`` then the longest suffix that starts P again): ~36 states for a uuid, each
accepting every text, each a distinct lazy-DFA state with a row of its own — a whole-vocabulary row
walked per state (~2-5 ms each on SmolLM2) where one string loop's row, shared by shape, would do.
Merging them is what minimization would do for that part, at a linear pass instead of Moore's
refinement (~4 ms for the uuid's 74 states in Python).
"""

from __future__ import annotations

from .char_dfa import CharDFA
from .ranges import ANY_CHAR, normalize_ranges


def merge_universal(dfa: CharDFA) -> CharDFA:
    """``dfa`` with its universal states (accepting, every character leading to a universal state)
    merged into one that loops on every character; ``dfa`` itself when it has fewer than two.

    >>> from fsm.automata import Cls, lit, node_to_char_dfa, rep, seq
    >>> any_text = rep(Cls(ANY_CHAR), 0, None)
    >>> d = node_to_char_dfa(seq(any_text, lit("ab"), any_text))  # contains "ab"
    >>> m = merge_universal(d)
    >>> len(d), len(m), [m.accepts(s) for s in ("xaby", "ab", "aab", "ba", "")]
    (6, 4, [True, True, True, False, False])
    """
    n = len(dfa)
    full = [bool(dfa.accepting[q]) and _covers(dfa.edges[q]) for q in range(n)]
    changed = True
    while changed:  # the greatest set closed under every edge: states leaving it drop out
        changed = False
        for q in range(n):
            if full[q] and not all(full[t] for _, _, t in dfa.edges[q]):
                full[q] = False
                changed = True
    # the start stays a state of its own (never re-entered: the DFA is spliced in at a state with
    # edges of its own), even when it is universal too
    merged = [q for q in range(1, n) if full[q]]
    if len(merged) < 2:
        return dfa
    keep = [q for q in range(n) if q == 0 or not full[q] or q == merged[0]]
    new = {q: i for i, q in enumerate(keep)}
    sink = new[merged[0]]
    edges = []
    for q in keep:
        if q == merged[0]:
            edges.append([(lo, hi, sink) for lo, hi in ANY_CHAR])
        else:
            edges.append([(lo, hi, sink if t and full[t] else new[t]) for lo, hi, t in dfa.edges[q]])
    return CharDFA(edges, [dfa.accepting[q] for q in keep])


def _covers(edges) -> bool:
    """Whether ``edges`` read every character."""
    return normalize_ranges([(lo, hi) for lo, hi, _ in edges]) == ANY_CHAR
