"""guide.LogitsProcessor inside HF model.generate: batching, padding, sampling, beam search, per-prompt specs."""

from __future__ import annotations

import re

import pytest
import torch

import fsm
import guide

from .tiny_models import tiny_llama


@pytest.fixture(scope="module")
def hf():
    return tiny_llama(seed=1)


def _run(hf, tokenizer, prompts, proc, **kw):
    tokenizer.padding_side = "left"
    enc = tokenizer(prompts, return_tensors="pt", padding=True)
    with torch.no_grad():
        out = hf.generate(**enc, logits_processor=[proc], pad_token_id=tokenizer.pad_token_id or 2, **kw)
    texts = []
    for row in out[:, enc.input_ids.shape[1] :].tolist():
        texts.append(tokenizer.decode(row, skip_special_tokens=True))
    return out[:, enc.input_ids.shape[1] :], texts


PATTERN = r"(cat|dog|bird) [0-9]{1,3}!"


def test_greedy_batch_with_padding(hf, tokenizer):
    proc = guide.LogitsProcessor(fsm.Regex(PATTERN), tokenizer)
    _, texts = _run(
        hf,
        tokenizer,
        ["Animal:", "A longer prompt about animals:", "x"],
        proc,
        max_new_tokens=12,
        do_sample=False,
    )
    for t in texts:
        assert re.fullmatch(PATTERN, t), t


def test_sampling(hf, tokenizer):
    proc = guide.LogitsProcessor(fsm.Regex(PATTERN), tokenizer)
    torch.manual_seed(0)
    _, texts = _run(
        hf, tokenizer, ["a", "b", "c", "d"], proc, max_new_tokens=12, do_sample=True, temperature=1.5
    )
    for t in texts:
        assert re.fullmatch(PATTERN, t), t


def test_beam_search_reorders_beams(hf, tokenizer):
    proc = guide.LogitsProcessor(fsm.Regex(PATTERN), tokenizer)
    _, texts = _run(
        hf,
        tokenizer,
        ["Animal:", "Another one:"],
        proc,
        max_new_tokens=12,
        do_sample=False,
        num_beams=4,
        num_return_sequences=4,
    )
    assert len(texts) == 8
    for t in texts:
        assert re.fullmatch(PATTERN, t), t
    assert len(set(texts)) > 2  # really different beams


def test_per_prompt_constraints_with_beams(hf, tokenizer):
    specs = [fsm.Regex(r"(yes|no)"), fsm.Regex(r"[0-9]{2}")]
    proc = guide.LogitsProcessor(specs, tokenizer)
    _, texts = _run(
        hf,
        tokenizer,
        ["Q1", "Q2"],
        proc,
        max_new_tokens=6,
        do_sample=False,
        num_beams=3,
        num_return_sequences=3,
    )
    for i, t in enumerate(texts):
        assert re.fullmatch(specs[i // 3].pattern, t), (i, t)


def test_free_prompt_in_list_is_untouched(hf, tokenizer):
    proc = guide.LogitsProcessor([fsm.Regex(r"(yes|no)"), None], tokenizer)
    _, texts = _run(hf, tokenizer, ["Q1", "Q2"], proc, max_new_tokens=5, do_sample=False)
    assert texts[0] in ("yes", "no")
    _, free = _run(
        hf,
        tokenizer,
        ["Q1", "Q2"],
        guide.LogitsProcessor([None, None], tokenizer),
        max_new_tokens=5,
        do_sample=False,
    )
    assert texts[1] == free[1]


def test_reused_across_calls_and_compiled_index(hf, tokenizer, vocab):
    index = fsm.compile(fsm.Regex(r"[a-z]{4}"), vocab)
    proc = guide.LogitsProcessor(index, tokenizer)
    for prompts in (["a", "bb"], ["a much longer prompt"]):
        _, texts = _run(hf, tokenizer, prompts, proc, max_new_tokens=6, do_sample=False)
        assert all(re.fullmatch(r"[a-z]{4}", t) for t in texts), texts


def test_new_call_one_token_longer_is_not_taken_for_a_continuation(tokenizer, vocab):
    index = fsm.compile(fsm.Regex(r"ab"), vocab)
    proc = guide.LogitsProcessor(index, tokenizer)
    a = tokenizer.encode("a", add_special_tokens=False)[0]
    proc(torch.tensor([[5, 6]]), torch.zeros(1, 49152))
    # a different prompt whose length happens to be one more: fresh matchers, 'a' allowed again
    out = proc(torch.tensor([[7, 8, 9]]), torch.zeros(1, 49152))
    assert a in torch.isfinite(out[0]).nonzero().flatten().tolist()


def test_joins_late_by_replaying_prefix(tokenizer, vocab):
    index = fsm.compile(fsm.Regex(r"ab(c|d)"), vocab)
    proc = guide.LogitsProcessor(index, tokenizer)
    a = tokenizer.encode("a", add_special_tokens=False)[0]
    b = tokenizer.encode("b", add_special_tokens=False)[0]
    scores = torch.zeros(1, 49152)
    proc(torch.tensor([[5, 6]]), scores)  # first call: prompt of length 2
    scores = torch.zeros(1, 49152)
    proc._states = {}  # forget the history: the next call must replay it
    out = proc(torch.tensor([[5, 6, a]]), scores)
    allowed = torch.isfinite(out[0]).nonzero().flatten().tolist()
    assert b in allowed and a not in allowed


def test_disallowed_token_is_reported(tokenizer):
    proc = guide.LogitsProcessor(fsm.Regex(r"abc"), tokenizer)
    z = tokenizer.encode("z", add_special_tokens=False)[0]
    proc(torch.tensor([[5]]), torch.zeros(1, 49152))
    with pytest.raises(fsm.TokenRejected, match="disallows"):
        proc(torch.tensor([[5, z]]), torch.zeros(1, 49152))


def test_needs_a_constraint(tokenizer):
    with pytest.raises(ValueError, match="needs a constraint"):
        guide.LogitsProcessor(None, tokenizer)
