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
import json
import os
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TextIO, TypeVar

from .cli_inputs import (
    EXIT_INTERNAL,
    EXIT_MODEL,
    EXIT_OK,
    EXIT_OUTPUT,
    EXIT_SPEC,
    EXIT_USAGE,
    CliError,
    output_type_from_args,
    precheck,
    read_jsonl,
    read_schema,
    single_prompt,
)
from .cli_parser import build_parser

if TYPE_CHECKING:
    from .generator import Generator
    from .models import Model

SPINNER_AFTER_S = 1.0

_T = TypeVar("_T")

__all__ = [
    "EXIT_INTERNAL",
    "EXIT_MODEL",
    "EXIT_OK",
    "EXIT_OUTPUT",
    "EXIT_SPEC",
    "EXIT_USAGE",
    "CliError",
    "build_parser",
    "main",
    "output_type_from_args",
    "read_jsonl",
    "run",
    "with_spinner",
]


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
        "num_beams",
        "draft",
        "num_draft_tokens",
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

    text = single_prompt(args.text)
    if args.schema and args.regex:
        raise CliError("give --schema or --regex, not both")
    spec = fsm.JsonSchema(read_schema(args.schema)) if args.schema else None
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
    precheck(tp)
    rows = read_jsonl(args.input) if args.input else None
    if rows is None:
        prompt = single_prompt(args.prompt)
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
