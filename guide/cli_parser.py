"""The ``guide`` command's argument parser: every subcommand, its options and their checks."""

from __future__ import annotations

import argparse


def positive_int(text: str) -> int:
    """An argparse type: a whole number >= 1.

    >>> positive_int("3")
    3
    """
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"expected a number >= 1, got {v}")
    return v


def number(text: str) -> float:
    """An argparse type: any float.

    >>> number("0.5")
    0.5
    """
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None


def draft_kind(text: str) -> str:
    """An argparse type: a ``--draft`` value, "prompt" or "layers:N" with N >= 1.

    >>> draft_kind("layers:10")
    'layers:10'
    """
    head, _, n = text.partition(":")
    if text == "prompt" or (head == "layers" and n.isdigit() and int(n) >= 1):
        return text
    raise argparse.ArgumentTypeError(f"expected 'prompt' or 'layers:N' (N >= 1), got {text!r}")


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
        type=positive_int,
        default=256,
        metavar="N",
        help="most new tokens per output (default: 256)",
    )
    g.add_argument("--temperature", type=number, metavar="T", help="0 = greedy (the default)")
    g.add_argument("--top-k", type=int, metavar="K")
    g.add_argument("--top-p", type=number, metavar="P")
    g.add_argument("--min-p", type=number, metavar="P")
    g.add_argument("--typical-p", type=number, metavar="P")
    g.add_argument("--repetition-penalty", type=number, metavar="R")
    g.add_argument("--frequency-penalty", type=number, metavar="F")
    g.add_argument("--presence-penalty", type=number, metavar="F")
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
        "--watermark-bias", type=number, default=2.0, metavar="B", help="watermark logit bias (default: 2.0)"
    )
    g.add_argument(
        "--num-beams",
        type=positive_int,
        metavar="K",
        help="beam search with K beams (deterministic; no sampling options or stop strings)",
    )
    g.add_argument(
        "--draft",
        type=draft_kind,
        metavar="KIND",
        help="speculative decoding: 'prompt' (prompt lookup) or 'layers:N' (the model's first N layers "
        "as the draft); same output as without when greedy",
    )
    g.add_argument(
        "--num-draft-tokens", type=positive_int, metavar="N", help="most tokens drafted per step (default: 8)"
    )
    io = common.add_argument_group("input and output")
    io.add_argument("--input", "-i", metavar="FILE.jsonl", help="batch: one prompt per line ('-' = stdin)")
    io.add_argument("--output", "-o", metavar="FILE", help="write results here instead of stdout")
    io.add_argument(
        "--batch-size",
        type=positive_int,
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
    p.add_argument("--greenlist-ratio", type=number, default=0.25, metavar="G", help="(default: 0.25)")
    p.add_argument("--seeding-scheme", choices=("lefthash", "selfhash"), default="lefthash")
    p.add_argument("--context-width", type=positive_int, default=1, metavar="N", help="(default: 1)")
    p.add_argument("--schema", metavar="FILE", help="the JSON Schema the text was generated under")
    p.add_argument("--regex", metavar="PATTERN", help="the regex the text was generated under")
    p.add_argument("--z-threshold", type=number, default=4.0, metavar="Z", help="(default: 4.0)")
    p.add_argument("--model-path", metavar="PATH", help="whose tokenizer (default: the embedded model)")
    return parser


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("guide-fsm")
    except Exception:  # deliberately broad: not installed as a distribution (a source checkout)
        return "dev"
