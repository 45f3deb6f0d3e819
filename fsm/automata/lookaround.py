"""Lookaheads as intersections: a pattern with ``(?=...)``/``(?!...)`` read right to left, each item
prefixed to the language of what follows it (its continuation), so a lookahead is the continuation
intersected with (or minus) its subpattern followed by anything.

Regular languages are closed under both, so the result is exact and stays one automaton: no
backtracking engine and no refusal. Only what keeps a continuation a single language is mapped: a
lookahead under a repeat other than ``?`` and lookbehinds stay `Untranslatable`. A negative
lookahead is complemented as a character DFA (``complement_dfa``), built once per lookahead.

>>> from fsm.automata import node_to_char_dfa
>>> from fsm.automata.re_tree import Flavor, Translator, parse
>>> node = Translator(Flavor.ECMA).translate(parse(r"^(?!org\\.)[a-z.]+$"), search=True)
>>> d = node_to_char_dfa(node)
>>> [d.accepts(s) for s in ("com.x", "org.x", "orgx")]
[True, False, True]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

try:  # Python >= 3.11
    import re._constants as _c  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - Python 3.10
    import sre_constants as _c  # type: ignore[no-redef]

from .char_dfa import CharDFA, complement_dfa
from .language import EMPTY, NEVER, Auto, Cls, Node, alt, lit, rep, seq
from .lengths import conjoin
from .nfa import node_to_char_dfa
from .ranges import ANY_CHAR

_LOOKS = (_c.ASSERT, _c.ASSERT_NOT)
_REPEATS = (_c.MAX_REPEAT, _c.MIN_REPEAT)
_ENDS = (_c.AT_END, _c.AT_END_STRING)
_STARTS = (_c.AT_BEGINNING, _c.AT_BEGINNING_STRING)
ANYTHING = rep(Cls(ANY_CHAR), 0, None)


def _holds(items: Any, hit: Callable[[Any, Any], bool]) -> bool:
    """Whether ``hit(op, av)`` holds for an item anywhere in a parse tree (or a subpattern's item list)."""
    for op, av in items:
        if hit(op, av):
            return True
        if op is _c.SUBPATTERN and _holds(av[3], hit):
            return True
        if op is _c.BRANCH and any(_holds(b, hit) for b in av[1]):
            return True
        if op in _REPEATS and _holds(av[2], hit):
            return True
    return False


def has_lookaround(items: Any) -> bool:
    """Whether a parse tree (or a subpattern's item list) holds a lookahead or lookbehind."""
    return _holds(items, lambda op, av: op in _LOOKS)


def has_end_anchor(items: Any) -> bool:
    """Whether a parse tree (or a subpattern's item list) holds ``$`` or ``\\Z`` anywhere."""
    return _holds(items, lambda op, av: op is _c.AT and av in _ENDS)


def translate_with_lookarounds(tr: Any, items: Any, flags: int, free: Node, dual: Any) -> Node:
    """The language of the top-level ``items`` for translator ``tr``: unanchored ends match
    ``free``; ``dual`` reads a negative lookahead's subpattern (the other bound of a dialect, so that
    what is excluded is never too small)."""
    items = list(items)
    if len(items) == 1 and items[0][0] is _c.BRANCH:
        return alt(*[translate_with_lookarounds(tr, b, flags, free, dual) for b in items[0][1][1]])
    start = False
    while items and items[0][0] is _c.AT and items[0][1] in _STARTS:
        items.pop(0)
        start = True
    return seq(EMPTY if start else free, _cps(tr, items, flags, free, dual))


def _cps(tr: Any, items: Any, flags: int, cont: Node, dual: Any, no_end: bool = False) -> Node:
    """``items`` followed by a string of ``cont``, read right to left (``no_end``: a ``$`` matches
    nothing, as in a repeat's iterations before its last)."""
    acc = cont
    for op, av in reversed(list(items)):
        if op is _c.AT and av in _ENDS:
            # the end of the text (the widest reading also lets Python's $ take a final newline)
            end = alt(EMPTY, lit("\n")) if tr.flavor.value == "ecma-widest" else EMPTY
            acc = NEVER if no_end else conjoin((acc, end))
        elif op in _LOOKS:
            direction, sub = av
            if direction != 1:
                raise tr.untranslatable("a lookbehind")
            if op is _c.ASSERT:
                acc = conjoin((acc, _cps(tr, sub, flags, ANYTHING, dual)))
            else:
                acc = conjoin((acc, _complement(_cps(dual, sub, flags, ANYTHING, tr))))
        elif op is _c.SUBPATTERN:
            _, add, remove, p = av
            acc = _cps(tr, p, (flags | add) & ~remove, acc, dual, no_end)
        elif op is _c.BRANCH:
            acc = alt(*[_cps(tr, b, flags, acc, dual, no_end) for b in av[1]])
        elif op in _REPEATS and has_end_anchor(av[2]) and not has_lookaround(av[2]):
            acc = _repeat_to_end(tr, av, flags, acc, dual, no_end)
        elif op in _REPEATS and has_lookaround(av[2]):
            lo, hi, p = av
            if (lo, hi) not in ((0, 1), (1, 1)):
                raise tr.untranslatable("a lookaround inside a repeat")
            once = _cps(tr, p, flags, acc, dual)
            acc = once if lo == 1 else alt(acc, once)
        else:
            acc = seq(tr.item(op, av, flags), acc)
    return acc


def _repeat_to_end(tr: Any, av: Any, flags: int, cont: Node, dual: Any, no_end: bool) -> Node:
    """A repeat whose item holds ``$`` (``^([^,]+(,|$)){3,}$``), then ``cont``: an iteration that
    passes its ``$`` ends the text, so it is the last one (or those after it are empty); the
    earlier ones are the item without its ``$`` paths."""
    lo, hi, p = av
    hi = None if hi == _c.MAXREPEAT else hi
    last = _cps(tr, p, flags, cont, dual)
    before = _cps(tr, p, flags, EMPTY, dual, no_end=True)
    if no_end:  # an enclosing repeat's iteration before its last: no $ path at all
        return seq(rep(before, lo, hi), cont)
    k = 0 if _accepts_empty(before) else max(lo - 1, 0)
    body = seq(rep(before, k, None if hi is None else hi - 1), last)
    return alt(cont, body) if lo == 0 else body


def _accepts_empty(node: Node) -> bool:
    d = node_to_char_dfa(node)
    return d is not None and bool(d.accepting[0])


def _complement(node: Node) -> Node:
    """Every string ``node`` does not accept."""
    d = node_to_char_dfa(node)
    comp = complement_dfa(d if d is not None else CharDFA([[]], [False]))
    return Auto(tuple(tuple(row) for row in comp.edges), tuple(comp.accepting))
