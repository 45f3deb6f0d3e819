"""examples/tool_call.py's agent loop on the default model: the calls parse into the tools'
argument models, their results go back through the chat template, and the loop ends."""

from __future__ import annotations

import json
import runpy
from pathlib import Path

import pytest
from pydantic import BaseModel

import guide
from guide.prompts import format_prompt

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "tool_call.py"


@pytest.fixture(scope="module")
def agent():
    return runpy.run_path(str(EXAMPLE))  # not __main__: defines run_agent and the tools only


@pytest.fixture(scope="module")
def model():
    return guide.load()


@pytest.mark.parametrize("question", ["What is the weather in Rome?", "Calculate 3 plus 4."])
def test_the_agent_calls_tools_feeds_results_back_and_ends(agent, model, question):
    answer, messages = agent["run_agent"](model, question, max_turns=3)
    tools = guide.Tools(agent["TOOLS"])
    assert [m["role"] for m in messages[:2]] == ["system", "user"]
    assert messages[-1]["role"] == "assistant" and tools.parse(messages[-1]["content"]).calls == []
    assert messages[-1]["content"] == answer and len(messages) <= 2 + 2 * 3
    fed_back = 0
    for i, m in enumerate(messages[2:-1], start=2):
        if m["role"] != "assistant":
            continue
        calls = tools.parse(m["content"]).calls
        assert len(calls) == 1  # max_calls=1 per turn; only the last turn has none
        call = calls[0]
        assert (
            isinstance(call.arguments, BaseModel)
            and type(call.arguments).__name__ == f"{call.name}_arguments"
        )
        result = json.loads(messages[i + 1]["content"])
        assert messages[i + 1]["role"] == "tool" and result == {
            "name": call.name,
            "result": tools.execute(call),
        }
        fed_back += 1
    assert fed_back >= 1  # the first turn is a required call
    prompt = format_prompt(model, messages)  # what the next turn would see: results included
    assert prompt.count("<|im_start|>tool\n") == fed_back
