"""Sets of Unicode code points as sorted, disjoint ``(lo, hi)`` ranges, and their algebra.

Character classes of every size (``[^"]`` is over a million code points) cost a few tuples here.

>>> intersect(normalize_ranges([(0x61, 0x7A)]), complement(((0x6D, 0x6D),)))
((97, 108), (110, 122))
"""

from __future__ import annotations

from collections.abc import Iterator

MAX_CODEPOINT = 0x10FFFF
SURROGATES = (0xD800, 0xDFFF)
MAX_BYTE_OR_POINT = MAX_CODEPOINT + 1  # past every range `overlay` cuts (code points or bytes)

Ranges = tuple[tuple[int, int], ...]


def normalize_ranges(ranges) -> Ranges:
    """Sorted, merged, surrogate-free ranges.

    >>> normalize_ranges([(5, 9), (0, 5), (0xD000, 0xE000)])
    ((0, 9), (53248, 55295), (57344, 57344))
    """
    rs = sorted((int(a), int(b)) for a, b in ranges if a <= b)
    out: list[tuple[int, int]] = []
    for a, b in rs:
        if out and a <= out[-1][1] + 1:
            if b > out[-1][1]:
                out[-1] = (out[-1][0], b)
        else:
            out.append((a, b))
    cut: list[tuple[int, int]] = []
    for a, b in out:
        if b < SURROGATES[0] or a > SURROGATES[1]:
            cut.append((a, b))
        else:
            if a < SURROGATES[0]:
                cut.append((a, SURROGATES[0] - 1))
            if b > SURROGATES[1]:
                cut.append((SURROGATES[1] + 1, b))
    return tuple(cut)


def complement(ranges: Ranges) -> Ranges:
    """The code points not in ``ranges`` (surrogates excluded).

    >>> complement(((0, 0x60), (0x62, 0x10FFFF)))
    ((97, 97),)
    """
    out, lo = [], 0
    for a, b in ranges:
        if a > lo:
            out.append((lo, a - 1))
        lo = b + 1
    if lo <= MAX_CODEPOINT:
        out.append((lo, MAX_CODEPOINT))
    return normalize_ranges(out)


def intersect(a: Ranges, b: Ranges) -> Ranges:
    """The code points in both ``a`` and ``b`` (both sorted and disjoint).

    >>> intersect(((0, 10),), ((5, 20),))
    ((5, 10),)
    """
    out, i, j = [], 0, 0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if lo <= hi:
            out.append((lo, hi))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return tuple(out)


def subtract(a: Ranges, b: Ranges) -> Ranges:
    """The code points in ``a`` but not in ``b``.

    >>> subtract(((0, 10),), ((5, 5),))
    ((0, 4), (6, 10))
    """
    return intersect(a, complement(b))


def size(ranges: Ranges) -> int:
    """How many code points ``ranges`` holds.

    >>> size(((0, 9), (20, 20)))
    11
    """
    return sum(b - a + 1 for a, b in ranges)


ANY_CHAR: Ranges = normalize_ranges([(0, MAX_CODEPOINT)])


def merge_adjacent(row: list[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
    """Sorted disjoint edges ``(lo, hi, target)`` with touching ranges to one target joined.

    >>> merge_adjacent([(48, 48, 1), (49, 57, 1), (58, 58, 2)])
    [(48, 57, 1), (58, 58, 2)]
    """
    out: list[tuple[int, int, int]] = []
    for lo, hi, t in row:
        if out and out[-1][2] == t and out[-1][1] + 1 == lo:
            out[-1] = (out[-1][0], hi, t)
        else:
            out.append((lo, hi, t))
    return out


def clipped_rows(rows, ranges: Ranges) -> list[list[tuple[int, int, int]]]:
    """Each row of ``(lo, hi, target)`` edges cut to ``ranges`` (edges outside them dropped). A
    format's DFA repeats a few ranges over thousands of edges: each distinct one is cut once.

    >>> clipped_rows([[(0, 9, 1)], [(5, 5, 0), (0, 9, 0)]], ((3, 5), (8, 20)))
    [[(3, 5, 1), (8, 9, 1)], [(5, 5, 0), (3, 5, 0), (8, 9, 0)]]
    """
    cut: dict[tuple[int, int], Ranges] = {}

    def clip(lo: int, hi: int) -> Ranges:
        r = cut.get((lo, hi))
        if r is None:
            r = cut[(lo, hi)] = intersect(((lo, hi),), ranges)
        return r

    return [[(a, b, t) for lo, hi, t in row for a, b in clip(lo, hi)] for row in rows]


def disjoint(edges: list[tuple[int, int, int]]) -> bool:
    """Whether sorted ``(lo, hi, target)`` edges cover no point twice (then `overlay` has nothing to cut).

    >>> disjoint([(0, 5, 1), (6, 9, 1)]), disjoint([(0, 5, 1), (5, 9, 2)])
    (True, False)
    """
    prev = -1
    for lo, hi, _ in edges:
        if lo <= prev:
            return False
        prev = hi
    return True


def grouped(edges: list[tuple[int, int, int]]) -> list[tuple[int, int, int | set[int]]] | None:
    """Sorted ``(lo, hi, target)`` edges whose ranges are equal or disjoint, one piece per range: its
    target, or its targets as a set when they differ; None when ranges overlap otherwise (`overlay`
    cuts those). The rows of a set of NFA states mostly repeat ranges (a lead byte range of every
    string state in it): one pass, where `overlay` sorts the bounds and sweeps them.

    >>> grouped([(0, 5, 1), (0, 5, 2), (6, 9, 1), (6, 9, 1)])
    [(0, 5, {1, 2}), (6, 9, 1)]
    >>> grouped([(0, 5, 1), (3, 9, 2)]) is None
    True
    """
    out: list[tuple[int, int, int | set[int]]] = []
    plo = phi = -1
    for lo, hi, t in edges:
        if lo > phi:
            out.append((lo, hi, t))
            plo, phi = lo, hi
        elif lo == plo and hi == phi:
            x = out[-1][2]
            if isinstance(x, set):
                x.add(t)
            elif x != t:
                out[-1] = (lo, hi, {x, t})
        else:
            return None
    return out


def overlay(edges: list[tuple[int, int, int]]) -> Iterator[tuple[int, int, frozenset[int]]]:
    """Cut overlapping ``(lo, hi, target)`` edges into disjoint ranges, each with the targets covering it.

    The step of every subset construction here (character DFAs and the lazy byte DFA): one sweep over
    the sorted range boundaries, so a state's row costs its edges, not the alphabet.

    >>> list(overlay([(0, 5, 1), (3, 9, 2)]))
    [(0, 2, frozenset({1})), (3, 5, frozenset({1, 2})), (6, 9, frozenset({2}))]
    """
    edges = sorted(edges)
    bounds = sorted({e[0] for e in edges} | {e[1] + 1 for e in edges})
    active: list[tuple[int, int]] = []  # (hi, target) of the edges begun so far
    first_end = MAX_BYTE_OR_POINT  # the least hi of those: none ends before it
    j, n = 0, len(edges)
    for b in range(len(bounds) - 1):
        x = bounds[b]
        if first_end < x:  # some edge ended: filtering the active ones at every bound was quadratic
            active = [a for a in active if a[0] >= x]
            first_end = min(a[0] for a in active) if active else MAX_BYTE_OR_POINT
        while j < n and edges[j][0] == x:
            hi = edges[j][1]
            active.append((hi, edges[j][2]))
            first_end = min(first_end, hi)
            j += 1
        if active:
            yield x, bounds[b + 1] - 1, frozenset(t for _, t in active)


def pieces(edges: list[tuple[int, int, int]]) -> list[tuple[int, int, int | set[int]]]:
    """``(lo, hi, target)`` edges, in any order, cut into sorted disjoint pieces, each with its
    target, or its targets as a set when several cover it: `overlay`'s cut, laid out in two parts.

    The rows of a lazy DFA's state sets are mostly a few wide ranges (a free string's, a key's
    complement) with single bytes over them (one per literal of the set: an object's 75 declared
    keys at one position). The wide ranges are cut alone (`grouped`, else `overlay`), and each
    single byte splits the piece it falls in: a sweep of every bound with a set per piece cost
    twice as much, and a piece of one target stays an int (no set to build, nor to look up).

    >>> pieces([(0, 9, 1), (3, 3, 2), (5, 5, 1), (12, 12, 4), (12, 12, 5)])
    [(0, 2, 1), (3, 3, {1, 2}), (4, 4, 1), (5, 5, 1), (6, 9, 1), (12, 12, {4, 5})]
    """
    wide: list = []
    points: dict[int, int | set[int]] = {}
    for e in edges:
        lo, hi, t = e
        if lo == hi:
            p = points.get(lo)
            if p is None:
                points[lo] = t
            elif p.__class__ is set:
                p.add(t)
            elif p != t:
                points[lo] = {p, t}
        else:
            wide.append(e)
    if len(wide) > 1:
        wide.sort()
        if not disjoint(wide):
            wide = grouped(wide) or [
                (x, y, set(ts) if len(ts) > 1 else next(iter(ts))) for x, y, ts in overlay(wide)
            ]
    if not points:
        return wide
    at = sorted(points)
    out: list = []
    j, n = 0, len(at)
    for lo, hi, t in wide:
        while j < n and at[j] < lo:
            p = at[j]
            out.append((p, p, points[p]))
            j += 1
        x = lo
        while j < n and at[j] <= hi:
            p = at[j]
            # cut even where the byte adds nothing: a lead byte's target is a placeholder
            # (`utf8_chains.LEAD`) that each piece's first byte makes into a state of its own
            if p > x:
                out.append((x, p - 1, t))
            out.append((p, p, _union(t, points[p])))
            x = p + 1
            j += 1
        if x <= hi:
            out.append((x, hi, t))
    out += [(p, p, points[p]) for p in at[j:]]
    return out


def _union(a: int | set[int], b: int | set[int]) -> int | set[int]:
    """The targets of two pieces over one byte, a new set (a wide piece's set is shared by its cuts)."""
    if a.__class__ is int:
        if b.__class__ is int:
            return a if a == b else {a, b}
        return b | {a}
    return a | {b} if b.__class__ is int else a | b
