"""Rows followed down the trie along a literal (`fsm.index.literal_rows`) equal the rows a fresh trie
walk computes — same tokens, same end states, same mask — at every state valid instances of the
test corpus's schemas visit (keys, enum values, ``":"``), and the literal's end is walked on."""

from __future__ import annotations

import fsm
from fsm.index import LazyDfaIndex
from fsm.index.kernels import kernels
from fsm.testing import check_same_row, walked_index

from .schema_cases import schema_instances, visited_row_states


def test_literal_rows_equal_walked_rows(vocab, tokenizer):
    literal = checked = 0
    for _name, index, states in visited_row_states(list(schema_instances())[:120], vocab, tokenizer):
        if not isinstance(index, LazyDfaIndex):
            continue
        fresh = LazyDfaIndex(
            index.lazy, vocab, limits=index.limits, sibling_rows=False, shaped_rows=False, narrow_rows=False
        )
        walked = walked_index(index)
        trie = kernels().vocabulary_preorder(vocab)
        for q in states:
            if not index.lazy.has_guards:
                got = kernels().literal_row(index.dfa, q, trie, index.lazy, index.limits.deadline(), None)
                literal += got is not None
            check_same_row(fresh, walked, q)
            checked += 1
    assert checked > 500 and literal > 100, (checked, literal)


def test_a_literal_whose_end_is_within_a_token_walks_on(vocab):
    """``the`` then any word: tokens such as ``there`` go past the literal's end, and are walked on
    from there; the pairs are the general walk's."""
    dfa = fsm.compile(fsm.Regex("xthe[a-z]+!"), vocab, cache=False).dfa
    q = dfa.step(dfa.initial, ord("x"))
    trie = kernels().vocabulary_preorder(vocab)
    tok, end = kernels().literal_row(dfa, q, trie, None, None, None)
    spelled = {vocab.token_bytes(int(t)) for t in tok}
    assert {b"the", b"there"} <= spelled and b"t" in spelled
    want_tok, want_end = kernels().walk_row(dfa, q, trie)
    assert sorted(zip(tok.tolist(), end.tolist(), strict=True)) == sorted(
        zip(want_tok.tolist(), want_end.tolist(), strict=True)
    )
