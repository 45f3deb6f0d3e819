"""``multipleOf`` by its arithmetic: integral divisors factored (2- and 5-parts as trailing digits),
decimal divisors through their decimal expansion, checked against exact arithmetic and ``jsonschema``.

``jsonschema`` divides doubles for a float ``multipleOf`` (``19.99 / 0.01`` is not an integer there);
the specification's division is exact, so the oracle is `fractions.Fraction` and ``jsonschema`` is
checked to agree wherever its double division is exact.
"""

from __future__ import annotations

import json
import random
import time
from decimal import Decimal, localcontext
from fractions import Fraction

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fsm
from fsm.errors import SchemaTooComplex
from fsm.json.schema import JsonSchema
from fsm.limits import Limits
from fsm.testing import accepts, random_walk

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


# divisors whose remainder automaton is too big to build (over 100,000 states): the lazy remainder
# block (`fsm.automata.remainders`), integral and decimal, from just over the cap to 10^12
big_divisors = st.one_of(
    st.builds(Fraction, st.integers(100_003, 10**12)),
    st.builds(lambda p, s: Fraction(p, 10**s), st.integers(100_003, 10**9), st.integers(1, 9)),
)


def _decimal_places(den: int) -> int:
    """``10^k`` for the fewest ``k`` places ``1/den`` takes (``den`` a product of 2s and 5s)."""
    p = 1
    while p % den:
        p *= 10
    return p


def _decimal_text(x: Fraction) -> str:
    """``x`` (a denominator of 2s and 5s) written out exactly."""
    with localcontext() as ctx:
        ctx.prec = 80
        return format(Decimal(x.numerator) / x.denominator, "f")


@SLOW
@given(
    d=big_divisors,
    integer=st.booleans(),
    exact=st.booleans(),
    ks=st.lists(st.integers(-(10**6), 10**6), min_size=3, max_size=3),
    lo=st.one_of(st.none(), st.integers(-(10**7), 10**7)),
    off=st.sampled_from(["0", "00", "1", "01", "5"]),
)
def test_big_divisors_accept_exactly_the_multiples(d, integer, exact, ks, lo, off, vocab):
    m = float(d) if d.denominator > 1 else d.numerator
    if d.denominator > 1 and Fraction(Decimal(repr(m))) != d:
        return  # the double's shortest repr is another decimal (the schema says that one)
    schema = {"type": "integer" if integer else "number", "multipleOf": m}
    if lo is not None:
        schema["minimum"] = lo
    v = validator(schema)
    index = fsm.compile(JsonSchema(schema, exact=exact), vocab, cache=False, limits=Limits(max_seconds=120))
    texts = []
    for k in ks:
        x = k * d if not integer else Fraction(k * d.numerator)
        # a multiple, one a unit of its last place off (the divisor's decimal places), integers
        ulp = Fraction(1, _decimal_places(d.denominator))
        texts += [_decimal_text(x), _decimal_text(x + ulp), str(k), str(k * d.numerator + 1)]
    texts += [t + off if "." in t else t + "." + off for t in texts]
    for text in texts:
        if len(text.lstrip("-").split(".")[0]) > 20:
            continue  # integer digits past the cap a multipleOf keeps (`fsm.json.numbers.number_digits`)
        x = Fraction(Decimal(text))
        if "." in text and x.denominator == 1 and len(text.lstrip("-").split(".")[0]) > 15:
            continue  # a long integer spelled with a fraction: no longer exact as a double (documented)
        # bounds compare the double a decimal parses to (docs/json-schema.md)
        want = (
            (x / d).denominator == 1
            and (lo is None or float(text) >= lo)
            and (not integer or x.denominator == 1)
        )
        got = accepts(index, text)
        canonical = not ("." in text and (text.endswith("0") or integer))
        if exact or canonical:
            assert got == want, (m, text)
        else:
            assert not got or want, (m, text)
        # jsonschema divides doubles: compared where that division is exact (a non-multiple's
        # quotient may round to an integer there)
        if want and (Fraction(float(text)) / Fraction(m)).denominator == 1:
            assert v.is_valid(json.loads(text)), (m, text)


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "integer", "multipleOf": 0.123456789},
        {"type": "number", "multipleOf": 3.14159, "minimum": 0, "maximum": 10},
        {"type": "number", "multipleOf": 1234.56789, "exclusiveMinimum": 0.5, "maximum": 10**9},
        {"type": "integer", "multipleOf": 987654321987, "minimum": -(10**15), "maximum": 10**13},
    ],
)
def test_big_divisors_never_lead_generation_to_a_dead_end(schema, vocab):
    for exact in (True, False):
        index = fsm.compile(
            JsonSchema(schema, exact=exact), vocab, cache=False, limits=Limits(max_seconds=120)
        )
        rng = random.Random(7)
        for _ in range(12):  # random_walk asserts that every state reached allows a token
            w = random_walk(index, rng, max_tokens=40, eos_bias=rng.choice([0.05, 0.5]))
            if w.finished:
                x = Fraction(Decimal(w.text))
                assert (x / Fraction(Decimal(repr(schema["multipleOf"])))).denominator == 1, w.text
                assert validator({k: v for k, v in schema.items() if k != "multipleOf"}).is_valid(
                    json.loads(w.text)
                )


def test_a_divisor_with_too_many_remainders_compiles_lazily_but_no_plain_dfa_holds_it(vocab):
    schema = {"type": "integer", "multipleOf": 0.123456789}  # the suite's "float division = inf"
    start = time.perf_counter()
    with pytest.raises(SchemaTooComplex, match="multipleOf"):
        JsonSchema(schema).to_dfa(Limits(max_seconds=2))
    assert time.perf_counter() - start < 2
    index = fsm.compile(JsonSchema(schema, exact=True), vocab, cache=False, limits=Limits(max_seconds=120))
    assert accepts(index, "123456789") and accepts(index, "-246913578") and accepts(index, "0")
    assert not accepts(index, "1") and not accepts(index, "123456788") and not accepts(index, "1e308")


@pytest.mark.parametrize("schema", [{"type": "integer", "not": {"multipleOf": 123457}}])
def test_a_negated_divisor_with_too_many_remainders_is_refused_within_budget(schema):
    start = time.perf_counter()
    with pytest.raises(SchemaTooComplex, match="multipleOf"):
        JsonSchema(schema).to_dfa(Limits(max_seconds=2))
    assert time.perf_counter() - start < 2


def test_a_lazy_power_of_ten_divisor_keeps_its_decimal_places(vocab, monkeypatch):
    import fsm.json.numbers as numbers

    monkeypatch.setattr(numbers, "EAGER_REMAINDER_STATES", 0)  # every divisor as a remainder block
    index = fsm.compile(JsonSchema({"type": "number", "multipleOf": 1e-8}, exact=True), vocab, cache=False)
    assert accepts(index, "0.00000001") and accepts(index, "12.5") and accepts(index, "0.000000010")
    assert not accepts(index, "0.000000015") and not accepts(index, "0.000000001")


def test_items_with_a_big_divisor_are_copies_sharing_one_remainder_language(vocab):
    # the item cannot be a counter block's unit (a plain automaton): each copy enters the same
    # lazily made remainder states, their arithmetic done once
    schema = {
        "type": "array",
        "items": {"type": "integer", "multipleOf": 123457},
        "minItems": 2,
        "maxItems": 3000,
    }
    start = time.perf_counter()
    index = fsm.compile(JsonSchema(schema, exact=True), vocab, cache=False, limits=Limits(max_seconds=120))
    assert accepts(index, "[" + ",".join(["246914", "0", "-123457"] * 40) + "]")
    assert not accepts(index, "[0]") and not accepts(index, "[0,1]") and not accepts(index, "[0,123456]")
    assert time.perf_counter() - start < 60  # 3,000 copies each redoing the arithmetic took ~3 s alone
