"""JSON Schema on cases written outside the project: the five goal measures of issue 22.

Every spec/instance/verdict case of the external corpora in ``/work/shared/corpora`` (``--corpora``):
the official JSON-Schema-Test-Suite (each draft folder found there, ``optional/`` included; one spec
per test group, its draft from the folder; its ``remotes/`` given as ``resources`` at
``http://localhost:1234/``, where the suite's README has runners serve them) and JSONSchemaBench (one spec per line, with the MaskBench
instances). Each spec is compiled with ``fsm.compile`` for the SmolLM2 vocabulary in exact mode
(``JsonSchema(exact=True)``; formats asserted as their RFC grammars where the corpus asserts them:
JSONSchemaBench and ``optional/format``) and its first mask filled, in a worker process with the
default `fsm.Limits` (a hard kill at ``max_seconds`` + 20 s counts as over budget; a kill while its
instances are checked, 20 s each, counts them as rejected). Printed per
corpus and in total:

- unsupported: share of specs refused with ``UnsupportedSchema`` (goal <= 2 %);
- over budget: share of specs refused with ``SpecTooComplex`` or killed (goal 0);
- refused as empty: specs refused as admitting no document although the corpus has a valid instance
  of them (goal 0);
- valid rejected: share of the valid instances of compiled specs that the constraint rejects in
  every member order (the order the schema declares, the order names first appear in it, for
  objects of up to 4 members every order, then a search of every order the matcher takes member by
  member, `accepted_in_some_order`): exact mode's only policy is member order (goal <= 0.5 %);
- invalid accepted: invalid instances of compiled specs the constraint accepts (must be 0).

Then the causes of each failure class, by count (the keyword of ``UnsupportedSchema``, the budget of
``SpecTooComplex``). Instances are the compact ``json.dumps`` of the data, fed as the tokenizer's
tokens.

    python benchmarks/bench_json_external.py                    # every case (long)
    python benchmarks/bench_json_external.py --per-corpus 300   # the first 300 specs of each corpus
    python benchmarks/bench_json_external.py --report out.jsonl # the tables from an earlier --out
    python benchmarks/bench_json_external.py --per-corpus 200 --out out.jsonl --resume  # go on
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import functools
import glob
import itertools
import json
import multiprocessing as mp
import os
import sys
import time
import warnings

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
CORPORA = "/work/shared/corpora"
SUITE_DRAFTS = {"draft4": 4, "draft6": 6, "draft7": 7, "draft2019-09": 2019, "draft2020-12": 2020}
# every measure is a coverage or soundness count; the budget is the library's default
MAX_SECONDS = 10.0
CHECK_SECONDS = 20.0  # per instance (a rejected valid one is walked in up to 120 member orders)


def load_cases(corpora: str, per_corpus: int | None, only: str = "") -> list[dict]:
    """Every external spec with its instances: ``{"corpus", "id", "schema", "draft", "formats", "tests"}``.

    >>> cases = load_cases(CORPORA, 2)
    >>> sorted({c["corpus"] for c in cases})[:1]
    ['json-schema-test-suite/draft2020-12']
    """
    out: list[dict] = []
    suite = os.path.join(corpora, "json-schema-test-suite")
    for folder, draft in SUITE_DRAFTS.items():
        root = os.path.join(suite, folder)
        if not os.path.isdir(root):
            continue
        for sub in ("", "optional", "optional/format"):
            files = sorted(glob.glob(os.path.join(root, sub, "*.json")))
            name = f"json-schema-test-suite/{folder}" + (f"/{sub}" if sub else "")
            if not files or (only and only not in name):
                continue
            got = []
            for path in files:
                with open(path) as f:
                    groups = json.load(f)
                for i, g in enumerate(groups):
                    got.append(
                        {
                            "corpus": name,
                            "id": f"{os.path.basename(path)}#{i}",
                            "schema": g["schema"],
                            "draft": draft,
                            # format-assertion.json names the format-assertion vocabulary
                            "formats": sub == "optional/format"
                            or os.path.basename(path) == "format-assertion.json",
                            "tests": [(t["data"], bool(t["valid"])) for t in g["tests"]],
                            "corpora": corpora,  # its remote refs name the suite's remotes/
                        }
                    )
            out.extend(got[:per_corpus] if per_corpus else got)
    for path in sorted(glob.glob(os.path.join(corpora, "jsonschemabench", "*.jsonl"))):
        name = "jsonschemabench/" + os.path.basename(path)[:-6]
        if only and only not in name:
            continue
        with open(path) as f:
            lines = f.readlines()
        for line in lines[:per_corpus] if per_corpus else lines:
            d = json.loads(line)
            out.append(
                {
                    "corpus": name,
                    "id": d["id"],
                    "schema": d["schema"],
                    "draft": None,
                    "formats": True,
                    "tests": [(t["data"], bool(t["valid"])) for t in d.get("tests", [])],
                }
            )
    return out


def suite_remotes(corpora: str) -> dict:
    """The suite's ``remotes/`` as its runners serve them, at ``http://localhost:1234/`` (the suite's
    README): the documents its remote ``$ref`` tests name, given as `fsm.JsonSchema` resources."""
    root = os.path.join(corpora, "json-schema-test-suite", "remotes")
    out = {}
    for path in glob.glob(os.path.join(root, "**", "*.json"), recursive=True):
        with open(path) as f:
            out["http://localhost:1234/" + os.path.relpath(path, root).replace(os.sep, "/")] = json.load(f)
    return out


def _declared_order(schema, root, seen=None) -> list[str]:
    """Property names a schema declares, in the order exact mode generates them: ``properties`` of
    the schema and of the subschemas it combines (local ``$ref`` followed), then ``required``."""
    seen = set() if seen is None else seen
    if not isinstance(schema, dict) or id(schema) in seen:
        return []
    seen.add(id(schema))
    names: list[str] = (
        list(schema.get("properties", {}) or {}) if isinstance(schema.get("properties"), dict) else []
    )
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        target = root
        for part in ref[2:].split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            target = target.get(part) if isinstance(target, dict) else None
        names += _declared_order(target, root, seen)
    for key in ("allOf", "anyOf", "oneOf"):
        for sub in schema.get(key, []) if isinstance(schema.get(key), list) else []:
            names += _declared_order(sub, root, seen)
    for key in ("then", "else"):
        names += _declared_order(schema.get(key), root, seen)
    if isinstance(schema.get("required"), list):
        names += [n for n in schema["required"] if isinstance(n, str)]
    return list(dict.fromkeys(names))


def _property_schema(schema, name: str, root):
    if not isinstance(schema, dict):
        return None
    props = schema.get("properties")
    if isinstance(props, dict) and name in props:
        return props[name]
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        target = root
        for part in ref[2:].split("/"):
            target = (
                target.get(part.replace("~1", "/").replace("~0", "~")) if isinstance(target, dict) else None
            )
        return _property_schema(target, name, root)
    return None


def in_declared_order(value, schema, root):
    """``value`` with every object's members in the schema's declared order (undeclared ones after,
    as they were)."""
    if isinstance(value, list):
        items = schema.get("items") if isinstance(schema, dict) else None
        return [in_declared_order(v, items if isinstance(items, dict) else None, root) for v in value]
    if not isinstance(value, dict):
        return value
    order = [n for n in _declared_order(schema, root) if n in value] if schema is not None else []
    rest = [k for k in value if k not in order]
    return {k: in_declared_order(value[k], _property_schema(schema, k, root), root) for k in [*order, *rest]}


def _names_in_document_order(schema) -> dict[str, int]:
    """Every name any ``properties`` of the schema declares, ranked by first appearance, then the
    ``required`` names no ``properties`` declares: the order exact mode generates members in when a
    member's schema is reached through combinators the local order does not follow."""
    props: list[str] = []
    req: list[str] = []

    def walk(x) -> None:
        if isinstance(x, dict):
            if isinstance(x.get("properties"), dict):
                props.extend(x["properties"])
            if isinstance(x.get("required"), list):
                req.extend(n for n in x["required"] if isinstance(n, str))
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    walk(schema)
    return {n: i for i, n in enumerate(dict.fromkeys([*props, *req]))}


def in_document_order(value, rank: dict[str, int]):
    """``value`` with every object's members sorted by ``rank`` (unranked ones last, as they were)."""
    if isinstance(value, list):
        return [in_document_order(v, rank) for v in value]
    if not isinstance(value, dict):
        return value
    keys = sorted(value, key=lambda k: rank.get(k, len(rank)))
    return {k: in_document_order(value[k], rank) for k in keys}


def member_orders(value, limit: int = 120):
    """``value`` with its objects' members in other orders (each object of at most 4 members in
    every order, the others as they are), up to ``limit`` variants: exact mode's member order is
    the conjuncts' declaration order, which the two orders above do not always find."""
    if isinstance(value, list):
        variants = [[]]
        for item in value:
            opts = member_orders(item, limit)
            variants = [[*v, o] for v in variants for o in opts][:limit]
        return variants
    if not isinstance(value, dict):
        return [value]
    keys = list(value)
    orders = itertools.permutations(keys) if len(keys) <= 4 else [tuple(keys)]
    variants = []
    for order in orders:
        partial = [{}]
        for k in order:
            partial = [{**p, k: o} for p in partial for o in member_orders(value[k], limit)][:limit]
        variants += partial
        if len(variants) >= limit:
            break
    return variants[:limit]


def accepted_in_some_order(index, value, budget: int = 20_000) -> bool:
    """Whether the index accepts ``value`` (compact JSON) with its objects' members in some order:
    a depth-first search that feeds the text piece by piece (longest-match tokens) to copies of
    one matcher, so an order the index refuses is cut at its first refused member; a value's
    alternatives that end in the same matcher state are walked once. ``budget`` pieces at most
    (then False).

    >>> import fsm
    >>> v = fsm.Vocabulary([bytes([i]) for i in range(128)] + [None], eos_token_ids=[128])
    >>> ab = {"a": {"type": "integer"}, "b": {"type": "integer"}}
    >>> s = {"type": "object", "properties": ab, "required": ["a", "b"], "additionalProperties": False}
    >>> index = fsm.compile(fsm.JsonSchema(s, exact=True), v, cache=False)
    >>> [accepted_in_some_order(index, x) for x in ({"b": 1, "a": 2}, {"b": "x", "a": 2}, {"a": 1})]
    [True, False, False]
    """
    import fsm.testing
    from fsm.errors import TokenRejected

    left = [budget]

    def feed(m, text: str):
        left[0] -= 1
        if left[0] < 0:
            return None
        m = m.copy()
        try:
            for t in fsm.testing.tokens_of(index, text):
                m.advance(t)
        except (TokenRejected, ValueError):
            return None
        return m

    def after(m, v):
        """Matchers after ``v`` in each member order, one per distinct state."""
        seen: set = set()
        for out in _walk(m, v):
            key = repr(out.state)
            if key not in seen:
                seen.add(key)
                yield out

    def _walk(m, v):
        if isinstance(v, dict):
            m = feed(m, "{")
            if m is not None:
                yield from _members(m, list(v.items()), True)
        elif isinstance(v, list):
            m = feed(m, "[")
            if m is not None:
                yield from _items(m, v, True)
        else:
            m = feed(m, json.dumps(v, separators=(",", ":"), ensure_ascii=False))
            if m is not None:
                yield m

    def _members(m, rest, first):
        if not rest:
            m = feed(m, "}")
            if m is not None:
                yield m
            return
        for i, (k, v) in enumerate(rest):
            mk = feed(m, ("" if first else ",") + json.dumps(k, ensure_ascii=False) + ":")
            if mk is None:
                continue
            for mv in after(mk, v):
                yield from _members(mv, rest[:i] + rest[i + 1 :], False)

    def _items(m, rest, first):
        if not rest:
            m = feed(m, "]")
            if m is not None:
                yield m
            return
        if not first:
            m = feed(m, ",")
            if m is None:
                return
        for mv in after(m, rest[0]):
            yield from _items(mv, rest[1:], False)

    return any(m.is_accepting() for m in after(index.matcher(), value))


def _outcome(exc: Exception | None) -> tuple[str, str]:
    import fsm

    if exc is None:
        return "ok", ""
    if isinstance(exc, fsm.UnsupportedSchema):
        return "unsupported", str(exc.keyword)
    if isinstance(exc, fsm.SpecTooComplex):
        return "over budget", str(exc.budget)
    if isinstance(exc, fsm.SpecError) and "admits no JSON document" in str(exc):
        return "empty", ""
    return "error", f"{type(exc).__name__}: {str(exc)[:120]}"


def _worker(conn) -> None:
    warnings.simplefilter("ignore")
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import numpy as np
    from transformers import AutoTokenizer

    import fsm
    import fsm.testing
    from guide.default_model import default_model_dir

    tok = AutoTokenizer.from_pretrained(default_model_dir())
    vocab = fsm.Vocabulary.from_tokenizer(tok)
    _ = vocab.trie
    words = (vocab.size + 31) // 32
    # imports a long-lived process has paid once, outside the timings: jsonschema (literal checks of
    # enum/const objects; seconds of rfc3987_syntax parser tables, a minute on a loaded box)
    import jsonschema  # noqa: F401

    remotes = functools.lru_cache(suite_remotes)
    conn.send("ready")
    while True:
        case = conn.recv()
        if case is None:
            return
        rec = {"corpus": case["corpus"], "id": case["id"]}
        t0 = time.perf_counter()
        exc = None
        try:
            spec = fsm.JsonSchema(
                case["schema"],
                exact=True,
                assert_format=case["formats"],
                draft=case["draft"],
                resources=remotes(case["corpora"]) if "corpora" in case else None,
            )
            index = fsm.compile(spec, vocab, limits=fsm.Limits(max_seconds=MAX_SECONDS), cache=False)
            index.matcher().fill_bitmask(np.zeros(words, dtype=np.int32))
        except Exception as e:  # deliberately broad: every failure is this spec's outcome
            exc = e
        rec["t"] = time.perf_counter() - t0
        rec["outcome"], rec["cause"] = _outcome(exc)
        rec["valid"] = sum(v for _, v in case["tests"])
        conn.send("compiled")  # the compile's budget ends here; checking the instances has its own
        if exc is None:
            rej, inv = [], 0
            rank = _names_in_document_order(case["schema"])
            for data, valid in case["tests"]:
                texts = [json.dumps(data, separators=(",", ":"), ensure_ascii=False)]
                if valid:
                    for ordered in (
                        in_declared_order(data, case["schema"], case["schema"]),
                        in_document_order(data, rank),
                    ):
                        texts.append(json.dumps(ordered, separators=(",", ":"), ensure_ascii=False))
                ok = any(fsm.testing.accepts(index, t, tok) for t in dict.fromkeys(texts))
                if valid and not ok:
                    others = (
                        json.dumps(v, separators=(",", ":"), ensure_ascii=False) for v in member_orders(data)
                    )
                    ok = any(fsm.testing.accepts(index, t, tok) for t in others)
                if valid and not ok:
                    ok = accepted_in_some_order(index, data)
                if valid and not ok:
                    rej.append(texts[0][:300])
                if not valid and ok:
                    inv += 1
            rec.update(valid_rejected=rej, invalid_accepted=inv)
        conn.send(rec)


class Runner:
    """The worker process; a spec past the hard timeout kills and restarts it."""

    def __init__(self) -> None:
        self._start()

    def _start(self) -> None:
        ctx = mp.get_context("spawn")
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_worker, args=(child,), daemon=True)
        self.proc.start()
        if not self.conn.poll(600) or self.conn.recv() != "ready":
            raise RuntimeError("worker did not start")

    def run(self, case: dict) -> dict:
        self.conn.send(case)
        valid = sum(v for _, v in case["tests"])
        rec = {"corpus": case["corpus"], "id": case["id"], "valid": valid, "t": MAX_SECONDS}
        with contextlib.suppress(EOFError):
            if self.conn.poll(MAX_SECONDS + 20) and self.conn.recv() == "compiled":
                if self.conn.poll(CHECK_SECONDS * (1 + len(case["tests"]))):
                    return self.conn.recv()
                # compiled in budget, but walking its instances (every member order of a rejected
                # one) ran out: each valid instance unchecked counts as rejected
                rec.update(
                    outcome="ok", cause="", valid_rejected=["(check killed)"] * valid, invalid_accepted=0
                )
                rec["check_killed"] = True
        self.proc.kill()  # our own worker, by handle
        self.proc.join()
        self._start()
        if "outcome" not in rec:
            rec.update(outcome="over budget", cause="killed")
        return rec

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.conn.send(None)
            self.proc.join(5)
        if self.proc.is_alive():
            self.proc.kill()


def report(records: list[dict]) -> None:
    """The five measures per corpus and in total, then the causes of each failure class."""
    by = collections.defaultdict(list)
    for r in records:
        by[r["corpus"]].append(r)
    head = f"{'corpus':48s} {'specs':>6s} {'unsupp':>7s} {'budget':>7s} {'empty':>6s} {'valid rej':>15s} {'inv acc':>7s}"
    print(head)
    for name in [*sorted(by), "TOTAL"]:
        rs = records if name == "TOTAL" else by[name]
        n = len(rs)
        uns = sum(r["outcome"] == "unsupported" for r in rs)
        bud = sum(r["outcome"] == "over budget" for r in rs)
        emp = sum(r["outcome"] == "empty" and r["valid"] > 0 for r in rs)
        ok = [r for r in rs if r["outcome"] == "ok"]
        vtot = sum(r["valid"] for r in ok)
        vrej = sum(len(r["valid_rejected"]) for r in ok)
        inv = sum(r["invalid_accepted"] for r in ok)
        print(
            f"{name:48s} {n:6d} {100 * uns / max(n, 1):6.1f}% {100 * bud / max(n, 1):6.1f}% {emp:6d} "
            f"{vrej:5d}/{vtot:5d} {100 * vrej / max(vtot, 1):4.1f}% {inv:7d}"
        )
    print()
    for cls in ("unsupported", "over budget", "empty", "error"):
        causes = collections.Counter(
            r["cause"] for r in records if r["outcome"] == cls and (cls != "empty" or r["valid"])
        )
        if causes:
            print(f"{cls}: " + ", ".join(f"{c or '-'} {k}" for c, k in causes.most_common(25)))
    killed = [r["id"] for r in records if r.get("check_killed")]
    if killed:
        print(f"instance checks killed (valid ones counted rejected, invalid ones unchecked): {killed}")
    rej = collections.Counter(r["corpus"].split("/")[0] for r in records if r.get("valid_rejected"))
    print("specs with valid instances rejected: " + ", ".join(f"{c} {k}" for c, k in rej.most_common()))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpora", default=CORPORA)
    ap.add_argument("--per-corpus", type=int, default=0, help="the first N specs of each corpus (0: all)")
    ap.add_argument("--only", default="", help="corpora whose name contains this")
    ap.add_argument("--out", default="", help="write per-spec records (jsonl) here")
    ap.add_argument(
        "--report", default="", help="no run: the tables from an earlier --out (of the specs selected)"
    )
    ap.add_argument(
        "--resume", action="store_true", help="append to --out, skipping the specs it already has"
    )
    ap.add_argument(
        "--failed-in",
        default="",
        help="only the specs that an earlier --out records as failing (not compiled, a valid instance "
        "rejected or an invalid one accepted)",
    )
    args = ap.parse_args(argv)
    cases = load_cases(args.corpora, args.per_corpus or None, args.only)
    if args.report:
        wanted = {(c["corpus"], c["id"]) for c in cases}
        latest: dict = {}  # a later record of a spec (a rerun) replaces an earlier one
        for path in args.report.split(","):
            with open(path) as f:
                latest.update(((r["corpus"], r["id"]), r) for r in map(json.loads, f))
        report([r for key, r in latest.items() if key in wanted])
        return
    done: set = set()
    if args.resume and args.out and os.path.exists(args.out):
        with open(args.out) as f:
            done = {(r["corpus"], r["id"]) for r in map(json.loads, f)}
        cases = [c for c in cases if (c["corpus"], c["id"]) not in done]
    if args.failed_in:
        with open(args.failed_in) as f:
            failed = {
                (r["corpus"], r["id"])
                for r in map(json.loads, f)
                if r["outcome"] != "ok" or r.get("valid_rejected") or r.get("invalid_accepted")
            }
        cases = [c for c in cases if (c["corpus"], c["id"]) in failed]
    print(f"{len(cases)} specs, {sum(len(c['tests']) for c in cases)} instances", flush=True)
    runner = Runner()
    records = []
    t0 = time.time()
    with contextlib.ExitStack() as stack:
        out = stack.enter_context(open(args.out, "a" if done else "w")) if args.out else None
        for case in cases:
            rec = runner.run(case)
            records.append(rec)
            if out:
                out.write(json.dumps(rec) + "\n")
                out.flush()
    runner.close()
    print(f"{time.time() - t0:.0f} s\n", flush=True)
    report(records)


if __name__ == "__main__":
    main()
