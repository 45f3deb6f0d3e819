"""Samplers: filters agree with HF's warpers, masks are never escaped, seeds reproduce, errors are clear."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from transformers.generation.logits_process import (
    MinPLogitsWarper,
    RepetitionPenaltyLogitsProcessor,
    TopKLogitsWarper,
    TopPLogitsWarper,
    TypicalLogitsWarper,
)

from guide.sampling import (
    InvalidLogitsError,
    Sampler,
    SamplingError,
    SamplingParams,
    check_logits,
    sampling_params,
    seed_list,
)
from guide.truncation import min_p_filter, top_k_filter, top_p_filter, typical_filter

CPU = torch.device("cpu")
NEG = float("-inf")


def _kept(x: torch.Tensor) -> torch.Tensor:
    return torch.isfinite(x)


@pytest.fixture()
def logits():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(6, 500, generator=g) * 3
    x[1, 100:] = NEG  # a constrained row
    return x


def test_top_k_matches_hf(logits):
    k = torch.tensor([1, 5, 40, 3, 499, 500])
    ours = top_k_filter(logits.clone(), k, None)
    for r in range(6):
        ref = TopKLogitsWarper(int(k[r]))(None, logits[r : r + 1].clone())
        assert torch.equal(_kept(ours[r]), _kept(ref[0])), r


@pytest.mark.parametrize("p", [0.05, 0.5, 0.9, 0.99])
def test_top_p_matches_hf(logits, p):
    ours = top_p_filter(logits.clone(), torch.full((6,), p), None)
    ref = TopPLogitsWarper(p)(None, logits.clone())
    assert torch.equal(_kept(ours), _kept(ref))


@pytest.mark.parametrize("p", [0.3, 0.9])
def test_top_p_wide_vocab_both_paths_match_hf(p):
    # peaked rows find their nucleus among the top candidates; flat rows need the full sort
    g = torch.Generator().manual_seed(9)
    x = torch.randn(4, 5000, generator=g) * torch.tensor([[8.0], [6.0], [0.05], [0.01]])
    ours = top_p_filter(x.clone(), torch.full((4,), p), None)
    ref = TopPLogitsWarper(p)(None, x.clone())
    assert torch.equal(_kept(ours), _kept(ref))
    assert _kept(ref[3]).sum() > 1024  # really exercised the wide path


@pytest.mark.parametrize("p", [0.01, 0.1, 0.5])
def test_min_p_matches_hf(logits, p):
    ours = min_p_filter(logits.clone(), torch.full((6,), p), None)
    ref = MinPLogitsWarper(p)(None, logits.clone())
    assert torch.equal(_kept(ours), _kept(ref))


@pytest.mark.parametrize("mass", [0.2, 0.9, 0.95])
def test_typical_matches_hf(logits, mass):
    ours = typical_filter(logits.clone(), torch.full((6,), mass), None)
    ref = TypicalLogitsWarper(mass)(None, logits.clone())
    assert torch.equal(_kept(ours), _kept(ref))


def test_filters_leave_disabled_rows_alone(logits):
    on = torch.tensor([True, False, True, False, True, False])
    out = top_p_filter(logits.clone(), torch.full((6,), 0.3), on)
    for r in range(6):
        if not on[r]:
            assert torch.equal(out[r], logits[r])
        else:
            assert _kept(out[r]).sum() < _kept(logits[r]).sum()


def test_repetition_penalty_matches_hf():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(2, 50, generator=g)
    prompts = [[1, 2, 3], [4, 4, 10]]
    s = Sampler([SamplingParams(repetition_penalty=1.3)] * 2, 50, CPU, prompts=prompts)
    s.observe(torch.tensor([[7], [8]]))
    got = s(x.clone())
    ref = RepetitionPenaltyLogitsProcessor(1.3)(torch.tensor([[1, 2, 3, 7], [4, 4, 10, 8]]), x.clone())
    assert torch.equal(got, ref.argmax(-1))


def test_frequency_and_presence_penalties():
    x = torch.zeros(1, 5)
    x[0, 2] = 1.0
    s = Sampler([SamplingParams(frequency_penalty=0.4, presence_penalty=0.3)], 5, CPU)
    s.observe(torch.tensor([[2, 2, 0]]), torch.tensor([2]))  # token 0 is padding: not counted
    assert s(x.clone()).tolist() == [0]  # token 2: 1 - 2*0.4 - 0.3 = -0.1 < 0
    s2 = Sampler([SamplingParams(frequency_penalty=0.4, presence_penalty=0.3)], 5, CPU)
    s2.observe(torch.tensor([[2]]))
    assert s2(x.clone()).tolist() == [2]  # 1 - 0.4 - 0.3 = 0.3 > 0


def test_logit_bias_per_row():
    x = torch.zeros(2, 4)
    s = Sampler(sampling_params(2, logit_bias=[{3: 5.0}, {1: 2.0}]), 4, CPU)
    assert s(x).tolist() == [3, 1]


def test_bias_that_bans_every_allowed_token_raises():
    x = torch.full((2, 4), NEG)
    x[:, 0] = 0.0  # the only allowed token
    s = Sampler(sampling_params(2, logit_bias=[None, {0: NEG}]), 4, CPU)
    with pytest.raises(SamplingError, match=r"row\(s\) \[1\]"):
        s(x)


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_invalid_logits_raise(bad):
    x = torch.zeros(3, 8)
    x[2, 5] = bad
    with pytest.raises(InvalidLogitsError, match=r"row\(s\) \[2\]"):
        check_logits(x)
    check_logits(torch.tensor([[0.0, NEG]]))  # -inf is a legitimate ban


def test_greedy_is_argmax_and_default():
    g = torch.Generator().manual_seed(3)
    x = torch.randn(4, 100, generator=g)
    params = sampling_params(4)
    assert all(p.greedy for p in params)
    assert torch.equal(Sampler(params, 100, CPU)(x.clone()), x.argmax(-1))


def test_temperature_default_rules():
    assert SamplingParams(top_p=0.9).effective_temperature == 1.0
    assert SamplingParams(mirostat_tau=3.0).effective_temperature == 1.0
    assert SamplingParams().effective_temperature == 0.0
    assert sampling_params(1, seed=3)[0].effective_temperature == 1.0
    assert sampling_params(1, seed=3, temperature=0)[0].greedy


def test_sampling_follows_the_distribution():
    n = 4000
    probs = torch.tensor([0.5, 0.3, 0.15, 0.05])
    x = probs.log().repeat(n, 1)
    s = Sampler(sampling_params(n, temperature=1.0), 4, CPU, seeds=seed_list(n, 0))
    counts = torch.bincount(s(x), minlength=4).float() / n
    # 4000 draws: standard error <= 0.008; 5 sigma bound
    assert torch.allclose(counts, probs, atol=0.04), counts


def test_temperature_sharpens():
    n = 2000
    x = torch.tensor([1.0, 0.0]).repeat(n, 1)
    hot = Sampler(sampling_params(n, temperature=2.0), 2, CPU, seeds=seed_list(n, 0))(x.clone())
    cold = Sampler(sampling_params(n, temperature=0.25), 2, CPU, seeds=seed_list(n, 0))(x.clone())
    assert (cold == 0).float().mean() > (hot == 0).float().mean() + 0.2


def test_seeds_reproduce_and_differ():
    g = torch.Generator().manual_seed(5)
    x = torch.randn(50, 300, generator=g)
    a = Sampler(sampling_params(50, temperature=1.0), 300, CPU, seeds=seed_list(50, 7))(x.clone())
    b = Sampler(sampling_params(50, temperature=1.0), 300, CPU, seeds=seed_list(50, 7))(x.clone())
    c = Sampler(sampling_params(50, temperature=1.0), 300, CPU, seeds=seed_list(50, 8))(x.clone())
    assert torch.equal(a, b)
    assert not torch.equal(a, c)


def test_row_stream_independent_of_batch_neighbours():
    g = torch.Generator().manual_seed(6)
    x = torch.randn(3, 300, generator=g)
    both = Sampler(sampling_params(3, temperature=1.0), 300, CPU, seeds=[11, 12, 13])
    alone = Sampler(sampling_params(1, temperature=1.0), 300, CPU, seeds=[12])
    for _ in range(5):
        assert both(x.clone())[1] == alone(x[1:2].clone())[0]


def test_mirostat_truncates_and_adapts():
    n = 300
    g = torch.Generator().manual_seed(2)
    x = torch.randn(1, 1000, generator=g).repeat(n, 1) * 2
    tau = 3.0
    s = Sampler(sampling_params(n, mirostat_tau=tau, mirostat_eta=0.5), 1000, CPU, seeds=seed_list(n, 0))
    mu0 = s.mu.clone()
    logp2 = torch.log_softmax(x[0], -1) / math.log(2)
    tok = s(x.clone())
    surprise = -logp2[tok]
    assert bool((surprise <= mu0 + 1e-4).all()), "a token above the surprise cut was drawn"
    assert not torch.equal(s.mu, mu0)
    # mu -= eta * (observed - tau), observed on the truncated, renormalised distribution
    kept_mass = torch.exp2(logp2[-logp2 <= mu0[0]]).sum()
    observed = surprise + torch.log2(kept_mass)
    assert torch.allclose(s.mu, mu0 - 0.5 * (observed - tau), atol=1e-4)


def test_keep_compacts_all_state():
    g = torch.Generator().manual_seed(4)
    x = torch.randn(3, 200, generator=g)
    params = sampling_params(3, temperature=[0, 1.0, 0], top_k=[0, 1, 0], logit_bias=[None, None, {7: 100.0}])
    s = Sampler(params, 200, CPU, seeds=[1, 2, 3])
    s.keep(torch.tensor([1, 2]))
    out = s(x[1:].clone())
    assert out.tolist() == [int(x[1].argmax()), 7]


def test_param_errors():
    with pytest.raises(TypeError, match="unknown sampling parameter"):
        sampling_params(1, top_q=0.5)
    with pytest.raises(SamplingError, match="top_p"):
        Sampler(sampling_params(1, top_p=1.5), 10, CPU)
    with pytest.raises(SamplingError, match="2 values for 3 prompts"):
        sampling_params(3, temperature=[0.5, 0.5])
    with pytest.raises(SamplingError, match="repetition_penalty"):
        Sampler(sampling_params(1, repetition_penalty=0), 10, CPU)
    with pytest.raises(SamplingError, match="outside the vocabulary"):
        Sampler(sampling_params(1, logit_bias={10: 1.0}), 10, CPU)
    with pytest.raises(SamplingError, match="seed has 1 values"):
        seed_list(2, [1])


@settings(max_examples=40, deadline=None)
@given(
    allowed=st.sets(st.integers(0, 63), min_size=1, max_size=10),
    temperature=st.sampled_from([0.0, 0.3, 1.0, 5.0]),
    top_k=st.integers(0, 70),
    top_p=st.sampled_from([1.0, 0.5, 0.01]),
    min_p=st.sampled_from([0.0, 0.2]),
    typical_p=st.sampled_from([1.0, 0.5]),
    mirostat=st.sampled_from([None, 1.0]),
    biased=st.integers(0, 63),
    seed=st.integers(0, 1000),
)
def test_masked_tokens_are_never_drawn(
    allowed, temperature, top_k, top_p, min_p, typical_p, mirostat, biased, seed
):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(8, 64, generator=g) * 4
    banned = torch.ones(64, dtype=torch.bool)
    banned[list(allowed)] = False
    x[:, banned] = NEG
    params = sampling_params(
        8,
        temperature=temperature,
        top_k=top_k,
        top_p=top_p,
        min_p=min_p,
        typical_p=typical_p,
        mirostat_tau=mirostat,
        logit_bias={biased: 1e6},
        frequency_penalty=-50.0,
        repetition_penalty=0.5,
    )
    s = Sampler(params, 64, CPU, seeds=seed_list(8, seed), prompts=[[biased]] * 8)
    s.observe(torch.tensor([[biased]] * 8))
    for _ in range(3):
        tok = s(x.clone())
        assert set(tok.tolist()) <= allowed
        s.observe(tok[:, None])
