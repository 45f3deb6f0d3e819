"""One decode step's masks for a batch of requests, each with a schema never seen before.

What a server's decode step pays: ``--rows`` requests (32), each with its own JSONSchemaBench schema,
walk a valid instance (the tokenizer's tokens of its compact JSON) in lockstep; every step fills all
rows' masks into **one batch bitmask** (``rows x ceil(V/32)`` int32 words), then advances every row by
its next token. Each engine runs in a **fresh process** (``GUIDE_FSM_CACHE=off``: nothing cached on
disk or in memory), compiles the rows (timed apart), then walks ``--steps`` steps cold (the first
request on each schema) and once more warm (new matchers on the same compiled schemas, what later
requests on these schemas see). Per step: the time of all rows' masks, and of all rows' advances.

Engines (each its own process, interleaved over ``--repeats``, order rotated; medians over repeats):

- ``ours``: ``Matcher.fill_bitmask`` row by row into the batch array (as ``guide.masks.MaskBuffer`` does);
  ``ours-pool``: the rows' matchers in a `fsm.MaskPool` of ``--pool-workers`` processes (default: the
  cores), which advance their rows and compute the next masks as soon as a step's tokens are sent: a
  step's mask time is the wait for all rows' masks and so holds the advances (its advance time is only
  the sending), and its compile time holds the first masks;
- ``xgrammar``: ``GrammarMatcher.fill_next_token_bitmask(bitmask, i)`` row by row;
  ``xgrammar-batch``: ``BatchGrammarMatcher(max_threads="auto").batch_fill_next_token_bitmask`` (threads);
- ``llguidance``: ``llguidance.numpy.fill_next_token_bitmask`` row by row;
  ``llguidance-par``: ``fill_next_token_bitmask_par`` with an ``LLExecutor`` (threads).

The rows are the first ``--rows`` schemas (round-robin over the subsets, as ``bench_cold.py``'s jsb set)
whose instance has at least ``--steps`` tokens and that every engine compiles within ``--max-compile``
seconds and walks (checked in the driver process first; the timed workers are fresh processes, so
nothing of that check is reused).

    python benchmarks/bench_batch.py --repeats 3
    python benchmarks/bench_batch.py --repeats 3 --vocab gemma3
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
sys.path.insert(0, ROOT)

from bench_cold import CORPUS, ENGINE_CLASSES, jsb_set  # noqa: E402
from vocabs import load_tokenizer  # noqa: E402

MODES = ("ours", "ours-pool", "xgrammar", "xgrammar-batch", "llguidance", "llguidance-par")


# ---------------------------------------------------------------------------------------------
# Batch fills: one decode step's masks for every row into one bitmask.


class _OursBatch:
    def __init__(self, engine, n):
        self.bitmask = np.zeros((n, (engine.vocab.size + 31) // 32), dtype=np.int32)

    def fill(self, matchers):
        bitmask = self.bitmask
        for i, m in enumerate(matchers):
            m.fill_bitmask(bitmask[i])

    def fresh(self, engine, matchers):
        return [m.index.matcher() for m in matchers]


class _XGrammarBatch:
    def __init__(self, engine, n, batched=False):
        self.bitmask = engine.xgr.allocate_token_bitmask(n, engine.info.vocab_size)
        self.batch = engine.xgr.BatchGrammarMatcher(max_threads="auto") if batched else None

    def fill(self, matchers):
        if self.batch is not None:
            self.batch.batch_fill_next_token_bitmask(matchers, self.bitmask)
            return
        for i, m in enumerate(matchers):
            m.fill_next_token_bitmask(self.bitmask, i)

    def fresh(self, engine, matchers):
        for m in matchers:
            m.reset()
        return matchers


class _LLGuidanceBatch:
    def __init__(self, engine, n, parallel=False):
        self.lln = engine.lln
        self.bitmask = engine.lln.allocate_token_bitmask(n, engine.tok.vocab_size)
        self.executor = engine.llg.LLExecutor() if parallel else None

    def fill(self, matchers):
        if self.executor is not None:
            self.lln.fill_next_token_bitmask_par(
                self.executor, [(m, i) for i, m in enumerate(matchers)], self.bitmask
            )
            return
        for i, m in enumerate(matchers):
            self.lln.fill_next_token_bitmask(m, self.bitmask, i)

    def fresh(self, engine, matchers):
        for m in matchers:
            m.reset()
        return matchers


def _batch(mode: str, engine, n: int):
    if mode == "ours":
        return _OursBatch(engine, n)
    if mode.startswith("xgrammar"):
        return _XGrammarBatch(engine, n, batched=mode.endswith("-batch"))
    return _LLGuidanceBatch(engine, n, parallel=mode.endswith("-par"))


def _walk(engine, batch, matchers, ids: list[list[int]], steps: int) -> tuple[list[float], list[float]]:
    """Per step: seconds for every row's mask, and for every row's advance."""
    masks, advances = [], []
    for k in range(steps):
        t0 = time.perf_counter()
        batch.fill(matchers)
        t1 = time.perf_counter()
        for m, row in zip(matchers, ids, strict=True):
            engine.advance(m, row[k])
        advances.append(time.perf_counter() - t1)
        masks.append(t1 - t0)
    return masks, advances


def _walk_pool(pool, ids: list[list[int]], steps: int) -> tuple[list[float], list[float]]:
    """`_walk` through a `fsm.MaskPool`: a step's mask time is the wait for every row's mask, which
    the workers compute after advancing the rows by the previous step's tokens (so it holds the
    advances too); the advance time is only sending the tokens."""
    masks, advances = [], []
    for k in range(steps):
        t0 = time.perf_counter()
        pool.masks()
        t1 = time.perf_counter()
        pool.advance({i: row[k] for i, row in enumerate(ids)})
        advances.append(time.perf_counter() - t1)
        masks.append(t1 - t0)
    pool.masks()  # the last advances: not a step's time
    return masks, advances


def _pool_worker(engine, items: list, ids: list[list[int]], steps: int, workers: int) -> dict:
    """``ours-pool``: the rows' matchers in `fsm.MaskPool` worker processes. Its compile time holds
    every row's first mask (the workers start it at once): the first step only reads them."""
    fsm = engine.fsm
    t = time.perf_counter()
    pool = fsm.MaskPool(engine.vocab, len(items), workers=workers, limits=fsm.Limits(max_seconds=20))
    startup = time.perf_counter() - t
    try:
        specs = {
            i: fsm.Regex(spec) if kind == "regex" else fsm.JsonSchema(spec)
            for i, (_, kind, spec, _) in enumerate(items)
        }
        t = time.perf_counter()
        pool.open(specs)
        compile_s = time.perf_counter() - t
        cold, cold_adv = _walk_pool(pool, ids, steps)
        pool.reset(list(specs))
        warm, warm_adv = _walk_pool(pool, ids, steps)
    finally:
        pool.shutdown()
    return {
        "startup_pool": startup,
        "compile": compile_s,
        "compiles": [],
        "cold": cold,
        "cold_adv": cold_adv,
        "warm": warm,
        "warm_adv": warm_adv,
    }


def worker(mode: str, items_path: str, out_path: str, steps: int, vocab: str, workers: int = 2) -> None:
    """One engine in this fresh process: compile the rows, walk them cold, then warm; write a JSON record."""
    t = time.perf_counter()
    tok = load_tokenizer(vocab)
    engine = ENGINE_CLASSES[mode.split("-")[0]](tok)
    startup = time.perf_counter() - t
    with open(items_path) as f:
        items = json.load(f)
    ids = [tok.encode(text, add_special_tokens=False)[:steps] for _, _, _, text in items]
    if mode == "ours-pool":
        rec = dict(_pool_worker(engine, items, ids, steps, workers), mode=mode, startup=startup)
        with open(out_path, "w") as f:
            json.dump(rec, f)
        return
    t = time.perf_counter()
    compiles = []
    matchers = []
    for _, kind, spec, _ in items:
        c = time.perf_counter()
        matchers.append(engine.compile(kind, spec))
        compiles.append(time.perf_counter() - c)
    compile_s = time.perf_counter() - t
    batch = _batch(mode, engine, len(items))
    cold, cold_adv = _walk(engine, batch, matchers, ids, steps)
    warm, warm_adv = _walk(engine, batch, batch.fresh(engine, matchers), ids, steps)
    rec = {
        "mode": mode,
        "startup": startup,
        "compile": compile_s,
        "compiles": compiles,
        "cold": cold,
        "cold_adv": cold_adv,
        "warm": warm,
        "warm_adv": warm_adv,
    }
    with open(out_path, "w") as f:
        json.dump(rec, f)


# ---------------------------------------------------------------------------------------------
# Driver


def select_rows(tok, corpus: str, rows: int, steps: int, modes: list[str], max_compile: float) -> list[tuple]:
    """The first ``rows`` jsb schemas with an instance of ``steps`` tokens that every engine walks.

    A schema that some engine takes more than ``max_compile`` seconds to compile is left out too: a
    handful of huge schemas would spend minutes in xgrammar's compile and say nothing about a step.
    """
    # llguidance first: it refuses unsupported schemas in a millisecond, before the slower compiles
    bases = [b for b in ("llguidance", "ours", "xgrammar") if any(m.split("-")[0] == b for m in modes)]
    engines = [ENGINE_CLASSES[b](tok) for b in bases]
    out = []
    for item in jsb_set(corpus, 10_000):
        _, kind, spec, text = item
        ids = tok.encode(text, add_special_tokens=False)
        if len(ids) < steps:
            continue
        try:
            for e in engines:
                t = time.perf_counter()
                m = e.compile(kind, spec)
                if time.perf_counter() - t > max_compile:
                    raise TimeoutError
                for token in ids[:steps]:
                    e.fill(m)
                    e.advance(m, token)
        except Exception:  # refused, rejected or too slow in some engine: not a row for every engine
            continue
        out.append(item)
        if len(out) == rows:
            break
    return out


def _run(mode: str, items_path: str, steps: int, vocab: str, timeout: float, workers: int) -> dict | None:
    fd, out_path = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    env = dict(os.environ, GUIDE_FSM_CACHE="off", PYTHONPATH=ROOT, TOKENIZERS_PARALLELISM="false")
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", mode, "--items", items_path]
    cmd += ["--out", out_path, "--steps", str(steps), "--vocab", vocab, "--pool-workers", str(workers)]
    try:
        subprocess.run(cmd, env=env, timeout=timeout, check=False, stderr=subprocess.DEVNULL)
        with open(out_path) as f:
            return json.load(f) if os.path.getsize(out_path) else None
    except subprocess.TimeoutExpired:
        print(f"# {mode}: worker timed out after {timeout:.0f} s", file=sys.stderr)
        return None
    finally:
        os.unlink(out_path)


def _med(recs: list[dict], key: str, q: float) -> float:
    """Median over repeats of the q-th percentile over steps of ``key``."""
    return float(np.median([np.percentile(r[key], q) for r in recs]))


def report(runs: dict[str, list[dict]], rows: int, steps: int) -> None:
    cols = (
        ("compile ms", lambda rs: float(np.median([r["compile"] for r in rs])) * 1e3),
        ("1st step ms", lambda rs: float(np.median([r["cold"][0] for r in rs])) * 1e3),
        ("cold p50 ms", lambda rs: _med(rs, "cold", 50) * 1e3),
        ("cold p99 ms", lambda rs: _med(rs, "cold", 99) * 1e3),
        ("adv p50 ms", lambda rs: _med(rs, "cold_adv", 50) * 1e3),
        ("warm p50 ms", lambda rs: _med(rs, "warm", 50) * 1e3),
        ("warm p99 ms", lambda rs: _med(rs, "warm", 99) * 1e3),
        ("cold total ms", lambda rs: float(np.median([sum(r["cold"]) for r in rs])) * 1e3),
    )
    print(f"\n## {rows} rows x {steps} steps: masks of all rows per step into one batch bitmask")
    print(f"{'mode':16}" + "".join(f"{name:>15}" for name, _ in cols))
    table = {}
    for mode, recs in runs.items():
        if not recs:
            print(f"{mode:16} no run finished")
            continue
        table[mode] = [fn(recs) for _, fn in cols]
        print(f"{mode:16}" + "".join(f"{v:15.3f}" for v in table[mode]))
    if "ours" not in table:
        return
    for mode, vals in table.items():
        if mode == "ours":
            continue
        ratios = ", ".join(
            f"{name} {a / b:.3g}" for (name, _), a, b in zip(cols, table["ours"], vals, strict=True) if b > 0
        )
        print(f"# ratio ours/{mode}: {ratios}")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=32)
    ap.add_argument("--steps", type=int, default=32)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--modes", default=",".join(MODES))
    ap.add_argument("--vocab", default="smollm2", help="tokenizer: smollm2 (49k) or gemma3 (262k)")
    ap.add_argument("--corpus", default=CORPUS)
    ap.add_argument(
        "--max-compile", type=float, default=1.0, help="s: schemas slower to compile are left out"
    )
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("--pool-workers", type=int, default=os.cpu_count() or 1, help="ours-pool's processes")
    ap.add_argument("--worker")
    ap.add_argument("--items")
    ap.add_argument("--out")
    args = ap.parse_args(argv)
    if args.worker:
        worker(args.worker, args.items, args.out, args.steps, args.vocab, args.pool_workers)
        return
    modes = args.modes.split(",")
    tok = load_tokenizer(args.vocab)
    items = select_rows(tok, args.corpus, args.rows, args.steps, modes, args.max_compile)
    print(
        f"# bench_batch: {len(items)} rows (schemas: {', '.join(it[0] for it in items[:4])}, ...), "
        f"{args.steps} steps, vocabulary {args.vocab} ({len(tok)} tokens), modes {modes}, "
        f"repeats {args.repeats}, fresh process per mode and repeat"
    )
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(items, f)
        items_path = f.name
    runs: dict[str, list[dict]] = {m: [] for m in modes}
    try:
        for rep in range(args.repeats):
            order = modes[rep % len(modes) :] + modes[: rep % len(modes)]
            for mode in order:
                t = time.perf_counter()
                rec = _run(mode, items_path, args.steps, args.vocab, args.timeout, args.pool_workers)
                if rec is not None:
                    runs[mode].append(rec)
                print(f"# repeat {rep + 1}: {mode} {time.perf_counter() - t:.1f} s", file=sys.stderr)
    finally:
        os.unlink(items_path)
    report(runs, len(items), args.steps)


if __name__ == "__main__":
    main()
