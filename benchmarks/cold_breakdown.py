"""Where ours' first request on a new schema spends its time: compile, automaton expansions, trie
walks, and the Python that assembles rows around them.

`bench_cold.py` says how far ours is from the peers; this says which part to work on. One process
serves the JSONSchemaBench set of `bench_cold.py` (``--n`` schemas, the disk cache off, the start-up
of a server done first and untimed), each request as there: compile, first mask, then an advance
and a mask per token of a valid instance. Around it, in this process only, three entry points are
timed: the compile (the spec, `fsm.compile` and a matcher: the automaton, no row) and, inside
masks, `LazyByteDFA.expand` (one state's transition row made on demand) and the compiled trie
walks (`walk_subtrees`, and `narrow_walk` of a narrow row), outermost calls. What
is left of the masks' time is **glue**: choosing how to make a row, numpy around the kernels,
sorting, packing and storing rows. Shares are means over requests of each part's fraction (each
request weighs alike, as in the geo-mean ratios of `bench_cold.py`), then shares of the total.

    python benchmarks/cold_breakdown.py --n 200
    python benchmarks/cold_breakdown.py --n 200 --by-subset
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import sys
import time
from collections import defaultdict

os.environ.setdefault("GUIDE_FSM_CACHE", "off")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

PARTS = ("compile", "expand", "walk", "glue", "advance")


class Timers:
    """Outermost-call timers on functions of other modules, installed for this process only."""

    def __init__(self):
        self.time: dict[str, float] = defaultdict(float)
        self.calls: dict[str, int] = defaultdict(int)
        self._inside: set[str] = set()

    def wrap(self, owner, name: str, part: str, within: str | None = None) -> None:
        """Time ``owner.name`` (a module's function or a class's method) under ``part``, only
        inside a `scope` named ``within`` when given."""
        f = getattr(owner, name)

        def timed(*args, **kwargs):
            if part in self._inside or (within is not None and within not in self._inside):
                return f(*args, **kwargs)  # a nested call is its outer call's time
            self._inside.add(part)
            t0 = time.perf_counter()
            try:
                return f(*args, **kwargs)
            finally:
                self.time[part] += time.perf_counter() - t0
                self.calls[part] += 1
                self._inside.discard(part)

        setattr(owner, name, timed)

    @contextlib.contextmanager
    def scope(self, part: str):
        """Mark a block as ``part`` (for `wrap`'s ``within``); its time is not kept."""
        self._inside.add(part)
        try:
            yield
        finally:
            self._inside.discard(part)

    def take(self) -> tuple[dict[str, float], dict[str, int]]:
        """The times and call counts since the last take, reset."""
        got = dict(self.time), dict(self.calls)
        self.time.clear()
        self.calls.clear()
        return got


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=200, help="JSONSchemaBench schemas (bench_cold's jsb set)")
    ap.add_argument("--by-subset", action="store_true", help="shares per subset too")
    args = ap.parse_args(argv)

    import bench_cold as bc
    from vocabs import load_tokenizer

    import fsm.index.narrow_rows as narrow_rows
    import fsm.index.trie_kernel as trie_kernel
    from fsm.automata import LazyByteDFA

    tok = load_tokenizer("smollm2")
    engine = bc._Ours(tok)  # the server's start-up (`fsm.warm_up`), untimed
    with open(os.devnull, "w") as null:
        bc._serve(engine, bc.jsb_set(bc.CORPUS, 1, skip=300), tok, null)  # one request off the set
    timers = Timers()
    timers.wrap(LazyByteDFA, "expand", "expand", within="fill")
    timers.wrap(trie_kernel, "walk_subtrees", "walk", within="fill")
    timers.wrap(narrow_rows, "narrow_walk", "walk", within="fill")

    rows = []
    kinds: dict[str, list[float]] = defaultdict(lambda: [0, 0.0, 0.0, 0.0])  # n, mask, expand, walk

    def mask(index, m, made: list) -> float:
        """One mask's time; a mask that made its row adds (kind, mask, expansions, walks) to ``made``."""
        before, e0, w0 = index.n_rows, timers.time["expand"], timers.time["walk"]
        with timers.scope("fill"):
            t1 = time.perf_counter()
            engine.fill(m)
            dt = time.perf_counter() - t1
        if index.n_rows > before:
            row = index.row(m.state)
            kind = type(row).__name__
            if kind == "Row":  # a plain row: narrow, or walked (or cut) over most of the vocabulary
                kind = "Row, wide" if len(row.tokens) > index.vocabulary.size // 8 else "Row, narrow"
            made.append((kind, dt, timers.time["expand"] - e0, timers.time["walk"] - w0))
        return dt

    for name, kind, spec, text in bc.jsb_set(bc.CORPUS, args.n):
        ids = tok.encode(text, add_special_tokens=False)
        timers.take()
        fill = advance = 0.0
        made: list[tuple] = []
        t0 = time.perf_counter()
        try:
            m = (index := engine.index(kind, spec)).matcher()  # as bench_cold's ours: `_Ours.compile`
            compiled = time.perf_counter() - t0
            fill += mask(index, m, made)
            for t in ids:
                t1 = time.perf_counter()
                engine.advance(m, t)
                advance += time.perf_counter() - t1
                fill += mask(index, m, made)
        except Exception:
            continue  # refused or its instance rejected: left out, as bench_cold's ratios do
        for row_kind, *times in made:  # the requests walked to the end only, as the shares
            k = kinds[row_kind]
            k[0] += 1
            for i, x in enumerate(times, 1):
                k[i] += x
        total = compiled + fill + advance  # (not the wall time: this script's bookkeeping is left out)
        spent, calls = timers.take()
        # expansions and walks are timed inside masks only: a compile's own count as compile
        part = {
            "compile": compiled,
            "expand": spent.get("expand", 0.0),
            "walk": spent.get("walk", 0.0),
            "advance": advance,
        }
        part["glue"] = max(fill - part["expand"] - part["walk"], 0.0)
        rows.append((name, total, part, calls.get("expand", 0), len(ids)))

    def report(label: str, sel: list) -> None:
        mean = {p: sum(r[2][p] / r[1] for r in sel) / len(sel) for p in PARTS}
        tot = sum(r[1] for r in sel)
        geo = math.exp(sum(math.log(r[1]) for r in sel) / len(sel))
        cells = "  ".join(f"{p} {mean[p] * 100:4.1f}%" for p in PARTS)
        print(f"{label:26s} n={len(sel):3d} geo {geo * 1e3:6.2f} ms  mean share: {cells}")
        if label == "all":
            exp_n = sum(r[3] for r in sel)
            exp_t = sum(r[2]["expand"] for r in sel)
            toks = sum(r[4] for r in sel)
            glue = sum(r[2]["glue"] for r in sel)
            made = sum(k[0] for k in kinds.values())  # masks that made their row
            print(
                f"  totals: {tot:.2f} s; per part "
                + ", ".join(f"{p} {sum(r[2][p] for r in sel) / tot * 100:.1f}%" for p in PARTS)
            )
            print(
                f"  {exp_n:,} expansions at {exp_t / max(exp_n, 1) * 1e6:.1f} µs; {made:,} of "
                f"{toks + len(sel):,} masks made their row; glue {glue / max(made, 1) * 1e6:.1f} µs a row made"
            )

    print(f"# cold_breakdown: {len(rows)} requests walked to the end, vocabulary smollm2, one process")
    report("all", rows)
    print("  masks that made their row, by the row's kind (µs a row: whole mask, expansions, walks, glue):")
    for kind, (n, t, e, w) in sorted(kinds.items(), key=lambda kv: -kv[1][1]):
        print(
            f"    {kind:14s} {n:6,} rows {t:6.2f} s  mask {t / n * 1e6:7.1f}  expand {e / n * 1e6:7.1f}"
            f"  walk {w / n * 1e6:6.1f}  glue {(t - e - w) / n * 1e6:7.1f}"
        )
    if args.by_subset:
        by: dict[str, list] = defaultdict(list)
        for r in rows:
            by[r[0].split("/")[0]].append(r)
        for sub in sorted(by):
            report(sub, by[sub])


if __name__ == "__main__":
    main()
