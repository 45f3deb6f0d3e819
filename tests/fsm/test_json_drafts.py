"""Per-draft rules: ``$ref`` siblings, ``id`` vs ``$id``, ``$anchor``, dependencies, the ``draft`` option.

The official suite (tests/fsm/test_json_suite.py) runs every draft folder; these are the rules one by one.
"""

from __future__ import annotations

import pytest

from fsm.errors import SchemaError
from fsm.json.schema import JsonSchema

from .json_helpers import compact, validator

# The draft-7 suite's case: the sibling $id must not move the base URI the $ref resolves against.
SIBLING_ID = {
    "$id": "http://localhost:1234/sibling_id/base/",
    "definitions": {
        "foo": {"$id": "http://localhost:1234/sibling_id/foo.json", "type": "string"},
        "base_foo": {"$id": "foo.json", "type": "number"},
    },
    "allOf": [{"$id": "http://localhost:1234/sibling_id/", "$ref": "foo.json"}],
}


def _language(schema, draft, values):
    dfa = JsonSchema(schema, draft=draft).to_dfa()
    got = [dfa.accepts(compact(v).encode()) for v in values]
    want = [validator(schema, draft).is_valid(v) for v in values]
    return got, want


@pytest.mark.parametrize("draft", [4, 6, 7])
def test_ref_siblings_ignored_up_to_draft_7_id_included(draft):
    schema = SIBLING_ID if draft > 4 else _draft4(SIBLING_ID)
    got, want = _language(schema, draft, ["a", 1])
    assert want == [False, True]
    assert got == want


def test_ref_siblings_apply_from_2019():
    schema = {"$defs": {"s": {"type": "string"}}, "properties": {"a": {"$ref": "#/$defs/s", "maxLength": 2}}}
    for draft in (2019, 2020):
        got, want = _language(schema, draft, [{"a": "xy"}, {"a": "xyz"}])
        assert got == want == [True, False]
    got, want = _language(schema, 7, [{"a": "xy"}, {"a": "xyz"}])
    assert got == want == [True, True]


def test_id_is_draft_4_dollar_id_after():
    schema = {
        "definitions": {"x": {"id": "http://e/x.json", "type": "integer"}, "y": {"$id": "http://e/x.json"}},
        "properties": {"a": {"$ref": "http://e/x.json"}},
        "required": ["a"],
        "type": "object",
    }
    got, want = _language(schema, 4, [{"a": 1}, {"a": "s"}])
    assert got == want == [True, False]
    # draft 7: `id` is no keyword, `$id` names the empty schema, which takes any value
    v = validator(schema, 7)
    assert v.is_valid({"a": "s"})
    assert JsonSchema(schema, draft=7).fingerprint != JsonSchema(schema, draft=4).fingerprint


def test_dependencies_up_to_draft_7_dependent_keywords_after():
    old = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}}
    deps = {**old, "dependencies": {"a": ["b"]}}
    split = {**old, "dependentRequired": {"a": ["b"]}}
    values = [{"a": 1}, {"a": 1, "b": 2}, {"b": 2}]
    got, want = _language(deps, 7, values)
    assert got == want == [False, True, True]
    got, want = _language(split, 2019, values)
    assert got == want == [False, True, True]
    # a keyword of another draft is no constraint in this one
    assert validator(split, 7).is_valid({"a": 1}) and validator(deps, 2020).is_valid({"a": 1})
    assert JsonSchema(split, draft=7).to_dfa().accepts(b'{"a":1}')


def test_anchor_exists_from_2019():
    schema = {"$defs": {"n": {"$anchor": "num", "type": "number"}}, "$ref": "#num"}
    got, want = _language(schema, 2019, [1, "x"])
    assert got == want == [True, False]
    with pytest.raises(SchemaError, match="num"):
        JsonSchema(schema, draft=7).to_dfa()


def test_draft_option_checked_and_defaults_to_schema_keyword():
    assert JsonSchema({"$schema": "http://json-schema.org/draft-07/schema#"}).draft == 7
    assert JsonSchema({}).draft == 2020
    assert JsonSchema({"$schema": "http://json-schema.org/draft-07/schema#"}, draft=2019).draft == 2019
    with pytest.raises(SchemaError, match="draft must be one of"):
        JsonSchema({}, draft=5)


def _draft4(schema):
    """``schema`` with ``$id`` spelled ``id`` (draft 4)."""
    if isinstance(schema, dict):
        return {("id" if k == "$id" else k): _draft4(v) for k, v in schema.items()}
    if isinstance(schema, list):
        return [_draft4(v) for v in schema]
    return schema
