"""The first request in a fresh process, against the second: does a server's first user wait?

Each run is a **fresh process** (``GUIDE_FSM_CACHE=off``) that imports ``guide``, loads the default
model (``guide.load()``) and serves requests one after the other, each with a JSONSchemaBench schema
it has not seen (``guide.generate``, ``--new-tokens`` tokens, greedy). Modes, interleaved over
``--repeats`` (medians):

- ``cold``: ``guide.load(warm_up=False)``: the first request builds the vocabulary's shared tables;
- ``warm``: ``guide.load()`` and the requests once its background warm-up has finished (a server
  whose first request comes a moment after start-up);
- ``eager``: ``guide.load()`` and the first request at once (it waits for what warm-up has left).

Printed per mode: import, load, first, second and third request (s, wall), and the requests' CPU
time (this process's, all threads: on a machine shared with other jobs it moves much less than wall).

    python benchmarks/bench_generate_first.py --repeats 3
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODES = ("cold", "warm", "eager")


def child(mode: str, new_tokens: int) -> dict:
    """Runs in the fresh process: import, load, then three requests on new schemas."""
    t = time.perf_counter()
    import threading

    import fsm
    import guide

    sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
    from bench_cold import CORPUS, jsb_set

    out = {"import": time.perf_counter() - t}
    import torch

    torch.set_num_threads(1)  # CPU time then counts work, not idle OpenMP threads spinning on a busy box
    t = time.perf_counter()
    model = guide.load(warm_up=mode != "cold")
    out["load"] = time.perf_counter() - t
    if mode == "warm":
        t = time.perf_counter()
        for th in threading.enumerate():
            if th.name == "guide-warm-up":
                th.join()
        out["warm-up wait"] = time.perf_counter() - t
    prompt = model.chat("Write one JSON object with realistic values.")
    for k, (_, _, schema, _) in enumerate(jsb_set(CORPUS, 3)):
        t, c = time.perf_counter(), time.process_time()
        guide.generate(model, prompt, constraint=fsm.JsonSchema(schema), max_new_tokens=new_tokens)
        out[f"request {k + 1}"] = time.perf_counter() - t
        out[f"request {k + 1} cpu"] = time.process_time() - c
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--new-tokens", type=int, default=16)
    ap.add_argument("--modes", default=",".join(MODES))
    ap.add_argument("--child")
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child, args.new_tokens)))
        return
    modes = args.modes.split(",")
    env = dict(os.environ, GUIDE_FSM_CACHE="off", PYTHONPATH=ROOT, TOKENIZERS_PARALLELISM="false")
    runs: dict[str, list[dict]] = {m: [] for m in modes}
    for rep in range(args.repeats):
        for mode in modes[rep % len(modes) :] + modes[: rep % len(modes)]:
            cmd = [sys.executable, os.path.abspath(__file__), "--child", mode]
            cmd += ["--new-tokens", str(args.new_tokens)]
            proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
            runs[mode].append(json.loads(proc.stdout.strip().splitlines()[-1]))
            print(f"# repeat {rep + 1} {mode}: {runs[mode][-1]}", file=sys.stderr)
    keys = ["import", "load", "request 1", "request 2", "request 3"]
    keys += ["request 1 cpu", "request 2 cpu", "request 3 cpu"]
    print(f"# {args.new_tokens} new tokens per request, medians of {args.repeats} fresh processes (s)")
    print(f"{'mode':8}" + "".join(f"{k:>14}" for k in keys))
    for mode, recs in runs.items():
        med = {k: float(np.median([r[k] for r in recs])) for k in keys}
        print(f"{mode:8}" + "".join(f"{med[k]:14.3f}" for k in keys))


if __name__ == "__main__":
    main()
