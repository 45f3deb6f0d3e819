"""``unevaluatedProperties``/``unevaluatedItems`` see what an in-place ``$ref`` evaluates (2019-09 on):
a ``$ref`` beside them, under ``allOf``/``oneOf``, or a chain of them; not one under a member or an
item (that evaluates the member's value, not the object's members). Every instance is checked
against ``jsonschema`` in each member order the matcher could take.
"""

from __future__ import annotations

import itertools
import json

import pytest

import fsm
from fsm.json.schema import JsonSchema
from fsm.testing import accepts

from .json_helpers import validator

BYTES = fsm.Vocabulary([bytes([i]) for i in range(256)] + [None], eos_token_ids=[256])
DEFS = {
    "bar": {"properties": {"bar": {"type": "string"}}},
    "via": {"$ref": "#/$defs/bar"},
    "pre": {"prefixItems": [{"type": "integer"}]},
}
SCHEMAS = [
    {"$ref": "#/$defs/bar", "properties": {"foo": {"type": "string"}}, "unevaluatedProperties": False},
    {
        "allOf": [{"$ref": "#/$defs/via"}],
        "properties": {"foo": {"type": "string"}},
        "unevaluatedProperties": False,
    },
    {
        "oneOf": [{"$ref": "#/$defs/bar", "required": ["bar"]}, {"required": ["foo"]}],
        "unevaluatedProperties": False,
    },
    {"properties": {"foo": {"$ref": "#/$defs/bar"}}, "unevaluatedProperties": False},  # not in place
    {"$ref": "#/$defs/pre", "unevaluatedItems": False},
    {"type": "array", "items": {"$ref": "#/$defs/pre", "type": "array"}, "unevaluatedItems": False},
]
INSTANCES = [
    {},
    {"bar": "b"},
    {"foo": "f", "bar": "b"},
    {"foo": "f"},
    {"bar": "b", "baz": "z"},
    {"foo": {"bar": "b"}},
    {"foo": {"bar": "b"}, "bar": "b"},
    [],
    [1],
    [1, 2],
    [[1]],
    [[1, 2]],
]


def _some_order(index, value) -> bool:
    if isinstance(value, dict):
        return any(
            accepts(index, json.dumps(dict(p), separators=(",", ":")))
            for p in itertools.permutations(value.items())
        )
    return accepts(index, json.dumps(value, separators=(",", ":")))


@pytest.mark.parametrize("schema", SCHEMAS, ids=range(len(SCHEMAS)))
def test_unevaluated_keywords_see_in_place_refs(schema):
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema, "$defs": DEFS}
    index = fsm.compile(JsonSchema(schema, exact=True), BYTES, cache=False)
    check = validator(schema)
    verdicts = set()
    for value in INSTANCES:
        valid = check.is_valid(value)
        verdicts.add(valid)
        assert _some_order(index, value) == valid, value
    assert verdicts == {True, False}
