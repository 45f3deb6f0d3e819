"""The time and size budget of one automaton construction (a `Limits` with its running deadline)."""

from __future__ import annotations

from ..limits import Limits


class Budget:
    """The limits of one construction and its deadline, shared by every automaton built for it.

    >>> from fsm.limits import DEFAULT_LIMITS
    >>> Budget(DEFAULT_LIMITS).tick(10, "an automaton")
    """

    def __init__(self, limits: Limits):
        self.limits = limits
        self.deadline = limits.deadline()
        self.ticks = 0

    def tick(self, n_states: int, what: str) -> None:
        """Count one step of work: check the deadline every 16 steps and ``n_states`` against the limit."""
        self.ticks += 1
        if self.ticks & 15 == 0:
            self.deadline.check(what)
        if n_states > self.limits.max_states:
            self.limits.check_states(n_states, what)
