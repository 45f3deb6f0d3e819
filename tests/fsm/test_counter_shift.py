"""Rows of counter states derived from an earlier count (`fsm.automata.counter_shift`) equal the
rows a fresh trie walk computes: same tokens, same end states, at every step of many instances."""

from __future__ import annotations

import json
import random

import jsonschema
import numpy as np
import pytest

import fsm
from fsm.automata import LazyByteDFA, cls, lit, node_nfa, rep, seq
from fsm.automata.counter_shift import shift_class, shifted
from fsm.index import LazyDfaIndex
from fsm.testing import check_same_row

SCHEMAS = [
    {"type": "string", "maxLength": 300},
    {"type": "string", "minLength": 120, "maxLength": 260},
    {
        "type": "object",
        "properties": {
            "a": {"type": "string", "maxLength": 1000},
            "b": {"type": "string", "minLength": 3, "maxLength": 150},
            "n": {"type": "integer"},
        },
        "required": ["a", "b"],
        "additionalProperties": False,
    },
    {"type": "array", "items": {"type": "string", "maxLength": 200}, "maxItems": 4},
    {"type": "array", "items": {"type": "integer"}, "maxItems": 400},
    {"anyOf": [{"type": "string", "maxLength": 500}, {"type": "string", "minLength": 2, "maxLength": 90}]},
]
PIECES = ["a", "word ", "é", "漢字", "😀", "\n", '"', "\\", "\u00e9t\u00e9", "0123456789", " ", "/"]


def _string(rng: random.Random, lo: int, hi: int) -> str:
    n = rng.randint(lo, hi)
    out = ""
    while len(out) < n:
        out += rng.choice(PIECES)
    return out[:n]


def _instances(schema: dict, rng: random.Random) -> list:
    t = schema.get("type")
    if t == "string":
        return [_string(rng, schema.get("minLength", 0), min(schema["maxLength"], 170)) for _ in range(3)]
    if t == "object":
        return [
            {"a": _string(rng, 0, 150), "b": _string(rng, 3, 150), "n": rng.randint(-99, 99)}
            for _ in range(3)
        ]
    if t == "array" and schema["items"]["type"] == "string":
        return [[_string(rng, 0, 120) for _ in range(rng.randint(0, 4))] for _ in range(3)]
    if t == "array":
        return [[rng.randint(0, 10**6) for _ in range(rng.randint(0, 60))] for _ in range(3)]
    return [_string(rng, 2, 90) for _ in range(3)]


def _same_row(derived: LazyDfaIndex, walked: LazyDfaIndex, state: int) -> None:
    check_same_row(derived, walked, state)


@pytest.mark.parametrize("schema", SCHEMAS, ids=[json.dumps(s)[:60] for s in SCHEMAS])
def test_derived_rows_equal_walked_rows(schema, vocab, tokenizer):
    index = fsm.compile(fsm.JsonSchema(schema), vocab, cache=False)
    assert isinstance(index, LazyDfaIndex)
    # both indexes read one automaton, so their end states are comparable ids
    derived = LazyDfaIndex(index.lazy, vocab, limits=index.limits, shift_rows=True)
    walked = LazyDfaIndex(index.lazy, vocab, limits=index.limits, shift_rows=False)
    validator = jsonschema.Draft202012Validator(schema)
    rng = random.Random(json.dumps(schema))
    seen = 0
    for instance in _instances(schema, rng):
        assert validator.is_valid(instance)
        state = index.lazy.initial
        for t in tokenizer.encode(json.dumps(instance, separators=(",", ":")), add_special_tokens=False):
            _same_row(derived, walked, state)
            row = derived.row(state)
            i = int(np.searchsorted(row.tokens, t))
            assert i < len(row.tokens) and row.tokens[i] == t
            state = int(row.next_states[i])
            seen += 1
        _same_row(derived, walked, state)
        assert index.lazy.accepting_flags[state]
    assert seen > 100
    if any(s.get("maxLength", 0) >= 300 for s in [schema, *schema.get("properties", {}).values()]):
        assert derived.n_shifted > 10, "hardly a row was derived: the test would not test it"


def test_a_class_holds_the_states_one_count_apart_far_from_the_bound():
    lazy = LazyByteDFA(*node_nfa(seq(rep(cls((97, 98)), 0, 40), lit("!"))))
    states = [lazy.initial]
    for _ in range(39):
        states.append(lazy.step(states[-1], 97))
    keys = [shift_class(lazy, s, 8) for s in states]
    assert all(k is not None for k in keys[:31]) and all(k is None for k in keys[32:])  # 31 + 8 < 40
    # the start state holds the NFA's entry as well; every state after an "a" is the same one moved
    assert len({k[0] for k in keys[1:31]}) == 1
    assert [k[2] - keys[1][2] for k in keys[1:31]] == list(range(30))
    assert shifted(lazy, states[3], keys[3][1], 5) == states[8]


# a format or pattern with maxLength: a product block, whose states live while their unit state's
# shortest ending still fits (shifted only past lo and that far from hi)
PRODUCTS = [
    (
        {"type": "string", "format": "uri", "maxLength": 255},
        "https://www.example.com/" + "ab/" * 60 + "x.jpg",
    ),
    ({"type": "string", "format": "email", "maxLength": 200}, "first.last" * 12 + "@example.org"),
    ({"type": "string", "pattern": "^[a-z]+(-[a-z0-9]+)*-x9$", "maxLength": 120}, "ab-" * 36 + "x9"),
    ({"type": "string", "format": "date-time", "maxLength": 64}, "2022-01-01T12:00:00.123456Z"),
]


@pytest.mark.parametrize("schema,text", PRODUCTS, ids=[json.dumps(s)[:50] for s, _ in PRODUCTS])
def test_product_block_rows_derived_from_an_earlier_count_equal_walked_rows(schema, text, vocab, tokenizer):
    index = fsm.compile(fsm.JsonSchema(schema), vocab, cache=False)
    derived = LazyDfaIndex(index.lazy, vocab, limits=index.limits)
    walked = LazyDfaIndex(index.lazy, vocab, limits=index.limits, shift_rows=False, shared_blocks=False)
    rng = random.Random(text)
    doc = json.dumps(text)
    for ids in (tokenizer.encode(doc, add_special_tokens=False), _byte_tokens(doc, vocab)):
        state = index.lazy.initial
        for t in ids:
            _same_row(derived, walked, state)
            nxt = derived.row(state).next_state(t)
            assert nxt is not None, (schema, t)
            state = nxt
        _same_row(derived, walked, state)
        assert index.lazy.accepting_flags[state]
    # random tokens from the rows, near the bound too
    for _ in range(3):
        state = index.lazy.initial
        for _ in range(60):
            _same_row(derived, walked, state)
            row = derived.row(state)
            if not len(row.tokens):
                break
            t = int(rng.choice(row.tokens))
            state = row.next_state(t)
            if state < 0:
                break
    if schema["maxLength"] >= 120:
        assert derived.n_shifted > 10, "hardly a row was derived: the test would not test it"


def _byte_tokens(text: str, vocab: fsm.Vocabulary) -> list[int]:
    """The one-byte token of each byte of ``text``: every count of the string visited."""
    ids = {vocab.token_bytes(i): i for i in range(vocab.size) if vocab.token_bytes(i) is not None}
    return [ids[bytes([b])] for b in text.encode()]
