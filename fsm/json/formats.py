"""Regexes for JSON Schema ``format`` values, as decoded-string languages.

Each regex describes a subset of the format's RFC syntax that every mainstream validator accepts
(checked against `jsonschema`'s format checker in the tests): dates honour month lengths and leap
years, times have 1..9 fraction digits and an explicit offset, hostnames keep to at most five labels
of at most 48 characters (so the 253-character limit always holds), URIs are scheme-based
(``//authority`` or rootless) with percent-escapes.

Formats not listed in `FORMATS` are annotations: validators ignore them, and so does the schema
compiler (``int32``, ``float``, ``password`` and the like are common on numbers and strings).

>>> import re
>>> bool(re.fullmatch(FORMATS["date"], "2024-02-29")), bool(re.fullmatch(FORMATS["date"], "2023-02-29"))
(True, False)
"""

from __future__ import annotations

from collections.abc import Callable

from ..automata import ANY_CHAR, And, Cls, Node, rep
from .a_labels import checked_idn_names, checked_names
from .idn import idn_email, idn_hostname
from .patterns import pattern_node
from .regex_format import regex_format

_YEAR = r"(?:000[1-9]|00[1-9][0-9]|0[1-9][0-9]{2}|[1-9][0-9]{3})"
_MONTH_DAY = (
    r"(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])"
    r"|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)"
    r"|02-(?:0[1-9]|1[0-9]|2[0-8]))"
)
_LEAP_YEAR = r"(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:0[48]|[2468][048]|[13579][26])00)"
DATE = rf"(?:{_YEAR}-{_MONTH_DAY}|{_LEAP_YEAR}-02-29)"
_HOUR = r"(?:[01][0-9]|2[0-3])"
TIME = rf"{_HOUR}:[0-5][0-9]:[0-5][0-9](?:\.[0-9]{{1,9}})?(?:Z|[+-]{_HOUR}:[0-5][0-9])"
DATE_TIME = rf"{DATE}T{TIME}"

_N = r"[0-9]{1,4}"


def _duration(n: str) -> str:
    """RFC 3339 appendix A: a year takes an optional month, which takes an optional day (so not
    ``P1Y2D``); hours, minutes and seconds alike; weeks alone. ``n``: the digits of one count."""
    date = rf"(?:{n}Y(?:{n}M(?:{n}D)?)?|{n}M(?:{n}D)?|{n}D)"
    time = rf"T(?:{n}H(?:{n}M(?:{n}S)?)?|{n}M(?:{n}S)?|{n}S)"
    return rf"P(?:{date}(?:{time})?|{time}|{n}W)"


DURATION = _duration(_N)


def _label(most: int) -> str:
    """A hostname label of 1..``most`` letters, digits and inner hyphens, never with ``--`` as its 3rd
    and 4th characters (reserved for A-labels, ``xn--``: decoding their punycode is no automaton of a
    useful size, see `a_labels`)."""
    c, h = "[A-Za-z0-9]", "[A-Za-z0-9-]"
    return rf"{c}(?:{c}|{h}{c}|{h}{h}{c}|{h}(?:{c}{h}|-{c}){h}{{0,{most - 5}}}{c})?"


_LABEL = _label(48)
HOSTNAME = rf"{_LABEL}(?:\.{_LABEL}){{0,4}}"
_IDN_LABEL = r"[a-z0-9]{1,20}(?:-[a-z0-9]{1,20}){0,2}"
IDN_HOSTNAME = rf"{_IDN_LABEL}(?:\.{_IDN_LABEL}){{0,4}}"
_ATOM = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+"
EMAIL = rf"{_ATOM}(?:\.{_ATOM})*@{HOSTNAME}"

_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])"
IPV4 = rf"{_OCTET}(?:\.{_OCTET}){{3}}"
_H = r"[0-9A-Fa-f]{1,4}"
_LS32 = rf"(?:{_H}:{_H}|{IPV4})"
IPV6 = (
    rf"(?:(?:{_H}:){{6}}{_LS32}"
    rf"|::(?:{_H}:){{5}}{_LS32}"
    rf"|(?:{_H})?::(?:{_H}:){{4}}{_LS32}"
    rf"|(?:(?:{_H}:){{0,1}}{_H})?::(?:{_H}:){{3}}{_LS32}"
    rf"|(?:(?:{_H}:){{0,2}}{_H})?::(?:{_H}:){{2}}{_LS32}"
    rf"|(?:(?:{_H}:){{0,3}}{_H})?::{_H}:{_LS32}"
    rf"|(?:(?:{_H}:){{0,4}}{_H})?::{_LS32}"
    rf"|(?:(?:{_H}:){{0,5}}{_H})?::{_H}"
    rf"|(?:(?:{_H}:){{0,6}}{_H})?::)"
)
UUID = r"[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}"

_UNRESERVED = r"A-Za-z0-9._~\-"
_SUB_DELIMS = r"!$&'()*+,;="
_PCT = r"%[0-9A-Fa-f]{2}"
_SCHEME = r"[A-Za-z][A-Za-z0-9+.\-]*"


def _uri_grammar(unreserved: str, private: str = "") -> tuple[str, str]:
    """RFC 3986's URI and URI-reference with ``unreserved`` characters (a class body; RFC 3987's IRIs
    add ``ucschar``, and ``private`` characters in the query)."""
    pchar = rf"(?:[{unreserved}{_SUB_DELIMS}:@]|{_PCT})"
    segment_nc = rf"(?:[{unreserved}{_SUB_DELIMS}@]|{_PCT})"
    reg_name = rf"(?:[{unreserved}{_SUB_DELIMS}]|{_PCT})*"
    userinfo = rf"(?:[{unreserved}{_SUB_DELIMS}:]|{_PCT})*"
    ip_literal = rf"\[(?:{IPV6}|[vV][0-9A-Fa-f]+\.[{_UNRESERVED}{_SUB_DELIMS}:]+)\]"
    authority = rf"(?:{userinfo}@)?(?:{reg_name}|{ip_literal})(?::[0-9]{{1,5}})?"
    path_abempty = rf"(?:/{pchar}*)*"
    query = rf"(?:\?(?:{pchar}|[/?{private}])*)?(?:#(?:{pchar}|[/?])*)?"
    uri = rf"{_SCHEME}:(?://{authority}{path_abempty}|/?{pchar}+{path_abempty}|){query}"
    relative = rf"(?://{authority}{path_abempty}|/(?:{pchar}+{path_abempty})?|{segment_nc}+{path_abempty}|)"
    return uri, rf"(?:{uri}|{relative}{query})"


URI, URI_REFERENCE = _uri_grammar(_UNRESERVED)


def _expression(first: str, prefix_digits: int) -> str:
    """An RFC 6570 expression (levels 1-4; not the reserved operators ``= , ! @ |``) whose variable
    names start with ``first``, prefix lengths of up to ``prefix_digits`` digits."""
    varname = rf"{first}(?:\.?(?:[A-Za-z0-9_]|{_PCT}))*"
    varspec = rf"{varname}(?::[1-9][0-9]{{0,{prefix_digits - 1}}}|\*)?"
    return rf"\{{[+#./;?&]?{varspec}(?:,{varspec})*\}}"


_TEMPLATE_LITERAL = r"[!#$&(-;=?-\[\]_a-z~]"
# generation: a variable name starts with a letter, digit or _, a prefix has at most 3 digits (where
# validators are stricter than the RFC)
URI_TEMPLATE = rf"(?:{_TEMPLATE_LITERAL}|{_PCT}|{_expression('[A-Za-z0-9_]', 3)})*"
JSON_POINTER = r"(?:/(?:[^~/]|~[01])*)*"
RELATIVE_JSON_POINTER = rf"(?:0|[1-9]{{1,9}})(?:#|{JSON_POINTER})"  # jsonschema rejects a digit after a 0
REGEX = r"[A-Za-z0-9 _\-]*"  # literal text: a valid regex in every dialect

FORMATS: dict[str, str] = {
    "date-time": DATE_TIME,
    "date": DATE,
    "time": TIME,
    "duration": DURATION,
    "email": EMAIL,
    "idn-email": EMAIL,
    "hostname": HOSTNAME,
    "host-name": HOSTNAME,
    "idn-hostname": IDN_HOSTNAME,
    "ipv4": IPV4,
    "ip-address": IPV4,
    "ipv6": IPV6,
    "uuid": UUID,
    "uri": URI,
    "iri": URI,
    "uri-reference": URI_REFERENCE,
    "iri-reference": URI_REFERENCE,
    "uri-template": URI_TEMPLATE,
    "json-pointer": JSON_POINTER,
    "relative-json-pointer": RELATIVE_JSON_POINTER,
    "regex": REGEX,
}


# Exact mode with formats asserted (``JsonSchema(..., exact=True, assert_format=True)``): the RFC
# grammars where they are regular. Leap seconds are accepted where UTC is 23:59:60, for offsets
# with 0, 30 or 45 minutes; A-labels (``xn--``) are not in these languages: `checked_format` adds them.
# ``idn-hostname`` and ``idn-email`` are `idn`'s subsets of IDNA2008 and RFC 6531 (see `format_node`).
_SECFRAC = r"(?:\.[0-9]+)?"
_OFFSET = rf"(?:[Zz]|[+-]{_HOUR}:[0-5][0-9])"


def _leap_seconds() -> str:
    alts = [rf"23:59:60{_SECFRAC}[Zz]"]
    for sign in (1, -1):
        for h in range(24):
            for m in (0, 30, 45):
                local = (23 * 60 + 59 + sign * (h * 60 + m)) % 1440
                alts.append(
                    rf"{local // 60:02d}:{local % 60:02d}:60{_SECFRAC}{'[+]' if sign > 0 else '-'}{h:02d}:{m:02d}"
                )
    return "(?:" + "|".join(alts) + ")"


TIME_RFC = rf"(?:{_HOUR}:[0-5][0-9]:[0-5][0-9]{_SECFRAC}{_OFFSET}|{_leap_seconds()})"
_LABEL_RFC = _label(63)
HOSTNAME_RFC = rf"{_LABEL_RFC}(?:\.{_LABEL_RFC})*"
_QUOTED_LOCAL = r'"(?:[ !#-\[\]-~]|\\[ -~])*"'
_ADDRESS_LITERAL = rf"\[(?:{IPV4}|IPv6:{IPV6}|[A-Za-z0-9-]*[A-Za-z0-9]:[!-Z^-~]+)\]"
EMAIL_RFC = rf"(?:{_ATOM}(?:\.{_ATOM})*|{_QUOTED_LOCAL})@(?:{HOSTNAME_RFC}|{_ADDRESS_LITERAL})"
# RFC 3987 ucschar (its planes 1-14 ranges end in FFFD) and iprivate, as class bodies
_UCSCHAR = r"\u00a0-\ud7ff\uf900-\ufdcf\ufdf0-\uffef" + "".join(
    rf"\U{p:04x}0000-\U{p:04x}fffd" for p in range(1, 15)
)
_IPRIVATE = r"\ue000-\uf8ff\U000f0000-\U000ffffd\U00100000-\U0010fffd"
IRI, IRI_REFERENCE = _uri_grammar(_UNRESERVED + _UCSCHAR, _IPRIVATE)

RFC_FORMATS: dict[str, str] = {
    **FORMATS,
    "date-time": rf"{DATE}[Tt]{TIME_RFC}",
    "time": TIME_RFC,
    "duration": _duration("[0-9]+"),
    "hostname": HOSTNAME_RFC,
    "host-name": HOSTNAME_RFC,
    "email": EMAIL_RFC,
    "idn-email": EMAIL_RFC,
    "iri": IRI,
    "iri-reference": IRI_REFERENCE,
    # an apostrophe too (RFC 6570 erratum 6937)
    "uri-template": rf"(?:{_TEMPLATE_LITERAL}|['{_UCSCHAR}{_IPRIVATE}]|{_PCT}|{_expression(rf'(?:[A-Za-z0-9_]|{_PCT})', 4)})*",
    "relative-json-pointer": rf"(?:0|[1-9][0-9]*)(?:#|{JSON_POINTER})",
}
_MAX_LENGTH = {"hostname": 253, "host-name": 253}  # RFC 1123 (exact mode's labels alone allow longer)


def known_format(name: str) -> bool:
    """Whether ``name`` is a format asserted here (`format_node` gives a language for it).

    >>> known_format("regex"), known_format("int32")
    (True, False)
    """
    return name in RFC_FORMATS


def checked_format(
    name: str, rfc: bool = False, text: bool = False
) -> tuple[Node, Callable[[bytes], bool]] | None:
    """What format ``name`` admits beyond `format_node`'s language that needs a check of the text
    where the string ends (a `fsm.automata.Guard`), with that check: with ``rfc``, host names with
    A-labels, ``idn-hostname`` names also with U-labels of 10 to 63 characters (`a_labels`). None for the other formats, and for regex ``text`` (it has no checks).

    >>> checked_format("hostname") is None, checked_format("hostname", rfc=True) is not None
    (True, True)
    """
    if not rfc or text or name not in ("hostname", "host-name", "idn-hostname"):
        return None
    if name == "idn-hostname":
        return checked_idn_names()
    return checked_names(_LABEL_RFC, _MAX_LENGTH[name])


def format_node(name: str, rfc: bool = False, text: bool = False) -> Node | None:
    """The decoded-string language of format ``name`` (with ``rfc``, its RFC grammar, `RFC_FORMATS`);
    None for formats that are only annotations. ``text``: the language will be written as regex
    text (a grammar terminal), which the automata of ``regex`` and of U-labels have none of a useful
    size: those formats are then read as their generation subsets (ASCII names, literal text).

    >>> format_node("int32") is None, format_node("uuid") is not None
    (True, True)
    """
    if rfc and name == "idn-hostname":
        return idn_hostname(HOSTNAME, _LABEL_RFC, u_labels=not text)
    if rfc and name == "idn-email":
        return idn_email(_ADDRESS_LITERAL, HOSTNAME, _LABEL_RFC, u_labels=not text)
    if rfc and name == "regex" and not text:
        return regex_format()  # a regular subset of the ECMA-262 pattern grammar
    rx = (RFC_FORMATS if rfc else FORMATS).get(name)
    if rx is None:
        return None
    node = pattern_node(rx, search=False)
    if rfc and name in _MAX_LENGTH:
        node = And((node, rep(Cls(ANY_CHAR), 0, _MAX_LENGTH[name])))
    return node
