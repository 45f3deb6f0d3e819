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
   plain HF model. The unconstrained runs make as many tokens as the constrained ones (so prefill
   weighs the same); generated tokens/s counts forced (jump-forward) tokens: they are output tokens.
D. A fresh schema per row, as a server sees it: ``--batches`` rows, each constrained by its own
   JSONSchemaBench schema never compiled in this process (a new block of schemas every run, the disk
   cache off, so compile and every cold row are in the constrained time), vs the same prompts
   unconstrained making as many tokens; with and without jump-forward, with jump-forward fed at the
   widths with the most tokens per cost (``Runner(makespan_feeds=False)``, the loop before the
   makespan widths) and with masks ahead. Schemas are taken round-robin
   over the subsets, keeping those a fresh process compiles within 1 s (checked in a child process, so
   nothing of the check is cached here).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import torch

import fsm
import guide
from guide.default_model import default_model_dir
from guide.loop import Runner

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
    "required": [
        "customer_full_name",
        "customer_email_address",
        "number_of_items_in_the_order",
        "requires_priority_shipping",
    ],
    "additionalProperties": False,
}
_STR = r'([^"\\\x00-\x1f]|\\["\\/bfnrt])'
# The same language as a regex (compact JSON, keys in order), for peers and until fsm.JsonSchema exists.
SCHEMA_REGEX = (
    r'\{"customer_full_name":"' + _STR + r'{0,24}","customer_email_address":"' + _STR + r'{0,32}",'
    r'"number_of_items_in_the_order":-?(0|[1-9][0-9]{0,15}),"requires_priority_shipping":(true|false)\}'
)
CPU_TIME = False
ORDER_PROMPT = (
    "Extract the order as JSON: Jane Doe (jane.doe@example.com) ordered 3 items, priority shipping."
)


FRESH_PROMPT = "Write one JSON object with realistic values."


def fresh_schemas(n: int, max_compile: float = 1.0) -> list[dict]:
    """``n`` JSONSchemaBench schemas (round-robin over the subsets) that compile within ``max_compile`` s.

    The check runs in a child process with the disk cache off, so this process has compiled none of them.
    """
    code = f"""
import json, sys, time
sys.path.insert(0, {os.path.dirname(os.path.abspath(__file__))!r})
import fsm
from bench_cold import CORPUS, jsb_set
from vocabs import load_tokenizer
vocab = fsm.Vocabulary.from_tokenizer(load_tokenizer())
out = []
for name, kind, spec, text in jsb_set(CORPUS, 10_000):
    t = time.perf_counter()
    try:
        fsm.compile(fsm.JsonSchema(spec), vocab, limits=fsm.Limits(max_seconds={max_compile}))
    except fsm.SpecError:
        continue
    if time.perf_counter() - t <= {max_compile}:
        out.append(spec)
    if len(out) == {n}:
        break
print(json.dumps(out))
"""
    env = dict(os.environ, GUIDE_FSM_CACHE="off", TOKENIZERS_PARALLELISM="false")
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def median_rates(runs: dict[str, Callable[[], int]], repeats: int) -> dict[str, float]:
    """Tokens/s per run, median over ``repeats`` interleaved rounds (background load hits all alike).

    Each run returns its token count. Rates use wall time; with ``CPU_TIME`` set they use this
    process's CPU time instead, which a busy shared machine inflates much less.
    """
    for fn in runs.values():
        fn()  # warm-up
    samples: dict[str, list[float]] = {k: [] for k in runs}
    clock = time.process_time if CPU_TIME else time.perf_counter
    for _ in range(repeats):
        for name, fn in runs.items():
            t = clock()
            n = fn()
            samples[name].append(n / (clock() - t))
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
    except (AttributeError, ImportError):  # JsonSchema not available yet: the same language as a regex
        return fsm.Regex(SCHEMA_REGEX), "regex equivalent of the schema"


_PEER_ERRORS = (ImportError, AttributeError, TypeError, RuntimeError, ValueError)


def peer_processors(tokenizer: Any, width: int) -> dict[str, Callable[[], Any]]:
    """Factories of HF logits processors from peers that are installed (fresh one per generate call)."""
    out: dict[str, Callable[[], Any]] = {}
    try:
        import xgrammar as xgr

        info = xgr.TokenizerInfo.from_huggingface(tokenizer, vocab_size=width)
        compiled = xgr.GrammarCompiler(info).compile_json_schema(
            SCHEMA, any_whitespace=False, separators=(",", ":")
        )
        out["HF+xgrammar"] = lambda: xgr.contrib.hf.LogitsProcessor(compiled)
    except _PEER_ERRORS as exc:  # not installed, or an API this version lacks
        print(f"  (xgrammar column skipped: {type(exc).__name__}: {exc})")
    try:
        import outlines
        from outlines.processors import RegexLogitsProcessor  # outlines < 1.0

        out["HF+outlines"] = lambda: RegexLogitsProcessor(
            SCHEMA_REGEX, outlines.models.TransformerTokenizer(tokenizer)
        )
    except _PEER_ERRORS as exc:
        print(f"  (outlines column skipped: {type(exc).__name__}: {exc})")
    return out


class Bench:
    """One model pair (ours, plain HF) and the sections run on it; ``results`` collects the ratios."""

    def __init__(self, args: argparse.Namespace):
        from transformers import AutoModelForCausalLM

        self.args = args
        self.device = torch.device(args.device)
        self.model = guide.load(device=self.device, dtype=args.dtype)
        self.plain = AutoModelForCausalLM.from_pretrained(default_model_dir(), dtype=self.model.dtype)
        self.plain = self.plain.to(self.device).eval()
        self.tok = self.model.tokenizer
        self.tok.padding_side = "left"
        self.eos = set(self.model.vocabulary.eos_token_ids)
        self.no_eos = {self.model.vocabulary.eos_token_ids[0]: float("-inf")}
        spec, self.spec_name = constraint_spec()
        self.index = fsm.compile(spec, self.model.vocabulary)
        self.n_new = args.new_tokens
        self.results: list[tuple[str, int, int, str, float]] = []

    def hf_run(self, hf_model: Any, enc: Any, **kw: Any) -> int:
        with torch.inference_mode():
            out = hf_model.generate(**enc, do_sample=False, pad_token_id=self.model.pad_token_id, **kw)
        return hf_tokens(out, enc["input_ids"].shape[1], self.eos)

    def ours_run(self, prompts: list[str], **kw: Any) -> int:
        return sum(
            len(o.token_ids) for o in guide.generate(self.model, prompts, max_new_tokens=self.n_new, **kw)
        )

    def section_a(self, threads: int, b: int) -> None:
        prompts = [self.model.chat(q) for q in (QUESTIONS * 4)[:b]]
        enc = self.tok(prompts, return_tensors="pt", padding=True).to(self.device)
        n = self.n_new
        r = median_rates(
            {
                "ours": lambda: self.ours_run(prompts, logit_bias=self.no_eos),
                "HF plain": lambda: self.hf_run(self.plain, enc, max_new_tokens=n, min_new_tokens=n),
                "HF packed": lambda: self.hf_run(self.model.hf, enc, max_new_tokens=n, min_new_tokens=n),
            },
            self.args.repeats,
        )
        print(
            f"A threads={threads} batch={b}: ours {r['ours']:.1f} tok/s | HF plain {r['HF plain']:.1f} | HF on "
            f"packed {r['HF packed']:.1f} || ours/HF {r['ours'] / r['HF plain']:.2f} "
            f"(loop only: {r['ours'] / r['HF packed']:.2f})",
            flush=True,
        )
        self.results.append(("A ours/HF", threads, b, "fixed length", r["ours"] / r["HF plain"]))
        self.results.append(
            ("A ours/HF on packed model", threads, b, "loop only", r["ours"] / r["HF packed"])
        )

    def section_b(self, threads: int, b: int) -> None:
        prompts = [self.model.chat(q) for q in (QUESTIONS * 4)[:b]]
        enc = self.tok(prompts, return_tensors="pt", padding=True).to(self.device)
        r = median_rates(
            {
                "ours": lambda: self.ours_run(prompts),
                "HF plain": lambda: self.hf_run(self.plain, enc, max_new_tokens=self.n_new),
            },
            self.args.repeats,
        )
        print(
            f"B threads={threads} batch={b}: ours {r['ours']:.1f} useful tok/s | HF plain {r['HF plain']:.1f} || "
            f"ours/HF {r['ours'] / r['HF plain']:.2f}",
            flush=True,
        )
        self.results.append(("B ours/HF", threads, b, "natural stop", r["ours"] / r["HF plain"]))

    def section_c(self, threads: int, b: int) -> None:
        prompts = [self.model.chat(ORDER_PROMPT)] * b
        enc = self.tok(prompts, return_tensors="pt", padding=True).to(self.device)
        n = self.n_new

        def constrained(jump: bool) -> list[int]:
            outs = guide.generate(
                self.model, prompts, constraint=self.index, max_new_tokens=n, jump_forward=jump
            )
            for o in outs:
                if o.finish_reason != "length":
                    assert set(json.loads(o.text)) == set(SCHEMA["properties"]), o.text
            return [len(o.token_ids) for o in outs]

        # The free runs make as many tokens as the constrained rows do, so prefill weighs the same.
        lengths = constrained(False)
        n_hf = max(lengths)
        runs = {
            "free": lambda: sum(
                len(o.token_ids)
                for o in guide.generate(self.model, prompts, max_new_tokens=lengths, logit_bias=self.no_eos)
            ),
            "constrained": lambda: sum(constrained(True)),
            "constrained, no jump": lambda: sum(constrained(False)),
            "HF+guide": lambda: self.hf_run(
                self.plain,
                enc,
                max_new_tokens=n,
                logits_processor=[guide.LogitsProcessor(self.index, self.tok)],
            ),
            "HF free": lambda: self.hf_run(self.plain, enc, max_new_tokens=n_hf, min_new_tokens=n_hf),
        }
        for name, make in peer_processors(self.tok, self.model.vocabulary.size).items():
            runs[name] = lambda make=make: self.hf_run(
                self.plain, enc, max_new_tokens=n, logits_processor=[make()]
            )
        r = median_rates(runs, self.args.repeats)
        line = " | ".join(f"{k} {v:.1f}" for k, v in r.items())
        print(
            f"C threads={threads} batch={b} ({self.spec_name}): {line} tok/s || constrained/free "
            f"{r['constrained'] / r['free']:.2f} (no jump-forward {r['constrained, no jump'] / r['free']:.2f})",
            flush=True,
        )
        self.results.append(("C constrained/free", threads, b, self.spec_name, r["constrained"] / r["free"]))
        self.results.append(
            ("C no-jump constrained/free", threads, b, self.spec_name, r["constrained, no jump"] / r["free"])
        )
        for name in runs:
            if name.startswith("HF+"):
                self.results.append((f"C {name}/HF free", threads, b, "same schema", r[name] / r["HF free"]))

    def section_d(self, threads: int, b: int) -> None:
        """Constrained with a fresh schema per row vs unconstrained, same prompts and token counts.

        Each constrained run is paired with a free run making the same number of tokens per row
        (EOS banned), right after it; the ratio is the median over repeats of the pair's ratio.
        With ``--same-blocks`` every variant of a round runs on the round's block (the memory cache
        cleared before each, so each compiles it anew), in an order rotated per round: variants are
        compared on the same rows; otherwise each run has its own block (a schema is new only once).
        """
        os.environ["GUIDE_FSM_CACHE"] = "off"  # read at each compile: no index comes from disk
        # name: (jump-forward, masks ahead, makespan feeds; None = the loop's default)
        variants: dict[str, tuple[bool, bool, bool | None]] = {
            "constrained": (True, False, None),
            "constrained, rate widths": (True, False, False),
            "constrained, no jump": (False, False, None),
            "constrained, masks ahead": (True, True, None),
        }
        names = list(variants)
        same = self.args.same_blocks
        blocks = self.args.repeats + 1  # one round of warm-up
        schemas = fresh_schemas((1 if same else len(names)) * blocks * b)
        prompts = [self.model.chat(FRESH_PROMPT)] * b
        rates: dict[str, list[float]] = {name: [] for name in names}
        ratios: dict[str, list[float]] = {name: [] for name in names}
        work: dict[str, list[tuple[int, int]]] = {name: [] for name in names}  # (passes, positions)
        clock = time.process_time if CPU_TIME else time.perf_counter
        for rep in range(blocks):
            order = names[rep % len(names) :] + names[: rep % len(names)] if same else names
            for name in order:
                jump, ahead, makespan = variants[name]
                # a new block of schemas per run (or per round): every compile and every row is cold
                at = (rep if same else len(names) * rep + names.index(name)) * b
                fsm.clear_memory_cache()
                specs = [fsm.JsonSchema(s) for s in schemas[at : at + b]]
                t = clock()
                # the loop guide.generate runs, with the modes it does not expose
                runner = Runner(
                    self.model,
                    prompts,
                    specs,
                    self.n_new,
                    None,
                    None,
                    jump,
                    {},
                    masks_ahead=ahead,
                    makespan_feeds=makespan,
                )
                for _ in runner.steps():
                    pass
                done = runner.completions()
                lengths = [len(o.token_ids) for o in done]
                passes = max(o.stats.forward_passes for o in done) - 1  # decode passes: not the prefill
                rate = sum(lengths) / (clock() - t)
                t = clock()
                outs = guide.generate(self.model, prompts, max_new_tokens=lengths, logit_bias=self.no_eos)
                free = sum(len(o.token_ids) for o in outs) / (clock() - t)
                if rep:
                    rates[name].append(rate)
                    ratios[name].append(rate / free)
                    work[name].append((passes, runner.positions))
        r = {k: statistics.median(v) for k, v in ratios.items()}
        print(
            f"D threads={threads} batch={b} (fresh JSONSchemaBench schema per row"
            f"{', variants on the same blocks' if same else ''}): "
            + " | ".join(f"{k} {statistics.median(v):.1f}" for k, v in rates.items())
            + " tok/s || constrained/free (paired, median) "
            + ", ".join(f"{k} {v:.2f}" for k, v in r.items())
            + " || decode passes/positions per block (mean) "
            + ", ".join(
                f"{k} {statistics.mean(p for p, _ in w):.1f}/{statistics.mean(n for _, n in w):.0f}"
                for k, w in work.items()
            ),
            flush=True,
        )
        for name, ratio in r.items():
            self.results.append((f"D {name}/free", threads, b, "fresh schema per row", ratio))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", default="1,2", help="torch thread counts to try, e.g. 1,2")
    ap.add_argument("--batches", default="1,8")
    ap.add_argument("--new-tokens", type=int, default=64)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--dtype", default=None, help="float32 (CPU default), bfloat16, float16")
    ap.add_argument("--sections", default="ABC")
    ap.add_argument(
        "--cpu-time",
        action="store_true",
        help="rate by process CPU time, not wall time (steadier on a loaded machine; use with 1 thread)",
    )
    ap.add_argument(
        "--same-blocks",
        action="store_true",
        help="section D: run every variant of a round on the same block of schemas (rotated order)",
    )
    args = ap.parse_args()
    global CPU_TIME
    CPU_TIME = args.cpu_time
    bench = Bench(args)
    print(
        f"device={bench.device} dtype={bench.model.dtype} packed={bench.model.packed} new_tokens={args.new_tokens} "
        f"repeats={args.repeats} clock={'process CPU time' if CPU_TIME else 'wall'}"
    )
    for threads in [int(t) for t in args.threads.split(",")]:
        torch.set_num_threads(threads)
        for b in [int(x) for x in args.batches.split(",")]:
            if "A" in args.sections:
                bench.section_a(threads, b)
            if "B" in args.sections and b > 1:
                bench.section_b(threads, b)
            if "C" in args.sections:
                bench.section_c(threads, b)
            if "D" in args.sections:
                bench.section_d(threads, b)
    print("\nsummary (ratio > 1: first is faster)")
    for what, threads, b, note, ratio in bench.results:
        print(f"  {what:32s} threads={threads} batch={b}: {ratio:.2f}  [{note}]")
    print(
        json.dumps(
            [
                {"what": w, "threads": t, "batch": b, "note": n, "ratio": round(x, 3)}
                for w, t, b, n, x in bench.results
            ]
        )
    )


if __name__ == "__main__":
    main()
