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

from ..automata import Node
from .patterns import pattern_node

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
DURATION = (
    rf"P(?:(?:{_N}Y(?:{_N}M)?(?:{_N}D)?|{_N}M(?:{_N}D)?|{_N}D)"
    rf"(?:T(?:{_N}H(?:{_N}M)?(?:{_N}S)?|{_N}M(?:{_N}S)?|{_N}S))?"
    rf"|T(?:{_N}H(?:{_N}M)?(?:{_N}S)?|{_N}M(?:{_N}S)?|{_N}S)"
    rf"|{_N}W)"
)

_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,46}[A-Za-z0-9])?"
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
_PCHAR = rf"(?:[{_UNRESERVED}{_SUB_DELIMS}:@]|{_PCT})"
_SEGMENT_NC = rf"(?:[{_UNRESERVED}{_SUB_DELIMS}@]|{_PCT})"
_REG_NAME = rf"(?:[{_UNRESERVED}{_SUB_DELIMS}]|{_PCT})*"
_AUTHORITY = rf"(?:{_REG_NAME}@)?(?:{_REG_NAME}|\[{IPV6}\])(?::[0-9]{{1,5}})?"
_PATH_ABEMPTY = rf"(?:/{_PCHAR}*)*"
_QUERY_FRAGMENT = rf"(?:\?(?:{_PCHAR}|[/?])*)?(?:#(?:{_PCHAR}|[/?])*)?"
_SCHEME = r"[A-Za-z][A-Za-z0-9+.\-]*"
URI = rf"{_SCHEME}:(?://{_AUTHORITY}{_PATH_ABEMPTY}|/?{_PCHAR}+{_PATH_ABEMPTY}|){_QUERY_FRAGMENT}"
URI_REFERENCE = (
    rf"(?:{URI}"
    rf"|(?://{_AUTHORITY}{_PATH_ABEMPTY}|/(?:{_PCHAR}+{_PATH_ABEMPTY})?|{_SEGMENT_NC}+{_PATH_ABEMPTY}|)"
    rf"{_QUERY_FRAGMENT})"
)
URI_TEMPLATE = rf"{_SCHEME}:(?://{_REG_NAME}{_PATH_ABEMPTY}|/?{_PCHAR}+{_PATH_ABEMPTY})"
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


def format_node(name: str) -> Node | None:
    """The decoded-string language of format ``name``; None for formats that are only annotations.

    >>> format_node("int32") is None, format_node("uuid") is not None
    (True, True)
    """
    rx = FORMATS.get(name)
    return None if rx is None else pattern_node(rx, search=False)
