"""A request's constraint as vLLM's flat per-request arguments, and back.

vLLM carries per-request options for logits processors in ``SamplingParams.extra_args`` and, over
the OpenAI API, in ``extra_body={"vllm_xargs": {...}}``, which holds only strings, numbers and lists
of those. So a constraint travels as a few ``guide_*`` keys — a JSON Schema as JSON text — and the
server rebuilds the same `fsm` spec from them. This module imports neither vLLM nor torch: clients
use it to build the arguments, the server to read them.

| key | value |
|---|---|
| ``guide_regex`` | a regular expression the whole output matches |
| ``guide_json_schema`` | a JSON Schema, as JSON text (a dict is accepted offline) |
| ``guide_grammar`` | a Lark grammar's text, or the name of a built-in grammar (``"sql"``) |
| ``guide_grammar_start`` | the grammar's start rule (default ``start``) |
| ``guide_choice`` | a list of strings, the output is one of them |
| ``guide_whitespace`` | JSON layout: ``"compact"`` (default), ``"pretty"`` or an indent width |
| ``guide_exact`` | ``1``/``true``: the JSON Schema's exact language (`fsm.JsonSchema(exact=True)`) |
| ``guide_tools`` | OpenAI tool definitions (``[{"type": "function", "function": {...}}]``), as JSON text: free text and tool calls (`guide.Tools`) |
| ``guide_tool_choice`` | ``"auto"`` (default), ``"required"``, ``"none"`` or a tool's name |
| ``guide_tool_format`` | ``"hermes"``, ``"llama3_json"`` or ``"mistral"`` (default: the model's chat template's, else Hermes) |
| ``guide_tool_begin`` / ``guide_tool_end`` | a custom format: the text around each call |
| ``guide_max_calls`` | at most this many calls |
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import fsm

from ..output_types import output_type
from ..tool_formats import FORMATS, ToolFormat
from ..tools import Tools

PREFIX = "guide_"
SPEC_KEYS = ("guide_regex", "guide_json_schema", "guide_grammar", "guide_choice", "guide_tools")
OPTION_KEYS = ("guide_grammar_start", "guide_whitespace", "guide_exact")
TOOL_KEYS = (
    "guide_tool_choice",
    "guide_tool_format",
    "guide_tool_begin",
    "guide_tool_end",
    "guide_max_calls",
)


class RequestArgumentError(fsm.SpecError):
    """A request's ``guide_*`` arguments are missing, misspelled, of the wrong type or contradictory.

    A `fsm.SpecError` (so a `ValueError`): vLLM turns it into an HTTP 400 for the request alone.
    """


def request_args(tp: Any, whitespace: str | int | None = None, *, exact: bool = False) -> dict[str, Any]:
    """The ``guide_*`` arguments that make a vLLM request follow ``tp``.

    ``tp`` is anything `guide.output_type` takes: a pydantic model, a JSON Schema dict, ``fsm.Regex``,
    ``fsm.Choice``, ``guide.Grammar``, ``Literal[...]``, ``int``… Offline, pass the result as
    ``SamplingParams(extra_args=...)``; over the OpenAI API as ``extra_body={"vllm_xargs": ...}``.

    >>> request_args(fsm.Regex(r"\\d{3}"))
    {'guide_regex': '\\\\d{3}'}
    >>> request_args({"type": "integer"})
    {'guide_json_schema': '{"type": "integer"}'}
    """
    if isinstance(tp, Tools):
        return tool_args(tp)
    spec = output_type(tp, whitespace, exact=exact).spec
    if isinstance(spec, fsm.Regex):
        return {"guide_regex": spec.pattern}
    if isinstance(spec, fsm.Choice):
        return {"guide_choice": list(spec.options)}
    if isinstance(spec, fsm.Grammar):
        out: dict[str, Any] = {"guide_grammar": spec.lark_text}
        if spec.start != "start":
            out["guide_grammar_start"] = spec.start
        return out
    if isinstance(spec, fsm.JsonSchema):
        out = {"guide_json_schema": json.dumps(spec.schema)}
        if spec.whitespace != "compact":
            out["guide_whitespace"] = spec.whitespace
        if spec.exact:
            out["guide_exact"] = 1
        return out
    raise RequestArgumentError(
        f"{type(tp).__name__} has no vLLM request form: use a JSON Schema, pydantic model, regex, "
        "choice or Lark grammar"
    )


def tool_args(tools: Tools) -> dict[str, Any]:
    """The ``guide_*`` arguments of a `guide.Tools` (tools as OpenAI definitions in JSON text).

    >>> tool_args(Tools([{"name": "f", "parameters": {"type": "object"}}], tool_choice="f"))["guide_tool_choice"]
    'f'
    """
    out: dict[str, Any] = {"guide_tools": json.dumps([t.openai() for t in tools.tools])}
    if tools.choice != "auto":
        out["guide_tool_choice"] = tools.choice
    fmt = tools.format
    if fmt is not None and FORMATS.get(fmt.name) == fmt:
        out["guide_tool_format"] = fmt.name
    elif fmt is not None:
        if fmt != ToolFormat.custom(fmt.begin, fmt.end):
            raise RequestArgumentError(f"tool format {fmt} has no request form: use a named one or begin/end")
        out.update(guide_tool_begin=fmt.begin, guide_tool_end=fmt.end)
    if tools.max_calls is not None:
        out["guide_max_calls"] = tools.max_calls
    return out


def tools_from_args(args: Mapping[str, Any]) -> Tools:
    """The `guide.Tools` of a request's ``guide_tools`` arguments (the client parses replies with it).

    >>> tools_from_args({"guide_tools": '[{"name": "f", "parameters": {"type": "object"}}]'}).choice
    'auto'
    """
    value = args["guide_tools"]
    try:
        tools = json.loads(value) if isinstance(value, str) else value
    except json.JSONDecodeError as e:
        raise RequestArgumentError(f"guide_tools is not JSON: {e}") from None
    if not isinstance(tools, list) or not all(isinstance(t, dict) for t in tools):
        raise RequestArgumentError("guide_tools must be a JSON list of OpenAI tool definitions")
    fmt: Any = args.get("guide_tool_format")
    if "guide_tool_begin" in args or "guide_tool_end" in args:
        fmt = ToolFormat.custom(
            args.get("guide_tool_begin", ""), _text("guide_tool_end", args.get("guide_tool_end"))
        )
    calls = args.get("guide_max_calls")
    if calls is not None and (
        isinstance(calls, bool) or not isinstance(calls, (int, float)) or calls != int(calls)
    ):
        raise RequestArgumentError(f"guide_max_calls must be a whole number, got {calls!r:.80}")
    return Tools(
        tools,
        format=fmt,
        tool_choice=args.get("guide_tool_choice", "auto"),
        max_calls=None if calls is None else int(calls),
        whitespace=_whitespace(args["guide_whitespace"]) if "guide_whitespace" in args else None,
    )


def spec_from_args(extra_args: Mapping[str, Any] | None, tokenizer: Any = None) -> fsm.Spec | None:
    """The `fsm` spec a request's ``extra_args`` ask for, or None when they ask for none.

    ``tokenizer`` (the server's) lets ``guide_tools`` follow the model's chat template and special
    tokens; without it the tool format's texts are used (Hermes unless one is named).

    >>> spec_from_args({"guide_choice": ["yes", "no"]}).options
    ('yes', 'no')
    >>> spec_from_args({"temperature_hint": 1}) is None
    True
    """
    args = {k: v for k, v in (extra_args or {}).items() if isinstance(k, str) and k.startswith(PREFIX)}
    if not args:
        return None
    unknown = sorted(set(args) - set(SPEC_KEYS) - set(OPTION_KEYS) - set(TOOL_KEYS))
    if unknown:
        raise RequestArgumentError(
            f"unknown argument {unknown[0]!r} (known: {', '.join(SPEC_KEYS + OPTION_KEYS + TOOL_KEYS)})"
        )
    given = [k for k in SPEC_KEYS if k in args]
    if len(given) != 1:
        raise RequestArgumentError(
            f"give exactly one of {', '.join(SPEC_KEYS)} (got {', '.join(given) or 'none'})"
        )
    key = given[0]
    value = args[key]
    if key == "guide_tools":
        return tools_from_args(args).spec(tokenizer)
    stray = [k for k in TOOL_KEYS if k in args]
    if stray:
        raise RequestArgumentError(f"{stray[0]} goes with guide_tools, not {key}")
    if key == "guide_regex":
        return fsm.Regex(_text(key, value))
    if key == "guide_choice":
        if not isinstance(value, (list, tuple)) or not value or not all(isinstance(v, str) for v in value):
            raise RequestArgumentError(f"{key} must be a non-empty list of strings, got {value!r:.80}")
        return fsm.Choice(list(value))
    if key == "guide_grammar":
        return _grammar(_text(key, value), args.get("guide_grammar_start", "start"))
    return fsm.JsonSchema(
        _schema(value),
        _whitespace(args.get("guide_whitespace", "compact")),
        exact=_flag("guide_exact", args.get("guide_exact", False)),
    )


def _text(key: str, value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise RequestArgumentError(f"{key} must be a non-empty string, got {value!r:.80}")
    return value


def _grammar(text: str, start: Any) -> fsm.Grammar:
    from fsm import grammars  # the built-in grammar table is read only for grammar requests

    if not isinstance(start, str) or not start:
        raise RequestArgumentError(f"guide_grammar_start must be a rule name, got {start!r:.80}")
    if text in grammars.names():
        text = grammars.load(text)
    return fsm.Grammar(text, start=start)


def _schema(value: Any) -> Any:
    if isinstance(value, (dict, bool)):
        return value
    if not isinstance(value, str):
        raise RequestArgumentError(f"guide_json_schema must be JSON text, got {type(value).__name__}")
    try:
        return json.loads(value)
    except json.JSONDecodeError as e:
        raise RequestArgumentError(f"guide_json_schema is not JSON: {e}") from None


def _whitespace(value: Any) -> str | int:
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise RequestArgumentError(f"guide_whitespace must be a policy name or an indent, got {value!r:.80}")
    if isinstance(value, float):
        if not value.is_integer():
            raise RequestArgumentError(f"guide_whitespace indent must be whole, got {value}")
        return int(value)
    return value


def _flag(key: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if value in (0, 1) or value in ("0", "1", "true", "false"):
        return value in (1, "1", "true")
    raise RequestArgumentError(f"{key} must be true/false or 1/0, got {value!r:.80}")
