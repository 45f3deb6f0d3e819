"""Speculative decoding on the default model, by prompt lookup and with a draft model (the default
model truncated to its first layers): greedy output identical to plain decoding (batched, ragged
acceptance, constrained and free rows), fewer forward passes, sampled output with the constrained
target's distribution, watermarks, and the errors at the call."""

from __future__ import annotations

import math

import pytest
import torch

import fsm
import guide
from fsm.testing import accepts
from guide.speculative import prompt_lookup

RECORD = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "city": {"type": "string"}, "title": {"type": "string"}},
    "required": ["name", "city", "title"],
    "additionalProperties": False,
}
TEXTS = [
    "Dr. Ada Lovelace, chief mathematician at the Analytical Engine Company, lives in London.",
    "Alan Mathison Turing works as a senior cryptanalyst at Bletchley Park in Milton Keynes.",
    "Katherine Johnson, research mathematician at NASA Langley, resides in Hampton, Virginia.",
]


@pytest.fixture(scope="module")
def model():
    return guide.load()


@pytest.fixture(scope="module")
def index(model):
    return fsm.compile(fsm.JsonSchema(RECORD), model.vocabulary)


def test_prompt_lookup_takes_the_first_match_of_the_longest_suffix():
    assert prompt_lookup([1, 2, 3, 4, 9, 2, 3, 5, 2, 3], k=2) == [4, 9]
    assert prompt_lookup([1, 2, 3, 4, 9, 2, 3, 5, 2, 3], k=2, max_ngram=1) == [4, 9]
    assert prompt_lookup([7, 8, 1, 8, 1], k=5) == [8, 1]  # the continuation stops at the context's end
    assert prompt_lookup([1, 2, 3], k=4) == []


@pytest.mark.parametrize("jump", [True, False])
def test_greedy_speculative_equals_plain_batched(model, index, jump):
    prompts = [model.chat(f"Extract name, city and job title as JSON from: {t}") for t in TEXTS]
    prompts.append(f"Copy this sentence: {TEXTS[0]}\nCopy: Dr. Ada")  # a free row in the same batch
    constraint = [index, index, index, None]
    plain = guide.generate(model, prompts, constraint, max_new_tokens=48, jump_forward=jump)
    spec = guide.generate(model, prompts, constraint, max_new_tokens=48, jump_forward=jump, draft="prompt")
    assert [c.token_ids for c in spec] == [c.token_ids for c in plain]
    assert [c.finish_reason for c in spec] == [c.finish_reason for c in plain]
    assert [c.text for c in spec] == [c.text for c in plain]
    passes = max(c.stats.forward_passes for c in spec)
    assert passes < max(c.stats.forward_passes for c in plain)
    assert all(c.stats.accepted_draft_tokens <= c.stats.draft_tokens for c in spec)
    assert sum(c.stats.accepted_draft_tokens for c in spec) > 0
    # ragged acceptance: some drafts were cut short, so rows of one pass accepted different amounts
    assert any(c.stats.accepted_draft_tokens < c.stats.draft_tokens for c in spec)


def test_stream_with_draft_matches_generate(model):
    prompt = f"Copy this sentence: {TEXTS[1]}\nCopy: Alan"
    done = guide.generate(model, prompt, max_new_tokens=24, draft="prompt")[0]
    assert "".join(guide.stream(model, prompt, max_new_tokens=24, draft="prompt")) == done.text


def test_draft_options_are_checked(model):
    with pytest.raises(ValueError, match="draft must be one of"):
        guide.generate(model, "Hi", draft="nope")
    with pytest.raises(ValueError, match="num_draft_tokens"):
        guide.generate(model, "Hi", draft="prompt", num_draft_tokens=0)
    with pytest.raises(ValueError, match="temperature sampling only"):
        guide.generate(model, "Hi", draft="prompt", top_p=0.9)


def _chi_square_homogeneity(a: dict[str, int], b: dict[str, int]) -> tuple[float, int]:
    """Pearson's chi-square statistic of a 2 x k table and its degrees of freedom."""
    keys = sorted(set(a) | set(b))
    na, nb = sum(a.values()), sum(b.values())
    stat = 0.0
    for k in keys:
        col = a.get(k, 0) + b.get(k, 0)
        for counts, n in ((a, na), (b, nb)):
            expected = col * n / (na + nb)
            stat += (counts.get(k, 0) - expected) ** 2 / expected
    return stat, len(keys) - 1


@pytest.mark.parametrize("draft", ["prompt", "layers:20"])
def test_speculative_sampling_keeps_the_constrained_distribution(model, draft):
    # Prompt lookup drafts " pear" after " green" and " red" (the prompt's first continuation), so
    # the acceptance rule decides between " pear" and " apple" at the second token; the truncated
    # model samples its drafts from its own masked distribution q, so the rule weighs p against q.
    options = [" green apple", " green pear", " red apple", " red pear"]
    index = fsm.compile(fsm.Choice(options), model.vocabulary)
    prompt = "Fruit: green pear, green apple, red pear, red apple.\nMy pick:"
    n, temperature = 400, 1.5
    args = {"max_new_tokens": 12, "temperature": temperature, "jump_forward": False}
    plain = guide.generate(model, [prompt] * n, index, seed=0, **args)
    spec = guide.generate(model, [prompt] * n, index, seed=10_000, draft=draft, **args)
    counts: list[dict[str, int]] = [{}, {}]
    for arm, out in zip(counts, (plain, spec), strict=True):
        for c in out:
            assert c.text in options
            arm[c.text] = arm.get(c.text, 0) + 1
    assert len(counts[0]) == len(options)  # the language really is sampled
    drafted = sum(c.stats.draft_tokens for c in spec)
    accepted = sum(c.stats.accepted_draft_tokens for c in spec)
    assert 0 < accepted < drafted  # drafts were both accepted and rejected
    stat, df = _chi_square_homogeneity(*counts)
    assert stat < {1: 10.83, 2: 13.82, 3: 16.27}[df], (counts, stat)  # p = 0.001
    # The second token against the exact masked target: P(" pear" | prompt, colour) at this temperature.
    pear = model.encode(" pear")[-1]
    for colour in (" green", " red"):
        first = model.encode(colour)[-1]
        rows = [c.token_ids for c in spec if c.token_ids[0] == first]
        assert len(rows) >= 50
        matcher = index.matcher()
        matcher.advance(first)
        _, logits = model.prefill([[*model.encode(prompt), first]])
        allowed = torch.full_like(logits[0], float("-inf"))
        allowed[matcher.allowed_token_ids()] = 0.0
        p = float(torch.softmax((logits[0] + allowed) / temperature, dim=-1)[pear])
        freq = sum(r[1] == pear for r in rows) / len(rows)
        z = (freq - p) / math.sqrt(p * (1 - p) / len(rows))
        assert abs(z) < 4, (colour, p, freq, len(rows))


@pytest.fixture(scope="module")
def draft(model):
    return model.truncated(20)


def test_truncated_model_shares_the_weights(model, draft):
    assert len(draft.hf.model.layers) == 20 and draft.hf.config.num_hidden_layers == 20
    assert len(model.hf.model.layers) == model.hf.config.num_hidden_layers == 30  # the target is untouched
    assert draft.hf.model.layers[0] is model.hf.model.layers[0]
    assert draft.hf.lm_head is model.hf.lm_head and draft.vocabulary is model.vocabulary
    ids = model.encode("The capital of France is")
    _, got = draft.prefill([ids])
    with torch.inference_mode():
        hidden = model.hf.model(torch.tensor([ids]), output_hidden_states=True).hidden_states[20]
        want = model.hf.lm_head(model.hf.model.norm(hidden))[0, -1]
    assert torch.allclose(got[0], want, atol=1e-4)
    with pytest.raises(ValueError, match="n_layers"):
        model.truncated(30)


@pytest.mark.parametrize("jump", [True, False])
def test_greedy_model_draft_equals_plain_batched(model, index, draft, jump):
    prompts = [model.chat(f"Extract name, city and job title as JSON from: {t}") for t in TEXTS]
    prompts.append(f"Copy this sentence: {TEXTS[0]}\nCopy: Dr. Ada")  # a free row in the same batch
    constraint = [index, index, index, None]
    plain = guide.generate(model, prompts, constraint, max_new_tokens=40, jump_forward=jump)
    spec = guide.generate(model, prompts, constraint, max_new_tokens=40, jump_forward=jump, draft=draft)
    assert [c.token_ids for c in spec] == [c.token_ids for c in plain]
    assert [c.finish_reason for c in spec] == [c.finish_reason for c in plain]
    assert all(c.stats.draft_forward_passes > 0 for c in spec)
    assert all(c.stats.accepted_draft_tokens <= c.stats.draft_tokens for c in spec)
    assert sum(c.stats.accepted_draft_tokens for c in spec) > 0
    assert any(c.stats.accepted_draft_tokens < c.stats.draft_tokens for c in spec)  # ragged acceptance
    for c in spec[:3]:
        assert accepts(index, c.token_ids[:-1] if c.finish_reason == "eos" else c.token_ids)


def test_draft_given_as_layers_or_a_hugging_face_model(model, index, draft):
    prompt = model.chat(f"Extract name, city and job title as JSON from: {TEXTS[1]}")
    plain = guide.generate(model, prompt, index, max_new_tokens=24)[0]
    for d in ("layers:20", draft.hf):
        spec = guide.generate(model, prompt, index, max_new_tokens=24, draft=d, num_draft_tokens=4)[0]
        assert spec.token_ids == plain.token_ids
        assert spec.stats.draft_tokens > 0


@pytest.mark.parametrize("kind", ["prompt", "model"])
def test_watermark_with_drafts_equals_the_plain_marked_loop(model, index, draft, kind):
    wm = guide.Watermark(bias=4.0, hashing_key=7)
    prompts = [model.chat(f"Extract name, city and job title as JSON from: {t}") for t in TEXTS[:2]]
    prompts.append(f"Copy this sentence: {TEXTS[2]}\nCopy: Katherine")
    constraint = [index, index, None]
    d = "prompt" if kind == "prompt" else draft
    unmarked = guide.generate(model, prompts, constraint, max_new_tokens=32)
    plain = guide.generate(model, prompts, constraint, max_new_tokens=32, watermark=wm)
    spec = guide.generate(model, prompts, constraint, max_new_tokens=32, watermark=wm, draft=d)
    assert [c.token_ids for c in spec] == [c.token_ids for c in plain]
    assert [c.token_ids for c in plain] != [c.token_ids for c in unmarked]  # the bias changed greedy picks


def test_guidance_sources_refuse_drafts_and_beams_at_the_call(model):
    source = guide.ClassifierFreeGuidance(model, scale=1.5)
    with pytest.raises(guide.GuidanceError, match="speculative decoding"):
        guide.generate(source, "Hi", max_new_tokens=4, draft="prompt")
    with pytest.raises(guide.GuidanceError, match="beam search"):
        guide.generate(source, "Hi", max_new_tokens=4, num_beams=2)
    with pytest.raises(ValueError, match="truncates the target model"):
        guide.generate(guide.Prompted(model, "Say: "), "Hi", max_new_tokens=4, draft="layers:4")
    # a Prompted view's sessions are the model's own: drafts work through it
    out = guide.generate(guide.Prompted(model, "Copy: abc abc"), " abc", max_new_tokens=6, draft="prompt")[0]
    assert (
        out.token_ids
        == guide.generate(guide.Prompted(model, "Copy: abc abc"), " abc", max_new_tokens=6)[0].token_ids
    )


def test_generator_passes_draft(model):
    prompt = f"Extract name, city and job title as JSON from: {TEXTS[2]}"
    base = guide.Generator(model, RECORD, max_new_tokens=48)
    plain = base(prompt)
    for d in ("prompt", "layers:20"):
        gen = guide.Generator(model, RECORD, max_new_tokens=48, draft=d, num_draft_tokens=4)
        assert gen(prompt) == plain
        assert gen.last.token_ids == base.last.token_ids
