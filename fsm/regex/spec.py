"""The regex specs: `Regex` (full match of a pattern) and `Choice` (one of some literal strings)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..errors import RegexError
from ..index import DfaIndex, LazyDfaIndex
from ..index.for_automaton import index_for
from ..limits import DEFAULT_LIMITS, Limits
from .compile import regex_automaton


@dataclass(frozen=True)
class Regex:
    """A regular-expression spec: the output must fully match ``pattern``.

    Python ``re`` syntax, plus what PCRE and ECMA-262 patterns add that Python lacks (``(?<name>...)``,
    ``\\e``, ``\\cX``, ``\\u{...}``, ``\\p{L}``: see docs/json-schema.md, regex dialects); a ``^`` at
    the start and a ``$`` at the end are allowed and change nothing (the match is full anyway).

    >>> Regex(r"\\d{4}-\\d{2}-\\d{2}").pattern
    '\\\\d{4}-\\\\d{2}-\\\\d{2}'
    """

    pattern: str

    def __post_init__(self):
        if not isinstance(self.pattern, str):
            raise RegexError(f"a regex pattern must be a str, got {type(self.pattern).__name__}")

    @property
    def fingerprint(self) -> str:
        """A stable key of the spec (cache key of its index)."""
        return "regex:" + hashlib.sha256(self.pattern.encode("utf-8", "surrogatepass")).hexdigest()[:32]

    def to_regex(self) -> str:
        """The pattern itself."""
        return self.pattern

    def build_index(self, vocab, limits: Limits | None = None) -> LazyDfaIndex | DfaIndex:
        """The token index of the pattern's byte DFA over ``vocab`` (one deadline for both): its
        states made as rows reach them when that is exact (`fsm.index.for_automaton`)."""
        limits = limits or DEFAULT_LIMITS
        deadline = limits.deadline()
        auto = regex_automaton(self.pattern, limits, deadline, extended=True)
        return index_for(auto, vocab, self.fingerprint, limits, deadline, name=_name(self.pattern))


@dataclass(frozen=True)
class Choice:
    """The output is exactly one of ``options`` (literal strings).

    >>> Choice(["yes", "no"]).to_regex()
    '(?:yes|no)'
    """

    options: tuple[str, ...] = field()

    def __init__(self, options: Sequence[str]):
        if isinstance(options, str) or not isinstance(options, (list, tuple)):
            raise RegexError("Choice takes a list of strings, e.g. Choice(['yes', 'no'])")
        if not options:
            raise RegexError("Choice needs at least one option")
        for i, o in enumerate(options):
            if not isinstance(o, str):
                raise RegexError(f"Choice option {i} is {type(o).__name__}, not a str")
        object.__setattr__(self, "options", tuple(options))

    def to_regex(self) -> str:
        """A pattern matching exactly the options."""
        return "(?:" + "|".join(re.escape(o) for o in self.options) + ")"

    @property
    def fingerprint(self) -> str:
        """A stable key of the spec (cache key of its index)."""
        return "choice:" + hashlib.sha256(self.to_regex().encode("utf-8", "surrogatepass")).hexdigest()[:32]

    def build_index(self, vocab, limits: Limits | None = None) -> LazyDfaIndex | DfaIndex:
        """The token index of the options' byte DFA over ``vocab`` (one deadline for both), as a
        `Regex`'s."""
        limits = limits or DEFAULT_LIMITS
        deadline = limits.deadline()
        pattern = self.to_regex()
        auto = regex_automaton(pattern, limits, deadline)
        return index_for(auto, vocab, self.fingerprint, limits, deadline, name=_name(pattern))


def _name(pattern: str) -> str:
    """What a budget overrun past the pattern's compile names (`index_for`): an automaton whose
    lazy rows are not exact made whole, or a lazy one's states made as a text reaches them."""
    return f"regex {pattern[:80]!r}"
