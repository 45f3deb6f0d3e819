r"""``idn-hostname`` and ``idn-email`` in exact mode: a subset of IDNA2008 (RFC 5890-5893) and RFC 6531
that needs no check outside a finite automaton, instead of ASCII host names only.

A U-label here is 1..9 characters, lowercase ASCII letters, digits and inner hyphens (never ``--`` as
3rd and 4th) and at least one non-ASCII character that IDNA2008 lists as PVALID, is left-to-right
(so no Bidi rule applies to the name), is no combining mark or conjoining jamo (so the label is in
NFC and starts with no combiner) and needs no context rule (CONTEXTJ/CONTEXTO are not PVALID). Its
A-label then fits 63 octets: punycode spends at most 6 digits per character below U+40000. A name
with such a label has at most 3 labels (so its ASCII form stays under 253 octets), separated by any
of the four IDNA full stops. Left out (rejected although valid): A-labels (``xn--``: their punycode
would have to be decoded), right-to-left labels, contextual characters, longer U-labels.

The code point table comes from the ``idna`` package (what ``jsonschema`` checks ``idn-hostname``
with); without it U-labels are left out and the names are the ASCII host names. It is built once,
on first use (a scan of about 130,000 code points, ~0.1 s), not at import.

>>> from fsm.automata import node_to_char_dfa
>>> d = node_to_char_dfa(idn_hostname(r"[a-z]+(?:\.[a-z]+){0,4}", r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?"))
>>> [d.accepts(s) for s in ("실례.테스트", "a。b", "-é", "ab--é", "a.é.b.c")]
[True, True, False, False, False]
"""

from __future__ import annotations

import unicodedata
from functools import cache

from ..automata import NEVER, And, Node, alt, cls, lit, opt, rep, seq
from .patterns import pattern_node

MAX_U_LABEL = 9  # characters: 4 ("xn--") + 1 ("-") + 9 * 6 punycode digits <= 63
MAX_U_LABELS = 3  # labels of a name holding a U-label: 3 * 63 + 2 <= 253 octets
_SEPARATORS = cls((0x2E, 0x2E), (0x3002, 0x3002), (0xFF0E, 0xFF0E), (0xFF61, 0xFF61))
_JAMO = ((0x1100, 0x11FF), (0xA960, 0xA97F), (0xD7B0, 0xD7FF))


@cache
def u_label_chars() -> tuple[tuple[int, int], ...]:
    """The non-ASCII code points a U-label here may hold, as ranges (empty without ``idna``)."""
    try:
        from idna import idnadata, intranges  # optional: jsonschema's format extras install it
    except ImportError:
        return ()
    out: list[list[int]] = []
    for packed in idnadata.codepoint_classes["PVALID"]:
        lo, hi = intranges._decode_range(packed)
        for c in range(max(lo, 0x80), hi):
            ch = chr(c)
            if (
                unicodedata.bidirectional(ch) != "L"
                or unicodedata.category(ch).startswith("M")
                or any(a <= c <= b for a, b in _JAMO)
                or unicodedata.normalize("NFC", ch) != ch
                or c >= 0x40000
            ):
                continue
            if out and out[-1][1] == c - 1:
                out[-1][1] = c
            else:
                out.append([c, c])
    return tuple((a, b) for a, b in out)


def _u_label() -> Node:
    """1..`MAX_U_LABEL` characters holding a non-ASCII one, hyphens inside and not 3rd and 4th."""
    u = cls(*u_label_chars())
    if u == NEVER:
        return NEVER
    inner = alt(u, cls((0x61, 0x7A), (0x30, 0x39)))  # no hyphen
    x = alt(inner, lit("-"))
    return And(
        (
            seq(inner, opt(seq(rep(x, 0, MAX_U_LABEL - 2), inner))),
            seq(rep(x, 0, None), u, rep(x, 0, None)),
            alt(rep(x, 0, 3), seq(x, x, alt(inner, seq(lit("-"), inner)), rep(x, 0, None))),
        )
    )


def idn_hostname(ascii_names: str, ascii_label: str) -> Node:
    """Host names: ``ascii_names`` (a regex of ASCII names within 253 characters by their own
    counts: no length automaton to pair with), or at most `MAX_U_LABELS` labels, ``ascii_label``
    ones or U-labels, between any IDNA full stops."""
    label = alt(pattern_node(ascii_label, search=False), _u_label())
    names = seq(label, rep(seq(_SEPARATORS, label), 0, MAX_U_LABELS - 1))
    return alt(pattern_node(ascii_names, search=False), names)


def idn_email(literal: str, ascii_names: str, ascii_label: str) -> Node:
    """RFC 6531 addresses: the ASCII grammar's dot-atom and quoted local parts with every non-ASCII
    character added to atext and qtext, ``@``, an `idn_hostname` or an address ``literal`` (a regex).

    >>> from fsm.automata import node_to_char_dfa
    >>> d = node_to_char_dfa(idn_email(r"\\[[0-9.]+\\]", r"[a-z]+", r"[a-z]+"))
    >>> [d.accepts(s) for s in ("δοκιμή@example.com", '"δ x"@a', "a@[1.2.3.4]", "user@ex@mple")]
    [True, True, True, False]
    """
    non_ascii = (0x80, 0x10FFFF)
    atext = cls((0x21, 0x21), (0x23, 0x27), (0x2A, 0x2B), (0x2D, 0x2D), (0x2F, 0x39), (0x3D, 0x3D),
                (0x3F, 0x3F), (0x41, 0x5A), (0x5E, 0x7E), non_ascii)  # fmt: skip
    atom = rep(atext, 1, None)
    dot_atom = seq(atom, rep(seq(lit("."), atom), 0, None))
    qtext = cls((0x20, 0x21), (0x23, 0x5B), (0x5D, 0x7E), non_ascii)
    quoted = seq(lit('"'), rep(alt(qtext, seq(lit("\\"), cls((0x20, 0x7E)))), 0, None), lit('"'))
    domain = alt(idn_hostname(ascii_names, ascii_label), pattern_node(literal, search=False))
    return seq(alt(dot_atom, quoted), lit("@"), domain)
