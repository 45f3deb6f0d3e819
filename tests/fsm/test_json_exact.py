"""Exact mode (``JsonSchema(..., exact=True)``) beside the generation policy, and the policy's fallback.

Every language is checked both ways against ``jsonschema``: instances the validator accepts are
accepted (save the documented exceptions: layout and property order), the others rejected.
"""

from __future__ import annotations

import json
import random

import pytest

import fsm
from fsm.errors import SchemaError, UnsupportedSchema
from fsm.json.policy import EXACT, GENERATION
from fsm.json.schema import JsonSchema
from fsm.testing import accepts, random_walk

from .json_helpers import compact, validator

# schema, instances (as JSON text: the spelling matters)
CASES = [
    (
        {"properties": {"a": {"type": "string"}}},
        ['{"a":"x"}', "12", '"s"', "null", "[1]", '{"a":1}', '{"a":"x","b":[{}]}'],
    ),
    ({"type": "integer"}, ["1", "1.0", "-3.00", "1.5", "1e2x", '"1"']),
    ({"type": "integer", "minimum": 2, "multipleOf": 2}, ["2", "2.0", "4.00", "3.0", "0.0"]),
    ({"const": 0}, ["0", "0.0", "-1", "false"]),
    ({"enum": [-2.0, [1]]}, ["-2", "-2.0", "[1.0]", "[1]", "[true]", "-2.5"]),
    ({"const": {"a": 1, "b": "x"}}, ['{"a":1,"b":"x"}', '{"b":"x","a":1.0}', '{"a":1}']),
    ({"type": "string", "format": "date"}, ['"2020-01-01"', '"yesterday"', "1"]),
    ({"minLength": 2}, ['"ab"', '"a"', "7", "{}", "[]"]),
    (
        {"type": "object", "properties": {"a": {"type": "null"}}, "additionalProperties": False},
        ['{"a":null}', '{"b":1}', "{}"],
    ),
]


@pytest.mark.parametrize(("schema", "texts"), CASES, ids=[json.dumps(c[0])[:40] for c in CASES])
def test_exact_language_is_the_valid_instances(schema, texts, vocab, tokenizer):
    index = fsm.compile(JsonSchema(schema, exact=True), vocab, cache=False)
    v = validator(schema, formats=False)
    for text in texts:
        try:
            valid = v.is_valid(json.loads(text))
        except json.JSONDecodeError:
            valid = False
        assert accepts(index, text, tokenizer) == valid, (schema, text, valid)


def test_generation_policy_differs_where_documented(vocab, tokenizer):
    """The default keeps one spelling, infers types and generates no undeclared property."""
    for schema, text in [
        ({"properties": {"a": {"type": "string"}}}, "12"),
        ({"type": "integer"}, "1.0"),
        ({"const": 0}, "0.0"),
        ({"properties": {"a": {"type": "string"}}}, '{"a":"x","b":1}'),
    ]:
        assert validator(schema).is_valid(json.loads(text))
        assert not accepts(fsm.compile(JsonSchema(schema), vocab, cache=False), text, tokenizer)
        assert accepts(fsm.compile(JsonSchema(schema, exact=True), vocab, cache=False), text, tokenizer)


def test_policy_is_a_value_given_at_construction():
    assert JsonSchema({}, exact=True).policy is EXACT
    assert JsonSchema({}).policy == GENERATION
    assert JsonSchema({}, allow_additional_properties=True).policy.additional_properties
    assert JsonSchema({}, exact=True).fingerprint != JsonSchema({}).fingerprint


def test_generation_policy_falls_back_instead_of_refusing_a_satisfiable_schema(vocab, tokenizer):
    schema = {"minProperties": 1}
    spec = JsonSchema(schema)
    index = fsm.compile(spec, vocab, cache=False)
    assert spec.policy_used == GENERATION.fallback()
    v = validator(schema)
    assert accepts(index, '{"k":1}', tokenizer) and not accepts(index, "{}", tokenizer)
    rnd = random.Random(5)
    for _ in range(20):
        walk = random_walk(index, rnd, max_tokens=40, eos_bias=0.7)
        if walk.finished:
            assert v.is_valid(json.loads(walk.text)), walk.text
    # a schema nothing satisfies still says so, under either policy
    for exact in (False, True):
        with pytest.raises(SchemaError, match="admits no JSON document"):
            JsonSchema({"type": "string", "minLength": 3, "maxLength": 2}, exact=exact).to_dfa()


def test_keywords_not_enforced_exactly_still_raise():
    for schema, kw in [
        ({"if": {"uniqueItems": True}, "then": {"maxItems": 1}}, "if"),
        ({"type": "number", "not": {"multipleOf": 0.3}}, "not"),
    ]:
        with pytest.raises(UnsupportedSchema) as err:
            JsonSchema(schema, exact=True).to_dfa()
        assert err.value.keyword == kw


def test_exact_random_walks_validate(vocab):
    rnd = random.Random(9)
    for schema, _ in CASES:
        index = fsm.compile(JsonSchema(schema, exact=True), vocab, cache=False)
        v = validator(schema, formats=False)
        for _ in range(10):
            walk = random_walk(index, rnd, max_tokens=40, eos_bias=0.6)
            if walk.finished:
                assert v.is_valid(json.loads(walk.text)), (schema, walk.text)


def test_output_type_takes_exact():
    import guide.output_types as ot

    kind = ot.output_type({"type": "integer"}, exact=True)
    assert kind.spec.exact and kind.parse("2.0") == 2.0
    assert not ot.output_type({"type": "integer"}).spec.exact
    assert compact(kind.parse("1")) == "1"


@pytest.mark.parametrize(
    "schema",
    [
        {"propertyNames": {"type": "string", "maxLength": 3}},
        {"propertyNames": {"type": "number"}},  # admits only {} among objects: no name is a number
        {"type": "object", "properties": {"a": {"type": "integer"}}, "propertyNames": {"type": "boolean"}},
        {"propertyNames": {"type": ["null", "string"], "maxLength": 1}, "additionalProperties": True},
    ],
    ids=lambda s: json.dumps(s)[:50],
)
def test_property_names_with_a_type_are_sound_in_both_modes(schema, vocab, tokenizer):
    """A property name is a string: ``propertyNames`` whose ``type`` excludes strings allows no name."""
    v = validator(schema)
    texts = ["{}", '{"a":1}', '{"ab":2}', '{"abcd":3}', '{"a":1,"b":2}', "12", '"s"']
    for exact in (False, True):
        index = fsm.compile(JsonSchema(schema, exact=exact), vocab, cache=False)
        for text in texts:
            if accepts(index, text, tokenizer):
                assert v.is_valid(json.loads(text)), (exact, text)
        if exact:  # exactly the valid instances
            assert [accepts(index, t, tokenizer) for t in texts] == [v.is_valid(json.loads(t)) for t in texts]
