"""The first request on a new spec, as a server sees it: ours beside llguidance and xgrammar.

Each engine runs in a **fresh process** (the disk cache off: ``GUIDE_FSM_CACHE=off``) that loads
its vocabulary (start-up, not timed; ours includes ``fsm.warm_up``, which ``guide.load`` runs at
model load) and then serves the specs one after the other, each new to it:
compile, first mask, then along a valid instance (the tokenizer's tokens of its compact JSON, or the
regex's example) an advance and a mask per token. Figures per spec:

- time to first mask (compile + matcher + first mask);
- cold-walk masks (every mask of that first request), pooled p50/p99 over the set;
- **per-request constraint time** = time to first mask + every mask and advance along the instance.

Engines are interleaved (one process per engine per repeat, the order rotated every repeat) and
every figure is the median over repeats; ratios ours/peer are geo-means over the specs every engine
walked to the end (a spec one engine refuses or whose instance it rejects is left out of the ratios
and counted). ``--warm-shared`` first runs ours over *other* schemas in the same process (what a
server has seen before), then the set.

    python benchmarks/bench_cold.py --set regex,json --repeats 3
    python benchmarks/bench_cold.py --set jsb --n 42 --repeats 3
    python benchmarks/bench_cold.py --set jsb --n 200 --repeats 1 --per-spec
    python benchmarks/bench_cold.py --set json --repeats 3 --vocab gemma3   # 262k tokens
"""

from __future__ import annotations

import argparse
import glob
import json
import math
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = "/work/shared/corpora/jsonschemabench"
ENGINES = ("ours", "llguidance", "xgrammar")

# ---------------------------------------------------------------------------------------------
# Spec sets: (name, kind, spec, instance text)


def regex_set() -> list[tuple]:
    sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
    from bench_fsm import CASES

    return [(name, "regex", pattern, example) for name, (pattern, example) in CASES.items()]


def _corpus_items(corpus: str) -> dict[str, list[tuple]]:
    by_subset: dict[str, list[tuple]] = {}
    for path in sorted(glob.glob(os.path.join(corpus, "*.jsonl"))):
        sub = os.path.basename(path)[:-6]
        with open(path) as f:
            for line in f:
                d = json.loads(line)
                valid = [t["data"] for t in d.get("tests", []) if t.get("valid")]
                if not valid:
                    continue
                text = json.dumps(valid[0], separators=(",", ":"), ensure_ascii=False)
                by_subset.setdefault(sub, []).append((d["id"], "json", d["schema"], text))
    return by_subset


def json_set(corpus: str) -> list[tuple]:
    """10 schemas: the first with a valid instance of each of 10 subsets (every other subset in name order)."""
    subs = _corpus_items(corpus)
    return [subs[s][0] for s in sorted(subs)[::2][:10]]


def jsb_set(corpus: str, n: int, skip: int = 0) -> list[tuple]:
    """``n`` schemas taken round-robin over the subsets (after the first ``skip`` rounds' worth)."""
    subs = _corpus_items(corpus)
    names = sorted(subs)
    out, i = [], 0
    flat = []
    while any(i < len(subs[s]) for s in names):
        for s in names:
            if i < len(subs[s]):
                flat.append(subs[s][i])
        i += 1
    out = flat[skip : skip + n]
    return out


# ---------------------------------------------------------------------------------------------
# Worker: one engine in a fresh process.


class _Ours:
    def __init__(self, tok):
        import fsm

        self.fsm = fsm
        self.vocab = fsm.Vocabulary.from_tokenizer(tok)
        # start-up, as a server's: what `guide.load` runs on a background thread at model load
        # (the trie and its depth-first numbering, the compiled row walk, the jsonschema import)
        fsm.warm_up(self.vocab)
        self.words = np.zeros((self.vocab.size + 31) // 32, dtype=np.int32)

    def index(self, kind, spec):
        """The compiled index of ``spec`` (`compile` takes its matcher)."""
        s = self.fsm.Regex(spec) if kind == "regex" else self.fsm.JsonSchema(spec)
        return self.fsm.compile(s, self.vocab, limits=self.fsm.Limits(max_seconds=20))

    def compile(self, kind, spec):
        return self.index(kind, spec).matcher()

    def start(self, kind, spec):
        m = self.compile(kind, spec)
        self.fill(m)
        return m

    def fill(self, m):
        m.fill_bitmask(self.words)

    def advance(self, m, t):
        m.advance(t)


class _LLGuidance:
    def __init__(self, tok):
        import llguidance
        import llguidance.hf
        import llguidance.numpy as lln

        self.llg, self.lln = llguidance, lln
        self.tok = llguidance.hf.from_tokenizer(tok)
        self.buf = lln.allocate_token_bitmask(1, self.tok.vocab_size)

    def compile(self, kind, spec):
        M = self.llg.LLMatcher
        if kind == "regex":
            g = M.grammar_from_regex(spec)
        else:
            g = M.grammar_from_json_schema(json.dumps(spec), defaults={"whitespace_flexible": False})
        m = M(self.tok, g)
        if m.is_error():
            raise ValueError(m.get_error())
        return m

    def start(self, kind, spec):
        m = self.compile(kind, spec)
        self.fill(m)
        return m

    def fill(self, m):
        self.lln.fill_next_token_bitmask(m, self.buf, 0)
        if m.is_error():
            raise ValueError(m.get_error())

    def advance(self, m, t):
        if not m.consume_token(t):
            raise ValueError(m.get_error())


class _XGrammar:
    def __init__(self, tok):
        import xgrammar as xgr

        self.xgr = xgr
        self.info = xgr.TokenizerInfo.from_huggingface(tok)
        self.compiler = xgr.GrammarCompiler(self.info, cache_enabled=False)
        self.buf = xgr.allocate_token_bitmask(1, self.info.vocab_size)

    def compile(self, kind, spec):
        if kind == "regex":
            g = self.compiler.compile_regex(spec)
        else:
            g = self.compiler.compile_json_schema(
                json.dumps(spec), any_whitespace=False, separators=(",", ":")
            )
        return self.xgr.GrammarMatcher(g)

    def start(self, kind, spec):
        m = self.compile(kind, spec)
        self.fill(m)
        return m

    def fill(self, m):
        m.fill_next_token_bitmask(self.buf)

    def advance(self, m, t):
        if not m.accept_token(t):
            raise ValueError("rejected")


def _serve(engine, items, tok, out) -> None:
    for name, kind, spec, text in items:
        ids = tok.encode(text, add_special_tokens=False)
        rec = {"name": name, "status": "ok"}
        masks = []
        t0 = time.perf_counter()
        try:
            m = engine.start(kind, spec)
            rec["first"] = time.perf_counter() - t0
            for t in ids:
                engine.advance(m, t)
                t1 = time.perf_counter()
                engine.fill(m)
                masks.append(time.perf_counter() - t1)
        except Exception as exc:
            rec["status"] = "failed" if "first" not in rec else "rejected"
            rec["error"] = f"{type(exc).__name__}: {str(exc)[:100]}"
        rec["total"] = time.perf_counter() - t0
        rec["masks"] = masks
        out.write(json.dumps(rec) + "\n")
        out.flush()


STARTUP = "__startup__"  # the worker's first record: tokenizer load and the engine's vocabulary set-up
ENGINE_CLASSES = {"ours": _Ours, "llguidance": _LLGuidance, "xgrammar": _XGrammar}


def worker(engine_name: str, items_path: str, warm_path: str | None, out_path: str, vocab: str) -> None:
    sys.path.insert(0, ROOT)
    from vocabs import load_tokenizer

    t = time.perf_counter()
    tok = load_tokenizer(vocab)
    loaded = time.perf_counter()
    engine = ENGINE_CLASSES[engine_name](tok)
    startup = {"name": STARTUP, "tokenizer": loaded - t, "vocabulary": time.perf_counter() - loaded}
    with open(items_path) as f:
        items = json.load(f)
    if warm_path:
        with open(warm_path) as f, open(os.devnull, "w") as null:
            _serve(engine, json.load(f), tok, null)
    with open(out_path, "w") as out:
        out.write(json.dumps(startup) + "\n")
        _serve(engine, items, tok, out)


# ---------------------------------------------------------------------------------------------
# Driver


def _run(engine: str, items_path: str, warm_path: str | None, timeout: float, vocab: str) -> list[dict]:
    fd, out_path = tempfile.mkstemp(suffix=".jsonl")
    os.close(fd)
    env = dict(os.environ, GUIDE_FSM_CACHE="off", PYTHONPATH=ROOT, TOKENIZERS_PARALLELISM="false")
    cmd = [
        sys.executable,
        os.path.abspath(__file__),
        "--worker",
        engine,
        "--items",
        items_path,
        "--out",
        out_path,
        "--vocab",
        vocab,
    ]
    if warm_path:
        cmd += ["--warm-items", warm_path]
    try:
        # the peers' warnings (xgrammar prints one per unsupported keyword) go nowhere
        subprocess.run(cmd, env=env, timeout=timeout, check=False, stderr=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        print(f"# {engine}: worker timed out after {timeout:.0f} s", file=sys.stderr)
    with open(out_path) as f:
        recs = [json.loads(line) for line in f if line.strip()]
    os.unlink(out_path)
    return recs


def _geo(xs) -> float:
    xs = [x for x in xs if x > 0 and math.isfinite(x)]
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")


def _per_repeat(ours: list[list[dict]], peer: list[list[dict]], common: list[str]) -> list[float]:
    """The per-request geo ratio of each repeat (ours in repeat k against the peer in repeat k),
    over the specs both walked in that repeat."""
    out = []
    for a, b in zip(ours, peer, strict=False):
        ta = {r["name"]: r["total"] for r in a if r.get("status") == "ok" and r["name"] in common}
        tb = {r["name"]: r["total"] for r in b if r.get("status") == "ok" and r["name"] in common}
        both = [n for n in ta if n in tb]
        if both:
            out.append(_geo([ta[n] / tb[n] for n in both]))
    return out


def report(set_name: str, items: list, runs: dict[str, list[list[dict]]], per_spec: bool) -> None:
    names = [it[0] for it in items]
    engines = list(runs)
    # per engine, per spec: medians over repeats (of runs that walked the instance to the end)
    med: dict[str, dict[str, dict]] = {}
    for e in engines:
        med[e] = {}
        for n in names:
            recs = [r for run in runs[e] for r in run if r["name"] == n]
            ok = [r for r in recs if r["status"] == "ok"]
            if not ok or len(ok) < len(recs):
                med[e][n] = {
                    "status": recs[0]["status"] if recs else "missing",
                    "error": (recs or [{}])[0].get("error"),
                }
                continue
            med[e][n] = {
                "status": "ok",
                "first": float(np.median([r["first"] for r in ok])),
                "total": float(np.median([r["total"] for r in ok])),
                "masks": [r["masks"] for r in ok],
            }
    common = [n for n in names if all(med[e][n]["status"] == "ok" for e in engines)]
    print(f"\n## set {set_name}: {len(items)} specs, {len(common)} walked to the end by every engine")
    for e in engines:
        bad = [n for n in names if med[e][n]["status"] != "ok"]
        if bad:
            reasons: dict[str, int] = {}
            for n in bad:
                reasons[med[e][n]["status"]] = reasons.get(med[e][n]["status"], 0) + 1
            print(f"#   {e}: left out {len(bad)} {reasons}; e.g. {bad[0]}: {med[e][bad[0]].get('error')}")
    if per_spec:
        print(f"{'spec':44} " + " ".join(f"{e + ' 1st ms':>16} {e + ' req ms':>16}" for e in engines))
        for n in common:
            print(
                f"{n[:44]:44} "
                + " ".join(
                    f"{med[e][n]['first'] * 1e3:16.2f} {med[e][n]['total'] * 1e3:16.2f}" for e in engines
                )
            )
    for e in engines:
        ups = [r for run in runs[e] for r in run if r["name"] == STARTUP]
        if ups:
            print(
                f"# {e} start-up (not in the figures), median: tokenizer load "
                f"{np.median([r['tokenizer'] for r in ups]):.2f} s, vocabulary set-up "
                f"{np.median([r['vocabulary'] for r in ups]):.2f} s"
            )
    print(
        f"{'engine':12} {'first ms geo':>13} {'first p50':>10} {'first p90':>10} {'req ms geo':>11} "
        f"{'req total s':>12} {'cold p50 µs':>12} {'cold p99 µs':>12}"
    )
    stats = {}
    for e in engines:
        firsts = [med[e][n]["first"] for n in common]
        totals = [med[e][n]["total"] for n in common]
        # pooled cold masks, p50/p99 per repeat, median over repeats
        reps = len(runs[e])
        p50s, p99s = [], []
        for k in range(reps):
            pool = [x for n in common for x in (med[e][n]["masks"][k] if k < len(med[e][n]["masks"]) else [])]
            if pool:
                p50s.append(np.percentile(pool, 50))
                p99s.append(np.percentile(pool, 99))
        stats[e] = (
            firsts,
            totals,
            float(np.median(p50s)) if p50s else math.nan,
            float(np.median(p99s)) if p99s else math.nan,
        )
        print(
            f"{e:12} {_geo(firsts) * 1e3:13.2f} {np.percentile(firsts, 50) * 1e3 if firsts else math.nan:10.2f} "
            f"{np.percentile(firsts, 90) * 1e3 if firsts else math.nan:10.2f} {_geo(totals) * 1e3:11.2f} "
            f"{sum(totals):12.3f} {stats[e][2] * 1e6:12.1f} {stats[e][3] * 1e6:12.1f}"
        )
    if "ours" in stats:
        for e in engines:
            if e == "ours":
                continue
            f0, t0, c50, c99 = stats["ours"]
            f1, t1, d50, d99 = stats[e]
            rf = _geo([a / b for a, b in zip(f0, f1, strict=True)])
            rt = _geo([a / b for a, b in zip(t0, t1, strict=True)])
            print(
                f"# ratio ours/{e}: first mask geo {rf:.2f}, per-request geo {rt:.2f}, "
                f"cold p50 {c50 / d50:.2f}, cold p99 {c99 / d99:.2f}, first p90 {np.percentile(f0, 90) / np.percentile(f1, 90):.2f}"
            )
            spread = _per_repeat(runs["ours"], runs[e], common)
            if len(spread) > 1:  # the host's noise, shown: repeat k of ours against repeat k of the peer
                print(f"#   per-request geo by repeat: {', '.join(f'{x:.2f}' for x in spread)}")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--set", default="regex,json", help="comma list of regex, json, jsb")
    ap.add_argument("--n", type=int, default=42, help="schemas in the jsb set")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--engines", default=",".join(ENGINES))
    ap.add_argument("--corpus", default=CORPUS)
    ap.add_argument("--per-spec", action="store_true")
    ap.add_argument("--vocab", default="smollm2", help="tokenizer: smollm2 (49k) or gemma3 (262k)")
    ap.add_argument(
        "--warm-shared", type=int, default=0, help="ours serves this many other jsb schemas first"
    )
    ap.add_argument("--timeout", type=float, default=1200)
    ap.add_argument("--worker")
    ap.add_argument("--items")
    ap.add_argument("--warm-items")
    ap.add_argument("--out")
    args = ap.parse_args(argv)
    if args.worker:
        worker(args.worker, args.items, args.warm_items, args.out, args.vocab)
        return
    engines = args.engines.split(",")
    print(
        f"# bench_cold: engines {engines}, vocabulary {args.vocab}, repeats {args.repeats}, "
        "fresh process per engine and repeat"
    )
    for set_name in args.set.split(","):
        if set_name == "regex":
            items = regex_set()
        elif set_name == "json":
            items = json_set(args.corpus)
        else:
            items = jsb_set(args.corpus, args.n)
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump(items, f)
            items_path = f.name
        warm_path = None
        if args.warm_shared:
            # other schemas: the rounds after the set's own
            warm = jsb_set(args.corpus, args.warm_shared, skip=max(args.n, 300))
            with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
                json.dump(warm, f)
                warm_path = f.name
        runs: dict[str, list] = {e: [] for e in engines}
        for rep in range(args.repeats):
            order = engines[rep % len(engines) :] + engines[: rep % len(engines)]
            for e in order:
                t = time.perf_counter()
                runs[e].append(
                    _run(e, items_path, warm_path if e == "ours" else None, args.timeout, args.vocab)
                )
                print(f"# {set_name} repeat {rep + 1}: {e} {time.perf_counter() - t:.1f} s", file=sys.stderr)
        report(
            set_name + (f" (ours warm from {args.warm_shared} other schemas)" if warm_path else ""),
            items,
            runs,
            args.per_spec,
        )
        os.unlink(items_path)
        if warm_path:
            os.unlink(warm_path)


if __name__ == "__main__":
    main()
