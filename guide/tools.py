"""Tool calls: `guide.Tools` as an output type — free text in which the model may call tools, each
call's arguments constrained by that tool's JSON Schema, in the tag format of the chat template.

A tool is a pydantic model (the arguments), a typed function (its signature as the arguments'
model; a `@guide.function` works too), an OpenAI-style tool dict, or a `Tool`. The output is an
`fsm.compose` spec: one `fsm.Tag` per tool whose begin names the tool and whose body is the tool's
schema, so a call's body is compiled only when a generation enters it (500 tools stay lazy). The
value returned is a `ToolReply`: the free text and the `ToolCall`s, each with validated arguments.

``tool_choice``: ``"auto"`` (free text, calls where the model starts one, up to ``max_calls``),
``"required"`` (the output is one or more calls, nothing else), a tool's name (calls of that tool
only) or ``"none"`` (free text that never starts a call).

>>> gen = guide.Generator(model, tools=[get_weather, add])                    # doctest: +SKIP
>>> reply = gen("What's the weather in Paris?")                                # doctest: +SKIP
>>> reply.calls                                                               # doctest: +SKIP
[ToolCall(name='get_weather', arguments=get_weather_arguments(city='Paris'))]
"""

from __future__ import annotations

import inspect
import json
import re
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import fsm

from .output_types import OutputType, OutputTypeError, to_jsonable
from .tool_formats import ToolFormat, resolve_format

CHOICES = ("auto", "required", "none")


class ToolError(OutputTypeError):
    """A tool that cannot be offered (no name, a duplicate, a schema that is no object, an
    unannotated parameter...) or a call that names no tool; the message names the tool.

    >>> isinstance(ToolError("x"), fsm.SpecError)
    True
    """


@dataclass(frozen=True)
class Tool:
    """One tool: its ``name``, ``description``, the arguments' JSON ``schema``, ``validate`` (the
    decoded arguments -> the validated object) and the Python ``function`` to run, if any.

    >>> t = Tool.from_dict({"name": "add", "parameters": {"type": "object", "properties": {}}})
    >>> t.name, t.validate({})
    ('add', {})
    """

    name: str
    description: str
    schema: dict
    validate: Callable[[Any], Any] = field(repr=False)
    function: Callable[..., Any] | None = field(default=None, repr=False)

    @classmethod
    def from_model(cls, model: type) -> Tool:
        """A pydantic model as a tool: its class name, docstring and schema."""
        doc = inspect.getdoc(model) or ""
        if doc == inspect.getdoc(_base_model()):
            doc = ""  # pydantic's own BaseModel docstring is no description
        return cls(model.__name__, doc, model.model_json_schema(), model.model_validate)

    @classmethod
    def from_function(cls, fn: Callable[..., Any]) -> Tool:
        """A typed function as a tool: its parameters as a pydantic model (the arguments)."""
        name = getattr(fn, "__name__", None) or repr(fn)
        model = signature_model(fn, name)
        doc = (inspect.getdoc(fn) or "").split("\n\n")[0]
        return cls(name, doc, model.model_json_schema(), model.model_validate, fn)

    @classmethod
    def from_dict(cls, tool: dict) -> Tool:
        """An OpenAI-style tool (``{"type": "function", "function": {...}}``, or the inner dict)."""
        inner = tool.get("function", tool) if tool.get("type", "function") == "function" else None
        if not isinstance(inner, dict) or not isinstance(inner.get("name"), str):
            raise ToolError(f"tool {json.dumps(tool)[:80]} has no function name")
        schema = inner.get("parameters", {"type": "object", "properties": {}})
        if not isinstance(schema, dict):
            raise ToolError(f"tool {inner['name']!r}: parameters must be a JSON Schema object")
        return cls(
            inner["name"], str(inner.get("description", "")), schema, _schema_validator(inner["name"], schema)
        )

    def openai(self) -> dict:
        """This tool as an OpenAI tool definition (for chat templates and servers)."""
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.schema},
        }


@dataclass
class ToolCall:
    """A call the model made: the tool's ``name`` and its validated ``arguments`` (the pydantic
    model, the function's arguments model, or a dict for a schema tool).

    >>> ToolCall("add", {"a": 1}).openai()
    {'type': 'function', 'function': {'name': 'add', 'arguments': '{"a": 1}'}}
    """

    name: str
    arguments: Any

    def openai(self) -> dict:
        """The call as an OpenAI ``tool_calls`` entry (the arguments as JSON text)."""
        return {
            "type": "function",
            "function": {"name": self.name, "arguments": json.dumps(to_jsonable(self.arguments))},
        }


@dataclass
class ToolReply:
    """What a tools run returns: the free ``text`` (calls cut out) and the ``calls`` in order.

    >>> ToolReply("Let me check.", [ToolCall("add", {})]).calls[0].name
    'add'
    """

    text: str
    calls: list[ToolCall]


class Tools:
    """The tools a model may call, as an output type (or ``Generator(model, tools=[...])``).

    ``format``: a name in `guide.tool_formats.FORMATS`, a `ToolFormat`, or None for the chat
    template's own (Hermes when it declares none). ``max_calls`` bounds the calls (None: any).

    >>> Tools([], tool_choice="auto")
    Traceback (most recent call last):
    guide.tools.ToolError: Tools needs at least one tool
    """

    def __init__(
        self,
        tools: Sequence[Any],
        format: str | ToolFormat | None = None,
        tool_choice: str | dict = "auto",
        max_calls: int | None = None,
        whitespace: str | int | None = None,
    ):
        self.tools = [as_tool(t) for t in tools]
        if not self.tools:
            raise ToolError("Tools needs at least one tool")
        self.by_name: dict[str, Tool] = {}
        for t in self.tools:
            if not t.name:
                raise ToolError("a tool has an empty name")
            if t.name in self.by_name:
                raise ToolError(f"two tools are named {t.name!r}")
            self.by_name[t.name] = t
        self.choice = _choice(tool_choice, self.by_name)
        if max_calls is not None and (not isinstance(max_calls, int) or max_calls < 1):
            raise ToolError(f"max_calls must be an int >= 1 or None, got {max_calls!r}")
        self.max_calls = max_calls
        self.format = (
            format if format is None or isinstance(format, ToolFormat) else resolve_format(format, None)
        )
        self.bodies = {t.name: _body(t, whitespace) for t in self.tools}  # schema errors name the tool now

    def __repr__(self) -> str:
        return f"Tools([{', '.join(self.by_name)}], tool_choice={self.choice!r})"

    def spec(self, tokenizer: Any = None) -> fsm.Spec:
        """The composed spec for ``tokenizer``'s chat template and special tokens (None: the
        format's texts, no special tokens).

        >>> Tools([{"name": "f", "parameters": {"type": "object"}}], tool_choice="none").spec()
        Text(exclude=('<tool_call>',))
        """
        fmt = self.resolved_format(tokenizer)
        specials = special_tokens(tokenizer)
        free = fsm.Text(exclude=[fmt.trigger_text])
        if self.choice == "none":
            return free
        names = list(self.by_name) if self.choice in CHOICES else [self.choice]
        min_calls = 0 if self.choice == "auto" else 1
        if fmt.per_call:
            tags = [
                fsm.Tag(
                    with_tokens(fmt.begin + fmt.call_prefix(n), specials),
                    self.bodies[n],
                    with_tokens("}" + fmt.end, specials),
                )
                for n in names
            ]
            if min_calls:
                return fsm.Repeat(fsm.Alternatives(*tags), 1, self.max_calls, separator=fmt.separator)
            if all(isinstance(t.begin, fsm.Literal) for t in tags):
                return fsm.Triggered(tags, triggers=[fmt.trigger_text], max_calls=self.max_calls)
            # Triggered takes text begins: a special-token begin is the same language written out.
            return fsm.Sequence(
                free, fsm.Repeat(fsm.Sequence(fsm.Alternatives(*tags), free), 0, self.max_calls)
            )
        calls = [fsm.Tag(fmt.call_prefix(n), self.bodies[n], "}") for n in names]
        block = fsm.Sequence(
            with_tokens(fmt.begin, specials),
            fsm.Repeat(fsm.Alternatives(*calls), 1, self.max_calls, separator=fmt.separator),
            with_tokens(fmt.end, specials),
        )
        return block if min_calls else fsm.Sequence(free, fsm.Repeat(block, 0, 1))

    def resolved_format(self, tokenizer: Any = None) -> ToolFormat:
        """The format calls are written in: the one given, else the tokenizer's chat template's."""
        return resolve_format(self.format, getattr(tokenizer, "chat_template", None))

    def parse(self, text: str, tokenizer: Any = None) -> ToolReply:
        """The free text and the validated calls of an output (special tokens written as text).

        >>> tools = Tools([{"name": "f", "parameters": {"type": "object"}}])
        >>> tools.parse('Sure.<tool_call>\\n{"name": "f", "arguments": {}}\\n</tool_call>').calls
        [ToolCall(name='f', arguments={})]
        """
        fmt = self.resolved_format(tokenizer)
        decoder = json.JSONDecoder()
        texts: list[str] = []
        calls: list[ToolCall] = []
        pos = 0
        while True:
            at = text.find(fmt.trigger_text, pos)
            if at < 0 or not text.startswith(fmt.begin, at):
                texts.append(text[pos:])
                return ToolReply("".join(texts), calls)
            texts.append(text[pos:at])
            pos = at + len(fmt.begin)
            while True:
                obj, pos = decoder.raw_decode(text, pos)
                calls.append(self.call(obj, fmt))
                if fmt.per_call:
                    pos = _expect(text, pos, fmt.end)
                    more = fmt.separator + fmt.begin  # back-to-back calls ("required")
                    if not (
                        text.startswith(more, pos)
                        and text.startswith(fmt.trigger_text, pos + len(fmt.separator))
                    ):
                        break
                    pos += len(more)
                elif text.startswith(fmt.separator, pos):
                    pos += len(fmt.separator)
                else:
                    pos = _expect(text, pos, fmt.end)
                    break

    def call(self, obj: Any, fmt: ToolFormat) -> ToolCall:
        """One decoded call's JSON as a `ToolCall` with validated arguments."""
        name = obj.get("name") if isinstance(obj, dict) else None
        tool = self.by_name.get(name) if isinstance(name, str) else None
        if tool is None:
            raise ToolError(
                f"the call {json.dumps(obj)[:80]} names no tool (known: {', '.join(self.by_name)})"
            )
        return ToolCall(tool.name, tool.validate(obj.get(fmt.arguments_key, {})))

    def execute(self, call: ToolCall) -> Any:
        """Run the function behind ``call`` with its arguments (function tools only).

        >>> Tools([lambda_free_add]).execute(ToolCall("add", args))   # doctest: +SKIP
        3
        """
        tool = self.by_name.get(call.name)
        if tool is None or tool.function is None:
            raise ToolError(f"tool {call.name!r} has no Python function to run")
        args = call.arguments
        fields = getattr(type(args), "model_fields", None)
        kwargs = {k: getattr(args, k) for k in fields} if fields is not None else dict(args)
        return tool.function(**kwargs)

    def output_type(self, source: Any) -> OutputType:
        """The `OutputType` on ``source``'s tokenizer and vocabulary (what `Generator` uses)."""
        tokenizer = getattr(source, "tokenizer", None)
        vocab = source.vocabulary
        spec = self.spec(tokenizer)
        texts = {i: t.encode() for t, i in special_tokens(tokenizer).items()}

        def parse_tokens(ids: Sequence[int]) -> ToolReply:
            data = b"".join(vocab.token_bytes(i) or texts.get(i, b"") for i in ids)
            return self.parse(data.decode("utf-8", errors="replace"), tokenizer)

        return OutputType(
            spec, lambda text: self.parse(text, tokenizer), "tool calls", parse_tokens=parse_tokens
        )


def as_tool(obj: Any) -> Tool:
    """A tool from what a user passes (see the module docstring).

    >>> as_tool(3)
    Traceback (most recent call last):
    guide.tools.ToolError: 3 is not a tool: pass a pydantic model, a typed function, an OpenAI tool dict or a guide.Tool
    """
    if isinstance(obj, Tool):
        return obj
    if isinstance(obj, type) and hasattr(obj, "model_json_schema") and hasattr(obj, "model_validate"):
        return Tool.from_model(obj)
    if isinstance(obj, dict):
        return Tool.from_dict(obj)
    if callable(obj) and not isinstance(obj, type):
        return Tool.from_function(obj)
    raise ToolError(
        f"{obj!r:.60} is not a tool: pass a pydantic model, a typed function, an OpenAI tool dict or a guide.Tool"
    )


def signature_model(fn: Callable[..., Any], name: str) -> type:
    """A pydantic model of ``fn``'s parameters (their annotations and defaults).

    >>> def add(a: int, b: int = 2) -> int: ...
    >>> signature_model(add, "add").model_json_schema()["required"]
    ['a']
    """
    from pydantic import create_model

    target = inspect.unwrap(fn)
    try:
        hints = typing.get_type_hints(target, include_extras=True)
    except Exception as exc:  # deliberately broad: an annotation naming something that does not exist
        raise ToolError(f"tool {name!r}: cannot read its annotations: {exc}") from None
    fields: dict[str, Any] = {}
    for p in inspect.signature(target).parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            raise ToolError(f"tool {name!r}: *{p.name} has no schema; give each parameter by name")
        if p.name not in hints:
            raise ToolError(f"tool {name!r}: parameter {p.name!r} needs a type annotation")
        fields[p.name] = (hints[p.name], ... if p.default is p.empty else p.default)
    return create_model(f"{name}_arguments", **fields)


def special_tokens(tokenizer: Any) -> dict[str, int]:
    """The added (special) tokens of ``tokenizer``, text -> id (none without a tokenizer).

    >>> special_tokens(None)
    {}
    """
    added = getattr(tokenizer, "added_tokens_decoder", None) or {}
    return {str(getattr(t, "content", t)): int(i) for i, t in added.items()}


def with_tokens(text: str, specials: dict[str, int]) -> Any:
    """``text`` as a part in which each special token's text is that token (`fsm.Token`), so
    ``<tool_call>`` of Qwen or ``[TOOL_CALLS]`` of Mistral is generated as its id.

    >>> with_tokens("<a>x", {"<a>": 7})
    Sequence(Token(7), Literal('x'))
    >>> with_tokens("<a>x", {})
    Literal('<a>x')
    """
    inside = sorted((t for t in specials if t and t in text), key=len, reverse=True)
    if not inside:
        return fsm.Literal(text)
    pieces = re.split("(" + "|".join(map(re.escape, inside)) + ")", text)
    return fsm.Sequence(*(fsm.Token(specials[p]) if p in specials else p for p in pieces if p))


def _choice(choice: Any, by_name: dict[str, Tool]) -> str:
    if isinstance(choice, dict):  # OpenAI's {"type": "function", "function": {"name": ...}}
        choice = (choice.get("function") or {}).get("name")
    if choice in CHOICES or choice in by_name:
        return choice
    raise ToolError(
        f"tool_choice {choice!r} is none of {', '.join(CHOICES)} or a tool ({', '.join(by_name)})"
    )


def _body(tool: Tool, whitespace: str | int | None) -> fsm.JsonSchema:
    schema = tool.schema
    if schema.get("type", "object") != "object":
        raise ToolError(
            f"tool {tool.name!r}: its arguments must be a JSON object schema, got type {schema['type']!r}"
        )
    try:
        return fsm.JsonSchema(schema) if whitespace is None else fsm.JsonSchema(schema, whitespace)
    except fsm.SpecError as exc:
        raise ToolError(f"tool {tool.name!r}: {exc}") from None


def _schema_validator(name: str, schema: dict) -> Callable[[Any], Any]:
    """Validation against ``schema``, built on the first call: checking a schema against its
    metaschema takes milliseconds, and of 500 tools a reply calls a few."""
    validators: list[Any] = []

    def validate(value: Any) -> Any:
        if not validators:
            import jsonschema

            cls = jsonschema.validators.validator_for(schema)
            try:
                cls.check_schema(schema)
            except jsonschema.SchemaError as exc:
                raise ToolError(
                    f"tool {name!r}: its parameters are no valid JSON Schema: {exc.message}"
                ) from None
            validators.append(cls(schema))
        validators[0].validate(value)
        return value

    return validate


def _expect(text: str, pos: int, what: str) -> int:
    if not text.startswith(what, pos):
        raise ValueError(f"expected {what!r} at {pos}, found {text[pos : pos + 20]!r}")
    return pos + len(what)


def _base_model() -> type:
    from pydantic import BaseModel

    return BaseModel
