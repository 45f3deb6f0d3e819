"""The time, size and memory budget of one automaton construction (a `Limits` with its running deadline)."""

from __future__ import annotations

from ..limits import Deadline, Limits

# Approximate bytes per piece of an automaton under construction (CPython objects: a list or a
# frozenset slot with its hash entry, an edge tuple); generous, so the count errs on the safe side.
NFA_STATE_BYTES = 192
SET_MEMBER_BYTES = 48
EDGE_BYTES = 80


class Budget:
    """The limits of one construction, its deadline and the bytes it holds, shared by every
    automaton built for it.

    >>> from fsm.limits import DEFAULT_LIMITS
    >>> b = Budget(DEFAULT_LIMITS)
    >>> b.tick(10, "an automaton"); b.charge(1000, "an automaton"); b.nbytes
    1000
    """

    def __init__(self, limits: Limits, deadline: Deadline | None = None):
        self.limits = limits
        self.deadline = deadline or limits.deadline()
        self.ticks = 0
        self.nbytes = 0

    def tick(self, n_states: int, what: str) -> None:
        """Count one step of work: check the deadline every 16 steps and ``n_states`` against the limit."""
        self.ticks += 1
        if self.ticks & 15 == 0:
            self.deadline.check(what)
        if n_states > self.limits.max_states:
            self.limits.check_states(n_states, what)

    def charge(self, nbytes: int, what: str) -> None:
        """Count ``nbytes`` more held by the automata of this construction (``max_memory``)."""
        self.nbytes += nbytes
        if self.nbytes > self.limits.max_memory:
            self.limits.check_memory(self.nbytes, what)
