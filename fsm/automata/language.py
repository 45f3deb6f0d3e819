"""A small regular-language AST: what JSON Schema translation produces before it becomes an automaton.

The nodes describe languages over Unicode characters. Two of them are not plain regex syntax:
``Members`` (an ordered list of optional and required items with separators between the present
ones — linear as an automaton, quadratic as regex text) and ``Enc`` (a language of *decoded* string
contents, turned into the language of their JSON encodings). ``And`` and ``Minus`` (intersection and
difference with a finite set of words) act on small decoded-string languages only.

>>> to_regex(seq(lit("a"), rep(cls((48, 57)), 1, 3)))
'a[0-9]{1,3}'
"""

from __future__ import annotations

from dataclasses import dataclass

MAX_CP = 0x10FFFF
SURROGATES = (0xD800, 0xDFFF)

Ranges = tuple[tuple[int, int], ...]


class Node:
    """Base class of the AST nodes (all frozen dataclasses, hashable)."""

    __slots__ = ()


@dataclass(frozen=True)
class Lit(Node):
    text: str


@dataclass(frozen=True)
class Cls(Node):
    """One character from a set of code point ranges (sorted, disjoint, no surrogates)."""

    ranges: Ranges


@dataclass(frozen=True)
class Seq(Node):
    items: tuple[Node, ...]


@dataclass(frozen=True)
class Alt(Node):
    items: tuple[Node, ...]


@dataclass(frozen=True)
class Rep(Node):
    item: Node
    lo: int
    hi: int | None  # None: unbounded


@dataclass(frozen=True)
class Members(Node):
    """Items in this order, each present ``lo..hi`` times, ``sep`` between consecutive present ones.

    ``min_count``/``max_count`` bound the total number of present items.
    """

    items: tuple[tuple[Node, int, int | None], ...]
    sep: Node
    min_count: int = 0
    max_count: int | None = None


@dataclass(frozen=True)
class Enc(Node):
    """JSON string content (without quotes) whose decoded text is in ``item``'s language.

    ``full`` marks the unrestricted string: every ``\\uXXXX`` escape is allowed, not only the
    canonical encodings.
    """

    item: Node
    full: bool = False


@dataclass(frozen=True)
class And(Node):
    items: tuple[Node, ...]


@dataclass(frozen=True)
class Minus(Node):
    item: Node
    words: frozenset[str]


@dataclass(frozen=True)
class Auto(Node):
    """A literal character DFA: ``edges[s]`` are (lo, hi, target) triples, state 0 is initial."""

    edges: tuple[tuple[tuple[int, int, int], ...], ...]
    accepting: tuple[bool, ...]


@dataclass(frozen=True)
class Val(Node):
    """Marks one whole JSON value (grammar output keeps it one terminal when it is regular)."""

    item: Node


@dataclass(frozen=True)
class AnyJson(Node):
    """Any JSON value, nested without bound (not regular: the lazy DFA runs it as a pushdown block,
    see `json_any`); layout by ``indent`` (None: compact) at nesting ``depth``."""

    indent: int | None = None
    depth: int = 0
    max_string_length: int | None = None


@dataclass(frozen=True)
class Ref(Node):
    """A named rule (grammar output only)."""

    name: str


NEVER = Alt(())
EMPTY = Seq(())


# ---------------------------------------------------------------------------------------------
# Smart constructors: they keep the tree small and fold the empty language away.


def lit(text: str) -> Node:
    return Lit(text) if text else EMPTY


def cls(*ranges: tuple[int, int]) -> Node:
    rs = normalize_ranges(ranges)
    return Cls(rs) if rs else NEVER


def seq(*items: Node) -> Node:
    out: list[Node] = []
    for it in items:
        if it == NEVER:
            return NEVER
        if isinstance(it, Seq):
            out.extend(it.items)
        else:
            out.append(it)
    merged: list[Node] = []
    for it in out:  # join adjacent literals
        if merged and isinstance(it, Lit) and isinstance(merged[-1], Lit):
            merged[-1] = Lit(merged[-1].text + it.text)
        else:
            merged.append(it)
    return merged[0] if len(merged) == 1 else Seq(tuple(merged))


def alt(*items: Node) -> Node:
    out: list[Node] = []
    seen = set()
    for it in items:
        parts = it.items if isinstance(it, Alt) else (it,)
        for p in parts:
            if p not in seen:
                seen.add(p)
                out.append(p)
    return out[0] if len(out) == 1 else Alt(tuple(out))


def opt(item: Node) -> Node:
    return alt(EMPTY, item) if item != NEVER else EMPTY


def rep(item: Node, lo: int, hi: int | None) -> Node:
    if hi is not None and hi < lo:
        return NEVER
    if item == NEVER:
        return EMPTY if lo == 0 else NEVER
    if item == EMPTY or hi == 0:
        return EMPTY
    if lo == 1 and hi == 1:
        return item
    return Rep(item, lo, hi)


def normalize_ranges(ranges) -> Ranges:
    """Sorted, merged, surrogate-free ranges.

    >>> normalize_ranges([(5, 9), (0, 5), (0xD000, 0xE000)])
    ((0, 9), (53248, 55295), (57344, 57344))
    """
    rs = sorted((int(a), int(b)) for a, b in ranges if a <= b)
    out: list[tuple[int, int]] = []
    for a, b in rs:
        if out and a <= out[-1][1] + 1:
            if b > out[-1][1]:
                out[-1] = (out[-1][0], b)
        else:
            out.append((a, b))
    cut: list[tuple[int, int]] = []
    for a, b in out:
        if b < SURROGATES[0] or a > SURROGATES[1]:
            cut.append((a, b))
        else:
            if a < SURROGATES[0]:
                cut.append((a, SURROGATES[0] - 1))
            if b > SURROGATES[1]:
                cut.append((SURROGATES[1] + 1, b))
    return tuple(cut)


def complement(ranges: Ranges) -> Ranges:
    out, lo = [], 0
    for a, b in ranges:
        if a > lo:
            out.append((lo, a - 1))
        lo = b + 1
    if lo <= MAX_CP:
        out.append((lo, MAX_CP))
    return normalize_ranges(out)


def intersect(a: Ranges, b: Ranges) -> Ranges:
    out, i, j = [], 0, 0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if lo <= hi:
            out.append((lo, hi))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return tuple(out)


def subtract(a: Ranges, b: Ranges) -> Ranges:
    return intersect(a, complement(b))


def size(ranges: Ranges) -> int:
    return sum(b - a + 1 for a, b in ranges)


ANY_CHAR: Ranges = normalize_ranges([(0, MAX_CP)])


# ---------------------------------------------------------------------------------------------
# Regex text (Python `re` syntax that interegular also parses: no \u escapes, no anchors).

_SPECIAL = set(".^$*+?{}[]\\|()/")
_CLASS_SPECIAL = set("\\]^-[/")


def _char(c: int, in_class: bool) -> str:
    if c < 0x20 or c == 0x7F or (0x80 <= c < 0xA0):
        return f"\\x{c:02x}"
    ch = chr(c)
    if ch in (_CLASS_SPECIAL if in_class else _SPECIAL) or ch == " " or ch == "-":
        return "\\" + ch
    if c >= 0x100 and not ch.isprintable():
        return ch  # interegular has no \u escape; raw is exact
    return ch


def class_text(ranges: Ranges) -> str:
    """Regex text for one character out of ``ranges``.

    >>> class_text(((97, 122),)), class_text(complement(((34, 34),)))
    ('[a-z]', '[^"]')
    """
    if not ranges:
        raise ValueError("empty character class")
    if ranges == ANY_CHAR:
        return "[\\s\\S]"
    if len(ranges) == 1 and ranges[0][0] == ranges[0][1]:
        return _char(ranges[0][0], False)
    comp = complement(ranges)
    neg = size(comp) < size(ranges)
    body = comp if neg else ranges
    parts = []
    for a, b in body:
        if a == b:
            parts.append(_char(a, True))
        elif b == a + 1:
            parts.append(_char(a, True) + _char(b, True))
        else:
            parts.append(_char(a, True) + "-" + _char(b, True))
    return "[" + ("^" if neg else "") + "".join(parts) + "]"


def to_regex(node: Node) -> str:
    """Regex text for a node without ``And``/``Minus``/``Ref`` (those need an automaton)."""

    def group(s: str) -> str:
        return "(?:" + s + ")"

    def atomic(n: Node, s: str) -> bool:
        return (
            isinstance(n, Cls)
            or (isinstance(n, Lit) and len(n.text) == 1)
            or (isinstance(n, Alt) and len(n.items) > 0)
        )

    def go(n: Node) -> str:
        if isinstance(n, Lit):
            return "".join(_char(ord(c), False) for c in n.text)
        if isinstance(n, Cls):
            return class_text(n.ranges)
        if isinstance(n, Seq):
            parts = []
            for it in n.items:
                inner = it
                while isinstance(inner, Val):
                    inner = inner.item
                s = go(it)
                loose = isinstance(inner, (Alt, Members, Enc, And, Minus, Auto)) and _top_level_bar(s)
                parts.append(group(s) if loose else s)
            return "".join(parts)
        if isinstance(n, Alt):
            if not n.items:
                raise ValueError("the empty language has no regex")
            if EMPTY in n.items:
                rest = alt(*[i for i in n.items if i != EMPTY])
                s = go(rest)
                return (s if atomic(rest, s) and not isinstance(rest, Alt) else group(s)) + "?"
            return "|".join(go(i) for i in n.items) if len(n.items) > 1 else go(n.items[0])
        if isinstance(n, Rep):
            s = go(n.item)
            if not (isinstance(n.item, Cls) or (isinstance(n.item, Lit) and len(n.item.text) == 1)):
                s = group(s)
            if (n.lo, n.hi) == (0, None):
                return s + "*"
            if (n.lo, n.hi) == (1, None):
                return s + "+"
            if (n.lo, n.hi) == (0, 1):
                return s + "?"
            if n.hi is None:
                return f"{s}{{{n.lo},}}"
            if n.lo == n.hi:
                return f"{s}{{{n.lo}}}"
            return f"{s}{{{n.lo},{n.hi}}}"
        if isinstance(n, Members):
            return go(members_to_plain(n))
        if isinstance(n, Enc):
            return go(encode_node(n))
        if isinstance(n, Val):
            return go(n.item)
        if isinstance(n, (And, Minus, Auto)):
            from .eliminate import as_plain

            return go(as_plain(n))
        raise ValueError(f"{type(n).__name__} has no regex text")

    return go(node)


def _top_level_bar(rx: str) -> bool:
    """Whether regex text has a ``|`` outside every group and class (so it needs a group to be a term)."""
    depth, i, in_class = 0, 0, False
    while i < len(rx):
        c = rx[i]
        if c == "\\":
            i += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
            if rx[i + 1 : i + 2] == "^":
                i += 1
            if rx[i + 1 : i + 2] == "]":
                i += 1
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == "|" and depth == 0:
            return True
        i += 1
    return False


def members_to_plain(m: Members) -> Node:
    """Rewrite ``Members`` with plain nodes (quadratic in the number of optional items)."""
    items = m.items
    n = len(items)
    sat = (m.max_count + 1) if m.max_count is not None else m.min_count
    memo: dict[tuple[int, int, int, bool], Node] = {}

    def state(i: int, k: int, c: int, started: bool) -> Node:
        # At item i with k occurrences of it so far, c items in all (saturated), something emitted.
        key = (i, k, c, started)
        if key in memo:
            return memo[key]
        memo[key] = NEVER  # cycles are handled below, never through recursion
        if i == n:
            ok = c >= m.min_count and (m.max_count is None or c <= m.max_count)
            r = EMPTY if ok else NEVER
        else:
            node, lo, hi = items[i]
            leave = state(i + 1, 0, c, started) if k >= lo else NEVER
            c2 = min(c + 1, sat)
            k2 = min(k + 1, lo) if hi is None else k + 1
            one = seq(m.sep, node) if started else node
            if hi is not None and k >= hi:
                r = leave
            elif hi is None and (k2, c2, True) == (k, c, started):
                r = seq(rep(one, 0, None), leave)  # a self-loop: star it
            else:
                nxt = state(i, k2, c2, True)
                # alt(X, seq(Y, X)) == seq(opt(Y), X): keeps the text from doubling at each item
                r = seq(opt(one), leave) if nxt == leave else alt(leave, seq(one, nxt))
        memo[key] = r
        return r

    return state(0, 0, 0, False)


# ---------------------------------------------------------------------------------------------
# JSON string encoding of decoded characters.

_SHORT_ESCAPES = {0x22: '\\"', 0x5C: "\\\\", 0x08: "\\b", 0x0C: "\\f", 0x0A: "\\n", 0x0D: "\\r", 0x09: "\\t"}
_MUST_ESCAPE: Ranges = ((0x00, 0x1F), (0x22, 0x22), (0x5C, 0x5C))
_HEX = ((48, 57), (65, 70), (97, 102))


def _hex_digit(d: int) -> Node:
    c = "0123456789abcdef"[d]
    return cls((ord(c), ord(c)), (ord(c.upper()), ord(c.upper())))


def encoded_char(ranges: Ranges, full: bool = False) -> Node:
    """The JSON encodings of one character from ``ranges``: raw where JSON allows it, else escaped.

    With ``full`` (the unrestricted string) any ``\\uXXXX`` escape is allowed too; otherwise
    only the escapes a character needs (and ``\\/``), so decoded sets stay exact.

    >>> import re
    >>> rx = to_regex(encoded_char(((0x22, 0x22), (0x61, 0x61))))
    >>> [bool(re.fullmatch(rx, s)) for s in ['a', chr(92) + '"', '"', 'b']]
    [True, True, False, False]
    """
    parts: list[Node] = []
    raw = subtract(ranges, _MUST_ESCAPE)
    if raw:
        parts.append(Cls(raw))
    if full:
        hex_ = Cls(_HEX)
        not_d = Cls(subtract(_HEX, ((68, 68), (100, 100))))
        low = Cls(((48, 55),))
        parts.append(
            seq(
                lit("\\"),
                alt(
                    cls(
                        (0x22, 0x22),
                        (0x2F, 0x2F),
                        (0x5C, 0x5C),
                        (0x62, 0x62),
                        (0x66, 0x66),
                        (0x6E, 0x6E),
                        (0x72, 0x72),
                        (0x74, 0x74),
                    ),
                    seq(
                        lit("u"),
                        alt(seq(not_d, hex_, hex_, hex_), seq(cls((68, 68), (100, 100)), low, hex_, hex_)),
                    ),
                ),
            )
        )
        return alt(*parts)
    for a, b in intersect(ranges, _MUST_ESCAPE + ((0x2F, 0x2F),)):
        for c in range(a, b + 1):
            if c == 0x2F:
                parts.append(lit("\\/"))
                continue
            if c in _SHORT_ESCAPES:
                parts.append(lit(_SHORT_ESCAPES[c]))
            if c < 0x20:
                parts.append(seq(lit("\\u00"), _hex_digit(c >> 4), _hex_digit(c & 15)))
    return alt(*parts) if parts else NEVER


def encode_node(node: Node, full: bool = False) -> Node:
    """Replace every character of a decoded-string language by its JSON encodings."""
    if isinstance(node, Enc):
        return encode_node(node.item, node.full)
    if isinstance(node, Lit):
        return seq(*[encoded_char(((ord(c), ord(c)),)) for c in node.text])
    if isinstance(node, Cls):
        return encoded_char(node.ranges, full and node.ranges == ANY_CHAR)
    if isinstance(node, Seq):
        return seq(*[encode_node(i, full) for i in node.items])
    if isinstance(node, Alt):
        return alt(*[encode_node(i, full) for i in node.items])
    if isinstance(node, Rep):
        return rep(encode_node(node.item, full), node.lo, node.hi)
    if isinstance(node, (And, Minus, Auto)):
        from .eliminate import as_plain

        return encode_node(as_plain(node), full)
    raise ValueError(f"{type(node).__name__} cannot be JSON-encoded as regex text")
