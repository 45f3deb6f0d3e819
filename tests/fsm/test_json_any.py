"""The any-JSON-value pushdown block: exact JSON, unbounded nesting, both whitespace layouts."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import fsm
from fsm.automata import AnyJson, LazyByteDFA, lit, node_nfa, seq
from fsm.errors import UnsupportedSchema
from fsm.index import LazyDfaIndex
from fsm.json.schema import JsonSchema
from fsm.testing import accepts

from .json_helpers import compact, valid_json_walks, validator

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**15), 10**15)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=10),
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=6), kids, max_size=4),
    max_leaves=14,
)


def dfa(indent=None, depth=0, max_len=None):
    return LazyByteDFA(*node_nfa(AnyJson(indent, depth, max_len))).as_byte_dfa()


DFAS = {None: dfa(), 2: dfa(2), 4: dfa(4)}


@settings(max_examples=150, deadline=None)
@given(json_values, st.sampled_from([None, 2, 4]), st.booleans())
def test_every_json_value_is_accepted_in_its_layout(value, indent, ascii_only):
    if indent is None:
        doc = json.dumps(value, separators=(",", ":"), ensure_ascii=ascii_only)
    else:
        doc = json.dumps(value, indent=indent, ensure_ascii=ascii_only)
    assert DFAS[indent].accepts(doc.encode("utf-8")), doc


@given(json_values)
@settings(max_examples=60, deadline=None)
def test_other_layouts_are_rejected(value):
    if not isinstance(value, (list, dict)) or not value:
        return
    assert not DFAS[None].accepts(json.dumps(value, indent=2).encode())
    assert not DFAS[2].accepts(json.dumps(value, separators=(",", ":")).encode())
    assert not DFAS[2].accepts(json.dumps(value, indent=4).encode())


@pytest.mark.parametrize(
    "text",
    [
        "[1,]",
        "[,1]",
        '{"a"}',
        '{"a":1,}',
        "{1:2}",
        "[",
        "]",
        "{",
        '{"a":1',
        "tru",
        "01",
        "1.",
        "-",
        '"\x01"',
        '"\\x"',
        "[1 2]",
        '{"a":1}}',
        "[]]",
        "nul",
        '"a',
        "[true false]",
        '{"a":1,"b"}',
        "",
        " 1",
        "1 ",
    ],
)
def test_invalid_json_is_rejected(text):
    assert not DFAS[None].accepts(text.encode())


def test_nesting_has_no_depth_cut():
    deep = "[" * 300 + "]" * 300
    assert DFAS[None].accepts(deep.encode())
    assert not DFAS[None].accepts(("[" * 300 + "]" * 299).encode())
    obj = '{"a":' * 120 + "null" + "}" * 120
    assert DFAS[None].accepts(obj.encode())


def test_pretty_layout_at_a_depth():
    d = LazyByteDFA(*node_nfa(seq(lit('{\n  "k": '), AnyJson(2, 1), lit("\n}")))).as_byte_dfa()
    value = {"k": [1, {"x": []}]}
    assert d.accepts(json.dumps(value, indent=2).encode())
    assert not d.accepts(json.dumps({"k": [1]}, indent=4).encode())


def test_max_string_length_bounds_strings_and_keys():
    d = dfa(max_len=3)
    assert d.accepts(b'{"abc":"xyz"}')
    assert not d.accepts(b'{"abcd":1}')
    assert not d.accepts(b'["wxyz"]')


def test_unconstrained_values_compile_lazily_not_to_regex(vocab, tokenizer):
    s = {
        "type": "object",
        "properties": {"id": {"type": "integer"}, "payload": {}},
        "required": ["id", "payload"],
        "additionalProperties": False,
    }
    spec = JsonSchema(s)
    assert spec.is_recursive  # not a regular language
    with pytest.raises(UnsupportedSchema, match="nests without bound"):
        spec.to_regex()
    index = fsm.compile(spec, vocab, cache=False)
    assert isinstance(index, LazyDfaIndex)
    deep = {"id": 1, "payload": {"a": [[[[[[[[[[[[{"b": [1, "x", None, True, -2.5e-3]}]]]]]]]]]]]]}}
    assert accepts(index, compact(deep), tokenizer)
    assert not accepts(index, '{"id":1,"payload":{"a":[1,]}}', tokenizer)
    assert not accepts(index, '{"payload":1,"id":1}', tokenizer)


@pytest.mark.parametrize("whitespace", ["compact", "pretty"])
def test_random_walks_are_valid_documents(vocab, whitespace):
    s = {
        "type": "object",
        "properties": {"name": {"type": "string", "maxLength": 5}},
        "required": ["name"],
        "additionalProperties": True,
    }
    index = fsm.compile(JsonSchema(s, whitespace=whitespace), vocab, cache=False)
    texts = valid_json_walks(index, validator(s), random.Random(11), 25, max_tokens=80, eos_bias=0.4)
    assert len(texts) >= 5
    for text in texts:
        if whitespace == "pretty" and not any(c in text for c in ".eE"):  # number spelling aside
            assert text == json.dumps(json.loads(text), indent=2, ensure_ascii=False), text


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(json_values)
def test_token_level_acceptance_of_any_value(vocab, tokenizer, value):
    index = fsm.compile(JsonSchema({"type": "array", "items": {}}), vocab, cache=True)
    doc = compact([value])
    assume(vocab.decode(tokenizer.encode(doc, add_special_tokens=False)) == doc.encode("utf-8"))
    assert accepts(index, doc, tokenizer)
