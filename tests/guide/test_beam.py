"""Beam search in our batched loop on the default model: same top beam as HF beam search with our
processor, every beam valid, one forward batch; and the session's reorder/forget primitives."""

from __future__ import annotations

import pytest
import torch

import fsm
import guide
from fsm.testing import accepts

PERSON = {
    "type": "object",
    "properties": {"name": {"type": "string", "maxLength": 20}, "age": {"type": "integer"}},
    "required": ["name", "age"],
    "additionalProperties": False,
}
TEXTS = ["Ada Lovelace is 36 years old.", "Alan Turing, aged 41.", "Grace Hopper (85)", "Bob is nine."]


@pytest.fixture(scope="module")
def model():
    return guide.load()


@pytest.fixture(scope="module")
def index(model):
    return fsm.compile(fsm.JsonSchema(PERSON), model.vocabulary)


def _hf_beams(model, prompt, index, k, r, max_new, **kw):
    enc = model.tokenizer(prompt, return_tensors="pt", add_special_tokens=False)
    eos = list(model.vocabulary.eos_token_ids)
    proc = guide.LogitsProcessor(index, model.tokenizer, eos_token_ids=eos)
    out = model.hf.generate(
        **enc,
        num_beams=k,
        num_return_sequences=r,
        do_sample=False,
        max_new_tokens=max_new,
        logits_processor=[proc],
        eos_token_id=eos,
        pad_token_id=model.pad_token_id,
        output_scores=True,
        return_dict_in_generate=True,
        **kw,
    )
    seqs = []
    for row in out.sequences[:, enc.input_ids.shape[1] :].tolist():
        if any(t in eos for t in row):  # HF pads shorter beams after their EOS
            row = row[: next(i for i, t in enumerate(row) if t in eos) + 1]
        seqs.append(row)
    return seqs, out.sequences_scores.tolist()


def test_top_beam_equals_hf_beam_search_with_our_processor(model, index):
    prompts = [model.chat(f"Extract the name and age as JSON: {t}") for t in TEXTS]
    k, r = 3, 2
    ours = guide.generate(model, prompts, index, max_new_tokens=40, num_beams=k, num_return_sequences=r)
    assert len(ours) == len(prompts)
    for prompt, c in zip(prompts, ours, strict=True):
        seqs, scores = _hf_beams(model, prompt, index, k, r, 40)
        assert c.token_ids == seqs[0]
        assert c.score == pytest.approx(scores[0], abs=1e-3)
        assert len(c.beams) == r
        assert [b.score for b in c.beams] == sorted((b.score for b in c.beams), reverse=True)
        for b in c.beams:  # every returned beam is a complete, valid value
            assert b.finish_reason == "eos"
            assert accepts(index, b.token_ids[:-1])


def test_length_penalty_and_early_stopping_follow_hf(model, index):
    prompt = model.chat("Extract the name and age as JSON: Marie Curie was 66.")
    for lp, es in [(0.0, True), (2.0, "never")]:
        c = guide.generate(
            model, prompt, index, max_new_tokens=40, num_beams=4, length_penalty=lp, early_stopping=es
        )[0]
        seqs, scores = _hf_beams(model, prompt, index, 4, 1, 40, length_penalty=lp, early_stopping=es)
        assert c.token_ids == seqs[0]
        assert c.score == pytest.approx(scores[0], abs=1e-3)


def test_beams_share_one_forward_batch(model, index):
    prompts = [model.chat(f"Extract the name and age as JSON: {t}") for t in TEXTS[:2]]
    forwards = []
    hook = model.hf.register_forward_hook(
        lambda mod, args, kwargs, out: forwards.append(kwargs["input_ids"].shape[0]), with_kwargs=True
    )
    try:
        out = guide.generate(model, prompts, index, max_new_tokens=40, num_beams=3)
    finally:
        hook.remove()
    assert forwards[0] == 2  # one prefill per prompt, not per beam
    assert max(forwards[1:]) == 2 * 3  # then every beam of every prompt in one batch
    assert len(forwards) == max(c.stats.forward_passes for c in out)


def test_budget_ends_beams_with_length(model):
    c = guide.generate(model, "Count: 1, 2, 3,", None, max_new_tokens=5, num_beams=2)[0]
    assert c.finish_reason in ("length", "eos")
    assert len(c.token_ids) <= 5
    assert guide.generate(model, "Hi", None, max_new_tokens=0, num_beams=2)[0].token_ids == []


def test_generator_num_beams(model):
    gen = guide.Generator(model, guide.Choice(["Paris", "London", "Rome"]), num_beams=3)
    assert gen("What is the capital of France?") in ("Paris", "London", "Rome")
    want = guide.generate(model, gen.last.prompt, gen.index, num_beams=3)[0]
    assert gen.last.token_ids == want.token_ids


def test_beam_options_are_checked(model):
    with pytest.raises(ValueError, match="num_return_sequences"):
        guide.generate(model, "Hi", None, num_beams=2, num_return_sequences=3)
    with pytest.raises(ValueError, match="early_stopping"):
        guide.generate(model, "Hi", None, num_beams=2, early_stopping="sometimes")
    with pytest.raises(ValueError, match="sampling options"):
        guide.generate(model, "Hi", None, num_beams=2, temperature=0.7)
    with pytest.raises(ValueError, match="stop strings"):
        guide.generate(model, "Hi", None, num_beams=2, stop="\n")


def test_session_reorder_and_forget(model):
    prompts = [model.encode("The cat sat on"), model.encode("Hello")]
    session, _ = model.prefill(prompts)
    session.reorder(torch.tensor([1, 0, 0]))
    step = session.decode(torch.tensor([[5], [6], [7]]))
    _, want = model.prefill([prompts[1] + [5], prompts[0] + [6], prompts[0] + [7]])
    assert torch.allclose(step, want, atol=1e-3)
    # forget: extend by a ragged draft, drop the rejected tail, and continue as if never fed
    session, _ = model.prefill(prompts)
    all_logits = session.extend(torch.tensor([[11, 12, 13], [21, 22, 0]]), torch.tensor([3, 2]))
    assert all_logits.shape[:2] == (2, 3)
    session.forget(torch.tensor([2, 1]))  # row 0 keeps 11, row 1 keeps 21
    got = session.decode(torch.tensor([[14], [24]]))
    ref, _ = model.prefill([prompts[0] + [11], prompts[1] + [21]])
    want = ref.decode(torch.tensor([[14], [24]]))
    assert torch.allclose(got, want, atol=1e-3)


def test_watermarked_beams_equal_hf_beam_search_with_its_watermark(model, index):
    # HF runs its watermark processor on the log-probs each beam's score sums; ours adds the same bias
    wm = guide.Watermark(bias=3.0, hashing_key=11)
    prompts = [model.chat(f"Extract the name and age as JSON: {t}") for t in TEXTS[:2]]
    ours = guide.generate(model, prompts, index, max_new_tokens=30, num_beams=3, watermark=wm)
    plain = guide.generate(model, prompts, index, max_new_tokens=30, num_beams=3)
    for prompt, c in zip(prompts, ours, strict=True):
        seqs, scores = _hf_beams(model, prompt, index, 3, 1, 30, watermarking_config=wm.to_hf())
        assert c.token_ids == seqs[0]
        assert c.score == pytest.approx(scores[0], abs=1e-3)
        assert accepts(index, c.token_ids[:-1])
    assert [c.score for c in ours] != [c.score for c in plain]  # the bias is in the scores
