"""Decoding methods on the default model, each measured beside its peer in one run.

Sections (``--sections``, default: all that exist):

  watermark   JSON output under a schema with many forced tokens (keys, punctuation, enum values).
              Ours: guide.generate(..., spec, watermark=wm), scored by guide.detect_watermark with
              spec= (only positions where the mask left a choice, each against its masked green share).
              Peer: the plain pipeline, HF generate with the same WatermarkingConfig + our
              guide.LogitsProcessor, scored by transformers' WatermarkDetector.
              Same prompts, same watermark, same temperature; both also run unmarked (false positives).
              Reported: mean z marked / unmarked per pipeline, the counted positions, and the largest
              unmarked z (target: ours marked >= peer marked, no unmarked above 4).

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_decoding.py [--sections watermark]
        [--prompts 6] [--temperature 0.7] [--bias 2.0]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import fsm
import guide

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 40},
        "kind": {"enum": ["person", "city", "river", "mountain", "company"]},
        "country": {"type": "string", "maxLength": 30},
        "known_for": {"type": "string", "maxLength": 120},
        "founded_or_born": {"type": "integer"},
    },
    "required": ["name", "kind", "country", "known_for", "founded_or_born"],
    "additionalProperties": False,
}
SHOT = (
    'Paris as JSON: {"name": "Paris", "kind": "city", "country": "France", "known_for": '
    '"the Eiffel Tower and its museums", "founded_or_born": 250}\n'
)
SUBJECTS = [
    "Marie Curie",
    "The Danube",
    "Mount Fuji",
    "Toyota",
    "Ada Lovelace",
    "Kyoto",
    "The Amazon river",
    "Nokia",
    "Leonardo da Vinci",
    "Mont Blanc",
    "Lisbon",
    "Siemens",
]


def watermark_section(model: guide.Model, args: argparse.Namespace) -> dict:
    """Mean z of our loop + constraint-aware detector vs HF watermark + our processor + HF detector."""
    from transformers import WatermarkDetector

    spec = fsm.JsonSchema(SCHEMA)
    index = fsm.compile(spec, model.vocabulary)
    wm = guide.Watermark(bias=args.bias, hashing_key=args.key)
    prompts = [SHOT + f"{s} as JSON:" for s in SUBJECTS[: args.prompts]]
    kw = {"max_new_tokens": 160, "temperature": args.temperature, "seed": 0}

    t0 = time.perf_counter()
    ours = {
        marked: guide.generate(model, prompts, index, watermark=wm if marked else None, **kw)
        for marked in (True, False)
    }
    t_ours = time.perf_counter() - t0
    ours_z = {
        marked: [guide.detect_watermark(o.token_ids, wm, spec=index, tokenizer=model.tokenizer) for o in outs]
        for marked, outs in ours.items()
    }

    tok = model.tokenizer
    tok.padding_side = "left"
    detector = WatermarkDetector(model.hf.config, "cpu", wm.to_hf())
    t0 = time.perf_counter()
    peer: dict[bool, list] = {}
    for marked in (True, False):
        torch.manual_seed(0)
        enc = tok(prompts, return_tensors="pt", padding=True)
        proc = guide.LogitsProcessor(index, tok)
        extra = {"watermarking_config": wm.to_hf()} if marked else {}
        with torch.no_grad():
            out = model.hf.generate(
                **enc,
                logits_processor=[proc],
                max_new_tokens=160,
                do_sample=True,
                temperature=args.temperature,
                top_k=0,
                top_p=1.0,
                pad_token_id=tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id,
                **extra,
            )
        rows = []
        for row in out[:, enc.input_ids.shape[1] :].tolist():
            eos = set(model.vocabulary.eos_token_ids)
            ids = []
            for t in row:  # HF pads finished rows with pad/EOS: the detector sees the output to its EOS
                ids.append(t)
                if t in eos:
                    break
            rows.append(detector(torch.tensor([ids]), return_dict=True))
        peer[marked] = rows
    t_peer = time.perf_counter() - t0

    def mean(xs: list[float]) -> float:
        return statistics.fmean(xs) if xs else float("nan")

    result = {
        "prompts": len(prompts),
        "bias": args.bias,
        "temperature": args.temperature,
        "ours_marked_mean_z": mean([s.z for s in ours_z[True]]),
        "ours_unmarked_mean_z": mean([s.z for s in ours_z[False]]),
        "ours_unmarked_max_z": max(s.z for s in ours_z[False]),
        "ours_mean_counted": mean([s.counted for s in ours_z[True]]),
        "ours_mean_tokens": mean([len(o.token_ids) for o in ours[True]]),
        "peer_marked_mean_z": mean([float(r.z_score[0]) for r in peer[True]]),
        "peer_unmarked_mean_z": mean([float(r.z_score[0]) for r in peer[False]]),
        "peer_unmarked_max_z": max(float(r.z_score[0]) for r in peer[False]),
        "peer_mean_counted": mean([float(r.num_tokens_scored[0]) for r in peer[True]]),
        "ours_seconds": round(t_ours, 1),
        "peer_seconds": round(t_peer, 1),
    }
    valid = sum(o.finish_reason in ("eos", "constraint") for outs in ours.values() for o in outs)
    result["ours_complete_outputs"] = f"{valid}/{2 * len(prompts)}"
    return result


SECTIONS = {"watermark": watermark_section}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sections", default=",".join(SECTIONS), help="comma-separated: " + ", ".join(SECTIONS))
    ap.add_argument("--prompts", type=int, default=6)
    ap.add_argument("--temperature", type=float, default=0.7)
    ap.add_argument("--bias", type=float, default=2.0)
    ap.add_argument("--key", type=int, default=15485863, help="watermark hashing key")
    args = ap.parse_args()
    model = guide.load()
    for name in args.sections.split(","):
        result = SECTIONS[name](model, args)
        print(f"## {name}")
        print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
