"""Conditionals testing one member's value read as one switch (`fsm.json.switch`): random groups of
them checked against ``jsonschema`` in exact mode (every accepted value validates; every valid value
whose objects have at most one member is accepted), and many of them translated in bounded time."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fsm
from fsm.errors import UnsupportedSchema
from fsm.json.context import Loc
from fsm.json.schema import JsonSchema
from fsm.json.switch import switches
from fsm.testing import accepts

from .json_helpers import BYTES, check_exact_verdicts, compact, validator

# JSON-equal spellings (1 and 1.0, [1] and [1.0]) and look-alikes that are not (true and 1)
LISTED = ["a", "b", 1, 1.0, True, None, [1], [1.0], {"v": 1}]
CONSEQUENCES = [
    {"required": ["x"]},
    {"properties": {"x": {"type": "integer"}}},
    {"type": "object"},
    {"type": "string"},
    {"maxProperties": 1},
    {"minProperties": 1},
    False,
]


@st.composite
def _member(draw):
    values = draw(st.lists(st.sampled_from(LISTED), min_size=1, max_size=3))
    member = {"const": values[0]} if len(values) == 1 and draw(st.booleans()) else {"enum": values}
    if draw(st.booleans()):
        member["type"] = draw(st.sampled_from(["string", "integer", "array"]))
    return draw(st.sampled_from([member, {"not": member}, False]))


@st.composite
def _test(draw):
    cond = {"properties": {"k": draw(_member())}}
    if draw(st.booleans()):
        cond["required"] = ["k"]
    if draw(st.booleans()):
        cond["type"] = "object"
    return draw(st.sampled_from([cond, {"required": ["k"]}, {"type": "object"}]))


_IF = st.recursive(
    _test(),
    lambda kids: st.one_of(
        st.builds(lambda s: {"not": s}, kids),
        st.builds(lambda a: {"anyOf": a}, st.lists(kids, min_size=1, max_size=2)),
        st.builds(lambda a: {"allOf": a}, st.lists(kids, min_size=1, max_size=2)),
    ),
    max_leaves=3,
)


@st.composite
def _conditional(draw):
    out = {"if": draw(_IF)}
    for kw in ("then", "else"):
        if draw(st.booleans()):
            out[kw] = draw(st.sampled_from(CONSEQUENCES))
    return out


@st.composite
def _schema(draw):
    """Conditionals in an allOf, one maybe beside it, maybe under a requirement of the member."""
    conds = draw(st.lists(_conditional(), min_size=2, max_size=4))
    schema: dict = {"allOf": conds[1:]}
    if draw(st.booleans()):
        schema.update(conds[0])
    else:
        schema["allOf"].append(conds[0])
    if draw(st.booleans()):
        schema["required"] = ["k"]
    return schema


DOCS = [
    None,
    1,
    "a",
    [],
    {},
    {"x": 1},
    {"x": "s"},
    *({"k": v} for v in LISTED),
    {"k": 2},
    {"k": "c"},
    {"k": "a", "x": 1},
    {"k": 1.0, "x": "s"},
    {"k": None, "x": 2},
]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema=_schema())
def test_conditionals_on_one_member_accept_exactly_what_jsonschema_validates(schema):
    check_exact_verdicts(schema, DOCS)


def test_an_absent_member_passes_every_if_that_does_not_require_it():
    """With the member absent (or on a non-object) every such ``if`` passes: all ``then``s apply."""
    schema = {
        "allOf": [
            {"if": {"properties": {"k": {"const": "a"}}}, "then": {"required": ["x"]}},
            {"if": {"properties": {"k": {"const": "b"}}}, "then": {"maxProperties": 1}},
            {"if": {"properties": {"k": {"const": "c"}}, "required": ["k"]}, "then": False},
        ]
    }
    check_exact_verdicts(schema, [*DOCS, {"x": 1, "y": 2}, {"k": "c"}, {"k": "b", "x": 1}])
    index = fsm.compile(JsonSchema(schema, exact=True), BYTES, cache=False)
    assert accepts(index, '{"x":1}') and not accepts(index, "{}") and not accepts(index, '{"k":"c"}')


def test_only_conditionals_on_one_member_in_one_resource_are_grouped():
    def cond(name, value, base="urn:a"):
        return Loc({"if": {"properties": {name: {"const": value}}}, "then": {"required": ["x"]}}, "", base)

    conds = [
        cond("k", 1),
        cond("j", 1),
        cond("k", 2),
        cond("j", 2, "urn:b"),
        Loc({"if": {"properties": {"k": {"const": 3}}, "minProperties": 1}, "then": False}, "", "urn:a"),
    ]
    assert [members for members, _ in switches(None, conds)] == [[0, 2]]


def test_a_hundred_conditionals_on_a_discriminator_translate_in_bounded_time():
    """One conditional at a time this is 2^100 conjunctions; one switch, 102 branches."""
    kinds = [f"kind{i}" for i in range(100)]
    schema = {
        "type": "object",
        "properties": {"type": {"type": "string"}, "props": {"type": "object"}},
        "required": ["type"],
        "additionalProperties": False,
        "allOf": [
            {
                "if": {"properties": {"type": {"const": kind}}},
                "then": {"properties": {"props": {"required": [f"p{i}"]}}},
            }
            for i, kind in enumerate(kinds)
        ],
    }
    index = fsm.compile(
        JsonSchema(schema, exact=True), BYTES, cache=False, limits=fsm.Limits(max_seconds=120)
    )
    v = validator(schema)
    docs = [
        {"type": "kind7", "props": {"p7": 1}},
        {"type": "kind7", "props": {"p8": 1}},
        {"type": "kind7"},
        {"type": "other", "props": {}},
        {"props": {"p1": 1}},
    ]
    for doc in docs:
        assert accepts(index, compact(doc)) == v.is_valid(doc), doc


def test_values_every_if_decides_alike_share_one_branch():
    """Two ifs over long enums: a branch per way the ifs decide a value, not one per value."""
    low, high = [f"v{i}" for i in range(60)], [f"v{i}" for i in range(40, 100)]
    conds = [
        Loc({"if": {"properties": {"n": {"enum": vals}}}, "then": {"required": [name]}}, f"/allOf/{i}", "u")
        for i, (vals, name) in enumerate(((low, "a"), (high, "b")))
    ]
    ((_, switch),) = switches(None, conds)
    assert len(switch.schema["anyOf"]) == 5  # absent; low only; both; high only; neither
    schema = {"allOf": [c.schema for c in conds]}
    check_exact_verdicts(
        schema, [{"n": "v5"}, {"n": "v50"}, {"n": "v70"}, {"n": "w"}, {"n": 1}, {"a": 1}, {"b": 1}, {}, 3]
    )


def test_a_switch_leaves_an_if_without_exact_negation_to_be_reported():
    schema = {
        "type": "array",
        "allOf": [
            {"if": {"uniqueItems": True}, "then": {"maxItems": 1}},
            {"if": {"minItems": 1}, "then": {}},
        ],
    }
    with pytest.raises(UnsupportedSchema) as err:
        JsonSchema(schema).to_dfa()
    assert err.value.keyword == "if" and err.value.pointer == "/allOf/0/if"
