"""``unevaluatedProperties``/``unevaluatedItems`` follow the branches an instance takes: an ``if`` that
passes evaluates with its ``then`` (one that fails evaluates nothing, its ``else`` what it
evaluates: `fsm.json.conditionals`), ``anyOf`` branches that pass together evaluate together
(`fsm.json.any_of_unions`), a nested unevaluated* evaluates what its siblings leave
(`fsm.json.objects`, `fsm.json.arrays`), and (2020-12) ``contains`` evaluates the items it matches.
Every instance is checked against ``jsonschema`` both ways, in each member order the matcher
could take; random schemas of those keywords too.
"""

from __future__ import annotations

import itertools
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fsm
from fsm.json.schema import JsonSchema
from fsm.testing import accepts

from .json_helpers import compact, validator

BYTES = fsm.Vocabulary([bytes([i]) for i in range(256)] + [None], eos_token_ids=[256])
S2020 = "https://json-schema.org/draft/2020-12/schema"

STR = {"type": "string"}
OBJECTS = [
    # if passes: its members and then's; fails: else's
    {
        "if": {"properties": {"a": {"const": 1}}, "required": ["a"]},
        "then": {"properties": {"b": STR}},
        "else": {"properties": {"c": STR}},
        "unevaluatedProperties": False,
    },
    # no then/else: the if still evaluates where it passes
    {"if": {"patternProperties": {"^a": STR}}, "unevaluatedProperties": False},
    # no exact negation of the if (uniqueItems), then absent: the else is taken where the if may
    # pass too, so what it evaluates is not counted (``{"a": 1, "b": 2}`` is invalid)
    {
        "if": {"properties": {"a": {"uniqueItems": True}}},
        "else": {"properties": {"b": {}}},
        "unevaluatedProperties": False,
    },
    # a conditional under allOf, the unevaluated keyword above it
    {
        "allOf": [{"if": {"required": ["a"]}, "then": {"properties": {"a": {}, "b": {}}}}],
        "unevaluatedProperties": {"type": "integer"},
    },
    # anyOf branches passing together evaluate together
    {
        "anyOf": [
            {"properties": {"a": {"const": 1}}, "required": ["a"]},
            {"properties": {"b": {"const": 2}}, "required": ["b"]},
            {"properties": {"c": STR}},
        ],
        "unevaluatedProperties": False,
    },
    # nested unevaluated: the inner one evaluates what its siblings leave
    {"properties": {"a": STR}, "allOf": [{"unevaluatedProperties": True}], "unevaluatedProperties": False},
    {
        "allOf": [{"properties": {"a": STR}, "unevaluatedProperties": {"type": "integer"}}],
        "unevaluatedProperties": False,
    },
    # under a not nothing is evaluated: b is unevaluated even where the double negation passes
    {"properties": {"a": {}}, "not": {"not": {"properties": {"b": STR}}}, "unevaluatedProperties": False},
]
OBJECT_VALUES = [
    {},
    {"a": 1},
    {"a": 1, "b": "x"},
    {"a": 1, "c": "x"},
    {"a": 2, "c": "x"},
    {"c": "x"},
    {"b": 2},
    {"a": 1, "b": 2},
    {"a": 1, "b": 2, "c": "x"},
    {"a": "s"},
    {"a": "s", "b": 3},
    {"a": "s", "d": 4},
    {"ab": "s", "b": 1},
    {"b": "x", "c": 1},
    {"a": [1, 1], "b": 1},
]
ARRAYS = [
    {
        "prefixItems": [{"const": "f"}],
        "if": {"prefixItems": [True, {"const": "b"}]},
        "then": {"prefixItems": [True, True, {"const": "t"}]},
        "else": {"prefixItems": [True, True, True, {"const": "e"}]},
        "unevaluatedItems": False,
    },
    {"if": {"prefixItems": [{"const": "a"}]}, "unevaluatedItems": False},
    {"allOf": [{"prefixItems": [STR]}, {"unevaluatedItems": True}], "unevaluatedItems": False},
    {"contains": STR, "minContains": 0, "unevaluatedItems": False},
    {"allOf": [{"contains": {"const": 1}}], "unevaluatedItems": {"type": "integer", "minimum": 5}},
    {"if": {"contains": {"const": "a"}}, "then": {"items": STR}, "unevaluatedItems": False},
    # several contains evaluate what each matches; one inside a then only where its if passes
    {
        "allOf": [{"contains": {"multipleOf": 2}}, {"contains": {"multipleOf": 3}}],
        "unevaluatedItems": {"multipleOf": 5},
    },
    {
        "if": {"contains": {"const": "a"}},
        "then": {"if": {"contains": {"const": "x"}}},
        "unevaluatedItems": False,
    },
]
ARRAY_VALUES = [
    [],
    ["f", "b", "t"],
    ["f", "b", "t", "e"],
    ["f", 1, 1, "e"],
    ["f", 1, 1, "e", 1],
    ["a"],
    ["b"],
    ["a", "x"],
    ["a", 1],
    [1, "x"],
    ["x", "y"],
    [1, 6],
    [1, 2],
    [6],
    [0],
    [2, 3, 4, 5],
    [2, 3, 7],
    [2, 5],
    ["x", "a", "x"],
    ["a", "a"],
]


def _index(schema):
    return fsm.compile(JsonSchema(schema, exact=True), BYTES, cache=False, limits=fsm.Limits(max_seconds=120))


def _some_order(index, value) -> bool:
    if isinstance(value, dict):
        return any(accepts(index, compact(dict(p))) for p in itertools.permutations(value.items()))
    return accepts(index, compact(value))


def _check(schema, values) -> None:
    schema = {"$schema": S2020, **schema}
    index = _index(schema)
    v = validator(schema)
    verdicts = set()
    for value in values:
        valid = v.is_valid(value)
        verdicts.add(valid)
        assert _some_order(index, value) == valid, (schema, value)
    assert verdicts == {True, False}


@pytest.mark.parametrize("schema", OBJECTS, ids=[compact(s)[:60] for s in OBJECTS])
def test_unevaluated_properties_follow_the_branch_taken(schema):
    _check(schema, OBJECT_VALUES)


@pytest.mark.parametrize("schema", ARRAYS, ids=[compact(s)[:60] for s in ARRAYS])
def test_unevaluated_items_follow_the_branch_taken(schema):
    _check(schema, ARRAY_VALUES)


def test_contains_evaluates_nothing_before_2020_12():
    """Draft 2019-09: ``unevaluatedItems`` reads the annotations of ``items``, ``additionalItems`` and
    ``unevaluatedItems`` only (its section 9.3.1.3; ``jsonschema`` counts ``contains`` there too), so
    an array with a string is never valid here."""
    schema = {
        "$schema": "https://json-schema.org/draft/2019-09/schema",
        "contains": STR,
        "unevaluatedItems": False,
    }
    index = _index(schema)
    assert not accepts(index, '["x"]') and not accepts(index, "[1]") and accepts(index, "1")
    assert validator(schema).is_valid(["x"])  # the validator's reading, wider than the draft's


NAMES = ("a", "b", "c")
LEAVES = st.sampled_from([True, False, {"type": "integer"}, STR, {"const": 1}])


PIECES = st.one_of(
    st.builds(
        lambda ns, v: {"properties": {n: v for n in ns}}, st.sets(st.sampled_from(NAMES), min_size=1), LEAVES
    ),
    st.builds(lambda ns: {"required": sorted(ns)}, st.sets(st.sampled_from(NAMES), min_size=1)),
    st.builds(lambda p, v: {"patternProperties": {p: v}}, st.sampled_from(["^a", "b|c"]), LEAVES),
    st.sampled_from([{"unevaluatedProperties": True}, {"unevaluatedProperties": {"type": "integer"}}]),
)


def _compose(children):
    return st.one_of(
        st.builds(lambda i, t, e: {"if": i, "then": t, "else": e}, children, children, children),
        st.builds(lambda i, t: {"if": i, "then": t}, children, children),
        st.builds(lambda i: {"if": i}, children),
        st.builds(lambda xs: {"anyOf": xs}, st.lists(children, min_size=2, max_size=3)),
        st.builds(lambda xs: {"allOf": xs}, st.lists(children, min_size=1, max_size=2)),
    )


SCHEMAS = st.builds(
    lambda body, u: {**body, "unevaluatedProperties": u},
    st.recursive(PIECES, _compose, max_leaves=4),
    st.sampled_from([False, {"type": "integer"}]),
)
VALUES = st.dictionaries(st.sampled_from((*NAMES, "bb")), st.sampled_from([1, "s", 2]), max_size=3)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema=SCHEMAS, values=st.lists(VALUES, min_size=6, max_size=6))
def test_random_schemas_accept_exactly_what_jsonschema_validates(schema, values):
    schema = {"$schema": S2020, **schema}
    try:
        index = _index(schema)
    except fsm.SpecError:
        return  # refused (an if without an exact negation, no document): nothing accepted to check
    v = validator(schema)
    for value in values:
        assert _some_order(index, value) == v.is_valid(value), (json.dumps(schema), value)
