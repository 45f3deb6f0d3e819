"""The ``guide`` command, run as a subprocess on the real default model; exit codes and messages."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

ROOT = Path(__file__).resolve().parents[2]
PERSON = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 20},
        "age": {"type": "integer", "minimum": 0, "maximum": 130},
    },
    "required": ["name", "age"],
}


def guide_cli(*args: str, stdin: str | None = None, timeout: int = 300) -> subprocess.CompletedProcess:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}
    return subprocess.run(
        [sys.executable, "-m", "guide.cli", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
        env=env,
        check=False,
    )


def assert_clean_error(proc: subprocess.CompletedProcess, code: int, *words: str) -> None:
    assert proc.returncode == code, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "guide: error:" in proc.stderr
    for w in words:
        assert w in proc.stderr


@pytest.fixture()
def schema_file(tmp_path):
    path = tmp_path / "person.json"
    path.write_text(json.dumps(PERSON))
    return path


# -- runs on the model ------------------------------------------------------------------------------


def test_json_schema(schema_file):
    proc = guide_cli(
        "json",
        "--schema",
        str(schema_file),
        "-q",
        "--max-tokens",
        "40",
        "Extract the person as JSON.\nText: Ada Lovelace, age 36.",
    )
    assert proc.returncode == 0, proc.stderr
    jsonschema.validate(json.loads(proc.stdout), PERSON)


def test_json_pydantic_model_from_a_file(tmp_path):
    (tmp_path / "models.py").write_text(
        "from pydantic import BaseModel, Field\n"
        "class City(BaseModel):\n"
        "    name: str = Field(max_length=20)\n"
        "    country: str = Field(max_length=20)\n"
    )
    proc = guide_cli(
        "json",
        "--model",
        f"{tmp_path / 'models.py'}:City",
        "-q",
        "--indent",
        "2",
        "--max-tokens",
        "40",
        "Extract the city as JSON.\nText: Paris is in France.",
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("{\n  ")  # --indent pretty-prints
    value = json.loads(proc.stdout)
    assert set(value) == {"name", "country"}


def test_regex_and_stream():
    pattern = r"\d{4}-\d{2}-\d{2}"
    proc = guide_cli("regex", pattern, "--stream", "-q", "When did the Apollo 11 landing happen? YYYY-MM-DD.")
    assert proc.returncode == 0, proc.stderr
    assert re.fullmatch(pattern, proc.stdout.strip())


def test_choice_takes_the_prompt_from_an_option():
    proc = guide_cli("choice", "positive", "negative", "--prompt", "Review: I loved it. Sentiment?", "-q")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() in ("positive", "negative")


def test_grammar_file_and_prompt_from_stdin(tmp_path):
    path = tmp_path / "yn.lark"
    path.write_text('start: ANSWER\nANSWER: "yes" | "no"\n')
    proc = guide_cli("grammar", str(path), "-", "-q", stdin="Is the sky blue? Answer yes or no.")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() in ("yes", "no")


def test_batch_jsonl_in_and_out(tmp_path, schema_file):
    rows = [
        {"id": 1, "prompt": "Extract the person as JSON.\nText: Ada Lovelace, age 36."},
        "Extract the person as JSON.\nText: Alan Turing, age 41.",
    ]
    inp = tmp_path / "in.jsonl"
    inp.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    out = tmp_path / "out.jsonl"
    proc = guide_cli(
        "json",
        "--schema",
        str(schema_file),
        "--input",
        str(inp),
        "--output",
        str(out),
        "--max-tokens",
        "40",
        "--batch-size",
        "2",
    )
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(lines) == 2 and lines[0]["id"] == 1 and lines[1]["prompt"] == rows[1]
    for line in lines:
        assert "finish_reason" in line and "text" in line
        if "error" in line:
            assert proc.returncode == 1
        else:
            jsonschema.validate(line["output"], PERSON)
    if all("output" in line for line in lines):
        assert proc.returncode == 0, proc.stderr


def test_truncated_output_exits_1_with_a_message(schema_file):
    proc = guide_cli("json", "--schema", str(schema_file), "--max-tokens", "3", "-q", "Ada Lovelace, 36")
    assert_clean_error(proc, 1, "max_new_tokens=3")
    assert proc.stdout == ""


def test_a_model_that_cannot_be_loaded_exits_4(tmp_path):
    proc = guide_cli("regex", "a+", "hi", "--model-path", str(tmp_path / "no-model"))
    assert_clean_error(proc, 4, "could not load the model")


# -- errors found before the model loads ------------------------------------------------------------


def test_bad_regex_exits_3():
    assert_clean_error(guide_cli("regex", "[a-", "prompt"), 3, "invalid spec")


def test_usage_error_through_the_console_entry():
    assert_clean_error(guide_cli("json", "--schema", "/no/such/file.json", "p"), 2, "does not exist")
    proc = guide_cli("regex")
    assert proc.returncode == 2 and "usage:" in proc.stderr and "Traceback" not in proc.stderr


def run_main(capsys, *args: str) -> tuple[int, str, str]:
    """The same entry point in-process, for the many error paths that never load a model."""
    from guide.cli import main

    try:
        code = main(list(args))
    except SystemExit as exc:  # argparse's own errors and --help
        code = exc.code
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize(
    "args, words",
    [
        (["json", "--model", "nocolon", "p"], ["MODULE:CLASS"]),
        (["json", "--model", "no_such_module_xyz:Person", "p"], ["could not import"]),
        (["json", "--model", "json:dumps", "p"], ["not a pydantic model"]),
        (["choice", "a", "b"], ["no prompt"]),
        (["choice", "a", "a", "--prompt", "p"], ["distinct"]),
        (["grammar", "cobol", "p"], ["built-in"]),
        (["regex", "a", "p", "--input", "/no/such.jsonl"], ["does not exist"]),
        (["regex", "a", "p", "extra"], ["unrecognized arguments"]),
        (["json", "--max-tokens", "0", "--schema", "x", "p"], ["expected a number >= 1"]),
    ],
)
def test_usage_errors_exit_2(capsys, args, words):
    code, out, err = run_main(capsys, *args)
    assert code == 2 and out == "" and "Traceback" not in err
    for w in words:
        assert w in err


def test_bad_input_files_exit_2(capsys, tmp_path):
    bad_schema = tmp_path / "bad.json"
    bad_schema.write_text("{not json")
    code, _, err = run_main(capsys, "json", "--schema", str(bad_schema), "p")
    assert code == 2 and "not valid JSON" in err and "line 1" in err
    bad_lines = tmp_path / "bad.jsonl"
    bad_lines.write_text('"ok"\n{"no_prompt": 1}\n')
    code, _, err = run_main(capsys, "regex", "a", "--input", str(bad_lines))
    assert code == 2 and "bad.jsonl:2" in err
    good_lines = tmp_path / "good.jsonl"
    good_lines.write_text('"ok"\n')
    code, _, err = run_main(capsys, "regex", "a", "p", "--input", str(good_lines))
    assert code == 2 and "not both" in err
    code, _, err = run_main(capsys, "regex", "a", "--stream", "--input", str(good_lines))
    assert code == 2 and "single prompt" in err


def test_help_and_grammar_list(capsys):
    code, out, _ = run_main(capsys, "--help")
    assert code == 0 and all(c in out for c in ("json", "regex", "grammar", "choice"))
    code, out, _ = run_main(capsys, "grammar", "--list")
    assert code == 0 and "sql" in out.split()


def test_console_script_is_declared():
    assert 'guide = "guide.cli:main"' in (ROOT / "pyproject.toml").read_text()


def test_watermark_key_marks_and_detect_scores(tmp_path):
    common = ["--raw", "--max-tokens", "80", "--temperature", "0.8", "--seed", "3", "-q"]
    prompt = "Once upon a time, in a small village by the sea,"
    marked = guide_cli("text", prompt, "--watermark-key", "1234", "--watermark-bias", "4", *common)
    plain = guide_cli("text", prompt, *common)
    assert marked.returncode == 0 and plain.returncode == 0, marked.stderr + plain.stderr
    scores = []
    for out in (marked, plain):
        det = guide_cli("detect", "-", "--watermark-key", "1234", stdin=out.stdout.rstrip("\n"))
        assert det.returncode == 0, det.stderr
        scores.append(json.loads(det.stdout))
    assert set(scores[0]) == {"z", "p_value", "counted", "green", "detected"}
    assert scores[0]["counted"] > 0
    assert scores[0]["z"] > scores[1]["z"]
    assert not scores[1]["detected"]


def test_detect_with_a_regex_counts_only_choices():
    det = guide_cli("detect", "2024-05-17", "--watermark-key", "7", "--regex", r"\d{4}-\d{2}-\d{2}")
    assert det.returncode == 0, det.stderr
    assert json.loads(det.stdout)["counted"] <= 8  # the dashes were forced


def test_num_beams_and_drafts_give_the_greedy_value(schema_file):
    prompt = "Extract: Ada Lovelace, 36"
    common = ["json", "--schema", str(schema_file), prompt, "--max-tokens", "40", "-q"]
    plain = guide_cli(*common)
    assert plain.returncode == 0, plain.stderr
    for extra in (["--draft", "prompt", "--num-draft-tokens", "4"], ["--draft", "layers:20"]):
        spec = guide_cli(*common, *extra)
        assert spec.returncode == 0, spec.stderr
        assert spec.stdout == plain.stdout  # greedy speculative decoding changes nothing but the cost
    beams = guide_cli(*common, "--num-beams", "3")
    assert beams.returncode == 0, beams.stderr
    value = json.loads(beams.stdout)
    jsonschema.validate(value, PERSON)


@pytest.mark.parametrize("bad", ["model", "layers:0", "layers:x"])
def test_bad_draft_is_a_usage_error(capsys, bad):
    code, out, err = run_main(capsys, "regex", "a", "p", "--draft", bad)
    assert code == 2 and out == "" and "layers:N" in err
