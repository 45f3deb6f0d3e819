"""How the RSS growth of a compile compares with `fsm.Limits.max_memory`, the count the automata keep
of what they hold: each spec below is compiled in a forked child (`tests.fuzz.adversarial.run_case`)
with ``max_memory`` the only budget that binds (states and seconds out of the way); for those the
count stops, RSS growth / ``max_memory`` is how far the count is from the memory really taken.
The per-item sizes in `fsm.automata.budget` are set from this table (docs/limits.md)::

    .venv/bin/python -m tests.fuzz.calibrate_memory --mib 256
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

import fsm
from tests.fuzz.adversarial import run_case

SPECS: list[tuple[str, fsm.Spec]] = [
    ("2^19 DFA states (regex)", fsm.Regex("[ab]*a[ab]{18}")),
    ("nested counts (regex)", fsm.Regex("(a{1,100}){1,100}")),
    ("nested counts with alternatives (regex)", fsm.Regex("((\\d{1,20}|x){1,312}y){2,5}")),
    (
        "allOf of 50 patterns (JSON)",
        fsm.JsonSchema(
            {"type": "string", "allOf": [{"pattern": chr(97 + i % 26) * (1 + i // 26)} for i in range(50)]}
        ),
    ),
    ("enum of 50,000 strings (JSON)", fsm.JsonSchema({"enum": [f"value-{i}" for i in range(50_000)]})),
    ("4,000 alternatives (regex)", fsm.Regex("|".join(f"w{i:05d}x{i * 7 % 1000:03d}" for i in range(4000)))),
]


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mib", type=float, default=256, help="Limits.max_memory in MiB")
    args = ap.parse_args(argv)
    from transformers import AutoTokenizer

    from guide.default_model import default_model_dir

    vocab = fsm.Vocabulary.from_tokenizer(AutoTokenizer.from_pretrained(default_model_dir()))
    _ = vocab.trie
    budget = int(args.mib * 2**20)
    limits = fsm.Limits(max_memory=budget, max_seconds=600, max_states=10**9, max_regex_positions=10**9)
    print("| spec | outcome | RSS growth | RSS growth / max_memory |")
    print("|---|---|---|---|")
    for name, spec in SPECS:
        o = run_case("calibration", spec, vocab, limits)
        ratio = (
            f"{o.rss_growth / budget:.2f}"
            if o.result.endswith(":max_memory")
            else "- (not stopped by the count)"
        )
        print(f"| {name} | {o.result} | {o.rss_growth / 2**20:.0f} MiB | {ratio} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
