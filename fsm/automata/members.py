"""The NFA of a `Members` node: items in order, each present ``lo..hi`` times, a separator between
the present ones, and bounds on how many are present (an object's properties).

States are keyed by (item, copies of it so far, items present so far, any present yet); each item
is built once per state it leads to, not once per state it is entered from (an object nested n
deep was built 2^n times). A state from which the counts cannot be met is a dead end: the NFA is
told (`maybe_dead`) so that its liveness pass runs.
"""

from __future__ import annotations

from .language import Members


def build_members(nfa, m: Members, s: int, enc: bool, full: bool) -> int:
    """Add ``m`` to ``nfa`` (an `nfa.NFA`: ``new``, ``build``, ``eps``) from state ``s``; its end.

    >>> from fsm.automata import lit, node_to_char_dfa
    >>> d = node_to_char_dfa(Members(((lit("a"), 0, 1), (lit("b"), 0, 1)), lit(","), 1, None))
    >>> [d.accepts(w) for w in ("a", "a,b", "b", "", "b,a")]
    [True, True, True, False, False]
    """
    items, n = m.items, len(m.items)
    sat = (m.max_count + 1) if m.max_count is not None else m.min_count
    end = nfa.new()
    states: dict[tuple, int] = {}
    todo: list[tuple] = []

    def state(key: tuple) -> int:
        q = states.get(key)
        if q is None:
            q = states[key] = nfa.new()
            todo.append(key)
        return q

    states[(0, 0, 0, False)] = s
    todo.append((0, 0, 0, False))
    joins: dict[tuple, tuple[int, int]] = {}
    while todo:
        key = todo.pop()
        i, k, c, started = key
        q = states[key]
        if i == n:
            if c >= m.min_count and (m.max_count is None or c <= m.max_count):
                nfa.eps[q].append(end)
            else:
                nfa.maybe_dead = True
            continue
        node, lo, hi = items[i]
        if k >= lo:
            nfa.eps[q].append(state((i + 1, 0, c, started)))
        c2 = min(c + 1, sat)
        if (hi is not None and k >= hi) or (m.max_count is not None and c2 > m.max_count):
            if k < lo:  # neither skipped nor taken
                nfa.maybe_dead = True
            continue
        k2 = min(k + 1, lo) if hi is None else k + 1
        # one copy of the item per state it leads to, entered with or without sep: keyed by
        # (i, k, c) it was built twice for every optional member (before and after the first
        # one), so an object nested n deep was built 2^n times
        jkey = (i, k2, c2)
        if jkey not in joins:
            j = nfa.new()
            after = nfa.build(node, j, enc, full)
            joins[jkey] = (j, after)
            nfa.eps[after].append(state((i, k2, c2, True)))
        j = joins[jkey][0]
        if started:
            nfa.eps[nfa.build(m.sep, q, enc, full)].append(j)
        else:
            nfa.eps[q].append(j)
    return end
