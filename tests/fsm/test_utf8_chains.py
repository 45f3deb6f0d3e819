"""States inside a UTF-8 character (`fsm.automata.utf8_chains`): a lead byte's target is made
without its set, which is made (with its chain states) only when something reads it; the language
is the same, whichever byte a token ends at."""

from __future__ import annotations

import json
import random

import pytest

import fsm
from fsm.testing import accepts

from .json_helpers import validator

BYTES = fsm.Vocabulary([bytes([i]) for i in range(256)] + [None], eos_token_ids=[256])
# ECMA and Python agree on these spaces (not on U+0085 or U+001C..U+001F)
PIECES = ["a", "b", " ", "\u3000", "\u00a0", "\u2028", "é", "—", "漢", "😀", '"', "\\", "\t"]


def _schema(words: int, **more) -> dict:
    pattern = f"^(?:\\S+\\s+){{0,{words}}}\\S+$"
    s = {"type": "string", "pattern": pattern, **more}
    return {"type": "object", "properties": {"s": s}, "required": ["s"]}


def test_word_counts_over_multibyte_text_keep_the_language():
    schema = _schema(3)
    check = validator(schema)
    rng = random.Random(7)
    for vocab in (BYTES, None):  # every token one byte: each ends inside a character
        index = fsm.compile(fsm.JsonSchema(schema, exact=True), vocab or _smol(), cache=False)
        for _ in range(150):
            text = "".join(rng.choice(PIECES) for _ in range(rng.randint(1, 12)))
            doc = json.dumps({"s": text}, ensure_ascii=False, separators=(",", ":"))
            assert accepts(index, doc) == check.is_valid({"s": text}), doc


def test_states_inside_characters_are_made_when_read(vocab):
    """A walk of a long string makes a target for each lead byte range of every state it expands
    (a dozen for ``\\S``, whose Unicode spaces split them), nearly none of them read: made with
    their sets, they took two chain states each and most of the automaton's memory (a counted
    string's every count leads to chain states of its own)."""
    index = fsm.compile(fsm.JsonSchema(_schema(60, maxLength=400), exact=True), vocab, cache=False)
    words = " ".join(f"w{i}ord —é" for i in range(25))
    assert accepts(index, json.dumps({"s": words}, ensure_ascii=False, separators=(",", ":")))
    assert not accepts(index, json.dumps({"s": words + " x" * 40}, ensure_ascii=False, separators=(",", ":")))
    lazy = index.lazy
    unread = sum(lazy.lead_of(d) is not None for d in range(lazy.n_states))
    assert unread > lazy.n_states / 2
    made = lazy.n_chain_states
    for d in range(lazy.n_states):  # what making every set up front made
        lazy.state_set(d)
    assert lazy.n_chain_states > 3 * made, (made, lazy.n_chain_states)


def test_max_states_counts_the_states_whose_sets_are_made(vocab):
    """A state inside a character not read yet is a placeholder (its memory is counted): the same
    walk fits a state cap below the number of ids it hands out, but not one below its sets."""
    words = json.dumps(
        {"s": " ".join(f"w{i}ord —é" for i in range(25))}, ensure_ascii=False, separators=(",", ":")
    )
    spec = fsm.JsonSchema(_schema(60, maxLength=400), exact=True)
    index = fsm.compile(spec, vocab, cache=False)
    assert accepts(index, words)
    lazy = index.lazy
    made = sum(lazy.lead_of(d) is None for d in range(lazy.n_states))
    assert made < lazy.n_states / 3
    roomy = fsm.compile(spec, vocab, limits=fsm.Limits(max_states=2 * made), cache=False)
    assert accepts(roomy, words) and roomy.lazy.n_states > 2 * made
    tight = fsm.compile(spec, vocab, limits=fsm.Limits(max_states=made // 2), cache=False)
    with pytest.raises(fsm.SpecTooComplex, match="max_states"):
        accepts(tight, words)


def test_word_count_walks_fit_a_budget_their_sets_and_rows_did_not(vocab, tokenizer):
    """Strings of word-count patterns (a counted one in an array among them) read by long instances:
    with every lead byte's target made with its set and a table row, these walks were charged
    168 MB; now ~32 MB."""
    words = {"type": "string", "maxLength": 300, "pattern": "^(?:\\S+\\s+){0,29}\\S+$"}
    schema = {
        "type": "object",
        "properties": {
            "items": {"type": "array", "items": words, "maxItems": 5},
            "text": {"type": "string", "pattern": "^(?:\\S+\\s+){0,99}\\S+$"},
        },
        "required": ["items", "text"],
        "additionalProperties": False,
    }
    limits = fsm.Limits(max_memory=64 << 20, max_seconds=120)
    index = fsm.compile(fsm.JsonSchema(schema, exact=True), vocab, limits=limits, cache=False)
    check = validator(schema)
    long = " ".join(f"word{i} é—x" for i in range(12))
    docs = [
        {"items": [long, "a b c"], "text": long * 2},
        {"items": [long + " z" * 20], "text": "x"},  # 32 words: over the items' 30
        {"items": ["a"], "text": long * 4},
    ]
    for doc in docs:
        text = json.dumps(doc, ensure_ascii=False, separators=(",", ":"))
        assert accepts(index, text, tokenizer) == check.is_valid(doc)


_VOCAB: list = []


def _smol() -> fsm.Vocabulary:
    if not _VOCAB:
        from transformers import AutoTokenizer

        from guide.default_model import default_model_dir

        _VOCAB.append(fsm.Vocabulary.from_tokenizer(AutoTokenizer.from_pretrained(default_model_dir())))
    return _VOCAB[0]


def test_ascii_edges_are_their_own_byte_edges():
    """Character edges all below 0x80 read as bytes as they are (the tuple itself, no copy); one
    edge past ASCII splits into its ASCII part and lead byte ranges."""
    from fsm.automata.utf8_chains import LEAD, Utf8Chains

    ascii_edges = ((0x30, 0x39, 4), (0x41, 0x5A, 5))
    assert Utf8Chains.byte_edges(ascii_edges) is ascii_edges
    assert Utf8Chains.byte_edges(list(ascii_edges)) == ascii_edges
    mixed = Utf8Chains.byte_edges([(0x30, 0x39, 4), (0x61, 0xE9, 1)])
    assert mixed[:2] == ((0x30, 0x39, 4), (0x61, 0x7F, 1))
    assert [(lo, hi) for lo, hi, t in mixed[2:] if t == LEAD] == [(0xC2, 0xC2), (0xC3, 0xC3)]


def test_lead_byte_targets_are_consecutive_states_made_without_sets():
    """A state's lead bytes come last in its row (from C2): their targets are made together, one
    state each, consecutive, with no set until read; read, each is the set its lead byte gives."""
    from fsm.automata import LazyByteDFA, cls, lit, node_nfa, rep, seq

    lazy = LazyByteDFA(*node_nfa(seq(lit('"'), rep(cls((0x20, 0x21), (0x23, 0x10FFFF)), 0, None), lit('"'))))
    s = lazy.step(lazy.initial, ord('"'))
    before = lazy.n_states
    lazy.ensure(s)
    targets = sorted({lazy.step(s, b) for b in range(0xC2, 0xF5)})
    assert targets == list(range(targets[0], targets[0] + len(targets))) and len(targets) == 8
    assert targets[0] >= before and all(lazy.lead_of(t)[0] == s for t in targets)
    dfa = lazy.as_byte_dfa()
    for text in ("é", "漢", "😀", "a—b"):
        assert dfa.accepts(f'"{text}"'.encode()), text
