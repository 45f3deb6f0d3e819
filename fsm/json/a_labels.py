r"""Host names with A-labels (``xn--``) in exact mode, and ``idn-hostname`` names with long U-labels:
an automaton of their letters and a text check where the string ends (`fsm.automata.Guard`),
instead of leaving them out.

An A-label is valid when its punycode decodes to a valid U-label (IDNA2008: code points, context
rules, Bidi, NFC) that encodes back to it (RFC 5890 2.3.2.1). As an automaton, every prefix of the
punycode has a future of its own (the digits are a number): thousands of states per token row,
past any memory budget (`idn`'s docstring has the measure). The superset here is small — letters,
digits and hyphens after ``xn--`` — and the check (`hostname_check`) decodes the whole name with the
``idna`` package (what ``jsonschema`` checks ``idn-hostname`` with) once a token reaches the end of
the string; `fsm.index.guarded` runs it only for the tokens that would close the string there.
Without ``idna`` there is no check and no A-label (`checked_names` is None).

>>> hostname_check(b'{"host":"xn--9n2bp8q.xn--9t4b11yi5a'), hostname_check(b'"xn--X')
(True, False)
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Callable
from functools import lru_cache

from ..automata import ANY_CHAR, And, Cls, Node, rep
from .patterns import pattern_node


def _has_idna() -> bool:
    """Whether the ``idna`` package (the checks' decoder and encoder) can be imported."""
    return importlib.util.find_spec("idna") is not None


# a superset of A-labels: what follows ``xn--`` is punycode's letters, digits and hyphens
_A_LABEL = r"[Xx][Nn]--[A-Za-z0-9-]{1,59}"


def current_string(text: bytes) -> str | None:
    """The decoded contents of the JSON string ``text`` ends inside (None: no string is open there).

    >>> current_string(b'{"a":"b\\\\"c'), current_string(b'[1')
    ('b"c', None)
    """
    i = len(text)
    while True:
        i = text.rfind(b'"', 0, i)
        if i < 0:
            return None
        k = i
        while k > 0 and text[k - 1] == 0x5C:
            k -= 1
        if (i - k) % 2 == 0:  # a quote no backslash escapes: the string's opening one
            break
    try:
        value = json.loads(text[i:] + b'"')
    except ValueError:
        return None
    return value if isinstance(value, str) else None


@lru_cache(maxsize=4096)
def a_label_ok(label: str) -> bool:
    """Whether ``label`` (``xn--`` in any case) is an A-label: its punycode decodes to a valid
    U-label that encodes back to it.

    >>> a_label_ok("xn--ihqwcrb4cv8a8dqg056pqjye"), a_label_ok("xn---9uc"), a_label_ok("xn--example-")
    (True, False, False)
    """
    import idna  # present whenever `checked_names` gave the automaton this check

    try:
        return idna.encode(idna.decode(label)).decode("ascii") == label.lower()
    except (idna.IDNAError, UnicodeError, ValueError):
        return False


def hostname_check(text: bytes) -> bool:
    """The check where a host name with A-labels ends: every ``xn--`` label of the string ``text``
    ends inside is an A-label (the automaton holds the rest of the name's rules)."""
    name = current_string(text)
    if name is None:
        return False
    return all(a_label_ok(label) for label in name.split(".") if label[:4].lower() == "xn--")


# a character of an internationalized label: lowercase LDH or non-ASCII, no IDNA full stop
_U_CHAR = "[-a-z0-9\u00a0-\u3001\u3003-\ud7ff\ue000-\uff0d\uff0f-\uff60\uff62-\U0010ffff]"
_U_SEP = "[.\u3002\uff0e\uff61]"


def idn_hostname_check(text: bytes) -> bool:
    """The check where an ``idn-hostname`` with an A-label or a long U-label ends: the ``idna``
    package encodes the string ``text`` ends inside (what ``jsonschema`` checks the format with:
    every label's code points, context and Bidi rules, A-labels decoded, 63 octets a label once
    encoded, 253 in all)."""
    import idna  # present whenever `checked_idn_names` gave the automaton this check

    name = current_string(text)
    if name is None:
        return False
    try:
        idna.encode(name)
    except (idna.IDNAError, UnicodeError, ValueError):
        return False
    return True


def checked_idn_names() -> tuple[Node, Callable[[bytes], bool]] | None:
    """``idn-hostname`` names with an A-label or a U-label of 10 to 63 characters (whose A-label's
    length only its punycode tells), any IDNA full stop, with `idn_hostname_check`; None without
    ``idna``.

    >>> node, check = checked_idn_names(); check(b'"' + ("παράδειγμα" * 2).encode() + b".com")
    True
    """
    if not _has_idna():
        return None
    label = f"{_U_CHAR}{{1,63}}"
    rx = f"(?:{label}{_U_SEP})*(?:{_U_CHAR}{{10,63}}|{_A_LABEL})(?:{_U_SEP}{label})*"
    return pattern_node(rx, search=False), idn_hostname_check


def checked_names(label: str, most: int | None) -> tuple[Node, Callable[[bytes], bool]] | None:
    """Host names of ``label``\\ s (a regex of the names' other labels) and at least one A-label,
    at most ``most`` characters, with the check they need where the string ends; None without
    ``idna`` (no A-labels then).

    >>> node, check = checked_names("[a-z]{1,63}", 253); check is hostname_check
    True
    """
    if not _has_idna():
        return None
    names = pattern_node(rf"(?:{label}\.)*{_A_LABEL}(?:\.(?:{label}|{_A_LABEL}))*", search=False)
    if most is not None:
        names = And((names, rep(Cls(ANY_CHAR), 0, most)))
    return names, hostname_check
