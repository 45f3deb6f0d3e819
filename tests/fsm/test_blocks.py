"""Virtual-state blocks (`fsm.automata.blocks`): the ranges the spellability checks read, and a
product block's table of the lengths each unit state accepts."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from fsm.automata import AnyJson, lit, node_nfa, seq
from fsm.automata.blocks import ProductBlock, dfa_ranges
from fsm.automata.char_dfa import CharDFA


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
