"""Every script in examples/ runs to completion on the default model (each is a real use of the library).

`make demo`'s script runs as a real subprocess, as a user runs it. The others run in this process as
``__main__`` (runpy) with `guide.load` answered from one shared load per argument set: each script
still builds its generators, compiles its specs and generates for real, but the suite pays the
~15 s of imports and weight loading once per worker instead of once per script.

The limit per script is generous because test machines are often shared; on 2 free CPU cores each
script takes well under a minute (see the README).
"""

from __future__ import annotations

import os
import runpy
import subprocess
import sys
from pathlib import Path

import pytest

import guide

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))
TIMEOUT_S = 300
DEMO = "extract_person"  # what `make demo` runs
_REAL_LOAD = guide.load
_LOADED: dict = {}


def _shared_load(*args, **kwargs):
    """`guide.load`, loading each distinct (args, kwargs) once per test process."""
    key = (args, tuple(sorted(kwargs.items())))
    if key not in _LOADED:
        _LOADED[key] = _REAL_LOAD(*args, **kwargs)
    return _LOADED[key]


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
def test_example_runs(path, monkeypatch, capsys):
    if path.stem == DEMO:
        proc = run_example(path)
        assert proc.returncode == 0, f"{path.name} failed:\n{proc.stdout}\n{proc.stderr[-4000:]}"
        stdout = proc.stdout
    else:
        monkeypatch.setattr(guide, "load", _shared_load)
        monkeypatch.setattr(sys, "argv", [str(path)])
        monkeypatch.chdir(ROOT)
        runpy.run_path(str(path), run_name="__main__")
        stdout = capsys.readouterr().out
    assert stdout.strip(), f"{path.name} printed nothing"
    if path.stem == DEMO:  # `make demo`: must print a validated object
        obj = next(line for line in stdout.splitlines() if line.startswith("object:"))
        assert "Person(" in obj and "name=" in obj and "age=" in obj
