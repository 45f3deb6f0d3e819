"""Guidance sources on the real default model: each method's greedy tokens in the generate loop equal a
reference recomputed step by step from plain cache-free forward passes, with the formula written out
again here; degenerate settings equal the plain model; constraints compose; vocabularies are checked."""

from __future__ import annotations

import math
import re
from typing import Literal

import pytest
import torch
from pydantic import BaseModel, Field
from transformers import LlamaConfig, LlamaForSequenceClassification

import fsm
import guide
from guide.guidance import (
    ClassifierFreeGuidance,
    ClassifierGuidance,
    Contrastive,
    DExperts,
    GuidanceError,
    Prompted,
    ProxyTuning,
    VocabularyMismatch,
    nucleus_filter,
    shared_width,
)

from .tiny_models import tiny_llama

torch.set_num_threads(1)

PROMPTS = ["The movie was", "Yesterday my neighbour told me that the food at the new place", "Honestly, I"]
BUDGETS = [12, 14, 13]  # rows leave the batch at different steps: exercises keep() on every session
STEPS = max(BUDGETS)
POS = "The following text is extremely positive, happy and joyful:\n"
NEG = "The following text is extremely negative, angry and sad:\n"
NEG_INF = float("-inf")


@pytest.fixture(scope="module")
def model():
    return guide.load()


@pytest.fixture(scope="module")
def plain(model):
    """The plain model's greedy tokens in the loop (EOS banned)."""
    return loop_tokens(model, PROMPTS)[0]


@pytest.fixture(scope="module")
def prompt_ids(model):
    return [model.tokenizer.encode(p) for p in PROMPTS]


# -- the reference: cache-free forwards ----------------------------------------------------------------


def all_logits(hf, seqs: list[list[int]], starts: list[int], counts: list[int]) -> list[torch.Tensor]:
    """For each sequence, the next-token logits after each of its prefixes ``seq[:starts[r] + t]``,
    t < counts[r], from one plain forward pass with no cache. Right padding needs no mask: under causal
    attention a real token never sees the padding after it, so position i's logits are those of a
    full recompute of ``seq[:i + 1]``."""
    width = max(len(s) for s in seqs)
    ids = torch.zeros((len(seqs), width), dtype=torch.long)
    for r, s in enumerate(seqs):
        ids[r, : len(s)] = torch.tensor(s)
    with torch.inference_mode():
        hidden = hf.model(input_ids=ids, use_cache=False).last_hidden_state
        return [
            hf.lm_head(hidden[r, starts[r] - 1 : starts[r] - 1 + counts[r]]).float() for r in range(len(seqs))
        ]


def check(participants, combine, got, matchers=None, eos=2, min_tokens=12):
    """Assert the loop's greedy tokens ``got`` are the reference's, step by step: at step t every
    participant's logits come from a cache-free forward over its prompt + ``got[r][:t]``, the method's
    formula (``combine(logits per participant, allowed, generated so far) -> scores``, written out again
    in each test) picks the argmax with EOS banned, and it must equal ``got[r][t]``. Equality at every
    step is equality with a free-running full recompute, by induction over t."""
    n = len(got)
    for r, g in enumerate(got):
        assert len(g) >= min_tokens, (r, g)
    logits = [
        all_logits(
            hf,
            [p + g for p, g in zip(prompts, got, strict=True)],
            [len(p) for p in prompts],
            [len(g) for g in got],
        )
        for hf, prompts in participants
    ]
    for t in range(max(len(g) for g in got)):
        rows = [r for r in range(n) if t < len(got[r])]
        parts = [
            torch.stack([per[r][t] if r in rows else per[rows[0]][t] for r in range(n)]) for per in logits
        ]
        allowed = torch.ones_like(parts[0], dtype=torch.bool)
        if matchers is not None:
            for r in rows:
                allowed[r] = False
                allowed[r, torch.as_tensor(matchers[r].allowed_token_ids(), dtype=torch.long)] = True
        scores = combine(parts, allowed, [g[:t] for g in got])
        for r in rows:
            want = int(
                scores[r]
                .masked_fill(~allowed[r], NEG_INF)
                .index_fill(0, torch.tensor([eos]), NEG_INF)
                .argmax()
            )
            assert got[r][t] == want, f"row {r} step {t}: loop {got[r][t]} != reference {want}"
            if matchers is not None:
                matchers[r].advance(want)


def nucleus_ref(z: torch.Tensor, p: float) -> torch.Tensor:
    """DExperts' filter as in its paper's code: sort descending, remove cumsum > p, shifted right by one."""
    out = z.clone()
    for r in range(z.shape[0]):
        vals, order = torch.sort(z[r], descending=True)
        cum = torch.softmax(vals, dim=-1).cumsum(-1)
        remove = cum > p
        remove[1:] = remove[:-1].clone()
        remove[0] = False
        out[r, order[remove]] = NEG_INF
    return out


def loop_tokens(source, prompts, budgets=BUDGETS, **kw):
    """Greedy tokens of the generate loop, EOS banned so every row runs its whole budget."""
    outs = guide.generate(source, prompts, max_new_tokens=budgets, logit_bias={2: NEG_INF}, **kw)
    for o, b in zip(outs, budgets, strict=True):
        assert len(o.token_ids) == b
    return [o.token_ids for o in outs], outs


# -- Prompted ------------------------------------------------------------------------------------


class Recording:
    """A source that records the prompts its prefill receives."""

    def __init__(self, inner):
        self.inner, self.vocabulary, self.tokenizer = inner, inner.vocabulary, inner.tokenizer
        self.seen: list[list[int]] = []

    device = property(lambda self: self.inner.device)

    def encode(self, text):
        return self.inner.encode(text)

    def prefill(self, prompts):
        self.seen.extend(list(p) for p in prompts)
        return self.inner.prefill(prompts)


def test_prompted_formats_prefix_system_turn_and_chat(model, prompt_ids):
    tok = model.tokenizer
    system_turn = tok.encode(
        tok.apply_chat_template([{"role": "system", "content": "Be brief."}], tokenize=False)
    )
    chat = [
        tok.encode(
            tok.apply_chat_template(
                [{"role": "system", "content": "Be brief."}, {"role": "user", "content": t}],
                tokenize=False,
                add_generation_prompt=True,
            )
        )
        for t in PROMPTS
    ]
    cases = [
        ({"prefix": POS}, [tok.encode(POS) + p for p in prompt_ids]),
        ({"prefix": tok.encode(POS)}, [tok.encode(POS) + p for p in prompt_ids]),
        ({"system": "Be brief."}, [system_turn + p for p in prompt_ids]),
        ({"chat": True, "system": "Be brief."}, chat),
    ]
    # a chat-formatted prompt starts with <|im_start|> (this tokenizer's BOS, never added on its own): kept
    chat_prompt = model.chat("Hi")
    rec = Recording(model)
    guide.generate(Prompted(rec, system="Be brief."), chat_prompt, max_new_tokens=1)
    assert rec.seen == [system_turn + tok.encode(chat_prompt)]
    for kwargs, formatted in cases:
        rec = Recording(model)
        guide.generate(Prompted(rec, **kwargs), PROMPTS, max_new_tokens=1)
        assert rec.seen == formatted, kwargs
    # and the loop on a prompted model is the model on the formatted prompts
    got, _ = loop_tokens(Prompted(model, system="Be brief."), PROMPTS)
    check([(model.hf, [system_turn + p for p in prompt_ids])], lambda z, a, g: z[0], got)


def test_prompted_chat_wraps_only_the_prompt_not_forced_tokens(model):
    rec = Recording(model)
    spec = fsm.Regex(r"Answer: (yes|no)")
    out = guide.generate(Prompted(rec, chat=True), "Is water wet?", constraint=spec, max_new_tokens=8)[0]
    assert re.fullmatch(spec.pattern, out.text)
    chat = model.encode(model.chat("Is water wet?"))
    forced = rec.seen[0][len(chat) :]  # jump-forward put the forced start after the assistant header
    assert rec.seen[0][: len(chat)] == chat and forced and out.token_ids[: len(forced)] == forced
    assert model.decode(forced) in "Answer: "


# -- the methods, each against its reference --------------------------------------------------------


def test_dexperts_fused(model, prompt_ids, plain):
    tok = model.tokenizer
    pos, neg = Prompted(model, POS), Prompted(model, NEG)
    source = DExperts(model, pos, neg, alpha=2.0, base_top_p=0.9)
    got, _ = loop_tokens(source, PROMPTS)
    parts = [
        (model.hf, prompt_ids),
        (model.hf, [tok.encode(POS) + p for p in prompt_ids]),
        (model.hf, [tok.encode(NEG) + p for p in prompt_ids]),
    ]
    check(parts, lambda z, a, g: nucleus_ref(z[0], 0.9) + 2.0 * (z[1] - z[2]), got)
    assert got != plain  # the experts really steer


def test_dexperts_negative_alpha_unfused(model, prompt_ids):
    tok = model.tokenizer
    source = DExperts(
        model, Prompted(model, POS), Prompted(model, NEG), alpha=-1.5, base_top_p=1.0, fuse=False
    )
    got, _ = loop_tokens(source, PROMPTS)  # three separate sessions and KV caches
    parts = [
        (model.hf, prompt_ids),
        (model.hf, [tok.encode(POS) + p for p in prompt_ids]),
        (model.hf, [tok.encode(NEG) + p for p in prompt_ids]),
    ]
    check(parts, lambda z, a, g: z[0] - 1.5 * (z[1] - z[2]), got)


def test_proxy_tuning_with_chat_formatted_expert(model, prompt_ids):
    tok = model.tokenizer
    expert = Prompted(model, chat=True, system="You answer cheerfully.")
    source = ProxyTuning(model, expert, model, alpha=1.0)
    got, _ = loop_tokens(source, PROMPTS)
    chat = [
        tok.encode(
            tok.apply_chat_template(
                [{"role": "system", "content": "You answer cheerfully."}, {"role": "user", "content": t}],
                tokenize=False,
                add_generation_prompt=True,
            )
        )
        for t in PROMPTS
    ]
    check(
        [(model.hf, prompt_ids), (model.hf, chat), (model.hf, prompt_ids)],
        lambda z, a, g: z[0] + 1.0 * (z[1] - z[2]),
        got,
    )


@pytest.mark.parametrize("negative", [None, "Write something boring and repetitive."])
def test_classifier_free_guidance(model, prompt_ids, negative):
    scale = 1.5 if negative is None else 2.0
    source = ClassifierFreeGuidance(model, negative_prompt=negative, scale=scale)
    got, _ = loop_tokens(source, PROMPTS)
    uncond = [p[-1:] for p in prompt_ids] if negative is None else [model.tokenizer.encode(negative)] * 3

    def cfg(z, a, g):
        lc, lu = torch.log_softmax(z[0], -1), torch.log_softmax(z[1], -1)
        return scale * (lc - lu) + lu

    check([(model.hf, prompt_ids), (model.hf, uncond)], cfg, got)


def test_contrastive_with_a_different_amateur_model(model, prompt_ids):
    amateur = guide.Model.from_hf(tiny_llama(), model.tokenizer, pack_weights=False)
    source = Contrastive(model, amateur, alpha=0.1, beta=1.0)
    got, _ = loop_tokens(source, PROMPTS)

    def cd(z, allowed, g):
        ze = z[0].masked_fill(~allowed, NEG_INF)
        head = torch.softmax(ze, -1) >= 0.1 * torch.softmax(ze, -1).max(-1, keepdim=True).values
        score = torch.log_softmax(z[0], -1) - 1.0 * torch.log_softmax(z[1], -1)
        return score.masked_fill(~head, NEG_INF)

    check([(model.hf, prompt_ids), (amateur.hf, prompt_ids)], cd, got)


def e_lover(texts: list[str]) -> list[float]:
    """A toy attribute classifier: log P(attr | text) rises with the number of letters 'e'."""
    return [-math.log1p(math.exp(-(t.count("e") - 3.0))) for t in texts]


def check_fudge(model, prompt_ids, classify, weight, k, got, matchers=None, min_tokens=12):
    def fudge(z, allowed, gen):
        logp = torch.log_softmax(z[0].masked_fill(~allowed, NEG_INF), -1)
        out = torch.full_like(logp, NEG_INF)
        for r in range(logp.shape[0]):
            vals, idx = logp[r].topk(k)
            for v, t in zip(vals.tolist(), idx.tolist(), strict=True):
                if v != NEG_INF:
                    out[r, t] = v + weight * classify(gen[r] + [t])
        return out

    check([(model.hf, prompt_ids)], fudge, got, matchers=matchers, min_tokens=min_tokens)


def test_classifier_guidance_callable_on_texts(model, prompt_ids, plain):
    source = ClassifierGuidance(model, e_lover, weight=2.0, top_k=8)
    got, _ = loop_tokens(source, PROMPTS)
    check_fudge(model, prompt_ids, lambda ids: e_lover([model.decode(ids)])[0], 2.0, 8, got)
    assert got != plain


def test_classifier_guidance_hf_sequence_classifier_one_batch(model, prompt_ids):
    torch.manual_seed(1)
    cfg = LlamaConfig(
        vocab_size=49152,
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
        num_labels=2,
        pad_token_id=2,
        id2label={0: "NEG", 1: "POS"},
        label2id={"NEG": 0, "POS": 1},
    )
    clf = LlamaForSequenceClassification(cfg).eval()
    batches = []
    clf.register_forward_hook(lambda mod, args, out: batches.append(args))
    source = ClassifierGuidance(model, clf, weight=3.0, top_k=5, label="POS")

    def one(ids):  # the classifier on one sequence alone: no padding involved
        with torch.inference_mode():
            return float(torch.log_softmax(clf(input_ids=torch.tensor([ids])).logits, -1)[0, 1])

    got, _ = loop_tokens(source, PROMPTS)
    assert len(batches) == STEPS  # one classifier batch per step, all rows' candidates in it
    batches.clear()
    check_fudge(model, prompt_ids, one, 3.0, 5, got)


# -- degenerate settings are the plain model --------------------------------------------------------


def test_degenerate_settings_equal_the_plain_model(model, prompt_ids, plain):
    check([(model.hf, prompt_ids)], lambda z, a, g: z[0], plain)
    pos, neg = Prompted(model, POS), Prompted(model, NEG)
    sources = [
        DExperts(model, pos, neg, alpha=0.0, base_top_p=1.0),
        DExperts(model, pos, neg, alpha=0.0),
        ProxyTuning(model, pos, neg, alpha=0.0),
        ClassifierFreeGuidance(model, scale=1.0),
        ClassifierGuidance(model, e_lover, weight=0.0),
        Contrastive(model, neg, alpha=0.1, beta=0.0),
    ]
    short = [6, 8, 7]
    for source in sources:
        got, _ = loop_tokens(source, PROMPTS, budgets=short)
        assert got == [p[:b] for p, b in zip(plain, short, strict=True)], type(source).__name__
    # exactly, not just in argmax: the same logits as the model
    _, want = model.prefill(prompt_ids)
    for source in (sources[0], sources[3], sources[4]):
        session, logits = source.prefill(prompt_ids)
        assert torch.equal(session.rescore(logits.clone()), want)


# -- constraints compose ---------------------------------------------------------------------------


def test_dexperts_under_a_regex_cuts_the_nucleus_inside_the_mask(model, prompt_ids):
    tok = model.tokenizer
    pattern = r"[0-9]{2,4} (stars|points|votes)[a-z ,]{4,30}\."
    spec = fsm.Regex(pattern)
    index = fsm.compile(spec, model.vocabulary)
    source = DExperts(model, Prompted(model, POS), Prompted(model, NEG), alpha=2.0, base_top_p=0.9)
    outs = guide.generate(
        source, PROMPTS, constraint=index, max_new_tokens=STEPS, jump_forward=False, logit_bias={2: NEG_INF}
    )
    parts = [
        (model.hf, prompt_ids),
        (model.hf, [tok.encode(POS) + p for p in prompt_ids]),
        (model.hf, [tok.encode(NEG) + p for p in prompt_ids]),
    ]

    def dx(z, allowed, g):  # the nucleus of the base over the allowed tokens only
        return nucleus_ref(z[0].masked_fill(~allowed, NEG_INF), 0.9) + 2.0 * (z[1] - z[2])

    got = [o.token_ids for o in outs]
    check(parts, dx, got, matchers=[index.matcher() for _ in PROMPTS], min_tokens=6)
    for o in outs:
        assert re.fullmatch(pattern, o.text) or o.finish_reason == "length", o


def test_classifier_guidance_top_k_after_the_mask(model, prompt_ids):
    spec = fsm.Regex(r"[a-z ]{12,80}")
    index = fsm.compile(spec, model.vocabulary)
    source = ClassifierGuidance(model, e_lover, weight=2.0, top_k=6)
    outs = guide.generate(
        source, PROMPTS, constraint=index, max_new_tokens=12, jump_forward=False, logit_bias={2: NEG_INF}
    )
    got = [o.token_ids for o in outs]
    check_fudge(
        model,
        prompt_ids,
        lambda ids: e_lover([model.decode(ids)])[0],
        2.0,
        6,
        got,
        matchers=[index.matcher() for _ in PROMPTS],
        min_tokens=8,
    )
    for o in outs:
        assert re.fullmatch(r"[a-z ]*", o.text)


def test_every_method_keeps_a_json_like_constraint(model):
    spec = fsm.Regex(r'\{"mood": "(happy|sad|angry)", "score": [1-9]\}')
    pos, neg = Prompted(model, POS), Prompted(model, NEG)
    sources = [
        DExperts(model, pos, neg),
        ProxyTuning(model, pos, neg),
        ClassifierFreeGuidance(model),
        ClassifierGuidance(model, e_lover),
        Contrastive(model, neg),
    ]
    for source in sources:
        outs = guide.generate(
            source,
            ["Describe your day as JSON:", "Mood:"],
            constraint=spec,
            max_new_tokens=30,
            temperature=0.8,
            seed=0,
        )
        for o in outs:
            assert o.finish_reason == "constraint" and re.fullmatch(spec.pattern, o.text), (source, o)


def test_generator_gives_a_valid_pydantic_object_steered_by_experts(model):
    class Mood(BaseModel):
        mood: Literal["happy", "sad", "angry"]
        score: int = Field(ge=1, le=9)

    steered = DExperts(model, Prompted(model, POS), Prompted(model, NEG), alpha=2.0)
    out = guide.Generator(steered, Mood, max_new_tokens=40)("How was your day? Answer as JSON.")
    assert isinstance(out, Mood)


# -- vocabularies, arguments, hook -----------------------------------------------------------------


def test_vocabulary_mismatch_is_a_clear_error(model):
    v = model.vocabulary
    tokens = list(v.tokens)
    tokens[500] = b"zzzz-not-the-same"
    other = fsm.Vocabulary(tokens, v.eos_token_ids, size=v.size)
    with pytest.raises(VocabularyMismatch, match="token id 500"):
        shared_width(v, other, "expert")

    class Foreign:
        vocabulary, tokenizer, device = other, model.tokenizer, model.device

        def encode(self, text):
            return model.encode(text)

        def prefill(self, prompts):
            raise AssertionError("never reached")

    with pytest.raises(VocabularyMismatch, match="expert"):
        DExperts(model, Foreign(), model)
    with pytest.raises(ValueError):  # a ValueError and an fsm.VocabularyError
        Contrastive(model, Foreign())
    assert issubclass(VocabularyMismatch, fsm.VocabularyError)


def test_padded_logits_width_is_truncated_to_the_shared_part(model, prompt_ids):
    padded = guide.Model.from_hf(tiny_llama(vocab_size=49152 + 64), model.tokenizer, pack_weights=False)
    assert padded.vocabulary.size == 49216 and shared_width(model.vocabulary, padded.vocabulary) == 49152
    source = ProxyTuning(model, padded, model, alpha=0.5)
    _session, logits = source.prefill(prompt_ids)
    assert logits.shape == (3, 49152)
    got, _ = loop_tokens(source, PROMPTS)
    check(
        [(model.hf, prompt_ids), (padded.hf, prompt_ids), (model.hf, prompt_ids)],
        lambda z, a, g: z[0] + 0.5 * (z[1][:, :49152] - z[2]),
        got,
    )
    # the other way round: a padded base keeps its width, the ids nobody else scores are banned
    wide = ProxyTuning(padded, model, model, alpha=1.0)
    _, logits = wide.prefill(prompt_ids)
    assert logits.shape == (3, 49216) and bool((logits[:, 49152:] == NEG_INF).all())
    assert bool(torch.isfinite(logits[:, :49152]).all())


def test_bad_arguments(model):
    with pytest.raises(GuidanceError, match="base_top_p"):
        DExperts(model, model, model, base_top_p=0.0)
    with pytest.raises(GuidanceError, match="alpha"):
        ProxyTuning(model, model, model, alpha=float("nan"))
    with pytest.raises(GuidanceError, match="top_k"):
        ClassifierGuidance(model, e_lover, top_k=0)
    with pytest.raises(GuidanceError, match="alpha"):
        Contrastive(model, model, alpha=1.5)
    with pytest.raises(GuidanceError, match="label"):
        ClassifierGuidance(
            model,
            LlamaForSequenceClassification(
                LlamaConfig(
                    vocab_size=64,
                    hidden_size=8,
                    intermediate_size=8,
                    num_hidden_layers=1,
                    num_attention_heads=1,
                    num_labels=2,
                    pad_token_id=0,
                )
            ),
        )
    with pytest.raises(GuidanceError, match="LogitsSource"):
        DExperts(model, "not a model", model)
    with pytest.raises(GuidanceError):
        Prompted(model)
    with pytest.raises(GuidanceError):
        Prompted(model, "x", chat=True)


def test_classifier_that_returns_the_wrong_shape_is_reported(model):
    source = ClassifierGuidance(model, lambda texts: [0.0], top_k=3)
    with pytest.raises(GuidanceError, match="shape"):
        guide.generate(source, PROMPTS, max_new_tokens=2)


def test_a_loop_that_skips_rescore_is_refused(model, prompt_ids):
    session, logits = DExperts(model, Prompted(model, POS), Prompted(model, NEG)).prefill(prompt_ids)
    with pytest.raises(GuidanceError, match="rescore"):
        session.decode(logits.argmax(-1)[:, None])
    # no truncation to apply (base_top_p=1): nothing to skip
    session, logits = DExperts(model, model, model, base_top_p=1.0).prefill(prompt_ids)
    assert session.decode(logits.argmax(-1)[:, None]).shape == (3, model.vocabulary.size)


def test_nucleus_filter_matches_the_sorted_reference():
    torch.manual_seed(0)
    z = torch.randn(4, 3000) * 3
    z[1, :2990] = NEG_INF  # few candidates: the probe must not add any
    z[2] = torch.randn(3000) * 0.01  # flat: the nucleus spans more than the probe
    for p in (0.1, 0.5, 0.9, 0.99):
        assert torch.equal(nucleus_filter(z, p).isfinite(), nucleus_ref(z, p).isfinite()), p
