"""Rows along a fixed-length run of one class cut from the vocabulary's table (`fsm.index.chain_rows`):
each one's tokens, end states, mask and ``next_state`` against the reference walk
(`fsm.index.walk_tokens`), on the real vocabulary and, by hypothesis, on random ones."""

from __future__ import annotations

import json

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fsm
from fsm.automata import LazyByteDFA, node_nfa
from fsm.index import LazyDfaIndex, walk_tokens
from fsm.index.bitmask import unpack_bitmask
from fsm.index.chain_rows import ChainRow


def _check_chain_rows(index, vocab, text: str) -> int:
    """Walk ``text``; every `ChainRow` met equals the reference walk. Returns how many were met."""
    met = 0
    q = index.dfa.initial
    for b in text.encode():
        row = index.row(q)
        if isinstance(row, ChainRow):
            met += 1
            _, tok, end = walk_tokens(index.dfa, np.array([q]), vocab.trie)
            want = dict(zip(tok.tolist(), end.tolist(), strict=True))
            got = dict(zip(row.tokens.tolist(), row.next_states.tolist(), strict=True))
            assert sorted(got) == sorted(want), (q, sorted(set(got) ^ set(want))[:10])
            sets = index.lazy.state_set
            assert all(got[t] == want[t] or sets(got[t]) == sets(want[t]) for t in want), q
            assert all(row.next_state(t) == got[t] for t in got)
            absent = [t for t in range(vocab.size) if t not in got][:500]
            assert all(row.next_state(t) is None for t in absent)
            allowed = unpack_bitmask(row.packed, vocab.size)
            assert allowed.tolist() == sorted(got)
        q = index.dfa.step(q, b)
        assert q >= 0
    return met


def test_fixed_length_strings_rows_are_cut_from_the_table_like_the_walk(vocab):
    """Printable ASCII (its escapes ``\\"`` and ``\\\\`` leave the class and are walked), hex digits
    with an unanchored pattern, a class with no escapes: every position is a chain row."""
    schema = {
        "type": "object",
        "properties": {
            "id": {"type": "string", "pattern": "^[ -}]+$", "minLength": 30, "maxLength": 30},
            "hex": {"type": "string", "pattern": "[0-9a-fA-F]+", "minLength": 12, "maxLength": 12},
            "any": {"type": "string", "pattern": "^[ -~]+$", "minLength": 20, "maxLength": 20},
        },
        "required": ["id", "hex", "any"],
    }
    index = fsm.compile(fsm.JsonSchema(schema), vocab, cache=False)
    text = '{"id":"abcdefghijklmnopqrstuvwxyz0123","hex":"zzzz00001111","any":"a\\"b\\\\cdefghijklmnopqr"}'
    assert json.loads(text)
    assert _check_chain_rows(index, vocab, text) >= 40
    # the same index with every row walked agrees on every state those rows reach
    walked = fsm.compile(fsm.JsonSchema(schema), vocab, cache=False)
    walked.chain_rows = False
    assert _check_chain_rows(walked, vocab, text) == 0


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    inside=st.lists(st.text("ab01z", min_size=4, max_size=9), min_size=1, max_size=30, unique=True),
    mixed=st.lists(st.text('ab01"\\-', min_size=2, max_size=6), max_size=30, unique=True),
    n=st.integers(6, 12),
    body=st.text("ab01z", min_size=12, max_size=12),
    pattern=st.sampled_from(["^[a-z0-9]+$", "^[ -~]+$", "[0-9]", '^[^"]+$']),
)
def test_chain_rows_on_random_vocabularies_equal_the_walk(inside, mixed, n, body, pattern):
    """Random tokens of the class (a chain is as long as tokens reach: `trie_kernel.expand_chain`),
    and with quotes, escapes and bytes outside it; the lazy index is built directly (a small
    vocabulary's schema would get the eager one)."""
    single = [bytes([b]) for b in range(0x20, 0x7F)]
    tokens = single + [t.encode() for t in dict.fromkeys(inside + mixed) if t.encode() not in single]
    vocab = fsm.Vocabulary([*tokens, None], eos_token_ids=[len(tokens)])
    schema = {"type": "string", "pattern": pattern, "minLength": n, "maxLength": n}
    value = "1" + body[1:n]  # valid for each pattern
    node, _ = fsm.JsonSchema(schema).translation()
    # (a small vocabulary's rows are narrow: walked as such, no chain looked for)
    index = LazyDfaIndex(LazyByteDFA(*node_nfa(node)), vocab, narrow_rows=False)
    assert _check_chain_rows(index, vocab, json.dumps(value)) >= 1
