"""The generate loop on the real default model (SmolLM2-135M-Instruct, CPU, float32).

Acceptance: greedy output equals HF ``generate`` token for token (several prompts, batch sizes, with
and without padding, rows finishing at different times); constrained completions fully match their
spec; constrained and free rows mix in one batch; seeds reproduce.
"""

from __future__ import annotations

import json
import re

import pytest
import torch

import fsm
import guide

QUESTIONS = [
    "What is 2+2?",
    "Name a color.",
    "Write a haiku about the sea.",
    "What is the capital of Italy? Answer in one word.",
    "Count to five.",
    "Hello!",
]


@pytest.fixture(scope="module")
def model():
    return guide.load()


def _hf_greedy(model, prompts, max_new_tokens):
    tok = model.tokenizer
    tok.padding_side = "left"
    enc = tok(prompts, return_tensors="pt", padding=True)
    with torch.inference_mode():
        out = model.hf.generate(**enc, max_new_tokens=max_new_tokens, do_sample=False)
    rows = []
    eos = set(model.vocabulary.eos_token_ids)
    for r in out[:, enc.input_ids.shape[1] :].tolist():
        cut = next((i for i, t in enumerate(r) if t in eos), None)
        rows.append(r if cut is None else r[: cut + 1])  # HF pads finished rows after EOS
    return rows


@pytest.mark.parametrize("batch", [1, 3, 6])
def test_greedy_equals_hf_generate_chat_prompts(model, batch):
    prompts = [model.chat(q) for q in QUESTIONS[:batch]]
    ours = guide.generate(model, prompts, max_new_tokens=32)
    ref = _hf_greedy(model, prompts, 32)
    assert [o.token_ids for o in ours] == ref
    if batch > 1:  # rows finished at different times, so the batch was compacted along the way
        assert len({len(o.token_ids) for o in ours}) > 1


def test_greedy_equals_hf_generate_without_padding(model):
    prompts = ["The capital of France is", "Once upon a time, there", "def fibonacci(n):"]
    ids = [model.encode(p)[:5] for p in prompts]
    assert len({len(i) for i in ids}) == 1
    ours = guide.generate(model, ids, max_new_tokens=24)
    with torch.inference_mode():
        out = model.hf.generate(
            torch.tensor(ids),
            attention_mask=torch.ones(3, 5, dtype=torch.long),
            max_new_tokens=24,
            min_new_tokens=24,
            do_sample=False,
        )
    assert [o.token_ids for o in ours] == out[:, 5:].tolist()


def test_greedy_equals_hf_generate_unpacked_model():
    plain = guide.load(pack_weights=False)
    prompts = [plain.chat(q) for q in QUESTIONS[:3]]
    assert [o.token_ids for o in guide.generate(plain, prompts, max_new_tokens=24)] == _hf_greedy(
        plain, prompts, 24
    )


SPECS = {
    "date": fsm.Regex(r"(19|20)\d\d-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])"),
    "choice": fsm.Choice(["positive", "negative", "neutral"]),
    "person": fsm.Regex(r'\{"name": "[A-Z][a-z]{1,15}( [A-Z][a-z]{1,15})?", "age": (0|[1-9]\d?)\}'),
    "email": fsm.Regex(r"[a-z]{2,12}\.[a-z]{2,12}@example\.com"),
}


def test_constrained_completions_match_their_spec(model):
    prompts = [
        model.chat("When did the Berlin wall fall? Give the date as YYYY-MM-DD."),
        model.chat("Sentiment of 'I love this movie'?"),
        model.chat("Give me JSON for Ada Lovelace, aged 36."),
        model.chat("Make up an email address for John Smith."),
    ]
    outs = guide.generate(model, prompts, constraint=list(SPECS.values()), max_new_tokens=48)
    for spec, o in zip(SPECS.values(), outs, strict=True):
        pattern = spec.to_regex()
        assert o.finish_reason == "constraint", (pattern, o)
        assert re.fullmatch(pattern, o.text), (pattern, o.text)
    person = json.loads(outs[2].text)
    assert set(person) == {"name", "age"}


def test_sampled_constrained_completions_match(model):
    spec = SPECS["person"]
    outs = guide.generate(
        model,
        [model.chat("Invent a person as JSON.")] * 4,
        constraint=spec,
        max_new_tokens=48,
        temperature=1.0,
        top_p=0.95,
        seed=0,
    )
    for o in outs:
        assert o.finish_reason == "constraint" and re.fullmatch(spec.pattern, o.text), o.text


def test_constrained_and_free_rows_in_one_batch(model):
    prompts = [model.chat(q) for q in ("Name a color.", "Sentiment of 'great food'?", "Say hi.")]
    mixed = guide.generate(model, prompts, constraint=[None, SPECS["choice"], None], max_new_tokens=24)
    free = guide.generate(model, prompts, max_new_tokens=24)
    assert mixed[1].text in ("positive", "negative", "neutral")
    assert mixed[0].token_ids == free[0].token_ids
    assert mixed[2].token_ids == free[2].token_ids


def test_seeds_reproduce(model):
    kw = {"max_new_tokens": 16, "temperature": 0.9, "top_k": 50, "seed": [1, 2]}
    prompts = [model.chat("Tell me a fact."), model.chat("Tell me a joke.")]
    a = guide.generate(model, prompts, **kw)
    b = guide.generate(model, prompts, **kw)
    assert a == b
    c = guide.generate(model, prompts, max_new_tokens=16, temperature=0.9, top_k=50, seed=[3, 4])
    assert [o.token_ids for o in a] != [o.token_ids for o in c]


def test_stream_equals_generate(model):
    prompt = model.chat("Write a short sentence about cats.")
    text = guide.generate(model, prompt, max_new_tokens=20)[0].text
    assert "".join(guide.stream(model, prompt, max_new_tokens=20)) == text


def test_jump_forward_saves_forward_passes(model):
    spec = fsm.Regex(
        r'\{"first_name_of_the_person": "[A-Z][a-z]{1,10}", "family_name_of_the_person": "[A-Z][a-z]{1,10}"\}'
    )
    prompt = model.chat("Give me JSON for Ada Lovelace.")
    calls = {"n": 0}
    real_decode = guide.sources.ModelSession.decode

    def counting(self, tokens, lengths=None):
        calls["n"] += 1
        return real_decode(self, tokens, lengths)

    guide.sources.ModelSession.decode = counting
    try:
        on = guide.generate(model, prompt, constraint=spec, max_new_tokens=60)[0]
        n_on = calls["n"]
        calls["n"] = 0
        off = guide.generate(model, prompt, constraint=spec, max_new_tokens=60, jump_forward=False)[0]
        n_off = calls["n"]
    finally:
        guide.sources.ModelSession.decode = real_decode
    for o in (on, off):
        assert o.finish_reason == "constraint" and re.fullmatch(spec.pattern, o.text)
    assert n_on < n_off / 2, (n_on, n_off)
    assert n_on < len(on.token_ids) / 2


def test_hf_logits_processor_with_beam_search(model):
    tok = model.tokenizer
    tok.padding_side = "left"
    prompts = [model.chat("When was Ada Lovelace born? YYYY-MM-DD."), model.chat("Today's date?")]
    enc = tok(prompts, return_tensors="pt", padding=True)
    proc = guide.LogitsProcessor(SPECS["date"], tok)
    with torch.inference_mode():
        out = model.hf.generate(
            **enc,
            logits_processor=[proc],
            max_new_tokens=12,
            num_beams=3,
            num_return_sequences=3,
            do_sample=False,
        )
    for row in out[:, enc.input_ids.shape[1] :].tolist():
        text = tok.decode(row, skip_special_tokens=True)
        assert re.fullmatch(SPECS["date"].pattern, text), text
