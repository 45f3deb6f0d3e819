"""`fsm.automata.char_dfa`: DFA minimization keeps the language and a start that is never re-entered;
so does merging the universal states of a search (`fsm.automata.universal`)."""

from __future__ import annotations

import itertools
import re

import pytest

from fsm.automata import minimize_dfa, node_to_char_dfa, regex_node
from fsm.automata.ranges import ANY_CHAR
from fsm.automata.universal import merge_universal
from fsm.json.patterns import pattern_node

PATTERNS = [r"(ab|cb)+", r"a*", r"[a-c]{2,4}x?", r"(a|b)*abb", r"x|y|(xy)*", r"((a|b)(c|d))*a?"]


@pytest.mark.parametrize("pattern", PATTERNS)
def test_minimized_dfa_accepts_the_same_strings(pattern):
    d = node_to_char_dfa(regex_node(pattern))
    m = minimize_dfa(d)
    assert len(m) <= len(d) + 1
    assert not any(t == 0 for row in m.edges for _, _, t in row)  # the start is never re-entered
    for n in range(6):
        for chars in itertools.product("abcdxy", repeat=n):
            s = "".join(chars)
            assert m.accepts(s) == d.accepts(s) == bool(re.fullmatch(pattern, s)), (pattern, s)


def test_equivalent_states_are_merged():
    # (a|b)*abb: the textbook minimal DFA has 4 states, one more for the start's own copy
    assert len(minimize_dfa(node_to_char_dfa(regex_node(r"(a|b)*abb")))) == 5


SEARCHES = [
    r"ab",
    r"[a-c]{3}",
    r"a.c|xy",
    r"(ab|ba)d",
    r"^ab",
    r"ab$",
    r"a+b",
    r"[0-9a-d]{2}-[0-9a-d]{2}",
    r"",
]


@pytest.mark.parametrize("pattern", SEARCHES)
def test_merged_universal_states_keep_the_language_of_a_search(pattern):
    """A search pattern's DFA (``.*P.*``) with the states after a match merged into one: the language
    kept, the start never re-entered, at most one state that loops on every character
    (`fsm.automata.universal`)."""
    d = node_to_char_dfa(pattern_node(pattern))
    m = merge_universal(d)
    assert len(m) <= len(d)
    assert not any(t == 0 for row in m.edges for _, _, t in row)
    loops = [q for q in range(1, len(m)) if m.accepting[q] and m.edges[q] == [(a, b, q) for a, b in ANY_CHAR]]
    assert len(loops) <= 1
    if pattern in ("ab", "[a-c]{3}", "(ab|ba)d"):
        assert len(m) < len(d)  # partial matches tracked after a match: merged
    for n in range(6):
        for chars in itertools.product("abcdxy-", repeat=n):
            s = "".join(chars)
            assert m.accepts(s) == d.accepts(s) == bool(re.search(pattern, s)), (pattern, s)
