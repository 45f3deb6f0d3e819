"""The NFA of a `Members` node: items in order, each present ``lo..hi`` times, a separator between
the present ones, and bounds on how many are present (an object's properties).

States are keyed by (item, copies of it so far, items present so far, any present yet); each item
is built once per state it leads to, not once per state it is entered from (an object nested n
deep was built 2^n times). A state from which the counts cannot be met is never made (the counts
still possible from a key are an interval, known from the items left): no dead end is left behind,
so the NFA's liveness pass (a walk over every edge of the whole schema) need not run for an
object's ``minProperties`` or the at-least-one-member form of every object with optional members.
Only members whose counts cannot be met at all tell the NFA (`maybe_dead`).
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
    most, least = _counts_left(m)
    end = nfa.new()
    if not _meetable(m, most, least, 0, 0, 0):
        nfa.maybe_dead = True
        return end
    # with no upper bound, a key past ``min_count`` present can always be finished: checked only
    # below it (an object's members: one present)
    bounded = m.max_count is not None
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
        if i == n:  # made only when its counts are met (`_meetable`)
            nfa.eps[q].append(end)
            continue
        node, lo, hi = items[i]
        if k >= lo and (
            (not bounded and c + most[i + 1] >= m.min_count) or _meetable(m, most, least, i + 1, 0, c)
        ):
            nfa.eps[q].append(state((i + 1, 0, c, started)))
        c2 = min(c + 1, sat)
        if (hi is not None and k >= hi) or (m.max_count is not None and c2 > m.max_count):
            continue
        k2 = min(k + 1, lo) if hi is None else k + 1
        if (bounded or c2 < m.min_count) and not _meetable(m, most, least, i, k2, c2):
            continue
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


def _counts_left(m: Members) -> tuple[list[float], list[int]]:
    """Per item index ``i``: the most and the least copies the items from ``i`` on can add.

    >>> from fsm.automata import lit
    >>> _counts_left(Members(((lit("a"), 1, 2), (lit("b"), 0, None)), lit(",")))
    ([inf, inf, 0.0], [1, 0, 0])
    """
    most: list[float] = [0.0] * (len(m.items) + 1)
    least = [0] * (len(m.items) + 1)
    for i in range(len(m.items) - 1, -1, -1):
        _, lo, hi = m.items[i]
        most[i] = most[i + 1] + (float("inf") if hi is None else hi)
        least[i] = least[i + 1] + lo
    return most, least


def _meetable(m: Members, most: list[float], least: list[int], i: int, k: int, c: int) -> bool:
    """Whether some way on from key ``(i, k, c)`` (item ``i`` taken ``k`` times, ``c`` present)
    meets ``min_count`` and ``max_count``: the totals still possible are an interval."""
    if i == len(m.items):
        return c >= m.min_count and (m.max_count is None or c <= m.max_count)
    _, lo, hi = m.items[i]
    low = c + max(0, lo - k) + least[i + 1]
    high = c + (float("inf") if hi is None else hi - k) + most[i + 1]
    top = high if m.max_count is None else min(high, m.max_count)
    return max(low, m.min_count) <= top
