"""Property counts with every kind of member: declared (required, optional), ``patternProperties`` and
``additionalProperties``, in both policies, checked against ``jsonschema``.

Instances are written declared properties first (in declared order), then the others: the one order
the automaton generates (docs/json-schema.md, property order).
"""

from __future__ import annotations

import json
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field

import fsm
from fsm.json.schema import JsonSchema
from fsm.testing import accepts, ecma_search

from .json_helpers import compact, validator

VALUES = [{"type": "integer"}, {"type": "string"}, {"type": ["string", "null"]}, {}]
PATTERNS = ["^x", "y$", "^xy$", "[0-9]"]
KEYS = ["a", "b", "c", "x", "xy", "zy", "x1", "q", "r9"]


def _text(schema: dict, obj: dict) -> str:
    """``obj`` with the declared names first, in declared order (properties, then required-only)."""
    declared = list(schema.get("properties", {}))
    declared += [k for k in schema.get("required", []) if k not in declared]
    order = [k for k in declared if k in obj] + [k for k in obj if k not in declared]
    return compact({k: obj[k] for k in order})


@st.composite
def object_schemas(draw):
    schema: dict = {"type": "object"}
    props = draw(st.lists(st.sampled_from(["a", "b", "c", "xy"]), unique=True, max_size=3))
    if props:
        schema["properties"] = {k: draw(st.sampled_from(VALUES)) for k in props}
        schema["required"] = draw(st.lists(st.sampled_from(props), unique=True, max_size=2))
    pats = draw(st.lists(st.sampled_from(PATTERNS), unique=True, max_size=3))
    if pats:
        schema["patternProperties"] = {p: draw(st.sampled_from(VALUES[:3])) for p in pats}
    ap = draw(st.sampled_from(["absent", False, True, {"type": "string"}, {"type": "integer"}]))
    if ap != "absent":
        schema["additionalProperties"] = ap
    for kw in ("minProperties", "maxProperties"):
        n = draw(st.none() | st.integers(0, 4))
        if n is not None:
            schema[kw] = n
    return schema


objects = st.dictionaries(st.sampled_from(KEYS), st.sampled_from([1, "s", None, 2.5]), max_size=5)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(schema=object_schemas(), objs=st.lists(objects, min_size=4, max_size=4))
def test_counts_exact_mode_accepts_iff_jsonschema_validates(schema, objs, vocab):
    v = validator(schema)
    try:
        index = fsm.compile(JsonSchema(schema, exact=True), vocab, cache=False)
    except fsm.SchemaError:
        # only a schema no object satisfies may be refused as empty
        assert not any(v.is_valid(o) for o in objs), schema
        return
    for obj in objs:
        text = _text(schema, obj)
        assert accepts(index, text) == v.is_valid(obj), (schema, text)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(schema=object_schemas(), objs=st.lists(objects, min_size=4, max_size=4))
def test_counts_generation_policy_is_sound_and_takes_every_member_it_generates(schema, objs, vocab):
    """Sound; and every valid object whose extra keys the schema allows explicitly (a pattern or an
    ``additionalProperties`` given) is accepted."""
    v = validator(schema)
    try:
        index = fsm.compile(JsonSchema(schema), vocab, cache=False)
    except fsm.SchemaError:
        assert not any(v.is_valid(o) for o in objs), schema
        return
    declared = set(schema.get("properties", {}))
    for obj in objs:
        text = _text(schema, obj)
        ok = accepts(index, text)
        if ok:
            assert v.is_valid(obj), (schema, text)
        explicit = "additionalProperties" in schema or all(
            k in declared or any(p in schema.get("patternProperties", {}) and _search(p, k) for p in PATTERNS)
            for k in obj
        )
        if v.is_valid(obj) and explicit:
            assert ok, (schema, text)


def _search(pattern: str, key: str) -> bool:
    return re.search(pattern, key) is not None


def test_min_properties_reached_with_additional_properties(vocab, tokenizer):
    """Counts the declared properties cannot reach are reached with extra keys (issue 22's cases)."""
    schema = {
        "type": "object",
        "properties": {"k": {"type": "integer"}},
        "required": ["k"],
        "minProperties": 3,
        "maxProperties": 4,
        "additionalProperties": {"type": "string"},
    }
    for exact in (False, True):
        index = fsm.compile(JsonSchema(schema, exact=exact), vocab, cache=False)
        for obj, valid in [
            ({"k": 1, "a": "x", "b": "y"}, True),
            ({"k": 1, "a": "x", "b": "y", "c": "z"}, True),
            ({"k": 1, "a": "x"}, False),
            ({"k": 1, "a": "x", "b": "y", "c": "z", "d": "w"}, False),
            ({"k": 1, "a": "x", "b": 2}, False),
        ]:
            assert validator(schema).is_valid(obj) == valid
            assert accepts(index, compact(obj), tokenizer) == valid, (exact, obj)


class Tags(BaseModel):
    labels: dict[str, str] = Field(min_length=2)


class Limits(BaseModel):
    scores: dict[str, int] = Field(min_length=1, max_length=3)
    note: str | None = None


def test_pydantic_dict_fields_with_min_and_max_length(vocab, tokenizer):
    for model, cases in [
        (
            Tags,
            [
                ({"labels": {"a": "x", "b": "y"}}, True),
                ({"labels": {"a": "x", "b": "y", "c": "z"}}, True),
                ({"labels": {"a": "x"}}, False),
                ({"labels": {}}, False),
                ({"labels": {"a": "x", "b": 1}}, False),
            ],
        ),
        (
            Limits,
            [
                ({"scores": {"math": 3}}, True),
                ({"scores": {"a": 1, "b": 2, "c": 3}, "note": None}, True),
                ({"scores": {}}, False),
                ({"scores": {"a": 1, "b": 2, "c": 3, "d": 4}}, False),
            ],
        ),
    ]:
        schema = model.model_json_schema()
        v = validator(schema)
        for exact in (False, True):
            index = fsm.compile(JsonSchema(model, exact=exact), vocab, cache=False)
            for obj, valid in cases:
                assert v.is_valid(obj) == valid
                assert accepts(index, compact(obj), tokenizer) == valid, (model.__name__, exact, obj)
                if valid:
                    model.model_validate_json(json.dumps(obj))


def test_overlapping_patterns_from_several_schemas_meet_on_shared_keys(vocab, tokenizer):
    schema = {
        "type": "object",
        "allOf": [
            {"patternProperties": {"^x": {"type": "integer"}}},
            {"patternProperties": {"y$": {"minimum": 3}}, "additionalProperties": {"type": "string"}},
        ],
    }
    v = validator(schema)
    for exact in (False, True):
        index = fsm.compile(JsonSchema(schema, exact=exact), vocab, cache=False)
        for obj in [{"xy": 3}, {"xy": 2}, {"xy": 3.5}, {"x": 1}, {"x": "s"}, {"zy": 9}, {"q": "s"}, {"q": 1}]:
            assert accepts(index, compact(obj), tokenizer) == v.is_valid(obj), (exact, obj)


def test_keys_are_split_by_the_ecma_reading_of_their_patterns(vocab, tokenizer):
    """ECMA's \\d is ASCII: "٣" (which Python's \\d matches) is an additional key, free here; a key
    the readings' ``$`` disagree on ("3\\n": Python's matches before a final newline) is in neither
    region, so it never gets a value only one reading allows."""
    schema = {"type": "object", "patternProperties": {r"^\d$": {"type": "integer"}}}
    v = validator(schema)
    index = fsm.compile(JsonSchema(schema, exact=True), vocab, cache=False)
    assert accepts(index, '{"٣":"x"}', tokenizer) and ecma_search(r"^\d$", "٣") is False
    for text in ['{"3":"x"}', '{"3\\n":"x"}']:
        assert not v.is_valid(json.loads(text))
        assert not accepts(index, text, tokenizer), text
    for text in ['{"3":1}', '{"a":"x"}']:
        assert accepts(index, text, tokenizer), text
