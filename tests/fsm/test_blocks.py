"""Virtual-state blocks (`fsm.automata.blocks`): the ranges the spellability checks read."""

from __future__ import annotations

from fsm.automata import AnyJson, lit, node_nfa, seq
from fsm.automata.blocks import dfa_ranges
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
