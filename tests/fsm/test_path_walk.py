"""Depth-first rows of narrow states (`fsm.index.path_walk`) equal the vectorized trie walk's.

Every state a valid instance visits (JSON schemas of the test corpus, lazily determinized) and every
state of the shared regexes (eager DFAs) is checked: where the depth-first walk gives a row, it is
the vectorized walk's, token for token and end state for end state.
"""

from __future__ import annotations

import numpy as np

from fsm.index import FINISHED, walk_tokens
from fsm.index.path_walk import MAX_LIVE_BYTES, PathWalker, trie_arrays
from fsm.regex import regex_to_dfa

from .regex_cases import REGEXES
from .schema_cases import schema_instances, visited_row_states


def _pairs(tok: np.ndarray, end: np.ndarray) -> list[tuple[int, int]]:
    return sorted(zip(tok.tolist(), end.tolist(), strict=True))


def _walk_pairs(dfa, vocab, state: int) -> list[tuple[int, int]]:
    _, tok, end = walk_tokens(dfa, np.array([state]), vocab.trie)
    return _pairs(tok, end)


def test_narrow_rows_of_schemas_equal_trie_walks(vocab, tokenizer):
    narrow = checked = 0
    for name, index, states in visited_row_states(schema_instances(), vocab, tokenizer):
        walker = PathWalker(index.dfa, trie_arrays(vocab))  # fresh: nothing remembered from the index
        for q in states:
            want = _walk_pairs(index.dfa, vocab, q)
            row = index.row(q)  # whichever way the index made it
            got = [
                (t, e)
                for t, e in zip(row.tokens.tolist(), row.next_states.tolist(), strict=True)
                if e != FINISHED
            ]
            assert got == want, (name, q)
            fast = walker.row(q)
            if fast is not None:
                assert _pairs(*fast) == want, (name, q)
                narrow += 1
            checked += 1
    assert checked > 500 and narrow > 300, (checked, narrow)


def test_narrow_rows_of_regexes_equal_trie_walks(vocab):
    narrow = wide = 0
    for name, pattern in REGEXES.items():
        dfa = regex_to_dfa(pattern)
        walker = PathWalker(dfa, trie_arrays(vocab))
        for q in range(dfa.n_states):
            fast = walker.row(q)
            if fast is None:
                wide += 1
                continue
            assert _pairs(*fast) == _walk_pairs(dfa, vocab, q), (name, q)
            narrow += 1
    assert narrow > 50 and wide > 5, (narrow, wide)


def test_wide_states_are_left_to_the_vectorized_walk(vocab):
    # any character: every byte is live, far more than a depth-first walk should take on
    dfa = regex_to_dfa(".{0,12}")
    assert int((dfa.table[dfa.initial][dfa.byte_class] >= 0).sum()) > MAX_LIVE_BYTES
    assert PathWalker(dfa, trie_arrays(vocab)).row(dfa.initial) is None
    # a narrow state with a long-token path: the walk goes as deep as the tokens
    dfa = regex_to_dfa('"(name|nameless|names)":')
    q = dfa.step(dfa.initial, ord('"'))
    tok, end = PathWalker(dfa, trie_arrays(vocab)).row(q)
    assert _pairs(tok, end) == _walk_pairs(dfa, vocab, q) and len(tok) > 3
