"""How a chat template writes tool calls: `ToolFormat`, the common ones, and `detect_format`.

A call is always the JSON object ``{"name": <tool>, "<arguments_key>": <arguments>}``; a format
says what wraps it:

| format | a model's calls | templates |
|---|---|---|
| ``hermes`` | ``<tool_call>\\n{"name": ..., "arguments": ...}\\n</tool_call>`` per call | Qwen 2.5/3, Hermes 2/3, ChatML models |
| ``llama3_json`` | ``{"name": ..., "parameters": ...}`` (``<\\|python_tag\\|>`` first with ``python_tag=True``) | Llama 3.1-3.3 JSON tool calling |
| ``mistral`` | ``[TOOL_CALLS] [{"name": ..., "arguments": ...}, ...]`` one list | Mistral v0.3, Mixtral |
| `ToolFormat.custom` | ``begin`` + call + ``end`` per call | anything else |

The ``trigger`` is where free text hands over to a call (``<tool_call>``, ``[TOOL_CALLS]``,
``{"name": ``): free text never contains it. Where the trigger is one special token of the
tokenizer it is generated as that token (`fsm.Token`), never spelled in text bytes.

>>> detect_format("...{{- '<tool_call>\\\\n{\\"name\\": \\"' }}...").name
'hermes'
>>> detect_format("{% for m in messages %}{{ m.content }}{% endfor %}") is None
True
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from .output_types import OutputTypeError


@dataclass(frozen=True)
class ToolFormat:
    """What wraps each tool call (``per_call``) or the list of calls, and where calls start.

    ``begin``/``end`` surround each call (``per_call=True``) or the whole list of calls, which
    ``separator`` joins; ``trigger`` is the start of ``begin`` that free text hands over at (the
    whole ``begin`` when empty); ``arguments_key`` names the arguments in the call's JSON.

    >>> HERMES.call_prefix("get_weather")
    '{"name": "get_weather", "arguments": '
    """

    name: str
    begin: str
    end: str
    arguments_key: str = "arguments"
    separator: str = "\n"
    per_call: bool = True
    trigger: str = ""

    def __post_init__(self):
        trigger = self.trigger or self.begin
        if not trigger:
            raise OutputTypeError(f"tool format {self.name!r}: calls need a begin or a trigger to start at")
        if self.trigger and not (self.begin + '{"name": ').startswith(self.trigger):
            raise OutputTypeError(
                f"tool format {self.name!r}: the trigger {self.trigger!r} does not start the call "
                f"{self.begin + '{'!r}"
            )
        if not self.arguments_key:
            raise OutputTypeError(f"tool format {self.name!r}: arguments_key is empty")

    @property
    def trigger_text(self) -> str:
        """The text free text hands over at."""
        return self.trigger or self.begin

    def call_prefix(self, tool: str) -> str:
        """The call's JSON up to its arguments."""
        return f"{{{json.dumps('name')}: {json.dumps(tool)}, {json.dumps(self.arguments_key)}: "

    @classmethod
    def custom(
        cls, begin: str, end: str, arguments_key: str = "arguments", separator: str = "\n"
    ) -> ToolFormat:
        """Each call as ``begin`` + ``{"name": ..., "<arguments_key>": ...}`` + ``end``.

        >>> ToolFormat.custom("<call>", "</call>").trigger_text
        '<call>'
        """
        return cls("custom", begin, end, arguments_key, separator)

    @classmethod
    def llama3(cls, python_tag: bool = False) -> ToolFormat:
        """Llama 3 JSON calls, ``<|python_tag|>`` first when ``python_tag``.

        >>> ToolFormat.llama3(python_tag=True).trigger_text
        '<|python_tag|>'
        """
        if python_tag:
            return cls("llama3_json", "<|python_tag|>", "", "parameters", "; ")
        return cls("llama3_json", "", "", "parameters", "; ", trigger='{"name": ')


HERMES = ToolFormat("hermes", "<tool_call>\n", "\n</tool_call>", trigger="<tool_call>")
LLAMA3_JSON = ToolFormat.llama3()
MISTRAL = ToolFormat("mistral", "[TOOL_CALLS] [", "]", separator=", ", per_call=False, trigger="[TOOL_CALLS]")
FORMATS = {"hermes": HERMES, "llama3_json": LLAMA3_JSON, "mistral": MISTRAL}


def detect_format(chat_template: str | None) -> ToolFormat | None:
    """The tool format a chat template writes calls in, or None when it declares none.

    Read from the template's text: ``<tool_call>`` means Hermes; ``[TOOL_CALLS]`` Mistral (with the
    list right after the token or after a space, as the template writes it); ``<|python_tag|>``, or
    a ``"parameters"`` call in a template with ``<|eot_id|>``, Llama 3 JSON.

    >>> detect_format('{{- "[TOOL_CALLS][" }}').begin
    '[TOOL_CALLS]['
    """
    text = chat_template or ""
    if "<tool_call>" in text:
        return HERMES
    if "[TOOL_CALLS]" in text:
        if "[TOOL_CALLS] [" in text:
            return MISTRAL
        return ToolFormat(
            "mistral", "[TOOL_CALLS][", "]", separator=", ", per_call=False, trigger="[TOOL_CALLS]"
        )
    if "<|eot_id|>" in text and ('"parameters"' in text or "<|python_tag|>" in text):
        return LLAMA3_JSON
    return None


def resolve_format(fmt: str | ToolFormat | None, chat_template: str | None) -> ToolFormat:
    """``fmt`` as a `ToolFormat`: a name of `FORMATS`, a format, or None for the chat template's
    own (`detect_format`), Hermes when it declares none.

    >>> resolve_format(None, None).name
    'hermes'
    >>> resolve_format("chatml", None)
    Traceback (most recent call last):
    guide.output_types.OutputTypeError: unknown tool format 'chatml' (known: hermes, llama3_json, mistral, or a guide.ToolFormat)
    """
    if isinstance(fmt, ToolFormat):
        return fmt
    if fmt is None:
        return detect_format(chat_template) or HERMES
    if isinstance(fmt, str) and fmt in FORMATS:
        return FORMATS[fmt]
    raise OutputTypeError(f"unknown tool format {fmt!r} (known: {', '.join(FORMATS)}, or a guide.ToolFormat)")
