r"""``format: regex`` in exact mode: a regular subset of the ECMA-262 pattern grammar.

A pattern's syntax is context-free (groups nest) and two of its rules are not regular at all (group
names are unique, ``\1`` and ``\k<name>`` must name a group that exists), so this is a sound subset:
every string in it is a valid pattern of ECMA-262 (2018 on) read with or without the ``u`` flag,
and of its Annex B. In it:

- disjunctions, empty alternatives; groups ``(...)``, ``(?:...)``, lookaheads and lookbehinds (never
  quantified, no group inside), nested up to `MAX_DEPTH` deep; one named group ``(?<name>...)``,
  first (after ``^``);
- assertions ``^ $ \b \B``; ``.``; any character but the syntax characters ``^$\.*+?()[]{}|`` and
  the control characters (U+0000-U+001F: ``\n``, ``\t`` are written escaped);
- quantifiers ``* + ? {n} {n,} {n,m}`` (at most 4 digits; in ``{n,m}`` a one-digit ``n`` not above
  ``m``), each possibly lazy;
- escapes: ``\d \D \s \S \w \W``, ``\f \n \r \t \v``, ``\cX``, ``\xHH``, ``\uHHHH`` and a syntax
  character or ``/`` escaped (the identity escapes both readings allow);
- classes ``[...]``/``[^...]``, empty ones included: characters but ``\ ] -``, the escapes above and
  ``\b \-``, ranges of digits or of same-case letters from the first of their kind or to the last (``a-f``,
  ``1-9``), ``-`` first or last.

Left out (rejected although valid): backreferences, ``\0``, ``\p{..}``, other ranges (``2-5``,
escapes or non-ASCII at an end), named groups elsewhere or several, deeper nesting, raw control
characters, Annex B's extra spellings (``\a``, a lone ``{``), which the suite's strict reading
rejects anyway. The minimal DFA has 312 states: every ``format: regex`` of a schema embeds a copy.

>>> from fsm.automata import node_to_char_dfa
>>> d = node_to_char_dfa(regex_format())
>>> [d.accepts(s) for s in (r"([abc])+\s+$", "(?<n>x)", "(?<=a+)b", "[^]", r"\cA", "a{2,3}?")]
[True, True, True, True, True, True]
>>> [d.accepts(s) for s in (r"\a", "(?P<n>x)", "(?i)a", "^(abc]", "a{3,2}", "(?<a>x)(?<b>y)")]
[False, False, False, False, False, False]
"""

from __future__ import annotations

from functools import cache

from ..automata import (
    Auto,
    Budget,
    Node,
    alt,
    cls,
    lit,
    minimize_dfa,
    node_to_char_dfa,
    opt,
    rep,
    seq,
    small_dfa,
)
from ..automata import complement as complement_ranges
from ..limits import DEFAULT_LIMITS

MAX_DEPTH = 2  # groups inside groups
_SYNTAX = "^$\\.*+?()[]{}|"


def _chars(text: str) -> Node:
    return cls(*((ord(c), ord(c)) for c in text))


def _but(text: str) -> Node:
    """Any character except those of ``text`` and the control characters: a pattern holding a raw
    one is rare, and each would cost the JSON-encoded automaton a ``\\u00XX`` escape at every
    state that reads it (every ``format: regex`` of a schema holds a copy)."""
    excluded = [(0, 0x1F), *((ord(c), ord(c)) for c in sorted(set(text)))]
    return cls(*complement_ranges(tuple(excluded)))


_DIGIT = cls((0x30, 0x39))
_HEX = cls((0x30, 0x39), (0x41, 0x46), (0x61, 0x66))
_LETTER = cls((0x41, 0x5A), (0x61, 0x7A))
_NAME_START = cls((0x24, 0x24), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A))
_NAME_PART = cls((0x24, 0x24), (0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A))


def _escape(extra: str) -> Node:
    """``\\`` and what may follow it (``extra``: more identity or control escapes, in classes)."""
    return seq(
        lit("\\"),
        alt(
            _chars("dDsSwWfnrtv" + _SYNTAX + "/" + extra),
            seq(lit("c"), _LETTER),
            seq(lit("x"), _HEX, _HEX),
            seq(lit("u"), rep(_HEX, 4, 4)),
        ),
    )


def _ranges() -> Node:
    """Ranges within digits, uppercase or lowercase letters, from the first of their kind (``a-f``)
    or to the last (``1-9``): ordered without remembering the lower end."""
    out = []
    for first, last in ("09", "AZ", "az"):
        kind = cls((ord(first), ord(last)))
        out.append(seq(lit(first + "-"), kind))
        out.append(seq(kind, lit("-" + last)))
    return alt(*out)


def _class() -> Node:
    item = _but("\\]-")
    body = seq(opt(lit("-")), rep(alt(item, _escape("b-"), _ranges()), 0, None), opt(lit("-")))
    return seq(lit("["), opt(lit("^")), body, lit("]"))


def _quantifier() -> Node:
    n = rep(_DIGIT, 1, 4)
    bounded = alt(
        *(seq(lit(str(a)), lit(","), cls((0x30 + a, 0x39))) for a in range(10)),
        seq(_DIGIT, lit(","), cls((0x31, 0x39)), rep(_DIGIT, 1, 3)),
    )
    counted = seq(lit("{"), alt(n, seq(n, lit(",")), bounded), lit("}"))
    return seq(alt(_chars("*+?"), counted), opt(lit("?")))


@cache
def _auto(name: str) -> Node:
    """A part of the grammar as its DFA (a few states, where its tree has hundreds), made once: the
    grammar holds it at every depth, and a schema the whole grammar at every ``format: regex``."""
    node = {"atom": alt(_but(_SYNTAX), lit("."), _escape(""), _class()), "quantifier": _quantifier()}[name]
    d = small_dfa(node, Budget(DEFAULT_LIMITS))
    return Auto(tuple(tuple(row) for row in d.edges), tuple(d.accepting))


def _disjunction(depth: int) -> Node:
    atom = _auto("atom")
    assertion = alt(_chars("^$"), lit("\\b"), lit("\\B"))
    if depth < MAX_DEPTH:
        inner = _disjunction(depth + 1)
        atom = alt(atom, seq(alt(lit("("), lit("(?:")), inner, lit(")")))
        # a lookaround holds no group: else each depth would double (its ")" takes no quantifier)
        flat = _disjunction(MAX_DEPTH)
        look = alt(lit("(?="), lit("(?!"), lit("(?<="), lit("(?<!"))
        assertion = alt(assertion, seq(look, flat, lit(")")))
    # alternatives are runs of terms between bars: as a language, terms and bars in any order
    return rep(alt(assertion, seq(atom, opt(_auto("quantifier"))), lit("|")), 0, None)


@cache
def regex_format() -> Node:
    """The patterns of the subset (decoded strings; a named group only first), as its minimal DFA:
    a few hundred states where the grammar's tree has thousands (each ``format: regex`` of a
    schema holds a copy)."""
    name = seq(_NAME_START, rep(_NAME_PART, 0, None))
    named = seq(lit("(?<"), name, lit(">"), _disjunction(1), lit(")"), opt(_auto("quantifier")))
    rest = _disjunction(0)
    d = minimize_dfa(node_to_char_dfa(seq(opt(lit("^")), opt(named), rest), Budget(DEFAULT_LIMITS)))
    return Auto(tuple(tuple(row) for row in d.edges), tuple(d.accepting))
