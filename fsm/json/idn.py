r"""``idn-hostname`` and ``idn-email`` in exact mode: a subset of IDNA2008 (RFC 5890-5893) and RFC 6531
that needs no check outside a finite automaton, instead of ASCII host names only.

A U-label here (`idn_rules`) is 1..9 characters: lowercase ASCII letters, digits and inner hyphens
(never ``--`` as 3rd and 4th) and at least one non-ASCII character that IDNA2008 lists as PVALID,
CONTEXTJ or CONTEXTO, in context (RFC 5892 appendix A: joiners after a virama or between joining
letters, the middle dots, keraia, geresh, Arabic-Indic digits), keeping the Bidi rule (RFC 5893) when
right-to-left, in NFC by construction (no character that composes with its predecessor, viramas the
only marks, none first). Its A-label then fits 63 octets: punycode spends at most 6 digits per
character below U+40000. A name with such a label has at most 3 labels (so its ASCII form stays under
253 octets), separated by any of the four IDNA full stops. An ``idn-email`` domain may also spell
letters decomposed (``cafe\u0301``, `decomposed_labels`): validators read it in NFC.

A-labels (``xn--``) are no automaton of a useful size either: every prefix of such a label has a
future of its own (the digits are a number), so an automaton of them is one state per text read; a
token row from inside one walks ~21,000 alphanumeric prefixes of SmolLM2's vocabulary (after
``xn--``: ~12,000 live even with no basic code point), each state made with ~37 successors and a 1 KB
table row: past 512 MB (``max_memory``) in the first row (measured with a block of text-keyed
virtual states in the lazy DFA). Nor are U-labels over 9 characters: their A-label must fit 63
octets, and its length (deltas between code points, their positions, an adapting bias) is known
only from the whole label (the suite's 52-letter Greek label encodes to exactly 63). `a_labels` adds
the names with either by a text check where the string ends (the ``idna`` package's encoding).
Left out (rejected although valid):

- other combining marks in U-labels (NFC needs what composes with what).

The tables come from the ``idna`` package (what ``jsonschema`` checks ``idn-hostname`` with);
without it U-labels are left out and the names are the ASCII host names. They are built once, on
first use (~2 s: every code point's decomposition is read), not at import.

>>> from fsm.automata import node_to_char_dfa
>>> d = node_to_char_dfa(idn_hostname(r"[a-z]+(?:\.[a-z]+){0,4}", r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?"))
>>> [d.accepts(s) for s in ("실례.테스트", "a。b", "-é", "ab--é", "a.é.b.c", "א״ב.com", "א״ב.1com")]
[True, True, False, False, False, True, False]
"""

from __future__ import annotations

from ..automata import ANY_CHAR, And, Cls, Node, alt, cls, lit, rep, seq
from .idn_rules import MAX_U_LABEL, labels, letter_marks
from .patterns import pattern_node

MAX_U_LABELS = 3  # labels of a name holding a U-label: 3 * 63 + 2 <= 253 octets
_SEPARATORS = cls((0x2E, 0x2E), (0x3002, 0x3002), (0xFF0E, 0xFF0E), (0xFF61, 0xFF61))


def decomposed_labels() -> Node | None:
    """Lowercase letter-digit-hyphen labels of 1..`MAX_U_LABEL` characters with a combining mark
    (`idn_rules.letter_marks`) after some letters or digits, ``cafe\\u0301``; None without ``idna``.
    Not in NFC when a mark composes with its letter (into ``é``), so no U-labels, but their NFC is
    one: no leading or trailing hyphen, two hyphens in a row only after three letters or digits
    (each one character in the NFC, or two with a mark that stays: never 3rd and 4th), at most 9
    characters (so its A-label fits 63 octets), Latin letters only (no context or Bidi rule applies).

    >>> from fsm.automata import node_to_char_dfa
    >>> d = node_to_char_dfa(decomposed_labels())
    >>> [d.accepts(s) for s in ("cafe\\u0301", "x\\u0301-1\\u0301", "\\u0301a", "-e\\u0301", "ab--e\\u0301", "a\\u0301\\u0301")]
    [True, True, False, False, False, False]
    """
    marks = letter_marks()
    if not marks:
        return None
    unit = seq(cls((0x30, 0x39), (0x61, 0x7A)), rep(cls(*marks), 0, 1))
    hyphen = lit("-")
    # units: a letter or digit and its mark; hyphens go between units, a pair of them only after the
    # third (at least 3 characters before it in the NFC, composed or not)
    single = seq(rep(hyphen, 0, 1), unit)
    body = alt(
        seq(unit, rep(single, 0, 2)),
        seq(unit, single, single, rep(seq(rep(hyphen, 0, None), unit), 1, None)),
    )
    return And((body, rep(cls((0x2D, 0x2D), (0x30, 0x39), (0x61, 0x7A), *marks), 1, MAX_U_LABEL)))


def idn_hostname(ascii_names: str, ascii_label: str, u_labels: bool = True, decomposed: bool = False) -> Node:
    """Host names: ``ascii_names`` (a regex of ASCII names within 253 characters by their own
    counts: no length automaton to pair with), or at most `MAX_U_LABELS` labels, ``ascii_label``
    ones or U-labels (`idn_rules.labels`), between any IDNA full stops; a name holding a
    right-to-left label keeps the Bidi rule in every label (right-to-left ones, ASCII ones that start
    with a letter).
    ``u_labels=False``: the ASCII names only; ``decomposed``: `decomposed_labels` too (in names
    without a right-to-left label), names whose NFC is a host name."""
    names = pattern_node(ascii_names, search=False)
    found = labels() if u_labels else None
    if found is None:
        return names
    plain, rtl = found
    extra = decomposed_labels() if decomposed else None
    ascii_ = pattern_node(ascii_label, search=False)
    ascii_bidi = And((ascii_, seq(cls((0x41, 0x5A), (0x61, 0x7A)), rep(Cls(ANY_CHAR), 0, None))))

    def up_to_three(label: Node) -> Node:
        return seq(label, rep(seq(_SEPARATORS, label), 0, MAX_U_LABELS - 1))

    plain_names = up_to_three(alt(ascii_, plain) if extra is None else alt(ascii_, plain, extra))
    return alt(names, plain_names, up_to_three(alt(ascii_bidi, rtl)))


def idn_email(literal: str, ascii_names: str, ascii_label: str, u_labels: bool = True) -> Node:
    """RFC 6531 addresses: the ASCII grammar's dot-atom and quoted local parts with every non-ASCII
    character added to atext and qtext, ``@``, an `idn_hostname` (``u_labels``: as there) or an
    address ``literal`` (a regex).

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
    # RFC 6531's sub-domain is a U-label, in NFC; validators (and the JSON-Schema-Test-Suite: "a
    # domain label that is not in Unicode NFC is valid") read it normalized: decomposed letters too
    host = idn_hostname(ascii_names, ascii_label, u_labels, decomposed=True)
    domain = alt(host, pattern_node(literal, search=False))
    return seq(alt(dot_atom, quoted), lit("@"), domain)
