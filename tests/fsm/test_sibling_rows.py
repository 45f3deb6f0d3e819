"""A wide row made from its anchor's row (`fsm.index.sibling_rows`) equals the row a fresh trie walk
computes — same tokens, end states of the same NFA sets, same mask — at every step of random walks
over schemas whose free text also follows something narrower: keys that are any string or a declared
name, a free string that must hold an unanchored pattern, a free string or one of a few values."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

import fsm
from fsm.index import LazyDfaIndex
from fsm.index.kernels import kernels
from fsm.index.sibling_rows import dense_ends, differing_bytes, first_bytes, sibling_row
from fsm.index.trie_kernel import walk_below_to
from fsm.testing import check_same_row, walked_index

_NAMES = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa"]
SCHEMAS = [
    # every key position: the declared names left, or any string (an extra key)
    {
        "type": "object",
        "properties": {k: {"type": "string"} for k in _NAMES},
        "additionalProperties": True,
    },
    # free text that must hold a uuid somewhere: each of its characters is a state of its own
    {"type": "string", "pattern": "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}"},
    # an enum value or free text
    {"type": "array", "items": {"anyOf": [{"enum": ["north", "south", "east", "west"]}, {"type": "string"}]}},
]


_walked = walked_index


@pytest.mark.parametrize("exact", [False, True])
@pytest.mark.parametrize("schema", SCHEMAS, ids=[json.dumps(s)[:50] for s in SCHEMAS])
def test_sibling_rows_equal_walked_rows(schema, exact, vocab, tokenizer):
    index = fsm.compile(fsm.JsonSchema(schema, exact=exact), vocab, cache=False)
    assert isinstance(index, LazyDfaIndex)
    walked = _walked(index)
    rng = random.Random(json.dumps(schema) + str(exact))
    # random walks rarely stay inside a narrow part; prefixes of its words lead there
    starts = ['{"', '{"alpha":"x","', '{"be', '"', '"12ab', '"x 0a1b2c3d-', '["', '["nor', '["x","ea']
    for start in starts:
        m = index.matcher()
        try:
            for t in tokenizer.encode(start, add_special_tokens=False):
                m.advance(t)
        except fsm.TokenRejected:
            continue
        for _ in range(12):
            check_same_row(index, walked, m.state)
            allowed = m.allowed_token_ids()
            # mostly one-byte tokens, so that the walk stays near the narrow part
            short = [int(t) for t in allowed if len(vocab.token_bytes(int(t)) or b"") == 1]
            m.advance(rng.choice(short or allowed.tolist()))
            if m.is_finished():
                break
    # in exact mode the whitespace and any key order make a key's start a string body of its own,
    # whose row comes from its shape (`fsm.index.body_rows`) before any anchor is looked for
    made = index.n_sibling if not exact else index.n_sibling + index.n_shaped
    assert made > 0, "no row came from its anchor's: the test would not test it"


@pytest.mark.parametrize("pattern", ["[a-z ]{0,40}|x[0-9]+|(ab)+", "[a-z ]*|x[0-9]+|(ab)+"])
def test_sibling_row_is_the_walked_row_for_any_pair_of_states(pattern, vocab):
    """Exact for any two states, not only a state and its anchor: the first bytes that differ are
    walked, each stopped where it meets the anchor along bytes that loop on it (its subtree keeps
    the anchor's ends), and not stopped when no anchor is named."""
    d = fsm.compile(fsm.Regex(pattern), vocab, cache=False).dfa
    trie = kernels().vocabulary_preorder(vocab)
    fb = first_bytes(trie, vocab)
    states = [
        d.initial,
        d.step(d.initial, ord("q")),
        d.step(d.initial, ord("x")),
        d.step(d.initial, ord("a")),
    ]
    for s in states:
        for a in states:
            if min(s, a) < 0:
                continue
            dense = dense_ends(*kernels().walk_row(d, a, trie), vocab.size)
            differ = differing_bytes(d, None, s, a)
            w_tok, w_end = kernels().walk_row(d, s, trie)
            order = np.argsort(w_tok)
            for anchor in (a, -1):
                eos = (np.array(vocab.eos_token_ids), -2) if anchor < 0 else None
                row = sibling_row(d, s, dense, differ, trie, fb, None, None, None, anchor, eos)
                tok, end = row.text_pairs()
                assert tok.tolist() == w_tok[order].tolist()
                assert end.tolist() == w_end[order].tolist()
                # the row's own answers, its arrays unread: the mask, a token's end, EOS
                extra = list(vocab.eos_token_ids) if eos else []
                assert np.array_equal(
                    row.packed, kernels().pack_tokens(np.array([*tok, *extra], np.int32), vocab.size)
                )
                for t, e in zip(tok.tolist()[:200], end.tolist()[:200], strict=True):
                    assert row.next_state(t) == e
                assert all(row.next_state(t) == (-2 if eos else None) for t in vocab.eos_token_ids)
                left_out = sorted(set(range(vocab.size)) - set(tok.tolist()) - set(extra))[:100]
                assert all(row.next_state(t) is None for t in left_out)
                assert row.has_text == (len(tok) > 0)
                assert row.tokens.tolist() == sorted([*tok.tolist(), *extra])
    if "*" in pattern:  # the "x..." subtree meets the [a-z ] loop again below "x": stopped there
        loop, x = states[1], int(fb.node[ord("x")])
        cut = walk_below_to(d, (np.array([states[2]]), np.array([x])), trie, loop)[2]
        assert len(cut) > 0, "no walk stopped at the anchor: the test would not test it"


def _mostly_past_ascii() -> fsm.Vocabulary:
    """Every byte, some ASCII words and many words of accented letters and CJK: most of the trie is
    inside multi-byte characters, as in Gemma's 262k vocabulary."""
    rng = random.Random(0)
    words = {bytes([b]) for b in range(256)}
    words.update(
        "".join(rng.choice("éàüßçñøåæœ日本語中文한국어") for _ in range(rng.randint(1, 4))).encode()
        for _ in range(3000)
    )
    words.update(
        "".join(rng.choice("abcdefghijklmnopqrstuvwxyz_") for _ in range(rng.randint(2, 6))).encode()
        for _ in range(1500)
    )
    tokens: list[bytes | None] = sorted(words)
    return fsm.Vocabulary([*tokens, None], eos_token_ids=[len(tokens)])


def test_sibling_rows_on_a_vocabulary_mostly_past_ascii():
    """The lead bytes' targets of a state and its anchor are made apart (`automata.utf8_chains`) but
    are the same language when every character past ASCII leads alike: those subtrees come from the
    anchor's row, equal to a walk's."""
    vocab = _mostly_past_ascii()
    for schema in SCHEMAS[:2]:
        index = fsm.compile(fsm.JsonSchema(schema), vocab, cache=False)
        walked = _walked(index)
        rng = random.Random(1)
        for _ in range(8):
            m = index.matcher()
            for _ in range(30):
                check_same_row(index, walked, m.state)
                allowed = m.allowed_token_ids()
                short = [int(t) for t in allowed if len(vocab.token_bytes(int(t)) or b"") <= 2]
                m.advance(rng.choice(short or allowed.tolist()))
                if m.is_finished():
                    break
        assert index.n_sibling > 0, "no row came from its anchor's: the test would not test it"
