"""Virtual-state blocks (`fsm.automata.blocks`): the ranges the spellability checks read, and a
product block's table of the lengths each unit state accepts."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from fsm.automata import AnyJson, lit, node_nfa, seq
from fsm.automata.blocks import CounterBlock, Counters, ProductBlock, dfa_ranges
from fsm.automata.char_dfa import CharDFA
from fsm.automata.utf8_chains import Utf8Chains


def test_block_ranges_are_each_distinct_range_once():
    # a dozen {} values: one scalar DFA shared by every block, its ~1,100 edges read as ~40 ranges
    tree = seq(lit("["), *[seq(AnyJson(), lit(",")) for _ in range(11)], AnyJson(), lit("]"))
    *_, counters = node_nfa(tree)
    assert len(counters.blocks) == 12
    ranges = list(counters.all_edges())
    assert len(ranges) == len({(lo, hi) for lo, hi, _ in ranges}) < 100
    every = {
        (lo, hi)
        for block in counters.blocks
        for dfa in (block.scalar, block.key)
        for row in dfa.edges
        for lo, hi, _ in row
    }
    assert every <= {(lo, hi) for lo, hi, _ in ranges}


def test_dfa_ranges_follow_the_dfa_object():
    a = CharDFA([[(97, 97, 1)], []], [False, True])
    b = CharDFA([[(98, 99, 1)], []], [False, True])
    assert dfa_ranges(a) == ((97, 97, 0),) and dfa_ranges(b) == ((98, 99, 0),)
    assert dfa_ranges(a) is dfa_ranges(a)


@st.composite
def _units(draw):
    n = draw(st.integers(1, 7))
    rows = [
        [
            (c, c, draw(st.integers(0, n - 1)))
            for c in draw(st.lists(st.integers(97, 102), max_size=3, unique=True))
        ]
        for _ in range(n)
    ]
    return CharDFA(rows, draw(st.lists(st.booleans(), min_size=n, max_size=n)))


@settings(max_examples=300, deadline=None)
@given(unit=_units(), hi=st.integers(0, 60))
def test_lengths_table_equals_the_step_by_step_sweep(unit, hi):
    """`ProductBlock.lengths` stops sweeping once a row repeats and tiles the period after it:
    the table is the one a sweep of every length gives (cycles of any period, dead states)."""
    n = len(unit)
    src = np.array([q for q, row in enumerate(unit.edges) for _ in row], dtype=np.int64)
    dst = np.array([t for row in unit.edges for _, _, t in row], dtype=np.int64)
    reach = np.zeros((hi + 1, n), dtype=bool)
    reach[0] = unit.accepting
    for j in range(1, hi + 1):
        reach[j, src[reach[j - 1, dst]]] = True
    want = np.concatenate([np.zeros((1, n), dtype=np.int32), np.cumsum(reach, axis=0, dtype=np.int32)])
    assert (ProductBlock.lengths(unit, hi, None) == want).all()


@st.composite
def _wide_units(draw):
    """Units over characters that a JSON string escapes (``"``, ``\\``), ASCII and multi-byte ones."""
    n = draw(st.integers(1, 6))
    chars = [0x22, 0x5C, 0x61, 0x62, 0xE9, 0x4E00]
    rows = [
        [
            (c, c, draw(st.integers(0, n - 1)))
            for c in draw(st.lists(st.sampled_from(chars), max_size=3, unique=True))
        ]
        for _ in range(n)
    ]
    return CharDFA(rows, draw(st.lists(st.booleans(), min_size=n, max_size=n)))


@settings(max_examples=200, deadline=None)
@given(
    unit=_wide_units(),
    lo=st.integers(0, 12),
    span=st.integers(0, 40),
    enc=st.booleans(),
    product=st.booleans(),
)
def test_offset_edges_are_the_edges_at_every_count_they_are_given_for(unit, lo, span, enc, product):
    """`offset_edges` (edges derived once per item state, as local offsets) gives at each count
    where it answers the edges `edges` computes there, and `Counters.byte_edges` their byte edges
    (`Utf8Chains.byte_edges`) with virtual targets: product blocks near ``lo`` and ``hi`` (where
    liveness depends on the count) get None and are computed as before."""
    hi = lo + span
    block = (
        ProductBlock(unit, lo, hi, 0, ProductBlock.lengths(unit, hi, None), enc=enc)
        if product
        else CounterBlock(unit, lo, hi, 0)
    )
    counters = Counters()
    base = counters.add(block)
    for k in range(hi + 2):
        for g in range(block.m):
            local = block.local((k, g))
            offsets = block.offset_edges(local)
            if offsets is None:
                continue
            want = [(a, b, block.local(t)) for a, b, t in block.edges(local)]
            assert [(a, b, local + d) for a, b, d in offsets] == want, (k, g)
            q = base - local
            assert counters.byte_edges(q) == Utf8Chains.byte_edges(counters.edges(q))
            assert counters.edges(q) == [(a, b, base - t) for a, b, t in want]
