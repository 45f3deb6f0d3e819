"""Reject what no finite automaton can honour, with the position; bound what interegular is given."""

from __future__ import annotations

import re

try:  # Python >= 3.11
    from re import _constants as sre_constants  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover
    import sre_constants  # type: ignore[no-redef]

from ..automata import parse_regex
from ..errors import RegexError, SpecTooComplex
from ..limits import DEFAULT_LIMITS, Limits

_UNSUPPORTED = {
    sre_constants.GROUPREF: "a backreference",
    sre_constants.GROUPREF_EXISTS: "a conditional group (?(...)...)",
    sre_constants.ASSERT: "a lookaround assertion",
    sre_constants.ASSERT_NOT: "a negative lookaround assertion",
}
for _name, _what in (
    ("POSSESSIVE_REPEAT", "a possessive quantifier (*+, ++, ?+, {m,n}+)"),
    ("ATOMIC_GROUP", "an atomic group (?>...)"),
):
    if hasattr(sre_constants, _name):  # Python >= 3.11; they change which strings match
        _UNSUPPORTED[getattr(sre_constants, _name)] = _what
# word boundaries; ^ $ \A \Z are for the translator (no-ops at the ends, errors elsewhere)
_BOUNDARIES = {sre_constants.AT_BOUNDARY, sre_constants.AT_NON_BOUNDARY}


def _find_construct(pattern: str, kind: str) -> int:
    probes = {
        "a backreference": r"\\[1-9]|\(\?P=",
        "a conditional group (?(...)...)": r"\(\?\(",
        "a lookaround assertion": r"\(\?<?=",
        "a negative lookaround assertion": r"\(\?<?!",
        "a possessive quantifier (*+, ++, ?+, {m,n}+)": r"[*+?}]\+",
        "an atomic group (?>...)": r"\(\?>",
        "a word boundary": r"\\[bB]",
        "an anchor": r"\\[AZ]|\^|\$",
    }
    m = re.search(probes.get(kind, "$^"), pattern)
    return m.start() if m else -1


_MAX_CLASS_CODEPOINTS = 300_000


def _estimate(items, pattern: str) -> int:
    """Upper estimate of automaton states: counted repeats multiply, alternatives add."""
    total = 0
    for op, av in items:
        if op is sre_constants.SUBPATTERN:
            total += _estimate(av[-1], pattern)
        elif op is sre_constants.BRANCH:
            total += sum(_estimate(b, pattern) for b in av[1])
        elif op in (
            sre_constants.MAX_REPEAT,
            sre_constants.MIN_REPEAT,
            getattr(sre_constants, "POSSESSIVE_REPEAT", None),
        ):
            lo, hi = av[0], av[1]
            times = lo + 1 if hi == sre_constants.MAXREPEAT else max(hi, 1)
            total += _estimate(av[2], pattern) * times
        elif op is sre_constants.IN:
            size = sum(b - a + 1 for kind, (a, b) in ((k, v) for k, v in av if k is sre_constants.RANGE))
            negated = any(k is sre_constants.NEGATE for k, _ in av)
            if size > _MAX_CLASS_CODEPOINTS and not negated:
                raise SpecTooComplex(
                    f"regex {pattern[:80]!r}: a character class spans {size:,} code points; write it as a "
                    "negated class (e.g. [^\\x00-\\x7f]) which compiles in constant time",
                    budget="class_size",
                    limit=_MAX_CLASS_CODEPOINTS,
                )
            total += 1
        else:
            total += 1
    return total


def validate(
    pattern: str, limits: Limits = DEFAULT_LIMITS, estimate_size: bool = False, edge_anchors: bool = False
):
    """Raise `RegexError` for what no finite automaton can honour (with its position), and with
    ``estimate_size`` `SpecTooComplex` when the pattern's estimated size is over ``limits``; returns
    Python's parse tree of the pattern.

    With ``edge_anchors``, ``^ $ \\A \\Z`` are left to the translator (no-ops at the ends of a full
    match, an error elsewhere); else every anchor is refused.

    Python's parser cannot be interrupted and takes about 10 µs a character: a pattern longer than
    twice ``max_regex_positions`` characters is refused before it is parsed.

    >>> validate(r"(a)\\1")
    Traceback (most recent call last):
        ...
    fsm.errors.RegexError: regex '(a)\\\\1' uses a backreference at position 3, which is not supported (it needs backtracking semantics)
    """
    if len(pattern) > 2 * limits.max_regex_positions:
        raise SpecTooComplex(
            f"regex {pattern[:80]!r}: its text is {len(pattern):,} characters, over twice the budget "
            f"max_regex_positions={limits.max_regex_positions:,} (the parser reads it before anything "
            "can be estimated); a long list of alternatives is better as fsm.Choice of fewer options",
            budget="max_regex_positions",
            limit=limits.max_regex_positions,
        )
    try:
        parsed = parse_regex(pattern)
    except re.error as exc:
        pos = f" at position {exc.pos}" if exc.pos is not None else ""
        raise RegexError(f"invalid regex {pattern!r}: {exc.msg}{pos}") from None
    except (RecursionError, OverflowError) as exc:
        raise RegexError(f"regex {pattern[:80]!r} is too deeply nested or too large: {exc}") from None
    if parsed.state.flags & (re.MULTILINE | re.VERBOSE):
        raise RegexError(f"regex {pattern[:80]!r}: the (?m) and (?x) flags are not supported")

    def visit(items) -> None:
        for op, av in items:
            if op in _UNSUPPORTED:
                what = _UNSUPPORTED[op]
                pos = _find_construct(pattern, what)
                where = f" at position {pos}" if pos >= 0 else ""
                raise RegexError(
                    f"regex {pattern[:80]!r} uses {what}{where}, which is not supported (it needs backtracking semantics)"
                )
            if op is sre_constants.AT and not edge_anchors and av not in _BOUNDARIES:
                pos = _find_construct(pattern, "an anchor")
                where = f" at position {pos}" if pos >= 0 else ""
                raise RegexError(
                    f"regex {pattern[:80]!r} uses an anchor{where}, which is not supported here (a grammar "
                    "terminal is matched where the previous one ended; fsm.Regex allows ^ and $ at its ends)"
                )
            if op is sre_constants.AT and av in _BOUNDARIES:
                pos = _find_construct(pattern, "a word boundary")
                where = f" at position {pos}" if pos >= 0 else ""
                raise RegexError(
                    f"regex {pattern[:80]!r} uses a word boundary (\\b or \\B){where}, which is not "
                    "supported (it looks at the characters on both sides)"
                )
            if op is sre_constants.SUBPATTERN:
                visit(av[-1])
            elif op is sre_constants.BRANCH:
                for b in av[1]:
                    visit(b)
            elif op in (
                sre_constants.MAX_REPEAT,
                sre_constants.MIN_REPEAT,
                getattr(sre_constants, "POSSESSIVE_REPEAT", None),
            ):
                visit(av[2])
            elif op is getattr(sre_constants, "ATOMIC_GROUP", None):
                visit(av)

    visit(parsed)
    if not estimate_size:
        return parsed
    estimate = _estimate(parsed, pattern)
    budget = min(limits.max_states, limits.max_regex_positions)
    if estimate > budget:
        name = "max_states" if limits.max_states <= limits.max_regex_positions else "max_regex_positions"
        raise SpecTooComplex(
            f"regex {pattern[:80]!r}: its counted repeats and alternatives expand to about {estimate:,} "
            f"positions, over the budget {name}={budget:,} (nested counted repeats multiply)",
            budget=name,
            limit=budget,
        )
    return parsed
