"""Alternations of literals built as a trie (`fsm.automata.literal_trie`): the same language as one
chain per literal, whatever prefixes, repeats, empty words or escaped characters the literals hold."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

import fsm
from fsm.automata import Enc, alt, lit, node_nfa, node_to_char_dfa, seq
from fsm.automata.literal_trie import TRIE_MIN
from fsm.testing import accepts

words = st.lists(st.text(alphabet='ab"\\\n\u00e9', max_size=4), min_size=1, max_size=12)


@settings(max_examples=150, deadline=None)
@given(ws=words, probes=st.lists(st.text(alphabet='ab"\\\n\u00e9', max_size=5), max_size=10))
def test_a_trie_of_literals_accepts_exactly_the_literals(ws, probes):
    d = node_to_char_dfa(alt(*(lit(w) for w in ws)))
    for p in ws + probes:
        assert d.accepts(p) == (p in ws), (ws, p)


@settings(max_examples=80, deadline=None)
@given(ws=words, probes=st.lists(st.text(alphabet='ab"\\\n\u00e9', max_size=5), max_size=10))
def test_encoded_literals_keep_their_escapes(ws, probes):
    """Under ``Enc`` a literal with a character JSON escapes is built apart; the others join the trie."""
    d = node_to_char_dfa(Enc(alt(*(lit(w) for w in ws))))
    for p in ws + probes:
        assert d.accepts(json.dumps(p, ensure_ascii=False)[1:-1]) == (p in ws), (ws, p)


def test_shared_prefixes_make_fewer_states():
    names = [f"value_{i:03d}" for i in range(200)]
    assert len(names) >= TRIE_MIN
    trie_states = len(node_nfa(alt(*(lit(w) for w in names)))[0])
    assert trie_states < sum(map(len, names)) // 3  # one chain each: 1,800 states


def test_an_enum_of_many_values_compiles_and_walks(vocab, tokenizer):
    values = [f"item-{i}" for i in range(500)] + ["item", "it", 'quote"d', "back\\slash"]
    index = fsm.compile(fsm.JsonSchema({"enum": values}), vocab, cache=False)
    for v in values[::37] + values[-4:]:
        assert accepts(index, json.dumps(v), tokenizer), v
    for bad in ("item-500", "ite", "item-", 'quote"', "back"):
        assert not accepts(index, json.dumps(bad), tokenizer), bad


@settings(max_examples=60, deadline=None)
@given(
    ws=words,
    others=words,
    probes=st.lists(st.text(alphabet='ab"\\\n\u00e9', max_size=9), max_size=12),
)
def test_an_enum_used_twice_is_two_copies_of_one_trie(ws, others, probes):
    """The trie of a list of literals is made once and renumbered per use (`_template`): each use
    between its own states, so a word of one use never ends inside another's ("x" ws "," ws "y"),
    and a cached trie serves a later list with other literals in between."""
    first = alt(*(lit(w) for w in ws))
    d = node_to_char_dfa(alt(seq(lit("x"), first, lit(","), first, lit("y")), alt(*(lit(w) for w in others))))
    for a in ws + probes[:3]:
        for b in ws[:4] + probes[3:6]:
            text = f"x{a},{b}y"
            assert d.accepts(text) == ((a in ws and b in ws) or text in others), (ws, text)
    for p in others + probes:
        assert d.accepts(p) == (p in others or _both(p, ws)), (others, p)


def _both(p: str, ws: list[str]) -> bool:
    return p.startswith("x") and p.endswith("y") and any(p == f"x{a},{b}y" for a in ws for b in ws)
