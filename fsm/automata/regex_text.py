"""Regex text for a language tree (Python ``re`` syntax that interegular also parses).

Grammar terminals and ``to_regex`` need text; ``And``, ``Minus`` and ``Auto`` have no regex syntax,
so they are first turned into a plain tree through a small automaton (`eliminate.as_plain`).

>>> from fsm.automata import cls, lit, rep, seq
>>> to_regex(seq(lit("a"), rep(cls((48, 57)), 1, 3)))
'a[0-9]{1,3}'
"""

from __future__ import annotations

from typing import Any

from ..errors import UnsupportedSchema
from .eliminate import as_plain
from .escapes import encoded_char
from .language import (
    EMPTY,
    Alt,
    And,
    Auto,
    Cls,
    Enc,
    Guard,
    Lit,
    Members,
    Minus,
    Node,
    Rep,
    Seq,
    Val,
    alt,
    members_to_plain,
    rep,
    seq,
)
from .ranges import ANY_CHAR, Ranges, complement, size

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


def to_regex(node: Node, deadline: Any = None) -> str:
    """Regex text for a node without ``And``/``Minus``/``Ref`` (those need an automaton); with a
    `Deadline`, checked every 1024 steps (an encoded format or a product automaton's text can take
    minutes).

    >>> from fsm.automata import Members, lit
    >>> to_regex(Members(((lit("a"), 0, 1), (lit("b"), 1, 1)), lit(",")))
    'b|a,b'
    """

    def group(s: str) -> str:
        return "(?:" + s + ")"

    def atomic(n: Node, s: str) -> bool:
        return (
            isinstance(n, Cls)
            or (isinstance(n, Lit) and len(n.text) == 1)
            or (isinstance(n, Alt) and len(n.items) > 0)
        )

    steps = [0]

    def go(n: Node) -> str:
        steps[0] += 1
        if deadline is not None and steps[0] & 1023 == 0:
            deadline.check("the regex text of a grammar terminal")
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
            if any(_guarded(i) for i in n.items):  # what regex text cannot test is left out (`Guard`)
                n = alt(*[i for i in n.items if not _guarded(i)])
                if not isinstance(n, Alt):
                    return go(n)
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
            return s + _quantifier(n.lo, n.hi)
        if isinstance(n, Members):
            return go(members_to_plain(n))
        if isinstance(n, Enc):
            return go(encode_node(n, deadline=deadline))
        if isinstance(n, Val):
            return go(n.item)
        if isinstance(n, (And, Minus, Auto)):
            return go(as_plain(n))
        if isinstance(n, Guard) and n.required_by:
            raise UnsupportedSchema(
                f"{n.required_by} is enforced by a check of the text the matcher runs, which regex text "
                "cannot say: compile the spec into an index (fsm.compile)",
                n.required_by,
            )
        raise ValueError(f"{type(n).__name__} has no regex text")

    return go(node)


def _guarded(node: Node) -> bool:
    """Whether ``node`` is a branch through a `Guard` that may be left out (a sequence holding one,
    as a value or not).

    >>> from fsm.automata import lit
    >>> _guarded(seq(lit("a"), Guard(bool))), _guarded(lit("a"))
    (True, False)
    """
    while isinstance(node, Val):
        node = node.item
    return isinstance(node, Seq) and any(isinstance(it, Guard) and not it.required_by for it in node.items)


def _quantifier(lo: int, hi: int | None) -> str:
    """The shortest quantifier text for ``lo..hi`` repeats."""
    if (lo, hi) == (0, None):
        return "*"
    if (lo, hi) == (1, None):
        return "+"
    if (lo, hi) == (0, 1):
        return "?"
    if hi is None:
        return f"{{{lo},}}"
    if lo == hi:
        return f"{{{lo}}}"
    return f"{{{lo},{hi}}}"


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


def encode_node(node: Node, full: bool = False, deadline: Any = None) -> Node:
    """Replace every character of a decoded-string language by its JSON encodings (``deadline``:
    checked at each sequence and union, as `to_regex` does).

    >>> from fsm.automata import lit
    >>> to_regex(encode_node(lit('a"')))
    'a\\\\\\\\"'
    """
    if deadline is not None and isinstance(node, (Seq, Alt)):
        deadline.check("the regex text of a grammar terminal")
    if isinstance(node, Enc):
        return encode_node(node.item, node.full, deadline)
    if isinstance(node, Lit):
        return seq(*[encoded_char(((ord(c), ord(c)),)) for c in node.text])
    if isinstance(node, Cls):
        return encoded_char(node.ranges, full and node.ranges == ANY_CHAR)
    if isinstance(node, Seq):
        return seq(*[encode_node(i, full, deadline) for i in node.items])
    if isinstance(node, Alt):
        return alt(*[encode_node(i, full, deadline) for i in node.items])
    if isinstance(node, Rep):
        return rep(encode_node(node.item, full, deadline), node.lo, node.hi)
    if isinstance(node, (And, Minus, Auto)):
        return encode_node(as_plain(node), full, deadline)
    raise ValueError(f"{type(node).__name__} cannot be JSON-encoded as regex text")
