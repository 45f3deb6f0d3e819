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
