"""Byte classes of the lazy DFA (`fsm.automata.byte_classes`): a column per class of bytes its
edges tell apart, not per byte, so the states a token walk makes and never expands cost a fraction
of a 256-column row; the classes hold every edge a block makes later (a length block's escapes
included), and the language is the same.
"""

from __future__ import annotations

import json
import random

import fsm
from fsm.automata import LazyByteDFA, alt, cls, lit, node_nfa, node_to_char_dfa, rep, seq
from fsm.testing import accepts, tokens_of

from .json_helpers import validator

VOCAB = fsm.Vocabulary(
    [bytes([i]) for i in range(256)] + ["é".encode(), "aé".encode(), b"ab", None], eos_token_ids=[259]
)


def test_a_long_string_walk_fits_a_memory_budget():
    """Each count of a ``maxLength`` string is a state of its own. Walking every count's row made
    the states of every token from each (~24,000, few expanded): with 256 columns their rows alone
    took 33 MB (the budget tripped at 32 MB), with a column per byte class ~21 MB. The rows inside
    such a string are now moved lazily from their class's first row (`fsm.index.moved_row`) and
    make a state only where the text goes: ~2,500 states, under 2 MB."""
    schema = {
        "type": "object",
        "properties": {"name": {"type": "string", "maxLength": 5000}, "id": {"type": "integer"}},
        "required": ["name"],
    }
    limits = fsm.Limits(max_memory=32 << 20)
    index = fsm.compile(fsm.JsonSchema(schema), VOCAB, limits=limits, cache=False)
    assert accepts(index, '{"name":"' + "aé" * 2400 + '","id":12}')
    lazy = index.lazy
    assert lazy.n_states < 5_000 and lazy.budget.nbytes < 4 << 20
    assert lazy.n_classes < 64 and lazy.table_buffer.shape[1] == lazy.n_classes


def test_classes_keep_the_language_of_multibyte_ranges():
    tree = alt(
        seq(lit("k"), rep(cls((0x61, 0x7A), (0xE9, 0xE9), (0x4E00, 0x4E2F)), 1, 3)),
        seq(cls((0x80, 0x7FF), (0x10000, 0x10FFFF)), lit("!")),
        lit("\U0001f600z"),
    )
    lazy = LazyByteDFA(*node_nfa(tree))
    d, plain = lazy.as_byte_dfa(), node_to_char_dfa(tree)
    pool = ["k", "a", "z", "é", "丁", "丰", "\x80", "߿", "ࠀ", "\U00010000", "\U0010ffff", "\U0001f600", "!"]
    rng = random.Random(1)
    for _ in range(3000):
        text = "".join(rng.choice(pool) for _ in range(rng.randint(1, 4)))
        assert d.accepts(text.encode()) == plain.accepts(text), repr(text)
    assert lazy.n_classes < 40


def test_a_length_block_with_escapes_splits_no_class():
    """A pattern with ``maxLength`` is a length block whose edges are cut at the characters JSON
    must escape (a quote, a backslash, controls): each falls in classes of its own."""
    schema = {"type": "string", "pattern": '^[a-z"\\\\é\\n]+$', "maxLength": 40}
    index = fsm.compile(fsm.JsonSchema(schema), VOCAB, cache=False)
    check = validator(schema, formats=False)
    rng = random.Random(2)
    for _ in range(300):
        s = "".join(rng.choice('ab"\\é\nZ') for _ in range(rng.randint(0, 44)))
        assert accepts(index, json.dumps(s, ensure_ascii=False)) == check.is_valid(s), repr(s)


def test_rows_are_kept_for_expanded_states_only():
    """A long string's walk makes the end state of every token, and a lead byte's target per state
    it expands; few are expanded, and only those get a table row (`LazyByteDFA.row_index`). The
    rows read through the `ByteDFA` view are the same. (Each row's arrays read here: a moved row
    makes its end states only then.)"""
    schema = {"type": "string", "maxLength": 3000}
    index = fsm.compile(fsm.JsonSchema(schema), VOCAB, cache=False)
    m = index.matcher()
    for t in tokens_of(index, json.dumps("aé" * 700 + "ab" * 100, ensure_ascii=False)):
        _ = index.row(m.state).next_states
        m.advance(t)
    assert m.is_accepting()
    lazy = index.lazy
    expanded = int(lazy.expanded_flags[: lazy.n_states].sum())
    assert lazy.n_states > 2000 and expanded < lazy.n_states / 2
    assert len(lazy.table_buffer) <= max(64, 1.5 * expanded + 1)
    view = lazy.as_byte_dfa()
    for d in range(0, lazy.n_states, 97):
        for b in (0x61, 0xC3, 0xA9, 0x22):
            assert view.step(d, b) == lazy.step(d, b)
    assert (lazy.row_index[: lazy.n_states] >= 0).sum() == int(lazy.expanded_flags[: lazy.n_states].sum())


def test_single_names_the_class_of_a_byte_alone_in_it():
    """`ClassCuts.single`: a literal's byte (a class of its own) maps to its class, a byte sharing
    its class with others (a digit of ``[0-9]``) to -1, so a literal's one cell never writes a
    class wider than its byte."""
    from fsm.automata.byte_classes import ClassCuts

    cuts = ClassCuts.of_edges(node_nfa(alt(lit("k"), cls((48, 57))))[0])
    assert cuts.single[ord("k")] == int(cuts.byte_class[ord("k")])
    assert cuts.single[ord("5")] == -1
    assert all(c == -1 or list(cuts.byte_class).count(c) == 1 for c in cuts.single)
