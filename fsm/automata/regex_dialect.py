"""PCRE and ECMA-262 regex syntax that Python's ``re`` lacks, rewritten into Python syntax.

Patterns are read by Python's parser (`re_tree.parse`). Each construct below is an error to it, so
giving it its PCRE/ECMA meaning changes no pattern Python already accepts:

- ``(?<name>...)``: a named group, as ``(?P<name>...)`` (lookbehinds ``(?<=``/``(?<!`` untouched);
- ``\\e``: ESC (U+001B); ``\\cX``: the control character of the letter X (its code mod 32);
- ``\\u{H...}`` (ECMA with the ``u`` flag) and ``\\x{H...}`` (PCRE): the code point H;
- ``\\p{..}``/``\\P{..}``: a Unicode general category (``L``, ``Lu``, ``Letter``, ``gc=Nd``...) or its
  complement, with the tables of the standard library's `unicodedata` (scripts and binary
  properties are not there: they raise ``re.error``).

>>> to_python_syntax(r"(?<year>\\d{4})\\e\\cJ\\u{20BB7}")
'(?P<year>\\\\d{4})\\\\x1b\\\\x0a\\\\U00020bb7'
>>> import re
>>> bool(re.fullmatch(to_python_syntax(r"\\p{Lu}\\p{Ll}+"), "Été"))
True
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache

from .ranges import ANY_CHAR, Ranges, complement, normalize_ranges

# UAX #44 long names of the general categories (PropertyValueAliases.txt), and the groups
_LONG_NAMES = {
    "Letter": "L",
    "Cased_Letter": "LC",
    "Uppercase_Letter": "Lu",
    "Lowercase_Letter": "Ll",
    "Titlecase_Letter": "Lt",
    "Modifier_Letter": "Lm",
    "Other_Letter": "Lo",
    "Mark": "M",
    "Combining_Mark": "M",
    "Nonspacing_Mark": "Mn",
    "Spacing_Mark": "Mc",
    "Enclosing_Mark": "Me",
    "Number": "N",
    "Decimal_Number": "Nd",
    "digit": "Nd",
    "Letter_Number": "Nl",
    "Other_Number": "No",
    "Punctuation": "P",
    "punct": "P",
    "Connector_Punctuation": "Pc",
    "Dash_Punctuation": "Pd",
    "Open_Punctuation": "Ps",
    "Close_Punctuation": "Pe",
    "Initial_Punctuation": "Pi",
    "Final_Punctuation": "Pf",
    "Other_Punctuation": "Po",
    "Symbol": "S",
    "Math_Symbol": "Sm",
    "Currency_Symbol": "Sc",
    "Modifier_Symbol": "Sk",
    "Other_Symbol": "So",
    "Separator": "Z",
    "Space_Separator": "Zs",
    "Line_Separator": "Zl",
    "Paragraph_Separator": "Zp",
    "Other": "C",
    "Control": "Cc",
    "cntrl": "Cc",
    "Format": "Cf",
    "Surrogate": "Cs",
    "Private_Use": "Co",
    "Unassigned": "Cn",
}


@cache
def _categories() -> dict[str, Ranges]:
    """Every two-letter general category's code points (surrogates left out: no string holds them)."""
    members: dict[str, list[tuple[int, int]]] = {}
    prev, start = None, 0
    for cp in range(0x110000 + 1):
        cat = unicodedata.category(chr(cp)) if cp < 0x110000 else None
        if cat != prev:
            if prev is not None:
                members.setdefault(prev, []).append((start, cp - 1))
            prev, start = cat, cp
    members["Cs"] = []
    return {k: normalize_ranges(v) for k, v in members.items()}


def unicode_property(name: str) -> Ranges:
    """The code points of general category ``name`` (short or long name, ``gc=``/``General_Category=``
    prefix allowed; ``Any``, ``ASCII`` too); raises ``ValueError`` for any other property.

    >>> unicode_property("Nd")[:1]
    ((48, 57),)
    """
    key = name.replace(" ", "").split("=", 1)
    if len(key) == 2:
        if key[0] not in ("gc", "General_Category"):
            raise ValueError(f"the Unicode property {name!r} is not supported (general categories only)")
        key = key[1:]
    value = _LONG_NAMES.get(key[0], key[0])
    if value == "Any":
        return ANY_CHAR
    if value == "ASCII":
        return ((0, 0x7F),)
    cats = _categories()
    if value == "LC":
        return normalize_ranges([r for c in ("Lu", "Ll", "Lt") for r in cats.get(c, ())])
    if len(value) == 1 and value.isupper():
        return normalize_ranges([r for c, rs in cats.items() if c[0] == value for r in rs])
    if value in cats:
        return cats[value]
    raise ValueError(
        f"the Unicode property {name!r} is not supported: only general categories (L, Lu, Nd, P...) "
        "have tables in the standard library, scripts and binary properties do not"
    )


def _class_body(ranges: Ranges) -> str:
    def esc(cp: int) -> str:
        return f"\\u{cp:04x}" if cp <= 0xFFFF else f"\\U{cp:08x}"

    return "".join(esc(a) if a == b else f"{esc(a)}-{esc(b)}" for a, b in ranges)


def _braced(pattern: str, i: int) -> tuple[str, int] | None:
    """The text inside ``{...}`` opening at ``pattern[i]``, and the index after ``}``."""
    if i >= len(pattern) or pattern[i] != "{":
        return None
    j = pattern.find("}", i + 1)
    return (pattern[i + 1 : j], j + 1) if j > 0 else None


def _escape(pattern: str, i: int, in_class: bool) -> tuple[str, int] | None:
    """Python syntax for the escape at ``pattern[i]`` (a backslash), or None to keep it as written."""
    d = pattern[i + 1]
    if d == "e":
        return "\\x1b", i + 2
    if d == "c" and i + 2 < len(pattern) and pattern[i + 2].isascii() and pattern[i + 2].isalpha():
        return f"\\x{ord(pattern[i + 2]) % 32:02x}", i + 3
    if d in "ux":
        braced = _braced(pattern, i + 2)
        if braced and re.fullmatch(r"[0-9A-Fa-f]{1,6}", braced[0]) and int(braced[0], 16) <= 0x10FFFF:
            return f"\\U{int(braced[0], 16):08x}", braced[1]
        return None
    if d in "pP":
        braced = _braced(pattern, i + 2)
        name, end = braced if braced else (pattern[i + 2 : i + 3], i + 3)
        try:
            ranges = unicode_property(name)
        except ValueError as exc:
            raise re.error(str(exc), pattern, i) from None
        if d == "P":
            ranges = complement(ranges)
        if not ranges:
            return ("" if in_class else "[^\\x00-\\U0010ffff]"), end
        body = _class_body(ranges)
        return (body if in_class else f"[{body}]"), end
    return None


def to_python_syntax(pattern: str) -> str:
    """``pattern`` with the PCRE/ECMA constructs of the module docstring in Python's syntax."""
    if "\\" not in pattern and "(?<" not in pattern:
        return pattern
    out: list[str] = []
    i, n, in_class = 0, len(pattern), False
    while i < n:
        c = pattern[i]
        if c == "\\" and i + 1 < n:
            rewritten = _escape(pattern, i, in_class)
            if rewritten is None:
                out.append(pattern[i : i + 2])
                i += 2
            else:
                out.append(rewritten[0])
                i = rewritten[1]
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
            # a "]" first in a class (after an optional "^") is a literal
            lead = 2 if pattern.startswith("^]", i + 1) else 1 if pattern.startswith("]", i + 1) else 0
            out.append(pattern[i : i + 1 + lead])
            i += 1 + lead
            continue
        elif pattern.startswith("(?<", i) and pattern[i + 3 : i + 4] not in ("=", "!"):
            out.append("(?P<")
            i += 3
            continue
        out.append(c)
        i += 1
    return "".join(out)
