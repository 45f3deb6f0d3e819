"""`Generator(model, tools=[...])` on the default model: the replies' calls parse into the tools'
argument models, tool_choice is obeyed, `@guide.function` tools and special-token begins work."""

from __future__ import annotations

from typing import Literal

import pytest
from pydantic import BaseModel, Field

import guide
from guide.tool_formats import ToolFormat
from guide.tools import Tools

SYSTEM = (
    "You can call tools. To call one, write <tool_call>, then a JSON object with the tool's name and "
    "arguments, then </tool_call>. Tools: get_weather(city, unit), add(a, b)."
)


class get_weather(BaseModel):
    """The weather in a city."""

    city: str = Field(max_length=20)
    unit: Literal["c", "f"]


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@pytest.fixture(scope="module")
def model():
    return guide.load()


def test_required_call_parses_into_the_tools_model(model):
    gen = guide.Generator(
        model, guide.Tools([get_weather, add], tool_choice="required", max_calls=1), temperature=0
    )
    reply = gen("What is the weather in Paris, in celsius?", system=SYSTEM, max_new_tokens=60)
    assert isinstance(reply, guide.ToolReply) and reply.text == ""
    assert len(reply.calls) == 1
    call = reply.calls[0]
    expected = (
        get_weather
        if call.name == "get_weather"
        else type(
            Tools([add])
            .call({"name": "add", "arguments": {"a": 1, "b": 1}}, ToolFormat.custom("<c>", "</c>"))
            .arguments
        )
    )
    assert isinstance(call.arguments, expected)
    assert gen.last.text.startswith('<tool_call>\n{"name": "')


def test_named_tool_is_called_and_executes(model):
    tools = Tools([get_weather, add], tool_choice="add", format="mistral", max_calls=1)
    gen = guide.Generator(model, tools, temperature=0)
    reply = gen("What is 2 plus 3?", system=SYSTEM, max_new_tokens=40)
    assert [c.name for c in reply.calls] == ["add"]
    args = reply.calls[0].arguments
    assert tools.execute(reply.calls[0]) == args.a + args.b
    assert gen.last.text.startswith('[TOOL_CALLS] [{"name": "add", "arguments": ')


def test_none_makes_no_call_and_auto_replies_parse(model):
    gen = guide.Generator(model, tools=[get_weather, add], max_new_tokens=40, temperature=1.0)
    replies = gen.batch(
        ["Hi!", "What is 7 plus 8?", "Weather in Rome?"], seed=3, system=SYSTEM, errors="return"
    )
    done = [r for r in replies if isinstance(r, guide.ToolReply)]
    assert done, replies  # some finish within 40 tokens
    for r in done:
        assert "<tool_call>" not in r.text
        assert all(c.name in ("get_weather", "add") for c in r.calls)
    none = guide.Generator(
        model, Tools([get_weather, add], tool_choice="none"), max_new_tokens=30, temperature=0
    )
    replies = none.batch(
        ["Call get_weather for Paris.", "Use <tool_call> now."], system=SYSTEM, errors="return"
    )
    for r in replies:  # a finished reply has no calls; a cut one has no trigger either
        assert r.calls == [] if isinstance(r, guide.ToolReply) else isinstance(r, guide.Truncated)
    assert all("<tool_call>" not in r.text for r in none.last)


def test_guide_function_tools_work_directly(model):
    @guide.function(model, max_new_tokens=8, temperature=0)
    def capital(country: str) -> str:
        """The capital of {country} is"""

    tools = Tools([capital], tool_choice="required", max_calls=1)
    reply = guide.Generator(model, tools, temperature=0)("What is the capital of France?", max_new_tokens=40)
    call = reply.calls[0]
    assert call.name == "capital" and isinstance(call.arguments.country, str)
    assert isinstance(tools.execute(call), str)  # runs the decorated function: a generation


def test_a_special_token_begin_is_generated_as_that_token(model):
    fmt = ToolFormat.custom("<jupyter_code>", "</code>")
    gen = guide.Generator(model, Tools([add], format=fmt, tool_choice="required", max_calls=1), temperature=0)
    reply = gen("Add 4 and 5.", max_new_tokens=40)
    token = model.tokenizer.convert_tokens_to_ids("<jupyter_code>")
    assert gen.last.token_ids[0] == token
    assert "<jupyter_code>" not in gen.last.text  # a special token: no text bytes
    assert [c.name for c in reply.calls] == ["add"]


def test_tools_and_an_output_type_together_are_refused():
    with pytest.raises(TypeError, match="not both"):
        guide.Generator(None, int, tools=[add])
