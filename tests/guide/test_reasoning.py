"""Reasoning then structure on the default model: the thinking is free text bounded by an exact
token count, closed, and followed by the constrained output; tools combine with it."""

from __future__ import annotations

from typing import Literal

import pytest
from pydantic import BaseModel, Field

import guide
from guide.reasoning import Reasoning, as_reasoning

TAGS = ("<think>", "</think>")


class Person(BaseModel):
    name: str = Field(max_length=20)
    age: int = Field(ge=0, le=120)


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@pytest.fixture(scope="module")
def model():
    return guide.load()


def test_thinking_then_a_valid_value(model):
    gen = guide.Generator(model, Person, reasoning=TAGS, max_reasoning_tokens=24, temperature=0)
    out = gen("Ada Lovelace is 36 years old. Think, then give her as JSON.", max_new_tokens=40)
    assert isinstance(out, guide.Reasoned) and isinstance(out.value, Person)
    assert 1 <= out.thinking_tokens <= 24
    assert out.closed_by in ("model", "budget", "eos")
    # the constrained run continued from the prompt, the thinking and the close tag
    assert gen.last.prompt.endswith("<think>" + out.thinking + "</think>")
    assert "</think>" not in out.thinking


def test_the_budget_closes_the_thinking(model):
    gen = guide.Generator(model, Literal["yes", "no"], reasoning=TAGS, max_reasoning_tokens=3, temperature=0)
    outs = gen.batch(["Is 6 times 7 equal to 42? Explain at length.", "Is Paris in Spain?"], max_new_tokens=4)
    assert all(o.value in ("yes", "no") for o in outs)
    assert [o.thinking_tokens for o in outs] == [3, 3]
    assert all(o.closed_by == "budget" for o in outs)


def test_token_id_prompts_think_too(model):
    ids = model.tokenizer.encode("Two plus two is", add_special_tokens=False)
    gen = guide.Generator(
        model, Literal["4", "5"], reasoning=Reasoning("<think>", "</think>", 4), temperature=0
    )
    out = gen(ids, max_new_tokens=4)
    assert out.value in ("4", "5") and out.thinking_tokens <= 4
    assert gen.last.prompt[: len(ids)] == ids


def test_reasoning_and_tools_combine(model):
    tools = guide.Tools([add], tool_choice="required", max_calls=1)
    gen = guide.Generator(model, tools, reasoning=TAGS, max_reasoning_tokens=16, temperature=0)
    out = gen("What is 2 plus 3? Use the add tool.", max_new_tokens=40)
    assert isinstance(out.value, guide.ToolReply)
    call = out.value.calls[0]
    assert call.name == "add" and tools.execute(call) == call.arguments.a + call.arguments.b


def test_bad_reasoning_arguments_and_unsupported_modes(model):
    with pytest.raises(ValueError, match="max_reasoning_tokens must be an int >= 1"):
        as_reasoning(TAGS, 0)
    with pytest.raises(ValueError, match="needs reasoning"):
        guide.Generator(model, int, max_reasoning_tokens=5)
    with pytest.raises(ValueError, match="pair"):
        guide.Generator(model, int, reasoning="<think>")
    gen = guide.Generator(model, int, reasoning=TAGS)
    with pytest.raises(ValueError, match="does not think first"):
        list(gen.stream("1 + 1 ="))
