"""Exact digit-range automata for JSON numbers (json_numbers)."""

from __future__ import annotations

import re
from fractions import Fraction
from itertools import product

from hypothesis import given, settings
from hypothesis import strategies as st

from fsm.automata import (
    NEVER,
    And,
    Bounds,
    alt,
    decimal_range,
    divisible_integers,
    integer_range,
    lit,
    natural_range,
    node_nfa,
    node_to_char_dfa,
    node_to_dfa,
    number_node,
    seq,
    to_regex,
)

bound = st.one_of(st.none(), st.integers(-(10**7), 10**7), st.integers(-60, 60))


@settings(max_examples=60, deadline=None)
@given(
    lo=bound,
    hi=bound,
    xs=st.lists(st.one_of(st.integers(-(10**8), 10**8), st.integers(-70, 70)), max_size=40),
)
def test_integer_range_is_exact(lo, hi, xs):
    node = integer_range(lo, hi, 9)
    if lo is not None and hi is not None and lo > hi:
        assert node == NEVER
        return
    rx = re.compile(to_regex(node), re.ASCII)
    for x in xs + [v for v in (lo, hi) if v is not None]:
        inside = (lo is None or x >= lo) and (hi is None or x <= hi)
        assert bool(rx.fullmatch(str(x))) == inside, (lo, hi, x)
    for bad in ("-0", "00", "01", "+1", "1.0", ""):
        assert not rx.fullmatch(bad)


def test_natural_range_huge_bounds():
    lo, hi = 10**30 + 7, 10**31 - 3
    rx = re.compile(to_regex(natural_range(lo, hi)), re.ASCII)
    for x in (lo, hi, lo + 1, 5 * 10**30):
        assert rx.fullmatch(str(x))
    for x in (lo - 1, hi + 1, 10**30):
        assert not rx.fullmatch(str(x))


def test_unbounded_side_caps_digit_count():
    rx = re.compile(to_regex(integer_range(0, None, 5)), re.ASCII)
    assert rx.fullmatch("99999") and not rx.fullmatch("100000")


doubles = st.one_of(
    st.integers(-50, 50), st.floats(-1e3, 1e3, allow_nan=False), st.sampled_from([0.1, -0.3, 2.5, 1e-7])
)


@settings(max_examples=60, deadline=None)
@given(
    lo=st.one_of(st.none(), doubles),
    hi=st.one_of(st.none(), doubles),
    exl=st.booleans(),
    exh=st.booleans(),
    probes=st.lists(st.one_of(st.floats(-1.2e3, 1.2e3, allow_nan=False), st.integers(-60, 60)), max_size=30),
)
def test_number_bounds_hold_for_the_parsed_double(lo, hi, exl, exh, probes):
    b = Bounds()
    if lo is not None:
        b.tighten_lower(lo, exl)
    if hi is not None:
        b.tighten_upper(hi, exh)
    node = number_node(b, max_digits=5, frac_digits=6)
    try:
        rx = re.compile(to_regex(node), re.ASCII)
    except ValueError:  # empty range
        return
    for v in probes + [x for x in (lo, hi) if x is not None]:
        for text in {repr(v), str(round(v, 3)), str(int(v))}:
            if "e" in text or "inf" in text or "nan" in text:
                continue
            value = float(text) if "." in text else int(text)
            ok = (lo is None or (value > lo if exl else value >= lo)) and (
                hi is None or (value < hi if exh else value <= hi)
            )
            if rx.fullmatch(text):
                assert ok, (lo, exl, hi, exh, text)  # soundness: validators compare the parsed double


def test_decimal_bound_admits_the_decimal_that_parses_to_the_bound():
    b = Bounds()
    b.tighten_lower(0.1, False)
    b.tighten_upper(0.7, True)
    rx = re.compile(to_regex(number_node(b, frac_digits=4)), re.ASCII)
    assert (
        rx.fullmatch("0.1")
        and rx.fullmatch("0.6999")
        and not rx.fullmatch("0.7")
        and not rx.fullmatch("0.0999")
    )


def test_decimal_range_fraction_digits_pad_with_zeros():
    rx = re.compile(to_regex(decimal_range(Fraction(1, 4), Fraction(1, 2), frac_digits=3)), re.ASCII)
    assert [bool(rx.fullmatch(s)) for s in ("0.25", "0.250", "0.5", "0.50", "0.2", "0.501")] == [
        True,
        True,
        True,
        True,
        False,
        False,
    ]


def test_multiple_of_with_range_is_exact():
    dfa = node_to_dfa(And((integer_range(-100, 4096, 6), divisible_integers(16))))
    for x in range(-200, 5000, 7):
        assert dfa.accepts(str(x).encode()) == (x % 16 == 0 and -100 <= x <= 4096)
    assert not dfa.accepts(b"-0") and dfa.accepts(b"0")


def test_a_zero_fraction_past_15_digits_is_judged_as_its_double():
    """``9007199254740993.0`` parses to 2^53: no multiple of 3, below a minimum of 2^53 + 1. Exact
    mode spells a zero fraction for long integers only where no bound or divisor reads them."""
    import json

    import jsonschema

    import fsm
    from fsm.testing import accepts

    vocab = fsm.Vocabulary([bytes([b]) for b in range(256)] + [None], eos_token_ids=[256])
    texts = ["9007199254740993.0", "9007199254740993", "9007199254740995.00", "123.0", "3.0", "-6.000"]
    for schema in (
        {"type": "number", "multipleOf": 3},
        {"type": "integer", "multipleOf": 3},
        {"type": "integer", "minimum": 9007199254740993},
        {"type": "integer", "maximum": 9007199254740992},
        {"type": "integer"},
    ):
        idx = fsm.compile(fsm.JsonSchema(schema, exact=True), vocab, cache=False)
        check = jsonschema.Draft202012Validator(schema)
        for text in texts:
            valid = check.is_valid(json.loads(text))
            assert not accepts(idx, text) or valid, (schema, text)
            if valid and len(text.split(".")[0].lstrip("-")) <= 15:
                assert accepts(idx, text), (schema, text)
    assert accepts(fsm.compile(fsm.JsonSchema({"type": "integer"}, exact=True), vocab), "9007199254740993.0")


def test_a_negated_integer_type_beside_a_negated_multiple_leaves_no_integer():
    """number and not integer and not multipleOf 2: the odd integers were let through by the
    non-multiples' automaton (a oneOf of integer, number and an empty integer branch accepted 1)."""
    import fsm
    from fsm.automata import node_to_char_dfa

    for schema in (
        {"type": "number", "allOf": [{"not": {"type": "integer"}}, {"not": {"multipleOf": 2}}]},
        {
            "oneOf": [
                {"type": "integer"},
                {"type": "number"},
                {"type": "integer", "multipleOf": 2, "maximum": -1, "minimum": 0},
            ]
        },
    ):
        d = node_to_char_dfa(fsm.JsonSchema(schema, exact=True).node())
        assert [d.accepts(x) for x in ("1", "2", "-3", "1.5", "2.25")] == [False, False, False, True, True]


def test_unbounded_integers_share_one_digit_chain_for_both_signs():
    for digits in (1, 2, 3):
        one_chain = node_to_char_dfa(integer_range(None, None, digits))
        # the union of the signs, as integer_range spells a bounded range
        union = node_to_char_dfa(
            alt(seq(lit("-"), natural_range(1, None, digits)), natural_range(0, None, digits))
        )
        for n in range(digits + 3):
            for word in map("".join, product("-019", repeat=n)):
                assert one_chain.accepts(word) == union.accepts(word), (digits, word)
    trans, *_ = node_nfa(integer_range(None, None))
    assert len(trans) < 30, len(trans)  # 20 digits: one chain, not one per sign (47 states)


long_bound = st.integers(10**32, 10**120)


@settings(max_examples=40, deadline=None)
@given(a=long_bound, b=long_bound, probes=st.lists(st.integers(0, 10**121), max_size=12))
def test_a_range_of_long_bounds_is_one_flat_automaton_and_exact(a, b, probes):
    lo, hi = min(a, b), max(a, b)
    d = node_to_char_dfa(natural_range(lo, hi))
    for x in [lo, hi, lo - 1, hi + 1, (lo + hi) // 2, *probes]:
        assert d.accepts(str(x)) == (lo <= x <= hi), (lo, hi, x)
    assert not d.accepts("0" + str(hi))


def _under_default_recursion_limit(fn):
    """Run ``fn`` in a fresh thread under Python's default recursion limit (pytest raises it)."""
    import sys
    import threading

    out: list = []
    saved = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)
    try:
        t = threading.Thread(target=lambda: out.append(fn()))
        t.start()
        t.join()
    finally:
        sys.setrecursionlimit(saved)
    assert out, "the call raised (see the thread's traceback above)"
    return out[0]


def test_a_bound_of_hundreds_of_digits_compiles_under_the_default_recursion_limit(vocab):
    """``maximum: 1e200`` is a 201-digit integer that is not round: its digit tree nested a node per
    digit, past what the translation could recurse (refused as "nested too deeply")."""
    import fsm
    from fsm.testing import accepts

    schema = {"type": "integer", "minimum": -1.5e250, "maximum": 1e200}
    index = _under_default_recursion_limit(lambda: fsm.compile(fsm.JsonSchema(schema), vocab, cache=False))
    top, bottom = int(1e200), int(-1.5e250)
    for x, inside in [
        (top, True),
        (top + 1, False),
        (10**199, True),
        (bottom, True),
        (bottom - 1, False),
        (7, True),
    ]:
        assert accepts(index, str(x)) == inside, x


def test_a_range_below_the_fraction_digits_written_is_spelled_with_exponents(vocab):
    """No decimal of the fraction digits the default mode writes lies in [1e-60, 1e-57] (nor did
    exact mode add its exponent spellings there): both refused the schema as empty. Now both
    spell it with an exponent, each text checked by the validator."""
    import json
    import random

    import jsonschema

    import fsm
    from fsm.testing import valid_walks

    schema = {"type": "number", "minimum": 3.9e-250, "exclusiveMaximum": 1.86e-57}
    for exact in (False, True):
        spec = fsm.JsonSchema(schema, exact=exact)
        d = node_to_char_dfa(spec.node())
        assert d.accepts("1e-57") and d.accepts("1E-58") and not d.accepts("2e-57")
        assert not d.accepts("0") and not d.accepts("1e-300")
        assert d.accepts("0.1e-56") and d.accepts("10e-58")
        index = fsm.compile(spec, vocab, cache=False)
        texts = valid_walks(
            index,
            random.Random(7),
            10,
            lambda t: jsonschema.Draft202012Validator(schema).is_valid(json.loads(t)),
        )
        assert texts
