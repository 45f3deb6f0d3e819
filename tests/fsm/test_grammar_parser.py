"""The LALR(1) stack machine over lark's table: interned stacks, memoized feeds, exact acceptance."""

from __future__ import annotations

import lark
from hypothesis import given, settings
from hypothesis import strategies as st

from fsm.grammar.lark import load_lark
from fsm.grammar.parser import LRParser

PARENS = 'start: item*\nitem: "(" item* ")" | "x"'
LARK = lark.Lark(PARENS, parser="lalr")


def balanced(seq: str) -> bool:
    depth = 0
    for c in seq:
        depth += {"(": 1, ")": -1}.get(c, 0)
        if depth < 0:
            return False
    return depth == 0


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="()x", max_size=14))
def test_feeds_and_accepts_like_lark(seq):
    g = load_lark(PARENS)
    p = LRParser(g.table)
    ids = {"(": g.term_id("LPAR"), ")": g.term_id("RPAR"), "x": g.term_id("X")}
    node, alive = p.root, True
    for c in seq:
        node = p.feed(node, ids[c])
        if node < 0:
            alive = False
            break
    ours = alive and p.accepts_end(node)
    try:
        LARK.parse(seq)
        theirs = True
    except lark.exceptions.LarkError:
        theirs = False
    assert ours == theirs == balanced(seq)
    if alive:  # the parser never accepts a dead prefix: something can always follow
        assert p.acc_bits(node) or p.accepts_end(node)


def test_stacks_are_interned_and_feeds_memoized():
    g = load_lark(PARENS)
    p = LRParser(g.table)
    lp, rp = g.term_id("LPAR"), g.term_id("RPAR")
    a = p.feed(p.feed(p.root, lp), rp)
    n = p.n_nodes
    b = p.feed(p.feed(p.root, lp), rp)
    assert a == b and p.n_nodes == n
    assert p.states(a)[0] == g.table.start_state


def test_acc_bits_are_exact():
    g = load_lark(PARENS)
    p = LRParser(g.table)
    lp, rp, x = g.term_id("LPAR"), g.term_id("RPAR"), g.term_id("X")
    assert p.acc_bits(p.root) == (1 << lp) | (1 << x)  # ")" would be a syntax error
    inner = p.feed(p.root, lp)
    assert p.acc_bits(inner) == (1 << lp) | (1 << rp) | (1 << x)
    assert p.accepts_end(p.root) and not p.accepts_end(inner)
