"""What the ``guide`` command reads: the output type its arguments ask for (schema, model class,
regex, grammar, choices), the prompt, and JSONL batch input; `CliError` with the exit codes."""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .output_types import Grammar

EXIT_OK, EXIT_OUTPUT, EXIT_USAGE, EXIT_SPEC, EXIT_MODEL, EXIT_INTERNAL = 0, 1, 2, 3, 4, 70


class CliError(Exception):
    """A user error with the exit code to leave with."""

    def __init__(self, message: str, code: int = EXIT_USAGE):
        super().__init__(message)
        self.code = code


# -- turning arguments into an output type -----------------------------------------------------------


def output_type_from_args(args: argparse.Namespace) -> Any:
    """The output type a command asks for; raises `CliError` for unreadable inputs.

    >>> output_type_from_args(build_parser().parse_args(["regex", "[0-9]+", "x"]))   # doctest: +SKIP
    Regex(pattern='[0-9]+')
    """
    from .output_types import Choice, Regex

    if args.command == "json":
        if args.model:
            return _import_model(args.model)
        return read_schema(args.schema)
    if args.command == "regex":
        return Regex(args.pattern)
    if args.command == "grammar":
        return _grammar(args.grammar, args.start)
    if args.command == "choice":
        if len(set(args.options)) < len(args.options):
            dup = sorted({o for o in args.options if args.options.count(o) > 1})
            raise CliError(f"choice options must be distinct; repeated: {dup}")
        return Choice(list(args.options))
    return str


def read_schema(path: str) -> dict:
    """A JSON Schema read from a file (``-``: standard input); `CliError` names what is wrong.

    >>> read_schema("person.json")   # doctest: +SKIP
    {'type': 'object', ...}
    """
    if path == "-":
        text = sys.stdin.read()
    else:
        p = Path(path)
        if not p.is_file():
            raise CliError(f"schema file {path!r} does not exist")
        text = p.read_text(encoding="utf-8")
    try:
        schema = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CliError(
            f"schema file {path!r} is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}"
        ) from None
    if not isinstance(schema, (dict, bool)):
        raise CliError(f"schema file {path!r} must hold a JSON object, not {type(schema).__name__}")
    return schema


def _import_model(ref: str) -> type:
    module_name, sep, attr = ref.rpartition(":")
    if not sep or not module_name or not attr:
        raise CliError(f"--model takes MODULE:CLASS (e.g. mypkg.models:Person), got {ref!r}")
    try:
        if module_name.endswith(".py") or os.sep in module_name:
            module = _import_file(Path(module_name))
        else:
            if os.getcwd() not in sys.path:
                sys.path.insert(0, os.getcwd())
            module = importlib.import_module(module_name)
    except CliError:
        raise
    except (
        Exception
    ) as exc:  # deliberately broad: ImportError, or any error raised while the user's module runs
        raise CliError(f"could not import {module_name!r}: {type(exc).__name__}: {exc}") from None
    cls = getattr(module, attr, None)
    if cls is None:
        raise CliError(f"module {module_name!r} has no attribute {attr!r}")
    if not (isinstance(cls, type) and hasattr(cls, "model_json_schema")):
        raise CliError(f"{ref} is not a pydantic model class")
    return cls


def _import_file(path: Path) -> ModuleType:
    import importlib.util

    if not path.is_file():
        raise CliError(f"model file {str(path)!r} does not exist")
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    return module


def _grammar(ref: str | None, start: str) -> Grammar:
    from .output_types import Grammar, builtin_grammars

    if not ref:
        raise CliError("grammar needs a .lark file or a built-in grammar name (see guide grammar --list)")
    if Path(ref).is_file():
        return Grammar.from_file(ref, start)
    if ref in builtin_grammars():
        return Grammar.builtin(ref, start)
    known = ", ".join(builtin_grammars()) or "none"
    raise CliError(f"{ref!r} is neither a grammar file nor a built-in grammar (built-in: {known})")


def precheck(tp: object) -> None:
    """Fail on a bad regex before paying for the model load."""
    import fsm

    if isinstance(tp, fsm.Regex):
        fsm.regex_to_dfa(tp.pattern, extended=True)


# -- prompts ---------------------------------------------------------------------------------------


def single_prompt(value: str | None) -> str:
    """The prompt argument (``-``: standard input), checked non-empty.

    >>> single_prompt("Extract: Ada")
    'Extract: Ada'
    """
    if value == "-":
        value = sys.stdin.read()
    if value is None or not value.strip():
        raise CliError(
            "no prompt: give PROMPT (or --prompt for choice), '-' for stdin, or --input FILE.jsonl"
        )
    return value


def read_jsonl(path: str) -> list[dict[str, Any]]:
    """Batch input rows as dicts with a ``prompt`` key (a string or chat messages).

    >>> read_jsonl("prompts.jsonl")[0]["prompt"]   # doctest: +SKIP
    'Extract: Ada Lovelace, 36'
    """
    if path == "-":
        lines = sys.stdin.read().splitlines()
    else:
        p = Path(path)
        if not p.is_file():
            raise CliError(f"input file {path!r} does not exist")
        lines = p.read_text(encoding="utf-8").splitlines()
    rows = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            raise CliError(f"{path}:{n}: not valid JSON ({exc.msg} at column {exc.colno})") from None
        if isinstance(item, str):
            item = {"prompt": item}
        elif isinstance(item, dict) and "messages" in item and "prompt" not in item:
            item = {**item, "prompt": item["messages"]}
        if (
            not isinstance(item, dict)
            or not isinstance(item.get("prompt"), (str, list))
            or not item["prompt"]
        ):
            raise CliError(
                f'{path}:{n}: each line must be a JSON string or an object with a "prompt" '
                '(or "messages") key'
            )
        rows.append(item)
    if not rows:
        raise CliError(f"input file {path!r} has no prompts")
    return rows
