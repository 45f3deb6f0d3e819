"""Translate a JSON Schema ``pattern`` (ECMA-262 / Python syntax) into a language of decoded strings.

``pattern`` applies to the *decoded* string with search semantics (unanchored unless ``^``/``$``).
The pattern is parsed with Python's own regex parser and its tree rebuilt as a `json_ast` node over
code points; the caller wraps it in ``Enc`` to get the JSON-encoded text. Where Python and ECMA
disagree the translation keeps to what both accept: ``\\d``, ``\\w``, ``\\s`` emit ASCII members only,
while ``\\D``, ``\\W``, ``\\S`` and negated classes exclude the Unicode members too; ``.`` excludes
every line terminator; ``$`` does not admit Python's trailing newline. So every string generated
matches the pattern under either engine.

Backreferences, lookarounds, word boundaries, anchors in the middle, possessive and atomic groups
raise `UnsupportedSchema`.

>>> import re
>>> from fsm.json_ast import to_regex
>>> rx = to_regex(pattern_node("^[a-c]+x$"))
>>> [bool(re.fullmatch(rx, s)) for s in ["abx", "x", "abxx"]]
[True, False, False]
>>> bool(re.fullmatch(to_regex(pattern_node("b")), "abc"))
True
"""

from __future__ import annotations

import re
from functools import cache, lru_cache

try:  # Python >= 3.11
    import re._constants as _c  # type: ignore[import-not-found]
    from re import _parser  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - Python 3.10
    import sre_constants as _c  # type: ignore[no-redef]
    import sre_parse as _parser  # type: ignore[no-redef]

from ..automata import (
    ANY_CHAR,
    EMPTY,
    NEVER,
    Cls,
    Node,
    Ranges,
    alt,
    complement,
    lit,
    normalize_ranges,
    rep,
    seq,
)
from ..errors import UnsupportedSchema

_LINE_TERMINATORS: Ranges = ((0x0A, 0x0A), (0x0D, 0x0D), (0x2028, 0x2029))
_DOT: Ranges = normalize_ranges(complement(_LINE_TERMINATORS))
_ECMA_SPACE = "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"


def _ranges_of(chars) -> Ranges:
    return normalize_ranges((ord(c), ord(c)) for c in chars)


@cache
def _unicode_class(escape: str) -> Ranges:
    """Every code point Python's ``re`` puts in ``\\d``/``\\w``/``\\s`` (str patterns)."""
    everything = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF)
    found = set(re.findall(escape, everything))
    if escape == r"\s":
        found |= set(_ECMA_SPACE)
    return _ranges_of(found)


_ASCII = {
    "d": _ranges_of("0123456789"),
    "w": _ranges_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"),
    "s": _ranges_of(" \t\n\r\f\v"),
}


def _category(cat, over: bool) -> Ranges:
    """A category's members: ``over=False`` those every engine accepts, ``over=True`` any engine's."""
    name = str(cat).upper()
    kind = "d" if "DIGIT" in name else "w" if "WORD" in name else "s" if "SPACE" in name else None
    if kind is None:
        raise UnsupportedSchema(f"regex category {cat} is not supported", "pattern")
    negated = "NOT" in name
    if not negated:
        return _unicode_class("\\" + kind) if over else _ASCII[kind]
    # a negated category: the complement of the other approximation
    return complement(_ASCII[kind]) if over else complement(_unicode_class("\\" + kind))


def _fold(ranges: Ranges) -> Ranges:
    """Add the other ASCII case of every ASCII letter (what IGNORECASE matches, and nothing more)."""
    extra = []
    for a, b in ranges:
        for lo, hi, delta in ((65, 90, 32), (97, 122, -32)):
            x, y = max(a, lo), min(b, hi)
            if x <= y:
                extra.append((x + delta, y + delta))
    return normalize_ranges(list(ranges) + extra)


class _Translator:
    def __init__(self, pattern: str, where: str):
        self.pattern = pattern
        self.where = where

    def fail(self, what: str) -> UnsupportedSchema:
        return UnsupportedSchema(
            f"pattern {self.pattern[:80]!r}{self.where} uses {what}, which no automaton can enforce exactly",
            "pattern",
        )

    def chars(self, ranges: Ranges, flags: int) -> Node:
        if flags & re.IGNORECASE:
            ranges = _fold(ranges)
        return Cls(ranges) if ranges else NEVER

    def in_set(self, items, flags: int) -> Node:
        negate = any(op is _c.NEGATE for op, _ in items)
        parts: list[tuple[int, int]] = []
        for op, av in items:
            if op is _c.NEGATE:
                continue
            if op is _c.LITERAL:
                parts.append((av, av))
            elif op is _c.RANGE:
                parts.append(av)
            elif op is _c.CATEGORY:
                parts.extend(_category(av, over=negate))
            else:
                raise self.fail(f"the class member {op}")
        ranges = normalize_ranges(parts)
        if flags & re.IGNORECASE:
            ranges = _fold(ranges)
        if negate:
            ranges = complement(ranges)
        return Cls(ranges) if ranges else NEVER

    def seq(self, items, flags: int) -> Node:
        return seq(*[self.item(op, av, flags) for op, av in items])

    def item(self, op, av, flags: int) -> Node:
        if op is _c.LITERAL:
            return self.chars(((av, av),), flags) if flags & re.IGNORECASE else lit(chr(av))
        if op is _c.NOT_LITERAL:
            excluded = _fold(((av, av),)) if flags & re.IGNORECASE else ((av, av),)
            return self.chars(complement(excluded), 0)
        if op is _c.ANY:
            return Cls(ANY_CHAR if flags & re.DOTALL else _DOT)
        if op is _c.IN:
            return self.in_set(av, flags)
        if op is _c.BRANCH:
            return alt(*[self.seq(b, flags) for b in av[1]])
        if op is _c.SUBPATTERN:
            _, add, remove, p = av
            return self.seq(p, (flags | add) & ~remove)
        if op in (_c.MAX_REPEAT, _c.MIN_REPEAT):
            lo, hi, p = av
            return rep(self.seq(p, flags), lo, None if hi == _c.MAXREPEAT else hi)
        if op is _c.AT:
            raise self.fail("an anchor or word boundary inside the pattern")
        if op in (_c.GROUPREF, getattr(_c, "GROUPREF_EXISTS", None)):
            raise self.fail("a backreference")
        if op in (_c.ASSERT, _c.ASSERT_NOT):
            raise self.fail("a lookaround")
        if op is getattr(_c, "POSSESSIVE_REPEAT", None) or op is getattr(_c, "ATOMIC_GROUP", None):
            raise self.fail("a possessive or atomic group")
        raise self.fail(f"the construct {op}")

    def top(self, items, flags: int) -> Node:
        """Search semantics: unanchored ends match anything before/after.

        Python's parser hoists a common prefix out of alternatives (``^$|^a$`` becomes ``^(?:$|a$)``),
        so a ``$`` may sit at the end of the last alternative group rather than of the pattern.
        """
        items = list(items)
        if len(items) == 1 and items[0][0] is _c.BRANCH:
            return alt(*[self.top(b, flags) for b in items[0][1][1]])
        if len(items) == 1 and items[0][0] is _c.SUBPATTERN:
            _, add, remove, p = items[0][1]
            return self.top(p, (flags | add) & ~remove)
        start = False
        while items and items[0][0] is _c.AT and items[0][1] in (_c.AT_BEGINNING, _c.AT_BEGINNING_STRING):
            items.pop(0)
            start = True
        return seq(EMPTY if start else rep(Cls(ANY_CHAR), 0, None), self.tail(items, flags))

    def tail(self, items, flags: int) -> Node:
        """``items`` then anything, unless they end with ``$`` (possibly inside a final group)."""
        items = list(items)
        end = False
        while items and items[-1][0] is _c.AT and items[-1][1] in (_c.AT_END, _c.AT_END_STRING):
            items.pop()
            end = True
        if end:
            return self.seq(items, flags)
        if items and items[-1][0] is _c.BRANCH:
            return seq(self.seq(items[:-1], flags), alt(*[self.tail(b, flags) for b in items[-1][1][1]]))
        if items and items[-1][0] is _c.SUBPATTERN:
            _, add, remove, p = items[-1][1]
            return seq(self.seq(items[:-1], flags), self.tail(p, (flags | add) & ~remove))
        return seq(self.seq(items, flags), rep(Cls(ANY_CHAR), 0, None))


def _ecma_to_python(pattern: str) -> str:
    # ECMA named groups (?<name>...) are (?P<name>...) in Python; lookbehinds keep their syntax.
    return re.sub(r"\(\?<(?![=!])", "(?P<", pattern)


@lru_cache(maxsize=4096)
def _cached(pattern: str, search: bool) -> Node:
    t = _Translator(pattern, "")
    try:
        parsed = _parser.parse(_ecma_to_python(pattern))
    except re.error as exc:
        raise UnsupportedSchema(
            f"pattern {pattern[:80]!r} is not a regex Python can parse: {exc}", "pattern"
        ) from None
    except (RecursionError, OverflowError):
        raise UnsupportedSchema(f"pattern {pattern[:80]!r} is too deeply nested", "pattern") from None
    flags = parsed.state.flags
    if flags & (re.MULTILINE | re.VERBOSE):
        raise t.fail("the (?m) or (?x) flag")
    if search:
        return t.top(parsed, flags)
    return t.seq(parsed, flags)


def pattern_node(pattern: str, search: bool = True) -> Node:
    """The decoded strings ``pattern`` accepts: ``re.search`` semantics, or full match with ``search=False``.

    >>> import re
    >>> from fsm.json_ast import to_regex
    >>> bool(re.fullmatch(to_regex(pattern_node(r"\\d+", search=False)), "12"))
    True
    """
    if not isinstance(pattern, str):
        raise UnsupportedSchema(f"pattern must be a string, got {type(pattern).__name__}", "pattern")
    return _cached(pattern, search)
