"""Exponent spellings of numbers in exact mode (fsm/automata/exponents.py, fsm/json/numbers.py):
random number texts against random schemas, accepted iff the validator takes ``json.loads(text)``.

Soundness is checked on every text; completeness on the texts inside the documented domain
(`in_domain`): a mantissa of at most 20 integer and 20 fraction digits (12 each for whole
numbers, and then ``d.ddd``, an integer, or zero; a mantissa of two or more digits before the
point takes exponents up to 99), whole numbers below 1e308, values not within a few units in the
last place of a double of a bound, no non-whole text that only rounds to a whole double, and an
integer with a zero fraction (``12.0``) of at most 15 digits when the schema has bounds or divisors.

multipleOf follows the library's documented reading (the decimal the schema wrote: ``0.5`` is 1/2,
so every integer is a multiple of it, ``1e308`` included), where jsonschema divides doubles
(``1e308 / 0.5`` overflows, and it reports the overflow as valid only for integer types): the
reference below checks the exact quotient of the text's value.
"""

from __future__ import annotations

import json
import math
from decimal import Decimal
from fractions import Fraction

import jsonschema
from hypothesis import example, given, settings
from hypothesis import strategies as st

import fsm
from fsm.automata import node_to_char_dfa
from fsm.automata.budget import Budget
from fsm.json.numbers import SIGNIFICANT_DIGITS

SIGNS = st.sampled_from(["", "-"])
DIGITS = st.text("0123456789", min_size=1, max_size=24)
BOUND_KW = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")
EXPONENTS = st.one_of(
    st.integers(0, 30).map(str),
    st.integers(0, 400).map(str),
    st.integers(290, 330).map(str),
    st.integers(0, 3000).map(str),
    st.builds(lambda z, e: "0" * z + str(e), st.integers(1, 3), st.integers(0, 40)),
)


@st.composite
def number_texts(draw) -> str:
    """A JSON number text: any mantissa, often an exponent (any sign and case)."""
    head = draw(
        st.one_of(st.just("0"), DIGITS.map(lambda d: d.lstrip("0") or "0"), st.integers(1, 9).map(str))
    )
    frac = draw(
        st.one_of(
            st.just(""), DIGITS.map(lambda d: "." + d), st.integers(0, 5).map(lambda n: "." + "0" * n + "5")
        )
    )
    exp = draw(
        st.one_of(
            st.just(""),
            st.builds(
                lambda e, s, x: e + s + x, st.sampled_from("eE"), st.sampled_from(["", "+", "-"]), EXPONENTS
            ),
        )
    )
    return draw(SIGNS) + head + (frac if frac != "." else "") + exp


BOUND = st.one_of(
    st.integers(-1000, 1000),
    st.sampled_from([0, 0.0, 0.5, -2.5, 3, 1e10, 1e-5, 1e300, -1e300, 123.456, 1e20, 2**53]),
    st.floats(-1e6, 1e6, allow_nan=False),
)


@st.composite
def schemas(draw) -> dict:
    s: dict = {"type": draw(st.sampled_from(["integer", "number"]))}
    for kw in BOUND_KW:
        if draw(st.integers(0, 2)) == 0:
            s[kw] = draw(BOUND)
    if s["type"] == "integer" and draw(st.booleans()):
        s["multipleOf"] = draw(st.sampled_from([0.5, 0.25, 0.2, 0.125, 0.01]))
    return s


def valid(schema: dict, text: str) -> bool:
    """The validator's verdict on ``json.loads(text)``, multipleOf by the schema's decimal."""
    value = json.loads(text)
    rest = {k: v for k, v in schema.items() if k != "multipleOf"}
    if not jsonschema.Draft202012Validator(rest).is_valid(value):
        return False
    if "multipleOf" in schema:
        if isinstance(value, float) and not math.isfinite(value):
            return False
        q = Fraction(value) / Fraction(Decimal(repr(schema["multipleOf"])))
        return q.denominator == 1
    return True


def in_domain(schema: dict, text: str) -> bool:
    """Whether exact mode promises to accept ``text`` when it is valid (see the module docstring)."""
    mant, _, exp = text.lower().lstrip("-").partition("e")
    head, _, frac = mant.partition(".")
    value = Fraction(Decimal(text))
    whole = schema["type"] == "integer"
    if not exp and text.startswith("-") and value == 0:
        return False  # -0 and -0.0: the pre-existing languages write zero unsigned
    if value and not exp and not frac:  # integers as written: the pre-existing languages
        return len(head) <= (20 if "multipleOf" in schema else 308)
    if not exp:
        if whole:
            # with bounds or divisors, a zero fraction only on integers of at most 15 digits, whose
            # double is themselves (`json.numbers.exact_zero_fraction`): 9007199254740993.0 is 2^53
            bounded = any(k in schema for k in BOUND_KW)
            return (
                not frac.strip("0")
                and len(frac) <= 20
                and len(head) <= (20 if "multipleOf" in schema else 308)
                and (not frac or not (bounded or "multipleOf" in schema) or len(head) <= SIGNIFICANT_DIGITS)
            )
        return len(frac) <= 20 and len(head) <= 20
    if schema["type"] == "number" and len(schema) == 1:  # unbounded: `number_node`'s own syntax
        return len(exp.lstrip("+-")) <= 3 and len(head) <= 20 and len(frac) <= 20
    if value == 0:
        return True
    if len(head) > (12 if whole else 20) or len(frac) > (12 if whole else 20):
        return False
    if whole:
        if value.denominator != 1 and Fraction(float(value)) != 0:
            return False  # not whole, only rounds to a whole double: left out
        if abs(value) >= 10**308:
            return False
        if frac and (head == "0" or len(head) > 1):
            return False  # a fraction (zero or not) only after one digit: 1.5e1, not 10.0e0 (docs)
        if len(head) > 1 and abs(int(exp)) > 99:
            return False
        if head == "0":
            return False
    if len(head.lstrip("0")) == 0 and len(frac) - len(frac.lstrip("0")) >= 20:
        return False
    for kw in BOUND_KW:  # a hair from a bound
        if (
            kw in schema
            and schema[kw] != 0
            and abs(value - Fraction(schema[kw])) <= abs(Fraction(schema[kw])) / 2**48
        ):
            return False
    return abs(value) >= Fraction(1, 10**300) or value == 0


@settings(max_examples=150, deadline=None)
@given(schema=schemas(), texts=st.lists(number_texts(), min_size=20, max_size=40))
# a draw CI found: 16 digits and a zero fraction under a bound, out of the promised domain
@example(schema={"type": "integer", "minimum": 0}, texts=["1000000000000000.0", "100000000000000.0"])
@example(
    schema={"type": "integer", "minimum": 910, "exclusiveMaximum": 1e300, "multipleOf": 0.5},
    texts=["910", "1e299"],
)
# a draw of 2026-11-28: no decimal of the written fraction digits in the range, so no exponents either
@example(
    schema={"type": "number", "minimum": 3.8958662625212525e-250, "exclusiveMaximum": 1.8640690479220976e-57},
    texts=["0.1e-56", "1e-57"],
)
def test_exponent_spellings_by_value(schema, texts):
    # a bound near 1e300 is an automaton of ~37k states (~1.5 s alone): the default 10 s budget
    # tripped in CI on a loaded host, a time limit and not a wrong language, so this test allows more
    budget = Budget(fsm.Limits(max_seconds=120))
    try:
        d = node_to_char_dfa(fsm.JsonSchema(schema, exact=True).node(), budget)
    except fsm.SchemaError:  # refused as contradictory: no text may be valid
        d = None
    for text in texts:
        ok = valid(schema, text)
        got = d is not None and d.accepts(text)
        assert not got or ok, (schema, text, "accepted, invalid")
        if ok and in_domain(schema, text):
            assert got, (schema, text, "rejected, valid")


def test_suite_float_overflow_and_the_issue_examples():
    accepts = node_to_char_dfa(
        fsm.JsonSchema({"type": "integer", "multipleOf": 0.5}, exact=True).node()
    ).accepts
    assert accepts("1e+308") and accepts("1E308") and not accepts("1e309") and not accepts("1.5")
    accepts = node_to_char_dfa(fsm.JsonSchema({"type": "integer"}, exact=True).node()).accepts
    assert [accepts(t) for t in ("1e2", "1E+2", "1.5e1", "150e-1", "1e+308", "1e-400", "0e5000")] == [
        True
    ] * 7
    assert [accepts(t) for t in ("1.5e0", "1e400", "15e-2", "1.25e1", "1e-5")] == [False] * 5
    accepts = node_to_char_dfa(
        fsm.JsonSchema({"type": "number", "minimum": 0, "maximum": 3}, exact=True).node()
    ).accepts
    assert [accepts(t) for t in ("2e0", "0.25E1", "3e-5", "3E0", "-0e1")] == [True] * 5
    assert [accepts(t) for t in ("3.1e0", "-1e-5", "4e0", "1e400")] == [False] * 4


def test_generation_policy_writes_one_spelling():
    accepts = node_to_char_dfa(fsm.JsonSchema({"type": "integer"}).node()).accepts
    assert accepts("100") and not accepts("1e2")


def test_tiny_exclusive_bound_follows_the_double():
    # 1e-400 parses to 0.0, which exclusiveMinimum 0 excludes: compared as the double
    accepts = node_to_char_dfa(
        fsm.JsonSchema({"type": "number", "exclusiveMinimum": 0}, exact=True).node()
    ).accepts
    assert accepts("1e-300") and not accepts("1e-400") and not accepts("0e1") and accepts("1e400")


LEAF_BOUND = st.sampled_from([0, 1, 2.5, -3, 10, 1e-5, 100, 0.5, -0.5])


@st.composite
def leaves(draw) -> dict:
    s: dict = {"type": draw(st.sampled_from(["integer", "number"]))}
    for kw in BOUND_KW:
        if draw(st.integers(0, 3)) == 0:
            s[kw] = draw(LEAF_BOUND)
    if draw(st.integers(0, 4)) == 0:
        s["multipleOf"] = draw(st.sampled_from([2, 3, 0.5, 1.5]))
    return s


COMBINED = st.one_of(
    st.builds(lambda a, b: {**a, "not": b}, leaves(), leaves()),
    st.builds(
        lambda kw, xs: {kw: xs},
        st.sampled_from(["oneOf", "anyOf", "allOf"]),
        st.lists(leaves(), min_size=2, max_size=3),
    ),
    st.builds(lambda a: {"not": a}, leaves()),
)


@settings(max_examples=60, deadline=None)
@given(schema=COMBINED, texts=st.lists(number_texts(), min_size=20, max_size=30))
def test_exponent_spellings_stay_sound_under_not_and_combinations(schema, texts):
    # a branch's exponent spellings beside another branch without them (a multipleOf) must not let
    # oneOf or not accept a value both branches hold
    try:
        d = node_to_char_dfa(fsm.JsonSchema(schema, exact=True).node())
    except fsm.SpecError:
        return
    validator = jsonschema.Draft202012Validator(schema)
    for text in texts:
        if d is not None and d.accepts(text):
            try:
                ok = validator.is_valid(json.loads(text))
            except OverflowError:  # jsonschema's multipleOf takes Fraction(inf): no verdict
                continue
            assert ok, (schema, text)
