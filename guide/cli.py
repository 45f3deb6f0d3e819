"""The ``guide`` command: constrained generation from the shell.

    guide json --schema person.json "Extract: Ada Lovelace, 36"
    guide json --model mypkg.models:Person "Extract: Ada Lovelace, 36"
    guide regex '\\d{4}-\\d{2}-\\d{2}' "When did the war end?"
    guide grammar sql "List the names of users older than 30"      # a built-in grammar or a .lark file
    guide choice positive negative --prompt "Review: loved it. Sentiment?"
    guide text "Tell me a joke"                                     # no constraint
    guide json --schema person.json --input people.jsonl --output out.jsonl

Batch input (``--input``) is JSONL: each line a JSON string (the prompt) or an object with a
``"prompt"`` (or ``"messages"``) key; other keys are copied to the output line, which adds ``output``,
``text`` and ``finish_reason`` (or ``error``). Exit codes: 0 ok, 1 some output incomplete or invalid,
2 bad usage or input file, 3 bad spec (regex, schema, grammar), 4 model could not be loaded,
70 internal error, 130 interrupted.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, TextIO, TypeVar

if TYPE_CHECKING:
    from .generator import Generator
    from .models import Model
    from .output_types import Grammar

EXIT_OK, EXIT_OUTPUT, EXIT_USAGE, EXIT_SPEC, EXIT_MODEL, EXIT_INTERNAL = 0, 1, 2, 3, 4, 70
SPINNER_AFTER_S = 1.0

_T = TypeVar("_T")


class CliError(Exception):
    """A user error with the exit code to leave with."""

    def __init__(self, message: str, code: int = EXIT_USAGE):
        super().__init__(message)
        self.code = code


# -- argument parsing ----------------------------------------------------------------------------------


def _positive_int(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"expected a number >= 1, got {v}")
    return v


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for docs and tests)."""
    common = argparse.ArgumentParser(add_help=False)
    g = common.add_argument_group("model and generation")
    g.add_argument(
        "--model-path",
        metavar="PATH",
        help="model directory or hub id (default: the embedded SmolLM2-135M-Instruct, "
        "or $GUIDE_DEFAULT_MODEL)",
    )
    g.add_argument(
        "--max-tokens",
        type=_positive_int,
        default=256,
        metavar="N",
        help="most new tokens per output (default: 256)",
    )
    g.add_argument("--temperature", type=_number, metavar="T", help="0 = greedy (the default)")
    g.add_argument("--top-k", type=int, metavar="K")
    g.add_argument("--top-p", type=_number, metavar="P")
    g.add_argument("--min-p", type=_number, metavar="P")
    g.add_argument("--typical-p", type=_number, metavar="P")
    g.add_argument("--repetition-penalty", type=_number, metavar="R")
    g.add_argument("--frequency-penalty", type=_number, metavar="F")
    g.add_argument("--presence-penalty", type=_number, metavar="F")
    g.add_argument(
        "--seed", type=int, metavar="S", help="random seed; turns sampling on (batch row i uses S + i)"
    )
    g.add_argument("--stop", action="append", metavar="TEXT", help="stop string (repeatable)")
    g.add_argument("--system", metavar="TEXT", help="system message for the chat template")
    g.add_argument("--raw", action="store_true", help="send the prompt as is, without the chat template")
    g.add_argument(
        "--watermark-key",
        type=int,
        metavar="KEY",
        help="mark the output with a green-list watermark keyed by KEY (detect it with `guide detect`)",
    )
    g.add_argument(
        "--watermark-bias", type=_number, default=2.0, metavar="B", help="watermark logit bias (default: 2.0)"
    )
    io = common.add_argument_group("input and output")
    io.add_argument("--input", "-i", metavar="FILE.jsonl", help="batch: one prompt per line ('-' = stdin)")
    io.add_argument("--output", "-o", metavar="FILE", help="write results here instead of stdout")
    io.add_argument(
        "--batch-size",
        type=_positive_int,
        default=8,
        metavar="N",
        help="prompts per forward pass in batch mode (default: 8)",
    )
    io.add_argument("--stream", action="store_true", help="print text as it is generated (single prompt)")
    io.add_argument("--quiet", "-q", action="store_true", help="no progress bars or status messages")

    parser = argparse.ArgumentParser(
        prog="guide",
        description="Generate text that provably matches a JSON schema, regex, grammar or choice.",
        epilog="Exit codes: 0 ok, 1 output incomplete/invalid, 2 usage or input error, 3 bad spec, "
        "4 model load error.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    p = sub.add_parser(
        "json",
        parents=[common],
        help="JSON matching a schema or a pydantic model",
        description="Generate JSON that validates against a JSON schema or a pydantic model.",
    )
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--schema", metavar="FILE", help="a JSON Schema file ('-' = stdin)")
    src.add_argument(
        "--model",
        metavar="MODULE:CLASS",
        help="a pydantic model, e.g. mypkg.models:Person or path/to/file.py:Person",
    )
    p.add_argument(
        "--whitespace", metavar="POLICY", help="JSON layout: compact (default), pretty, or an indent width"
    )
    p.add_argument("--indent", type=int, metavar="N", help="pretty-print the JSON output")
    p.add_argument("prompt", nargs="?", help="the prompt ('-' = stdin)")

    p = sub.add_parser(
        "regex",
        parents=[common],
        help="text fully matching a regular expression",
        description="Generate text that fully matches PATTERN (Python re syntax).",
    )
    p.add_argument("pattern")
    p.add_argument("prompt", nargs="?", help="the prompt ('-' = stdin)")

    p = sub.add_parser(
        "grammar",
        parents=[common],
        help="text in a Lark grammar's language",
        description="Generate text in the language of a Lark grammar: a .lark file or the "
        "name of a built-in grammar (see --list).",
    )
    p.add_argument("grammar", nargs="?", metavar="FILE|NAME")
    p.add_argument("prompt", nargs="?", help="the prompt ('-' = stdin)")
    p.add_argument("--start", default="start", metavar="RULE", help="start rule (default: start)")
    p.add_argument("--list", action="store_true", help="list the built-in grammars and exit")

    p = sub.add_parser(
        "choice",
        parents=[common],
        help="exactly one of the given options",
        description="Generate exactly one of OPTIONS. The prompt goes in --prompt so that "
        "every positional argument is an option.",
    )
    p.add_argument("options", nargs="+", metavar="OPTION")
    p.add_argument("--prompt", "-p", help="the prompt ('-' = stdin)")

    p = sub.add_parser(
        "text",
        parents=[common],
        help="free text (no constraint)",
        description="Generate unconstrained text (useful to compare with constrained runs).",
    )
    p.add_argument("prompt", nargs="?", help="the prompt ('-' = stdin)")

    p = sub.add_parser(
        "detect",
        help="score a text for a watermark (z-score, p-value)",
        description="Score a text for the green-list watermark of `--watermark-key`; with --schema or "
        "--regex only the positions where the constraint left a choice are counted.",
    )
    p.add_argument("text", nargs="?", help="the generated text, prompt excluded ('-' = stdin)")
    p.add_argument(
        "--watermark-key", type=int, required=True, metavar="KEY", help="the key it was marked with"
    )
    p.add_argument("--greenlist-ratio", type=_number, default=0.25, metavar="G", help="(default: 0.25)")
    p.add_argument("--seeding-scheme", choices=("lefthash", "selfhash"), default="lefthash")
    p.add_argument("--context-width", type=_positive_int, default=1, metavar="N", help="(default: 1)")
    p.add_argument("--schema", metavar="FILE", help="the JSON Schema the text was generated under")
    p.add_argument("--regex", metavar="PATTERN", help="the regex the text was generated under")
    p.add_argument("--z-threshold", type=_number, default=4.0, metavar="Z", help="(default: 4.0)")
    p.add_argument("--model-path", metavar="PATH", help="whose tokenizer (default: the embedded model)")
    return parser


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("guide-fsm")
    except Exception:  # deliberately broad: not installed as a distribution (a source checkout)
        return "dev"


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
        return _read_schema(args.schema)
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


def _read_schema(path: str) -> dict:
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


def _precheck(tp: object) -> None:
    """Fail on a bad regex before paying for the model load."""
    import fsm

    if isinstance(tp, fsm.Regex):
        fsm.regex_to_dfa(tp.pattern, extended=True)


# -- prompts ---------------------------------------------------------------------------------------


def _single_prompt(value: str | None) -> str:
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


# -- running -------------------------------------------------------------------------------------------


def _options(args: argparse.Namespace) -> dict[str, Any]:
    opts: dict[str, Any] = {"max_new_tokens": args.max_tokens, "raw": args.raw}
    for name in (
        "temperature",
        "top_k",
        "top_p",
        "min_p",
        "typical_p",
        "repetition_penalty",
        "frequency_penalty",
        "presence_penalty",
        "seed",
        "stop",
        "system",
    ):
        value = getattr(args, name)
        if value is not None:
            opts[name] = value
    if args.watermark_key is not None:
        from .watermark import Watermark

        opts["watermark"] = Watermark(hashing_key=args.watermark_key, bias=args.watermark_bias)
    return opts


def _detect(args: argparse.Namespace) -> int:
    """``guide detect``: the text re-tokenized as the tokenizer writes it, scored, one JSON line out."""
    # lazy, as every command here: `guide --help` must not pay for torch; detect loads no weights
    from transformers import AutoConfig, AutoTokenizer

    import fsm

    from .default_model import default_model_dir
    from .watermark import Watermark, detect_watermark

    text = _single_prompt(args.text)
    if args.schema and args.regex:
        raise CliError("give --schema or --regex, not both")
    spec = fsm.JsonSchema(_read_schema(args.schema)) if args.schema else None
    spec = fsm.Regex(args.regex) if args.regex else spec
    wm = Watermark(
        greenlist_ratio=args.greenlist_ratio,
        hashing_key=args.watermark_key,
        seeding_scheme=args.seeding_scheme,
        context_width=args.context_width,
    )
    path = args.model_path or str(default_model_dir())
    try:
        tokenizer = AutoTokenizer.from_pretrained(path)
        vocab_size = AutoConfig.from_pretrained(path).vocab_size
    except (OSError, ValueError) as exc:
        raise CliError(f"could not load the tokenizer: {exc}", EXIT_MODEL) from None
    ids = tokenizer.encode(text, add_special_tokens=False)
    score = detect_watermark(ids, wm, vocab_size=vocab_size, spec=spec, tokenizer=tokenizer)
    line = {
        "z": round(score.z, 4),
        "p_value": score.p_value,
        "counted": score.counted,
        "green": score.green,
        "detected": score.detected(args.z_threshold),
    }
    print(json.dumps(line))
    return EXIT_OK


def with_spinner(fn: Callable[[], _T], desc: str, quiet: bool) -> _T:
    """Run ``fn``; if it takes longer than a second, show a tqdm bar with the elapsed time meanwhile.

    >>> with_spinner(lambda: 42, "compiling", quiet=True)
    42
    """
    box: dict[str, Any] = {}

    def run():
        try:
            box["value"] = fn()
        except BaseException as exc:  # deliberately broad: re-raised in the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(SPINNER_AFTER_S)
    if thread.is_alive():
        bar = None
        if not quiet:
            from tqdm.auto import tqdm

            bar = tqdm(desc=desc, bar_format="{desc}: {elapsed}", file=sys.stderr)
        while thread.is_alive():
            thread.join(0.2)
            if bar is not None:
                bar.refresh()
        if bar is not None:
            bar.close()
    if "error" in box:
        raise box["error"]
    return box.get("value")


def _format_value(value: Any, is_json: bool, indent: int | None) -> str:
    from .output_types import to_jsonable

    if is_json:
        return json.dumps(to_jsonable(value), indent=indent, ensure_ascii=False)
    return value if isinstance(value, str) else json.dumps(to_jsonable(value), ensure_ascii=False)


def run(args: argparse.Namespace) -> int:
    """Execute parsed arguments; returns the exit code (errors raise, see `main`)."""
    from .output_types import builtin_grammars

    if args.command == "detect":
        return _detect(args)
    if args.command == "grammar" and args.list:
        print("\n".join(builtin_grammars()))
        return EXIT_OK
    tp = output_type_from_args(args)
    _precheck(tp)
    rows = read_jsonl(args.input) if args.input else None
    if rows is None:
        prompt = _single_prompt(args.prompt)
    elif args.stream:
        raise CliError("--stream works with a single prompt, not with --input")
    elif getattr(args, "prompt", None) not in (None, ""):
        raise CliError("give either a PROMPT or --input FILE.jsonl, not both")

    source = _load_model(args.model_path, args.quiet)
    from .generator import Generator

    whitespace = getattr(args, "whitespace", None)
    if whitespace is not None and whitespace.isdigit():
        whitespace = int(whitespace)  # an indent width
    gen = with_spinner(
        lambda: Generator(source, tp, whitespace=whitespace, **_options(args)),
        "compiling the constraint",
        args.quiet,
    )
    indent = getattr(args, "indent", None)
    with _output(args.output) as out:
        if rows is not None:
            return _run_batch(gen, rows, args, out)
        if args.stream:
            for piece in gen.stream(prompt):
                out.write(piece)
                out.flush()
            out.write("\n")
            return EXIT_OK
        value = gen(prompt)
        out.write(_format_value(value, gen.kind.json, indent) + "\n")
        return EXIT_OK


@contextlib.contextmanager
def _output(path: str | None):
    if path is None:
        yield sys.stdout
        return
    try:
        f = open(path, "w", encoding="utf-8")  # noqa: SIM115 - closed below, after the caller's block
    except OSError as exc:
        raise CliError(f"cannot write {path!r}: {exc.strerror}") from None
    with f:
        yield f


def _run_batch(gen: Generator, rows: list[dict[str, Any]], args: argparse.Namespace, out: TextIO) -> int:
    from .output_types import to_jsonable

    values = gen.batch(
        [r["prompt"] for r in rows], errors="return", batch_size=args.batch_size, progress=not args.quiet
    )
    failed = 0
    for row, result in zip(rows, gen.last, strict=True):
        line = dict(row)
        if result.error is None:
            line["output"] = to_jsonable(result.value)
        else:
            failed += 1
            line["error"] = f"{type(result.error).__name__}: {result.error}"
        line["text"] = result.text
        line["finish_reason"] = result.finish_reason
        out.write(json.dumps(line, ensure_ascii=False) + "\n")
    if failed and not args.quiet:
        print(f'guide: {failed} of {len(values)} outputs failed (see their "error" field)', file=sys.stderr)
    return EXIT_OUTPUT if failed else EXIT_OK


def _load_model(path: str | None, quiet: bool) -> Model:
    from .generator import default_model
    from .models import load

    if quiet:
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
    else:
        print(f"guide: loading {'the default model' if path is None else path}...", file=sys.stderr)
    try:
        return default_model() if path is None else load(path)
    except (OSError, ValueError, RuntimeError) as exc:  # missing files, bad config, failed conversion
        raise CliError(f"could not load the model: {exc}", EXIT_MODEL) from None


def main(argv: list[str] | None = None) -> int:
    """Console entry point: parse, run, and turn every expected failure into a message and exit code."""
    parser = build_parser()
    # A prompt after options ("guide regex P --stream 'prompt'") is left over by argparse because the
    # prompt is an optional positional; take it back here.
    args, extra = parser.parse_known_args(argv)
    if extra:
        if len(extra) == 1 and getattr(args, "prompt", "") is None and not extra[0].startswith("-"):
            args.prompt = extra[0]
        else:
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
    try:
        return run(args)
    except CliError as exc:
        return _fail(str(exc), exc.code)
    except KeyboardInterrupt:
        return _fail("interrupted", 130)
    except BrokenPipeError:  # e.g. piped into `head`
        return EXIT_OK
    except Exception as exc:  # deliberately broad: the CLI boundary turns any error into an exit code
        return _classify(exc)


def _classify(exc: Exception) -> int:
    import fsm

    from .results import GenerationError
    from .sampling import SamplingError

    if isinstance(exc, fsm.SpecError):
        return _fail(f"invalid spec: {exc}", EXIT_SPEC)
    if isinstance(exc, GenerationError):
        return _fail(str(exc), EXIT_OUTPUT)
    if isinstance(exc, (SamplingError, fsm.VocabularyError)):
        return _fail(str(exc), EXIT_USAGE)
    if isinstance(exc, OSError):
        return _fail(f"{exc}", EXIT_USAGE)
    if os.environ.get("GUIDE_DEBUG"):
        raise exc
    return _fail(
        f"internal error: {type(exc).__name__}: {exc} (set GUIDE_DEBUG=1 for the traceback)", EXIT_INTERNAL
    )


def _fail(message: str, code: int) -> int:
    print(f"guide: error: {message}", file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main())
