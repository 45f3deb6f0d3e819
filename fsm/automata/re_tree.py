"""Python ``re`` syntax -> the automaton tree of `fsm.automata.language`, with exact ``re.ASCII`` semantics.

Parsing is Python's own (``re._parser``); this module only maps its tree onto code point ranges,
so `fsm.automata.nfa` can build the automaton in linear time (Thompson NFA, subset construction
over range partitions) instead of a pure-Python character-FSM library whose cost grows
quadratically with pattern size.

>>> from fsm.automata import node_to_dfa
>>> node_to_dfa(regex_node(r"[a-c]+x|\\d{2}")).accepts(b"12")
True
"""

from __future__ import annotations

try:  # Python >= 3.11
    import re._constants as _c  # type: ignore[import-not-found]
    import re._parser as _parser  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - Python 3.10
    import sre_constants as _c  # type: ignore[no-redef]
    import sre_parse as _parser  # type: ignore[no-redef]

import re

from .language import Node, alt, cls, rep, seq
from .ranges import complement, normalize_ranges

_ALL = ((0, 0x10FFFF),)
_CATEGORIES = {
    _c.CATEGORY_DIGIT: ((48, 57),),
    _c.CATEGORY_SPACE: ((9, 13), (32, 32)),
    _c.CATEGORY_WORD: ((48, 57), (65, 90), (95, 95), (97, 122)),
}
_CATEGORIES[_c.CATEGORY_NOT_DIGIT] = complement(normalize_ranges(_CATEGORIES[_c.CATEGORY_DIGIT]))
_CATEGORIES[_c.CATEGORY_NOT_SPACE] = complement(normalize_ranges(_CATEGORIES[_c.CATEGORY_SPACE]))
_CATEGORIES[_c.CATEGORY_NOT_WORD] = complement(normalize_ranges(_CATEGORIES[_c.CATEGORY_WORD]))


class Untranslatable(Exception):
    """A construct this translator does not map (the caller falls back to another engine)."""


def _fold(ranges, icase: bool):
    """Add the other case of ASCII letters (re.ASCII | re.IGNORECASE folds ASCII only)."""
    if not icase:
        return ranges
    out = list(ranges)
    for lo, hi in ranges:
        for a, b, delta in ((65, 90, 32), (97, 122, -32)):
            x, y = max(lo, a), min(hi, b)
            if x <= y:
                out.append((x + delta, y + delta))
    return out


def _translate(items, flags: int) -> Node:
    parts = []
    icase = bool(flags & re.IGNORECASE)
    for op, av in items:
        if op is _c.LITERAL:
            parts.append(cls(*_fold([(av, av)], icase)))
        elif op is _c.NOT_LITERAL:
            parts.append(cls(*complement(normalize_ranges(_fold([(av, av)], icase)))))
        elif op is _c.ANY:
            parts.append(cls(*_ALL) if flags & re.DOTALL else cls((0, 9), (11, 0x10FFFF)))
        elif op is _c.IN:
            ranges, negate = [], False
            for kind, val in av:
                if kind is _c.NEGATE:
                    negate = True
                elif kind is _c.LITERAL:
                    ranges.extend(_fold([(val, val)], icase))
                elif kind is _c.RANGE:
                    ranges.extend(_fold([val], icase))
                elif kind is _c.CATEGORY and val in _CATEGORIES:
                    ranges.extend(_CATEGORIES[val])
                else:
                    raise Untranslatable(f"class item {kind}")
            rs = normalize_ranges(ranges)
            parts.append(cls(*(complement(rs) if negate else rs)))
        elif op is _c.BRANCH:
            parts.append(alt(*[_translate(b, flags) for b in av[1]]))
        elif op is _c.SUBPATTERN:
            _, add, remove, sub = av
            parts.append(_translate(sub, (flags | add) & ~remove))
        elif op in (_c.MAX_REPEAT, _c.MIN_REPEAT):
            lo, hi, sub = av
            parts.append(rep(_translate(sub, flags), lo, None if hi == _c.MAXREPEAT else hi))
        else:
            raise Untranslatable(str(op))
    return seq(*parts)


def regex_node(pattern: str) -> Node:
    """The full-match language of ``pattern`` as a tree (raises `Untranslatable` for exotic syntax)."""
    parsed = _parser.parse(pattern)
    return _translate(parsed, parsed.state.flags)
