"""`fsm.automata.char_dfa`: DFA minimization keeps the language and a start that is never re-entered."""

from __future__ import annotations

import itertools
import re

import pytest

from fsm.automata import minimize_dfa, node_to_char_dfa, regex_node

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
