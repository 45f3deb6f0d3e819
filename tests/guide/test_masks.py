"""Masks from packed bitmasks: exact allowed sets, untouched free rows, odd widths, growth."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import fsm
from guide.masks import MaskBuffer, forbid_padding_ids

CPU = torch.device("cpu")


def _allowed(row: torch.Tensor) -> list[int]:
    return torch.isfinite(row).nonzero().flatten().tolist()


def test_real_matchers_give_exact_allowed_sets(vocab):
    idx = fsm.compile(fsm.Regex(r"(yes|no|maybe) [0-9]{2}"), vocab)
    m0 = idx.matcher()
    m2 = idx.matcher()
    m2.advance(int(m2.allowed_token_ids()[0]))
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(3, vocab.size, generator=g)
    free = logits[1].clone()
    buf = MaskBuffer(vocab.size, CPU, capacity=1)  # grows on demand
    buf.apply(logits, [0, 2], [m0, m2])
    assert _allowed(logits[0]) == m0.allowed_token_ids().tolist()
    assert _allowed(logits[2]) == m2.allowed_token_ids().tolist()
    assert torch.equal(logits[1], free)  # the free row is not touched at all
    kept = m0.allowed_token_ids()
    assert torch.equal(
        logits[0, kept], torch.randn(3, vocab.size, generator=torch.Generator().manual_seed(0))[0, kept]
    )


def test_eos_in_mask_exactly_when_accepting(vocab):
    idx = fsm.compile(fsm.Regex(r"ab?"), vocab)
    m = idx.matcher()
    buf = MaskBuffer(vocab.size, CPU, 1)
    x = torch.zeros(1, vocab.size)
    buf.apply(x, [0], [m])
    assert not any(e in _allowed(x[0]) for e in vocab.eos_token_ids)
    m.advance(vocab_id(vocab, b"a"))
    x = torch.zeros(1, vocab.size)
    buf.apply(x, [0], [m])
    assert set(vocab.eos_token_ids) <= set(_allowed(x[0]))


def vocab_id(vocab, data: bytes) -> int:
    return next(i for i, t in enumerate(vocab.tokens) if t == data)


@pytest.mark.parametrize("width", [1, 31, 32, 33, 100, 1000])
def test_random_bitmasks_match_reference_unpack(width):
    rng = np.random.default_rng(width)
    n = 5
    buf = MaskBuffer(width, CPU, n)
    words = rng.integers(-(2**31), 2**31 - 1, size=(n, buf.words), dtype=np.int64).astype(np.int32)
    buf.host[:n] = words
    x = torch.zeros(n + 1, width)
    rows = [0, 1, 3, 4, 5]
    buf.apply_staged(x, rows, n)
    for i, r in enumerate(rows):
        assert _allowed(x[r]) == fsm.unpack_bitmask(words[i], width).tolist()
    assert bool(torch.isfinite(x[2]).all())


def test_whole_batch_path_in_place():
    buf = MaskBuffer(64, CPU, 2)
    buf.host[:2] = [[1, 0], [0, -(1 << 31)]]  # bit 31 of word 1 = token 63
    x = torch.zeros(2, 64)
    ptr = x.data_ptr()
    buf.apply_staged(x, [0, 1], 2)
    assert x.data_ptr() == ptr
    assert _allowed(x[0]) == [0] and _allowed(x[1]) == [63]


def test_logits_wider_than_masks_rejected():
    buf = MaskBuffer(32, CPU, 1)
    with pytest.raises(ValueError, match="masks cover only 32"):
        buf.apply_staged(torch.zeros(1, 40), [0], 1)


def test_forbid_padding_ids():
    x = torch.zeros(2, 10)
    forbid_padding_ids(x, 7)
    assert _allowed(x[0]) == list(range(7))
    y = torch.zeros(1, 7)
    forbid_padding_ids(y, 7)
    assert bool(torch.isfinite(y).all())


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_cuda_path_matches_cpu(vocab):
    idx = fsm.compile(fsm.Regex(r"[a-z]+@[a-z]+\.com"), vocab)
    m = idx.matcher()
    x = torch.randn(2, vocab.size)
    xc = x.cuda()
    MaskBuffer(vocab.size, CPU, 2).apply(x, [1], [m])
    MaskBuffer(vocab.size, torch.device("cuda"), 2).apply(xc, [1], [m])
    assert torch.equal(x, xc.cpu())
