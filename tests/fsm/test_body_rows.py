"""Rows made from a string body's shape (`fsm.index.body_rows`) equal the rows a fresh trie walk
computes — same tokens, same end states (or, inside a UTF-8 character, states of the same NFA set:
`fsm.testing.check_same_row`), same packed mask — at every step of random walks over many schemas,
and a shape walked for one schema serves another."""

from __future__ import annotations

import json
import random
import subprocess
import sys

import numpy as np
import pytest

import fsm
from fsm.index import LazyDfaIndex, body_rows
from fsm.index.bitmask import pack_bitmask
from fsm.index.body_rows import body_of
from fsm.testing import check_same_row, walked_index

SCHEMAS = [
    {"type": "string"},
    {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}}, "required": ["a"]},
    {"type": "array", "items": {"type": "string"}, "maxItems": 5},
    {"type": "object", "additionalProperties": {"type": "string"}},
    {"type": "string", "pattern": "^[a-zA-Z0-9 _-]*$"},
    {"type": "string", "format": "email"},
    {
        "type": "array",
        "items": {"anyOf": [{"type": "string", "maxLength": 40}, {"type": "number"}, {"type": "string"}]},
    },
    {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string", "minLength": 2}}]},
    {
        "type": "object",
        "properties": {"k": {"enum": ["x", "yz"]}, "v": {"type": "string"}},
        "required": ["k", "v"],
    },
    # recursive: rule calls, a string's states are (NFA state, stack) configurations
    {
        "type": "object",
        "properties": {
            "n": {"type": "string"},
            "m": {"type": "string"},
            "kids": {"type": "array", "items": {"$ref": "#"}},
        },
    },
    # any value (`{}`): its strings are inside a pushdown block (virtual NFA states)
    {"type": "array", "items": {}},
    {"type": "object", "properties": {"a": {}, "b": {"type": "string"}}, "additionalProperties": True},
]


def _same(shaped: LazyDfaIndex, walked: LazyDfaIndex, state: int, size: int) -> bool:
    # a row made from its anchor's keeps the anchor's ends inside a character (`sibling_rows`):
    # states of the same set, what check_same_row accepts
    check_same_row(shaped, walked, state)
    assert np.array_equal(shaped.bitmask(state), pack_bitmask(walked.row(state).tokens, size))
    return type(shaped.row(state)).__name__ == "ShapedRow"


@pytest.mark.parametrize("exact", [False, True])
@pytest.mark.parametrize("schema", SCHEMAS, ids=[json.dumps(s)[:50] for s in SCHEMAS])
def test_shaped_rows_equal_walked_rows(schema, exact, vocab):
    index = fsm.compile(fsm.JsonSchema(schema, exact=exact), vocab, cache=False)
    assert isinstance(index, LazyDfaIndex)
    # all read one automaton, so their end states are comparable ids
    walked = walked_index(index)
    n_shaped = 0
    # two shaped indexes along the same walks: a shape is walked on its second sighting
    for shaped in (LazyDfaIndex(index.lazy, vocab, limits=index.limits) for _ in range(2)):
        n_shaped += _walks(shaped, walked, random.Random(json.dumps(schema) + str(exact)), vocab.size)
    assert n_shaped > 0, "no row came from a shape: the test would not test it"


def _walks(shaped: LazyDfaIndex, walked: LazyDfaIndex, rng: random.Random, size: int) -> int:
    """Random walks on ``shaped``, every row compared with ``walked``'s; the shaped rows met."""
    n_shaped = 0
    for _ in range(6):
        m = shaped.matcher()
        for _ in range(40):
            n_shaped += _same(shaped, walked, m.state, size)
            allowed = m.allowed_token_ids()
            t = int(rng.choice(allowed))
            got, want = shaped.row(m.state).next_state(t), walked.row(m.state).next_state(t)
            assert got == want or (
                min(got, want) >= 0 and shaped.lazy.state_set(got) == shaped.lazy.state_set(want)
            )
            m.advance(t)
            if m.is_finished():
                break
    return n_shaped


def test_a_shape_is_shared_by_schemas_and_states(vocab, tokenizer):
    first = fsm.compile(
        fsm.JsonSchema({"type": "object", "properties": {"a": {"type": "string"}}}), vocab, cache=False
    )
    other = fsm.compile(fsm.JsonSchema({"type": "array", "items": {"type": "string"}}), vocab, cache=False)
    # non-ASCII enum values cut the lead and continuation bytes into other byte classes: the body's
    # search looks once per class, and its states are still numbered as byte by byte
    split = fsm.compile(
        fsm.JsonSchema(
            {"type": "array", "items": {"anyOf": [{"enum": ["é", "€x", "😀"]}, {"type": "string"}]}}
        ),
        vocab,
        cache=False,
    )
    assert len(set(split.dfa.byte_class.tolist())) != len(set(other.dfa.byte_class.tolist()))
    keys = []
    for index, text in ((first, '{"a":"x'), (other, '["x'), (split, '["xy')):
        m = index.matcher()
        for t in tokenizer.encode(text, add_special_tokens=False):
            m.advance(t)
        _states, shape = body_of(index.dfa, m.state, index.lazy)
        keys.append(shape.tobytes())
        assert index.row(m.state).next_state(tokenizer.encode("y", add_special_tokens=False)[0]) == m.state
    assert keys[0] == keys[1] == keys[2]  # what follows the closing quote differs; the inside does not


def test_no_shape_for_narrow_states(vocab):
    index = fsm.compile(
        fsm.JsonSchema({"type": "object", "properties": {"abc": {"type": "integer"}}}), vocab, cache=False
    )
    assert body_of(index.dfa, index.lazy.initial, index.lazy) is None
    rejected = index.row(index.lazy.initial).next_state(vocab.size - 1)
    assert rejected is None


def test_a_row_left_by_many_tokens_answers_each_token(vocab, tokenizer, monkeypatch):
    """The loop of a word-count pattern's ``\\S+`` is left by every token holding a space (tens of
    thousands): those are searched in the row's array, not kept in a dict per row (400 MB over one
    schema's instances); each token still leads where the dense row says. (Such a shape is walked
    by default, `MAX_BELOW_SHARE`; allowed here, to test the rows it would make.)"""
    monkeypatch.setattr(body_rows, "MAX_BELOW_SHARE", 1)
    schema = {"type": "string", "pattern": "^(?:\\S+\\s+){0,20}\\S+$"}  # not a counter block
    index = fsm.compile(fsm.JsonSchema(schema), vocab, cache=False)
    m = index.matcher()
    for t in tokenizer.encode('"one two', add_special_tokens=False):
        m.advance(t)
    row = index.row(m.state)
    assert len(row.x_tok) > 1024
    tokens, ends = row.tokens, row.next_states
    for i in range(0, len(tokens), 7):
        assert row.next_state(int(tokens[i])) == int(ends[i])
    allowed = np.zeros(vocab.size, dtype=bool)
    allowed[tokens] = True
    assert all(row.next_state(t) is None for t in np.flatnonzero(~allowed)[:200].tolist())


def test_strings_inside_any_value_are_shaped(vocab, tokenizer):
    """A string inside a `{}` value (a pushdown block's virtual states, with the bracket stack in the
    state) loops like any string body: its rows come from the shape, equal to a walk's, at each depth."""
    index = fsm.compile(fsm.JsonSchema({"type": "object", "properties": {"a": {}}}), vocab, cache=False)
    walked = walked_index(index)
    shaped = 0
    for _ in range(2):  # a shape is walked on its second sighting
        index = LazyDfaIndex(index.lazy, vocab, limits=index.limits)
        for text in ('{"a":"x', '{"a":["x', '{"a":{"k":[{"j":"x', '{"a":{"k', '{"a":{"k":"y\\n'):
            m = index.matcher()
            for t in tokenizer.encode(text, add_special_tokens=False):
                m.advance(t)
            shaped += _same(index, walked, m.state, vocab.size)
    assert shaped >= 5


def _row_as_walked(index: LazyDfaIndex, walked: LazyDfaIndex, tokenizer, vocab, text: str):
    """(state, row, whether its body came from a twin) after ``text``, the row checked against a
    walk's: its tokens and mask, and the end of each token that stops inside a 2-, 3- or 4-byte
    character (byte-level BPE spells those bytes alone) — a state made later from a twin's path
    (so the twin is told before: the check names them), or one of the same NFA set."""
    m = index.matcher()
    for t in tokenizer.encode(text, add_special_tokens=False):
        m.advance(t)
    row = index.row(m.state)
    twin = _from_twin(row)
    for t in (vocab.tokens.index(bytes([b])) for b in (0xC3, 0xE2, 0xF0)):
        got, want = row.next_state(t), walked.row(m.state).next_state(t)
        assert got == want or index.lazy.state_set(got) == index.lazy.state_set(want)
    check_same_row(index, walked, m.state)
    return m.state, row, twin


def _from_twin(row) -> bool:
    """Whether ``row`` is a shape's whose body came from a twin: none of its states named but the loop."""
    return type(row).__name__ == "ShapedRow" and int((row.names < 0).sum()) == len(row.names) - 1


def test_a_twin_loop_takes_its_body_unsearched(vocab, tokenizer):
    """Every string field is a loop of its own; a loop like one searched before (`body_twins`) takes
    the body's shape unsearched, its states inside a character named only when a token ends there —
    and every row and every token's end are still a walk's."""
    props = {k: {"type": "string"} for k in "abcd"}
    index = fsm.compile(fsm.JsonSchema({"type": "object", "properties": props}), vocab, cache=False)
    walked = walked_index(index)
    names = []
    for k in "abcd":
        _, row, twin = _row_as_walked(index, walked, tokenizer, vocab, '{"' + k + '":"x')
        if k == "a":  # its shape may be sighted here first: that row is walked
            continue
        assert type(row).__name__ == "ShapedRow"
        names.append(twin and len(row.names) > 6)  # none named but the loop
    assert all(names)  # the later fields' bodies came from the first's, unsearched


def test_twin_loops_inside_rule_calls(vocab, tokenizer):
    """A recursive schema's strings below the top are (NFA state, stack) configurations: their
    bodies come from a twin too, each row and token end a walk's."""
    schema = {
        "type": "object",
        "properties": {
            "n": {"type": "string"},
            "m": {"type": "string"},
            "kids": {"type": "array", "items": {"$ref": "#"}},
        },
    }
    index = fsm.compile(fsm.JsonSchema(schema), vocab, cache=False)
    walked = walked_index(index)
    twins = 0
    for text in ('{"n":"x', '{"m":"x', '{"kids":[{"n":"x', '{"kids":[{"m":"x', '{"kids":[{"kids":[{"n":"x'):
        state, _, twin = _row_as_walked(index, walked, tokenizer, vocab, text)
        assert index.lazy.state_set(state)[0] >= index.lazy.n_real or "kids" not in text  # a configuration
        twins += twin
    assert twins >= 3


def test_twin_loops_inside_any_value(vocab, tokenizer):
    """A string inside a `{}` value is a block's state (negative), not the character NFA's: its
    body comes from a twin too — one searched in another field, at another depth, or a plain
    string's — and each row and token end is a walk's."""
    props = {"a": {}, "b": {}, "s": {"type": "string"}}
    index = fsm.compile(fsm.JsonSchema({"type": "object", "properties": props}), vocab, cache=False)
    walked = walked_index(index)
    twins = 0
    for text in ('{"s":"x', '{"a":"x', '{"b":"x', '{"a":["x', '{"b":{"k":"x', '{"a":{"k":[{"j":"x'):
        state, _, twin = _row_as_walked(index, walked, tokenizer, vocab, text)
        assert index.lazy.state_set(state)[0] < 0 or text.startswith('{"s"')  # a block's state
        twins += twin
    assert twins >= 4


def test_loops_inside_a_counted_block_are_walked_rows(vocab, tokenizer):
    """A string inside the items of a long counted array is a counter block's state (negative,
    one per count): where it loops on itself it may take a twin's body as a block's `{}` string
    does; each row and token end is a walk's either way."""
    schema = {"type": "array", "items": {"type": "string"}, "maxItems": 400}
    index = fsm.compile(fsm.JsonSchema(schema), vocab, cache=False)
    walked = walked_index(index)
    checked = 0
    for text in ('["x', '["a","x', '["a","b","c","x', '["é', '["a\\n'):
        state, _, _ = _row_as_walked(index, walked, tokenizer, vocab, text)
        checked += index.lazy.state_set(state)[0] < 0
    assert checked >= 2  # (the first item is before the block: its strings are real states)


def test_the_kernels_a_row_calls_are_loaded_before_its_deadline():
    """In a fresh process, `ensure_compiled` (run before a row's deadline starts) has compiled or
    loaded every kernel a narrow, literal or shaped row calls from Python: none is compiled inside
    a row's budget (seconds each on a fresh install, more on a busy machine)."""
    code = (
        "from fsm.index.kernels import kernels\n"
        "kernels().ensure_compiled()\n"
        "import fsm.index.body_rows as B, fsm.index.body_shapes as S, fsm.index.literal_rows as L\n"
        "import fsm.index.narrow_rows as N, fsm.index.row_sort as R, fsm.index.walk_kernel as W\n"
        "fs = [B._wide_target, B._body, S._shape_walk, L._follow, N.narrow_walk, R.set_bits,\n"
        "      R._dense_row, R.small_sorted_row, R.replaced_dense, R.dense_pairs, R.dense_packed,\n"
        "      W.walk_subtrees]\n"
        "print([f.__name__ for f in fs if not f.signatures])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
