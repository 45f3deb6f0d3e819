"""A regex pattern -> its byte DFA: the linear-time tree path, else the interegular fallback."""

from __future__ import annotations

from ..automata import ByteDFA, Untranslatable, node_to_dfa, regex_node
from ..errors import RegexError, SchemaError, SpecTooComplex
from ..limits import DEFAULT_LIMITS, Limits
from .fallback import interegular_dfa
from .validate import validate


def regex_to_dfa(pattern: str, limits: Limits | None = None) -> ByteDFA:
    """Compile a pattern to a minimized, live-pruned byte DFA.

    >>> regex_to_dfa("caf\\u00e9").accepts("café".encode())
    True
    """
    limits = limits or DEFAULT_LIMITS
    validate(pattern, limits)
    fast = _tree_dfa(pattern, limits)
    if fast is not None:
        return fast
    # interegular cannot be interrupted and grows quadratically: bound its input first.
    validate(pattern, limits, estimate_size=True)
    return interegular_dfa(pattern, limits)


def _tree_dfa(pattern: str, limits: Limits) -> ByteDFA | None:
    """The linear-time path: Python's parser -> range tree -> Thompson NFA -> subset construction."""
    try:
        node = regex_node(pattern)
    except (Untranslatable, RecursionError):
        return None
    try:
        return node_to_dfa(node, limits)
    except SpecTooComplex as exc:
        raise SpecTooComplex(f"regex {pattern[:80]!r}: {exc}", budget=exc.budget, limit=exc.limit) from None
    except SchemaError:
        raise RegexError(f"regex {pattern[:80]!r} matches no string at all") from None
