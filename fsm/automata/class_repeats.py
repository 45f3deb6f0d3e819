"""Counted copies of one character class in an NFA, made at once.

`NFA._rep` builds a bounded repeat copy by copy: a dispatch, a new state and an edge list per
copy. A repeat of a class that needs no JSON escapes (a number's digits: ``[0-9]{0,19}`` twice
per number) is a chain whose rows are known up front; made in one pass they cost a fraction of
that. The states, their numbering and their rows are the ones the copy-by-copy build makes.
"""

from __future__ import annotations

from .ranges import Ranges


def class_copies(nfa, ranges: Ranges, s: int, lo: int, hi: int, plain: bool) -> int:
    """Add to ``nfa`` (an `nfa.NFA`) ``lo..hi`` characters of ``ranges`` (none JSON escapes) from
    ``s``; the end state. ``plain``: record the optional copies (`NFA.copies`).

    >>> from types import SimpleNamespace
    >>> nfa = SimpleNamespace(trans=[[]], eps=[[]], made=lambda n: None, copies=[])
    >>> class_copies(nfa, ((48, 57),), 0, 1, 2, False), nfa.trans, nfa.eps
    (2, [[(48, 57, 1)], ((48, 57, 3),), [], ()], [[], (2,), [], (2,)])
    """
    trans, eps, k = nfa.trans, nfa.eps, hi - lo
    n0 = len(trans)
    end = n0 + lo  # required copies n0 .. end - 1, then the end, then the optional ones
    # counted before they are made: a budget (max_states, max_memory, the deadline) refuses a
    # ``maxLength: 10**9`` here, where copy by copy refused it after its first thousand states
    nfa.made(end + k + 1)
    # each row's edges made in one comprehension over the targets (a call per row was most of it);
    # every row but the end's is finished: tuples, which the garbage collector stops tracking
    if len(ranges) == 1:
        ((a, b),) = ranges
        rows: list = [((a, b, t),) for t in range(n0 + 1, end)]
        optional = [((a, b, t),) for t in range(end + 2, end + k + 1)]
        first = [(a, b, n0)] if lo else [(a, b, end + 1)] if k else []
        last_required = ((a, b, end + 1),) if k else ()
    else:
        rows = [tuple([(a, b, t) for a, b in ranges]) for t in range(n0 + 1, end)]
        optional = [tuple([(a, b, t) for a, b in ranges]) for t in range(end + 2, end + k + 1)]
        first = [(a, b, n0 if lo else end + 1) for a, b in ranges] if lo or k else []
        last_required = tuple((a, b, end + 1) for a, b in ranges) if k else ()
    erows: list = [()] * (lo - 1) if lo > 1 else []
    if lo:
        rows.append(last_required)
        erows.append((end,))
    else:
        eps[s].append(end)
    trans[s].extend(first)
    rows.append([])  # the end: what follows adds to it
    erows.append([])
    rows.extend(optional)
    if k:
        rows.append(())
    erows.extend([(end,)] * k)
    trans.extend(rows)
    eps.extend(erows)
    if plain and k > 1:
        last = (end - 1, end, end - 1) if lo else (s, s, s)
        nfa.copies.append(([last, *((end + j, end + j + 1, end + j) for j in range(1, k + 1))], False))
    return end
