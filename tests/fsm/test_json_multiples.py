"""``multipleOf`` by its arithmetic: integral divisors factored (2- and 5-parts as trailing digits),
decimal divisors through their decimal expansion, checked against exact arithmetic and ``jsonschema``.

``jsonschema`` divides doubles for a float ``multipleOf`` (``19.99 / 0.01`` is not an integer there);
the specification's division is exact, so the oracle is `fractions.Fraction` and ``jsonschema`` is
checked to agree wherever its double division is exact.
"""

from __future__ import annotations

import time
from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fsm
from fsm.errors import SchemaTooComplex
from fsm.json.schema import JsonSchema
from fsm.limits import Limits
from fsm.testing import accepts

from .json_helpers import validator

SLOW = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

# remainder parts (m without its power of ten) up to a few hundred: the range product stays small
divisors = st.builds(
    lambda ten, two, five, k: 10**ten * 2**two * 5**five * k,
    st.integers(0, 9),
    st.integers(0, 3),
    st.integers(0, 1),
    st.sampled_from([1, 1, 3, 7, 9, 11, 13, 21]),
)


@SLOW
@given(m=divisors, xs=st.lists(st.integers(-(10**9), 10**9), min_size=6, max_size=6), k=st.integers(-50, 50))
def test_integer_divisors_accept_exactly_the_multiples(m, xs, k, vocab):
    schema = {"type": "integer", "multipleOf": m}
    v = validator(schema)
    index = fsm.compile(JsonSchema(schema), vocab, cache=False)
    for x in [*xs, k * m, k * m + 1, 0]:
        assert accepts(index, str(x)) == (x % m == 0) == v.is_valid(x), (m, x)


def _exact(text: str, m: float) -> bool:
    return (Fraction(Decimal(text)) / Fraction(Decimal(repr(m)))).denominator == 1


@SLOW
@given(
    digits=st.integers(1, 99),
    scale=st.integers(1, 3),
    ns=st.lists(st.integers(-5000, 5000), min_size=4, max_size=4),
    off=st.sampled_from(["", "1", "5", "0", "00", "01"]),
    exact=st.booleans(),
)
def test_decimal_divisors_accept_exactly_the_multiples(digits, scale, ns, off, exact, vocab):
    m = float(Decimal(digits) / 10**scale)
    schema = {"type": "number", "multipleOf": m}
    v = validator(schema)
    index = fsm.compile(JsonSchema(schema, exact=exact), vocab, cache=False)
    for n in ns:
        value = Decimal(digits) * n / 10**scale
        text = format(value, "f")
        if off:
            text = text + off if "." in text else text + "." + off
        want = _exact(text, m)
        got = accepts(index, text)
        # the generation policy spells numbers one way (no "3.0" for a multiple of an integral
        # divisor, no trailing fraction zeros); exact mode takes every spelling
        canonical = not ("." in text and text.endswith("0"))
        if exact or canonical:
            assert got == want, (m, text)
        else:
            assert not got or want, (m, text)  # never a non-multiple
        x = float(text)
        if (Fraction(x) / Fraction(m)).denominator == 1 or not want:  # where the double division is exact
            assert v.is_valid(x) == want, (m, text)


def test_issue_cases(vocab, tokenizer):
    for schema, yes, no in [
        ({"type": "integer", "multipleOf": 1e6}, ["0", "-3000000", "1000000"], ["1000", "2500000"]),
        ({"type": "number", "multipleOf": 2.5}, ["7.5", "-5", "10", "0"], ["2.6", "1.25"]),
        ({"type": "number", "multipleOf": 0.01}, ["3.14", "19.99", "2"], ["3.141", "0.001"]),
        ({"type": "integer", "multipleOf": 0.5}, ["1", "-3"], ["1.5"]),
        ({"type": "number", "multipleOf": 1.5, "minimum": 0, "maximum": 10}, ["4.5", "9"], ["10.5", "2"]),
    ]:
        index = fsm.compile(JsonSchema(schema), vocab, cache=False)
        for text in yes:
            assert accepts(index, text, tokenizer), (schema, text)
        for text in no:
            assert not accepts(index, text, tokenizer), (schema, text)


def test_exact_mode_takes_every_spelling_without_exponent(vocab, tokenizer):
    index = fsm.compile(JsonSchema({"type": "number", "multipleOf": 0.25}, exact=True), vocab, cache=False)
    for text, ok in [
        ("0.5", True),
        ("0.50", True),
        ("0.500000", True),
        ("1", True),
        ("1.0", True),
        ("0.3", False),
    ]:
        assert accepts(index, text, tokenizer) == ok, text


def test_a_million_is_trailing_zeros_not_a_million_states(vocab):
    start = time.perf_counter()
    fsm.compile(
        JsonSchema({"type": "integer", "multipleOf": 1e6}), vocab, cache=False, limits=Limits(max_seconds=2)
    )
    assert time.perf_counter() - start < 2  # within its own budget (the old automaton took ~6 s)


@pytest.mark.parametrize("m", [123457, 0.123456789, 2**20])
def test_too_many_remainders_is_refused_within_budget(m):
    start = time.perf_counter()
    with pytest.raises(SchemaTooComplex, match="multipleOf"):
        JsonSchema({"type": "integer", "multipleOf": m}).to_dfa(Limits(max_seconds=2))
    assert time.perf_counter() - start < 2
