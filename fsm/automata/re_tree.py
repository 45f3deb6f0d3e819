"""Python ``re`` parse tree -> language tree, in one of two flavours.

Parsing is Python's own (``re._parser``); this module only maps its tree onto code point ranges,
so `nfa` can build the automaton in linear time (Thompson NFA, subset construction over range
partitions) instead of a pure-Python character-FSM library whose cost grows quadratically with
pattern size.

`Flavor.ASCII` is exact ``re.ASCII`` full-match semantics (regex specs). `Flavor.ECMA` is a JSON
Schema ``pattern`` (ECMA-262 without the ``u`` flag): ``\\d`` and ``\\w`` are ASCII, so ``\\D`` and
``\\W`` hold every non-ASCII character; ``\\s`` is ECMA's WhiteSpace and LineTerminator (U+00A0,
U+FEFF, U+2028...), ``\\S`` its complement; ``.`` excludes every line terminator; with ``search``,
unanchored ends match anything (``re.search``) and ``$`` does not admit a trailing newline.
Lookaheads are intersections (`lookaround`), and so is an ECMA ``$`` inside the pattern (nothing may
follow it); backreferences, lookbehinds, word boundaries, other anchors in the middle (``^``, and any
under ``Flavor.ASCII``), possessive and atomic groups raise `Untranslatable`.

>>> from fsm.automata import node_to_dfa
>>> node_to_dfa(regex_node(r"[a-c]+x|\\d{2}")).accepts(b"12")
True
"""

from __future__ import annotations

try:  # Python >= 3.11
    import re._constants as _c  # type: ignore[import-not-found]
    import re._parser as _parser  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - Python 3.10
    import sre_constants as _c  # type: ignore[no-redef]
    import sre_parse as _parser  # type: ignore[no-redef]

import enum
import re

from .language import EMPTY, Cls, Node, alt, cls, lit, opt, rep, seq
from .lookaround import has_end_anchor, has_lookaround, translate_with_lookarounds
from .ranges import ANY_CHAR, Ranges, complement, normalize_ranges


class Untranslatable(Exception):
    """A construct the translator does not map; ``what`` names it (e.g. ``"a lookaround"``)."""

    def __init__(self, what: str, message: str | None = None):
        super().__init__(message or what)
        self.what = what


class InnerAnchor(Untranslatable):
    """An anchor (``^``, ``$``, ``\\A``, ``\\Z``) away from the pattern's ends, or a word boundary."""


class UnknownCategory(Untranslatable):
    """A ``\\d``-like category the translator has no ranges for."""


def _ranges_of(chars) -> Ranges:
    return normalize_ranges((ord(c), ord(c)) for c in chars)


_ECMA_SPACE = "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_LINE_TERMINATORS: Ranges = ((0x0A, 0x0A), (0x0D, 0x0D), (0x2028, 0x2029))
_ASCII_CLASSES = {
    "d": _ranges_of("0123456789"),
    "w": _ranges_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"),
    "s": _ranges_of(" \t\n\r\f\v"),
}
_ASCII_CATEGORIES = {  # re.ASCII: exactly the ASCII members, negations their complements
    _c.CATEGORY_DIGIT: _ASCII_CLASSES["d"],
    _c.CATEGORY_SPACE: _ASCII_CLASSES["s"],
    _c.CATEGORY_WORD: _ASCII_CLASSES["w"],
    _c.CATEGORY_NOT_DIGIT: complement(_ASCII_CLASSES["d"]),
    _c.CATEGORY_NOT_SPACE: complement(_ASCII_CLASSES["s"]),
    _c.CATEGORY_NOT_WORD: complement(_ASCII_CLASSES["w"]),
}


_ECMA_CATEGORIES = {  # ECMA-262 without the u flag: \d \w ASCII, \s its WhiteSpace and LineTerminators
    "d": _ASCII_CLASSES["d"],
    "w": _ASCII_CLASSES["w"],
    "s": _ranges_of(_ECMA_SPACE),
}


def _ecma_category(cat, over: bool) -> Ranges:
    """A category's members as ECMA-262 reads them (``over`` is not used: one reading).

    ``\\d`` and ``\\w`` are ASCII only, so ``\\D`` and ``\\W`` hold every non-ASCII character (an NKO
    digit, ``é``); ``\\s`` is WhiteSpace and LineTerminator (U+00A0, U+FEFF, U+2028, the Zs spaces...).

    >>> _ecma_category(_c.CATEGORY_NOT_DIGIT, False)[:2]
    ((0, 47), (58, 55295))
    """
    name = str(cat).upper()
    kind = "d" if "DIGIT" in name else "w" if "WORD" in name else "s" if "SPACE" in name else None
    if kind is None:
        raise UnknownCategory(f"regex category {cat}", f"regex category {cat} is not supported")
    members = _ECMA_CATEGORIES[kind]
    return complement(members) if "NOT" in name else members


def _ascii_category(cat, over: bool) -> Ranges:
    ranges = _ASCII_CATEGORIES.get(cat)
    if ranges is None:
        raise UnknownCategory(f"regex category {cat}", f"regex category {cat} is not supported")
    return ranges


class Flavor(enum.Enum):
    """Which regex dialect a pattern is read in (see the module docstring).

    ``ECMA_WIDEST`` is the other bound of a JSON Schema ``pattern``, read where it is negated: its
    ``$`` also admits Python's final newline (so a negation never admits what Python's ``$``
    matches); its categories are ECMA's, as in ``ECMA``.
    """

    ASCII = "ascii"
    ECMA = "ecma"
    ECMA_WIDEST = "ecma-widest"


def fold(ranges) -> Ranges:
    """``ranges`` plus the other ASCII case of every ASCII letter in them (what IGNORECASE adds
    under ``re.ASCII`` and in ECMA-262 without the ``u`` flag, and nothing more).

    >>> fold(((0x61, 0x63),))
    ((65, 67), (97, 99))
    """
    extra = []
    for a, b in ranges:
        for lo, hi, delta in ((65, 90, 32), (97, 122, -32)):
            x, y = max(a, lo), min(b, hi)
            if x <= y:
                extra.append((x + delta, y + delta))
    return normalize_ranges(list(ranges) + extra)


def parse(pattern: str):
    """Python's parse tree of ``pattern`` (its ``state.flags`` hold the global flags); raises
    ``re.error``, ``RecursionError`` or ``OverflowError`` as Python's parser does. (PCRE/ECMA syntax:
    `regex_dialect.to_python_syntax` first.)

    >>> parse("(?i)a").state.flags & re.IGNORECASE > 0
    True
    """
    return _parser.parse(pattern)


class Translator:
    """Maps a parse tree onto the language tree in one `Flavor`.

    >>> import re
    >>> from fsm.automata import to_regex
    >>> node = Translator(Flavor.ECMA).translate(parse("^[a-c]+x$"), search=True)
    >>> [bool(re.fullmatch(to_regex(node), s)) for s in ["abx", "x", "abxx"]]
    [True, False, False]
    """

    def __init__(self, flavor: Flavor):
        self.flavor = flavor
        ecma = flavor is Flavor.ECMA
        self._widest = flavor is Flavor.ECMA_WIDEST
        self._dot = normalize_ranges(complement(_LINE_TERMINATORS) if ecma else ((0, 9), (11, 0x10FFFF)))
        self._category = _ecma_category if ecma or self._widest else _ascii_category
        # ECMA has no inline flags: (?m) would turn the search anchors into line anchors
        self._rejected_flags = re.MULTILINE | re.VERBOSE if ecma or self._widest else 0
        self._dual: Translator | None = None

    def translate(self, parsed, search: bool = False) -> Node:
        """The language of ``parsed``: full match, or ``re.search`` semantics with ``search``.

        ``^``/``\\A`` at the start and ``$``/``\\Z`` at the end hold at the ends of the text, so a
        full match drops them and a search anchors there; elsewhere they raise `InnerAnchor`.
        """
        flags = parsed.state.flags
        if flags & self._rejected_flags:
            raise Untranslatable("the (?m) or (?x) flag")
        free = rep(Cls(ANY_CHAR), 0, None) if search else EMPTY
        if has_lookaround(parsed):
            return translate_with_lookarounds(self, parsed, flags, free, self.dual)
        try:
            return self._top(parsed, flags, free)
        except InnerAnchor:
            # ECMA's $ holds at the end of the text only: inside (``(,|$)``) it ends what follows
            if self.flavor is Flavor.ASCII or not has_end_anchor(parsed):
                raise
            return translate_with_lookarounds(self, parsed, flags, free, self.dual)

    @property
    def dual(self) -> Translator:
        """The translator of the other bound of this dialect (ECMA's narrowest and widest readings
        swap; ``re.ASCII`` is one reading): a negated part is read by it."""
        if self.flavor is Flavor.ASCII:
            return self
        if self._dual is None:
            self._dual = Translator(Flavor.ECMA if self._widest else Flavor.ECMA_WIDEST)
            self._dual._dual = self
        return self._dual

    def item(self, op, av, flags: int) -> Node:
        """The language of one parse-tree item (no lookaround in it)."""
        return self._item(op, av, flags)

    @staticmethod
    def untranslatable(what: str) -> Untranslatable:
        """The error for a construct no automaton here maps (``what`` names it)."""
        return Untranslatable(what)

    def _chars(self, ranges, flags: int) -> Node:
        return cls(*(fold(ranges) if flags & re.IGNORECASE else ranges))

    def _in_set(self, items, flags: int) -> Node:
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
                parts.extend(self._category(av, negate))
            else:
                raise Untranslatable(f"the class member {op}")
        ranges = normalize_ranges(parts)
        if flags & re.IGNORECASE:
            ranges = fold(ranges)
        return cls(*(complement(ranges) if negate else ranges))

    def _seq(self, items, flags: int) -> Node:
        return seq(*[self._item(op, av, flags) for op, av in items])

    def _item(self, op, av, flags: int) -> Node:
        if op is _c.LITERAL:
            if self.flavor is not Flavor.ASCII and not flags & re.IGNORECASE:
                return lit(chr(av))
            return self._chars(((av, av),), flags)
        if op is _c.NOT_LITERAL:
            excluded = fold(((av, av),)) if flags & re.IGNORECASE else ((av, av),)
            return cls(*complement(excluded))
        if op is _c.ANY:
            return Cls(ANY_CHAR if flags & re.DOTALL else self._dot)
        if op is _c.IN:
            return self._in_set(av, flags)
        if op is _c.BRANCH:
            return alt(*[self._seq(b, flags) for b in av[1]])
        if op is _c.SUBPATTERN:
            _, add, remove, p = av
            return self._seq(p, (flags | add) & ~remove)
        if op in (_c.MAX_REPEAT, _c.MIN_REPEAT):
            lo, hi, p = av
            return rep(self._seq(p, flags), lo, None if hi == _c.MAXREPEAT else hi)
        if op is _c.AT:
            raise InnerAnchor("an anchor or word boundary inside the pattern")
        if op in (_c.GROUPREF, getattr(_c, "GROUPREF_EXISTS", None)):
            raise Untranslatable("a backreference")
        if op in (_c.ASSERT, _c.ASSERT_NOT):
            raise Untranslatable("a lookaround")
        if op is getattr(_c, "POSSESSIVE_REPEAT", None) or op is getattr(_c, "ATOMIC_GROUP", None):
            raise Untranslatable("a possessive or atomic group")
        raise Untranslatable(f"the construct {op}")

    def _top(self, items, flags: int, free: Node) -> Node:
        """Unanchored ends match ``free`` (anything for a search, nothing for a full match).

        Python's parser hoists a common prefix out of alternatives (``^$|^a$`` becomes ``^(?:$|a$)``),
        so a ``$`` may sit at the end of the last alternative group rather than of the pattern.
        """
        items = list(items)
        if len(items) == 1 and items[0][0] is _c.BRANCH:
            return alt(*[self._top(b, flags, free) for b in items[0][1][1]])
        if len(items) == 1 and items[0][0] is _c.SUBPATTERN:
            _, add, remove, p = items[0][1]
            return self._top(p, (flags | add) & ~remove, free)
        start = False
        while items and items[0][0] is _c.AT and items[0][1] in (_c.AT_BEGINNING, _c.AT_BEGINNING_STRING):
            items.pop(0)
            start = True
        return seq(EMPTY if start else free, self._tail(items, flags, free))

    def _tail(self, items, flags: int, free: Node) -> Node:
        """``items`` then ``free``, unless they end with ``$`` (possibly inside a final group)."""
        items = list(items)
        end = False
        while items and items[-1][0] is _c.AT and items[-1][1] in (_c.AT_END, _c.AT_END_STRING):
            items.pop()
            end = True
        if end:  # Python's $ also matches before a final newline
            return seq(self._seq(items, flags), opt(lit("\n"))) if self._widest else self._seq(items, flags)
        if items and items[-1][0] is _c.BRANCH:
            return seq(
                self._seq(items[:-1], flags), alt(*[self._tail(b, flags, free) for b in items[-1][1][1]])
            )
        if items and items[-1][0] is _c.SUBPATTERN:
            _, add, remove, p = items[-1][1]
            return seq(self._seq(items[:-1], flags), self._tail(p, (flags | add) & ~remove, free))
        return seq(self._seq(items, flags), free)


_ASCII_TRANSLATOR = Translator(Flavor.ASCII)


def regex_node(pattern: str, parsed=None) -> Node:
    """The full-match language of ``pattern`` under ``re.ASCII`` (raises `Untranslatable` for exotic
    syntax); ``parsed``: its `parse` tree when the caller has it already (parsing is the slow part).

    >>> from fsm.automata import to_regex
    >>> to_regex(regex_node(r"(?i)ab"))
    '[Aa][Bb]'
    """
    return _ASCII_TRANSLATOR.translate(parse(pattern) if parsed is None else parsed)
