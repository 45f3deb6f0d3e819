r"""U-labels of ``idn-hostname`` with IDNA2008's contextual rules (RFC 5892 appendix A) and the Bidi
rule (RFC 5893) as regular languages over classes of characters, for `idn`.

The characters come from the ``idna`` package's tables (PVALID, CONTEXTJ, CONTEXTO, joining types,
scripts) and `unicodedata`; a label uses those that keep it in NFC whatever their neighbours: each
is NFC alone, none is the second half of a canonical decomposition (so nothing composes with what
precedes it), and the only combining marks are viramas (all of class 9, so never out of order).
Each rule is a language of labels that break it ("a ZWJ not after a virama"); a label must be in
none (complemented DFAs). A name holding a right-to-left label is a Bidi domain name: there every
label keeps the Bidi rule, ASCII ones included (they start with a letter).

>>> from fsm.automata import node_to_char_dfa
>>> ok = node_to_char_dfa(labels()[1])  # right-to-left U-labels
>>> [ok.accepts(s) for s in ("\u05d0\u05f3\u05d1", "۽۾", "ب٠ب", "بي\u200cبي", "٠ب", "ب٠۰ب", "\u05f3\u05d1")]
[True, True, True, True, False, False, False]
"""

from __future__ import annotations

import unicodedata
from functools import cache

from ..automata import (
    And,
    Auto,
    Budget,
    CharDFA,
    Node,
    alt,
    cls,
    complement_dfa,
    minimize_dfa,
    node_to_char_dfa,
    rep,
    seq,
    small_dfa,
    trim_dfa,
)
from ..limits import DEFAULT_LIMITS

_ALNUM = "0123456789abcdefghijklmnopqrstuvwxyz"
MAX_U_LABEL = 9  # characters: 4 ("xn--") + 1 ("-") + 9 * 6 punycode digits <= 63 (below U+40000)
_JAMO = ((0x1100, 0x11FF), (0xA960, 0xA97F), (0xD7B0, 0xD7FF))
_RTL = ("R", "AL", "AN")
_ZWNJ, _ZWJ = 0x200C, 0x200D
_NAMED = {
    "zwnj": _ZWNJ,
    "zwj": _ZWJ,
    "ell": 0x6C,
    "hyphen": 0x2D,
    "middle_dot": 0xB7,
    "keraia": 0x375,
    "kdot": 0x30FB,
}


def _ranges(cps) -> tuple[tuple[int, int], ...]:
    out: list[list[int]] = []
    for c in sorted(cps):
        if out and out[-1][1] == c - 1:
            out[-1][1] = c
        else:
            out.append([c, c])
    return tuple((a, b) for a, b in out)


@cache
def _tables() -> dict | None:
    """Symbols for the classes of characters the rules read (``classes``, ``not``: their complements,
    ``ranges``: each symbol's code points); None without the ``idna`` package."""
    try:
        from idna import idnadata, intranges  # optional: jsonschema's format extras install it
    except ImportError:
        return None

    def members(packed) -> set[int]:
        out: set[int] = set()
        for p in packed:
            lo, hi = intranges._decode_range(p)
            out.update(range(lo, hi))
        return out

    seconds = set()  # second halves of canonical decompositions: they may compose with a predecessor
    for c in range(0x80, 0x110000):
        d = unicodedata.decomposition(chr(c))
        if d and not d.startswith("<") and len(d.split()) == 2:
            seconds.add(int(d.split()[1], 16))
    classes = idnadata.codepoint_classes
    allowed = set()
    for c in members(classes["PVALID"]) | members(classes["CONTEXTJ"]) | members(classes["CONTEXTO"]):
        ch = chr(c)
        ccc = unicodedata.combining(ch)
        if (
            c < 0x80
            or c >= 0x40000
            or c in seconds
            or any(a <= c <= b for a, b in _JAMO)
            or unicodedata.bidirectional(ch) == ""
            or unicodedata.normalize("NFC", ch) != ch
            or (ccc != 0 and ccc != 9)
            or (unicodedata.category(ch).startswith("M") and ccc != 9)
        ):
            continue
        allowed.add(c)
    ascii_ = set(range(0x61, 0x7B)) | set(range(0x30, 0x3A)) | {0x2D}
    every = allowed | ascii_
    by_bidi: dict[str, set[int]] = {}
    for c in every:
        by_bidi.setdefault(unicodedata.bidirectional(chr(c)), set()).add(c)
    joining = {k: members(v) & every for k, v in idnadata.joining_types.items()}
    scripts = {k: members(v) & every for k, v in idnadata.scripts.items()}

    def of(*names: str) -> set[int]:
        return set().union(*(by_bidi.get(n, set()) for n in names))

    viramas = {c for c in allowed if unicodedata.combining(chr(c)) == 9}
    sets = {
        "any": every,
        "non_ascii": allowed,
        "virama": viramas,
        "mark": {c for c in allowed if unicodedata.category(chr(c)).startswith("M")},
        "ld": joining.get("L", set()) | joining.get("D", set()),
        "rd": joining.get("R", set()) | joining.get("D", set()),
        "t": joining.get("T", set()),
        "greek": scripts["Greek"],
        "hebrew": scripts["Hebrew"],
        "hkh": (scripts["Hiragana"] | scripts["Katakana"] | scripts["Han"]) - {0x30FB},
        "rtl": of(*_RTL),
        "r_al": of("R", "AL"),
        "rtl_set": of("R", "AL", "AN", "EN", "ES", "CS", "ET", "ON", "BN", "NSM"),
        "rtl_end": of("R", "AL", "EN", "AN"),
        "en": of("EN"),
        "an": of("AN"),
        "nsm": of("NSM"),
        "l": of("L"),
        # the characters the rules name, each its own class
        **{name: {c} for name, c in _NAMED.items()},
        "ai": set(range(0x660, 0x66A)) & every,
        "eai": set(range(0x6F0, 0x6FA)) & every,
        "geresh": {0x5F3, 0x5F4} & every,
    }
    # one symbol per combination of memberships: the rules are built over a few dozen symbols, not
    # over the thousand ranges of the label alphabet, and the symbols are mapped back at the end
    names = sorted(sets)
    signature: dict[int, tuple] = {c: tuple(n for n in names if c in sets[n]) for c in every}
    ids: dict[tuple, int] = {}
    members_of: list[list[int]] = []
    for c in sorted(every):
        i = ids.setdefault(signature[c], len(ids))
        if i == len(members_of):
            members_of.append([])
        members_of[i].append(c)
    symbols = {n: {i + 1 for sig, i in ids.items() if n in sig} for n in names}
    return {
        "classes": {n: cls(*_ranges(v)) for n, v in symbols.items()},
        "not": {n: cls(*_ranges(set(range(1, len(ids) + 1)) - v)) for n, v in symbols.items()},
        "ranges": [_ranges(m) for m in members_of],
    }


@cache
def letter_marks() -> tuple[tuple[int, int], ...] | None:
    """The combining diacritical marks (U+0300..U+036F, U+1DC0..U+1DFF) that may follow a lowercase
    ASCII letter or a digit in a label read in NFC: IDNA2008 allows the mark (PVALID), and NFC
    composes it with each of them into a character IDNA2008 allows (``e`` + U+0301 is ``é``) or leaves
    the pair as it is; None without the ``idna`` package.

    >>> any(a <= 0x301 <= b for a, b in letter_marks()), any(a <= 0x340 <= b for a, b in letter_marks())
    (True, False)
    """
    try:
        from idna import idnadata, intranges  # optional: jsonschema's format extras install it
    except ImportError:
        return None
    pvalid = idnadata.codepoint_classes["PVALID"]
    out = set()
    for m in (*range(0x300, 0x370), *range(0x1DC0, 0x1E00)):
        if unicodedata.combining(chr(m)) and intranges.intranges_contain(m, pvalid):
            pairs = [(b + chr(m), unicodedata.normalize("NFC", b + chr(m))) for b in _ALNUM]
            if all(c == p or (len(c) == 1 and intranges.intranges_contain(ord(c), pvalid)) for p, c in pairs):
                out.add(m)
    return _ranges(out)


def _not(node: Node) -> Node:
    """Every string outside ``node``'s language (over the symbols and anything else)."""
    d = minimize_dfa(complement_dfa(small_dfa(node, Budget(DEFAULT_LIMITS))))
    return Auto(tuple(tuple(row) for row in d.edges), tuple(d.accepting))


def _context_breaks(c: dict[str, Node], n: dict[str, Node]) -> tuple[Node, ...]:
    """Labels where a CONTEXTJ or CONTEXTO character is out of its context (RFC 5892 appendix A)."""
    star = rep(c["any"], 0, None)
    ends_virama = seq(star, c["virama"])
    not_after_virama = _not(ends_virama)
    left_join = seq(star, c["ld"], rep(c["t"], 0, None))
    right_join = seq(rep(c["t"], 0, None), c["rd"], star)
    return (
        seq(not_after_virama, c["zwj"], star),
        seq(_not(alt(ends_virama, left_join)), c["zwnj"], star),
        seq(not_after_virama, c["zwnj"], _not(right_join)),
        seq(_not(seq(star, c["ell"])), c["middle_dot"], star),
        seq(star, c["middle_dot"], _not(seq(c["ell"], star))),
        seq(star, c["keraia"], _not(seq(c["greek"], star))),
        seq(_not(seq(star, c["hebrew"])), c["geresh"], star),
        seq(rep(n["hkh"], 0, None), c["kdot"], rep(n["hkh"], 0, None)),
        seq(star, c["ai"], star, c["eai"], star),
        seq(star, c["eai"], star, c["ai"], star),
    )


def _shape(c: dict[str, Node], n: dict[str, Node]) -> Node:
    """1..`MAX_U_LABEL` characters holding a non-ASCII one, hyphens inside and not 3rd and 4th, no
    combining mark first."""
    x = c["any"]
    star = rep(x, 0, None)
    return And(
        (
            seq(n["mark"], rep(x, 0, MAX_U_LABEL - 1)),
            seq(star, c["non_ascii"], star),
            _not(
                alt(seq(c["hyphen"], star), seq(star, c["hyphen"]), seq(x, x, c["hyphen"], c["hyphen"], star))
            ),
        )
    )


def _auto(node: Node) -> Node:
    d = minimize_dfa(node_to_char_dfa(node, Budget(DEFAULT_LIMITS)))
    return Auto(tuple(tuple(row) for row in d.edges), tuple(d.accepting))


def _expand(node: Node, ranges: list) -> Node:
    """``node``, a language over symbols, as its minimal DFA over the code points they stand for."""
    d = minimize_dfa(node_to_char_dfa(node, Budget(DEFAULT_LIMITS)))
    edges = []
    for row in d.edges:
        out = []
        for lo, hi, t in row:
            for sym in range(max(lo, 1), min(hi, len(ranges)) + 1):
                out.extend((a, b, t) for a, b in ranges[sym - 1])
        merged: list[list[int]] = []  # symbols' neighbouring code points often share a target
        for a, b, t in sorted(out):
            if merged and merged[-1][1] + 1 == a and merged[-1][2] == t:
                merged[-1][1] = b
            else:
                merged.append([a, b, t])
        edges.append(tuple(map(tuple, merged)))
    trimmed = minimize_dfa(trim_dfa(CharDFA([list(e) for e in edges], list(d.accepting))))
    return Auto(tuple(tuple(row) for row in trimmed.edges), tuple(trimmed.accepting))


@cache
def labels() -> tuple[Node, Node] | None:
    """``(plain, rtl)`` U-labels: with no right-to-left character (any name but a Bidi one may hold
    them), and right-to-left ones keeping the Bidi rule (Bidi names only; their other labels are
    ASCII ones that start with a letter or right-to-left too: a left-to-right U-label there would
    add a copy of the biggest automaton to every use of the format); None without ``idna``."""
    t = _tables()
    if t is None:
        return None
    c, n = t["classes"], t["not"]
    x = rep(c["any"], 0, None)
    core = _auto(And((_shape(c, n), *(_not(b) for b in _context_breaks(c, n)))))
    rtl = And(
        (
            seq(c["r_al"], rep(c["rtl_set"], 0, None)),
            seq(x, c["rtl_end"], rep(c["nsm"], 0, None)),
            alt(rep(n["en"], 0, None), rep(n["an"], 0, None)),
        )
    )
    return (
        _expand(And((core, rep(n["rtl"], 0, None))), t["ranges"]),
        _expand(And((core, rtl)), t["ranges"]),
    )
