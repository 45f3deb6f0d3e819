"""Which NFA states can still reach acceptance, for plain NFAs and for rules called through a stack.

Trimming to these states is what lets every lazily determinized state promise a way to finish.
"""

from __future__ import annotations

from ..limits import Deadline


def live_states(
    trans, eps, final: int, entries=(), calls=None, deadline: Deadline | None = None
) -> list[bool]:
    """Which states of an NFA (``trans``: range edges, ``eps``: epsilon edges, negative targets
    virtual) can reach ``final``; ``entries`` pairs a block's entry with its exit (a block can
    always finish).

    With ``calls`` (see `pushdown.Calls`), a state is live when it reaches the end of its own
    rule, a call site when its return state is live and the rule it calls can finish. ``deadline``:
    the construction's, checked as it goes (an NFA can have a million states).

    >>> live_states([[(97, 97, 1)], [], []], [[], [], []], 1)
    [True, True, False]
    """
    return _live(_reverse(trans, eps, entries, deadline), final, calls, deadline)


def _live(rev: list[list[int]], final: int, calls, deadline: Deadline | None) -> list[bool]:
    """`live_states` over the predecessor lists ``rev``."""
    live = [False] * len(rev)
    seeds = [final] + (list(calls.final.values()) if calls is not None else [])
    stack = []
    for q in seeds:
        if not live[q]:
            live[q] = True
            stack.append(q)
    if calls is None:
        return _search(rev, live, stack, deadline)
    site_of_ret = {r: (c, name) for c, (name, r) in calls.site.items()}
    rule_of_start: dict[int, list[str]] = {}
    for name, st in calls.start.items():
        rule_of_start.setdefault(st, []).append(name)
    sites_of: dict[str, list[tuple[int, int]]] = {}
    for c, (name, r) in calls.site.items():
        sites_of.setdefault(name, []).append((c, r))
    finishes: set[str] = set()
    done = 0
    while stack:
        t = stack.pop()
        done += 1
        if deadline is not None and done & 4095 == 0:
            deadline.check("the automaton's live states")
        for q in rev[t]:
            if not live[q]:
                live[q] = True
                stack.append(q)
        hit = site_of_ret.get(t)
        if hit is not None and hit[1] in finishes and not live[hit[0]]:
            live[hit[0]] = True
            stack.append(hit[0])
        for name in rule_of_start.get(t, ()):
            if name not in finishes:
                finishes.add(name)
                for c, r in sites_of.get(name, ()):
                    if live[r] and not live[c]:
                        live[c] = True
                        stack.append(c)
    return live


def _search(
    rev: list[list[int]], live: list[bool], stack: list[int], deadline: Deadline | None
) -> list[bool]:
    """Mark every predecessor (through ``rev``) of the states on ``stack``: the plain NFA's search,
    kept free of the rule bookkeeping (it runs once per compile, over every edge)."""
    pop, push = stack.pop, stack.append
    done = 0
    while stack:
        for q in rev[pop()]:
            if not live[q]:
                live[q] = True
                push(q)
        done += 1
        if done & 4095 == 0 and deadline is not None:
            deadline.check("the automaton's live states")
    return live


def _reverse(trans, eps, entries, deadline: Deadline | None = None) -> list[list[int]]:
    """The predecessors of every real state (virtual targets are skipped; a block's exit has its entry)."""
    n = len(trans)
    rev: list[list[int]] = [[] for _ in range(n)]
    for lo in range(0, n, 8192):  # the deadline per chunk: a check per state cost a tenth of the pass
        if deadline is not None and lo:
            deadline.check("the automaton's live states")
        for q in range(lo, min(n, lo + 8192)):
            for e in trans[q]:
                rev[e[2]].append(q)
            for t in eps[q]:
                if t >= 0:
                    rev[t].append(q)
    # every state of a counter block can finish it: its entry is live when its exit is
    for entry, exit_ in entries:
        rev[exit_].append(entry)
    return rev


def trim_nfa(trans, eps, final: int, entries=(), calls=None, deadline: Deadline | None = None) -> list[bool]:
    """`live_states`, then every edge into a dead state dropped, in place (the NFA's lists become
    tuples); returns the live flags.

    With ``calls`` (see `pushdown.Calls`), a state is live when it reaches the end of its
    own rule, a call site when its return state is live and the rule it calls can finish.

    >>> trans, eps = [[(97, 97, 1), (98, 98, 2)], [], []], [[], [], []]
    >>> trim_nfa(trans, eps, 1), trans[0]
    ([True, True, False], ((97, 97, 1),))
    """
    rev = _reverse(trans, eps, entries, deadline)
    live = _live(rev, final, calls, deadline)
    # Edges become tuples (an empty one shared), which the garbage collector stops tracking:
    # two lists per NFA state made every full collection of a server walk ~300k of them.
    trans[:] = map(tuple, trans)
    eps[:] = map(tuple, eps)
    if deadline is not None:
        deadline.check("trimming the automaton")
    if all(live):
        return live
    # only a dead state's live predecessors have edges to drop (a few dozen states in thousands)
    for d, ok in enumerate(live):
        if ok:
            continue
        for q in rev[d]:
            if live[q]:
                trans[q] = tuple(e for e in trans[q] if live[e[2]])
                eps[q] = tuple(t for t in eps[q] if t < 0 or live[t])
    return live
