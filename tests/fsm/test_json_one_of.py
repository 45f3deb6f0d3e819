"""``oneOf`` whose branches overlap, made exact by the negations of the other branches (type
difference, overlapping ``enum``s, numeric bounds), and ``unevaluatedProperties``/``unevaluatedItems``
with schema values; checked against ``jsonschema`` in both policies."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fsm
from fsm.errors import UnsupportedSchema
from fsm.json import one_of
from fsm.json.schema import JsonSchema
from fsm.testing import accepts

from .json_helpers import compact, validator

BYTES = fsm.Vocabulary([bytes([i]) for i in range(256)] + [None], eos_token_ids=[256])

CASES = [
    # the member a negated other branch declares is not evaluated (a failed subschema annotates nothing)
    (
        {
            "type": "object",
            "oneOf": [
                {"properties": {"bar": {"const": "bar"}}, "required": ["bar"]},
                {"properties": {"baz": {"const": "baz"}}, "required": ["baz"]},
            ],
            "unevaluatedProperties": False,
        },
        [{"bar": "bar", "baz": None}, {"bar": "bar"}, {"baz": "baz"}, {"bar": "bar", "baz": "baz"}, {}],
    ),
    ({"oneOf": [{"type": "integer"}, {"type": "number"}]}, [1, 1.5, -2.25, 0, 3.0, "x", None]),
    ({"oneOf": [{"enum": [1, 2, "a"]}, {"enum": [2, 3]}]}, [1, 2, 3, "a", 4]),
    ({"oneOf": [{"type": "integer"}, {"minimum": 2}]}, [1, 2, 5, 1.5, 2.5, "s"]),
    ({"oneOf": [{"type": "string"}, {"minLength": 3}]}, ["ab", "abcd", 1]),
    ({"type": "number", "not": {"type": "integer"}}, [1, 1.5, 2.0, -0.5]),
    ({"type": "number", "not": {"minimum": 3, "exclusiveMaximum": 7}}, [2, 3, 6.5, 7, 8]),
    (
        {
            "type": "object",
            "properties": {"foo": {"type": "string"}},
            "unevaluatedProperties": {"type": "integer"},
        },
        [{"foo": "x"}, {"foo": "x", "b": 1}, {"foo": "x", "b": "y"}, {"b": 2}],
    ),
    (
        {"allOf": [{"properties": {"foo": {}}}, {"unevaluatedProperties": False}]},
        [{"foo": 1}, {}, {"bar": 1}],
    ),
    (
        {"type": "object", "allOf": [{"properties": {"bar": {}}}], "unevaluatedProperties": False},
        [{"bar": 1}, {"baz": 1}],
    ),
    (
        {"type": "array", "prefixItems": [{"type": "string"}], "unevaluatedItems": {"type": "integer"}},
        [["a"], ["a", 1, 2], ["a", "b"]],
    ),
    (
        {
            "type": "array",
            "allOf": [{"prefixItems": [True, {"type": "number"}]}],
            "prefixItems": [{"type": "string"}],
            "unevaluatedItems": False,
        },
        [["a", 1], ["a", 1, 2], ["a"], ["a", "b"]],
    ),
]


@pytest.mark.parametrize(("schema", "values"), CASES, ids=[compact(c[0])[:50] for c in CASES])
@pytest.mark.parametrize("exact", [False, True], ids=["generation", "exact"])
def test_accepts_what_jsonschema_validates(schema, values, exact, vocab, tokenizer):
    index = fsm.compile(JsonSchema(schema, exact=exact), vocab, cache=False)
    v = validator(schema)
    typed = "type" in schema or (
        "oneOf" in schema and all("type" in b or "enum" in b for b in schema["oneOf"])
    )
    for value in values:
        ok = accepts(index, compact(value), tokenizer)
        if ok or exact or typed:
            assert ok == v.is_valid(value), (schema, value, exact)


def test_overlap_without_an_exact_negation_names_one_of():
    with pytest.raises(UnsupportedSchema) as err:
        JsonSchema({"oneOf": [{"type": "integer"}, {"multipleOf": 0.5}]}).to_dfa()
    assert err.value.keyword == "oneOf"


def test_making_branches_exclusive_has_a_share_of_the_time(monkeypatch):
    """The negations that make overlapping branches exclusive run on a share of max_seconds; past
    it the oneOf is refused as before (UnsupportedSchema, in bounded time), not the whole compile."""
    props = {f"p{i}": {"type": "integer"} for i in range(12)}
    closed = {"type": "object", "properties": props, "additionalProperties": False}
    small = {"type": "object", "properties": {"p0": {"type": "integer"}}, "additionalProperties": False}
    schema = {"oneOf": [closed, small]}
    vocab = fsm.Vocabulary([bytes([i]) for i in range(256)] + [None], eos_token_ids=[256])
    index = fsm.compile(JsonSchema(schema, exact=True), vocab, cache=False)
    assert accepts(index, '{"p1":1}') and not accepts(index, '{"p0":1}') and not accepts(index, "{}")
    monkeypatch.setattr(one_of, "NEGATION_SHARE", 0.0)
    with pytest.raises(UnsupportedSchema) as err:
        fsm.compile(JsonSchema(schema, exact=True), vocab, cache=False)
    assert err.value.keyword == "oneOf"


# oneOf branches made exclusive without negating a branch: proved disjoint, or types or finite
# values two branches take left out (each schema written from the spec's keywords)
KIND = {"$defs": {"kind": {"enum": ["a", "b"]}}}
PROVED = {
    # a discriminator both require, its values through a $ref: disjoint enums
    "discriminator_by_ref": {
        **KIND,
        "oneOf": [
            {"type": "object", "required": ["k"], "properties": {"k": {"$ref": "#/$defs/kind"}}},
            {"type": "object", "required": ["k"], "properties": {"k": {"const": "c"}}},
        ],
    },
    # a member one branch requires as a string, the other (open) constrains to null by a pattern
    "pattern_constrains_required": {
        "oneOf": [
            {"type": "object", "required": ["m"], "properties": {"m": {"type": "string"}}},
            {"type": "object", "required": ["s"], "patternProperties": {"^m$": {"type": "null"}}},
        ]
    },
    # a member one branch requires and the other's additionalProperties: false forbids
    "closed_forbids_required": {
        "oneOf": [
            {"type": "object", "required": ["x"]},
            {
                "type": "object",
                "properties": {"y": {}},
                "patternProperties": {"^z": {}},
                "additionalProperties": False,
            },
        ]
    },
    # required against not required (an anyOf of one branch once negated)
    "required_vs_not_required": {
        "type": "object",
        "oneOf": [
            {"required": ["a"], "not": {"required": ["b"]}},
            {"required": ["b"], "not": {"required": ["a"]}},
        ],
    },
    # a finite branch none of whose values the other branch takes
    "finite_outside_pattern": {"oneOf": [{"type": "string", "pattern": "^x"}, {"enum": ["ab", "cd", 1]}]},
    # numeric ranges meeting at an excluded bound
    "touching_ranges": {
        "oneOf": [{"type": "number", "maximum": 0}, {"type": "integer", "exclusiveMinimum": 0}]
    },
    # every value of the types no branch constrains is taken by both: only objects can be valid
    "untyped_discriminator": {
        "oneOf": [
            {"required": ["k"], "properties": {"k": {"const": 1}}},
            {"required": ["k"], "properties": {"k": {"const": 2}}},
        ]
    },
    # the discriminator inside an anyOf of one side: each branch of it disjoint from the other side
    "split_any_of": {
        "oneOf": [
            {
                "type": "object",
                "anyOf": [
                    {"required": ["k"], "properties": {"k": {"const": 1}}},
                    {"required": ["k"], "properties": {"k": {"const": 2}}},
                ],
            },
            {"type": "object", "required": ["k"], "properties": {"k": {"type": "string"}}},
        ]
    },
    # finite branches' values two branches take are valid for none (found by the validator)
    "finite_shared_values": {
        "oneOf": [{"enum": [1, "a", None, 2.5]}, {"type": "string"}, {"type": "integer", "minimum": 0}]
    },
    "finite_shared_object": {
        "oneOf": [
            {"enum": [{"k": "a"}, {"k": 1}]},
            {"type": "object", "required": ["k"], "properties": {"k": {"type": "string"}}},
        ]
    },
}
PROVED_DRAFT4 = {
    "$schema": "http://json-schema.org/draft-04/schema#",
    "oneOf": [
        {"type": "number", "maximum": 1, "exclusiveMaximum": True},
        {"type": "number", "minimum": 1},
    ],
}
MEMBER_KEYS = ["k", "m", "s", "x", "y", "z1", "a", "b"]  # in the order the schemas declare them
SCALARS = st.sampled_from([None, True, False, 0, 1, 2, -1, 0.5, 1.5, "", "a", "b", "c", "ab", "cd", "x1"])
JSON = st.recursive(
    SCALARS,
    lambda kids: st.one_of(
        st.lists(kids, max_size=2),
        st.dictionaries(st.sampled_from(MEMBER_KEYS), kids, max_size=3).map(
            lambda d: {k: d[k] for k in sorted(d, key=MEMBER_KEYS.index)}
        ),
    ),
    max_leaves=6,
)
PROVED_INDEXES: dict = {}


def _proved_index(name, schema):
    if name not in PROVED_INDEXES:
        PROVED_INDEXES[name] = fsm.compile(JsonSchema(schema, exact=True), BYTES, cache=False)
    return PROVED_INDEXES[name]


def _declared_first(schema, value):
    """``value``'s members in the order exact mode reads them: the names the branches declare or
    require (in the order they do), then the others."""
    if not isinstance(value, dict):
        return value
    names: list = []
    for b in schema["oneOf"]:
        for sub in [b, *b.get("anyOf", [])]:
            names += [n for n in [*sub.get("properties", {}), *sub.get("required", [])] if n not in names]
    order = names + [k for k in MEMBER_KEYS if k not in names]
    return {k: value[k] for k in sorted(value, key=order.index)}


@settings(max_examples=400, deadline=None)
@given(name=st.sampled_from(sorted(PROVED)), value=JSON)
def test_disjoint_branches_accept_what_jsonschema_validates(name, value):
    schema = PROVED[name]
    value = _declared_first(schema, value)
    index = _proved_index(name, schema)
    ok, valid = accepts(index, compact(value)), validator(schema).is_valid(value)
    if valid and not ok and isinstance(value, dict):
        # the matching branch may declare its members in another order than the first branch
        ok = any(accepts(index, compact(dict(p))) for p in itertools.permutations(value.items()))
    assert ok == valid, (name, value)


@pytest.mark.parametrize("name", sorted(PROVED))
def test_disjoint_branches_need_no_negation(name, monkeypatch):
    """Proved disjoint: compiled with no time for negations (which would refuse the oneOf)."""
    monkeypatch.setattr(one_of, "NEGATION_SHARE", 0.0)
    monkeypatch.setattr(one_of, "negation", lambda *a: pytest.fail("negated"))
    fsm.compile(JsonSchema(PROVED[name], exact=True), BYTES, cache=False)


def test_draft4_boolean_exclusive_bounds_are_disjoint_ranges(monkeypatch):
    monkeypatch.setattr(one_of, "negation", lambda *a: pytest.fail("negated"))
    index = fsm.compile(JsonSchema(PROVED_DRAFT4, exact=True), BYTES, cache=False)
    v = validator(PROVED_DRAFT4)
    for value in [0, 0.5, 1, 1.0, 2, -3, "1"]:
        assert accepts(index, compact(value)) == v.is_valid(value), value


@pytest.mark.parametrize(
    ("name", "values"),
    [
        ("finite_shared_values", [1, "a", None, 2.5, 0, 2, "b", "", -1, 1.5, True]),
        ("finite_shared_object", [{"k": "a"}, {"k": 1}, {"k": "b"}, {"k": 2}, {}, "a"]),
        ("untyped_discriminator", [{"k": 1}, {"k": 2}, {"k": 3}, {}, "s", 1, None, []]),
    ],
)
def test_left_out_values_table(name, values):
    index, v = _proved_index(name, PROVED[name]), validator(PROVED[name])
    for value in values:
        assert accepts(index, compact(value)) == v.is_valid(value), value


def test_a_shared_one_of_is_proved_once(monkeypatch):
    """Branches that exclude each other on their own do whatever their siblings: a oneOf definition
    used under many parents is proved once per translation."""
    calls = []
    real = one_of._disjoint
    monkeypatch.setattr(one_of, "_disjoint", lambda *a, **k: calls.append(1) or real(*a, **k))
    d = {"oneOf": [{"type": "string"}, {"type": "integer"}, {"type": "object", "required": ["k"]}]}
    props = {f"p{i}": {"allOf": [{"$ref": "#/$defs/d"}, {"maxLength": i}]} for i in range(8)}
    schema = {"$defs": {"d": d}, "type": "object", "properties": props}
    index = fsm.compile(JsonSchema(schema, exact=True), BYTES, cache=False)
    assert accepts(index, '{"p0":1,"p3":"abc"}') and not accepts(index, '{"p2":"abc"}')
    assert len(calls) <= 3  # one per pair of branches
