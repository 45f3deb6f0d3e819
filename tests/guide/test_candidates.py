"""Generator.candidates: n validated values for one prompt, ranked by log-prob, MBR or vote."""

from __future__ import annotations

import math
from typing import Literal

import pytest
from pydantic import BaseModel, Field

import guide
from guide.candidates import Candidate, mbr_scores, rank_candidates, value_utility


class City(BaseModel):
    name: str = Field(max_length=20)
    country: str = Field(max_length=20)
    population_millions: int = Field(ge=0, le=100)


PROMPT = "Give the capital of France as JSON with its country and population in millions."


@pytest.fixture(scope="module")
def model():
    return guide.load()


@pytest.mark.parametrize("rank", ["logprob", "mbr", "vote"])
def test_candidates_are_valid_and_ranked(model, rank):
    gen = guide.Generator(model, City)
    cands = gen.candidates(PROMPT, n=6, temperature=1.0, seed=11, rank=rank, max_new_tokens=80)
    assert 1 <= len(cands) <= 6 and len(gen.last) == 6
    assert all(isinstance(c.value, City) for c in cands)
    assert all(City.model_validate_json(c.text) == c.value for c in cands)
    assert all(c.logprob < 0 and math.isfinite(c.logprob) for c in cands)
    keys = [(c.score, c.logprob) for c in cands]
    assert keys == sorted(keys, reverse=True)
    if rank == "logprob":
        assert [c.score for c in cands] == [c.logprob for c in cands]
    if rank == "mbr":
        values = [c.value for c in cands]
        assert [c.score for c in cands] == pytest.approx(mbr_scores(values, value_utility))


def test_candidate_logprob_is_the_constrained_model_logprob(model):
    # one candidate per seed equals the plain generate call with the same seed, log-prob included
    gen = guide.Generator(model, Literal["red", "green", "blue"])
    cands = gen.candidates("Pick a colour:", n=4, seed=5, raw=True)
    outs = guide.generate(model, ["Pick a colour:"] * 4, gen.index, seed=5, temperature=1.0)
    assert sorted(c.logprob for c in cands) == pytest.approx(sorted(o.logprob for o in outs), abs=1e-4)
    # three choices: the log-probs of distinct values sum to at most one in probability
    distinct = {c.value: c.logprob for c in cands}
    assert sum(math.exp(lp) for lp in distinct.values()) <= 1 + 1e-4


def test_vote_and_mbr_pick_the_consensus_over_the_likeliest_outlier():
    cands = [
        Candidate({"a": 1, "b": "x"}, "", 0, -3.0),
        Candidate({"a": 1, "b": "x"}, "", 0, -3.1),
        Candidate({"a": 1, "b": "y"}, "", 0, -2.9),
        Candidate({"a": 9, "b": "z"}, "", 0, -0.1),
    ]
    assert rank_candidates(cands, "logprob")[0].value == {"a": 9, "b": "z"}
    assert rank_candidates(cands, "vote")[0].value == {"a": 1, "b": "x"}
    assert rank_candidates(cands, "mbr")[0].value == {"a": 1, "b": "x"}
    exact = rank_candidates(cands, "mbr", utility=lambda u, v: float(u == v))
    assert exact[0].score == pytest.approx(1 / 3)


def test_bad_rank_and_n_fail_before_generating(model):
    gen = guide.Generator(model, int)
    with pytest.raises(ValueError, match="rank must be one of"):
        gen.candidates("1+1=", rank="best")
    with pytest.raises(ValueError, match="n must be"):
        gen.candidates("1+1=", n=0)
    with pytest.raises(ValueError, match="only used by rank='mbr'"):
        gen.candidates("1+1=", rank="vote", utility=value_utility)
