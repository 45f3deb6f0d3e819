"""``not`` of an integral ``multipleOf`` (`fsm.json.negation`, `fsm.automata.non_multiples`): random
divisors and number spellings against ``jsonschema`` in exact mode — every accepted text validates,
and every valid one spelled as an integer or with a nonzero fraction of at most 15 significant
digits (no exponent) is accepted.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fsm
from fsm.json.schema import JsonSchema
from fsm.testing import accepts

from .json_helpers import validator

BYTES = fsm.Vocabulary([bytes([i]) for i in range(256)] + [None], eos_token_ids=[256])
NUMBER_TEXT = st.from_regex(r"-?(0|[1-9][0-9]{0,19})(\.[0-9]{1,20})?", fullmatch=True)


def _kept(text: str, m) -> bool:
    """A spelling the negation keeps: an integer (of at most 15 digits for a float divisor), or a
    nonzero fraction of at most 15 significant digits (leading zeros of a fraction not counted)."""
    if "." not in text:
        return isinstance(m, int) or len(text.lstrip("-")) <= 15
    return len(text.lstrip("-").replace(".", "").lstrip("0")) <= 15 and text.split(".")[1].strip("0") != ""


@settings(max_examples=80, deadline=None)
@given(
    # past 1,000 remainders (997, 123457, 991 * 997): a lazy remainder block
    m=st.integers(1, 60)
    | st.sampled_from([1000, 7.0, 10**6, 3 * 10**3, 250, 997, 123457, 991 * 997, 123457.0]),
    extra=st.sampled_from(
        [
            {},
            {"type": "integer"},
            {"type": "number"},
            {"multipleOf": 2},
            {"minimum": -50},
            {"multipleOf": 1009},
        ]
    ),
    texts=st.lists(NUMBER_TEXT, min_size=6, max_size=6),
    multiples=st.lists(st.integers(-(10**6), 10**6), min_size=3, max_size=3),
)
def test_not_multiple_of_accepts_exactly_the_valid_short_numbers(m, extra, texts, multiples):
    schema = {**extra, "not": {"multipleOf": m}}
    v = validator(schema, formats=False)
    candidates = [*texts, *(str(k * int(m)) for k in multiples), *(str(k * int(m) + 1) for k in multiples)]
    try:
        index = fsm.compile(JsonSchema(schema, exact=True), BYTES, cache=False)
    except fsm.SchemaError as exc:  # integers that are no multiple of 1: nothing
        assert "admits no JSON document" in str(exc)
        assert not any(v.is_valid(json.loads(text)) for text in candidates), schema
        return
    for text in candidates:
        ok = accepts(index, text)
        valid = v.is_valid(json.loads(text))
        assert not ok or valid, ("accepted an invalid number", schema, text)
        if valid and _kept(text, m):
            assert ok, ("rejected a valid number", schema, text)


@pytest.mark.parametrize(
    "schema",
    [
        {"not": {"multipleOf": 3}},
        {"anyOf": [{"not": {"multipleOf": 5}}, {"multipleOf": 7}], "minimum": 1},
        {"type": "integer", "not": {"anyOf": [{"multipleOf": 2}, {"multipleOf": 3}]}, "maximum": 100},
        {"type": "number", "allOf": [{"not": {"multipleOf": 6}}, {"not": {"multipleOf": 7}}]},
        {"not": {"type": "integer", "multipleOf": 4}},
        {"type": "number", "oneOf": [{"type": "integer"}, {"multipleOf": 3}]},
    ],
)
def test_cases_accept_exactly_what_jsonschema_validates(schema):
    index = fsm.compile(JsonSchema(schema, exact=True), BYTES, cache=False)
    v = validator(schema, formats=False)
    for doc in [
        None,
        True,
        "a",
        [],
        {},
        0,
        1,
        2,
        3,
        4,
        5,
        6,
        7,
        12,
        14,
        35,
        42,
        99,
        101,
        -6,
        2.5,
        4.0,
        6.0,
        7.5,
    ]:
        ok, valid = accepts(index, json.dumps(doc)), v.is_valid(doc)
        # a non-multiple spelled with a zero fraction (6.0) is left out
        assert ok == valid or (valid and isinstance(doc, float) and doc.is_integer()), (schema, doc)


def test_a_decimal_divisor_stays_unsupported_under_not():
    with pytest.raises(fsm.UnsupportedSchema) as err:
        JsonSchema({"type": "number", "not": {"multipleOf": 0.5}}, exact=True).to_dfa()
    assert err.value.keyword == "not"


def test_enum_values_are_checked_against_a_negated_multiple():
    schema = {"enum": [3, 5, 10, 10.0, 11.5, "x"], "not": {"multipleOf": 5}}
    index = fsm.compile(JsonSchema(schema, exact=True), BYTES, cache=False)
    got = [accepts(index, json.dumps(x)) for x in (3, 5, 10, 10.0, 11.5, "x")]
    assert got == [True, False, False, False, True, False]  # a string satisfies multipleOf
