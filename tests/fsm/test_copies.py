"""Subsets without the states a counted repeat's copies repeat (`fsm.automata.copies`): random
patterns of nested counted repeats and loops over overlapping items, their reduced DFAs against
``re.fullmatch`` on random strings, and the DFA of a label-list pattern staying small.
"""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from fsm.automata import Budget, node_to_char_dfa
from fsm.errors import SpecTooComplex
from fsm.json.patterns import pattern_node
from fsm.limits import Limits

ATOMS = st.sampled_from(["a", "b", ".", "[ab]", "ab", "(?:a|ab)", r"\.", "[^.]"])
COUNTS = st.sampled_from(["", "?", "*", "+", "{2}", "{0,3}", "{1,4}", "{2,5}", "{3,}"])


def _patterns():
    return st.recursive(
        st.builds(lambda a, c: a + c, ATOMS, COUNTS),
        lambda inner: st.one_of(
            st.builds(
                lambda xs, c: "(?:" + "".join(xs) + ")" + c, st.lists(inner, min_size=1, max_size=3), COUNTS
            ),
            st.builds(lambda a, b: f"(?:{a}|{b})", inner, inner),
        ),
        max_leaves=5,
    )


@settings(max_examples=300, deadline=None)
@given(
    parts=st.lists(_patterns(), min_size=1, max_size=3),
    texts=st.lists(st.text(alphabet="ab.c", max_size=10), min_size=20, max_size=20),
)
def test_reduced_subsets_keep_the_language(parts, texts):
    pattern = "".join(parts)
    try:  # a wide wall-clock budget: CI's two workers must not turn a slow compile into a failure
        d = node_to_char_dfa(pattern_node(pattern, search=False), Budget(Limits(max_seconds=120)))
    except SpecTooComplex:  # over the state or memory budget: refused, never a wrong DFA
        return
    for s in texts:
        want = re.fullmatch(pattern, s, re.DOTALL) is not None if "\n" not in s else None
        got = d is not None and d.accepts(s)
        assert got == want, (pattern, s)


def test_a_list_of_labels_tracks_one_length():
    """``(.{1,63}\\.)+``: a dot may end a label or stay in it; one open length per DFA state."""
    d = node_to_char_dfa(pattern_node(r"^(.{1,63}\.)+[a-z]+$"))
    assert len(d) < 300
    assert d.accepts("a" * 63 + ".b") and not d.accepts("a" * 64 + ".b")
    assert d.accepts("a." * 40 + "." + "a" * 62 + ".x")
