"""The generate loop on a tiny random Llama with the real tokenizer: sessions, constraints, stops,
streaming, jump-forward, seeds, custom sources and errors."""

from __future__ import annotations

import inspect
import re
import warnings

import pytest
import torch

import fsm
import guide
from guide.sampling import InvalidLogitsError
from guide.sources import cache_kwarg

from .tiny_models import tiny_llama


@pytest.fixture(scope="module")
def model(tokenizer):
    return guide.Model.from_hf(tiny_llama(), tokenizer, pack_weights=False)


class CountingSource:
    """A LogitsSource wrapping a model: counts forward passes and can scale or poison logits."""

    def __init__(self, inner, scale: float = 1.0, poison_at: int | None = None):
        self.inner, self.scale, self.poison_at = inner, scale, poison_at
        self.vocabulary, self.tokenizer = inner.vocabulary, inner.tokenizer
        self.forwards = 0

    @property
    def device(self):
        return self.inner.device

    def encode(self, text):
        return self.inner.encode(text)

    def prefill(self, prompts):
        session, logits = self.inner.prefill(prompts)
        self.forwards += 1
        return _CountingSession(self, session), logits * self.scale


class _CountingSession:
    def __init__(self, source, inner):
        self.source, self.inner = source, inner

    @property
    def n_rows(self):
        return self.inner.n_rows

    def decode(self, tokens, lengths=None):
        self.source.forwards += 1
        logits = self.inner.decode(tokens, lengths) * self.source.scale
        if self.source.poison_at is not None and self.source.forwards >= self.source.poison_at:
            logits[0, 5] = float("nan")
        return logits

    def keep(self, rows):
        self.inner.keep(rows)


def _replay(index, ids):
    """Every generated token must be allowed by a fresh matcher, in order."""
    m = index.matcher()
    for t in ids:
        m.advance(t)
    return m


# -- sessions --------------------------------------------------------------------------------------


def test_left_padded_prefill_matches_single_rows(model):
    a, b = model.encode("The quick brown fox jumps"), model.encode("Hi")
    _, both = model.prefill([a, b])
    _, la = model.prefill([a])
    _, lb = model.prefill([b])
    assert torch.allclose(both[0], la[0], atol=1e-5)
    assert torch.allclose(both[1], lb[0], atol=1e-5)


def test_ragged_multi_token_decode_matches_stepwise(model):
    a, b = model.encode("One two"), model.encode("Three four five")
    s, _ = model.prefill([a, b])
    got = s.decode(torch.tensor([[11, 12, 13], [21, 0, 0]]), torch.tensor([3, 1]))
    got2 = s.decode(torch.tensor([[14], [22]]))
    sa, _ = model.prefill([a])
    for t in (11, 12):
        sa.decode(torch.tensor([[t]]))
    wa = sa.decode(torch.tensor([[13]]))
    wa2 = sa.decode(torch.tensor([[14]]))
    sb, _ = model.prefill([b])
    wb = sb.decode(torch.tensor([[21]]))
    wb2 = sb.decode(torch.tensor([[22]]))
    assert torch.allclose(got[0], wa[0], atol=1e-5) and torch.allclose(got[1], wb[0], atol=1e-5)
    assert torch.allclose(got2[0], wa2[0], atol=1e-5) and torch.allclose(got2[1], wb2[0], atol=1e-5)


def test_keep_drops_rows_and_trims_padding(model):
    p = [
        model.encode("short"),
        model.encode("a much longer prompt than the others here"),
        model.encode("mid size one"),
    ]
    s, _ = model.prefill(p)
    s.keep(torch.tensor([0, 2]))
    assert s.n_rows == 2
    assert s.mask is None or s.mask.shape[1] < s.cache.get_seq_length() + 1
    got = s.decode(torch.tensor([[5], [6]]))
    ref, _ = model.prefill([p[0], p[2]])
    want = ref.decode(torch.tensor([[5], [6]]))
    assert torch.allclose(got, want, atol=1e-5)


# -- the loop --------------------------------------------------------------------------------------


def test_greedy_matches_hf_generate_with_padding(model):
    prompts = ["Hello there", "A much longer prompt, with more tokens in it", "x"]
    outs = guide.generate(model, prompts, max_new_tokens=12)
    tok = model.tokenizer
    tok.padding_side = "left"
    enc = tok(prompts, return_tensors="pt", padding=True)
    with torch.inference_mode():
        ref = model.hf.generate(**enc, max_new_tokens=12, do_sample=False, min_new_tokens=12)
    for i, o in enumerate(outs):
        assert o.finish_reason == "length"
        assert o.token_ids == ref[i, enc.input_ids.shape[1] :].tolist()


def test_token_id_prompts_equal_string_prompts(model):
    a = guide.generate(model, ["Hello there", "x"], max_new_tokens=6)
    b = guide.generate(model, [model.encode("Hello there"), model.encode("x")], max_new_tokens=6)
    assert [o.token_ids for o in a] == [o.token_ids for o in b]
    single = guide.generate(model, "Hello there", max_new_tokens=6)
    assert single[0].token_ids == a[0].token_ids


PATTERNS = [
    r"[a-z]{3,8}@(gmail|yahoo)\.com",
    r"(red|green|blue) (cat|dog)",
    r"\d{4}-\d{2}-\d{2}",
    r'\{"id": \d{1,3}, "ok": (true|false)\}',
    r"(é|ü|日本|🙂){2,4}!",
]


@pytest.mark.parametrize("jump", [True, False])
def test_sampled_constrained_rows_match_their_spec(model, jump):
    specs = [fsm.Regex(p) for p in PATTERNS]
    outs = guide.generate(
        model,
        ["Write:"] * len(specs),
        constraint=specs,
        max_new_tokens=60,
        temperature=1.5,
        seed=0,
        jump_forward=jump,
    )
    for spec, o in zip(specs, outs, strict=True):
        assert o.finish_reason == "constraint", (spec, o)
        assert re.fullmatch(spec.pattern, o.text), (spec.pattern, o.text)
        m = _replay(fsm.compile(spec, model.vocabulary), o.token_ids)
        assert m.is_finished()


def test_constrained_and_free_rows_mix(model):
    spec = fsm.Regex(r"(yes|no)")
    prompts = ["Question one?", "Free text here", "Question two?"]
    mixed = guide.generate(model, prompts, constraint=[spec, None, spec], max_new_tokens=8)
    assert mixed[0].text in ("yes", "no") and mixed[2].text in ("yes", "no")
    assert mixed[1].finish_reason == "length" and len(mixed[1].token_ids) == 8
    free = guide.generate(model, prompts, max_new_tokens=8)
    assert mixed[1].token_ids == free[1].token_ids  # the free row is unaffected by its neighbours


def test_eos_finish_and_text(model):
    eos = model.vocabulary.eos_token_ids[0]
    out = guide.generate(model, "Hi", max_new_tokens=5, logit_bias={eos: 1e4})[0]
    assert out == guide.Completion("", [eos], "eos")


def test_eos_allowed_only_when_constraint_accepts(model):
    eos = model.vocabulary.eos_token_ids[0]
    outs = guide.generate(
        model,
        ["a", "b"],
        constraint=fsm.Regex(r"[a-z]{2,4}( [a-z]{2,4})*"),
        max_new_tokens=30,
        logit_bias={eos: 50.0},
        temperature=1.0,
        seed=3,
    )
    for o in outs:
        assert o.finish_reason == "eos" and o.token_ids[-1] == eos
        assert re.fullmatch(r"[a-z]{2,4}( [a-z]{2,4})*", o.text)


def test_length_and_zero_budget(model):
    o = guide.generate(model, ["a", "b"], max_new_tokens=[3, 0])
    assert len(o[0].token_ids) == 3 and o[0].finish_reason == "length"
    assert o[1] == guide.Completion("", [], "length")


def test_spec_complete_before_any_token(model):
    src = CountingSource(model)
    out = guide.generate(src, "a", constraint=fsm.Regex(""), max_new_tokens=5)[0]
    assert out == guide.Completion("", [], "constraint") and src.forwards == 0


def test_stop_string_cuts_text(model):
    spec = fsm.Regex(r"abc STOP def")
    out = guide.generate(model, "go", constraint=spec, stop=["STOP"], max_new_tokens=20)[0]
    assert out.finish_reason == "stop" and out.text == "abc "
    free = guide.generate(model, "go", stop="e", max_new_tokens=40, temperature=2.0, seed=1)[0]
    assert "e" not in free.text


def test_stream_matches_generate_and_is_utf8_safe(model):
    spec = fsm.Regex(r"(é|ü|日本|🙂){3,6}\.")
    kw = {"constraint": spec, "max_new_tokens": 60, "temperature": 1.5, "seed": 5}
    full = guide.generate(model, "x", **kw)[0]
    pieces = []
    gen = guide.stream(model, "x", **kw)
    while True:
        try:
            pieces.append(next(gen))
        except StopIteration as stop:
            assert stop.value == [full]  # the stream hands back its Completion
            break
    assert "".join(pieces) == full.text
    assert all("\ufffd" not in p for p in pieces)
    assert len(full.text.encode()) > len(full.text)  # really multi-byte


def test_stream_batch_and_stop(model):
    got: dict[int, str] = {0: "", 1: ""}
    for i, piece in guide.stream(model, ["a", "b"], max_new_tokens=30, temperature=2.0, seed=2, stop="e"):
        got[i] += piece
        assert "e" not in got[i]
    want = guide.generate(model, ["a", "b"], max_new_tokens=30, temperature=2.0, seed=2, stop="e")
    assert [got[0], got[1]] == [o.text for o in want]


def test_jump_forward_uses_fewer_passes_and_canonical_tokens(model):
    spec = fsm.Regex(r'\{"firstname": "[a-z]{2,6}", "lastname": "[a-z]{2,6}"\}')
    on, off = CountingSource(model), CountingSource(model)
    a = guide.generate(on, "Person:", constraint=spec, max_new_tokens=60, jump_forward=True)[0]
    b = guide.generate(off, "Person:", constraint=spec, max_new_tokens=60, jump_forward=False)[0]
    for o in (a, b):
        assert o.finish_reason == "constraint" and re.fullmatch(spec.pattern, o.text)
    assert on.forwards < off.forwards
    canon = model.tokenizer.encode('{"firstname": "', add_special_tokens=False)
    assert a.token_ids[: len(canon) - 1] == canon[:-1]


def test_seeds_reproduce(model):
    kw = {"max_new_tokens": 10, "temperature": 1.0, "top_p": 0.95}
    a = guide.generate(model, ["a", "b"], seed=42, **kw)
    b = guide.generate(model, ["a", "b"], seed=42, **kw)
    c = guide.generate(model, ["a", "b"], seed=43, **kw)
    assert a == b
    assert a != c


def test_per_row_sampling_params(model):
    outs = guide.generate(model, ["a", "a"], max_new_tokens=8, temperature=[0, 2.0], seed=[None, 9])
    greedy = guide.generate(model, "a", max_new_tokens=8)[0]
    assert outs[0].token_ids == greedy.token_ids
    assert outs[1].token_ids != greedy.token_ids


def test_custom_source_is_used(model):
    # Scaling logits by 2 keeps greedy choices: a combination source works through the same protocol.
    src = CountingSource(model, scale=2.0)
    assert isinstance(src, guide.LogitsSource)
    a = guide.generate(src, "Hello", max_new_tokens=5)
    assert a[0].token_ids == guide.generate(model, "Hello", max_new_tokens=5)[0].token_ids
    assert src.forwards == 5


def test_nan_logits_raise(model):
    with pytest.raises(InvalidLogitsError, match="NaN"):
        guide.generate(CountingSource(model, poison_at=2), "Hello", max_new_tokens=5)


def test_input_errors(model, tokenizer):
    with pytest.raises(fsm.SpecError, match="plain string"):
        guide.generate(model, "a", constraint=r"\d+")
    other = fsm.Vocabulary.from_tokenizer(tokenizer, eos_token_ids=[0])
    with pytest.raises(fsm.VocabularyError, match="different vocabulary"):
        guide.generate(model, "a", constraint=fsm.compile(fsm.Regex("a"), other))
    with pytest.raises(ValueError, match="2 entries for 1 prompts"):
        guide.generate(model, ["a"], constraint=[None, None])
    with pytest.raises(ValueError, match="prompt 1 is empty"):
        guide.generate(model, ["a", []])
    with pytest.raises(ValueError, match="at least one prompt"):
        guide.generate(model, [])
    with pytest.raises(TypeError, match="prompts must be"):
        guide.generate(model, 5)
    with pytest.raises(ValueError, match="max_new_tokens"):
        guide.generate(model, "a", max_new_tokens=-1)
    with pytest.raises(ValueError, match="outside the vocabulary"):
        guide.generate(model, [[1, 10**6]])
    with pytest.raises(TypeError, match="unknown sampling parameter"):
        guide.generate(model, "a", temprature=0.5)


# -- the transformers cache API ------------------------------------------------------------------


def test_loop_uses_the_current_cache_api_without_deprecation_warnings(model):
    """Prefill, ragged jump-forward decodes and rows leaving the batch pass the KV cache the way the
    installed transformers expects: no FutureWarning/DeprecationWarning is raised on the way."""
    prompts = ["Name: ", "A much longer prompt, left-padded against the short one: "]
    constraint = [fsm.Regex(r'\{"a": "[a-z]{1,6}"\}'), None]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = guide.generate(model, prompts, constraint, max_new_tokens=[12, 3], seed=0)
    assert [c.finish_reason for c in out] and out[1].finish_reason == "length"
    noisy = [w for w in caught if issubclass(w.category, (FutureWarning, DeprecationWarning))]
    assert not noisy, [str(w.message) for w in noisy]
    params = inspect.signature(model.hf.forward).parameters
    assert cache_kwarg(model.hf) == ("cache" if "cache" in params else "past_key_values")


def test_generate_and_stream_share_one_signature():
    gen, st = inspect.signature(guide.generate), inspect.signature(guide.stream)
    assert list(gen.parameters.values()) == list(st.parameters.values())
    assert gen.return_annotation == "list[Completion]"
    for name in ("prompts", "constraint", "max_new_tokens", "stop", "seed", "jump_forward", "sampling"):
        assert f"``{name}``" in guide.generate.__doc__ and f"``{name}``" in guide.stream.__doc__


def test_generate_returns_what_stream_returns(model):
    prompts = ["Count: 1, 2,", "Colors:"]
    want = guide.generate(model, prompts, max_new_tokens=6, seed=3, temperature=0.8, stop=",")
    pieces = guide.stream(model, prompts, max_new_tokens=6, seed=3, temperature=0.8, stop=",")
    texts = ["", ""]
    try:
        while True:
            i, piece = next(pieces)
            texts[i] += piece
    except StopIteration as done:
        got = done.value
    assert got == want and texts == [c.text for c in want]
