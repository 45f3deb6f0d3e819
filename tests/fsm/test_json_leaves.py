"""Scalar subschemas translated once per process (`fsm.json.leaves`): the same trees as fresh."""

from __future__ import annotations

import contextlib
import random

import pytest

import fsm
from fsm.json import leaves
from fsm.json.context import Loc
from fsm.json.schema import JsonSchema
from fsm.json.translator import Translator
from fsm.limits import DEFAULT_LIMITS


def _key(schema, **opts):
    settings = leaves.leaf_settings(Translator({}, JsonSchema({}, **opts), DEFAULT_LIMITS))
    return leaves.leaf_key([Loc(schema, "/p", "")], 1, settings)


def test_a_leaf_is_keyed_by_its_assertions_and_the_settings():
    assert _key({"type": "string", "title": "t"}) == _key({"type": "string", "description": "d"})
    assert _key({"type": "string"}) != _key({"type": "string"}, exact=True)
    assert _key({"type": "string"}) != _key({"type": "string"}, max_string_length=5)
    settings = leaves.leaf_settings(Translator({}, JsonSchema({}), fsm.Limits(max_regex_positions=9)))
    assert _key({"type": "string"}) != leaves.leaf_key([Loc({"type": "string"}, "", "")], 1, settings)
    assert _key({"maximum": 1, "type": "integer"}) != _key({"maximum": True, "type": "integer"})
    assert _key({"maximum": 1, "type": "integer"}) != _key({"maximum": 1.0, "type": "integer"})
    assert _key({"enum": [1, "a"]}) != _key({"enum": ["a", 1]})
    # not leaves: a subschema inside, a value of any type, an object, an unread keyword, lenient
    for schema in (
        {"type": "string", "not": {"const": "a"}},
        {"type": "object"},
        {"type": ["string", "array"]},
        {"minLength": 1},
        {"type": "string", "x-kind": 1},
        {"type": "string", "$id": "urn:x"},
    ):
        assert _key(schema) is None, schema
    assert _key({"type": "string"}, lenient=True) is None
    # big ones are not kept (their trees would stay in memory)
    assert _key({"enum": [f"value {i}" for i in range(1000)]}) is None
    assert _key({"type": "string", "pattern": "a" * 5000}) is None


_KEYWORDS = [
    ("type", ["string", "integer", "number", "boolean", "null", ["string", "null"], ["integer", "string"]]),
    ("minimum", [0, -3, 2.5, 10**20]),
    ("exclusiveMaximum", [100, 7.25]),
    ("multipleOf", [3, 0.5]),
    ("minLength", [0, 2]),
    ("maxLength", [3, 40]),
    ("pattern", ["^[a-c]+$", "x"]),
    ("format", ["date", "email", "uuid"]),
    ("enum", [["a", 1, None], [1.0, True]]),
    ("const", ["k", 0]),
    ("description", ["text"]),
]


def _random_leaf(rng: random.Random) -> dict:
    schema = {"type": rng.choice(_KEYWORDS[0][1])}
    for kw, values in rng.sample(_KEYWORDS[1:], rng.randrange(4)):
        schema[kw] = rng.choice(values)
    return schema


@pytest.mark.parametrize("opts", [{}, {"exact": True}, {"whitespace": "pretty"}, {"max_string_length": 9}])
def test_kept_leaves_are_the_trees_a_fresh_translation_makes(opts):
    rng = random.Random(7)
    for _ in range(60):
        leaf = _random_leaf(rng)
        # the leaf as a property of a schema, its table warm from other schemas and settings
        schema = {"type": "object", "properties": {"a": leaf, "b": dict(leaf)}, "required": ["a"]}
        for other in ({"exact": not opts.get("exact")}, {"whitespace": 4}, {"max_string_length": 2}):
            with contextlib.suppress(fsm.SpecError):
                JsonSchema({"type": "array", "items": leaf}, **other).translation(fsm.Limits())
        try:
            warm = JsonSchema(schema, **opts).translation(fsm.Limits())
        except fsm.SpecError:
            warm = "error"
        leaves._kept.clear()
        try:
            fresh = JsonSchema(schema, **opts).translation(fsm.Limits())
        except fsm.SpecError:
            fresh = "error"
        assert warm == fresh, (schema, opts)
