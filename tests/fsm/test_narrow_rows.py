"""Narrow rows walked by the lean kernel (`fsm.index.narrow_rows`) equal the rows the general walk
computes — same tokens, end states and mask — at every state valid instances of the test corpus's
schemas visit; a row that is not narrow is given up before anything past its first round is
expanded; on random automata and vocabularies the pairs are the general walk's."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fsm
from fsm.automata import LazyByteDFA, node_nfa
from fsm.index import LazyDfaIndex
from fsm.index.kernels import kernels
from fsm.index.narrow_rows import MAX_TOKENS, NarrowWalk, narrow_row
from fsm.regex.compile import regex_automaton
from fsm.testing import check_same_row, walked_index

from .schema_cases import schema_instances, visited_row_states


def test_narrow_rows_equal_walked_rows(vocab, tokenizer):
    narrow = checked = 0
    trie = kernels().vocabulary_preorder(vocab)
    for _name, index, states in visited_row_states(list(schema_instances())[:120], vocab, tokenizer):
        if not isinstance(index, LazyDfaIndex):
            continue
        fresh = LazyDfaIndex(index.lazy, vocab, limits=index.limits, shaped_rows=False, sibling_rows=False)
        walked = walked_index(index)
        for q in states:
            if not index.lazy.has_guards:
                narrow += narrow_row(index.dfa, q, trie, index.lazy, index.limits.deadline()) is not None
            check_same_row(fresh, walked, q)
            checked += 1
    assert checked > 500 and narrow > 300, (checked, narrow)


def test_a_wide_row_is_given_up_without_expanding_it(vocab):
    """A free string's first state: hundreds of tokens on the first round, none of the states
    inside it expanded by the attempt; its row is then made as before (a shape or a walk)."""
    index = fsm.compile(fsm.JsonSchema({"type": "string"}), vocab, cache=False)
    lazy = index.lazy
    q = index.dfa.step(index.initial_state, ord('"'))
    lazy.ensure(q)
    before = lazy.n_states, int(lazy.expanded_flags[: lazy.n_states].sum())
    assert narrow_row(index.dfa, q, kernels().vocabulary_preorder(vocab), lazy, None) is None
    walk = NarrowWalk(kernels().vocabulary_preorder(vocab), len(vocab.eos_token_ids))
    assert walk.row(index.dfa, q, lazy, None, None) is None
    assert (lazy.n_states, int(lazy.expanded_flags[: lazy.n_states].sum())) == before
    assert len(index.row(q).tokens) > MAX_TOKENS


def test_a_narrow_row_across_rounds_is_the_walks(vocab):
    """A number's first state (after ``"size":``): the walk meets a state not expanded yet (after
    ``-``), expands it between rounds and resumes below it; the pairs are the general walk's."""
    node, _ = fsm.JsonSchema(
        {"type": "object", "properties": {"size": {"type": "integer"}}, "required": ["size"]}
    ).translation()
    lazy = LazyByteDFA(*node_nfa(node))
    d = lazy.as_byte_dfa()
    q = lazy.initial
    for b in b'{"size":':
        q = d.step(q, b)
    lazy.ensure(q)
    expanded = int(lazy.expanded_flags[: lazy.n_states].sum())
    trie = kernels().vocabulary_preorder(vocab)
    got = narrow_row(d, q, trie, lazy, None)
    assert got is not None
    # states are expanded only between rounds: more of them now means a second round ran
    assert int(lazy.expanded_flags[: lazy.n_states].sum()) > expanded
    assert {b"-", b"0", b"7"} <= {vocab.token_bytes(int(t)) for t in got[0]}
    want = kernels().walk_row(d, q, trie, on_demand=lazy)
    assert sorted(zip(*(a.tolist() for a in got), strict=True)) == sorted(
        zip(*(a.tolist() for a in want), strict=True)
    )
    # the index's walk, from a fresh automaton (rounds again), its pairs sorted and ready to keep
    lazy = LazyByteDFA(*node_nfa(node))
    q = lazy.initial
    for b in b'{"size":':
        q = lazy.step(q, b)
    tok, end, has_text = NarrowWalk(trie, 1).row(lazy.as_byte_dfa(), q, lazy, None, None)
    assert has_text and list(zip(tok.tolist(), end.tolist(), strict=True)) == sorted(
        zip(*(a.tolist() for a in want), strict=True)
    )


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    pattern=st.sampled_from(["(ab|ac)*d", "[a-c]{2,5}x", "a(b|cd)*e?", "(abc|ab|a)+", "x[^y]{0,3}y"]),
    tokens=st.lists(st.text("abcdexy", min_size=1, max_size=5), min_size=1, max_size=40, unique=True),
    path=st.text("abcdexy", max_size=6),
)
def test_narrow_rows_on_random_vocabularies_equal_the_walk(pattern, tokens, path):
    """Whatever state a path reaches, made on demand or eager: the general walk's pairs."""
    single = [bytes([b]) for b in b"abcdexy"]
    extra = [t.encode() for t in tokens if t.encode() not in single]
    vocab = fsm.Vocabulary([*single, *extra, None], eos_token_ids=[len(single) + len(extra)])
    auto = regex_automaton(pattern)
    dfa, on_demand = (auto.as_byte_dfa(), auto) if isinstance(auto, LazyByteDFA) else (auto, None)
    q = dfa.initial
    for b in path.encode():
        q = dfa.step(q, b) if on_demand is None else on_demand.step(q, b)
        if q < 0:
            return
    trie = kernels().vocabulary_preorder(vocab)
    got = narrow_row(dfa, q, trie, on_demand, None)
    assert got is not None  # a few dozen tokens: always narrow
    want = kernels().walk_row(dfa, q, trie, on_demand=on_demand)
    pairs = sorted(zip(*(a.tolist() for a in want), strict=True))
    assert sorted(zip(*(a.tolist() for a in got), strict=True)) == pairs
    if on_demand is not None:  # an index's walk: the pairs sorted by token, EOS added when accepting
        eos = (np.array(vocab.eos_token_ids, np.int32), -2) if dfa.accepting[q] else None
        tok, end, has_text = NarrowWalk(trie, 1).row(dfa, q, on_demand, None, eos)
        ready = pairs + ([(vocab.eos_token_ids[0], -2)] if eos else [])
        assert list(zip(tok.tolist(), end.tolist(), strict=True)) == sorted(ready)
        assert has_text == bool(pairs)
