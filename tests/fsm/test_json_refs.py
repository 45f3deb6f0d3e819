"""``$ref`` in combinations (rule modes): a recursive ``$ref`` inside an ``allOf`` unfolded one level,
a target two members share conjoined once, siblings that assert nothing keeping a ``$ref`` pure, and a
left-recursive combination refused. Each against ``jsonschema``: accepted iff it validates."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fsm
from fsm.errors import UnsupportedSchema
from fsm.json.keywords import pure_ref
from fsm.json.schema import JsonSchema
from fsm.testing import accepts

from .json_helpers import compact, validator

BYTES = fsm.Vocabulary([bytes([i]) for i in range(256)] + [None], eos_token_ids=[256])

NAMED = {"type": "object", "required": ["n"], "properties": {"n": {"type": "string", "maxLength": 2}}}
SCHEMAS = {
    # a tree whose children are the tree AND a base schema the tree itself starts from (a diamond)
    "tree_and_base": {
        "$defs": {
            "named": NAMED,
            "tree": {
                "allOf": [
                    {"$ref": "#/$defs/named"},
                    {
                        "properties": {
                            "kids": {
                                "type": "array",
                                "maxItems": 2,
                                "items": {"allOf": [{"$ref": "#/$defs/tree"}, {"$ref": "#/$defs/named"}]},
                            }
                        }
                    },
                ]
            },
        },
        "$ref": "#/$defs/tree",
    },
    # a recursive $ref with an annotation and an unknown keyword beside it (2020-12 reads siblings)
    "annotated_list": {
        "$defs": {
            "list": {
                "type": "object",
                "required": ["v"],
                "properties": {
                    "v": {"type": "integer"},
                    "next": {"$ref": "#/$defs/list", "description": "the rest", "x-order": 2},
                },
            }
        },
        "$ref": "#/$defs/list",
    },
    # a recursive $ref combined with a keyword that asserts: the target unfolded, the sibling kept
    "ref_and_sibling": {
        "$defs": {
            "node": {
                "type": "object",
                "properties": {"v": {"type": "integer"}, "next": {"$ref": "#/$defs/node", "required": ["v"]}},
            }
        },
        "$ref": "#/$defs/node",
    },
    # two patternProperties matching one key, each an allOf of the same recursive base
    "two_patterns_one_base": {
        "$defs": {
            "base": {
                "type": "object",
                "patternProperties": {"a": {"$ref": "#/$defs/pa"}, "b": {"$ref": "#/$defs/pb"}},
            },
            "pa": {"allOf": [{"$ref": "#/$defs/base"}, {"maxProperties": 1}]},
            "pb": {"allOf": [{"$ref": "#/$defs/base"}, {"propertyNames": {"maxLength": 2}}]},
        },
        "$ref": "#/$defs/base",
    },
}

KEYS = ["n", "v", "next", "kids", "a", "b", "ab", "abc", "x"]  # in the order the schemas declare them
LEAVES = st.one_of(st.none(), st.booleans(), st.integers(-2, 2), st.sampled_from(["", "s", "abc"]))
VALUES = st.recursive(
    LEAVES,
    lambda kids: st.one_of(
        st.lists(kids, max_size=3),
        st.dictionaries(st.sampled_from(KEYS), kids, max_size=3),
    ),
    max_leaves=8,
)
INDEXES = {name: fsm.compile(JsonSchema(s, exact=True), BYTES, cache=False) for name, s in SCHEMAS.items()}


def _declared_order(value):
    """``value`` with its members in declaration order (the order exact mode reads declared members in)."""
    if isinstance(value, list):
        return [_declared_order(v) for v in value]
    if isinstance(value, dict):
        return {k: _declared_order(value[k]) for k in sorted(value, key=KEYS.index)}
    return value


def _orders(value):
    """``value`` with its objects' members in every order (exact mode reads undeclared members after
    the declared ones, which the declaration order of `KEYS` does not know per schema)."""
    if isinstance(value, list):
        yield from (list(p) for p in itertools.product(*[list(_orders(v)) for v in value]))
    elif isinstance(value, dict):
        for keys in itertools.permutations(value):
            for vals in itertools.product(*[list(_orders(value[k])) for k in keys]):
                yield dict(zip(keys, vals, strict=True))
    else:
        yield value


@settings(max_examples=300, deadline=None)
@given(name=st.sampled_from(sorted(SCHEMAS)), value=VALUES.map(_declared_order))
def test_recursive_refs_in_combinations_accept_what_jsonschema_validates(name, value):
    valid = validator(SCHEMAS[name]).is_valid(value)
    seen = any(accepts(INDEXES[name], compact(v)) for v in itertools.islice(_orders(value), 200))
    assert seen == valid, (name, value)


@pytest.mark.parametrize(
    ("name", "text", "ok"),
    [
        ("tree_and_base", '{"n":"a","kids":[{"n":"b","kids":[{"n":"c"}]}]}', True),
        ("tree_and_base", '{"n":"a","kids":[{"n":"b","kids":[{"kids":[]}]}]}', False),
        ("annotated_list", '{"v":1,"next":{"v":2,"next":{"v":3}}}', True),
        ("annotated_list", '{"v":1,"next":{"v":2,"next":{}}}', False),
        ("ref_and_sibling", '{"next":{"v":1,"next":{"v":2}}}', True),
        ("ref_and_sibling", '{"next":{"v":1,"next":{}}}', False),
        ("two_patterns_one_base", '{"ab":{"ab":{"a":{}}}}', True),
        ("two_patterns_one_base", '{"ab":{"ab":{"a":{},"b":{}}}}', False),
    ],
)
def test_deep_instances(name, text, ok):
    assert accepts(INDEXES[name], text) is ok


def test_a_left_recursive_combination_is_refused_naming_ref():
    """The target reached again while it is unfolded, before any member or item: no end to it."""
    schema = {"$defs": {"a": {"allOf": [{"$ref": "#/$defs/a"}, {"type": "object"}]}}, "$ref": "#/$defs/a"}
    with pytest.raises(UnsupportedSchema) as err:
        fsm.compile(JsonSchema(schema, exact=True), BYTES, cache=False)
    assert err.value.keyword == "$ref" and "left-recursive" in str(err.value)


def test_siblings_that_assert_nothing_keep_a_ref_pure():
    assert pure_ref({"$ref": "#/a", "title": "t", "markdownDescription": "m", "$comment": "c"}, 2020) == "#/a"
    assert pure_ref({"$ref": "#/a", "minimum": 1}, 2020) is None
    assert pure_ref({"$ref": "a.json", "$id": "http://x/y/"}, 2020) is None  # $id moves the base
    assert pure_ref({"$ref": "#/a", "minimum": 1}, 7) == "#/a"  # drafts 4-7 ignore siblings
