"""JsonSchema: keyword semantics, policies, errors, pydantic models, and the token index."""

from __future__ import annotations

import enum
import json
import random
import re
import warnings
from typing import Literal

import pytest
from pydantic import BaseModel, Field

import fsm
from fsm.errors import SchemaTooComplex, SpecError, UnsupportedSchema
from fsm.json.schema import JsonSchema
from fsm.testing import accepts, random_walk

from .json_helpers import compact, valid_json_walks, validator


class raw(str):
    """Document text given literally (everything else is a Python value, serialized compactly)."""


def acc(schema, *docs, **opts):
    """Which documents the schema's automaton accepts."""
    dfa = JsonSchema(schema, **opts).to_dfa()
    return [dfa.accepts((d if isinstance(d, raw) else compact(d)).encode()) for d in docs]


# -- objects -------------------------------------------------------------------------------------


def test_properties_in_declared_order_optional_omittable_required_present():
    s = {
        "type": "object",
        "properties": {
            "reasoning": {"type": "string"},
            "answer": {"type": "integer"},
            "note": {"type": "string"},
        },
        "required": ["answer"],
    }
    assert (
        acc(
            s,
            {"reasoning": "r", "answer": 1},
            {"answer": 1},
            {"answer": 1, "note": "n"},
            {"reasoning": "r", "answer": 1, "note": ""},
        )
        == [True] * 4
    )
    assert (
        acc(
            s,
            {"answer": 1, "reasoning": "r"},
            {"reasoning": "r"},
            {},
            raw('{"answer":1,}'),
            raw('{,"answer":1}'),
        )
        == [False] * 5
    )


def test_all_optional_properties_and_separators():
    s = {"type": "object", "properties": {k: {"type": "boolean"} for k in "abcd"}}
    assert (
        acc(s, {}, {"a": True}, {"b": False, "d": True}, {"a": True, "b": True, "c": True, "d": True})
        == [True] * 4
    )
    assert (
        acc(s, raw("{,}"), raw('{"a":true,}'), raw('{"b":true"c":true}'), {"d": True, "a": True})
        == [False] * 4
    )


def test_additional_properties_policy():
    s = {"type": "object", "properties": {"a": {"type": "integer"}}}
    assert acc(s, {"a": 1, "b": 2}) == [False]  # unspecified: no extra properties
    assert acc(s, {"a": 1, "b": "x"}, allow_additional_properties=False) == [False]
    with pytest.raises(UnsupportedSchema):  # extras allowed but unconstrained: any JSON value needs a grammar
        JsonSchema(s, allow_additional_properties=True).to_dfa()
    typed = {**s, "additionalProperties": {"type": "string"}}
    assert acc(typed, {"a": 1, "b": "x"}, {"b": "x", "c": "y"}, {"a": 1}) == [True] * 3
    # an extra key never repeats a declared name (its value would have to satisfy both schemas)
    assert acc(typed, raw('{"a":1,"a":"x"}'), {"b": 1}) == [False, False]


def test_pattern_properties_and_property_names():
    s = {"type": "object", "patternProperties": {"^x-": {"type": "integer"}, "^y-": {"type": "string"}}}
    assert acc(s, {"x-1": 1, "y-a": "s"}, {}) == [True, True]
    assert acc(s, {"x-1": "s"}, {"z": 1}) == [False, False]
    named = {"type": "object", "additionalProperties": {"type": "integer"}, "propertyNames": {"maxLength": 2}}
    assert acc(named, {"ab": 1}, {"abc": 1}) == [True, False]


def test_min_max_properties():
    s = {
        "type": "object",
        "properties": {k: {"const": 1} for k in "abc"},
        "minProperties": 2,
        "maxProperties": 2,
    }
    assert acc(s, {"a": 1, "b": 1}, {"a": 1, "c": 1}) == [True, True]
    assert acc(s, {"a": 1}, {"a": 1, "b": 1, "c": 1}) == [False, False]


def test_dependent_required_and_schemas():
    s = {
        "type": "object",
        "properties": {"card": {"type": "string"}, "billing": {"type": "string"}},
        "dependentRequired": {"card": ["billing"]},
    }
    assert acc(s, {}, {"billing": "b"}, {"card": "c", "billing": "b"}) == [True] * 3
    assert acc(s, {"card": "c"}) == [False]


# -- arrays --------------------------------------------------------------------------------------


def test_arrays_items_prefix_items_and_counts():
    s = {
        "type": "array",
        "prefixItems": [{"type": "integer"}, {"type": "string"}],
        "items": {"type": "boolean"},
        "minItems": 1,
        "maxItems": 3,
    }
    assert acc(s, [1], [1, "a"], [1, "a", True]) == [True] * 3
    assert acc(s, [], [1, "a", True, False], ["a"], [1, 2]) == [False] * 4
    old = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "array",
        "items": [{"type": "integer"}],
        "additionalItems": False,
    }
    assert acc(old, [1], [1, 2]) == [True, False]


def test_contains_and_unique_items_on_finite_sets():
    s = {
        "type": "array",
        "items": {"type": "integer", "minimum": 0, "maximum": 9},
        "contains": {"const": 7},
        "maxItems": 4,
    }
    assert acc(s, [7], [1, 7, 2], [7, 7]) == [True] * 3
    assert acc(s, [], [1, 2]) == [False, False]
    u = {"type": "array", "items": {"enum": ["a", "b", "c"]}, "uniqueItems": True}
    assert acc(u, [], ["a", "c"], ["a", "b", "c"]) == [True] * 3
    assert acc(u, ["a", "a"]) == [False]
    with pytest.raises(UnsupportedSchema) as err:
        JsonSchema({"type": "array", "items": {"type": "string"}, "uniqueItems": True}).to_dfa()
    assert err.value.keyword == "uniqueItems" and err.value.pointer == "/uniqueItems"


# -- scalars -------------------------------------------------------------------------------------


def test_strings_escapes_unicode_and_lengths():
    s = {"type": "string", "minLength": 2, "maxLength": 3}
    assert acc(s, "ab", "é€😀", raw('"\\n\\u0041"'), raw('"\\"\\\\"')) == [True] * 4
    assert (
        acc(s, "a", "abcd", raw('"a\nb"'), raw('"\\ud83d\\ude00"')) == [False] * 4
    )  # raw control char; surrogates
    assert acc({"type": "string"}, raw('"\\u00e9\\/\\b"'), raw('"\\x"')) == [True, False]


def test_max_string_length_option():
    assert acc({"type": "string"}, "x" * 40, max_string_length=8) == [False]
    assert acc({"type": "string", "maxLength": 50}, "x" * 40, max_string_length=8) == [True]


def test_pattern_and_format_with_length():
    s = {"type": "string", "pattern": "^[a-z]+:[0-9]+$", "maxLength": 5}
    assert acc(s, "ab:12", "a:1") == [True, True]
    assert acc(s, "abc:12", "ab:", "AB:1") == [False] * 3
    d = {"type": "string", "format": "date"}
    assert acc(d, "2024-02-29", "2023-02-29") == [True, False]


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "string", "maxLength": 10000},
        {"type": "string", "minLength": 30, "maxLength": 40},
        {"type": "string", "format": "uri", "maxLength": 255},
        {"type": "string", "format": "email", "minLength": 30, "maxLength": 60},
        {"type": "string", "pattern": "^[a-z]+(-[a-z]+)*$", "minLength": 25, "maxLength": 64},
        {"type": "array", "items": {"type": "boolean"}, "maxItems": 60},
    ],
)
def test_long_counts_are_exact_without_expanding_them(schema, vocab):
    """Long maxLength/maxItems compile as lazy counter and product blocks: exact at the bounds."""
    from fsm.automata import LazyByteDFA, node_nfa

    spec = JsonSchema(schema)
    lazy = LazyByteDFA(*node_nfa(spec.node()))
    dfa = lazy.as_byte_dfa()  # rows on demand: the full product would be ~10^5 states
    lo = schema.get("minLength", schema.get("minItems", 0))
    hi = schema.get("maxLength", schema.get("maxItems"))

    def make(n: int) -> str:
        """A value of size ``n`` that the rest of the schema accepts."""
        if schema["type"] == "array":
            return compact([True] * n)
        if "format" in schema:
            return compact(
                "a" * (n - 8) + "@b.co.uk" if schema["format"] == "email" else "http://x/" + "a" * (n - 9)
            )
        if "pattern" in schema:
            return compact("ab-" + "c" * (n - 3))
        return compact("x" * n)

    assert dfa.accepts(make(max(lo, 10)).encode()) and dfa.accepts(make(hi).encode())
    assert not dfa.accepts(make(hi + 1).encode())
    if lo > 10:
        assert dfa.accepts(make(lo).encode()) and not dfa.accepts(make(lo - 1).encode())
    index = fsm.compile(spec, vocab, cache=False)
    check = validator(schema)
    rnd = random.Random(7)
    for _ in range(6):
        walk = random_walk(index, rnd, max_tokens=80, eos_bias=0.3)
        text, finished = walk.text, walk.finished
        if finished:
            check.validate(json.loads(text))


def test_integers_numbers_bounds_and_multiple_of():
    i = {"type": "integer", "minimum": -3, "exclusiveMaximum": 10, "multipleOf": 3}
    assert acc(i, -3, 0, 9) == [True] * 3
    assert acc(i, -6, 10, 1, raw("3.0")) == [False] * 4
    n = {"type": "number", "exclusiveMinimum": 0, "maximum": 1.5}
    assert acc(n, 1, 1.5, 0.001, raw("0.5")) == [True] * 4
    assert acc(n, 0, 1.51, -1, raw("1e0")) == [False] * 4
    draft4 = {
        "$schema": "http://json-schema.org/draft-04/schema#",
        "type": "integer",
        "minimum": 5,
        "exclusiveMinimum": True,
    }
    assert acc(draft4, 5, 6) == [False, True]
    assert acc({"type": "number"}, raw("-1.5e+10"), raw("0"), raw("01")) == [True, True, False]


def test_enum_const_filtered_by_the_rest_of_the_schema():
    s = {"type": "string", "enum": ["a", "bb", 3, None], "maxLength": 1}
    assert acc(s, "a", "bb", 3, None) == [True, False, False, False]
    assert acc({"const": {"x": [1, 2]}}, {"x": [1, 2]}, {"x": [2, 1]}) == [True, False]
    assert acc({"enum": [1, 10]}, 1, 10, 100) == [True, True, False]


# -- combinators and references -------------------------------------------------------------------


def test_any_of_all_of_merge_and_type_lists():
    s = {"anyOf": [{"type": "string", "maxLength": 1}, {"type": "integer", "minimum": 5}]}
    assert acc(s, "a", 5) == [True, True] and acc(s, "ab", 4) == [False, False]
    merged = {
        "allOf": [
            {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]},
            {"properties": {"a": {"minimum": 3}, "b": {"type": "string"}}},
        ]
    }
    assert acc(merged, {"a": 3}, {"a": 3, "b": "x"}) == [True, True]
    assert acc(merged, {"a": 2}, {"b": "x"}) == [False, False]
    assert acc({"type": ["string", "null"]}, "x", None, 1) == [True, True, False]
    assert acc({"type": "string", "nullable": True}, None) == [True]


def test_one_of_exact_when_branches_exclude_each_other():
    tagged = {
        "oneOf": [
            {
                "type": "object",
                "properties": {"kind": {"const": "a"}, "x": {"type": "integer"}},
                "required": ["kind"],
            },
            {
                "type": "object",
                "properties": {"kind": {"const": "b"}, "y": {"type": "string"}},
                "required": ["kind"],
            },
        ]
    }
    assert acc(tagged, {"kind": "a", "x": 1}, {"kind": "b", "y": "s"}) == [True, True]
    # (integer vs minimum or an integral multipleOf has an exact form, test_json_one_of.py and
    # test_json_not_multiples.py; a decimal multipleOf has no exact negation)
    overlapping = {"oneOf": [{"type": "integer"}, {"multipleOf": 0.5}]}
    with pytest.raises(UnsupportedSchema) as err:
        JsonSchema(overlapping).to_dfa()
    assert err.value.keyword == "oneOf"
    assert acc({"oneOf": [{"type": "integer"}, {"type": "string"}]}, 1, "s") == [True, True]
    closed = {
        "oneOf": [
            {
                "type": "object",
                "properties": {"a": {"type": "null"}},
                "required": ["a"],
                "additionalProperties": False,
            },
            {
                "type": "object",
                "properties": {"b": {"type": "null"}},
                "required": ["b"],
                "additionalProperties": False,
            },
        ]
    }
    assert acc(closed, {"a": None}, {"b": None}, {}) == [True, True, False]
    assert acc(overlapping, 3, oneof="anyof") == [True]
    # the discriminator is required by the parent schema, its const set in each branch
    parent = {
        "type": "object",
        "properties": {"t": {"type": "string"}},
        "required": ["t"],
        "oneOf": [
            {"properties": {"t": {"const": "a"}, "x": {"type": "integer"}}},
            {"properties": {"t": {"const": "b"}, "y": {"type": "integer"}}},
        ],
    }
    assert acc(parent, {"t": "a", "x": 1}, {"t": "b", "y": 2}, {"t": "c"}, {"x": 1}) == [
        True,
        True,
        False,
        False,
    ]
    # a closed object never has the property the other branch requires (both directions)
    closed_vs_required = {
        "oneOf": [
            {
                "type": "object",
                "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                "required": ["a", "b"],
                "additionalProperties": False,
            },
            {
                "type": "object",
                "properties": {"a": {"type": "integer"}},
                "required": ["a"],
                "additionalProperties": False,
            },
        ]
    }
    assert acc(closed_vs_required, {"a": 1, "b": 2}, {"a": 1}, {"b": 2}) == [True, True, False]
    open_branch = {
        "oneOf": [
            {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]},
            {"type": "object", "properties": {"b": {"type": "integer"}}, "required": ["b"]},
        ]
    }
    # {"a": 1, "b": 2} matches both, but no extra key is generated (additionalProperties unspecified)
    assert acc(open_branch, {"a": 1}, {"b": 2}, {"a": 1, "b": 2}) == [True, True, False]
    with pytest.raises(UnsupportedSchema):  # with extras allowed it would be generated
        JsonSchema(open_branch, allow_additional_properties=True).to_dfa()
    optional = {
        "type": "object",
        "properties": {"t": {"type": "string"}},
        "oneOf": [{"properties": {"t": {"const": "a"}}}, {"properties": {"t": {"const": "b"}}}],
    }
    # {} matches both branches: each branch minus the other (their negations are exact)
    assert acc(optional, {}, {"t": "a"}, {"t": "b"}, {"t": "c"}) == [False, True, True, False]


def test_refs_defs_anchors_and_ids():
    s = {
        "$defs": {"pos": {"$anchor": "positive", "type": "integer", "minimum": 1}},
        "type": "object",
        "properties": {"a": {"$ref": "#/$defs/pos"}, "b": {"$ref": "#positive"}},
    }
    assert acc(s, {"a": 1, "b": 2}, {"a": 0}) == [True, False]
    legacy = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "definitions": {"s": {"type": "string"}},
        "properties": {"a": {"$ref": "#/definitions/s", "type": "integer"}},
        "type": "object",
    }
    assert acc(legacy, {"a": "x"}, {"a": 1}) == [True, False]  # draft 7 ignores $ref siblings
    with pytest.raises(UnsupportedSchema) as err:
        JsonSchema({"$ref": "http://example.com/other.json"}).to_dfa()
    assert err.value.keyword == "$ref"


def test_recursive_schema_goes_to_the_grammar_engine(vocab):
    tree = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "maxLength": 3},
            "kids": {"type": "array", "items": {"$ref": "#"}, "maxItems": 2},
        },
        "required": ["name"],
    }
    spec = JsonSchema(tree)
    assert spec.is_recursive
    with pytest.raises(UnsupportedSchema):
        spec.to_regex()
    assert "start:" in spec.to_grammar()
    index = fsm.compile(spec, vocab, cache=False)
    rnd = random.Random(0)
    v = validator(tree)
    for _ in range(6):
        walk = random_walk(index, rnd, max_tokens=120)
        text, done = walk.text, walk.finished
        if done:
            assert v.is_valid(json.loads(text)), text


def test_recursive_ref_inside_any_of_branches(vocab, tokenizer):
    """A pure $ref branch of an anyOf recurses as a rule even though the parent has other keywords."""
    node = {
        "$defs": {
            "node": {
                "type": "object",
                "properties": {
                    "kids": {
                        "type": "array",
                        "items": {"anyOf": [{"$ref": "#/$defs/node"}, {"type": "string", "maxLength": 2}]},
                        "description": "children",
                    }
                },
                "required": ["kids"],
                "additionalProperties": False,
            }
        },
        "$ref": "#/$defs/node",
    }
    index = fsm.compile(JsonSchema(node), vocab, cache=False)
    assert accepts(index, compact({"kids": ["ab", {"kids": [{"kids": []}]}]}), tokenizer)
    assert not accepts(index, compact({"kids": ["abc"]}), tokenizer)
    assert not accepts(index, compact({"kids": [{"kid": []}]}), tokenizer)
    v = validator(node)
    rnd = random.Random(3)
    for _ in range(6):
        walk = random_walk(index, rnd, max_tokens=100)
        text, done = walk.text, walk.finished
        if done:
            assert v.is_valid(json.loads(text)), text


def test_unconstrained_values_need_the_grammar_or_an_explicit_depth():
    s = {"type": "object", "properties": {"payload": {}}, "required": ["payload"]}
    assert JsonSchema(s).is_recursive
    bounded = JsonSchema(s, any_value_depth=1).to_dfa()
    assert bounded.accepts(b'{"payload":[1,{"a":null}]}') is False  # depth 2 > 1
    assert bounded.accepts(b'{"payload":[1,"x"]}')


# -- errors and options ---------------------------------------------------------------------------


def test_unsupported_keywords_name_keyword_and_pointer():
    with pytest.raises(UnsupportedSchema) as err:
        JsonSchema(
            {"type": "object", "properties": {"a": {"type": "string", "not": {"format": "email"}}}}
        ).to_dfa()
    assert err.value.keyword == "not" and err.value.pointer == "/properties/a/not"
    with pytest.raises(UnsupportedSchema) as err:
        # "not if" has no exact form (duplicates are not a regular language), and "then" needs it
        JsonSchema({"if": {"uniqueItems": True}, "then": {"maxItems": 1}, "type": "array"}).to_dfa()
    assert err.value.keyword == "if"


def test_lenient_ignores_with_a_warning():
    s = {"type": "number", "not": {"multipleOf": 0.3}}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        spec = JsonSchema(s, lenient=True)
        spec.to_dfa()
    assert spec.ignored and "not" in spec.ignored[0]
    assert any("ignored" in str(w.message) for w in caught)


def test_supported_not_forms_are_exact():
    assert acc({"type": "string", "not": {"enum": ["a"]}}, "a", "b") == [False, True]
    assert acc({"type": ["string", "integer"], "not": {"type": "string"}}, "a", 1) == [False, True]


OBJ_AB = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}}
NOT_CASES = [
    ({"type": "string", "not": {"pattern": "^a"}}, ["b", "a", "", "ba", 1]),
    ({"type": ["string", "integer"], "not": {"type": "string", "maxLength": 2}}, ["abc", "ab", 5, ""]),
    ({"type": ["string", "null"], "not": {"pattern": "x"}}, ["ab", "axb", None]),
    (
        {"type": "string", "pattern": "^p-[a-z0-9]+$", "not": {"pattern": ".{6,}(?:ab|cd)"}},
        ["p-x1", "p-xyzab", "p-ab", "p-xyzcd1"],
    ),
    ({"type": "string", "not": {"not": {"minLength": 2}}}, ["a", "ab"]),
    ({"type": "string", "not": {"anyOf": [{"minLength": 4}, {"pattern": "z"}]}}, ["abc", "abcd", "az", ""]),
    ({"type": "string", "not": {"$ref": "#/$defs/short"}, "$defs": {"short": {"maxLength": 1}}}, ["a", "ab"]),
    ({**OBJ_AB, "not": {"required": ["a", "b"]}}, [{"a": 1}, {"a": 1, "b": 2}, {}]),
    ({**OBJ_AB, "not": {"anyOf": [{"required": ["a"]}, {"required": ["b"]}]}}, [{"a": 1}, {}, {"b": 1}]),
    (
        {**OBJ_AB, "not": {"allOf": [{"required": ["a"]}, {"required": ["b"]}]}},
        [{"a": 1}, {"a": 1, "b": 2}, {}],
    ),
]


@pytest.mark.parametrize("schema,values", NOT_CASES)
def test_not_of_required_string_keywords_and_combinations_is_exact(schema, values):
    """De Morgan over anyOf/allOf/not, some required name absent, a complemented string DFA."""
    v = validator(schema)
    dfa = JsonSchema(schema).to_dfa()
    assert [dfa.accepts(compact(x).encode()) for x in values] == [v.is_valid(x) for x in values]


@pytest.mark.parametrize(
    "bad",
    [
        "{not json",
        42,
        {"type": "strin"},
        {"properties": []},
        {"minLength": -1, "type": "string"},
        {"$ref": "#/nowhere"},
        {"enum": []},
        {"type": "integer", "minimum": 3, "maximum": 2},
    ],
)
def test_bad_schemas_raise_spec_errors(bad):
    with pytest.raises(SpecError):
        JsonSchema(bad).to_dfa()


def test_budget_overflow_is_schema_too_complex():
    s = {"type": "string", "pattern": "^(a|b)*a(a|b){14}$"}  # the classic exponential DFA
    with pytest.raises(SchemaTooComplex) as err:
        JsonSchema(s).to_dfa(fsm.Limits(max_states=2000))
    assert err.value.budget == "max_states"


def test_whitespace_pretty_is_json_dumps_indent():
    s = {
        "type": "object",
        "properties": {
            "a": {"type": "array", "items": {"type": "integer"}},
            "b": {"type": "object", "properties": {"c": {"type": "null"}}},
        },
    }
    dfa = JsonSchema(s, whitespace="pretty").to_dfa()
    for doc in ({"a": [1, 2], "b": {"c": None}}, {"a": [], "b": {}}, {}):
        assert dfa.accepts(json.dumps(doc, indent=2).encode()), doc
    assert not dfa.accepts(compact({"a": [1]}).encode())
    assert not dfa.accepts(b'{\n  "a": [1,2]\n}')


def test_fingerprint_covers_schema_and_options():
    a = JsonSchema({"type": "string"})
    assert a.fingerprint == JsonSchema('{"type": "string"}').fingerprint
    assert a.fingerprint != JsonSchema({"type": "string"}, whitespace="pretty").fingerprint
    assert a.fingerprint != JsonSchema({"type": "string"}, max_string_length=3).fingerprint


def test_fingerprint_hashes_the_schema_and_options_as_one_json_list():
    # the schema's text is made once (`mentions` reads it too): the payload is the list's text
    import hashlib

    s = JsonSchema({"b": [1, {"é": None}], "a": "x"}, whitespace=2, resources={"urn:r": {"type": "null"}})
    opts = [2, False, False, None, "exact", None, 2020, False, True, s.resources]
    payload = json.dumps([s.schema, *opts], sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert s.fingerprint == "json:" + hashlib.sha256(payload.encode()).hexdigest()[:32]


@pytest.mark.parametrize(
    "schema",
    [
        {"properties": {"a": {"unevaluatedProperties": False, "$id": "urn:a"}}},
        {"$defs": {"x": {"$anchor": "x", "unevaluatedItems": False}}, "$ref": "#x"},
        {"description": "unevaluatedItems and $id are words here", "type": "string"},
        {"enum": [{"unevaluatedProperties": 1}, "$anchor"]},
        {"properties": {"id": {"type": "string"}}},
        {"type": "object"},
    ],
)
def test_walks_skipped_by_the_schema_text_find_what_the_walks_find(schema):
    # the translator skips its walks for unevaluated* keywords and identifiers where the schema's
    # text names none of them (`JsonSchema.mentions`): what they find is the walks' answer
    from fsm.json.context import Loc
    from fsm.json.keywords import has_unevaluated
    from fsm.json.refs import Refs
    from fsm.json.translator import Translator

    spec = JsonSchema(schema)
    t = Translator(spec.schema, spec, fsm.Limits())
    assert t.unevaluated == has_unevaluated(spec.schema)
    walked = Refs(spec.schema, spec.draft)
    assert (t.refs.resources, t.refs.anchors) == (walked.resources, walked.anchors)
    assert spec.mentions("$ref") == ('"$ref"' in json.dumps(spec.schema))
    assert t.value([Loc(spec.schema, "", t.root_base)], 0) is not None


def test_to_regex_agrees_with_the_automaton():
    s = {
        "type": "object",
        "properties": {
            "id": {"type": "integer", "minimum": 1, "maximum": 999},
            "tags": {"type": "array", "items": {"enum": ["x", "y"]}, "maxItems": 2},
            "name": {"type": "string", "pattern": "^[A-Z]"},
        },
        "required": ["id"],
    }
    spec = JsonSchema(s)
    rx, dfa = re.compile(spec.to_regex()), spec.to_dfa()
    docs = [
        '{"id":1}',
        '{"id":999,"tags":["x","y"]}',
        '{"id":0}',
        '{"id":5,"name":"Ab"}',
        '{"id":5,"name":"ab"}',
        '{"tags":[]}',
        '{"id":12,"tags":["x","x","y"]}',
    ]
    for d in docs:
        assert bool(rx.fullmatch(d)) == dfa.accepts(d.encode()), d


# -- pydantic -------------------------------------------------------------------------------------


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Address(BaseModel):
    street: str
    zip: str = Field(pattern=r"^\d{5}$")


class Person(BaseModel):
    reasoning: str = Field(max_length=20)
    name: str
    age: int = Field(ge=0, le=150)
    email: str | None = None
    color: Color
    kind: Literal["a", "b"]
    tags: list[str] = Field(default_factory=list, max_length=3)
    scores: dict[str, float] = Field(default_factory=dict)
    address: Address
    either: int | str = 0


def test_pydantic_model_keeps_field_order_and_validates(vocab):
    spec = JsonSchema(Person)
    dfa = spec.to_dfa()
    doc = {
        "reasoning": "r",
        "name": "Ada",
        "age": 36,
        "email": None,
        "color": "red",
        "kind": "a",
        "tags": ["x"],
        "scores": {"m": 1.5},
        "address": {"street": "S", "zip": "12345"},
        "either": "e",
    }
    assert dfa.accepts(compact(doc).encode())
    swapped = {
        "name": "Ada",
        "reasoning": "r",
        **{k: v for k, v in doc.items() if k not in ("name", "reasoning")},
    }
    assert not dfa.accepts(compact(swapped).encode())
    index = fsm.compile(spec, vocab, cache=False)
    rnd = random.Random(1)
    for _ in range(4):
        walk = random_walk(index, rnd, max_tokens=200, eos_bias=0.9)
        text, done = walk.text, walk.finished
        if done:
            Person.model_validate_json(text)


def test_matcher_masks_with_the_real_vocabulary(vocab, tokenizer):
    spec = JsonSchema({"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]})
    m = fsm.compile(spec, vocab, cache=False).matcher()
    allowed = m.allowed_token_ids()
    assert all(
        vocab.token_bytes(int(t)).startswith(b"{") or b"{".startswith(vocab.token_bytes(int(t)))
        for t in allowed
    )
    for t in tokenizer.encode('{"ok":true}', add_special_tokens=False):
        m.advance(t)
    assert m.is_accepting() and set(m.allowed_token_ids().tolist()) == set(vocab.eos_token_ids)


def test_any_value_through_the_grammar_engine(vocab, tokenizer):
    s = {
        "type": "object",
        "properties": {"id": {"type": "integer"}, "payload": {}},
        "required": ["id", "payload"],
        "additionalProperties": False,
    }
    spec = JsonSchema(s)
    assert spec.is_recursive and "json_value" in spec.to_grammar()
    index = fsm.compile(spec, vocab, cache=False)
    assert accepts(index, '{"id":1,"payload":{"a":[1,"x",null,{"b":true}]}}', tokenizer)
    assert not accepts(index, '{"id":1,"payload":{"a":[1,]}}', tokenizer)
    assert not accepts(index, '{"payload":1,"id":1}', tokenizer)
    rnd = random.Random(5)
    v = validator(s)
    for _ in range(5):
        walk = random_walk(index, rnd, max_tokens=60, eos_bias=0.8)
        text, done = walk.text, walk.finished
        if done:
            assert v.is_valid(json.loads(text)), text


def test_one_of_exclusive_by_the_keys_this_library_generates(vocab, tokenizer):
    """Neither branch forbids the other's required name, but with additionalProperties unspecified
    no extra key is generated, so no generated value can match both branches."""
    schema = {
        "oneOf": [
            {
                "type": "object",
                "required": ["id", "win"],
                "properties": {"id": {"type": "string", "maxLength": 2}},
            },
            {
                "type": "object",
                "required": ["id", "lose"],
                "properties": {"id": {"type": "string", "maxLength": 2}},
            },
        ]
    }
    v = validator(schema)
    index = fsm.compile(JsonSchema(schema), vocab, cache=False)
    docs = ({"id": "a", "win": 1}, {"id": "a", "lose": None}, {"id": "a"}, {"id": "a", "win": 1, "lose": 2})
    assert [accepts(index, compact(d), tokenizer) for d in docs] == [True, True, False, False]
    valid_json_walks(index, v, random.Random(4), 20, max_tokens=40)
    # extras allowed: {"id":..,"win":..,"lose":..} matches both, so each branch is minus the other
    index = fsm.compile(JsonSchema(schema, allow_additional_properties=True), vocab, cache=False)
    docs = ({"id": "a", "win": 1, "x": 2}, {"id": "a", "lose": None}, {"id": "a", "win": 1, "lose": 2})
    assert [accepts(index, compact(d), tokenizer) for d in docs] == [True, True, False]


def test_not_in_property_names_is_exact_or_names_the_users_keyword():
    schema = {
        "type": "object",
        "propertyNames": {"not": {"multipleOf": 0.5}},
        "additionalProperties": {"type": "integer"},
    }
    with pytest.raises(UnsupportedSchema) as err:
        JsonSchema(schema).to_regex()
    assert err.value.keyword == "not" and "at /propertyNames/not is not supported" in str(err.value)
    schema["propertyNames"] = {"not": {"enum": ["a"]}}
    # a negated enum is an anyOf of the other types and the other strings: the strings it makes
    dfa = JsonSchema(schema).to_dfa()
    assert dfa.accepts(b'{"b":1}') and not dfa.accepts(b'{"a":1}')
    # a negated string schema is its complement
    schema["propertyNames"] = {"not": {"pattern": "^a"}}
    dfa = JsonSchema(schema, exact=True).to_dfa()
    assert dfa.accepts(b'{"b":1}') and not dfa.accepts(b'{"ab":1}')
