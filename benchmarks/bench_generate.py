"""Generation throughput: our loop vs Hugging Face ``generate``, and constrained vs unconstrained.

Run:  .venv/bin/python benchmarks/bench_generate.py [--threads 1,2] [--batches 1,8] [--repeats 3]

Sections (tokens/s, median of ``--repeats`` interleaved runs after a warm-up; ratios > 1 = we win):

A. Fixed length (EOS suppressed in both, so every row makes ``--new-tokens`` tokens, identical greedy
   output): ``guide.generate`` on ``guide.load()`` vs ``model.generate`` on the plain HF model
   (``AutoModelForCausalLM.from_pretrained``), and HF ``generate`` on our packed model (isolates the
   loop from the oneDNN weight packing that `guide.load` does on CPU).
B. Natural stop (``max_new_tokens`` cap, EOS allowed): useful tokens/s; HF keeps computing rows that
   already finished, we drop them from the batch.
C. Constrained (a JSON schema with long fixed keys; a hand-written equivalent regex until
   ``fsm.JsonSchema`` exists) vs unconstrained, in our loop, with and without jump-forward; and HF
   ``generate`` + a constraint logits processor (ours, xgrammar's and outlines' when installed) on the
   plain HF model. Generated tokens/s counts forced (jump-forward) tokens: they are output tokens.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from typing import Any, Callable

import torch

import fsm
import guide
from guide.default_model import default_model_dir

QUESTIONS = [
    "What is 2+2?",
    "Name a color.",
    "Write a haiku about the sea.",
    "What is the capital of Italy? Answer in one word.",
    "Count to five.",
    "Hello!",
    "Translate 'cat' to French.",
    "Give me three tips for better sleep.",
]

SCHEMA = {
    "type": "object",
    "properties": {
        "customer_full_name": {"type": "string", "maxLength": 24},
        "customer_email_address": {"type": "string", "maxLength": 32},
        "number_of_items_in_the_order": {"type": "integer"},
        "requires_priority_shipping": {"type": "boolean"},
    },
    "required": ["customer_full_name", "customer_email_address", "number_of_items_in_the_order",
                 "requires_priority_shipping"],
    "additionalProperties": False,
}
_STR = r'([^"\\\x00-\x1f]|\\["\\/bfnrt])'
# The same language as a regex (compact JSON, keys in order), for peers and until fsm.JsonSchema exists.
SCHEMA_REGEX = (
    r'\{"customer_full_name":"' + _STR + r'{0,24}","customer_email_address":"' + _STR + r'{0,32}",'
    r'"number_of_items_in_the_order":-?(0|[1-9][0-9]{0,15}),"requires_priority_shipping":(true|false)\}'
)
ORDER_PROMPT = "Extract the order as JSON: Jane Doe (jane.doe@example.com) ordered 3 items, priority shipping."


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def median_rates(runs: dict[str, Callable[[], int]], repeats: int) -> dict[str, float]:
    """Interleave the runs (so background load hits all alike); each returns its token count."""
    for fn in runs.values():
        fn()  # warm-up
    samples: dict[str, list[float]] = {k: [] for k in runs}
    for _ in range(repeats):
        for name, fn in runs.items():
            dt, n = timed(fn)
            samples[name].append(n / dt)
    return {k: statistics.median(v) for k, v in samples.items()}


def hf_tokens(out: torch.Tensor, prompt_len: int, eos: set[int]) -> int:
    n = 0
    for row in out[:, prompt_len:].tolist():
        cut = next((i for i, t in enumerate(row) if t in eos), None)
        n += len(row) if cut is None else cut + 1
    return n


def constraint_spec() -> tuple[Any, str]:
    try:
        return fsm.JsonSchema(SCHEMA), "fsm.JsonSchema"
    except Exception:  # JsonSchema not available yet: the same language as a regex
        return fsm.Regex(SCHEMA_REGEX), "regex equivalent of the schema"


def peer_processors(tokenizer: Any, width: int) -> dict[str, Callable[[], Any]]:
    """Factories of HF logits processors from peers that are installed (fresh one per generate call)."""
    out: dict[str, Callable[[], Any]] = {}
    try:
        import xgrammar as xgr

        info = xgr.TokenizerInfo.from_huggingface(tokenizer, vocab_size=width)
        compiled = xgr.GrammarCompiler(info).compile_json_schema(SCHEMA, any_whitespace=False, separators=(",", ":"))
        out["HF+xgrammar"] = lambda: xgr.contrib.hf.LogitsProcessor(compiled)
    except Exception as exc:  # not installed, or an API this version lacks
        print(f"  (xgrammar column skipped: {type(exc).__name__}: {exc})")
    try:
        import outlines  # noqa: F401
        from outlines.processors import RegexLogitsProcessor  # outlines < 1.0

        out["HF+outlines"] = lambda: RegexLogitsProcessor(SCHEMA_REGEX, outlines.models.TransformerTokenizer(tokenizer))
    except Exception as exc:
        print(f"  (outlines column skipped: {type(exc).__name__}: {exc})")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", default="1,2", help="torch thread counts to try, e.g. 1,2")
    ap.add_argument("--batches", default="1,8")
    ap.add_argument("--new-tokens", type=int, default=64)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--dtype", default=None, help="float32 (CPU default), bfloat16, float16")
    ap.add_argument("--sections", default="ABC")
    args = ap.parse_args()
    from transformers import AutoModelForCausalLM

    device = torch.device(args.device)
    model = guide.load(device=device, dtype=args.dtype)
    plain = AutoModelForCausalLM.from_pretrained(default_model_dir(), dtype=model.dtype).to(device).eval()
    tok = model.tokenizer
    tok.padding_side = "left"
    eos = set(model.vocabulary.eos_token_ids)
    eos0 = model.vocabulary.eos_token_ids[0]
    spec, spec_name = constraint_spec()
    index = fsm.compile(spec, model.vocabulary)
    n_new = args.new_tokens
    print(f"device={device} dtype={model.dtype} packed={model.packed} new_tokens={n_new} repeats={args.repeats}")
    results: list[tuple[str, int, int, str, float]] = []

    def hf_run(hf_model, enc, **kw) -> int:
        with torch.inference_mode():
            out = hf_model.generate(**enc, do_sample=False, pad_token_id=model._pad_id, **kw)
        return hf_tokens(out, enc["input_ids"].shape[1], eos)

    for threads in [int(t) for t in args.threads.split(",")]:
        torch.set_num_threads(threads)
        for b in [int(x) for x in args.batches.split(",")]:
            prompts = [model.chat(q) for q in (QUESTIONS * 4)[:b]]
            enc = tok(prompts, return_tensors="pt", padding=True).to(device)
            tag = f"threads={threads} batch={b}"
            if "A" in args.sections:
                r = median_rates({
                    "ours": lambda: sum(len(o.token_ids) for o in guide.generate(
                        model, prompts, max_new_tokens=n_new, logit_bias={eos0: float("-inf")})),
                    "HF plain": lambda: hf_run(plain, enc, max_new_tokens=n_new, min_new_tokens=n_new),
                    "HF packed": lambda: hf_run(model.hf, enc, max_new_tokens=n_new, min_new_tokens=n_new),
                }, args.repeats)
                print(f"A {tag}: ours {r['ours']:.1f} tok/s | HF plain {r['HF plain']:.1f} | HF on packed "
                      f"{r['HF packed']:.1f} || ours/HF {r['ours'] / r['HF plain']:.2f} "
                      f"(loop only: {r['ours'] / r['HF packed']:.2f})", flush=True)
                results.append(("A ours/HF", threads, b, "fixed length", r["ours"] / r["HF plain"]))
            if "B" in args.sections and b > 1:
                r = median_rates({
                    "ours": lambda: sum(len(o.token_ids) for o in guide.generate(model, prompts, max_new_tokens=n_new)),
                    "HF plain": lambda: hf_run(plain, enc, max_new_tokens=n_new),
                }, args.repeats)
                print(f"B {tag}: ours {r['ours']:.1f} useful tok/s | HF plain {r['HF plain']:.1f} || "
                      f"ours/HF {r['ours'] / r['HF plain']:.2f}", flush=True)
                results.append(("B ours/HF", threads, b, "natural stop", r["ours"] / r["HF plain"]))
            if "C" in args.sections:
                cprompts = [model.chat(ORDER_PROMPT)] * b
                cenc = tok(cprompts, return_tensors="pt", padding=True).to(device)

                def ours_c(jump: bool) -> int:
                    outs = guide.generate(model, cprompts, constraint=index, max_new_tokens=n_new, jump_forward=jump)
                    for o in outs:
                        if o.finish_reason != "length":
                            assert set(json.loads(o.text)) == set(SCHEMA["properties"]), o.text
                    return sum(len(o.token_ids) for o in outs)

                runs = {
                    "free": lambda: sum(len(o.token_ids) for o in guide.generate(
                        model, cprompts, max_new_tokens=n_new, logit_bias={eos0: float("-inf")})),
                    "constrained": lambda: ours_c(True),
                    "constrained, no jump": lambda: ours_c(False),
                    "HF+guide": lambda: hf_run(plain, cenc, max_new_tokens=n_new,
                                               logits_processor=[guide.LogitsProcessor(index, tok)]),
                    "HF free": lambda: hf_run(plain, cenc, max_new_tokens=n_new, min_new_tokens=n_new),
                }
                for name, make in peer_processors(tok, model.vocabulary.size).items():
                    runs[name] = lambda make=make: hf_run(plain, cenc, max_new_tokens=n_new, logits_processor=[make()])
                r = median_rates(runs, args.repeats)
                line = " | ".join(f"{k} {v:.1f}" for k, v in r.items())
                print(f"C {tag} ({spec_name}): {line} tok/s || constrained/free {r['constrained'] / r['free']:.2f} "
                      f"(no jump-forward {r['constrained, no jump'] / r['free']:.2f})", flush=True)
                results.append(("C constrained/free", threads, b, spec_name, r["constrained"] / r["free"]))
                for name in runs:
                    if name.startswith("HF+"):
                        results.append((f"C {name}/HF free", threads, b, "same constraint",
                                        r[name] / r["HF free"]))
    print("\nsummary (ratio > 1: first is faster)")
    for what, threads, b, note, ratio in results:
        print(f"  {what:28s} threads={threads} batch={b}: {ratio:.2f}  [{note}]")
    print(json.dumps([dict(what=w, threads=t, batch=b, note=n, ratio=round(x, 3)) for w, t, b, n, x in results]))


if __name__ == "__main__":
    main()
