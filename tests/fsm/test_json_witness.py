"""``not`` of ``patternProperties``, ``additionalProperties`` and ``propertyNames`` (a `Witness`: some
member whose key and value break them) and ``oneOf`` over closed objects made exact through it: random
schemas and objects against ``jsonschema`` in exact mode — every accepted object validates, and every
valid object of at most one member (member order cannot matter) is accepted.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fsm.errors import UnsupportedSchema

from .json_helpers import check_exact_verdicts

KEYS = ["a", "ab", "b", "ba", "0"]
VALUE_SCHEMAS = st.sampled_from(
    [True, False, {"type": "integer"}, {"type": "string"}, {"minimum": 3}, {"not": {"type": "null"}}]
)
PATTERNS = st.sampled_from(["^a", "b$", "^.$", "0"])
GROUPS = st.one_of(
    st.builds(lambda p, s: {"patternProperties": {p: s}}, PATTERNS, VALUE_SCHEMAS),
    st.builds(
        lambda k, s, a: {"properties": {k: s}, "additionalProperties": a},
        st.sampled_from(KEYS),
        VALUE_SCHEMAS,
        VALUE_SCHEMAS,
    ),
    st.builds(
        lambda p, s, a: {"patternProperties": {p: s}, "additionalProperties": a},
        PATTERNS,
        VALUE_SCHEMAS,
        VALUE_SCHEMAS,
    ),
    st.builds(lambda p: {"propertyNames": {"pattern": p}}, PATTERNS),
    st.sampled_from([{"propertyNames": {"maxLength": 1}}, {"propertyNames": {"not": {"const": "0"}}}]),
)
SCHEMAS = st.one_of(
    GROUPS.map(lambda g: {"not": g}),
    st.builds(lambda a, b: {"type": "object", "not": a, **b}, GROUPS, GROUPS),
    st.lists(GROUPS, min_size=2, max_size=3).map(lambda gs: {"type": "object", "oneOf": gs}),
)
VALUES = st.sampled_from([None, 1, 5, "s", [], {}])
OBJECTS = st.dictionaries(st.sampled_from(KEYS), VALUES, max_size=3)


def check(schema, docs) -> None:
    try:
        check_exact_verdicts(schema, docs)
    except UnsupportedSchema:
        # a positive propertyNames of a negated const (a oneOf branch) is still refused
        assert "oneOf" in schema or "type" in schema, schema


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema=SCHEMAS, docs=st.lists(OBJECTS, min_size=8, max_size=8))
def test_witnessed_members_accept_exactly_what_jsonschema_validates(schema, docs):
    check(schema, [*docs, None, 1, "s", {}, {"a": 1}, {"b": "s"}, {"ab": None}, {"0": 5}])


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "not": {"propertyNames": {"not": {"const": "0"}}}},
        {
            "type": "object",
            "oneOf": [
                {"additionalProperties": False, "properties": {"next": {"type": "string"}}},
                {"additionalProperties": False, "properties": {"previous": {"type": "string"}}},
            ],
        },
        {"not": {"properties": {"ab": {"type": "integer"}}, "patternProperties": {"^a": {"minimum": 3}}}},
        {  # one member meets both witnesses
            "type": "object",
            "maxProperties": 1,
            "allOf": [
                {"not": {"patternProperties": {"a": {"not": {"type": "string", "pattern": "A"}}}}},
                {"not": {"patternProperties": {"b": {"not": {"type": "string", "pattern": "B"}}}}},
            ],
        },
    ],
)
def test_cases(schema):
    docs = [
        {},
        {"0": 1},
        {"next": "x"},
        {"previous": "y"},
        {"next": 1},
        {"ab": 1},
        {"ab": 5},
        {"ax": 2},
        {"b": 1},
    ]
    check(schema, docs)
