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
  speculative draft="prompt" (prompt lookup) and a draft model (the default model's first
              --draft-layers layers, Model.truncated) vs plain greedy decoding on six copy/extraction
              prompts in one batch of 6 (JSON whose string values are copied from the prompt): forward
              passes of the batch (the most any row took part in; the draft model's own passes apart),
              wall time (median of interleaved runs after a warm-up), whether every row's tokens are
              the same (target: passes <= 0.6x, wall lower, same tokens).
  beam        our beam search (all prompts x beams in one batch) vs HF generate(num_beams=k) with our
              guide.LogitsProcessor prompt by prompt: wall-time ratio, top beams equal.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_decoding.py [--sections watermark]
        [--prompts 6] [--temperature 0.7] [--bias 2.0] [--draft-layers 20]
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


RECORD = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "city": {"type": "string"}, "title": {"type": "string"}},
    "required": ["name", "city", "title"],
    "additionalProperties": False,
}
TEXTS = [
    "Dr. Ada Lovelace, chief mathematician at the Analytical Engine Company, lives in London.",
    "Alan Mathison Turing works as a senior cryptanalyst at Bletchley Park in Milton Keynes.",
    "Grace Brewster Murray Hopper was a rear admiral of the United States Navy based in Arlington.",
    "Katherine Johnson, research mathematician at NASA Langley, resides in Hampton, Virginia.",
    "Edsger Wybe Dijkstra, professor of computer science, lived in Nuenen near Eindhoven.",
    "Barbara Liskov, Institute Professor at MIT, lives in Cambridge, Massachusetts.",
]


def interleaved(runs: dict, repeats: int) -> tuple[dict, dict]:
    """Median wall time per run (alternating the runs after one warm-up each), and each run's output."""
    times: dict = {k: [] for k in runs}
    outs: dict = {}
    for fn in runs.values():
        fn()
    for _ in range(repeats):
        for k, fn in runs.items():
            t0 = time.perf_counter()
            outs[k] = fn()
            times[k].append(time.perf_counter() - t0)
    return {k: statistics.median(v) for k, v in times.items()}, outs


def speculative_section(model: guide.Model, args: argparse.Namespace) -> dict:
    """Speculative decoding vs plain greedy decoding, batch 6, same tokens: prompt lookup, and a draft
    model (the default model truncated to its first ``--draft-layers`` layers, `Model.truncated`)."""
    index = fsm.compile(fsm.JsonSchema(RECORD), model.vocabulary)
    prompts = [model.chat(f"Extract name, city and job title as JSON from: {t}") for t in TEXTS]
    n = args.new_tokens
    draft = model.truncated(args.draft_layers)
    med, outs = interleaved(
        {
            "plain": lambda: guide.generate(model, prompts, index, max_new_tokens=n),
            "speculative": lambda: guide.generate(model, prompts, index, max_new_tokens=n, draft="prompt"),
            "model_draft": lambda: guide.generate(model, prompts, index, max_new_tokens=n, draft=draft),
        },
        args.repeats,
    )
    plain = outs["plain"]
    passes = {k: max(c.stats.forward_passes for c in v) for k, v in outs.items()}
    result: dict = {
        "batch": len(prompts),
        "tokens": sum(len(c.token_ids) for c in plain),
        "plain_forward_passes": passes["plain"],
        "plain_seconds": round(med["plain"], 2),
    }
    for k in ("speculative", "model_draft"):
        spec = outs[k]
        result[k] = {
            "same_tokens": all(a.token_ids == b.token_ids for a, b in zip(plain, spec, strict=True)),
            "forward_passes": passes[k],
            "forward_pass_ratio": round(passes[k] / passes["plain"], 3),
            "drafted": sum(c.stats.draft_tokens for c in spec),
            "accepted": sum(c.stats.accepted_draft_tokens for c in spec),
            "draft_forward_passes": max(c.stats.draft_forward_passes for c in spec),
            "seconds": round(med[k], 2),
            "wall_ratio": round(med[k] / med["plain"], 3),
        }
    result["model_draft"]["draft_layers"] = f"{args.draft_layers}/{model.hf.config.num_hidden_layers}"
    return result


def beam_section(model: guide.Model, args: argparse.Namespace) -> dict:
    """Our beam search (one batch) vs HF beam search + our processor (prompt by prompt)."""
    index = fsm.compile(fsm.JsonSchema(RECORD), model.vocabulary)
    prompts = [model.chat(f"Extract name, city and job title as JSON from: {t}") for t in TEXTS]
    eos = list(model.vocabulary.eos_token_ids)
    k, n = args.beams, args.new_tokens

    def hf_one_by_one() -> list[list[int]]:
        out = []
        for p in prompts:
            enc = model.tokenizer(p, return_tensors="pt", add_special_tokens=False)
            proc = guide.LogitsProcessor(index, model.tokenizer, eos_token_ids=eos)
            seq = model.hf.generate(
                **enc,
                num_beams=k,
                do_sample=False,
                max_new_tokens=n,
                logits_processor=[proc],
                eos_token_id=eos,
                pad_token_id=model.pad_token_id,
            )[0, enc.input_ids.shape[1] :].tolist()
            out.append(seq[: next((i + 1 for i, t in enumerate(seq) if t in eos), len(seq))])
        return out

    med, outs = interleaved(
        {
            "ours": lambda: guide.generate(model, prompts, index, max_new_tokens=n, num_beams=k),
            "hf": hf_one_by_one,
        },
        args.repeats,
    )
    agree = sum(c.token_ids == h for c, h in zip(outs["ours"], outs["hf"], strict=True))
    return {
        "num_beams": k,
        "prompts": len(prompts),
        "ours_seconds": round(med["ours"], 2),
        "hf_seconds": round(med["hf"], 2),
        "wall_ratio": round(med["ours"] / med["hf"], 3),
        "top_beams_equal": f"{agree}/{len(prompts)}",
    }


SECTIONS = {"watermark": watermark_section, "speculative": speculative_section, "beam": beam_section}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sections", default=",".join(SECTIONS), help="comma-separated: " + ", ".join(SECTIONS))
    ap.add_argument("--prompts", type=int, default=6)
    ap.add_argument("--temperature", type=float, default=0.7)
    ap.add_argument("--bias", type=float, default=2.0)
    ap.add_argument("--key", type=int, default=15485863, help="watermark hashing key")
    ap.add_argument("--repeats", type=int, default=3, help="speculative/beam: timed runs per side")
    ap.add_argument("--new-tokens", type=int, default=96, help="speculative/beam: max_new_tokens")
    ap.add_argument("--beams", type=int, default=3, help="beam: num_beams")
    ap.add_argument("--draft-layers", type=int, default=20, help="speculative: the draft model's layers")
    args = ap.parse_args()
    model = guide.load()
    for name in args.sections.split(","):
        result = SECTIONS[name](model, args)
        print(f"## {name}")
        print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
