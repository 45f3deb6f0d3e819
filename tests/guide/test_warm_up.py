"""No first-use stall: after `fsm.warm_up` (which `guide.load` runs on a background thread) a first
request on a new schema builds no per-vocabulary table, and warm-up leaves no index cached."""

from __future__ import annotations

import gc
import threading

import numpy as np
import pytest

import fsm
import guide
from fsm.compiler import memory_cache_info
from fsm.vocabulary import TokenTrie, Vocabulary

# A schema warm-up has not seen, in the lexemes requests keep using.
SCHEMA = {
    "type": "object",
    "properties": {
        "title": {"type": "string", "maxLength": 40},
        "year": {"type": "integer"},
        "score": {"type": "number"},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["title", "year", "score", "tags"],
}
INSTANCE = '{"title":"The Old Man and the Sea","year":1952,"score":4.5,"tags":["novel","sea"]}'


def _serve_without_building_tables(vocab, tokenizer, monkeypatch) -> None:
    """Compile and walk SCHEMA with every per-vocabulary table builder made to fail."""

    def no_trie(tokens):
        pytest.fail("the token trie was built by a request after warm-up")

    def no_new_table(self, name, build):
        return original(
            self, name, lambda: pytest.fail(f"table {name!r} was built by a request after warm-up")
        )

    original = Vocabulary.derived
    monkeypatch.setattr(TokenTrie, "build", staticmethod(no_trie))
    monkeypatch.setattr(Vocabulary, "derived", no_new_table)
    m = fsm.compile(fsm.JsonSchema(SCHEMA), vocab, cache=False).matcher()
    words = np.zeros((vocab.size + 31) // 32, dtype=np.int32)
    m.fill_bitmask(words)
    for t in tokenizer.encode(INSTANCE, add_special_tokens=False):
        m.advance(t)
        m.fill_bitmask(words)
    assert m.is_accepting()


@pytest.fixture
def unfrozen():
    """Give the test process its heap back after a warm-up froze it."""
    yield
    gc.unfreeze()


def test_first_request_after_warm_up_builds_no_table(tokenizer, monkeypatch, unfrozen):
    vocab = fsm.Vocabulary.from_tokenizer(tokenizer)  # a vocabulary no request has used yet
    fsm.clear_memory_cache()
    assert fsm.warm_up(vocab) > 0
    assert memory_cache_info().entries == 0  # its own request's index is not kept
    _serve_without_building_tables(vocab, tokenizer, monkeypatch)


def test_warm_up_freezes_the_start_up_heap_unless_told_not_to(tokenizer, unfrozen):
    vocab = fsm.Vocabulary.from_tokenizer(tokenizer)
    gc.unfreeze()
    fsm.warm_up(vocab, freeze_gc=False)
    assert gc.get_freeze_count() == 0
    held = [[i] for i in range(1000)]  # tracked objects alive at the freeze
    fsm.warm_up(vocab)
    assert gc.get_freeze_count() >= len(held)  # a full collection will not walk them again


def test_load_warms_the_vocabulary_up_in_the_background(monkeypatch, unfrozen):
    model = guide.load()
    warming = [t for t in threading.enumerate() if t.name == "guide-warm-up"]
    for t in warming:
        t.join()
    _serve_without_building_tables(model.vocabulary, model.tokenizer, monkeypatch)


def test_first_request_after_warm_up_builds_no_format_automaton(tokenizer, monkeypatch, unfrozen):
    """The formats most schemas use and a free value's scalars are built by warm-up (once per
    process), not by the first request that has one (~5 ms for a date-time, a time or a uri)."""
    import fsm.automata.nfa as nfa
    from fsm.automata.char_dfa import CharDFAMemo

    monkeypatch.setattr(nfa, "MEMO", CharDFAMemo())  # as in a new process
    vocab = fsm.Vocabulary.from_tokenizer(tokenizer)
    fsm.warm_up(vocab)
    made = []
    real = nfa.determinize
    monkeypatch.setattr(nfa, "determinize", lambda *a, **k: made.append(1) or real(*a, **k))
    schema = {
        "type": "object",
        "properties": {"at": {"type": "string", "format": "date-time"}, "home": {"format": "uri"}, "x": {}},
    }
    m = fsm.compile(fsm.JsonSchema(schema), vocab, cache=False).matcher()
    for t in tokenizer.encode('{"at":"2024-01-02T03:04:05Z","x":[1]}', add_special_tokens=False):
        m.advance(t)
    assert m.is_accepting() and not made


def test_first_pattern_after_warm_up_builds_no_escape_automaton(tokenizer, monkeypatch, unfrozen):
    """A pattern's negated class (``[^/]``, ``[^ ]``, ``[^\\s]``) needs the JSON escapes of the
    characters it holds that JSON escapes (`escapes.escape_dfa`, ~1-2 ms each): built by warm-up,
    not by the first request with such a pattern."""
    from fsm.automata import escapes

    escapes.escape_dfa.cache_clear()  # as in a new process
    vocab = fsm.Vocabulary.from_tokenizer(tokenizer)
    fsm.warm_up(vocab)
    before = escapes.escape_dfa.cache_info().misses
    schema = {"type": "object", "properties": {"p": {"type": "string", "pattern": r"^[^/]+/[^ ]*:[^\s]+$"}}}
    m = fsm.compile(fsm.JsonSchema(schema), vocab, cache=False).matcher()
    for t in tokenizer.encode('{"p":"a/b:cd"}', add_special_tokens=False):
        m.advance(t)
    assert m.is_accepting()
    assert escapes.escape_dfa.cache_info().misses == before
