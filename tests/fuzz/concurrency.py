"""Concurrency as a server sees it: threads compiling specs while others run matchers on shared indexes.

`run` starts ``compilers`` threads that compile specs of a pool again and again (fresh builds and
through the shared memory cache) and ``matchers`` threads that replay random walks on indexes
shared by all of them — ``fill_bitmask``/``advance``/``rollback``/``copy`` — and compares every
mask with the one a single thread computed before the threads started. The threads stop after
``seconds``; a thread still alive ``join_timeout`` seconds later is a deadlock.

    .venv/bin/python tests/fuzz/run_fuzz.py --only concurrency --duration 60
"""

from __future__ import annotations

import random
import resource
import threading
import time
from dataclasses import dataclass, field

import numpy as np

import fsm
from fsm.compiler import memory_cache_info
from fsm.testing import random_walk


def spec_pool() -> list[fsm.Spec]:
    """Different specs of every front end (regex, choice, JSON schema, grammar)."""
    pool: list[fsm.Spec] = []
    for i in range(6):
        pool.append(fsm.Regex(f"[a-z]{{1,{i + 3}}}@[a-z]{{2,{i + 4}}}\\.(com|org|n{i})"))
        pool.append(fsm.Choice([f"option-{i}-{k}" for k in range(i + 2)]))
        pool.append(
            fsm.JsonSchema(
                {
                    "type": "object",
                    "properties": {"name": {"type": "string", "maxLength": 5 + i}, "n": {"type": "integer"}},
                    "required": ["name"],
                }
            )
        )
        if i % 2:
            pool.append(fsm.Grammar(f'start: "[" (item ("," item)*)? "]"\nitem: "i{i}" | start\n'))
        else:
            pool.append(fsm.Grammar(f'start: "(" start ")" | "x{i}" | NUM\n%import common.INT -> NUM\n'))
    return pool


@dataclass
class Reference:
    """One walk computed by a single thread: its tokens and the packed mask before each of them."""

    tokens: list[int]
    masks: list[np.ndarray]


def reference_walks(index: fsm.Index, seed: int, walks: int = 4, max_tokens: int = 30) -> list[Reference]:
    """Random walks of ``index`` and their masks, computed in the calling thread."""
    rng = random.Random(seed)
    words = (index.vocabulary.size + 31) // 32
    out = []
    for _ in range(walks):
        w = random_walk(index, rng, max_tokens=max_tokens)
        m = index.matcher()
        masks = []
        for t in w.tokens:
            buf = np.zeros(words, dtype=np.int32)
            m.fill_bitmask(buf)
            masks.append(buf)
            m.advance(t)
        buf = np.zeros(words, dtype=np.int32)
        m.fill_bitmask(buf)
        masks.append(buf)
        out.append(Reference(w.tokens, masks))
    return out


@dataclass
class Report:
    """What the threads did: walks replayed, compiles, mismatches, deadlocks, errors, memory."""

    walks: int = 0
    compiles: int = 0
    mismatches: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    alive: int = 0
    cache_bytes: int = 0
    cache_budget: int = 0
    rss_growth: int = 0


def _replay(index: fsm.Index, ref: Reference, rnd: random.Random) -> str | None:
    """Replay ``ref`` on ``index``; rollbacks and copies on the way; the first difference, or None."""
    words = len(ref.masks[0])
    buf = np.zeros(words, dtype=np.int32)
    m = index.matcher()
    for i, t in enumerate(ref.tokens):
        m.fill_bitmask(buf)
        if not np.array_equal(buf, ref.masks[i]):
            return f"mask {i} differs"
        m.advance(t)
        if i and rnd.random() < 0.2:  # step back and forth: the mask must come back the same
            m.rollback(1)
            m.fill_bitmask(buf)
            if not np.array_equal(buf, ref.masks[i]):
                return f"mask {i} differs after rollback"
            m.advance(t)
        if rnd.random() < 0.1:
            m = m.copy()
    m.fill_bitmask(buf)
    return None if np.array_equal(buf, ref.masks[-1]) else "final mask differs"


def run(
    vocab: fsm.Vocabulary, seconds: float, compilers: int = 8, matchers: int = 8, join_timeout: float = 120.0
) -> Report:
    """Run the threads for ``seconds`` (see the module docstring); their `Report`."""
    pool = spec_pool()
    shared = [fsm.compile(spec, vocab, cache=False) for spec in pool]  # shared by the matcher threads
    refs = [reference_walks(fsm.compile(spec, vocab, cache=False), seed) for seed, spec in enumerate(pool)]
    report = Report()
    lock = threading.Lock()
    stop = time.monotonic() + seconds
    base_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024

    def note(kind: str, text: str) -> None:
        with lock:
            getattr(report, kind).append(text)

    def matcher_thread(k: int) -> None:
        rnd = random.Random(1000 + k)
        try:
            while time.monotonic() < stop:
                i = rnd.randrange(len(pool))
                problem = _replay(shared[i], rnd.choice(refs[i]), rnd)
                if problem:
                    note("mismatches", f"shared index of {pool[i]!r:.80}: {problem}")
                with lock:
                    report.walks += 1
        except Exception as exc:  # reported, so the test fails with the cause
            note("errors", f"matcher thread {k}: {exc!r}")

    def compiler_thread(k: int) -> None:
        rnd = random.Random(2000 + k)
        try:
            while time.monotonic() < stop:
                i = rnd.randrange(k % len(pool), len(pool), compilers)  # thread k: its own specs
                index = fsm.compile(pool[i], vocab, cache=rnd.random() < 0.5)
                problem = _replay(index, rnd.choice(refs[i]), rnd)
                if problem:
                    note("mismatches", f"compiled in a thread {pool[i]!r:.80}: {problem}")
                with lock:
                    report.compiles += 1
        except Exception as exc:  # reported, so the test fails with the cause
            note("errors", f"compiler thread {k}: {exc!r}")

    threads = [threading.Thread(target=matcher_thread, args=(k,), daemon=True) for k in range(matchers)]
    threads += [threading.Thread(target=compiler_thread, args=(k,), daemon=True) for k in range(compilers)]
    for t in threads:
        t.start()
    end = time.monotonic() + seconds + join_timeout
    for t in threads:
        t.join(max(0.0, end - time.monotonic()))
    report.alive = sum(t.is_alive() for t in threads)
    info = memory_cache_info()
    report.cache_bytes, report.cache_budget = info.nbytes, info.budget
    report.rss_growth = max(0, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - base_rss)
    return report
