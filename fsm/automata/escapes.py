"""JSON string escapes, written once: which characters must be escaped and how this library escapes them.

`encoded_char` is the language tree of one character's encodings; `escape_trie` is the same set of
escapes as a trie (what `blocks.ProductBlock` walks); `add_any_escape` is the NFA fragment of every
escape the unrestricted string admits, surrogate pairs included; `splice_escapes` the NFA fragment
of a class's escapes, from their minimal DFA (~8 states where Thompson's tree of them is ~100, once
per state a class's edges lead to: a word-count pattern's 400-state DFA in a string made 43,000).
"""

from __future__ import annotations

import re
from functools import lru_cache
from itertools import product

from .char_dfa import CharDFA, minimize_dfa
from .language import NEVER, Alt, Cls, Lit, Node, Seq, alt, cls, lit, seq
from .ranges import Ranges, intersect, normalize_ranges, subtract

SHORT_ESCAPES = {0x22: '\\"', 0x5C: "\\\\", 0x08: "\\b", 0x0C: "\\f", 0x0A: "\\n", 0x0D: "\\r", 0x09: "\\t"}
MUST_ESCAPE: Ranges = ((0x00, 0x1F), (0x22, 0x22), (0x5C, 0x5C))
MUST_ESCAPE_IN = re.compile('[\\x00-\\x1f"\\\\]')  # a text holding one: `MUST_ESCAPE` as a regex class
# ... and those JSON may escape too: the solidus, as \/ (sorted: `intersect` needs sorted ranges)
MAY_ESCAPE: Ranges = normalize_ranges((*MUST_ESCAPE, (0x2F, 0x2F)))
HEX: Ranges = ((0x30, 0x39), (0x41, 0x46), (0x61, 0x66))
HEX_NOT_D: Ranges = ((0x30, 0x39), (0x41, 0x43), (0x45, 0x46), (0x61, 0x63), (0x65, 0x66))


@lru_cache(maxsize=4096)
def escape_split(ranges: Ranges) -> tuple[Ranges, Ranges]:
    """(the characters of ``ranges`` JSON writes raw, those it may or must write as escapes).

    Memoized: a big object schema builds the same few classes tens of thousands of times (each key
    and string of every member copy), and this range algebra was a third of its compile time.

    >>> escape_split(((0x20, 0x30),))
    (((32, 33), (35, 48)), ((34, 34), (47, 47)))
    """
    return subtract(ranges, MUST_ESCAPE), intersect(ranges, MAY_ESCAPE)


def _hex_digit(d: int) -> Node:
    c = "0123456789abcdef"[d]
    return cls((ord(c), ord(c)), (ord(c.upper()), ord(c.upper())))


def encoded_char(ranges: Ranges, full: bool = False) -> Node:
    """The JSON encodings of one character from ``ranges``: raw where JSON allows it, else escaped.

    With ``full`` (the unrestricted string) any ``\\uXXXX`` escape is allowed too; otherwise
    only the escapes a character needs (and ``\\/``), so decoded sets stay exact.

    >>> import re
    >>> from fsm.automata import to_regex
    >>> rx = to_regex(encoded_char(((0x22, 0x22), (0x61, 0x61))))
    >>> [bool(re.fullmatch(rx, s)) for s in ['a', chr(92) + '"', '"', 'b']]
    [True, True, False, False]
    """
    parts: list[Node] = []
    raw = subtract(ranges, MUST_ESCAPE)
    if raw:
        parts.append(Cls(raw))
    if full:
        hex_ = Cls(HEX)
        not_d = Cls(subtract(HEX, ((68, 68), (100, 100))))
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
    for a, b in intersect(ranges, MAY_ESCAPE):
        for c in range(a, b + 1):
            if c == 0x2F:
                parts.append(lit("\\/"))
                continue
            if c in SHORT_ESCAPES:
                parts.append(lit(SHORT_ESCAPES[c]))
            if c < 0x20:
                parts.append(seq(lit("\\u00"), _hex_digit(c >> 4), _hex_digit(c & 15)))
    return alt(*parts) if parts else NEVER


def _words(node: Node) -> set[str]:
    """Every string of a finite plain tree (``Lit``, ``Cls``, ``Seq``, ``Alt`` only)."""
    if isinstance(node, Lit):
        return {node.text}
    if isinstance(node, Cls):
        return {chr(c) for a, b in node.ranges for c in range(a, b + 1)}
    if isinstance(node, Seq):
        return {"".join(p) for p in product(*(sorted(_words(it)) for it in node.items))}
    if isinstance(node, Alt):
        return set().union(*(_words(it) for it in node.items))
    raise TypeError(f"{type(node).__name__} is not a finite plain tree")


def escape_trie() -> tuple[list[dict[int, int]], dict[int, int]]:
    """A trie of every JSON escape this library writes for a character that must be escaped.

    ``(children, leaf_char)``: node 0 is before the backslash; a leaf maps to its decoded character.

    >>> children, leaf = escape_trie()
    >>> sorted(chr(c) for c in children[0])
    ['\\\\']
    """
    children: list[dict[int, int]] = [{}]
    leaf: dict[int, int] = {}
    for lo, hi in MUST_ESCAPE:
        for c in range(lo, hi + 1):
            for text in sorted(_words(encoded_char(((c, c),), False))):
                node = 0
                for ch in text:
                    nxt = children[node].get(ord(ch))
                    if nxt is None:
                        nxt = len(children)
                        children.append({})
                        children[node][ord(ch)] = nxt
                    node = nxt
                leaf[node] = c
    return children, leaf


def _any_escape_rows() -> list[list[tuple[int, int, int]]]:
    """The rows of `add_any_escape`'s 14 states, targets numbered from 0 (-1: the end state)."""
    rows: list[list[tuple[int, int, int]]] = [[] for _ in range(14)]
    esc, u1, u2, u2d, u3, u4, h2, h3, h4, bs, bu, l1, l2, l3 = range(14)
    e = -1
    rows[esc].extend((c, c, e) for c in b'"/\\bfnrt')
    rows[esc].append((0x75, 0x75, u1))
    rows[u1].extend((a, b, u2) for a, b in HEX_NOT_D)
    rows[u1].extend(((0x44, 0x44, u2d), (0x64, 0x64, u2d)))
    rows[u2].extend((a, b, u3) for a, b in HEX)
    rows[u2d].append((0x30, 0x37, u3))
    rows[u3].extend((a, b, u4) for a, b in HEX)
    rows[u4].extend((a, b, e) for a, b in HEX)
    # a surrogate pair: \uD800-\uDBFF then \uDC00-\uDFFF
    rows[u2d].extend(((0x38, 0x39, h2), (0x41, 0x42, h2), (0x61, 0x62, h2)))
    rows[h2].extend((a, b, h3) for a, b in HEX)
    rows[h3].extend((a, b, h4) for a, b in HEX)
    rows[h4].append((0x5C, 0x5C, bs))
    rows[bs].append((0x75, 0x75, bu))
    rows[bu].extend(((0x44, 0x44, l1), (0x64, 0x64, l1)))
    rows[l1].extend(((0x43, 0x46, l2), (0x63, 0x66, l2)))
    rows[l2].extend((a, b, l3) for a, b in HEX)
    rows[l3].extend((a, b, e) for a, b in HEX)
    return rows


_ANY_ESCAPE = _any_escape_rows()


def _rows_maker(rows: list[list[tuple[int, int, int]]]):
    """A function ``(n0, e) -> rows`` with targets ``t`` renumbered to ``n0 + t`` and -1 to ``e``,
    written out as one tuple display: CPython builds it with no loop (~5 µs for the 47 edges of
    `_ANY_ESCAPE`, where a comprehension per row took ~15 µs, and a schema has a free string, each
    with its escapes, every few properties). The source is made here from ints alone."""

    def target(t: int) -> str:
        return "e" if t < 0 else f"n0 + {t}"

    body = ", ".join("(" + "".join(f"({a}, {b}, {target(t)}), " for a, b, t in row) + ")" for row in rows)
    return eval(f"lambda n0, e: ({body},)")  # (ints of a constant table: no outside input)


_any_escape_at = _rows_maker(_ANY_ESCAPE)


def add_any_escape(nfa, s: int, e: int) -> None:
    """Add to ``nfa`` (``new()`` or ``made()``, ``trans``, ``eps``) the edges from ``s`` to ``e`` of
    every escape a JSON string admits: a short escape, ``\\u`` and four hex digits that are not a
    surrogate, or a surrogate pair (one astral character).

    Every free string has this fragment: its 14 states are made at once from a template (state by
    state, they were a tenth of a small schema's compile).

    >>> from types import SimpleNamespace
    >>> trans, eps = [[], []], [[], []]
    >>> add_any_escape(SimpleNamespace(trans=trans, eps=eps, made=lambda n: None), 0, 1)
    >>> len(trans), trans[0], trans[2][:2]
    (16, [(92, 92, 2)], ((34, 34, 1), (47, 47, 1)))
    """
    trans = nfa.trans
    n0 = len(trans)
    # finished rows: tuples, and one shared empty row (no list for the garbage collector per state)
    trans.extend(_any_escape_at(n0, e))
    nfa.eps.extend([()] * len(_ANY_ESCAPE))
    nfa.made(len(trans))
    trans[s].append((0x5C, 0x5C, n0))


@lru_cache(maxsize=1024)
def escape_dfa(special: Ranges) -> CharDFA:
    """The minimal DFA of the JSON spellings of one character of ``special`` (`encoded_char`).

    >>> d = escape_dfa(((0x00, 0x1F),))
    >>> len(d), d.accepts("\\\\u001F"), d.accepts("\\\\n"), d.accepts("\\\\u0020")
    (7, True, True, False)
    """
    rows: list[dict[int, int]] = [{}]
    accepting = [False]
    for text in _words(encoded_char(special)):
        q = 0
        for ch in text:
            t = rows[q].get(ord(ch))
            if t is None:
                t = rows[q][ord(ch)] = len(rows)
                rows.append({})
                accepting.append(False)
            q = t
        accepting[q] = True
    return minimize_dfa(CharDFA([sorted((c, c, t) for c, t in row.items()) for row in rows], accepting))


def splice_escapes(nfa, special: Ranges, e: int) -> int:
    """Add to ``nfa`` (``new()``, ``trans``, ``eps``) a copy of `escape_dfa` of ``special`` ending
    at ``e``; return its start state.

    >>> from types import SimpleNamespace
    >>> trans, eps = [[]], [[]]
    >>> def new():
    ...     trans.append([]); eps.append([])
    ...     return len(trans) - 1
    >>> s = splice_escapes(SimpleNamespace(new=new, trans=trans, eps=eps), ((0x22, 0x22),), 0)
    >>> trans[s], trans[2]
    ([(92, 92, 2)], [(34, 34, 0)])
    """
    d = escape_dfa(special)
    # the final states without edges are ``e`` itself: a state less per copy
    ids = [e if d.accepting[q] and not d.edges[q] else nfa.new() for q in range(len(d))]
    for q, edges in enumerate(d.edges):
        if ids[q] == e:
            continue
        if d.accepting[q]:
            nfa.eps[ids[q]].append(e)
        nfa.trans[ids[q]].extend((lo, hi, ids[t]) for lo, hi, t in edges)
    return ids[0]
