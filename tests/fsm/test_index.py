"""Token index rows against a brute-force oracle; lazy == eager; token-level liveness pruning."""

from __future__ import annotations

import gc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fsm
from fsm.index import FINISHED, RegexIndex, pack_bitmask, unpack_bitmask, walk_tokens
from fsm.regex import regex_to_dfa

ALPHABET = [b"a", b"b", b"c", b"-", "é".encode(), "日".encode(), b"\xc3", b"\xa9"]


def brute_force_row(dfa, vocab, state):
    toks, nxt = [], []
    for i in range(vocab.n_tokens):
        b = vocab.token_bytes(i)
        if not b:
            continue
        s = dfa.walk(state, b)
        if s >= 0:
            toks.append(i)
            nxt.append(s)
    if dfa.accepting[state]:
        toks += list(vocab.eos_token_ids)
        nxt += [FINISHED] * len(vocab.eos_token_ids)
    order = np.argsort(toks, kind="stable")
    return np.array(toks)[order].tolist(), np.array(nxt)[order].tolist()


small_vocab = st.lists(
    st.lists(st.sampled_from(ALPHABET), min_size=1, max_size=4).map(b"".join), min_size=3, max_size=40
).map(
    lambda toks: fsm.Vocabulary(
        list(ALPHABET) + toks + [None, b""], eos_token_ids=[len(ALPHABET) + len(toks)]
    )
)

PATTERNS = [r"a+b?", r"(ab|c)*-", r"(café|日)+", r"[abc]{2,4}", r"a[^b]c", r"-?(a|b)*c{0,2}"]


def brute_force_index(dfa, vocab):
    """All rows by trying every token, then the token-level liveness fixed point; None if nothing lives."""
    rows = {s: brute_force_row(dfa, vocab, s) for s in range(dfa.n_states)}
    alive = {s: True for s in rows}
    changed = True
    while changed:
        changed = False
        for s, (_toks, nxt) in rows.items():
            if alive[s] and not any(n == FINISHED or alive[n] for n in nxt):
                alive[s] = False
                changed = True
    if not alive[dfa.initial]:
        return None
    return {
        s: (
            [t for t, n in zip(toks, nxt, strict=True) if n == FINISHED or alive[n]],
            [n for n in nxt if n == FINISHED or alive[n]],
        )
        for s, (toks, nxt) in rows.items()
        if alive[s]
    }


@settings(max_examples=40, deadline=None)
@given(small_vocab, st.sampled_from(PATTERNS))
def test_rows_match_brute_force_oracle(vocab, pattern):
    dfa = regex_to_dfa(pattern)
    oracle = brute_force_index(dfa, vocab)
    if oracle is None:
        with pytest.raises(fsm.SpecError):
            RegexIndex(dfa, vocab)
        return
    lazy = RegexIndex(dfa, vocab)
    eager = RegexIndex(dfa, vocab).build_all()
    # Compare every state a matcher can reach (breadth-first over the oracle's own transitions).
    seen, todo = {dfa.initial}, [dfa.initial]
    while todo:
        s = todo.pop()
        toks, nxt = oracle[s]
        for index in (lazy, eager):
            row = index.row(s)
            assert row.tokens.tolist() == toks, (s, pattern)
            assert row.next_states.tolist() == nxt
            assert unpack_bitmask(index.bitmask(s), vocab.size).tolist() == toks
        for n in nxt:
            if n != FINISHED and n not in seen:
                seen.add(n)
                todo.append(n)


def test_walk_tokens_many_states_at_once(vocab):
    dfa = regex_to_dfa(r"[a-z]{1,5}( [a-z]{1,5})*")
    states = np.arange(dfa.n_states)
    src, tok, _end = walk_tokens(dfa, states, vocab.trie)
    for s in range(dfa.n_states):
        single = walk_tokens(dfa, np.array([s]), vocab.trie)
        assert sorted(tok[src == s].tolist()) == sorted(single[1].tolist())


def test_bitmask_packing_roundtrip():
    rng = np.random.default_rng(1)
    for size in (1, 31, 32, 33, 49152, 49155):
        ids = np.unique(rng.integers(0, size, size=min(size, 50)))
        words = pack_bitmask(ids, size)
        assert words.dtype == np.int32 and len(words) == (size + 31) // 32
        assert unpack_bitmask(words, size).tolist() == ids.tolist()


def test_token_dead_states_are_pruned():
    # byte "x" alone is no token: after "a" the only way on is "xy", so "ax" must never be offered.
    v = fsm.Vocabulary([b"a", b"ax", b"xy", None], eos_token_ids=[3])
    index = RegexIndex(regex_to_dfa(r"a(xy|xz)"), v)
    m = index.matcher()
    assert m.allowed_token_ids().tolist() == [0]  # "ax" would need "y" or "z" alone: pruned
    m.advance(0)
    assert m.allowed_token_ids().tolist() == [2]
    m.advance(2)
    assert m.is_accepting()


def test_unreachable_language_raises():
    v = fsm.Vocabulary([b"a", b"b", None], eos_token_ids=[2])
    with pytest.raises(fsm.SpecError, match="no sequence of this vocabulary"):
        RegexIndex(regex_to_dfa(r"ac"), v)


def test_every_reachable_state_has_an_allowed_token(vocab):
    index = fsm.compile(fsm.Regex(r"[a-z]{3,8}@[a-z]{2,5}\.(com|org)"), vocab, cache=False).build_all()
    for s, row in index.computed_rows().items():
        assert len(row.tokens) > 0, s


def test_padded_vocabulary_ids_never_allowed(tokenizer):
    v = fsm.Vocabulary.from_tokenizer(tokenizer, size=len(tokenizer) + 100)
    m = fsm.compile(fsm.Regex(r".{1,3}"), v, cache=False).matcher()
    words = np.zeros((v.size + 31) // 32, dtype=np.int32)
    m.fill_bitmask(words)
    assert unpack_bitmask(words, v.size).max() < len(tokenizer)


def test_index_memory_budget(vocab):
    with pytest.raises(fsm.SpecTooComplex) as info:
        fsm.compile(
            fsm.Regex(r"[^\n]{0,40}"), vocab, limits=fsm.Limits(max_index_bytes=100_000), cache=False
        ).build_all()
    assert info.value.budget == "max_index_bytes"


def _tracked() -> int:
    """Objects the garbage collector tracks, after a collection."""
    gc.collect()
    return len(gc.get_objects())


@pytest.mark.parametrize(
    "spec, instance",
    [
        (fsm.Regex("(" + "|".join(f"{i:03d}-{i * 7919 % 1000:03d}" for i in range(600)) + ")"), None),
        (
            fsm.JsonSchema(
                {
                    "type": "object",
                    "properties": {
                        f"field_{i}": {"enum": [f"v{i}_{j}" for j in range(8)]} for i in range(40)
                    },
                    "required": [f"field_{i}" for i in range(40)],
                    "additionalProperties": False,
                }
            ),
            "{" + ",".join(f'"field_{i}":"v{i}_{i % 8}"' for i in range(40)) + "}",
        ),
    ],
    ids=["regex-build-all", "json-walk"],
)
def test_rows_stay_out_of_the_garbage_collectors_view(vocab, tokenizer, spec, instance):
    """A served process keeps the rows of every index it caches, and every object the garbage
    collector tracks is walked by each full collection for the process's life (a row object and
    its mask slot per row: most of what those collections walked). An index's rows and its lazy
    automaton's tables are tuples and dicts of arrays: the tracked objects do not grow with them."""
    fsm.warm_up(vocab, freeze_gc=False)  # the process's first request builds shared tables
    index = fsm.compile(spec, vocab, cache=False)  # the schema's own objects: not counted
    before = _tracked()
    if instance is None:
        index.build_all()
    else:
        m = index.matcher()
        words = np.zeros((vocab.size + 31) // 32, dtype=np.int32)
        for t in tokenizer.encode(instance, add_special_tokens=False):
            m.fill_bitmask(words)
            m.advance(t)
        del m
    grown = _tracked() - before
    assert index.n_rows >= 40
    assert grown < index.n_rows / 4, (grown, index.n_rows)
