"""Lookaheads in JSON Schema patterns (`fsm.automata.lookaround`): random patterns with ``(?=...)`` and
``(?!...)`` (anchored or not, in groups and optional groups) against Python's ``re.search`` — every
accepted string matches, and every matching string without a line terminator is accepted.
"""

from __future__ import annotations

import re
from itertools import product

import pytest
from hypothesis import given, reject, settings
from hypothesis import strategies as st

from fsm.automata import node_to_char_dfa
from fsm.errors import SpecTooComplex, UnsupportedSchema
from fsm.json.patterns import pattern_node
from fsm.testing import ecma_search

ATOMS = st.sampled_from(["a", "b", "[ab]", ".", "a*", "b+", "(?:ab|b)", "c?", "\\d"])


def _look(inner: str, negative: bool, end: bool) -> str:
    return f"(?{'!' if negative else '='}{inner}{'$' if end else ''})"


SEQS = st.lists(ATOMS, min_size=1, max_size=3).map("".join)
LOOKS = st.builds(_look, SEQS, st.booleans(), st.booleans())
PIECES = st.one_of(
    ATOMS, LOOKS, LOOKS.map(lambda x: f"(?:{x}b)?"), st.builds(lambda a, b: f"(?:{a}|{b})", LOOKS, ATOMS)
)
PATTERNS = st.builds(
    lambda start, body, end: ("^" if start else "") + "".join(body) + ("$" if end else ""),
    st.booleans(),
    st.lists(PIECES, min_size=1, max_size=4),
    st.booleans(),
)
TEXTS = st.lists(st.sampled_from(["a", "b", "c", "1", "ab", "\n"]), max_size=6).map("".join)


@settings(max_examples=300, deadline=None)
@given(pattern=PATTERNS, texts=st.lists(TEXTS, min_size=10, max_size=10))
def test_lookaheads_accept_exactly_what_re_search_matches(pattern, texts):
    try:
        d = node_to_char_dfa(pattern_node(pattern))
    except SpecTooComplex:
        # a few generated nestings of negative lookaheads blow the complement up past the budget: a
        # clear refusal in bounded time is right for them (tests/fsm/test_budgets.py); this test is
        # about the patterns that compile (once, under CI load, one took the whole 10 s and
        # hypothesis then spent 5 minutes shrinking it)
        reject()
    for text in [*texts, "", "a", "ab", "ba", "abc", "b1"]:
        ok = d is not None and d.accepts(text)
        found = re.search(pattern, text) is not None
        assert not ok or found, ("accepted a non-match", pattern, text)
        if "\n" not in text:
            assert ok == found, ("rejected a match", pattern, text)


@pytest.mark.parametrize(
    ("pattern", "yes", "no"),
    [
        (
            r"^(?!org\.bukkit\.)([a-zA-Z_$][a-zA-Z\d_$]*\.)*[a-zA-Z_$][a-zA-Z\d_$]*$",
            "com.x.Main",
            "org.bukkit.X",
        ),
        (r"^@([\da-z](?:(?!.*--)[\da-z-]*[\da-z])?)/x$", "@a-b/x", "@a--b/x"),
        (r"((?:[^/]*/)*)(?=\.(yaml|yml|json))", "a/b/.yaml", "a/b/.txt"),
    ],
)
def test_schema_store_lookaheads(pattern, yes, no):
    d = node_to_char_dfa(pattern_node(pattern))
    assert d.accepts(yes) and not d.accepts(no)


def test_lookbehind_and_lookahead_under_a_star_stay_unsupported():
    for pattern in (r"(?<=a)b", r"(?:(?=a)[ab])*c"):
        with pytest.raises(UnsupportedSchema, match="look"):
            pattern_node(pattern)


@pytest.mark.parametrize(
    "pattern",
    [
        r"^([^,]+(,|$)){3,}$",
        r"^(a|b$)+c?",
        r"(x$)|y",
        r"^(ab|$)*",
        r"a$b",
        r"^(?:a(?:b|$)){2}",
        r"^(a$|b){0,3}$",
    ],
)
def test_an_end_anchor_inside_the_pattern_ends_the_text(pattern):
    """ECMA's ``$`` holds only at the end of the text: inside a group or a repeat it leaves nothing
    to follow (a repeat's iteration that passes it is the last)."""
    d = node_to_char_dfa(pattern_node(pattern))
    for n in range(7):
        for chars in product("ab,xyc", repeat=n):
            s = "".join(chars)
            assert (d is not None and d.accepts(s)) == ecma_search(pattern, s), (pattern, s)


def test_a_start_anchor_inside_the_pattern_stays_unsupported():
    with pytest.raises(UnsupportedSchema):
        pattern_node(r"a(^b)")
