"""Live states and trimming (`fsm.automata.liveness`) against a fixpoint over random NFAs."""

from __future__ import annotations

import random

from fsm.automata.liveness import live_states, trim_nfa


def _random_nfa(rng: random.Random, n: int):
    trans = [
        [(97, 97 + rng.randrange(3), rng.randrange(n)) for _ in range(rng.randrange(3))] for _ in range(n)
    ]
    # negative targets are virtual states (blocks): never followed, never dropped
    eps = [[rng.choice([rng.randrange(n), -1]) for _ in range(rng.randrange(2))] for _ in range(n)]
    entries = [(rng.randrange(n), rng.randrange(n)) for _ in range(rng.randrange(2))]
    return trans, eps, entries


def _fixpoint(trans, eps, final, entries) -> list[bool]:
    live = [q == final for q in range(len(trans))]
    changed = True
    while changed:
        changed = False
        for q in range(len(trans)):
            succ = [t for *_, t in trans[q]] + [t for t in eps[q] if t >= 0]
            succ += [x for e, x in entries if e == q]
            if not live[q] and any(live[t] for t in succ):
                live[q] = changed = True
    return live


def test_trim_keeps_exactly_the_edges_between_live_states():
    rng = random.Random(7)
    for _ in range(300):
        n = rng.randrange(1, 12)
        trans, eps, entries = _random_nfa(rng, n)
        final = rng.randrange(n)
        expected = _fixpoint(trans, eps, final, entries)
        assert live_states(trans, eps, final, entries) == expected
        before = [list(r) for r in trans], [list(r) for r in eps]
        assert trim_nfa(trans, eps, final, entries) == expected
        for q in range(n):
            assert isinstance(trans[q], tuple) and isinstance(eps[q], tuple)
            if expected[q]:  # a live state keeps its edges into live (and virtual) states only
                assert list(trans[q]) == [e for e in before[0][q] if expected[e[2]]]
                assert list(eps[q]) == [t for t in before[1][q] if t < 0 or expected[t]]
            else:  # a dead one is never reached again: its edges are left as they were
                assert list(trans[q]) == before[0][q] and list(eps[q]) == before[1][q]
