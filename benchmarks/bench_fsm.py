"""Regex index benchmark on the real SmolLM2 vocabulary, beside outlines-core, xgrammar and llguidance.

For each regex: time to first mask (compile + first mask), eager full build, per-token mask time
(p50/p99 µs, walking a valid instance tokenized by the real tokenizer) and our index memory.
Every figure is a median over repeats, measured for all libraries in the same run.

    .venv/bin/python benchmarks/bench_fsm.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from peers import Ours, available_peers, load_default_tokenizer, median, pct

CASES = {
    "email": (r"[a-zA-Z0-9._%+-]{1,30}@[a-zA-Z0-9.-]{1,20}\.[a-zA-Z]{2,6}", "ada.lovelace@example.org"),
    "iso_date": (r"\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])", "2024-11-22"),
    "float": (r"-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?", "-12345.678e-9"),
    "phone": (r"\(\d{3}\) \d{3}-\d{4}", "(555) 123-4567"),
    "ipv4": (r"((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)", "192.168.100.254"),
    "uuid": (
        r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
        "123e4567-e89b-12d3-a456-426614174000",
    ),
    "sentence": (r"[A-Z][a-z]*( [a-z]+){0,19}\.", "The quick brown fox jumps over the lazy dog."),
}


def measure(lib, kind, spec, ids, words, repeats):
    """Time to first mask, then mask times on a cold walk (fresh compile) and a warm one (same index,
    new matcher: what every request after the first sees)."""
    first, cold, warm = [], [], []
    for _ in range(repeats):
        t = time.perf_counter()
        m = lib.compile(kind, spec)
        m.fill(words)
        first.append(time.perf_counter() - t)
        for tid in ids:
            m.advance(tid)
            t = time.perf_counter()
            m.fill(words)
            cold.append(time.perf_counter() - t)
        m = m.fresh()
        m.fill(words)
        for tid in ids:
            m.advance(tid)
            t = time.perf_counter()
            m.fill(words)
            warm.append(time.perf_counter() - t)
    return median(first), pct(cold, 50), pct(cold, 99), pct(warm, 50), pct(warm, 99)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    tok, vocab = load_default_tokenizer()
    _ = vocab.trie  # built once per vocabulary, outside the timings (as peers build their tokenizer info)
    ours = Ours(tok, vocab)
    peers = available_peers(tok, vocab)
    words = np.zeros((vocab.size + 31) // 32, dtype=np.int32)
    print(f"# vocabulary: SmolLM2, {vocab.size} tokens; repeats={args.repeats}; times are medians")
    header = (
        f"{'regex':10} {'lib':14} {'first mask ms':>14} {'cold p50 µs':>12} {'cold p99 µs':>12} "
        f"{'warm p50 µs':>12} {'warm p99 µs':>12} {'eager ms':>10}"
    )
    print(header)
    ratios: dict[str, list] = {}
    for name, (pattern, example) in CASES.items():
        ids = tok.encode(example, add_special_tokens=False)
        f, c50, c99, w50, w99 = measure(ours, "regex", pattern, ids, words, args.repeats)
        eager = median([ours.build_all("regex", pattern) for _ in range(args.repeats)])
        mem = ours.compile("regex", pattern).index.build_all().nbytes
        print(
            f"{name:10} {'ours':14} {f * 1e3:14.2f} {c50 * 1e6:12.1f} {c99 * 1e6:12.1f} {w50 * 1e6:12.1f} {w99 * 1e6:12.1f} "
            f"{eager * 1e3:10.1f}   mem {mem / 1024:.0f} KiB"
        )
        for peer in peers:
            try:
                pf, pc50, pc99, pw50, pw99 = measure(peer, "regex", pattern, ids, words, args.repeats)
            except Exception as exc:
                print(f"{name:10} {peer.name:14} failed: {str(exc)[:60]}")
                continue
            # outlines-core builds its whole index eagerly: its first-mask time is its eager build.
            pe = pf if peer.name == "outlines-core" else float("nan")
            print(
                f"{name:10} {peer.name:14} {pf * 1e3:14.2f} {pc50 * 1e6:12.1f} {pc99 * 1e6:12.1f} {pw50 * 1e6:12.1f} "
                f"{pw99 * 1e6:12.1f} {pe * 1e3:10.1f}"
            )
            ratios.setdefault(peer.name, []).append(
                (f / pf, w50 / pw50, eager / pe if pe == pe else float("nan"), c50 / pc50)
            )
    print("\n# ratios ours/peer (medians over regexes; < 1 means we are faster)")
    for peer, rs in ratios.items():
        r = np.array(rs)
        eager = np.nanmedian(r[:, 2]) if peer == "outlines-core" else float("nan")
        print(
            f"{peer:14} first-mask {np.nanmedian(r[:, 0]):.3f} (worst {np.nanmax(r[:, 0]):.3f})   "
            f"warm mask p50 {np.nanmedian(r[:, 1]):.3f}   cold mask p50 {np.nanmedian(r[:, 3]):.3f}   eager {eager:.3f}"
        )


if __name__ == "__main__":
    main()
