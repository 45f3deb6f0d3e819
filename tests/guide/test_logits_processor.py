"""guide.LogitsProcessor inside HF model.generate: batching, padding, sampling, beam search, per-prompt specs."""

from __future__ import annotations

import json
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


# -- Hugging Face assisted generation: drafted positions are scored in one pass -----------------------
COPY_SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "city": {"type": "string"}, "age": {"type": "integer"}},
    "required": ["name", "city", "age"],
}
COPY_PROMPT = (
    'Copy into JSON: name Alice Smith, city Paris, age 34. JSON: {"name": "Alice Smith", "city": '
    '"Paris", "age": 34}\nAgain for: name Alice Smith, city Paris, age 34. JSON:'
)


@pytest.fixture(scope="module")
def small():
    return guide.load()


def _assisted(small, **kw):
    import jsonschema

    enc = small.tokenizer(COPY_PROMPT, return_tensors="pt")
    proc = guide.LogitsProcessor(fsm.JsonSchema(COPY_SCHEMA), small.tokenizer)
    with torch.no_grad():
        out = small.hf.generate(**enc, logits_processor=[proc], max_new_tokens=40, **kw)
    text = small.tokenizer.decode(out[0, enc.input_ids.shape[1] :], skip_special_tokens=True)
    jsonschema.validate(json.loads(text), COPY_SCHEMA)
    return text


@pytest.mark.parametrize("assist", ["prompt_lookup", "assistant_model"])
def test_hf_assisted_generation_is_valid_and_unchanged(small, assist):
    plain = _assisted(small, do_sample=False)
    kw = {"prompt_lookup_num_tokens": 10} if assist == "prompt_lookup" else {"assistant_model": small.hf}
    assert _assisted(small, do_sample=False, **kw) == plain


def test_hf_assisted_sampling_is_valid(small):
    torch.manual_seed(3)
    _assisted(small, do_sample=True, temperature=1.3, assistant_model=small.hf)
    _assisted(small, do_sample=True, temperature=1.3, prompt_lookup_num_tokens=10)


def test_forbidden_unverified_draft_is_masked_not_raised(tokenizer):
    # HF scores positions of one logits tensor; the position after a forbidden draft is moot
    a, b, z = (tokenizer.encode(c, add_special_tokens=False)[0] for c in "abz")
    proc = guide.LogitsProcessor(fsm.Regex(r"abc"), tokenizer)
    logits = torch.zeros(1, 4, 49152)
    drafted = torch.tensor([[5, a, z, b]])
    for i in range(4):
        logits[:, i, :] = proc(drafted[:, : 1 + i], logits[:, i, :])
    allowed = torch.isfinite(logits[0, 1]).nonzero().flatten().tolist()
    assert b in allowed and z not in allowed
    # the next round re-scores from the accepted prefix: the dead draft left no trace
    after = proc(torch.tensor([[5, a, b]]), torch.zeros(1, 49152))
    c = tokenizer.encode("c", add_special_tokens=False)[0]
    assert c in torch.isfinite(after[0]).nonzero().flatten().tolist()
    with pytest.raises(fsm.TokenRejected, match="disallows"):  # a forbidden token outside a draft pass
        proc(torch.tensor([[5, a, b, z]]), torch.zeros(1, 49152))
