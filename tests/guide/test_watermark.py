"""guide.Watermark in our loop, and guide.detect_watermark against transformers' WatermarkDetector."""

from __future__ import annotations

import json
import re

import jsonschema
import pytest
import torch
from transformers import WatermarkDetector
from transformers.generation.logits_process import WatermarkLogitsProcessor

import fsm
import guide

PROMPTS = ["Write a short story about a dragon who learns to cook.", "Explain how the Roman Empire fell."]
SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 30},
        "kind": {"enum": ["person", "city", "river"]},
        "about": {"type": "string", "maxLength": 60},
    },
    "required": ["name", "kind", "about"],
    "additionalProperties": False,
}


@pytest.fixture(scope="module")
def model():
    return guide.load()


def _hf_z(model, wm, ids):
    detector = WatermarkDetector(model.hf.config, "cpu", wm.to_hf())
    return float(detector(torch.tensor([ids]), return_dict=True).z_score[0])


@pytest.mark.parametrize(("scheme", "width"), [("lefthash", 1), ("lefthash", 3), ("selfhash", 2)])
def test_greenlists_are_transformers_own(scheme, width):
    wm = guide.Watermark(seeding_scheme=scheme, context_width=width, hashing_key=987)
    hf = WatermarkLogitsProcessor(49152, "cpu", **wm.to_hf().to_dict())
    for context in ([5], [5, 77, 1234], [49151, 0, 3]):
        expected = hf._get_greenlist_ids(torch.tensor(context))
        assert torch.equal(wm.greenlist(context, 49152), expected)


def test_marked_free_text_is_detected_and_z_equals_transformers(model):
    wm = guide.Watermark(hashing_key=4242)
    no_eos = {e: -1e4 for e in model.vocabulary.eos_token_ids}  # 120 tokens of free text, as the test says
    kw = {"max_new_tokens": 120, "temperature": 0.7, "seed": 1, "logit_bias": no_eos}
    marked = guide.generate(model, PROMPTS, watermark=wm, **kw)
    plain = guide.generate(model, PROMPTS, **kw)
    for out in marked + plain:
        ours = guide.detect_watermark(out.token_ids, wm, tokenizer=model.tokenizer)
        assert ours.z == pytest.approx(_hf_z(model, wm, out.token_ids), abs=1e-3)
        assert ours.counted == len(out.token_ids) - 1
    for out in marked:
        assert len(out.token_ids) == 120, out.text
        assert guide.detect_watermark(out.token_ids, wm, tokenizer=model.tokenizer).z > 4
    for out in plain:
        assert guide.detect_watermark(out.token_ids, wm, tokenizer=model.tokenizer).z < 4


def test_selfhash_marks_under_greedy_decoding(model):
    wm = guide.Watermark(seeding_scheme="selfhash", context_width=2, bias=3.0)
    no_eos = {e: -1e4 for e in model.vocabulary.eos_token_ids}
    out = guide.generate(model, PROMPTS[:1], max_new_tokens=40, watermark=wm, logit_bias=no_eos)[0]
    ours = guide.detect_watermark(out.token_ids, wm, tokenizer=model.tokenizer)
    assert ours.z == pytest.approx(_hf_z(model, wm, out.token_ids), abs=1e-3)
    assert ours.green > 0.25 * ours.counted


def test_constrained_output_stays_valid_and_the_aware_detector_counts_choices(model):
    wm = guide.Watermark(bias=3.0, hashing_key=77)
    spec = fsm.JsonSchema(SCHEMA)
    shot = 'Paris as JSON: {"name": "Paris", "kind": "city", "about": "capital of France"}\n'
    prompts = [shot + "The Danube as JSON:", shot + "Marie Curie as JSON:"]
    marked = guide.generate(model, prompts, spec, max_new_tokens=200, temperature=0.8, seed=3, watermark=wm)
    plain = guide.generate(model, prompts, spec, max_new_tokens=200, temperature=0.8, seed=3)
    for out in marked + plain:
        assert out.finish_reason in ("eos", "constraint"), out.text
        jsonschema.validate(json.loads(out.text), SCHEMA)
        aware = guide.detect_watermark(out.token_ids, wm, spec=spec, tokenizer=model.tokenizer)
        blind = guide.detect_watermark(out.token_ids, wm, tokenizer=model.tokenizer)
        assert 0 < aware.counted < blind.counted  # forced syntax is not counted
        assert 0 < aware.expected < aware.counted  # one null per counted position
    z_marked = [
        guide.detect_watermark(o.token_ids, wm, spec=spec, tokenizer=model.tokenizer).z for o in marked
    ]
    z_plain = [guide.detect_watermark(o.token_ids, wm, spec=spec, tokenizer=model.tokenizer).z for o in plain]
    assert min(z_marked) > max(z_plain)
    assert max(z_plain) < 4


def test_watermark_with_guidance_and_a_regex(model):
    wm = guide.Watermark(bias=2.0)
    source = guide.ClassifierFreeGuidance(model, scale=1.5)
    pattern = r"[a-z ]{10,30}\."
    outs = guide.generate(
        source, ["Say something:", "Hi"], fsm.Regex(pattern), max_new_tokens=40, watermark=wm
    )
    for out in outs:
        assert re.fullmatch(pattern, out.text), out.text
        guide.detect_watermark(out.token_ids, wm, spec=fsm.Regex(pattern), tokenizer=model.tokenizer)


def test_detector_names_a_token_outside_the_spec(model):
    ids = model.tokenizer.encode("abc 123", add_special_tokens=False)
    with pytest.raises(fsm.TokenRejected, match="outside the given spec"):
        guide.detect_watermark(ids, guide.Watermark(), spec=fsm.Regex(r"[0-9]+"), tokenizer=model.tokenizer)


def test_bad_parameters_are_refused():
    with pytest.raises(ValueError, match="seeding_scheme"):
        guide.Watermark(seeding_scheme="middlehash")
    with pytest.raises(ValueError, match="greenlist_ratio"):
        guide.Watermark(greenlist_ratio=1.0)
