"""``oneOf`` whose branches overlap, made exact by the negations of the other branches (type
difference, overlapping ``enum``s, numeric bounds), and ``unevaluatedProperties``/``unevaluatedItems``
with schema values; checked against ``jsonschema`` in both policies."""

from __future__ import annotations

import pytest

import fsm
from fsm.errors import UnsupportedSchema
from fsm.json import one_of
from fsm.json.schema import JsonSchema
from fsm.testing import accepts

from .json_helpers import compact, validator

CASES = [
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
