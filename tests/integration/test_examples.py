"""Every script in examples/ runs to completion on the default model (each is a real use of the library).

The limit per script is generous because test machines are often shared; on 2 free CPU cores each
script takes well under a minute (see the README).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))
TIMEOUT_S = 300


def run_example(path: Path) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "2"),
        "TOKENIZERS_PARALLELISM": "false",
    }
    return subprocess.run(
        [sys.executable, str(path)],
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        cwd=ROOT,
        env=env,
        check=False,
    )


def test_the_examples_are_there():
    names = {p.stem for p in EXAMPLES}
    expected = {
        "extract_person",
        "classify_literal",
        "date_phone_regex",
        "tool_call",
        "sql_grammar",
        "batch_jsonl",
        "decorators",
    }
    assert expected <= names, f"missing examples: {sorted(expected - names)}"


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_runs(path):
    proc = run_example(path)
    assert proc.returncode == 0, f"{path.name} failed:\n{proc.stdout}\n{proc.stderr[-4000:]}"
    assert proc.stdout.strip(), f"{path.name} printed nothing"
    if path.stem == "extract_person":  # `make demo`: must print a validated object
        obj = next(line for line in proc.stdout.splitlines() if line.startswith("object:"))
        assert "Person(" in obj and "name=" in obj and "age=" in obj
