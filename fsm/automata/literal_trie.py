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

from dataclasses import dataclass
from functools import lru_cache

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
    texts.sort()
    key = tuple(texts)
    t = _template(key) if sum(map(len, texts)) <= _KEPT_CHARS else _trie_of(key)
    trans, eps = b.trans, b.eps
    n0 = len(trans)
    trans[s].extend([(c, c, n0 + r) for c, r in t.first])
    # the trie's states are finished: tuples, as a literal chain's (a list is the garbage
    # collector's work per state for the NFA's life); ``s`` is the caller's, left a list
    # (most states of a trie have one edge: kept as the pair itself, no inner loop; a leaf has none)
    trans.extend(
        [
            ((x[0], x[0], n0 + x[1]),)
            if x and x[0].__class__ is int
            else (tuple([(c, c, n0 + r) for c, r in x]) if x else x)
            for x in t.rows
        ]
    )
    new_eps: list[tuple[int, ...]] = [()] * len(t.rows)
    for i in t.ends:
        new_eps[i] = (e,)
    eps.extend(new_eps)
    if t.empty:
        eps[s].append(e)
    b.made(len(trans))
    return rest


@dataclass(frozen=True)
class _Trie:
    """A trie of literals, its states numbered from 0 (the root apart): the edges out of the root
    and each state's, as (character, state), and the states where a literal ends."""

    first: tuple[tuple[int, int], ...]
    rows: tuple  # per state: its one edge's pair, or a tuple of pairs (none: empty)
    ends: tuple[int, ...]
    empty: bool  # the empty literal is one (it ends at the root)


_KEPT_CHARS = 1 << 16  # a bigger enum's trie is made per use: kept, it would outweigh the NFA


@lru_cache(maxsize=64)
def _template(texts: tuple[str, ...]) -> _Trie:
    """`_trie_of`, made once for an enum a schema uses in many places (a ``$ref``'d definition's,
    Github_ultra o12343: 21 tries of 3 enums, 6.9 → 4.0 ms), each use its copy renumbered."""
    return _trie_of(texts)


def _trie_of(texts: tuple[str, ...]) -> _Trie:
    """The trie of ``texts`` (sorted)."""
    # in sorted order a literal shares its longest prefix with the one before it: the trie grows
    # from the previous literal's path, no lookup per character
    first: list[tuple[int, int]] = []
    rows: list[list[tuple[int, int]]] = []
    ends: list[int] = []
    path, prev, empty = [-1], "", False
    for text in texts:
        k, m = 0, min(len(text), len(prev))
        while k < m and text[k] == prev[k]:
            k += 1
        del path[k + 1 :]
        q = path[k]
        for ch in text[k:]:
            nxt = len(rows)
            (first if q < 0 else rows[q]).append((ord(ch), nxt))
            rows.append([])
            path.append(nxt)
            q = nxt
        if q < 0:
            empty = True
        else:
            ends.append(q)
        prev = text
    return _Trie(tuple(first), tuple(r[0] if len(r) == 1 else tuple(r) for r in rows), tuple(ends), empty)
