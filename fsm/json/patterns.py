"""Translate a JSON Schema ``pattern`` (ECMA-262 / Python syntax) into a language of decoded strings.

``pattern`` applies to the *decoded* string with search semantics (unanchored unless ``^``/``$``).
The pattern is parsed with Python's own regex parser and its tree rebuilt in the ECMA flavour of
`fsm.automata`'s translator (see `Flavor.ECMA` for where Python and ECMA disagree), ECMA syntax Python
lacks (``(?<name>``, ``\\u{...}``, ``\\cX``, ``\\p{L}``) read first (`to_python_syntax`); the caller wraps
it in ``Enc`` to get the JSON-encoded text. This module adds what is JSON-Schema-specific: ECMA
source rewriting, caching, and `UnsupportedSchema` errors.

Lookaheads and a ``$`` inside the pattern are exact (intersections, `fsm.automata.lookaround`);
backreferences, lookbehinds, word boundaries, a ``^`` in the middle, possessive and atomic groups
raise `UnsupportedSchema`.

>>> import re
>>> from fsm.automata import to_regex
>>> rx = to_regex(pattern_node("^[a-c]+x$"))
>>> [bool(re.fullmatch(rx, s)) for s in ["abx", "x", "abxx"]]
[True, False, False]
>>> bool(re.fullmatch(to_regex(pattern_node("b")), "abc"))
True
"""

from __future__ import annotations

import re
from functools import lru_cache

from ..automata import (
    Flavor,
    Node,
    Translator,
    UnknownCategory,
    Untranslatable,
    parse_regex,
    to_python_syntax,
)
from ..errors import UnsupportedSchema

_ECMA = Translator(Flavor.ECMA)
_WIDEST = Translator(Flavor.ECMA_WIDEST)


@lru_cache(maxsize=4096)
def _cached(pattern: str, search: bool, widest: bool) -> Node:
    try:
        parsed = parse_regex(to_python_syntax(pattern))
    except re.error as exc:
        raise UnsupportedSchema(
            f"pattern {pattern[:80]!r} is not a regex Python can parse: {exc}", "pattern"
        ) from None
    except (RecursionError, OverflowError):
        raise UnsupportedSchema(f"pattern {pattern[:80]!r} is too deeply nested", "pattern") from None
    try:
        return (_WIDEST if widest else _ECMA).translate(parsed, search)
    except UnknownCategory as exc:
        raise UnsupportedSchema(str(exc), "pattern") from None
    except Untranslatable as exc:
        raise UnsupportedSchema(
            f"pattern {pattern[:80]!r} uses {exc.what}, which no automaton can enforce exactly", "pattern"
        ) from None


def pattern_node(pattern: str, search: bool = True, widest: bool = False) -> Node:
    """The decoded strings ``pattern`` accepts: ``re.search`` semantics, or full match with ``search=False``.

    Categories as ECMA-262 reads them (``\\d`` ASCII, ``\\D`` every other character, ``\\s`` its
    Unicode spaces); where Python's ``.`` and ``$`` read wider (``\\r``, a final newline), the strings
    both readings match; with ``widest``, those either reading matches (so its complement is what
    no reading matches).

    >>> import re
    >>> from fsm.automata import to_regex
    >>> bool(re.fullmatch(to_regex(pattern_node(r"\\d+", search=False)), "12"))
    True
    """
    if not isinstance(pattern, str):
        raise UnsupportedSchema(f"pattern must be a string, got {type(pattern).__name__}", "pattern")
    return _cached(pattern, search, widest)
