"""Budgets that bound compile time, automaton size and index memory.

Every compile path takes a `Limits`; exceeding one raises `SpecTooComplex` naming the budget, so a
hostile spec hits a clear error instead of the OOM killer or an endless wait.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

from .errors import SpecTooComplex


@dataclass(frozen=True)
class Limits:
    """Compile budgets. ``Limits(max_seconds=2).deadline().check("regex")`` raises after 2 s.

    >>> Limits().max_states
    1000000
    """

    max_states: int = 1_000_000
    max_seconds: float = 10.0
    max_index_bytes: int = 1 << 30
    # Positions of a regex once counted repeats are expanded; the character automaton is built by
    # interegular, which cannot be interrupted, so its input is bounded before it starts.
    max_regex_positions: int = 50_000
    # Bytes the automata of one compile may hold, counted from the sizes of the states, edges,
    # subsets and table rows as they are made (NFA, subset construction, lazy DFA expansions on
    # first visits included); token rows and masks are bounded by max_index_bytes.
    max_memory: int = 512 << 20

    def within(self, seconds: float) -> Limits:
        """The same budgets with ``seconds`` left (for a later phase of one compile).

        >>> Limits().within(2.5).max_seconds
        2.5
        """
        return replace(self, max_seconds=max(0.05, seconds))

    def deadline(self) -> Deadline:
        """A running clock of ``max_seconds`` (one per compile, or per row computed on first visit).

        >>> Limits(max_seconds=3).deadline().remaining() > 2.9
        True
        """
        return Deadline(time.monotonic() + self.max_seconds, self.max_seconds)

    def check_states(self, n: int, what: str) -> None:
        """Raise `SpecTooComplex` when an automaton for ``what`` has more than ``max_states`` states."""
        if n > self.max_states:
            raise SpecTooComplex(
                f"{what}: automaton has {n:,} states, over the budget max_states={self.max_states:,}; "
                "simplify the spec (fewer counted repeats or alternatives) or raise Limits.max_states",
                budget="max_states",
                limit=self.max_states,
            )

    def check_memory(self, nbytes: int, what: str) -> None:
        """Raise `SpecTooComplex` when the automata built for ``what`` hold more than ``max_memory`` bytes.

        >>> Limits(max_memory=100).check_memory(50, "regex 'a'")
        """
        if nbytes > self.max_memory:
            raise SpecTooComplex(
                f"{what}: its automata grew past {nbytes:,} bytes, over the budget "
                f"max_memory={self.max_memory:,}; simplify the spec (nested counted repeats multiply) "
                "or raise Limits.max_memory",
                budget="max_memory",
                limit=self.max_memory,
            )


@dataclass
class Deadline:
    """A point in time after which compiling gives up with `SpecTooComplex`."""

    at: float
    seconds: float

    def check(self, what: str) -> None:
        if time.monotonic() > self.at:
            raise SpecTooComplex(
                f"{what}: compiling took longer than the budget max_seconds={self.seconds:g}; "
                "simplify the spec or raise Limits.max_seconds",
                budget="max_seconds",
                limit=self.seconds,
            )

    def remaining(self) -> float:
        return self.at - time.monotonic()


class DeadlineScope:
    """Mixin of an automaton expanded on demand: `within` puts the expansions of a block under a
    given deadline (a compile's, or a row walk's) and gives the automaton its own back after, even
    when the block raises. Subclasses define ``use_deadline``."""

    def use_deadline(self, deadline: Deadline | None) -> None:
        raise NotImplementedError

    def within(self, deadline: Deadline | None) -> _Within:
        """Check the expansions made inside the block against ``deadline``.

        >>> from fsm.automata import LazyByteDFA, lit, node_nfa
        >>> lazy = LazyByteDFA(*node_nfa(lit("ab")))
        >>> with lazy.within(DEFAULT_LIMITS.deadline()):
        ...     lazy.ensure(lazy.initial)
        """
        return _Within(self, deadline)


class _Within:
    """`DeadlineScope.within`'s context: a class, not a generator (a row enters two: ~3 µs each
    through `contextlib`, a tenth of a narrow row's walk)."""

    __slots__ = ("deadline", "scope")

    def __init__(self, scope: DeadlineScope, deadline: Deadline | None):
        self.scope, self.deadline = scope, deadline

    def __enter__(self) -> None:
        self.scope.use_deadline(self.deadline)

    def __exit__(self, *exc: object) -> None:
        self.scope.use_deadline(None)


DEFAULT_LIMITS = Limits()
