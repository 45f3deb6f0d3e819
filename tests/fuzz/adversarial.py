"""Hostile specs, each compiled (then its first mask filled) in a forked child under a budget.

`FAMILIES` lists ``(family, spec factory)`` entries; a factory takes a seeded ``random.Random``
and returns the family's specs (any `fsm.Spec`), so other front ends add theirs with one line::

    FAMILIES.append(("json: deep nesting", lambda rnd: [fsm.JsonSchema(...), ...]))

`run_case` forks, compiles with the given `fsm.Limits`, fills the first mask and reports
`Outcome`: what happened (``ok``, the `fsm.SpecError` subclass and budget, or a crash), the
compile and first-mask times measured in the child, and its peak RSS growth (``ru_maxrss`` of
the child, which starts at the RSS it had when forked, or of lark's grandchild when bigger, minus
the RSS at the fork). A child that does not
report within the budget plus a grace period is killed and reported as ``hang``.

Long runs and the table in docs/limits.md::

    .venv/bin/python -m tests.fuzz.adversarial --seconds 10 --repeat 3
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import random
import resource
import select
import signal
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass

# fsm imports jsonschema lazily, on a schema's first literal check (seconds with the format extras);
# a server has it loaded, so it is loaded here once rather than in every child, like the vocabulary
import jsonschema  # noqa: F401
import numpy as np

import fsm
from tests.fuzz.hostile_json import (
    json_all_of_patterns,
    json_deep_nesting,
    json_huge_enums,
    json_item_products,
    json_long_strings,
    json_many_properties,
    json_ref_chains,
)

SpecFactory = Callable[[random.Random], Sequence[fsm.Spec]]
GRACE = 20.0  # seconds past the bound before a silent child is killed as a hang


def bound(limits: fsm.Limits) -> float:
    """The wall time every compile (and every first mask) must end within: max_seconds + 10 % + 0.5 s."""
    return limits.max_seconds * 1.1 + 0.5


@dataclass(frozen=True)
class Outcome:
    """What one hostile spec did in its child process."""

    family: str
    spec: str  # a short description of the spec (its text, cut)
    result: str  # "ok", "<SpecError subclass>:<budget>", "crash: ...", "hang", "killed: <signal>"
    compile_seconds: float
    mask_seconds: float
    rss_growth: int  # bytes
    # CPU seconds of the child and its lark grandchild: what the library itself spent. On a loaded
    # machine wall time also counts the time spent waiting for a core, which no budget controls.
    compile_cpu: float = float("nan")
    mask_cpu: float = float("nan")

    def within(self, seconds: float) -> bool:
        """Compile and first mask each ended within ``seconds`` of wall time, or of CPU time when the
        machine was too loaded for wall time to measure the library (a hang has no CPU time: the
        collector's timeout reports it as "hang")."""
        return all(
            min(wall, cpu) <= seconds
            for wall, cpu in ((self.compile_seconds, self.compile_cpu), (self.mask_seconds, self.mask_cpu))
        )

    @property
    def spec_error(self) -> bool:
        """The compile ended in a `fsm.SpecError` subclass (the only error allowed)."""
        return not self.result.startswith(("ok", "crash", "hang", "killed"))


# ---------------------------------------------------------------------------------------------
# Hostile regexes


def nested_repeats(rnd: random.Random) -> list[fsm.Spec]:
    """Counted repeats inside counted repeats: the counts multiply."""
    n = rnd.randint(60, 120)
    return [
        fsm.Regex(f"(a{{1,{n}}}){{1,{n}}}"),
        fsm.Regex("((a{1,100}){1,100}){1,100}"),
        fsm.Regex(f"([a-z]{{2,{n}}}-){{3,{n}}}"),
        fsm.Regex(f"((\\d{{1,20}}|x){{1,{4 * n}}}y){{2,5}}"),
        fsm.Regex("(a{0,30}b{0,30}){0,40}c"),
    ]


def near_equal_alternations(rnd: random.Random) -> list[fsm.Spec]:
    """Thousands of literals one character apart (a wide, deep trie)."""
    stem = "".join(rnd.choice("abcdefgh") for _ in range(40))
    words = {stem[: rnd.randint(30, 40)] + "".join(rnd.choice("xyz") for _ in range(6)) for _ in range(4000)}
    many = sorted(words)
    rnd.shuffle(many)
    return [
        fsm.Regex("|".join(many)),  # over the text budget: refused before Python parses it
        fsm.Regex("|".join(many[:1000])),
        fsm.Choice(many[:1100]),
        fsm.Regex("(?:" + "|".join(many[:500]) + "){1,20}"),
    ]


def ambiguity(rnd: random.Random) -> list[fsm.Spec]:
    """(a|aa)*-style ambiguity, and the n-th-from-last letter (2^n DFA states)."""
    k = rnd.randint(18, 22)
    return [
        fsm.Regex(f"[ab]*a[ab]{{{k}}}"),
        fsm.Regex(f"(.*a){{{k}}}"),
        fsm.Regex("(a|aa)*b"),
        fsm.Regex("(a|aa|aaa|aaaa)*(b|bb)*c{1,200}"),
        fsm.Regex("(x+x+)+y"),
    ]


def huge_classes(rnd: random.Random) -> list[fsm.Spec]:
    """Classes over the whole code space, and many scattered ranges."""
    scattered = "".join(
        f"\\U{a:08x}-\\U{a + rnd.randint(1, 50):08x}"
        for a in sorted(rnd.sample(range(0x100, 0x10000, 64), 600))
    )
    return [
        fsm.Regex(f"[{scattered}]{{1,40}}"),
        fsm.Regex("[\\x00-\\U0010ffff]{1,300}"),
        fsm.Regex("[\\x00-\\U0010ffff]{2}x"),
        fsm.Regex("(?i)[^\\W\\d_]{1,100}[\\u0100-\\uffff]{10,20}"),
    ]


def deep_groups(rnd: random.Random) -> list[fsm.Spec]:
    """Groups nested hundreds to thousands deep."""
    d = rnd.randint(400, 600)
    return [
        fsm.Regex("(" * 5000 + "a" + ")" * 5000),
        fsm.Regex("(?:" * d + "a|b" + ")?" * d),
        fsm.Regex("".join(f"(x{i % 10}" for i in range(d)) + ")*" * d),
        fsm.Regex("(?:a?){300}a{300}"),
    ]


# ---------------------------------------------------------------------------------------------
# Hostile Lark grammars


def many_rules(rnd: random.Random) -> list[fsm.Spec]:
    """Hundreds to thousands of rules, or one line holding hundreds of alternatives."""
    n = rnd.randint(1500, 2500)
    chain = "\n".join(["start: r0", *(f'r{i}: "k{i}" r{i + 1}?' for i in range(n)), f'r{n}: "end"'])
    alts = "start: " + " | ".join(f'"w{i}" start?' for i in range(400))
    words = "\n".join(["start: item+", "item: " + " | ".join(f'"w{i:04d}"' for i in range(3000))])
    return [fsm.Grammar(words), fsm.Grammar(chain), fsm.Grammar(alts)]


def deep_nesting(rnd: random.Random) -> list[fsm.Spec]:
    """Rules nested hundreds of levels, and an expression grammar with many precedence levels."""
    d = rnd.randint(250, 350)
    nest = "\n".join(["start: n0", *(f'n{i}: "(" n{i + 1} ")" | "x"' for i in range(d)), f'n{d}: "y"'])
    levels = [f'e{i}: e{i} "o{i}" e{i + 1} | e{i + 1}' for i in range(60)]
    expr = "\n".join(["start: e0", *levels, 'e60: /[0-9]+/ | "(" e0 ")"'])
    # the biggest expression grammar under 1,000 characters: lark builds it in-process, unbounded
    small = [f'e{i}:e{i} "{i}" e{i + 1}|e{i + 1}' for i in range(48)]
    under = "\n".join(["start:e0", *small, 'e48:/[0-9]+/|"(" e0 ")"'])
    assert len(under) < 1000
    return [fsm.Grammar(nest), fsm.Grammar(expr), fsm.Grammar(under)]


def ambiguous_terminals(rnd: random.Random) -> list[fsm.Spec]:
    """Terminals whose languages overlap everywhere, some with nested counted repeats."""
    terms = [f"T{i}: /[a-{chr(ord('b') + i % 24)}]{{1,{rnd.randint(5, 60)}}}/" for i in range(40)]
    overlap = "\n".join(
        ["start: (" + " | ".join(f"T{i}" for i in range(40)) + ")+", *terms, "%ignore /[ ]+/"]
    )
    nested = "\n".join(["start: A B", "A: /(a{1,100}){1,100}/", 'B: "b"'])
    worse = "\n".join(["start: A", "A: /((a{1,100}){1,100}){1,100}/"])
    return [fsm.Grammar(overlap), fsm.Grammar(worse), fsm.Grammar(nested)]


FAMILIES: list[tuple[str, SpecFactory]] = [
    ("regex: nested counted repeats", nested_repeats),
    ("regex: near-equal alternations", near_equal_alternations),
    ("regex: ambiguity", ambiguity),
    ("regex: huge classes", huge_classes),
    ("regex: deep groups", deep_groups),
    ("grammar: many rules", many_rules),
    ("grammar: deep nesting", deep_nesting),
    ("grammar: ambiguous terminals", ambiguous_terminals),
    ("json: deep nesting", json_deep_nesting),
    ("json: many properties", json_many_properties),
    ("json: huge enums", json_huge_enums),
    ("json: long $ref chains", json_ref_chains),
    ("json: allOf of many patterns", json_all_of_patterns),
    ("json: uniqueItems/contains products", json_item_products),
    ("json: big maxLength with patterns", json_long_strings),
]


def cases(seed: int = 0, per_family: int | None = None) -> list[tuple[str, fsm.Spec]]:
    """Every ``(family, spec)`` of `FAMILIES`, generated with ``seed``; with ``per_family``, only
    that many of each family (its first, the most telling: CI runs two)."""
    out = []
    for family, factory in FAMILIES:
        specs = list(factory(random.Random(f"{seed}:{family}")))
        out.extend((family, spec) for spec in specs[:per_family])
    return out


def describe(spec: fsm.Spec, width: int = 60) -> str:
    """A short text for a spec: its pattern, grammar or schema, cut to ``width`` characters."""
    text = getattr(spec, "pattern", None) or getattr(spec, "lark_text", None)
    if text is None:  # a schema as the user wrote it (its regex text may be huge or unwritable)
        schema = getattr(spec, "schema", None)
        try:
            text = str(spec) if schema is None else json.dumps(schema, ensure_ascii=False)
        except RecursionError:
            text = "(a schema nested too deeply to print)"
    text = text.replace("\n", "⏎")
    return text if len(text) <= width else f"{text[: width - 12]}…({len(text):,} ch)"


# ---------------------------------------------------------------------------------------------
# The child process


def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _in_child(spec: fsm.Spec, vocab: fsm.Vocabulary, limits: fsm.Limits) -> dict:
    base = _rss()
    compile_s = mask_s = compile_c = mask_c = 0.0
    started, cpu = time.monotonic(), _cpu()
    try:
        index = fsm.compile(spec, vocab, limits=limits, cache=False)
        compile_s, compile_c = time.monotonic() - started, _cpu() - cpu
        started, cpu = time.monotonic(), _cpu()
        index.matcher().fill_bitmask(np.zeros((vocab.size + 31) // 32, dtype=np.int32))
        mask_s, mask_c = time.monotonic() - started, _cpu() - cpu
        result = "ok"
    except fsm.SpecError as exc:
        took, took_c = time.monotonic() - started, _cpu() - cpu
        if compile_s:
            mask_s, mask_c = took, took_c
        else:
            compile_s, compile_c = took, took_c
        result = f"{type(exc).__name__}:{getattr(exc, 'budget', None) or '-'}"
    except BaseException as exc:  # everything else is what the suite is looking for
        compile_s, compile_c = time.monotonic() - started, _cpu() - cpu
        result = f"crash: {exc!r}"[:300]
    # lark's table is built in a forked grandchild for big grammars: its peak counts too
    peak = 1024 * max(
        resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
        resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,
    )
    return {
        "result": result,
        "compile": compile_s,
        "mask": mask_s,
        "rss": max(0, peak - base),
        "compile_cpu": compile_c,
        "mask_cpu": mask_c,
    }


def _cpu() -> float:
    """CPU seconds of this process and its waited-for children (lark's forked build)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def run_case(family: str, spec: fsm.Spec, vocab: fsm.Vocabulary, limits: fsm.Limits) -> Outcome:
    """Compile ``spec`` and fill its first mask in a forked child; its `Outcome`.

    A plain ``os.fork``: the child shares the parent's vocabulary without loading it again.
    """
    assert vocab.trie is not None  # built once per vocabulary (a server has it): not a cost of the spec
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report and leave without running any of the parent's cleanup
        code = 0
        try:
            os.close(r)
            # the heap inherited from the parent (vocabulary, test session) is a server's long-lived
            # state, not the compile's: out of the collector's sight, as a server would gc.freeze()
            # it, so collections during the compile neither walk it nor copy its pages on write
            gc.freeze()
            data = json.dumps(_in_child(spec, vocab, limits)).encode()
            with os.fdopen(w, "wb") as f:
                f.write(data)
        except BaseException:  # the child must never return into the caller (pytest)
            code = 1
        finally:
            os._exit(code)
    os.close(w)
    report = _collect(r, pid, bound(limits) * 2 + GRACE)
    if isinstance(report, str):
        return Outcome(family, describe(spec), report, float("nan"), float("nan"), 0)
    return Outcome(
        family,
        describe(spec),
        report["result"],
        report["compile"],
        report["mask"],
        report["rss"],
        report["compile_cpu"],
        report["mask_cpu"],
    )


def _collect(r: int, pid: int, timeout: float) -> dict | str:
    """The child's report, or why there is none ("hang", "killed: SIG…"); the child is reaped."""
    chunks: list[bytes] = []
    deadline = time.monotonic() + timeout
    hung = False
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([r], [], [], left)[0]:
                hung = True
                break
            chunk = os.read(r, 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(r)
        if hung:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
    if hung:
        return "hang"
    if os.WIFSIGNALED(status):
        return f"killed: {signal.Signals(os.WTERMSIG(status)).name}"
    try:
        return json.loads(b"".join(chunks))
    except ValueError:
        return "crash: the child died before reporting"


# ---------------------------------------------------------------------------------------------
# The table


def table(outcomes: Sequence[Outcome]) -> str:
    """The Markdown table of docs/limits.md: worst times and RSS growth per family."""
    lines = [
        "| spec family | cases | outcomes | worst compile | worst first mask | worst RSS growth |",
        "|---|---|---|---|---|---|",
    ]
    families = dict.fromkeys(o.family for o in outcomes)
    for family in families:
        rows = [o for o in outcomes if o.family == family]
        kinds: dict[str, int] = {}
        for o in rows:
            kinds[o.result] = kinds.get(o.result, 0) + 1
        summary = ", ".join(f"{k} x{n}" for k, n in sorted(kinds.items()))
        lines.append(
            f"| {family} | {len(rows)} | {summary} | {max(o.compile_seconds for o in rows):.2f} s "
            f"| {max(o.mask_seconds for o in rows):.2f} s | {max(o.rss_growth for o in rows) / 2**20:.0f} MiB |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=fsm.Limits().max_seconds, help="Limits.max_seconds")
    ap.add_argument("--repeat", type=int, default=1, help="rounds, each with its own seed")
    ap.add_argument("--family", default=None, help="only families whose name contains this")
    ap.add_argument("--json", default=None, help="write every outcome to this file")
    args = ap.parse_args(argv)
    from transformers import AutoTokenizer

    from guide.default_model import default_model_dir

    vocab = fsm.Vocabulary.from_tokenizer(AutoTokenizer.from_pretrained(default_model_dir()))
    limits = fsm.Limits(max_seconds=args.seconds)
    outcomes = []
    for seed in range(args.repeat):
        for family, spec in cases(seed):
            if args.family and args.family not in family:
                continue
            o = run_case(family, spec, vocab, limits)
            outcomes.append(o)
            print(
                f"{o.family:32} {o.result:32} {o.compile_seconds:6.2f} s {o.mask_seconds:6.2f} s "
                f"{o.rss_growth / 2**20:7.0f} MiB  {o.spec}",
                flush=True,
            )
    print(table(outcomes))
    if args.json:
        with open(args.json, "w") as f:
            json.dump([asdict(o) for o in outcomes], f, indent=1)
    bad = [o for o in outcomes if not (o.result == "ok" or o.spec_error)]
    slow = [o for o in outcomes if max(o.compile_seconds, o.mask_seconds) > bound(limits)]
    big = [o for o in outcomes if o.rss_growth > 1 << 30]
    print(
        f"{len(outcomes)} cases: {len(bad)} crashes or hangs, {len(slow)} over the time bound, {len(big)} over 1 GiB"
    )
    return 1 if bad or slow or big else 0


if __name__ == "__main__":
    sys.exit(main())
