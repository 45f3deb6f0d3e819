"""How many positions a decode step feeds when rows jump forward: the width that makes tokens cheapest.

Jump-forward gives a row its forced tokens without sampling, but the forward pass that feeds them
is one rectangle: every row is padded to the longest feed. On a CPU a pass costs about
``a + b * rows * width`` (SmolLM2-135M, one thread: a ≈ 45 ms, b ≈ 3.5 ms a position), so one row
that jumps 20 tokens in a batch of 8 makes that pass cost ten ordinary steps while it yields 28
tokens instead of 8 — slower than not jumping. Feeding the rectangle whose width maximizes
tokens per cost, and carrying each longer feed's rest into the next steps (those rows do not
sample until their feed is in), keeps every forced token and pays for padding only where it is
cheaper than another pass. On a GPU a pass costs nearly the same up to hundreds of positions, so
the fixed cost is large and every jump is fed whole.

The fixed cost is given in positions: ``a / b``, what one more pass costs measured in padded
positions of the batch.

A pass is paid once for the whole batch, and the batch runs until its slowest row is done, so a
wide feed saves a pass only when the row it hurries is the one the batch waits for.
`makespan_width` weighs that: the passes still needed are estimated per row as the passes its
feed takes at a width plus one per token left in its budget (each needs at most one pass), and
the width minimizing ``overhead * max over rows + rows * width`` is fed. A row that jumps 20 tokens
beside rows as far along as it is gains the batch nothing by being fed whole (its rest goes into
the passes the others need anyway); rows that all jump, or the row that is behind, are fed wide.

>>> feed_width([1] * 7 + [20], overhead=12)
1
>>> feed_width([5, 5, 5, 5], overhead=12)
5
"""

from __future__ import annotations

from collections.abc import Sequence

CPU_OVERHEAD = 12.0  # a / b measured above for the default model on one CPU thread
DEVICE_OVERHEAD = 512.0  # an accelerator's pass is flat in width far beyond any jump


def default_overhead(device: str) -> float:
    """The fixed cost of one forward pass, in padded positions of the batch, for a device type.

    >>> default_overhead("cpu")
    12.0
    """
    return CPU_OVERHEAD if device == "cpu" else DEVICE_OVERHEAD


def feed_width(lengths: Sequence[int], overhead: float) -> int:
    """The feed width in ``1..max(lengths)`` with the most tokens per cost ``overhead + rows * width``.

    Ties go to the wider feed (fewer passes in all).

    >>> feed_width([2, 2, 1], overhead=12)
    2
    """
    if not lengths:
        raise ValueError("feed_width needs at least one row")
    rows = len(lengths)
    best, best_rate = 1, -1.0
    for width in sorted(set(lengths)):
        tokens = sum(min(n, width) for n in lengths)
        rate = tokens / (overhead + rows * width)
        if rate >= best_rate:
            best, best_rate = width, rate
    return best


def makespan_width(lengths: Sequence[int], remaining: Sequence[int], overhead: float) -> int:
    """The feed width in ``1..max(lengths)`` with the least cost for the rest of the batch.

    ``remaining[r]``: tokens row ``r`` may still make after its feed (its budget left). The cost of a
    width is ``overhead * passes + rows * width`` with ``passes`` the most, over rows, of
    ``ceil(length / width) + remaining``. Ties go to the wider feed.

    >>> makespan_width([1] * 7 + [20], [40] * 7 + [21], overhead=12)  # its jump took it level
    1
    >>> makespan_width([1] * 7 + [20], [40] * 8, overhead=12)  # the batch would wait for its feed
    20
    """
    if not lengths or len(lengths) != len(remaining):
        raise ValueError("makespan_width needs one remaining count per row, and at least one row")
    rows = len(lengths)
    best, best_cost = 1, float("inf")
    for width in sorted(set(lengths)):
        passes = max(-(-n // width) + left for n, left in zip(lengths, remaining, strict=True))
        cost = overhead * passes + rows * width
        if cost <= best_cost:
            best, best_cost = width, cost
    return best


def step_width(lengths: Sequence[int], remaining: Sequence[int], overhead: float, makespan: bool) -> int:
    """The width of a pass: `makespan_width` when ``makespan``, else `feed_width` (``remaining`` unused).

    >>> step_width([1, 1, 6], [9, 9, 4], overhead=12, makespan=True)
    1
    """
    if makespan:
        return makespan_width(lengths, remaining, overhead)
    return feed_width(lengths, overhead)
