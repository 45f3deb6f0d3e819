"""A big ``multipleOf`` as a lazy remainder block (`fsm.automata.remainders`): for divisors small
enough to build both ways, the lazy DFA of ``Multiples(numbers, m, scale)`` is the eager product
``And(numbers, divisible_decimals(m, scale))`` state for state (same accepting words, and no
transition into a state without a way on: liveness by arithmetic is exact), over numbers shaped by
bounds, digit caps and fraction lengths."""

from __future__ import annotations

import math
from collections import deque
from fractions import Fraction

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from fsm.automata import (
    And,
    Bounds,
    LazyByteDFA,
    Multiples,
    alt,
    divisible_decimals,
    integer_node,
    integer_residues,
    lit,
    node_nfa,
    node_to_char_dfa,
    node_to_dfa,
    number_node,
    seq,
)
from fsm.automata.remainders import Remainders
from fsm.errors import SchemaError, SchemaTooComplex
from fsm.limits import Limits

_NUMBER_BYTES = b"-.0123456789eE+"


def _same_language(lazy_node, eager_node, max_pairs: int = 20_000) -> None:
    """Walk the lazy byte DFA beside the eager character DFA (ASCII only): equal acceptance, equal
    transitions defined (the eager one is trimmed, so a lazy edge the eager lacks is a dead end)."""
    eager = node_to_char_dfa(eager_node)
    if eager is None:
        with pytest.raises(SchemaError, match="admits no JSON document"):
            node_nfa(lazy_node)
        return
    lazy = LazyByteDFA(*node_nfa(lazy_node)).as_byte_dfa()
    seen = {(lazy.initial, 0)}
    todo = deque(seen)
    while todo and len(seen) < max_pairs:
        d, q = todo.popleft()
        assert bool(lazy.accepting[d]) == eager.accepting[q], (d, q)
        for b in _NUMBER_BYTES:
            t, u = lazy.step(d, b), eager.step(q, b)
            assert (t >= 0) == (u >= 0), (chr(b), d, q)
            if t >= 0 and (t, u) not in seen:
                seen.add((t, u))
                todo.append((t, u))


def _bounds(lo: Fraction | None, hi: Fraction | None) -> Bounds:
    b = Bounds()
    if lo is not None:
        b.tighten_lower(lo, False)
    if hi is not None:
        b.tighten_upper(hi, False)
    return b


ends = st.one_of(st.none(), st.fractions(-(10**4), 10**4, max_denominator=100))


@settings(max_examples=40, deadline=None)
@given(
    m=st.integers(1, 150),
    scale=st.integers(0, 3),
    lo=ends,
    hi=ends,
    integral=st.booleans(),
    digits=st.integers(1, 6),
    frac=st.integers(1, 4),
)
def test_lazy_block_is_the_eager_product(m, scale, lo, hi, integral, digits, frac):
    if lo is not None and hi is not None and lo > hi:
        lo, hi = hi, lo
    b = _bounds(lo, hi)
    numbers = integer_node(b, digits) if integral else number_node(b, digits, frac)
    _same_language(Multiples(numbers, m, scale), And((numbers, divisible_decimals(m, scale))))


@settings(max_examples=40, deadline=None)
@given(
    m=st.integers(1, 40),
    negs=st.lists(st.integers(2, 40), min_size=1, max_size=3),
    lo=ends,
    hi=ends,
    digits=st.integers(1, 5),
)
def test_negated_divisors_are_the_eager_residue_automaton(m, negs, lo, hi, digits):
    if lo is not None and hi is not None and lo > hi:
        lo, hi = hi, lo
    numbers = integer_node(_bounds(lo, hi), digits)
    mod = math.lcm(m, *negs)
    assume(mod <= 5_000)  # the eager oracle's states
    residues = integer_residues(mod, lambda r: r % m == 0 and all(r % n for n in negs))
    _same_language(Multiples(numbers, m, 0, tuple(negs)), And((numbers, residues)))


@pytest.mark.parametrize(
    ("m", "scale", "numbers"),
    [
        (7, 0, seq(lit("1"), alt(lit("4"), lit("5"), lit("05")))),  # 14 only: the others dead ends
        (3, 1, alt(lit("0.3"), lit("0.30"), lit("1.2000"), lit("1.21"), lit("-0.6"))),
        (9, 0, alt(lit("18"), lit("18.0"), lit("18.00"), lit("18.01"))),  # zeros past the scale
        (11, 2, lit("1.5")),  # no multiple at all
    ],
)
def test_lazy_block_on_finite_languages(m, scale, numbers):
    _same_language(Multiples(numbers, m, scale), And((numbers, divisible_decimals(m, scale))))


def test_a_huge_divisor_takes_only_the_states_a_text_reaches():
    unit = node_to_char_dfa(number_node(Bounds()))
    rem = Remainders(unit, 123456789, 9)
    assert rem.accepts_text("0.123456789") and rem.accepts_text("-1234567.89")
    assert not rem.accepts_text("0.12345678") and not rem.accepts_text("1e9")
    assert rem.states_made < 200  # the states those texts reached, of some 10^9


def test_an_empty_range_of_multiples_is_no_language():
    numbers = integer_node(_bounds(Fraction(1), Fraction(10**6)), 20)
    with pytest.raises(SchemaError, match="admits no JSON document"):
        node_nfa(Multiples(numbers, 1_234_567, 0))


def test_a_plain_dfa_of_a_huge_divisor_is_refused_within_budget():
    numbers = integer_node(Bounds(), 20)
    with pytest.raises(SchemaTooComplex, match="multipleOf"):
        node_to_dfa(Multiples(numbers, 123456789, 0), Limits(max_seconds=5))
    with pytest.raises(Exception, match="multipleOf"):
        node_to_char_dfa(Multiples(numbers, 123456789, 0))
