"""Recursive schemas as a lazy pushdown automaton: exact languages, trimming, left recursion."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fsm
from fsm.automata import NEVER, LeftRecursive, Ref, alt, lit, pushdown_dfa, seq
from fsm.errors import SchemaError
from fsm.index import LazyDfaIndex
from fsm.json.schema import JsonSchema
from fsm.testing import accepts

from .json_helpers import compact, valid_json_walks, validator

# balanced brackets with a leaf: v := "0" | "[" v ("," v)* "]"
BRACKETS = {
    "v": alt(lit("0"), seq(lit("["), Ref("v"), Ref("more"), lit("]"))),
    "more": alt(lit(""), seq(lit(","), Ref("v"), Ref("more"))),
}


def nested(depth: int, width: int) -> str:
    if depth == 0:
        return "0"
    return "[" + ",".join(nested(depth - 1, width) for _ in range(width)) + "]"


@given(st.integers(0, 30), st.integers(1, 3))
@settings(max_examples=60, deadline=None)
def test_balanced_documents_are_accepted_and_cut_ones_rejected(depth, width):
    d = pushdown_dfa(Ref("v"), BRACKETS).as_byte_dfa()
    text = nested(min(depth, 6) if width > 1 else depth, width)
    assert d.accepts(text.encode())
    assert not d.accepts(text[:-1].encode()) or text == "0"
    assert not d.accepts((text + "]").encode())


def test_unproductive_rules_are_trimmed_away():
    rules = {"v": alt(lit("0"), seq(lit("["), Ref("dead"), lit("]"))), "dead": seq(lit("x"), Ref("dead"))}
    d = pushdown_dfa(Ref("v"), rules).as_byte_dfa()
    assert d.accepts(b"0")
    assert not d.accepts(b"[x")
    assert d.table[d.initial, d.byte_class[ord("[")]] < 0  # no dead end after "["
    with pytest.raises(SchemaError):
        pushdown_dfa(Ref("dead"), rules)
    with pytest.raises(SchemaError):
        pushdown_dfa(Ref("never"), {"never": NEVER})


def test_left_recursion_is_refused():
    with pytest.raises(LeftRecursive):
        pushdown_dfa(Ref("a"), {"a": alt(lit("x"), seq(Ref("a"), lit("y")))})


TREE = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 4},
        "kids": {"type": "array", "items": {"$ref": "#"}, "maxItems": 3},
    },
    "required": ["name"],
    "additionalProperties": False,
}


def test_recursive_schema_compiles_to_the_lazy_pushdown_index(vocab, tokenizer):
    index = fsm.compile(JsonSchema(TREE), vocab, cache=False)
    assert isinstance(index, LazyDfaIndex)
    deep = {"name": "a"}
    for _ in range(25):  # far deeper than any fixed cut
        deep = {"name": "b", "kids": [deep, {"name": "c"}]}
    assert accepts(index, compact(deep), tokenizer)
    assert not accepts(index, compact({"name": "a", "kids": [{"name": "toolong"}]}), tokenizer)
    assert not accepts(index, compact({"name": "a", "kids": [{"kids": []}]}), tokenizer)
    assert not accepts(index, compact({"name": "a", "kids": [{"name": "x"}] * 4}), tokenizer)


def test_random_walks_of_a_recursive_schema_validate(vocab):
    schema = {
        "$defs": {
            "expr": {
                "anyOf": [
                    {"type": "integer", "minimum": 0, "maximum": 99},
                    {
                        "type": "object",
                        "properties": {
                            "op": {"enum": ["+", "*"]},
                            "args": {
                                "type": "array",
                                "items": {"$ref": "#/$defs/expr"},
                                "minItems": 2,
                                "maxItems": 2,
                            },
                        },
                        "required": ["op", "args"],
                        "additionalProperties": False,
                    },
                ]
            }
        },
        "$ref": "#/$defs/expr",
    }
    index = fsm.compile(JsonSchema(schema), vocab, cache=False)
    assert len(valid_json_walks(index, validator(schema), random.Random(7), 30, max_tokens=120)) >= 10


def test_ambiguous_alternatives_need_no_lalr(vocab, tokenizer):
    """Two recursive branches that share a long prefix: an LALR grammar cannot tell them apart in
    time, the pushdown automaton keeps both configurations until a character decides."""
    schema = {
        "$defs": {
            "node": {
                "type": "object",
                "properties": {"next": {"$ref": "#/$defs/node"}},
                "additionalProperties": False,
            }
        },
        "anyOf": [
            {
                "type": "object",
                "properties": {"a": {"$ref": "#/$defs/node"}, "x": {"const": 1}},
                "required": ["a", "x"],
                "additionalProperties": False,
            },
            {
                "type": "object",
                "properties": {"a": {"$ref": "#/$defs/node"}, "y": {"const": 2}},
                "required": ["a", "y"],
                "additionalProperties": False,
            },
        ],
    }
    index = fsm.compile(JsonSchema(schema), vocab, cache=False)
    assert accepts(index, compact({"a": {"next": {"next": {}}}, "x": 1}), tokenizer)
    assert accepts(index, compact({"a": {"next": {}}, "y": 2}), tokenizer)
    assert not accepts(index, compact({"a": {"next": {}}, "y": 1}), tokenizer)


def test_recursive_refs_beside_redundant_siblings(vocab, tokenizer):
    """A recursive $ref stays a rule call when its siblings add nothing: a ``type`` the target
    generates anyway, or the same subschema reached twice (``properties`` and a matching
    ``patternProperties``); ``not: {}`` forbids a property."""
    person = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "maxLength": 3},
            "friends": {"$ref": "#/$defs/list"},
            "secret": {"not": {}},
        },
        "additionalProperties": False,
    }
    items = {"type": "array", "items": {"anyOf": [{"$ref": "#/$defs/person"}], "type": "object"}}
    schema = {
        "$defs": {"person": person, "list": items},
        "type": "object",
        "properties": {"by": items},
        "patternProperties": {"^b": items},
        "additionalProperties": False,
    }
    index = fsm.compile(JsonSchema(schema), vocab, cache=False)
    v = validator(schema)
    good = {"by": [{"name": "a", "friends": [{"name": "b", "friends": []}]}]}
    assert v.is_valid(good) and accepts(index, compact(good), tokenizer)
    for bad in ({"by": [{"name": "a", "secret": 1}]}, {"by": [{"name": "abcd"}]}, {"by": [1]}):
        assert not v.is_valid(bad)
        assert not accepts(index, compact(bad), tokenizer)
