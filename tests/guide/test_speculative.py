"""Speculative decoding with prompt lookup on the default model: greedy output identical to plain
decoding (batched, ragged acceptance, constrained and free rows), fewer forward passes, and sampled
output with the constrained target's distribution."""

from __future__ import annotations

import pytest

import fsm
import guide
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
