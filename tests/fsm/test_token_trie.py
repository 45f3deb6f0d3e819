"""`TokenTrie.build` (one `np.unique` per depth) against a plain reference built from the set of all
prefixes: the same arrays, node for node, on random token lists and on the real SmolLM2 vocabulary."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from fsm.vocabulary import TokenTrie


def reference_trie(tokens) -> dict[str, list[int]]:
    """Nodes = every prefix of every token, numbered by (length, bytes); the definition, spelled out."""
    prefixes = sorted({b[:k] for b in tokens if b for k in range(1, len(b) + 1)}, key=lambda p: (len(p), p))
    node_of = {p: i + 1 for i, p in enumerate(prefixes)}
    parent = [0] + [node_of.get(p[:-1], 0) for p in prefixes]
    children: dict[int, list[int]] = {}
    for i, p in enumerate(parent[1:], start=1):
        children.setdefault(p, []).append(i)
    n = len(parent)
    ends = sorted((node_of[b], i) for i, b in enumerate(tokens) if b)
    tok_count = [0] * n
    for node, _ in ends:
        tok_count[node] += 1
    return {
        "node_byte": [0] + [p[-1] for p in prefixes],
        "parent": parent,
        "depth": [0] + [len(p) for p in prefixes],
        "child_start": [children[i][0] if i in children else 0 for i in range(n)],
        "child_count": [len(children.get(i, [])) for i in range(n)],
        "tok_ids": [i for _, i in ends],
        "tok_count": tok_count,
        "tok_start": list(np.cumsum(tok_count) - tok_count),
    }


def assert_same(trie: TokenTrie, ref: dict[str, list[int]]) -> None:
    for name, want in ref.items():
        assert getattr(trie, name).tolist() == [int(x) for x in want], name


tokens = st.lists(
    st.one_of(st.none(), st.binary(min_size=0, max_size=6), st.sampled_from([b"a", b"ab", b"\xff\x00"])),
    max_size=40,
)


@settings(max_examples=300, deadline=None)
@given(tokens)
def test_build_equals_the_reference_on_random_tokens(toks):
    assert_same(TokenTrie.build(toks), reference_trie(toks))


def test_build_equals_the_reference_on_the_real_vocabulary(vocab):
    assert_same(TokenTrie.build(vocab.tokens), reference_trie(vocab.tokens))
