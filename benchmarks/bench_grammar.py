"""Grammar constraints: compile time and per-token mask time, beside llguidance and XGrammar.

Run: ``python benchmarks/bench_grammar.py [--docs N]``. Uses the default model's tokenizer (SmolLM2,
49,152 tokens) and the shipped ``json`` and ``arithmetic`` grammars (the same .lark text for every
engine; XGrammar also on its builtin JSON grammar). Token traces are canonical tokenizations of real
JSON instances (JSONSchemaBench, when mounted) and of seeded random expressions. Timings per token:
the call that writes one sequence's packed bitmask (``fill_bitmask`` / ``fill_next_token_bitmask``).

Our index is lazy, so two passes are reported: ``cold`` (a freshly compiled index: first-visit row
walks and cache misses included) and ``warm`` (the same index after serving other documents).
Peers are optional: missing ones are skipped.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import random
import sys
import time

import numpy as np

os.environ.setdefault("OMP_NUM_THREADS", "1")
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

import fsm
from fsm import grammars

CORPUS = pathlib.Path("/work/shared/corpora/jsonschemabench")


def json_docs(n: int, seed: int = 0) -> list[str]:
    """Real JSON instances when the corpus is there, else seeded synthetic ones; some pretty-printed."""
    rng = random.Random(seed)
    values = []
    for name in ("Github_easy", "Github_medium", "Kubernetes", "Snowplow", "Glaiveai2K", "JsonSchemaStore"):
        path = CORPUS / f"{name}.jsonl"
        if path.exists():
            with path.open() as fh:
                for line in fh:
                    for t in json.loads(line)["tests"]:
                        if t.get("valid", True):
                            values.append(t["data"])
    if not values:

        def gen(d=0):
            r = rng.random()
            if d > 3 or r < 0.4:
                return rng.choice(
                    [
                        rng.randint(-1000, 1000),
                        rng.random() * 100,
                        f"text {rng.randint(0, 99)}",
                        True,
                        None,
                        "caf\u00e9",
                    ]
                )
            if r < 0.7:
                return {f"key_{i}": gen(d + 1) for i in range(rng.randint(0, 5))}
            return [gen(d + 1) for _ in range(rng.randint(0, 5))]

        values = [gen() for _ in range(4 * n)]
    rng.shuffle(values)
    out = []
    for v in values:
        doc = json.dumps(v, indent=2 if rng.random() < 0.3 else None, ensure_ascii=False)
        if 20 <= len(doc) <= 2000:
            out.append(doc)
        if len(out) >= n:
            break
    return out


def arithmetic_docs(n: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)

    def expr(d=0):
        r = rng.random()
        if d > 3 or r < 0.35:
            return rng.choice(
                [str(rng.randint(0, 999)), f"{rng.random() * 100:.3g}", rng.choice("xyzab") + "_1"]
            )
        if r < 0.75:
            return expr(d + 1) + rng.choice([" + ", " - ", " * ", " / ", "^", "*"]) + expr(d + 1)
        if r < 0.85:
            return "(" + expr(d + 1) + ")"
        if r < 0.93:
            return (
                rng.choice(["sin", "max", "f"])
                + "("
                + ", ".join(expr(d + 1) for _ in range(rng.randint(1, 3)))
                + ")"
            )
        return "-" + expr(d + 1)

    return [expr() for _ in range(n)]


def pct(xs, q):
    return float(np.percentile(np.asarray(xs) * 1e6, q)) if len(xs) else float("nan")


class Ours:
    name = "guide-fsm"

    def __init__(self, vocab):
        self.vocab = vocab

    def compile(self, lark_text):
        return fsm.compile(fsm.Grammar(lark_text), self.vocab, cache=False)

    def run(self, index, traces):
        words = np.zeros((self.vocab.size + 31) // 32, dtype=np.int32)
        mask_t, adv_t = [], []
        for ids in traces:
            m = index.matcher()
            for t in ids:
                t0 = time.perf_counter()
                m.fill_bitmask(words)
                t1 = time.perf_counter()
                m.advance(t)
                t2 = time.perf_counter()
                mask_t.append(t1 - t0)
                adv_t.append(t2 - t1)
            assert m.is_accepting()
        return mask_t, adv_t


class LLGuidance:
    name = "llguidance"

    def __init__(self, tokenizer):
        import llguidance
        import llguidance.hf
        import llguidance.numpy

        self.llg = llguidance
        self.tok = llguidance.hf.from_tokenizer(tokenizer)

    def compile(self, lark_text):
        g = self.llg.LLMatcher.grammar_from_lark(lark_text)
        m = self.llg.LLMatcher(self.tok, g)
        if m.is_error():
            raise RuntimeError(m.get_error())
        return g

    def run(self, grammar, traces):
        import llguidance.numpy as lnp

        bm = lnp.allocate_token_bitmask(1, self.tok.vocab_size)
        mask_t, adv_t = [], []
        for ids in traces:
            m = self.llg.LLMatcher(self.tok, grammar)
            for t in ids:
                t0 = time.perf_counter()
                lnp.fill_next_token_bitmask(m, bm, 0)
                t1 = time.perf_counter()
                ok = m.consume_token(t)
                t2 = time.perf_counter()
                assert ok, m.get_error()
                mask_t.append(t1 - t0)
                adv_t.append(t2 - t1)
        return mask_t, adv_t


class XGrammar:
    name = "xgrammar"

    def __init__(self, tokenizer):
        import xgrammar as xgr

        self.xgr = xgr
        self.info = xgr.TokenizerInfo.from_huggingface(tokenizer, vocab_size=len(tokenizer))

    def compile(self, lark_text, builtin_json=False):
        compiler = self.xgr.GrammarCompiler(self.info, max_threads=1, cache_enabled=False)
        if builtin_json:
            return compiler.compile_builtin_json_grammar()
        return compiler.compile_grammar(self.xgr.Grammar.from_lark(lark_text))

    def run(self, compiled, traces):
        bm = self.xgr.allocate_token_bitmask(1, self.info.vocab_size)
        mask_t, adv_t = [], []
        for ids in traces:
            m = self.xgr.GrammarMatcher(compiled)
            for t in ids:
                t0 = time.perf_counter()
                m.fill_next_token_bitmask(bm)
                t1 = time.perf_counter()
                ok = m.accept_token(t)
                t2 = time.perf_counter()
                assert ok
                mask_t.append(t1 - t0)
                adv_t.append(t2 - t1)
        return mask_t, adv_t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=40, help="documents per grammar and pass")
    args = ap.parse_args()

    from transformers import AutoTokenizer

    from guide.default_model import default_model_dir

    tokenizer = AutoTokenizer.from_pretrained(default_model_dir())
    vocab = fsm.Vocabulary.from_tokenizer(tokenizer)
    _ = vocab.trie
    engines = [Ours(vocab)]
    for cls in (LLGuidance, XGrammar):
        try:
            engines.append(cls(tokenizer))
        except Exception as exc:
            print(f"# {cls.name} unavailable: {exc}")

    workloads = {"json": json_docs(2 * args.docs), "arithmetic": arithmetic_docs(2 * args.docs)}
    print(
        f"# vocabulary {vocab.size} tokens; {args.docs} documents per pass; times in microseconds per token"
    )
    print(
        f"{'grammar':<11}{'engine':<22}{'compile ms':>11}{'pass':>6}{'tokens':>8}"
        f"{'mask p50':>10}{'mask p99':>10}{'mask mean':>10}{'advance p50':>12}"
    )
    results = {}
    for gname, docs in workloads.items():
        text = grammars.load(gname)
        traces = [tokenizer.encode(d, add_special_tokens=False) for d in docs]
        first, second = traces[: args.docs], traces[args.docs :]
        variants = [(e, e.name, {}) for e in engines]
        if gname == "json" and any(isinstance(e, XGrammar) for e in engines):
            xg = next(e for e in engines if isinstance(e, XGrammar))
            variants.append((xg, "xgrammar (builtin)", {"builtin_json": True}))
        for eng, label, kw in variants:
            try:
                t0 = time.perf_counter()
                compiled = eng.compile(text, **kw)
                compile_ms = (time.perf_counter() - t0) * 1e3
                passes = [("cold", first), ("warm", second)]
                for pname, tr in passes:
                    mask_t, adv_t = eng.run(compiled, tr)
                    row = (pct(mask_t, 50), pct(mask_t, 99), float(np.mean(mask_t) * 1e6), pct(adv_t, 50))
                    results[(gname, label, pname)] = (*row, compile_ms)
                    print(
                        f"{gname:<11}{label:<22}{compile_ms:>11.1f}{pname:>6}{len(mask_t):>8}"
                        f"{row[0]:>10.1f}{row[1]:>10.1f}{row[2]:>10.1f}{row[3]:>12.1f}"
                    )
                if isinstance(eng, Ours):
                    t0 = time.perf_counter()
                    fresh = eng.compile(text)
                    fresh.build_all()
                    print(
                        f"{'':<11}{'  (eager: build_all)':<22}{(time.perf_counter() - t0) * 1e3:>11.1f}"
                        f"   rows={fresh.n_rows}, lexer states={fresh.lexer.n_states}"
                    )
            except Exception as exc:
                print(f"{gname:<11}{label:<22} failed: {type(exc).__name__}: {str(exc)[:120]}")

    print("\n# ratios (peer / ours; > 1 means we are faster)")
    for gname in workloads:
        for pname in ("cold", "warm"):
            ours = results.get((gname, Ours.name, pname))
            if ours is None:
                continue
            for (g, label, p), row in results.items():
                if g != gname or p != pname or label == Ours.name:
                    continue
                print(
                    f"{gname:<11}{pname:<6}{label:<22} mask p50 x{row[0] / ours[0]:.2f}  "
                    f"p99 x{row[1] / ours[1]:.2f}  mean x{row[2] / ours[2]:.2f}  compile x{row[4] / ours[4]:.2f}"
                )


if __name__ == "__main__":
    main()
