"""The time, size and memory budget of one automaton construction (a `Limits` with its running deadline)."""

from __future__ import annotations

from ..limits import Deadline, Limits

# Bytes per piece of an automaton under construction (CPython objects), calibrated against the
# RSS growth of a forked child building hostile automata until max_memory stops it (see
# docs/limits.md): an NFA state (two lists, an edge tuple; 640k states of a 50k-value enum grew
# RSS by 240 bytes each), a frozenset (its header: sys.getsizeof(frozenset()) is 216 bytes), one
# member of a set (a hash slot at most half full, so up to 4 slots of 16 bytes), an edge tuple with
# its list slot or a dict entry.
NFA_STATE_BYTES = 256
SET_BYTES = 216
SET_MEMBER_BYTES = 64
EDGE_BYTES = 96


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

    def under(self, limits: Limits) -> Budget:
        """The same construction under other ``limits`` (a phase with a smaller state cap): the
        same deadline, the bytes held so far carried over.

        >>> from fsm.limits import DEFAULT_LIMITS
        >>> b = Budget(DEFAULT_LIMITS); b.charge(10, "x")
        >>> b.under(DEFAULT_LIMITS.within(1)).nbytes
        10
        """
        other = Budget(limits, self.deadline)
        other.nbytes = self.nbytes
        return other

    def charge(self, nbytes: int, what: str) -> None:
        """Count ``nbytes`` more held by the automata of this construction (``max_memory``)."""
        self.nbytes += nbytes
        if self.nbytes > self.limits.max_memory:
            self.limits.check_memory(self.nbytes, what)
