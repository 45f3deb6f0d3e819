"""Many tools behind a trigger: `fsm.Triggered` beside xgrammar's structural tags and llguidance.

Tools are the functions of JSONSchemaBench's BFCL subsets (benchmarks/data/bfcl_tools.jsonl, made
by ``--extract`` from the corpus: each schema is ``{"properties": {name: arguments}}`` or an
``anyOf`` of such), in Hermes tags ``<tool_call>{"name": NAME, "arguments": ARGS}</tool_call>``
behind the text trigger ``<tool_call>``, on the SmolLM2 vocabulary. The same spec in each engine:

- ours: ``fsm.Triggered([fsm.Tag(begin, fsm.JsonSchema(args), "}</tool_call>"), ...],
  triggers=["<tool_call>"])``;
- xgrammar: ``StructuralTag(format=TriggeredTagsFormat(triggers=["<tool_call>"], tags=[TagFormat(
  begin, JSONSchemaFormat(args), "}</tool_call>"), ...]))`` through ``compile_structural_tag``;
- llguidance: Lark ``start: (text call)* TAIL`` with ``text[lazy]: /(.|\\n)*<tool_call>/`` (free
  text up to the first trigger), ``TAIL`` free text without the trigger, and ``call`` the
  alternatives ``"{\\"name\\": \\"NAME\\", \\"arguments\\": " %json {args} "}</tool_call>"``.

One run = one fresh process per engine and size (``--child``), so caches, lazily built tables and
memory start empty: tokenizer set-up first (not timed), then

- time to first mask: compile + a matcher + its first bitmask, wall and CPU time (all the
  process's threads: xgrammar compiles on several) — on a shared machine the CPU time is the steadier;
- cold masks: one pass along an agent output (free text, three calls with the corpus's ground-truth
  arguments, text between), a bitmask before each token; warm: the same again with a fresh matcher.
  Each mask is filed by where the text before it ends: free text, or inside a tool's arguments;
- memory: RSS growth from before the compile to after both passes.

Engines are interleaved in every repetition; the table gives medians over ``--reps`` runs and the
peers' ratios to ours (> 1: ours is faster/smaller). Every engine must accept every token.

    GUIDE_FSM_CACHE=off python benchmarks/bench_compose.py --sizes 10,100,500 --reps 3
"""

from __future__ import annotations

import argparse
import gc
import glob
import json
import os
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "benchmarks/data/bfcl_tools.jsonl")
CORPUS = "/work/shared/corpora/jsonschemabench"
ENGINES = ("ours", "xgrammar", "llguidance")
TRIGGER, END = "<tool_call>", "}</tool_call>"
TEXTS = (
    "Let me look that up for you. First I will check the details, then call the right tool.\n",
    " Done with that one; now the next step of the plan.\n",
    " And one more call to finish.\n",
    " All three calls are made — here is a summary of what I found.",
)


def extract(corpus: str) -> list[dict]:
    """The functions of the BFCL subsets: each schema is ``{"properties": {name: arguments}}`` or an
    ``anyOf`` of such; names made unique, with a ground-truth arguments instance where there is one."""
    out, seen = [], set()
    for path in sorted(glob.glob(os.path.join(corpus, "BFCL_*.jsonl"))):
        with open(path) as f:
            for line in f:
                row = json.loads(line)
                schema = row["schema"]
                for branch in schema.get("anyOf", [schema]):
                    props = branch.get("properties") or {}
                    if len(props) != 1:
                        continue
                    ((base, args),) = props.items()
                    key = json.dumps([base, args], sort_keys=True)
                    if key in seen:
                        continue
                    seen.add(key)
                    valid = [
                        t["data"][base] for t in row.get("tests", []) if t.get("valid") and base in t["data"]
                    ]
                    out.append({"name": base, "arguments": args, "instance": valid[0] if valid else None})
    names: set[str] = set()
    for tool in out:
        name, i = tool["name"], 1
        while name in names:
            name, i = f"{tool['name']}_{i}", i + 1
        names.add(name)
        tool["name"] = name
    return out


def bfcl_tools() -> list[tuple[str, dict, object]]:
    """(name, arguments schema, a valid instance or None) from benchmarks/data/bfcl_tools.jsonl."""
    with open(DATA) as f:
        return [(t["name"], t["arguments"], t["instance"]) for t in map(json.loads, f)]


def begin(name: str) -> str:
    return f'{TRIGGER}{{"name": "{name}", "arguments": '


def in_schema_order(value, schema):
    """``value`` with each object's keys in its schema's ``properties`` order (engines follow it)."""
    if isinstance(value, dict) and isinstance(schema, dict):
        props = schema.get("properties") or {}
        order = [k for k in props if k in value] + [k for k in value if k not in props]
        return {k: in_schema_order(value[k], props.get(k, {})) for k in order}
    if isinstance(value, list) and isinstance(schema, dict) and isinstance(schema.get("items"), dict):
        return [in_schema_order(v, schema["items"]) for v in value]
    return value


def workload(chosen) -> tuple[str, list[tuple[int, int]]]:
    """An agent output with three calls of tools spread over ``chosen`` (ground-truth arguments that
    validate), and the byte spans of their arguments."""
    import jsonschema

    usable = []
    for name, schema, instance in chosen:
        if instance is not None:
            try:
                jsonschema.validate(instance, schema)
            except jsonschema.ValidationError:
                continue
            usable.append((name, schema, instance))
    picks = [usable[0], usable[len(usable) // 2], usable[-1]]
    text, spans = TEXTS[0], []
    for (name, schema, instance), after in zip(picks, TEXTS[1:], strict=True):
        body = json.dumps(in_schema_order(instance, schema), separators=(",", ":"), ensure_ascii=False)
        start = len((text + begin(name)).encode())
        spans.append((start, start + len(body.encode())))
        text += begin(name) + body + END + after
    return text, spans


def rss_mib() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


# -- engines: setup(tokenizer) -> ctx; compile(ctx, tools) -> matcher factory ----------------------
class Ours:
    def __init__(self, tokenizer):
        import fsm

        self.fsm = fsm
        self.vocab = fsm.Vocabulary.from_tokenizer(tokenizer)
        _ = self.vocab.trie  # once per vocabulary: start-up, not any spec's time
        self.words = np.zeros((self.vocab.size + 31) // 32, dtype=np.int32)

    def compile(self, tools):
        fsm = self.fsm
        spec = fsm.Triggered(
            [fsm.Tag(begin(n), fsm.JsonSchema(s), END) for n, s, _ in tools], triggers=[TRIGGER]
        )
        self.index = fsm.compile(spec, self.vocab, cache=False)
        return self.index.matcher()

    def fresh(self):
        return self.index.matcher()

    def fill(self, m) -> None:
        m.fill_bitmask(self.words)

    def advance(self, m, t: int) -> None:
        m.advance(t)

    def extra(self) -> dict:
        return {"states": self.index.n_states, "bodies compiled": self.index.compiled_parts}


class XGrammar:
    def __init__(self, tokenizer):
        import torch
        import xgrammar as xgr

        self.xgr = xgr
        self.info = xgr.TokenizerInfo.from_huggingface(tokenizer, vocab_size=len(tokenizer))
        self.buf = torch.zeros((1, (self.info.vocab_size + 31) // 32), dtype=torch.int32)

    def compile(self, tools):
        st = self.xgr.structural_tag
        tag = self.xgr.StructuralTag(
            format=st.TriggeredTagsFormat(
                triggers=[TRIGGER],
                tags=[
                    st.TagFormat(begin=begin(n), content=st.JSONSchemaFormat(json_schema=s), end=END)
                    for n, s, _ in tools
                ],
            )
        )
        compiler = self.xgr.GrammarCompiler(self.info, cache_enabled=False)
        self.compiled = compiler.compile_structural_tag(tag)
        return self.xgr.GrammarMatcher(self.compiled)

    def fresh(self):
        return self.xgr.GrammarMatcher(self.compiled)

    def fill(self, m) -> None:
        m.fill_next_token_bitmask(self.buf)

    def advance(self, m, t: int) -> None:
        if not m.accept_token(t):
            raise ValueError(f"xgrammar rejected token {t}")

    def extra(self) -> dict:
        return {}


class LLGuidance:
    def __init__(self, tokenizer):
        import llguidance
        import llguidance.hf
        import llguidance.numpy as lln

        self.llg, self.lln = llguidance, lln
        self.tok = llguidance.hf.from_tokenizer(tokenizer, n_vocab=len(tokenizer))
        self.buf = lln.allocate_token_bitmask(1, self.tok.vocab_size)

    @staticmethod
    def lark(tools) -> str:
        rest = json.dumps  # a Lark string literal is a JSON string
        calls = [
            f"call_{i}: {rest(begin(n)[len(TRIGGER) :])} %json {json.dumps(s)} {rest(END)}"
            for i, (n, s, _) in enumerate(tools)
        ]
        return "\n".join(
            [
                "start: (text call)* TAIL",
                f"text[lazy]: /(.|\\n)*{TRIGGER}/",
                f"TAIL: /(.|\\n)*/ & ~/(.|\\n)*{TRIGGER}(.|\\n)*/",
                "call: " + " | ".join(f"call_{i}" for i in range(len(tools))),
                *calls,
            ]
        )

    def compile(self, tools):
        M = self.llg.LLMatcher
        self.grammar = M.grammar_from_lark(self.lark(tools))
        return self.fresh()

    def fresh(self):
        m = self.llg.LLMatcher(self.tok, self.grammar)
        if m.is_error():
            raise ValueError(m.get_error())
        return m

    def fill(self, m) -> None:
        self.lln.fill_next_token_bitmask(m, self.buf, 0)

    def advance(self, m, t: int) -> None:
        if not m.consume_token(t):
            raise ValueError(m.get_error())

    def extra(self) -> dict:
        return {}


ENGINE_CLASSES = {"ours": Ours, "xgrammar": XGrammar, "llguidance": LLGuidance}


def child(engine: str, size: int) -> dict:
    """One engine and size in this (fresh) process: the figures of one run."""
    from transformers import AutoTokenizer

    from guide.default_model import default_model_dir

    tokenizer = AutoTokenizer.from_pretrained(default_model_dir())
    eng = ENGINE_CLASSES[engine](tokenizer)
    tools = bfcl_tools()[:size]
    text, spans = workload(tools)
    ids = tokenizer.encode(text, add_special_tokens=False)
    import fsm

    vocab = eng.vocab if isinstance(eng, Ours) else fsm.Vocabulary.from_tokenizer(tokenizer)
    offsets = np.cumsum([0] + [len(vocab.token_bytes(t) or b"") for t in ids])[:-1]
    where = [
        "args" if any(a <= o < b for a, b in spans) else ("text" if _free(o, text, spans) else "tag")
        for o in offsets.tolist()
    ]
    assert vocab.decode(ids) == text.encode(), "the tokenizer round-trips the workload"
    gc.collect()
    rss0 = rss_mib()
    t0, c0 = time.perf_counter(), time.process_time()
    m = eng.compile(tools)
    eng.fill(m)
    first, first_cpu = time.perf_counter() - t0, time.process_time() - c0
    passes = []
    for _ in range(2):
        m = eng.fresh()
        times = []
        for t in ids:
            t1 = time.perf_counter()
            eng.fill(m)
            times.append(time.perf_counter() - t1)
            eng.advance(m, t)
        passes.append(times)
    rss1 = rss_mib()
    out = {"engine": engine, "tools": size, "first_ms": first * 1e3, "first_cpu_ms": first_cpu * 1e3}
    out["rss_mib"] = rss1 - rss0
    for name, times in zip(("cold", "warm"), passes, strict=True):
        for kind in ("text", "args"):
            xs = np.array([x for x, w in zip(times, where, strict=True) if w == kind]) * 1e6
            out[f"{name}_{kind}_p50_us"] = float(np.median(xs))
            out[f"{name}_{kind}_p99_us"] = float(np.percentile(xs, 99))
    out["masks"] = {k: where.count(k) for k in ("text", "args", "tag")}
    out.update(eng.extra())
    return out


def _free(offset: int, text: str, spans) -> bool:
    """The text before ``offset`` bytes ends in free text (outside every tag)."""
    data = text.encode()
    for a, b in spans:
        tag_start = data.rfind(TRIGGER.encode(), 0, a)
        tag_end = data.find(END.encode(), b) + len(END)
        if tag_start < offset < tag_end:
            return False
    return True


COLUMNS = [
    ("first_ms", "first mask ms"),
    ("first_cpu_ms", "first mask CPU ms"),
    ("cold_text_p50_us", "text cold p50 µs"),
    ("cold_text_p99_us", "text cold p99 µs"),
    ("warm_text_p50_us", "text warm p50 µs"),
    ("warm_text_p99_us", "text warm p99 µs"),
    ("cold_args_p50_us", "args cold p50 µs"),
    ("cold_args_p99_us", "args cold p99 µs"),
    ("warm_args_p50_us", "args warm p50 µs"),
    ("warm_args_p99_us", "args warm p99 µs"),
    ("rss_mib", "RSS MiB"),
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10,100,500")
    ap.add_argument("--engines", default=",".join(ENGINES))
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--child", nargs=2, metavar=("ENGINE", "SIZE"), help=argparse.SUPPRESS)
    ap.add_argument("--extract", metavar="CORPUS", help=f"rewrite {DATA} from a corpus (e.g. {CORPUS})")
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(args.child[0], int(args.child[1]))))
        return
    if args.extract:
        os.makedirs(os.path.dirname(DATA), exist_ok=True)
        with open(DATA, "w") as f:
            f.writelines(json.dumps(t, ensure_ascii=False) + "\n" for t in extract(args.extract))
    engines = args.engines.split(",")
    sizes = [int(s) for s in args.sizes.split(",")]
    env = {**os.environ, "GUIDE_FSM_CACHE": "off", "PYTHONPATH": ROOT, "OMP_NUM_THREADS": "1"}
    results: dict[tuple[str, int], list[dict]] = {}
    for rep in range(args.reps):
        for size in sizes:
            order = engines[rep % len(engines) :] + engines[: rep % len(engines)]  # interleaved
            for engine in order:
                cmd = [sys.executable, __file__, "--child", engine, str(size)]
                done = subprocess.run(cmd, env=env, capture_output=True, text=True)
                if done.returncode:
                    print(f"# {engine} {size}: failed\n{done.stderr[-2000:]}")
                    continue
                r = json.loads(done.stdout.strip().splitlines()[-1])
                results.setdefault((engine, size), []).append(r)
                print(f"# rep {rep} {engine} {size}: " + json.dumps(r), flush=True)
    print(f"\nmedians of {args.reps} runs (fresh process per engine and size)")
    print("| tools | engine | " + " | ".join(label for _, label in COLUMNS) + " |")
    print("|---:|---|" + "---:|" * len(COLUMNS))
    for size in sizes:
        ours = results.get(("ours", size))
        for engine in engines:
            runs = results.get((engine, size))
            if not runs:
                continue
            cells = []
            for key, _ in COLUMNS:
                v = float(np.median([r[key] for r in runs]))
                cell = f"{v:.1f}" if v >= 10 else f"{v:.2f}"
                if engine != "ours" and ours:
                    base = float(np.median([r[key] for r in ours]))
                    if base > 0:
                        cell += f" ({v / base:.2g}x)"
                cells.append(cell)
            print(f"| {size} | {engine} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
