"""A regex pattern -> its byte DFA: the linear-time tree path, else the interegular fallback."""

from __future__ import annotations

from ..automata import ByteDFA, Untranslatable, check_expansion, node_to_dfa, regex_node
from ..errors import RegexError, SchemaError, SpecTooComplex
from ..limits import DEFAULT_LIMITS, Deadline, Limits
from .fallback import interegular_dfa
from .validate import validate


def regex_to_dfa(pattern: str, limits: Limits | None = None, deadline: Deadline | None = None) -> ByteDFA:
    """Compile a pattern to a minimized, live-pruned byte DFA.

    One budget for the whole construction: ``deadline`` (default: ``limits.max_seconds`` from now),
    ``limits.max_memory`` for the automata, and counted repeats estimated before anything is built.

    >>> regex_to_dfa("caf\\u00e9").accepts("café".encode())
    True
    """
    limits = limits or DEFAULT_LIMITS
    deadline = deadline or limits.deadline()
    parsed = validate(pattern, limits)
    deadline.check(f"regex {pattern[:80]!r}: parsing")
    fast = _tree_dfa(pattern, parsed, limits, deadline)
    if fast is not None:
        return fast
    # interegular cannot be interrupted and grows quadratically: bound its input first.
    validate(pattern, limits, estimate_size=True)
    deadline.check(f"regex {pattern[:80]!r}")
    return interegular_dfa(pattern, limits.within(deadline.remaining()))


def _tree_dfa(pattern: str, parsed, limits: Limits, deadline: Deadline) -> ByteDFA | None:
    """The linear-time path: Python's parse tree -> range tree -> Thompson NFA -> subset construction."""
    try:
        node = regex_node(pattern, parsed)
    except (Untranslatable, RecursionError):
        return None
    what = f"regex {pattern[:80]!r}"
    try:
        expansion = check_expansion(node, limits, what)
    except RecursionError:
        return None  # too deep for the estimate: the fallback's own estimate bounds it
    try:
        return node_to_dfa(node, limits, deadline)
    except SpecTooComplex as exc:
        part = expansion.describe()
        where = f" (its biggest part: {part})" if part else ""
        raise SpecTooComplex(f"{what}{where}: {exc}", budget=exc.budget, limit=exc.limit) from None
    except SchemaError:
        raise RegexError(f"regex {pattern[:80]!r} matches no string at all") from None
