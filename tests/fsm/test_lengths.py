"""Word lengths of a tree (`fsm.automata.lengths`): repeats a length cap makes open-ended keep the
language of the intersection (random patterns and caps against ``re.fullmatch``), and a length
lookahead stays one count beside the pattern.
"""

from __future__ import annotations

import json
import re

from hypothesis import given, settings
from hypothesis import strategies as st

import fsm
from fsm.automata import ANY_CHAR, And, Cls, Rep, node_to_char_dfa, rep
from fsm.automata.lengths import conjoin, min_length, uncap_repeats
from fsm.json.patterns import pattern_node
from fsm.json.schema import JsonSchema
from fsm.testing import accepts

from .json_helpers import validator

PATTERNS = st.sampled_from(
    [
        r"(?:ab){1,3}",
        r"(?:a.){0,4}b?",
        r"(?:[ab]{1,2}\.){1,5}c",
        r"a{2,9}",
        r"(?:a|bb){3,4}",
        r"(?:.{1,3},){1,6}",
    ]
)


@settings(max_examples=200, deadline=None)
@given(
    pattern=PATTERNS,
    cap=st.integers(0, 12),
    texts=st.lists(st.text(alphabet="ab.c,", max_size=13), min_size=15),
)
def test_uncapped_repeats_keep_the_words_within_the_cap(pattern, cap, texts):
    node = pattern_node(pattern, search=False)
    both = conjoin((node, rep(Cls(ANY_CHAR), 0, cap)))
    d = node_to_char_dfa(both)
    for s in texts:
        want = len(s) <= cap and re.fullmatch(pattern, s, re.DOTALL) is not None
        assert (d is not None and d.accepts(s)) == want, (pattern, cap, s)


def test_min_length_and_uncapping():
    node = pattern_node(r"(?:.{1,63}\.){1,127}", search=False)
    assert min_length(node) == 2
    assert uncap_repeats(node, 255) != node and uncap_repeats(node, 300) == node


@settings(max_examples=60, deadline=None)
@given(
    segments=st.lists(st.text(alphabet="ab/.:", min_size=0, max_size=25), min_size=1, max_size=12),
    tail=st.sampled_from(["x", "", "12", "a1"]),
)
def test_a_length_lookahead_beside_counted_segments_compiles_small(segments, tail):
    """A length lookahead over counted segments of any character: one count beside a pattern
    whose segment count the cap makes open-ended, run lazily; accepted iff jsonschema validates."""
    schema = {"type": "string", "pattern": r"^(?!.*:/)(?=.{1,120}$)((.{1,30}/){1,80}(?![0-9]*$)[a-z0-9]+)$"}
    index = _INDEX.get("i") or _INDEX.setdefault(
        "i", fsm.compile(JsonSchema(schema, exact=True), BYTES, cache=False)
    )
    s = "/".join(segments) + "/" + tail
    assert accepts(index, json.dumps(s)) == validator(schema, formats=False).is_valid(s), s


def _reps(node) -> list:
    out = [node] if isinstance(node, Rep) else []
    for it in getattr(node, "items", ()) if isinstance(getattr(node, "items", None), tuple) else ():
        out += _reps(it)
    return out + (_reps(node.item) if hasattr(node, "item") else [])


def test_the_lookahead_tree_is_one_intersection_with_the_count():
    node = pattern_node(r"^(?=.{1,255}$)(.{1,63}\.){1,127}[a-z]+$")
    assert isinstance(node, And) and any(isinstance(it, Rep) and it.hi == 255 for it in node.items), node
    his = [r.hi for r in _reps(node)]
    assert 63 in his and 127 not in his, his  # 128 labels of two characters pass the cap


_INDEX: dict = {}
BYTES = fsm.Vocabulary([bytes([i]) for i in range(256)] + [None], eos_token_ids=[256])
