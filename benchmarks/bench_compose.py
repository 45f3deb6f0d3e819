"""`fsm.Triggered` with many tools: compile + first mask, and warm masks in free text and in arguments.

Tools are the functions of JSONSchemaBench's BFCL subsets (benchmarks/data/bfcl_tools.jsonl, made
by ``--extract`` from the corpus: each schema is ``{"properties": {name: arguments}}`` or an
``anyOf`` of such), in Hermes tags
``<tool_call>{"name": NAME, "arguments": ARGS}</tool_call>`` behind the trigger ``<tool_call>``,
on the SmolLM2 vocabulary. Per size, in this process with the in-memory cache cleared:

- compile + first mask: `fsm.compile` of the `Triggered` spec, a matcher, its first bitmask;
- warm mask p50/p99 in free text: ``fill_bitmask`` along a text a second time (rows computed);
- first and warm masks inside arguments: one tool's begin, then along a valid instance of its
  arguments (the corpus's ground truth), the first pass (the body compiled on entry) and again.

    python benchmarks/bench_compose.py --sizes 10,100,500
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import time

import numpy as np

import fsm

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TEXT = "Let me look that up for you. First I will check the details, then call the right tool."


DATA = os.path.join(ROOT, "benchmarks/data/bfcl_tools.jsonl")
CORPUS = "/work/shared/corpora/jsonschemabench"


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
    return f'<tool_call>{{"name": "{name}", "arguments": '


def masks(m: fsm.Matcher, ids: list[int], words: np.ndarray) -> list[float]:
    times = []
    for t in ids:
        t0 = time.perf_counter()
        m.fill_bitmask(words)
        times.append(time.perf_counter() - t0)
        m.advance(t)
    return times


def run(size: int, tools, tokenizer, vocab) -> dict:
    chosen = tools[:size]
    spec = fsm.Triggered(
        [fsm.Tag(begin(n), fsm.JsonSchema(s), "}</tool_call>") for n, s, _ in chosen],
        triggers=["<tool_call>"],
    )
    fsm.clear_memory_cache()
    words = np.zeros((vocab.size + 31) // 32, dtype=np.int32)
    t0 = time.perf_counter()
    index = fsm.compile(spec, vocab)
    m = index.matcher()
    m.fill_bitmask(words)
    first = time.perf_counter() - t0
    text = tokenizer.encode(TEXT, add_special_tokens=False)
    masks(index.matcher(), text, words)  # cold pass: the rows of the text's states
    warm_text = masks(index.matcher(), text, words)
    name, _, instance = next((t for t in reversed(chosen) if t[2] is not None), chosen[-1])
    body = json.dumps(instance, separators=(",", ":"), ensure_ascii=False)
    pre = tokenizer.encode(TEXT + " ", add_special_tokens=False)
    call = tokenizer.encode(begin(name) + body, add_special_tokens=False)
    m = index.matcher()
    for t in pre:
        m.advance(t)
    first_args = masks(m.copy(), call, words)
    warm_args = masks(m.copy(), call, words)
    return {
        "tools": size,
        "compile+first mask ms": first * 1e3,
        "free text warm p50 us": float(np.median(warm_text)) * 1e6,
        "free text warm p99 us": float(np.percentile(warm_text, 99)) * 1e6,
        "call first pass p50 us": float(np.median(first_args)) * 1e6,
        "call first pass max ms": float(np.max(first_args)) * 1e3,
        "call warm p50 us": float(np.median(warm_args)) * 1e6,
        "call warm p99 us": float(np.percentile(warm_args, 99)) * 1e6,
        "states": index.n_states,
        "bodies compiled": index.compiled_parts,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10,100,500")
    ap.add_argument("--extract", metavar="CORPUS", help=f"rewrite {DATA} from a corpus (e.g. {CORPUS})")
    args = ap.parse_args()
    if args.extract:
        os.makedirs(os.path.dirname(DATA), exist_ok=True)
        with open(DATA, "w") as f:
            f.writelines(json.dumps(t, ensure_ascii=False) + "\n" for t in extract(args.extract))
    from transformers import AutoTokenizer

    from guide.default_model import default_model_dir

    tokenizer = AutoTokenizer.from_pretrained(default_model_dir())
    vocab = fsm.Vocabulary.from_tokenizer(tokenizer)
    _ = vocab.trie  # once per vocabulary: start-up, not any spec's time
    tools = bfcl_tools()
    print(f"{len(tools)} BFCL tools")
    for size in [int(s) for s in args.sizes.split(",")]:
        r = run(min(size, len(tools)), tools, tokenizer, vocab)
        print("  ".join(f"{k}={v:.1f}" if isinstance(v, float) else f"{k}={v}" for k, v in r.items()))


if __name__ == "__main__":
    main()
