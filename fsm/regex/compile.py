"""A regex pattern -> its byte DFA: the linear-time tree path, else the interegular fallback."""

from __future__ import annotations

import re

from ..automata import (
    ByteDFA,
    InnerAnchor,
    Untranslatable,
    check_expansion,
    node_to_dfa,
    regex_node,
    to_python_syntax,
)
from ..errors import RegexError, SchemaError, SpecTooComplex
from ..limits import DEFAULT_LIMITS, Deadline, Limits
from .fallback import interegular_dfa
from .validate import validate


def regex_to_dfa(
    pattern: str, limits: Limits | None = None, deadline: Deadline | None = None, extended: bool = False
) -> ByteDFA:
    """Compile a pattern to a minimized, live-pruned byte DFA.

    The pattern is Python ``re`` syntax; ``extended`` (regex specs) also reads the PCRE/ECMA-262
    constructs Python lacks (`fsm.automata.regex_dialect`) and takes ``^``/``\\A`` at the start and
    ``$``/``\\Z`` at the end as the no-ops they are in a full match (grammar terminals keep Python's
    syntax: lark's lexer runs them with Python's engine).

    One budget for the whole construction: ``deadline`` (default: ``limits.max_seconds`` from now),
    ``limits.max_memory`` for the automata, and counted repeats estimated before anything is built.

    >>> regex_to_dfa("caf\\u00e9").accepts("café".encode())
    True
    """
    limits = limits or DEFAULT_LIMITS
    deadline = deadline or limits.deadline()
    if extended:
        try:
            pattern = to_python_syntax(pattern)
        except re.error as exc:
            raise RegexError(f"invalid regex {pattern[:80]!r}: {exc.msg} at position {exc.pos}") from None
    parsed = validate(pattern, limits, edge_anchors=extended)
    deadline.check(f"regex {pattern[:80]!r}: parsing")
    fast = _tree_dfa(pattern, parsed, limits, deadline)
    if fast is not None:
        return fast
    # interegular cannot be interrupted and grows quadratically: bound its input first.
    validate(pattern, limits, estimate_size=True)
    deadline.check(f"regex {pattern[:80]!r}")
    return interegular_dfa(pattern, limits.within(deadline.remaining()))


def _inner_anchor(pattern: str) -> int:
    """Where the first anchor not at an end of ``pattern`` is (-1: not found)."""
    for m in re.finditer(r"(?<!\\)(?:\^|\$|\\[AZ])", pattern):
        if m.start() > 0 and m.end() < len(pattern):
            return m.start()
    return -1


def _tree_dfa(pattern: str, parsed, limits: Limits, deadline: Deadline) -> ByteDFA | None:
    """The linear-time path: Python's parse tree -> range tree -> Thompson NFA -> subset construction."""
    try:
        node = regex_node(pattern, parsed)
    except InnerAnchor:
        pos = _inner_anchor(pattern)
        where = f" at position {pos}" if pos >= 0 else ""
        raise RegexError(
            f"regex {pattern[:80]!r} has an anchor{where} where it could match inside the text; a "
            "pattern is matched in full, so ^ (or \\A) is allowed only at its start and $ (or \\Z) "
            "only at its end, where they change nothing"
        ) from None
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
