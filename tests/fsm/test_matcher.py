"""Matcher on the real SmolLM2 vocabulary: soundness by random walks, completeness on tokenized examples."""

from __future__ import annotations

import re
import threading

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import fsm
from fsm.index import unpack_bitmask
from fsm.testing import random_walk

from .regex_cases import REGEXES

FAST = settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


@pytest.fixture(scope="module")
def indexes(vocab):
    return {name: fsm.compile(fsm.Regex(p), vocab, cache=False) for name, p in REGEXES.items()}


@pytest.mark.parametrize("name", sorted(REGEXES))
def test_random_walks_fullmatch(indexes, name):
    pattern = re.compile(REGEXES[name], re.ASCII)

    @FAST
    @given(st.integers(0, 2**32 - 1))
    def check(seed):
        walk = random_walk(indexes[name], np.random.default_rng(seed), max_tokens=120, eos_bias=None)
        text, ended = walk.data, walk.accepting
        if ended:
            assert pattern.fullmatch(text.decode("utf-8")), text
        else:  # length cap hit: what we have must still be a prefix of some match
            assert indexes[name].dfa.walk(indexes[name].dfa.initial, text) >= 0

    check()


@pytest.mark.parametrize("name", sorted(REGEXES))
def test_tokenized_examples_accepted(indexes, tokenizer, name):
    pattern = re.compile(REGEXES[name], re.ASCII)

    @FAST
    @given(st.from_regex(pattern, fullmatch=True))
    def check(s):
        ids = tokenizer.encode(s, add_special_tokens=False)
        # Bytes such as 0xF1 are no token of SmolLM2: the tokenizer silently drops them.
        assume(indexes[name].vocabulary.decode(ids) == s.encode())
        m = indexes[name].matcher()
        for t in ids:
            m.advance(t)
        assert m.is_accepting()
        assert set(indexes[name].vocabulary.eos_token_ids) <= set(m.allowed_token_ids().tolist())

    check()


@pytest.mark.parametrize("name", sorted(REGEXES))
def test_invalid_strings_rejected(indexes, tokenizer, name):
    pattern = re.compile(REGEXES[name], re.ASCII)

    @FAST
    @given(st.from_regex(pattern, fullmatch=True), st.text(min_size=1, max_size=3))
    def check(s, junk):
        bad = s + junk
        if pattern.fullmatch(bad):
            return
        ids = tokenizer.encode(bad, add_special_tokens=False)
        assume(indexes[name].vocabulary.decode(ids) == bad.encode())
        m = indexes[name].matcher()
        try:
            for t in ids:
                m.advance(t)
        except fsm.TokenRejected:
            return
        assert not m.is_accepting(), bad

    check()


def test_multibyte_split_across_byte_tokens(vocab, tokenizer):
    index = fsm.compile(fsm.Regex("café|日本語"), vocab, cache=False)
    byte_token = {}
    for i in range(vocab.n_tokens):
        b = vocab.token_bytes(i)
        if b is not None and len(b) == 1:
            byte_token.setdefault(b[0], i)
    for word in ["café", "日本語"]:
        m = index.matcher()
        for b in word.encode():  # one byte per token, splitting every character
            m.advance(byte_token[b])
        assert m.is_accepting()
        m = index.matcher()
        for t in tokenizer.encode(word, add_special_tokens=False):
            m.advance(t)
        assert m.is_accepting()
    m = index.matcher()
    m.advance(byte_token[0xE6])  # first byte of 日
    allowed = {vocab.token_bytes(t) for t in m.allowed_token_ids().tolist()}
    assert all("日本語".encode()[1:].startswith(b) for b in allowed if b)


def test_eos_exactly_when_accepting(vocab, tokenizer):
    m = fsm.compile(fsm.Regex(r"\d{2,3}"), vocab, cache=False).matcher()
    eos = vocab.eos_token_ids[0]
    assert eos not in m.allowed_token_ids()
    for t in tokenizer.encode("12", add_special_tokens=False):
        m.advance(t)
    assert m.is_accepting() and eos in m.allowed_token_ids()
    with pytest.raises(fsm.TokenRejected):
        m.advance(tokenizer.encode("a", add_special_tokens=False)[0])
    m.advance(eos)
    assert m.is_finished()


def test_fill_bitmask_matches_allowed(vocab):
    m = fsm.compile(fsm.Regex(r"[a-c]+x?"), vocab, cache=False).matcher()
    words = np.zeros((vocab.size + 31) // 32, dtype=np.int32)
    m.fill_bitmask(words)
    assert unpack_bitmask(words, vocab.size).tolist() == m.allowed_token_ids().tolist()


def test_is_allowed_is_the_mask_bit(vocab, tokenizer):
    """`is_allowed` answers from the packed mask: the same as `allowed_token_ids` for every token,
    inside a counted string (a moved row's arrays are made only when read), after EOS, and out of range."""
    schema = {"type": "object", "properties": {"s": {"type": "string", "maxLength": 300}}, "required": ["s"]}
    m = fsm.compile(fsm.JsonSchema(schema), vocab, cache=False).matcher()
    for text in ('{"s":"', "abc def", "ghi", '"}'):
        for t in tokenizer.encode(text, add_special_tokens=False):
            m.advance(t)
        allowed = np.zeros(vocab.size, bool)
        allowed[m.allowed_token_ids()] = True
        assert [m.is_allowed(t) for t in range(vocab.size)] == allowed.tolist()
    m.advance(vocab.eos_token_ids[0])
    assert m.is_allowed(vocab.eos_token_ids[0]) and not m.is_allowed(0)
    assert not m.is_allowed(-1) and not m.is_allowed(vocab.size)


def test_forced_tokens_and_bytes(vocab, tokenizer):
    m = fsm.compile(fsm.Regex(r'\{"name":"[a-z]+"\}'), vocab, cache=False).matcher()
    assert m.forced_bytes() == b'{"name":"'
    forced = m.forced_tokens()
    assert vocab.decode(forced) == b'{"name":"'
    for t in forced:
        m.advance(t)
    assert m.forced_bytes() == b""
    m.advance(tokenizer.encode("abc", add_special_tokens=False)[0])
    assert m.forced_bytes() == b""  # more letters or the closing quote


def test_is_finished_without_eos(vocab, tokenizer):
    m = fsm.compile(fsm.Regex(r"(yes|no)"), vocab, cache=False).matcher()
    for t in tokenizer.encode("yes", add_special_tokens=False):
        m.advance(t)
    assert m.is_accepting() and m.is_finished()
    assert m.allowed_token_ids().tolist() == list(vocab.eos_token_ids)


def test_copy_and_rollback(vocab, tokenizer):
    m = fsm.compile(fsm.Regex(r"[a-z ]{0,40}"), vocab, cache=False).matcher()
    ids = tokenizer.encode("hello there world", add_special_tokens=False)
    start = m.allowed_token_ids().copy()
    for t in ids:
        m.advance(t)
    c = m.copy()
    m.rollback(len(ids))
    assert m.allowed_token_ids().tolist() == start.tolist()
    assert c.n_consumed == len(ids)
    with pytest.raises(ValueError):
        m.rollback(1)
    c.rollback(1)
    c.advance(ids[-1])
    assert c.is_accepting()


def test_index_shared_across_threads(vocab, tokenizer):
    index = fsm.compile(fsm.Regex(r"[a-z]{1,8}( [a-z]{1,8}){0,6}"), vocab, cache=False)
    texts = ["hello world", "the quick brown fox", "a b c d e", "jumps over the lazy dog"]
    expected = {}
    serial = fsm.compile(
        fsm.Regex(r"[a-z]{1,8}( [a-z]{1,8}){0,6}"), vocab, cache=False, limits=fsm.Limits(max_states=999_999)
    )
    for text in texts:
        m = serial.matcher()
        seq = []
        for t in tokenizer.encode(text, add_special_tokens=False):
            seq.append(m.allowed_token_ids().tolist())
            m.advance(t)
        expected[text] = seq
    errors = []

    def work(k):
        try:
            for _ in range(3):
                text = texts[k % len(texts)]
                m = index.matcher()
                for j, t in enumerate(tokenizer.encode(text, add_special_tokens=False)):
                    assert m.allowed_token_ids().tolist() == expected[text][j]
                    m.advance(t)
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == []
