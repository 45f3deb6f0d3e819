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
    # in sorted order a literal shares its longest prefix with the one before it: the trie grows
    # from the previous literal's path, no lookup per character, its states made at once
    texts.sort()
    trans, eps = b.trans, b.eps
    n0 = len(trans)
    rows: list[list[tuple[int, int, int]]] = []  # the new states' edges: state n0 + i
    ends: list[bool] = []
    path, prev, s_ends = [s], "", False
    for text in texts:
        k, m = 0, min(len(text), len(prev))
        while k < m and text[k] == prev[k]:
            k += 1
        del path[k + 1 :]
        q = path[k]
        for ch in text[k:]:
            c, nxt = ord(ch), n0 + len(rows)
            (trans[q] if q < n0 else rows[q - n0]).append((c, c, nxt))
            rows.append([])
            ends.append(False)
            path.append(nxt)
            q = nxt
        if q < n0:
            s_ends = True  # the empty literal
        else:
            ends[q - n0] = True
        prev = text
    # the trie's states are finished: tuples, as a literal chain's (a list is the garbage
    # collector's work per state for the NFA's life); ``s`` is the caller's, left a list
    trans.extend([tuple(r) for r in rows])
    eps.extend([(e,) if end else () for end in ends])
    if s_ends:
        eps[s].append(e)
    b.made(len(trans))
    return rest
