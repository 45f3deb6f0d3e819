"""``guide_tools`` request arguments, without vLLM: tools round-trip to the same composed spec, and
bad tool arguments are refused naming the argument or the tool."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel, Field

import fsm
import guide
from fsm.compose import ComposedIndex
from guide.tool_formats import ToolFormat
from guide.vllm import RequestArgumentError, request_args, spec_from_args
from guide.vllm.arguments import tools_from_args


class get_weather(BaseModel):
    city: str = Field(max_length=20)


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"tool_choice": "required", "max_calls": 2},
        {"tool_choice": "add", "format": "mistral"},
        {"tool_choice": "none", "format": "llama3_json"},
        {"format": ToolFormat.custom("<call>", "</call>"), "max_calls": 1},
    ],
)
def test_tools_round_trip_to_the_same_spec(options, tokenizer):
    tools = guide.Tools([get_weather, add], **options)
    args = request_args(tools)
    json.dumps(args)  # flat and JSON-able: what vllm_xargs carries
    assert all(isinstance(v, (str, int)) for v in args.values())
    assert spec_from_args(args).fingerprint == tools.spec().fingerprint
    assert spec_from_args(args, tokenizer).fingerprint == tools.spec(tokenizer).fingerprint
    again = tools_from_args(args)
    assert list(again.by_name) == ["get_weather", "add"] and again.choice == tools.choice
    if "format" not in options:  # Hermes
        reply = again.parse('hi<tool_call>\n{"name": "add", "arguments": {"a": 1, "b": 2}}\n</tool_call>')
        assert reply.calls[0].arguments == {"a": 1, "b": 2}  # a dict: the server's tools are schemas


def test_the_spec_is_composed_and_lazy(vocab):
    args = request_args(guide.Tools([get_weather, add]))
    index = fsm.compile(spec_from_args(args), vocab)
    assert isinstance(index, ComposedIndex) and index.compiled_parts == 0


@pytest.mark.parametrize(
    "args, message",
    [
        ({"guide_tools": "[{"}, "guide_tools is not JSON"),
        ({"guide_tools": '{"name": "f"}'}, "must be a JSON list"),
        ({"guide_tools": '[{"name": "f", "parameters": {"type": "string"}}]'}, "tool 'f'"),
        ({"guide_tools": '[{"name": "f"}]', "guide_tool_choice": "g"}, "tool_choice 'g'"),
        ({"guide_tools": '[{"name": "f"}]', "guide_max_calls": 1.5}, "guide_max_calls"),
        ({"guide_tools": '[{"name": "f"}]', "guide_tool_format": "xml"}, "unknown tool format 'xml'"),
        ({"guide_regex": "a", "guide_tool_choice": "auto"}, "guide_tool_choice goes with guide_tools"),
    ],
)
def test_bad_tool_arguments_are_refused(args, message):
    with pytest.raises(fsm.SpecError, match=message):
        spec_from_args(args)


def test_a_format_without_request_form_is_refused():
    with pytest.raises(RequestArgumentError, match="no request form"):
        request_args(guide.Tools([add], format=ToolFormat.llama3(python_tag=True)))
