"""JSON Schema constraints on JSONSchemaBench: coverage, time to first mask, accepted-invalid.

For every schema of each subset (``/work/shared/corpora/jsonschemabench`` or ``--corpus``), each
engine compiles the schema for the SmolLM2 vocabulary and computes the first token mask, in a worker
process with a hard timeout. Reported per subset and engine:

- coverage: the share of schemas that compile without error within ``--timeout`` seconds (10);
- time to first mask (compile + first bitmask), p50 and p90 over the schemas that compiled;
- accepted-invalid: MaskBench instances labelled invalid that the constraint lets through
  (instance text = compact ``json.dumps``, fed as the tokenizer's tokens), and valid instances
  rejected (informative: property order, number spelling and policies differ between engines).

Engines: ours (``fsm.JsonSchema``), and llguidance / xgrammar / outlines-core when installed
(the ``bench`` extra), all with compact whitespace. Ratios are ours / peer.

    python benchmarks/bench_json.py --per-subset 40
    python benchmarks/bench_json.py --all --engines ours,llguidance
"""

from __future__ import annotations

import argparse
import contextlib
import glob
import json
import multiprocessing as mp
import os
import sys
import time
import traceback
import warnings

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
CORPUS = "/work/shared/corpora/jsonschemabench"


# ---------------------------------------------------------------------------------------------
# Engines: init() once per worker process, run(schema, instances) per schema.


class Ours:
    name = "ours"

    def __init__(self, exact: bool = False):
        self.exact = exact  # JsonSchema(..., exact=True): the schema's exact language

    def init(self, tok):
        import fsm
        import fsm.testing

        self.fsm = fsm
        self.vocab = fsm.Vocabulary.from_tokenizer(tok)
        _ = self.vocab.trie  # built once, outside the timings
        self.words = (self.vocab.size + 31) // 32
        # first compiles warm imports outside the timings: numpy, re parser tables, jsonschema (which
        # with the dev extras imports rfc3987_syntax, seconds of lark parsers built at import), lark
        for warm in (
            {"type": "string"},
            {"type": "string", "enum": ["a", "b"], "maxLength": 1},
            {"type": "array", "items": {"$ref": "#"}},
        ):
            fsm.compile(fsm.JsonSchema(warm), self.vocab, cache=False).matcher().allowed_token_ids()

    def compile(self, schema, timeout):
        from fsm.json.schema import JsonSchema

        idx = self.fsm.compile(
            JsonSchema(schema, exact=self.exact),
            self.vocab,
            limits=self.fsm.Limits(max_seconds=timeout),
            cache=False,
        )
        m = idx.matcher()
        m.fill_bitmask(np.zeros(self.words, dtype=np.int32))
        return idx

    def accepts(self, idx, ids):
        return self.fsm.testing.accepts(idx, ids)


class LLGuidance:
    name = "llguidance"

    def init(self, tok):
        import llguidance
        import llguidance.hf

        self.ll = llguidance
        self.tokenizer = llguidance.hf.from_tokenizer(tok)
        self.eos = tok.eos_token_id

    def compile(self, schema, timeout):
        grammar = self.ll.LLMatcher.grammar_from_json_schema(schema, defaults={"whitespace_flexible": False})
        m = self.ll.LLMatcher(self.tokenizer, grammar)
        if m.is_error():
            raise RuntimeError(m.get_error())
        m.compute_bitmask()
        if m.is_error():
            raise RuntimeError(m.get_error())
        return grammar

    def accepts(self, grammar, ids):
        m = self.ll.LLMatcher(self.tokenizer, grammar)
        if m.try_consume_tokens(ids) != len(ids):
            return False
        return m.is_accepting()


class XGrammar:
    name = "xgrammar"

    def init(self, tok):
        import xgrammar as xgr

        self.xgr = xgr
        self.info = xgr.TokenizerInfo.from_huggingface(tok)
        self.compiler = xgr.GrammarCompiler(self.info, cache_enabled=False)
        self.eos = tok.eos_token_id

    def compile(self, schema, timeout):
        g = self.compiler.compile_json_schema(json.dumps(schema), any_whitespace=False, separators=(",", ":"))
        m = self.xgr.GrammarMatcher(g)
        bm = self.xgr.allocate_token_bitmask(1, self.info.vocab_size)
        m.fill_next_token_bitmask(bm)
        return g

    def accepts(self, g, ids):
        m = self.xgr.GrammarMatcher(g)
        for t in ids:
            if not m.accept_token(t):
                return False
        return m.accept_token(self.eos)


class OutlinesCore:
    name = "outlines"

    def init(self, tok):
        import outlines_core

        self.oc = outlines_core
        vocab = {}
        for tid in range(len(tok)):
            piece = tok.convert_ids_to_tokens(tid)
            if tid == tok.eos_token_id or piece is None:
                continue
            vocab.setdefault(piece, []).append(tid)
        self.vocabulary = outlines_core.Vocabulary(tok.eos_token_id, vocab)

    def compile(self, schema, timeout):
        from outlines_core.json_schema import build_regex_from_schema

        regex = build_regex_from_schema(json.dumps(schema), whitespace_pattern="")
        index = self.oc.Index(regex, self.vocabulary)
        guide = self.oc.Guide(index)
        guide.get_tokens()
        return index

    def accepts(self, index, ids):
        guide = self.oc.Guide(index)
        try:
            for t in ids:
                guide.advance(t)
        except Exception:
            return False
        return guide.is_finished() or self.vocabulary.get_eos_token_id() in guide.get_tokens()


ENGINES = {e.name: e for e in (Ours, LLGuidance, XGrammar, OutlinesCore)}


def _available(name: str) -> bool:
    mod = {"ours": "fsm", "llguidance": "llguidance", "xgrammar": "xgrammar", "outlines": "outlines_core"}[
        name
    ]
    try:
        __import__(mod)
        return True
    except Exception:
        return False


# ---------------------------------------------------------------------------------------------
# Worker process


def _worker(name: str, conn, exact: bool = False) -> None:
    warnings.simplefilter("ignore")
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    from transformers import AutoTokenizer

    from guide.default_model import default_model_dir

    tok = AutoTokenizer.from_pretrained(default_model_dir())
    if name != "ours":  # peers log every ignored keyword from native code: keep the report readable
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 2)
    engine = Ours(exact) if name == "ours" else ENGINES[name]()
    engine.init(tok)
    conn.send("ready")
    while True:
        msg = conn.recv()
        if msg is None:
            return
        schema, instances, timeout = msg
        rec: dict = {}
        t0 = time.perf_counter()
        try:
            compiled = engine.compile(schema, timeout)
            rec["t"] = time.perf_counter() - t0
            rec["ok"] = rec["t"] <= timeout
            if not rec["ok"]:
                rec["err"] = "over the time limit"
        except Exception as exc:  # every failure is a coverage miss, recorded with its reason
            rec = {
                "ok": False,
                "t": time.perf_counter() - t0,
                "err": f"{type(exc).__name__}: {str(exc)[:200]}",
            }
        if rec["ok"]:
            acc_inv = val_rej = val_acc = 0
            for text, valid in instances:
                ids = tok.encode(text, add_special_tokens=False)
                try:
                    a = engine.accepts(compiled, ids)
                except Exception:
                    a = False
                if valid:
                    val_acc += a
                    val_rej += not a
                elif a:
                    acc_inv += 1
            rec.update(acc_invalid=acc_inv, valid_rejected=val_rej, valid_accepted=val_acc)
        conn.send(rec)


class Runner:
    """One engine in a worker process; a schema over the hard timeout kills and restarts it."""

    def __init__(self, name: str, timeout: float, exact: bool = False):
        self.name = name
        self.timeout = timeout
        self.exact = exact
        self._start()

    def _start(self) -> None:
        ctx = mp.get_context("spawn")
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_worker, args=(self.name, child, self.exact), daemon=True)
        self.proc.start()
        if not self.conn.poll(600) or self.conn.recv() != "ready":
            raise RuntimeError(f"{self.name} worker did not start")

    def run(self, schema, instances) -> dict:
        self.conn.send((schema, instances, self.timeout))
        # anything past the timeout is a coverage miss anyway; peers' native compiles cannot be
        # interrupted, so the worker is killed a little after it
        if self.conn.poll(self.timeout + 5):
            try:
                return self.conn.recv()
            except EOFError:
                pass
        self.proc.kill()  # our own worker, by handle
        self.proc.join()
        self._start()
        return {"ok": False, "t": self.timeout, "err": "timeout (killed)"}

    def close(self) -> None:
        try:
            self.conn.send(None)
            self.proc.join(5)
        except Exception:
            pass
        if self.proc.is_alive():
            self.proc.kill()


# ---------------------------------------------------------------------------------------------


def _load(corpus: str, subsets, per_subset: int | None):
    out = []
    for path in sorted(glob.glob(os.path.join(corpus, "*.jsonl"))):
        sub = os.path.basename(path)[:-6]
        if subsets and sub not in subsets:
            continue
        with open(path) as f:
            lines = f.readlines()
        if per_subset:
            lines = lines[:per_subset]
        for line in lines:
            d = json.loads(line)
            inst = [
                (json.dumps(t["data"], separators=(",", ":"), ensure_ascii=False), bool(t["valid"]))
                for t in d.get("tests", [])
            ]
            out.append((sub, d["id"], d["schema"], inst))
    return out


def _pct(xs, q):
    return float(np.percentile(xs, q)) if xs else float("nan")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default=CORPUS)
    ap.add_argument("--per-subset", type=int, default=40)
    ap.add_argument("--all", action="store_true", help="every schema of every subset")
    ap.add_argument("--subsets", default="")
    ap.add_argument("--engines", default="ours,llguidance,xgrammar,outlines")
    ap.add_argument("--timeout", type=float, default=10.0)
    ap.add_argument("--out", default="", help="append per-schema records (jsonl) here")
    ap.add_argument("--exact", action="store_true", help="ours in exact mode (JsonSchema(exact=True))")
    ap.add_argument(
        "--report",
        default="",
        help="no run: print the tables from records (jsonl) of earlier runs; "
        "a later record of the same engine and schema replaces an earlier one",
    )
    args = ap.parse_args(argv)

    items = _load(
        args.corpus, set(filter(None, args.subsets.split(","))), None if args.all else args.per_subset
    )
    if args.report:
        latest: dict[tuple, dict] = {}
        for path in args.report.split(","):
            with open(path) as f:
                for line in f:
                    r = json.loads(line)
                    latest[(r["engine"], r["id"])] = r
        wanted = {it[1] for it in items}
        names = [n for n in args.engines.split(",") if any(e == n for e, _ in latest)]
        results = {n: [r for (e, i), r in latest.items() if e == n and i in wanted] for n in names}
        _report(items, names, results)
        return
    names = [n for n in args.engines.split(",") if n and _available(n)]
    mode = " (ours in exact mode)" if args.exact else ""
    print(f"{len(items)} schemas; engines: {', '.join(names)}{mode}", flush=True)
    results: dict[str, list] = {n: [] for n in names}
    with contextlib.ExitStack() as stack:
        out = stack.enter_context(open(args.out, "a")) if args.out else None
        for name in names:
            results[name] = _run_engine(name, items, args.timeout, out, args.exact)
    _report(items, names, results)


def _run_engine(name: str, items, timeout: float, out, exact: bool = False) -> list:
    """Every schema through one engine's worker; each record also appended to ``out`` (jsonl) when given."""
    runner = Runner(name, timeout, exact)
    t0 = time.time()
    records = []
    for sub, sid, schema, inst in items:
        try:
            rec = runner.run(schema, inst)
        except Exception:  # deliberately broad: a worker failure is this schema's record, not the run's end
            rec = {"ok": False, "t": timeout, "err": traceback.format_exc(limit=1)[-200:]}
        rec.update(engine=name, subset=sub, id=sid)
        records.append(rec)
        if out:
            out.write(json.dumps(rec) + "\n")
            out.flush()
    runner.close()
    print(f"  {name}: {time.time() - t0:.0f} s", flush=True)
    return records


def _report(items, names: list[str], results: dict[str, list]) -> None:
    subsets = sorted({it[0] for it in items})
    print()
    head = f"{'subset':24s} {'n':>5s}"
    for n in names:
        head += f" | {n[:10]:>10s} cov  p50ms  p90ms acc-inv"
    print(head)
    totals = {n: [] for n in names}
    for sub in [*subsets, "ALL"]:
        line = ""
        for n in names:
            rs = [r for r in results[n] if sub == "ALL" or r["subset"] == sub]
            ok = [r for r in rs if r["ok"]]
            ts = [r["t"] * 1000 for r in ok]
            cov = len(ok) / max(len(rs), 1)
            inv = sum(r.get("acc_invalid", 0) for r in ok)
            line += f" | {'':10s} {cov:4.2f} {_pct(ts, 50):6.1f} {_pct(ts, 90):6.1f} {inv:7d}"
            if sub == "ALL":
                totals[n] = rs
        print(f"{sub:24s} {len([i for i in items if sub == 'ALL' or i[0] == sub]):5d}" + line)
    if "ours" in names:
        print("\nratios (ours / peer), on all schemas:")
        mine = {r["id"]: r for r in results["ours"]}
        for n in names:
            if n == "ours":
                continue
            both = [(mine[r["id"]], r) for r in results[n] if r["ok"] and mine.get(r["id"], {}).get("ok")]
            cov_o = sum(r["ok"] for r in results["ours"])
            cov_p = sum(r["ok"] for r in results[n])
            if both:
                p50 = _pct([a["t"] for a, _ in both], 50) / _pct([b["t"] for _, b in both], 50)
                p90 = _pct([a["t"] for a, _ in both], 90) / _pct([b["t"] for _, b in both], 90)
            else:
                p50 = p90 = float("nan")
            print(
                f"  vs {n:10s}: coverage {cov_o}/{cov_p} = {cov_o / max(cov_p, 1):.2f}; "
                f"first-mask time on schemas both compile ({len(both)}): p50 x{p50:.2f}, p90 x{p90:.2f}"
            )
    print(
        "\nvalid instances rejected (informative): "
        + ", ".join(
            f"{n} {sum(r.get('valid_rejected', 0) for r in results[n])}/"
            f"{sum(r.get('valid_rejected', 0) + r.get('valid_accepted', 0) for r in results[n])}"
            for n in names
        )
    )


if __name__ == "__main__":
    main()
