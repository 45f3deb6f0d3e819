"""The character NFA (`fsm.automata.nfa`): what a JSON-encoded string costs in states."""

from __future__ import annotations

import json

import fsm
from fsm.automata import node_nfa
from fsm.testing import accepts

# a word-count pattern: its DFA has a state per word and gap, and the string's JSON escapes
# (``"``, ``\\`` and control characters in ``\S``, ``\t\n\r`` in ``\s``) lead to each of them
WORDS = {"type": "string", "pattern": "^(?:\\S+\\s+){0,59}\\S+$"}


def _bytes_vocab() -> fsm.Vocabulary:
    return fsm.Vocabulary([bytes([i]) for i in range(128)] + [None], eos_token_ids=[128])


def test_escapes_into_each_state_of_an_embedded_dfa_are_a_few_states():
    trans, *_ = node_nfa(fsm.JsonSchema(WORDS, exact=True).tree())
    # 120 pattern states: a Thompson tree of the escapes per state was ~100 states each (12,000+)
    assert len(trans) < 120 * 20, len(trans)


def test_escapes_of_an_embedded_dfa_decode_exactly():
    index = fsm.compile(fsm.JsonSchema(WORDS, exact=True), _bytes_vocab(), cache=False)
    good = ['a"b c', "a\\b\tc", "x\x01y", "one\ntwo\r\nthree", "a/b"]
    for s in good:
        assert accepts(index, json.dumps(s)), s
    assert accepts(index, '"a\\/b\\u0009c"')
    assert accepts(index, '"a\\u001fb"')  # U+001F, not whitespace: inside a word
    bad = ['"a\x01b"', '"a\\qb"', '"a\\u00zzb"', '"a\\u0020b"', '"a b "', '"a\\tb\\t"', '"a\\"']
    for s in bad:
        assert not accepts(index, s), s
    # 61 words: one too many, escaped gaps counted like raw ones
    assert not accepts(index, json.dumps("\t".join(["w"] * 61)))
    assert accepts(index, json.dumps("\t".join(["w"] * 60)))
