"""An alternation of literals (an ``enum``, a ``Choice``) built as a trie of NFA states.

Built as one chain per literal, ``enum: ["alpha", "alps", "beta", ...]`` starts every chain at the
same state: each DFA state the lazy automaton makes on the way is a *set* of chain states (one per
literal with that prefix), and a set's expansion gathers, cuts and unions its members' edges, where
a single state's reads one edge list (~40-60 µs a set against ~18 µs a state, measured over the
42-schema JSONSchemaBench set). As a trie, the literals share their prefixes: every state is one
NFA state, and the automaton is smaller by the shared prefixes (Github_ultra o12343, enums of ~40
values: 27,212 NFA states → 20,318; its request 119 → 108 ms).

>>> from fsm.automata import alt, lit, node_to_dfa
>>> d = node_to_dfa(alt(*(lit(w) for w in ["alpha", "alps", "al", "beta", "alps"])))
>>> [d.accepts(w.encode()) for w in ("al", "alp", "alps", "alpha", "beta", "bet")]
[True, False, True, True, True, False]
"""

from __future__ import annotations

from .escapes import MUST_ESCAPE_IN
from .language import Lit, Node

TRIE_MIN = 4  # literals in an alternation before they are built as a trie (fewer: chains)


def literal_trie(b, items: tuple[Node, ...], s: int, e: int, enc: bool) -> list[Node]:
    """Build the literals among ``items`` from ``s`` to ``e`` as a trie in ``b`` (an `nfa.NFA`:
    ``new``, ``trans``, ``eps``; under ``enc``, the literals no character of which JSON escapes);
    return the items left to build (all of them when fewer than `TRIE_MIN` literals)."""
    texts, rest = [], []
    for it in items:
        if it.__class__ is Lit and not (enc and MUST_ESCAPE_IN.search(it.text)):
            texts.append(it.text)
        else:
            rest.append(it)
    if len(texts) < TRIE_MIN:
        return list(items)
    trans, eps = b.trans, b.eps
    kids: dict[tuple[int, int], int] = {}
    made: list[int] = []
    ends: set[int] = set()
    for text in texts:
        q = s
        for ch in text:
            c = ord(ch)
            nxt = kids.get((q, c))
            if nxt is None:
                nxt = kids[q, c] = b.new()
                made.append(nxt)
                trans[q].append((c, c, nxt))
            q = nxt
        ends.add(q)
    for q in ends:
        eps[q].append(e)
    # the trie's states are finished: tuples, as a literal chain's (a list is the garbage
    # collector's work per state for the NFA's life); ``s`` is the caller's, left a list
    for q in made:
        trans[q] = tuple(trans[q])
        eps[q] = tuple(eps[q])
    return rest
