"""Long fuzz runs outside CI: random regexes, JSON schemas and Lark grammars on the real vocabulary.

    .venv/bin/python tests/fuzz/run_fuzz.py --examples 5000
    .venv/bin/python tests/fuzz/run_fuzz.py --only concurrency --duration 60  # the minute of issue 15

Prints examples tried, crashes (exceptions other than fsm.SpecError) and invalid outputs.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import traceback
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import fsm
from fsm.testing import random_walk
from tests.fuzz.strategies import maybe_broken_regexes, python_accepts

LIMITS = fsm.Limits(max_seconds=5.0, max_states=50_000, max_regex_positions=10_000)


def walk(index, rng, n=40):
    """(text, "done") for a walk that took EOS, (None, "stuck"|"length") otherwise."""
    try:
        w = random_walk(index, rng, max_tokens=n, eos_bias=None)
    except AssertionError:
        return None, "stuck"
    return (w.text, "done") if w.finished else (None, "length")


def fuzz_regex(vocab, n, rng):
    stats = {"tried": 0, "compiled": 0, "spec_errors": 0, "crashes": 0, "invalid": 0, "unchecked": 0}
    for _ in range(n):
        pattern = maybe_broken_regexes.example()
        stats["tried"] += 1
        try:
            index = fsm.compile(fsm.Regex(pattern), vocab, limits=LIMITS, cache=False)
        except fsm.SpecError:
            stats["spec_errors"] += 1
            continue
        except Exception:
            stats["crashes"] += 1
            traceback.print_exc()
            continue
        stats["compiled"] += 1
        compiled = python_accepts(pattern) or _property_oracle(pattern)
        for _ in range(3):
            text, why = walk(index, rng)
            if compiled is None and why != "stuck":
                stats["unchecked"] += text is not None  # no engine here reads the pattern
                continue
            if why == "stuck" or (text is not None and not compiled.fullmatch(text)):
                stats["invalid"] += 1
                print("INVALID", repr(pattern), repr(text), why)
    return stats


def _property_oracle(pattern: str):
    """The third-party ``regex`` engine for a pattern ``re`` refuses for its ``\\p{..}`` classes,
    when no ASCII-only escape (``\\w``, ``\\d``, ``\\s``, ``\\b``: ``regex``'s ASCII flag would
    make ``\\p{L}`` ASCII too) makes the engines read it differently; else None."""
    import regex

    if re.search(r"\\[wWdDsSbB]", pattern):
        return None
    try:
        return regex.compile(pattern, regex.V0)
    except regex.error:
        return None


def fuzz_json(vocab, n, rng):
    from jsonschema import Draft202012Validator

    from tests.fuzz.schema_strategies import schemas  # written with the JSON Schema work

    stats = {"tried": 0, "compiled": 0, "spec_errors": 0, "crashes": 0, "invalid": 0}
    for _ in range(n):
        schema = schemas.example()
        stats["tried"] += 1
        try:
            index = fsm.compile(fsm.JsonSchema(schema), vocab, limits=LIMITS, cache=False)
        except fsm.SpecError:
            stats["spec_errors"] += 1
            continue
        except Exception:
            stats["crashes"] += 1
            traceback.print_exc()
            continue
        stats["compiled"] += 1
        v = Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)
        for _ in range(3):
            text, why = walk(index, rng, n=80)
            if why == "stuck":
                stats["invalid"] += 1
            elif text is not None:
                try:
                    v.validate(json.loads(text))
                except Exception:
                    stats["invalid"] += 1
                    print("INVALID", json.dumps(schema), repr(text))
    return stats


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--examples", type=int, default=1000)
    ap.add_argument("--only", choices=["regex", "json", "concurrency"], default=None)
    ap.add_argument(
        "--duration", type=float, default=60.0, help="seconds of the concurrency run (CI runs a shorter one)"
    )
    args = ap.parse_args()
    from transformers import AutoTokenizer

    from guide.default_model import default_model_dir

    vocab = fsm.Vocabulary.from_tokenizer(AutoTokenizer.from_pretrained(default_model_dir()))
    rng = np.random.default_rng(0)
    if args.only in (None, "regex"):
        print("regex:", fuzz_regex(vocab, args.examples, rng))
    if args.only in (None, "json"):
        print("json:", fuzz_json(vocab, args.examples, rng))
    if args.only in (None, "concurrency"):
        from tests.fuzz.concurrency import run  # only this mode starts threads

        report = run(vocab, args.duration)
        print("concurrency:", report)
        if report.alive or report.errors or report.mismatches:
            sys.exit(1)


if __name__ == "__main__":
    main()
