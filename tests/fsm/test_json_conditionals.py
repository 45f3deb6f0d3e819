"""``if``/``then``/``else``, ``not`` by keyword groups (De Morgan), ``not`` of ``enum``/``const`` of any
type, ``maxContains`` (matches and misses by the negation of ``contains``), several ``contains``,
``contains`` beside ``prefixItems``, and ``oneOf`` made exact by those negations: random schemas
and values, checked against ``jsonschema`` in exact mode — every accepted value validates, and
every valid value whose objects have at most one member (so member order cannot matter) is accepted.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fsm
from fsm.automata.numbers import MAX_FRACTION_DIGITS
from fsm.errors import UnsupportedSchema
from fsm.json.schema import JsonSchema
from fsm.testing import accepts

from .json_helpers import compact, validator

SCALARS = [None, True, False, 0, 1, -3, 2.5, 7, "", "a", "ab", "abc", "b"]

ATOMS = st.sampled_from(
    [
        {"type": "string"},
        {"type": "integer"},
        {"type": "number"},
        {"type": "object"},
        {"type": "array"},
        {"type": ["null", "boolean"]},
        {"minimum": 1},
        {"exclusiveMaximum": 3},
        {"minLength": 2},
        {"maxLength": 1},
        {"pattern": "^a"},
        {"const": 1},
        {"const": "a"},
        {"const": [1]},
        {"const": {"a": 1}},
        {"enum": [None, 2.5, "ab", []]},
        {"required": ["a"]},
        {"minProperties": 1},
        {"maxProperties": 0},
        {"minItems": 2},
        {"maxItems": 1},
        {"dependentRequired": {"a": ["b"]}},
        {"format": "date"},  # an annotation in exact mode
    ]
)


def _compose(children):
    one = children
    two = st.lists(children, min_size=2, max_size=2)
    return st.one_of(
        st.builds(lambda s: {"not": s}, one),
        st.builds(lambda s: {"properties": {"a": s}}, one),
        st.builds(lambda s: {"items": s}, one),
        st.builds(lambda s: {"contains": s}, one),
        st.builds(lambda s: {"contains": s, "minContains": 0, "maxContains": 1}, one),
        st.builds(lambda s: {"prefixItems": [s]}, one),
        st.builds(lambda a, b: {"if": a, "then": b}, one, one),
        st.builds(lambda a, b: {"if": a, "else": b}, one, one),
        st.builds(lambda ab, c: {"if": ab[0], "then": ab[1], "else": c}, two, one),
        st.builds(lambda ab: {"oneOf": ab}, two),
        st.builds(lambda ab: {"anyOf": ab}, two),
        st.builds(lambda ab: {**ab[0], **ab[1]}, two),
    )


SCHEMAS = st.recursive(ATOMS, _compose, max_leaves=4)
VALUES = st.recursive(
    st.sampled_from(SCALARS),
    lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.sampled_from(["a", "b"]), kids, max_size=2),
    max_leaves=5,
)

# a vocabulary of single bytes: acceptance is decided on the text itself
BYTES = fsm.Vocabulary([bytes([i]) for i in range(256)] + [None], eos_token_ids=[256])


def _few_members(v) -> bool:
    if isinstance(v, dict):
        return len(v) <= 1 and all(_few_members(x) for x in v.values())
    if isinstance(v, list):
        return all(_few_members(x) for x in v)
    return True


def check(schema, values) -> bool:
    """Asserts soundness and completeness on ``values``; False when the schema is unsupported."""
    try:
        index = fsm.compile(JsonSchema(schema, exact=True), BYTES, cache=False)
    except UnsupportedSchema:
        return False
    except fsm.SchemaError as exc:  # only a schema nothing satisfies may be refused as such
        assert "admits no JSON document" in str(exc), (schema, exc)
        assert not any(validator(schema, formats=False).is_valid(v) for v in values), schema
        return True
    v = validator(schema, formats=False)
    for value in values:
        ok = accepts(index, compact(value))
        valid = v.is_valid(value)
        assert not ok or valid, ("accepted an invalid value", schema, value)
        if _few_members(value):
            assert ok == valid, ("rejected a valid value", schema, value)
    return True


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema=SCHEMAS, values=st.lists(VALUES, min_size=8, max_size=8))
def test_random_schemas_accept_exactly_what_jsonschema_validates(schema, values):
    check(schema, [*values, *SCALARS, [], {}, {"a": 1}, [1], {"a": "b"}])


CASES = [
    {"if": {"type": "string"}, "then": {"minLength": 2}, "else": {"type": "integer"}},
    {
        "type": "object",
        "if": {"properties": {"kind": {"const": "cat"}}, "required": ["kind"]},
        "then": {"required": ["lives"]},
        "else": {"properties": {"bark": {"type": "boolean"}}},
    },
    {"if": {"minimum": 5}, "then": {"multipleOf": 2}, "else": {"type": "string"}},
    {"not": {"type": "object", "minProperties": 1, "required": ["a"]}},
    {"not": {"enum": [[], {}, 7, 2.5, "x", None]}},
    {"type": "array", "items": {"not": {"const": "cat"}}},
    {
        "oneOf": [
            {"type": "object", "required": ["a"]},
            {"type": "object", "properties": {"a": {"type": "string"}}},
        ]
    },
    {"oneOf": [{"type": "array", "minItems": 2}, {"type": "array", "items": {"type": "integer"}}]},
    {"type": "array", "contains": {"type": "integer"}, "minContains": 1, "maxContains": 2},
    {"contains": {"minimum": 2}, "maxContains": 0, "minContains": 0},
    # several contains: each matched by some item, not one item matching all
    {"allOf": [{"contains": {"const": 1}}, {"contains": {"type": "string"}}]},
    {
        "allOf": [{"contains": {"minimum": 2}}, {"contains": {"maximum": 1}}],
        "contains": {"type": "integer"},
        "minContains": 0,
        "maxItems": 2,
    },
    # contains beside prefixItems: the first match among the prefix items or after them
    {"prefixItems": [{"type": "integer"}], "contains": {"type": "string"}},
    {"prefixItems": [{"maximum": 1}, True], "contains": {"minimum": 2}, "maxItems": 2},
    {"prefixItems": [{"type": "integer"}], "contains": {"type": "string"}, "minContains": 0, "items": False},
]
DOCS = [
    *SCALARS,
    "cat",
    [],
    ["cat"],
    [1, 2],
    [1, "a"],
    [1, 2, 3],
    [1, "a", 2],
    {},
    {"a": 1},
    {"a": "x"},
    {"kind": "cat"},
    {"kind": "cat", "lives": 9},
    {"kind": "dog"},
    {"bark": True, "kind": "dog"},
    {"bark": 1, "kind": "dog"},
]


@pytest.mark.parametrize("schema", CASES, ids=[compact(c)[:50] for c in CASES])
def test_cases_accept_exactly_what_jsonschema_validates(schema):
    assert check(schema, DOCS)


def test_not_of_a_non_string_const_is_enforced_in_both_policies(vocab, tokenizer):
    """A negated enum/const of numbers, arrays or objects was dropped where no type was given."""
    for schema in ({"not": {"const": 1}}, {"properties": {"k": {"not": {"const": [1]}}}}):
        for exact in (False, True):
            index = fsm.compile(JsonSchema(schema, exact=exact), vocab, cache=False)
            v = validator(schema)
            for doc in (1, 1.0, 2, [1], {"k": [1]}, {"k": [2]}, "x"):
                assert not accepts(index, compact(doc), tokenizer) or v.is_valid(doc), (schema, doc, exact)
    assert check({"not": {"const": 1}}, [1, 1.0, 2, "1"])


def test_const_null_has_an_exact_negation():
    """``const: null`` was read as "no const value" and refused under ``not`` (and so any ``if`` on a
    member being null); hypothesis found it as an ``anyOf`` of two member tests."""
    member_null = {"properties": {"k": {"const": None}}}
    for schema in (
        {"not": {"const": None}},
        {"properties": {"k": {"not": {"const": None}}}},
        {"if": member_null, "then": {"required": ["x"]}},
        {"if": {"anyOf": [{"properties": {"k": {"enum": ["a"]}}}, member_null]}, "then": {"required": ["x"]}},
    ):
        assert check(schema, [*DOCS, {"k": None}, {"k": 0}, {"k": None, "x": 1}, {"x": 1}]), schema


def test_if_without_an_exact_negation_names_if():
    with pytest.raises(UnsupportedSchema) as err:
        JsonSchema({"type": "array", "if": {"uniqueItems": True}, "then": {"maxItems": 1}}).to_dfa()
    assert err.value.keyword == "if" and err.value.pointer == "/if"


def test_if_then_else_are_unknown_keywords_before_draft_7():
    schema = {"type": "string", "if": {"minLength": 2}, "then": {"pattern": "^a"}}
    dfa = JsonSchema(schema, draft=6, exact=True).to_dfa()
    assert dfa.accepts(json.dumps("bc").encode())
    assert not JsonSchema(schema, exact=True).to_dfa().accepts(json.dumps("bc").encode())


@settings(max_examples=300, deadline=None)
@given(text=st.from_regex(r"-?(0|[1-9][0-9]{0,20})\.[0-9]{1,22}", fullmatch=True))
def test_not_integer_takes_only_decimals_whose_double_is_not_an_integer(text):
    """A decimal with a nonzero fraction digit can still parse to an integral double
    (15512195914255733.7, 1.0000000000000000001): those stay out of the non-integral numbers.
    Every number language spells at most `MAX_FRACTION_DIGITS` fraction digits (hypothesis once
    drew 0.000000000000000000001, 21 of them): past that, acceptance is not asked for."""
    dfa = JsonSchema({"type": "number", "not": {"type": "integer"}}, exact=True).to_dfa()
    if dfa.accepts(text.encode()):
        assert not float(text).is_integer(), text
    significant = text.lstrip("-").replace(".", "").lstrip("0")
    fraction = text.partition(".")[2]
    if len(significant) <= 15 and len(fraction) <= MAX_FRACTION_DIGITS and not float(text).is_integer():
        assert dfa.accepts(text.encode()), text
