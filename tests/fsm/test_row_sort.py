"""`fsm.index.row_sort`: rows sorted by token, by a scatter over the vocabulary or an argsort."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from fsm.index.row_sort import leaving_pairs


@settings(max_examples=40, deadline=None)
@given(
    n=st.sampled_from([0, 5, 2047, 2049, 40_000]),
    seed=st.integers(0, 2**32 - 1),
    with_eos=st.booleans(),
)
def test_leaving_pairs_sort_by_token_past_the_scatter_threshold_too(n, seed, with_eos):
    rng = np.random.default_rng(seed)
    tok = rng.permutation(49_152)[: n + 3]  # distinct: no token leaves by two exits
    end = rng.integers(-3, 5_000, len(tok))
    k = rng.integers(0, len(tok) - 2)
    at, below = (tok[:k], end[:k]), (tok[k:-2], end[k:-2])
    eos = (tok[-2:], -2) if with_eos else None
    got_tok, got_end, text = leaving_pairs(at, below, eos)
    keep = len(tok) if with_eos else len(tok) - 2
    want_end = np.concatenate([end[:-2], [-2, -2]]) if with_eos else end[:keep]
    order = np.argsort(tok[:keep])
    assert got_tok.tolist() == tok[:keep][order].tolist()
    assert got_end.tolist() == want_end[order].tolist()
    assert text == (keep - (2 if with_eos else 0) > 0)
