"""A regex pattern -> its byte DFA: the linear-time tree path (determinized on demand, or made
whole), else the interegular fallback."""

from __future__ import annotations

import re

from ..automata import (
    ByteDFA,
    InnerAnchor,
    LazyByteDFA,
    Untranslatable,
    check_expansion,
    materialized,
    node_lazy_dfa,
    regex_node,
    to_python_syntax,
)
from ..errors import RegexError, SchemaError, SpecTooComplex
from ..limits import DEFAULT_LIMITS, Deadline, Limits
from .fallback import interegular_dfa
from .validate import validate

LAZY_POSITIONS = 1_000  # positions of a pattern made whole at compile time past this (`regex_automaton`)


def regex_to_dfa(
    pattern: str, limits: Limits | None = None, deadline: Deadline | None = None, extended: bool = False
) -> ByteDFA:
    """Compile a pattern to a minimized, live-pruned byte DFA (`regex_automaton` made whole).

    >>> regex_to_dfa("caf\\u00e9").accepts("café".encode())
    True
    """
    auto = regex_automaton(pattern, limits, deadline, extended, whole=True)
    assert isinstance(auto, ByteDFA)
    return auto


def regex_automaton(
    pattern: str,
    limits: Limits | None = None,
    deadline: Deadline | None = None,
    extended: bool = False,
    whole: bool = False,
) -> LazyByteDFA | ByteDFA:
    """A pattern's automaton: its byte DFA determinized on demand (the tree path), or made whole —
    by the interegular fallback (constructs the tree path does not read), for a pattern of over
    `LAZY_POSITIONS` positions, or when ``whole``.

    A big pattern is made whole here so that its blow-up (nested counts: ``(a{1,100}){1,100}``) is
    refused by the compile, within its budget, not met by a request's rows; a small one's states are
    made as rows reach them (an e-mail pattern's 171 states cost 3.5 ms made whole, its first
    mask ~40 of them).

    The pattern is Python ``re`` syntax; ``extended`` (regex specs) also reads the PCRE/ECMA-262
    constructs Python lacks (`fsm.automata.regex_dialect`) and takes ``^``/``\\A`` at the start and
    ``$``/``\\Z`` at the end as the no-ops they are in a full match (grammar terminals keep Python's
    syntax: lark's lexer runs them with Python's engine).

    One budget for the whole construction: ``deadline`` (default: ``limits.max_seconds`` from now),
    ``limits.max_memory`` for the automata, and counted repeats estimated before anything is built.

    >>> type(regex_automaton("[a-z]{1,30}@x")).__name__
    'LazyByteDFA'
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
    fast = _tree_automaton(pattern, parsed, limits, deadline, whole)
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


def _tree_automaton(
    pattern: str, parsed, limits: Limits, deadline: Deadline, whole: bool
) -> LazyByteDFA | ByteDFA | None:
    """The linear-time path: Python's parse tree -> range tree -> Thompson NFA -> subset construction
    (on demand unless ``whole`` or big: `regex_automaton`); None: a construct the tree does not
    read (the fallback's)."""
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
        lazy = node_lazy_dfa(node, limits, deadline)
        return materialized(lazy) if whole or expansion.size > LAZY_POSITIONS else lazy
    except SpecTooComplex as exc:
        part = expansion.describe()
        where = f" (its biggest part: {part})" if part else ""
        raise exc.named(f"{what}{where}") from None
    except SchemaError:
        raise RegexError(f"regex {pattern[:80]!r} matches no string at all") from None
