"""The compiled trie walk (`fsm.index.trie_kernel`) gives the rows of the vectorized reference walk.

Every state a valid instance visits (JSON schemas of the test corpus, lazily determinized: the
kernel stops at unexpanded states and resumes) and every state of the shared regexes (eager DFAs,
over the byte trie and over the class-folded trie) is checked pair for pair against
`fsm.index.walk_tokens`; hypothesis checks the same on random vocabularies, and the depth-first
numbering, the sorted rows and the packed masks against plain Python.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import fsm
from fsm.automata import MAX_CODEPOINT, LazyByteDFA, cls, lit, node_nfa, rep, seq
from fsm.index import LazyDfaIndex, walk_tokens
from fsm.index.bitmask import pack_bitmask, unpack_bitmask
from fsm.index.preorder import preorder, vocabulary_preorder
from fsm.index.row_sort import sorted_packed_row
from fsm.index.steps import Steps
from fsm.index.token_walk import class_trie
from fsm.index.trie_kernel import walk_row
from fsm.regex import regex_to_dfa

from .regex_cases import REGEXES
from .schema_cases import schema_instances, visited_row_states


def _pairs(tok: np.ndarray, end: np.ndarray) -> list[tuple[int, int]]:
    return sorted(zip(tok.tolist(), end.tolist(), strict=True))


def _same_pairs(index, got: list[tuple[int, int]], want: list[tuple[int, int]]) -> bool:
    """The same tokens, each ending in the same state or one of the same NFA set: a row shared
    from another counter block names its ends by their sets, where a walk names a state inside a
    character by the byte read into it (the same language)."""
    if [t for t, _ in got] != [t for t, _ in want]:
        return False
    sets = index.lazy.state_set if isinstance(index, LazyDfaIndex) else None
    return all(
        a == b or (sets is not None and sets(a) == sets(b)) for (_, a), (_, b) in zip(got, want, strict=True)
    )


def _reference(dfa, trie, state: int, labels_are_classes: bool = False) -> list[tuple[int, int]]:
    _, tok, end = walk_tokens(dfa, np.array([state]), trie, labels_are_classes=labels_are_classes)
    return _pairs(tok, end)


def test_kernel_rows_of_schemas_equal_trie_walks(vocab, tokenizer):
    checked = wide = 0
    for name, index, states in visited_row_states(schema_instances(), vocab, tokenizer):
        for q in states:
            want = _reference(index.dfa, vocab.trie, q)
            got = _pairs(*index.kernel_row(q, index.limits.deadline()))
            assert _same_pairs(index, got, want), (name, q)
            checked += 1
            wide += len(want) > 10_000
    assert checked > 500 and wide > 20, (checked, wide)


def test_kernel_rows_of_a_fresh_lazy_dfa_expand_as_they_go(vocab):
    # a fresh index: the kernel meets unexpanded states at every depth of a bounded string
    schema = {"type": "object", "properties": {"s": {"type": "string", "maxLength": 40}}, "required": ["s"]}
    index = fsm.compile(fsm.JsonSchema(schema), vocab, cache=False)
    q = index.dfa.initial
    for b in b'{"s":"':
        q = index.dfa.step(q, b)
    got = index.kernel_row(q, index.limits.deadline())  # before the reference expands anything
    assert _same_pairs(index, _pairs(*got), _reference(index.dfa, vocab.trie, q))
    assert len(got[0]) > 40_000  # most of the vocabulary fits in a 40-character string


def test_fixed_length_strings_emit_their_chains_and_walk_like_the_reference(vocab, tokenizer):
    """Every position of a fixed-length string of one class is a new state whose row reads most of
    the vocabulary: a chain of one label set (`steps.label_chain`), its subtrees emitted at once."""
    from fsm.index.steps import label_chain
    from fsm.index.walk_arrays import step_arrays, walk_view

    schema = {
        "type": "object",
        "properties": {
            "id": {"type": "string", "pattern": "^[ -}]+$", "minLength": 30, "maxLength": 30},
            "hex": {"type": "string", "pattern": "[0-9a-fA-F]+", "minLength": 12, "maxLength": 12},
        },
        "required": ["id", "hex"],
    }
    index = fsm.compile(fsm.JsonSchema(schema), vocab, cache=False)
    text = '{"id":"abcdefghijklmnopqrstuvwxyz0123","hex":"zzzz00001111"}'
    chained = 0
    q = index.dfa.initial
    for i, b in enumerate(text.encode()):
        if i in (6, 9, 20, 34, 43, 46, 50):  # string positions
            got = index.kernel_row(q, index.limits.deadline())
            assert _same_pairs(index, _pairs(*got), _reference(index.dfa, vocab.trie, q)), i
            tbl, rows, bc, n_labels, flags = walk_view(index.dfa, index.lazy, False)
            st, masks, known, _ = step_arrays(index.steps, flags, index.lazy)
            out = np.empty(vocab_preorder_depth(vocab) + 2, np.int64)
            chained += label_chain(tbl, rows, bc, n_labels, q, st, masks, known, flags, out) > 1
        q = index.dfa.step(q, b)
    assert chained >= 4, chained


def vocab_preorder_depth(vocab) -> int:
    return vocabulary_preorder(vocab).max_depth


def test_a_literal_chain_is_expanded_only_as_deep_as_tokens_spell_it(vocab):
    """The row of a key's prefix: its literal's last bytes, ``":"`` and the counted string after it
    are expanded ahead only along bytes some token spells (none spells ``_by":"`` and more), not to
    the vocabulary's longest token (75 counts of the string, ~2 ms a key, before)."""
    schema = {
        "type": "object",
        "properties": {"created_by": {"type": "string", "maxLength": 255}},
        "required": ["created_by"],
    }
    index = fsm.compile(fsm.JsonSchema(schema), vocab, cache=False)
    q = index.dfa.initial
    for b in b'{"created':
        q = index.dfa.step(q, b)
    before = index.lazy.n_states
    got = index.kernel_row(q, index.limits.deadline())
    assert index.lazy.n_states - before < 20, index.lazy.n_states - before
    assert _same_pairs(index, _pairs(*got), _reference(index.dfa, vocab.trie, q))


def test_kernel_rows_of_regexes_equal_trie_walks(vocab):
    pre = vocabulary_preorder(vocab)
    for name, pattern in REGEXES.items():
        dfa = regex_to_dfa(pattern)
        folded = class_trie(vocab.trie, dfa)
        folded_pre = preorder(folded)
        steps, class_steps = Steps(), Steps()
        for q in range(dfa.n_states):
            want = _reference(dfa, vocab.trie, q)
            assert _pairs(*walk_row(dfa, q, pre, steps=steps)) == want, (name, q)
            got = walk_row(dfa, q, folded_pre, labels_are_classes=True, steps=class_steps)
            assert _pairs(*got) == _reference(dfa, folded, q, labels_are_classes=True) == want, (name, q)


_TOKENS = st.lists(st.binary(min_size=1, max_size=6).map(bytes), min_size=1, max_size=60, unique=True)
_PATTERNS = ["[ab]*", '"[^"\\\\]{0,5}"', "(ab|b a)+", "a*b?[ \\\\]*", ".{0,4}", "é+a*"]
# chains of one wide ASCII label set (`steps.label_chain`): every position of a fixed-length string
_PATTERNS += ["[ -}]{5}", '"[ -~]{3,4}[ab]{2}"', "[ -~]{2}x[ -~]{3}|ab"]


@settings(max_examples=60, deadline=None)
@given(_TOKENS, st.sampled_from(_PATTERNS))
def test_random_vocabularies_walk_like_the_reference(tokens, pattern):
    v = fsm.Vocabulary([*tokens, None], eos_token_ids=[len(tokens)])
    dfa = regex_to_dfa(pattern)
    pre, steps = preorder(v.trie), Steps()
    for q in range(dfa.n_states):
        assert _pairs(*walk_row(dfa, q, pre, steps=steps)) == _reference(dfa, v.trie, q), (pattern, q)


@settings(max_examples=60, deadline=None)
@given(_TOKENS)
def test_preorder_numbering(tokens):
    v = fsm.Vocabulary([*tokens, None], eos_token_ids=[len(tokens)])
    p = preorder(v.trie)
    # the subtree of node i is i : i + size[i]; its tokens are contiguous and spell its prefix
    text = {}
    path: list[int] = []
    for i in range(1, p.n_nodes):
        del path[int(p.depth[i]) - 1 :]
        path.append(int(p.label[i]))
        for t in p.tok_ids[p.tok_start[i] : p.tok_start[i] + p.tok_count[i]].tolist():
            text[t] = bytes(path)
        lo, hi = int(p.tok_start[i]), int(p.tok_start[i + int(p.size[i])])
        below = p.label[i : i + int(p.size[i])]
        bits = {b for b in range(256) if int(p.sub_bytes[i, b >> 6]) >> (b & 63) & 1}
        assert bits == set(below.tolist())
        assert all(v.token_bytes(t).startswith(bytes(path)) for t in p.tok_ids[lo:hi].tolist())
    assert text == {i: t for i, t in enumerate(tokens)}


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 999), unique=True, max_size=300), st.integers(0, 2**31 - 1))
def test_sorted_rows_and_packed_masks(ids, seed):
    tok = np.array(ids, dtype=np.int32)
    end = np.random.default_rng(seed).integers(-2, 50, len(ids)).astype(np.int32)
    t, e, words = sorted_packed_row(tok, end, 1000, -3)
    assert _pairs(t, e) == _pairs(tok, end) and t.tolist() == sorted(ids)
    packed = pack_bitmask(tok, 1000)
    assert np.array_equal(words.view(np.int32), packed)
    assert packed.dtype == np.int32 and len(packed) == 32
    assert unpack_bitmask(packed, 1000).tolist() == sorted(ids)


_TEXT_TOKENS = st.lists(
    st.text(alphabet=st.sampled_from('ab"\\ é日\U0001f600\x01'), min_size=1, max_size=5).map(str.encode),
    min_size=1,
    max_size=60,
    unique=True,
)


def _string_dfa(max_len: int | None):
    """A JSON string body (no quote, backslash or control character), ``max_len`` characters at
    most, then a closing quote: lazily determinized, as the JSON front end builds strings."""
    body = cls((0x20, 0x21), (0x23, 0x5B), (0x5D, MAX_CODEPOINT))
    return LazyByteDFA(*node_nfa(seq(rep(body, 0, max_len), lit('"'))))


@settings(max_examples=60, deadline=None)
@given(_TEXT_TOKENS, st.sampled_from([None, 0, 1, 3, 7]), st.booleans())
def test_string_chains_by_characters_walk_like_the_reference(tokens, max_len, many_multibyte):
    # multi-byte characters inside a chain of counters: subtrees of whole characters are emitted
    # by character counts, whether the characters of the whole chain are expanded up front or not
    v = fsm.Vocabulary([*tokens, None], eos_token_ids=[len(tokens)])
    pre, steps = preorder(v.trie), Steps()
    lazy = _string_dfa(max_len)
    dfa = lazy.as_byte_dfa()
    q = lazy.initial
    for _ in range(3):  # the first states of the chain, each walked fresh, then its next state
        got = walk_row(dfa, q, pre, on_demand=lazy, steps=steps, chain_chars=many_multibyte)
        assert _pairs(*got) == _reference(dfa, v.trie, q), (max_len, q)
        q = dfa.step(q, ord("a"))
        if q < 0:
            break


def test_importing_fsm_and_the_vllm_plugin_loads_no_numba():
    # llvmlite (under numba) breaks vLLM 0.32's CPU worker start-up scan: fsm loads it on a first row
    code = (
        "import sys, fsm, guide, guide.vllm.plugin\n"
        "assert 'numba' not in sys.modules and 'llvmlite' not in sys.modules\n"
        "v = fsm.Vocabulary([b'a', b'b', None], eos_token_ids=[2])\n"
        "assert fsm.compile(fsm.Regex('ab'), v, cache=False).matcher().allowed_token_ids().tolist() == [0]\n"
        "assert 'numba' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=300)
