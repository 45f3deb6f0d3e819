"""``uniqueItems`` over any items in exact mode (`fsm.json.unique_items`): random arrays of mixed
values accepted exactly when their items differ under the spec's JSON equality (numbers by value,
``true`` is not ``1``, objects in any member order, nested arrays) — `_distinct`, not ``jsonschema``,
whose check misses a repeat after a ``true`` beside a ``1`` (``[[1],[true],[1]]`` passes it); the
official suite's ``uniqueItems.json`` of every shipped draft as the suite says; the generation
policy still refuses what it cannot enforce.
"""

from __future__ import annotations

import json
import os
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fsm
from fsm.json.schema import JsonSchema
from fsm.testing import accepts

BYTES = fsm.Vocabulary([bytes([i]) for i in range(256)] + [None], eos_token_ids=[256])
SUITE = os.path.join(os.path.dirname(__file__), "..", "data", "json-schema-test-suite")
LIMITS = fsm.Limits(max_seconds=120)  # CI's two workers share two cores


def _index(schema, vocab=BYTES, draft=2020):
    return fsm.compile(JsonSchema(schema, exact=True, draft=draft), vocab, cache=False, limits=LIMITS)


def _text(value) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


SCALARS = st.one_of(
    st.sampled_from([0, 1, 2, 1.0, 2.5, -0.0, True, False, None, "", "a", "b", "ab", 'q"', "1"]),
    st.integers(-3, 3),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=2), st.dictionaries(st.sampled_from(["a", "b"]), inner, max_size=2)
    ),
    max_leaves=4,
)


def _key(v):
    """``v`` under JSON equality: numbers by value, booleans apart from numbers, members unordered."""
    if isinstance(v, bool) or v is None or isinstance(v, str):
        return (type(v).__name__, v)
    if isinstance(v, (int, float)):
        return ("number", Fraction(v))
    if isinstance(v, list):
        return ("array", tuple(_key(x) for x in v))
    return ("object", tuple(sorted((k, _key(x)) for k, x in v.items())))


def _distinct(items) -> bool:
    keys = [_key(x) for x in items]
    return len(set(keys)) == len(keys)


ANY_UNIQUE = _index({"type": "array", "uniqueItems": True})
NESTED = _index({"type": "array", "items": {"type": "array", "uniqueItems": True}, "uniqueItems": True})


@settings(max_examples=300, deadline=None)
@given(items=st.lists(VALUES, max_size=5))
def test_unique_arrays_as_jsonschema_says(items):
    want = _distinct(items)
    assert accepts(ANY_UNIQUE, _text(items)) == want, items


@settings(max_examples=150, deadline=None)
@given(items=st.lists(st.lists(SCALARS, max_size=3), max_size=4))
def test_nested_unique_arrays_as_jsonschema_says(items):
    want = _distinct(items) and all(_distinct(x) for x in items)
    assert accepts(NESTED, _text(items)) == want, items


def test_a_repeat_after_true_beside_one_is_a_repeat():
    """The case ``jsonschema``'s check misses (it sorts, then compares neighbours only)."""
    assert not accepts(NESTED, "[[1],[true],[1]]")
    assert accepts(NESTED, "[[1],[true],[2]]")


def test_unique_items_under_the_real_tokenizer(vocab, tokenizer):
    index = _index({"type": "array", "items": {"type": "string"}, "uniqueItems": True, "maxItems": 4}, vocab)
    for items, valid in [
        (["a", "b"], True),
        (["a", "a"], False),
        (["ab", "a", "b"], True),
        (["x", "y", "x"], False),
    ]:
        assert accepts(index, _text(items), tokenizer) == valid, items


def _suite_groups():
    out = []
    for folder, draft in (
        ("draft4", 4),
        ("draft6", 6),
        ("draft7", 7),
        ("draft2019-09", 2019),
        ("draft2020-12", 2020),
    ):
        path = os.path.join(SUITE, folder, "uniqueItems.json")
        if not os.path.exists(path):
            continue
        with open(path, encoding="utf-8") as f:
            for i, group in enumerate(json.load(f)):
                out.append(pytest.param(draft, group, id=f"{folder}-{i}"))
    return out


@pytest.mark.parametrize(("draft", "group"), _suite_groups())
def test_suite_unique_items_as_the_suite_says(draft, group):
    index = _index(group["schema"], draft=draft)
    for test in group["tests"]:
        assert accepts(index, _text(test["data"])) == test["valid"], test["description"]


def test_the_generation_policy_still_refuses_unique_strings():
    with pytest.raises(fsm.UnsupportedSchema, match="uniqueItems"):
        fsm.compile(JsonSchema({"type": "array", "items": {"type": "string"}, "uniqueItems": True}), BYTES)
