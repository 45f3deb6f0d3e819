"""The first row of a counted string made from another block's (`fsm.index.counted_rows`) equals the
row a fresh trie walk computes — same tokens, end states of the same NFA sets, same mask — at every
step of random walks over schemas with many counted strings, within one schema and across two."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

import fsm
from fsm.index import LazyDfaIndex, counted_rows
from fsm.testing import check_same_row, walked_index

_TEXT = {"type": ["string", "null"], "maxLength": 300}
SCHEMAS = [
    {"type": "object", "properties": {k: _TEXT for k in "abcdef"}, "required": list("abc")},
    {
        "type": "object",
        "properties": {
            "a": {"type": "string", "maxLength": 120},
            "b": {"type": "string", "minLength": 2, "maxLength": 120},
            "c": {"type": "array", "items": {"type": "string", "maxLength": 120}},
            "d": {"type": "integer"},
            "e": {"type": "string", "maxLength": 120},
        },
        "required": ["a", "b", "c", "e"],
    },
    {"type": "array", "items": {"anyOf": [{"type": "string", "maxLength": 90}, {"type": "number"}]}},
    # keys of at most 8 characters, so that random walks leave them and reach the values
    {
        "type": "object",
        "propertyNames": {"maxLength": 8},
        "additionalProperties": {"type": "string", "maxLength": 200},
    },
]


_walked = walked_index


def _walks(index: LazyDfaIndex, rng: random.Random, n_walks: int = 6, steps: int = 60) -> None:
    walked = _walked(index)
    for _ in range(n_walks):
        m = index.matcher()
        for _ in range(steps):
            check_same_row(index, walked, m.state)
            t = int(rng.choice(m.allowed_token_ids()))
            m.advance(t)
            if m.is_finished():
                break


@pytest.mark.parametrize("exact", [False, True])
@pytest.mark.parametrize("schema", SCHEMAS, ids=[json.dumps(s)[:50] for s in SCHEMAS])
def test_shared_first_rows_equal_walked_rows(schema, exact, vocab):
    index = fsm.compile(fsm.JsonSchema(schema, exact=exact), vocab, cache=False)
    assert isinstance(index, LazyDfaIndex)
    _walks(index, random.Random(json.dumps(schema) + str(exact)))
    assert index.n_shared > 0, "no first row came from another block's: the test would not test it"


def test_a_first_row_serves_another_schema(vocab, tokenizer):
    schemas = [
        {"type": "object", "properties": {"x": {"type": "string", "maxLength": 500}}, "required": ["x"]},
        {"type": "array", "items": {"type": "string", "maxLength": 500}, "minItems": 1},
    ]
    indexes = [fsm.compile(fsm.JsonSchema(s), vocab, cache=False) for s in schemas]
    for index, text in zip(indexes, ('{"x":"', '["'), strict=True):
        m = index.matcher()
        for t in tokenizer.encode(text, add_special_tokens=False):
            m.advance(t)
        check_same_row(index, _walked(index), m.state)
        # the first string of the second schema: its first row is the first schema's, with the
        # tokens that hold a quote walked (the array's "," and "]" after it, not the object's "}")
        for t in tokenizer.encode('é \\u00e9"', add_special_tokens=False):
            m.advance(t)
            check_same_row(index, _walked(index), m.state)
    assert indexes[1].n_shared >= 1


_WORDS = {"type": "string", "minLength": 1, "maxLength": 200, "pattern": "^(?:\\S+\\s+){0,19}\\S+$"}
# strings with a pattern or a format and a length: product blocks (the unit is the pattern's DFA),
# whose rows far from both bounds are shared by unit state; one short enough that walks reach its
# bound (walked there, not shared)
PRODUCTS = [
    {"type": "object", "properties": {"a": _WORDS, "b": _WORDS, "c": _WORDS}, "required": ["a", "b", "c"]},
    {"type": "array", "items": {"type": "string", "pattern": "^[a-z ]+$", "maxLength": 150}, "minItems": 2},
    {
        "type": "object",
        "properties": {
            "a": {"type": "string", "pattern": "^[A-Za-z]+( [A-Za-z]+)*$", "minLength": 3, "maxLength": 120},
            "b": {"type": "string", "pattern": "^[A-Za-z]+( [A-Za-z]+)*$", "maxLength": 90},
            "c": {"type": "string", "format": "email", "maxLength": 254},
            "d": {"type": "string", "pattern": "^[A-Za-z]+( [A-Za-z]+)*$", "maxLength": 36},
        },
        "required": ["a", "b", "c", "d"],
    },
]


@pytest.mark.parametrize("exact", [False, True])
@pytest.mark.parametrize("schema", PRODUCTS, ids=[json.dumps(s)[:50] for s in PRODUCTS])
def test_product_block_rows_shared_by_unit_state_equal_walked_rows(schema, exact, vocab):
    index = fsm.compile(fsm.JsonSchema(schema, exact=exact), vocab, cache=False)
    assert isinstance(index, LazyDfaIndex)
    _walks(index, random.Random(json.dumps(schema) + str(exact)), n_walks=6, steps=50)
    assert index.n_shared > 0, "no product row came from another block's: the test would not test it"


# bounds of 24 characters or more, or of 8 or more of a wide class (a string's character; a shorter
# repeat is a chain of NFA states, not a counter block)
NEAR = [
    {"type": "array", "items": {"type": "string", "maxLength": 30}},
    {"type": "array", "items": {"type": ["string", "null"], "maxLength": 10}},
    {
        "type": "object",
        "properties": {"a": {"type": "string", "minLength": 2, "maxLength": 12}},
        "required": ["a"],
    },
    {
        "type": "object",
        "properties": {
            "a": {"type": "string", "maxLength": 26},
            "b": {"type": ["string", "null"], "maxLength": 32},
            "c": {"type": "string", "minLength": 3, "maxLength": 40},
        },
        "required": ["a", "b", "c"],
    },
    {"type": "string", "minLength": 60, "maxLength": 100},
]


@pytest.mark.parametrize("exact", [False, True])
@pytest.mark.parametrize("schema", NEAR, ids=[json.dumps(s)[:50] for s in NEAR])
def test_strings_near_their_bound_take_the_kept_tokens_that_fit(schema, exact, vocab, tokenizer):
    """A string whose bound is within a token's length of its count takes the kept first row of a
    long string, less the tokens whose ends pass the bound."""
    donor = fsm.compile(fsm.JsonSchema({"type": "string", "maxLength": 1000}), vocab, cache=False)
    m = donor.matcher()
    for t in tokenizer.encode('"ab', add_special_tokens=False):
        m.advance(t)
        donor.row(m.state)  # the long string's first rows: kept for its unit (a set of each form)
    index = fsm.compile(fsm.JsonSchema(schema, exact=exact), vocab, cache=False)
    _walks(index, random.Random(json.dumps(schema) + str(exact)), n_walks=5, steps=40)
    assert index.n_shared > 0


@pytest.mark.parametrize("exits", [b'"\\', b"@", b"\x00 ", bytes(range(0x80, 0x100))])
def test_exit_tokens_are_the_tokens_holding_an_exit_byte(vocab, exits):
    """`exit_tokens`, found from the whole trie's runs, against the tokens read one by one."""
    from fsm.index.counted_rows import exit_tokens
    from fsm.index.kernels import kernels

    has, trie = exit_tokens(vocab, exits)
    want = [t is not None and any(b in exits for b in t) for t in vocab.tokens]
    assert has[: len(want)].tolist() == want and not has[len(want) :].any()
    kept = [t if w else None for t, w in zip(vocab.tokens, want, strict=True)]
    ref = kernels().preorder(fsm.Vocabulary(kept, vocab.eos_token_ids, size=vocab.size).trie)
    for field in ("label", "size", "tok_start", "tok_count", "tok_ids"):
        assert np.array_equal(getattr(trie, field), getattr(ref, field)), field


def test_kept_first_rows_are_bounded_by_size(vocab, tokenizer, monkeypatch):
    # a real kept row's size (tokens, forms, the masks asked): 0.4 to 0.9 MB on SmolLM2, as the
    # budget's comment says; the rows kept drop the least recently used past `KEPT_BYTES`, never the last one
    index = fsm.compile(
        fsm.JsonSchema({"type": "array", "items": {"type": "string", "maxLength": 700}}), vocab, cache=False
    )
    m = index.matcher()
    for t in tokenizer.encode('["', add_special_tokens=False):
        m.advance(t)
    index.row(m.state)
    rows = vocab.derived("counted_rows", counted_rows._KeptRows)
    sizes = {k.nbytes: k for k in rows.by_key.values() if k is not None}  # (other tests' units too)
    assert any(0.2e6 < n < 0.8e6 for n in sizes) and max(sizes) < 2e6, sorted(sizes)
    one = sizes[max(sizes)]
    fresh = counted_rows._KeptRows()
    monkeypatch.setattr(counted_rows, "KEPT_BYTES", int(one.nbytes * 2.5))
    for key in "abcd":
        fresh.put(key, one)
        assert len(fresh.by_key) <= 2 and fresh.nbytes <= counted_rows.KEPT_BYTES
    assert list(fresh.by_key) == ["c", "d"]
    assert fresh.get("c") is one and fresh.get("a") is False  # "c" used: "d" goes next
    fresh.put("e", one)
    assert list(fresh.by_key) == ["c", "e"]
    monkeypatch.setattr(counted_rows, "KEPT_BYTES", 1)
    fresh.put("f", one)
    assert list(fresh.by_key) == ["f"]  # over the budget alone: the newest is kept
