"""`GuideGrammar` as vLLM's scheduler drives it, without an engine: the speculative-decoding calls
(`validate_tokens`, `rollback`), termination and the bitmask row, on the default model's tokenizer."""

from __future__ import annotations

import numpy as np
import torch

import fsm
from guide.vllm.backend import GuideGrammar

DATE = r"\d{4}-\d{2}-\d{2}"


def _grammar(tokenizer) -> tuple[GuideGrammar, fsm.Vocabulary]:
    vocab = fsm.Vocabulary.from_tokenizer(tokenizer)
    return GuideGrammar(fsm.compile(fsm.Regex(DATE), vocab).matcher()), vocab


def test_validate_tokens_returns_the_accepted_prefix_and_moves_nothing(tokenizer):
    g, _ = _grammar(tokenizer)
    good = tokenizer.encode("2024-01-02", add_special_tokens=False)
    bad = tokenizer.encode("x", add_special_tokens=False)
    assert g.validate_tokens(good[:2] + bad + good[2:]) == good[:2]
    assert g.validate_tokens(good) == good  # the matcher was left at the start
    assert g.accept_tokens("r", good[:3])
    assert g.validate_tokens(good[3:]) == good[3:]
    g.rollback(3)
    assert g.validate_tokens(good) == good


def test_eos_terminates_and_later_tokens_are_ignored(tokenizer):
    g, vocab = _grammar(tokenizer)
    eos = vocab.eos_token_ids[0]
    good = tokenizer.encode("2024-01-02", add_special_tokens=False)
    assert g.validate_tokens([*good, eos]) == [*good, eos]
    assert g.accept_tokens("r", [*good, eos]) and g.is_terminated()
    assert g.accept_tokens("r", [eos, eos])  # vLLM may report tokens past the end
    assert g.validate_tokens([eos]) == []
    g.rollback(1)
    assert not g.is_terminated()
    assert not g.accept_tokens("r", tokenizer.encode("7", add_special_tokens=False))  # refused


def test_fill_bitmask_writes_the_matchers_allowed_set_into_vllms_row(tokenizer):
    g, vocab = _grammar(tokenizer)
    g.accept_tokens("r", tokenizer.encode("2024-", add_special_tokens=False))
    words = (vocab.size + 31) // 32
    bitmask = torch.full((3, words), -1, dtype=torch.int32)
    g.fill_bitmask(bitmask, 1)
    bits = np.unpackbits(bitmask[1].numpy().view(np.uint8), bitorder="little")[: vocab.size]
    assert np.flatnonzero(bits).tolist() == g.matcher.allowed_token_ids().tolist()
    assert (bitmask[0] == -1).all() and (bitmask[2] == -1).all()  # other rows untouched
