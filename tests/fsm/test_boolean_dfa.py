"""Boolean combinations of character DFAs (`fsm.automata.boolean_dfa`): and, or, not and
exactly-one of random pattern DFAs accept exactly what the same combination of ``re.fullmatch``
answers says, and every result is minimal (no smaller DFA after another minimization).
"""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from fsm.automata import dfa_and, dfa_not, dfa_or, exactly_one, minimize_dfa, node_to_char_dfa
from fsm.automata.budget import Budget
from fsm.automata.char_dfa import EMPTY_DFA
from fsm.json.patterns import pattern_node
from fsm.limits import DEFAULT_LIMITS

PATTERNS = st.sampled_from(["a*", "ab|ba", "[ab]{2,3}", "(ab)*c?", ".*b.*", "c", "", "[^a]+", "a.{0,2}"])


def _dfa(p: str):
    return node_to_char_dfa(pattern_node(p, search=False)) or EMPTY_DFA


@settings(max_examples=150, deadline=None)
@given(
    ps=st.lists(PATTERNS, min_size=2, max_size=4),
    texts=st.lists(st.text(alphabet="abc", max_size=5), min_size=15, max_size=15),
)
def test_combinations_agree_with_the_patterns(ps, texts):
    b = Budget(DEFAULT_LIMITS)
    ds = [_dfa(p) for p in ps]
    both, either, neither = ds[0], ds[0], dfa_not(ds[0], b)
    for d in ds[1:]:
        both, either, neither = dfa_and(both, d, b), dfa_or(either, d, b), dfa_and(neither, dfa_not(d, b), b)
    one = exactly_one(ds, ds, b)
    for d in (both, either, neither, one):
        if any(d.accepting):
            assert len(minimize_dfa(d)) == len(d)
    for s in texts:
        hits = [re.fullmatch(p, s) is not None for p in ps]
        assert both.accepts(s) == all(hits), (ps, s)
        assert either.accepts(s) == any(hits), (ps, s)
        assert neither.accepts(s) == (not any(hits)), (ps, s)
        assert one.accepts(s) == (sum(hits) == 1), (ps, s)


def test_exactly_one_with_uncertain_branches_is_sound_both_ways():
    """``sure`` inside ``maybe``: the result holds only strings where one branch surely matches
    and no other may."""
    b = Budget(DEFAULT_LIMITS)
    sure, maybe = [_dfa("a"), _dfa("b")], [_dfa("a|x"), _dfa("b")]
    d = exactly_one(sure, maybe, b)
    assert [d.accepts(s) for s in ("a", "b", "x", "")] == [True, True, False, False]
