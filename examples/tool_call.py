"""A weather + calculator agent: the model calls tools (guide.Tools), we run them and feed the
results back through the chat template, until it answers in plain text.

Each call's arguments are constrained by the tool's signature and come back as a validated object;
the first turn must call a tool (tool_choice="required"), later turns may (auto), the last may not
(none), so the loop always ends.
"""

from __future__ import annotations

import json
from typing import Literal

import guide

WEATHER = {"paris": (18, "cloudy"), "rome": (24, "sunny"), "oslo": (7, "rain")}


def get_weather(city: str) -> str:
    """The current weather in a city."""
    temp, sky = WEATHER.get(city.strip().lower(), (15, "clear"))
    return f"{city}: {temp} C, {sky}"


def calculate(a: float, op: Literal["+", "-", "*", "/"], b: float) -> float | str:
    """Calculator: add, subtract, multiply or divide two numbers (a op b)."""
    if op == "/" and b == 0:
        return "error: division by zero"
    return {"+": a + b, "-": a - b, "*": a * b, "/": a / b if b else 0.0}[op]


TOOLS = [get_weather, calculate]


def system_prompt(tools: guide.Tools) -> str:
    """SmolLM2's chat template lists no tools: describe them (Hermes style) in the system message."""
    listed = "\n".join(json.dumps(t.openai()["function"]) for t in tools.tools)
    return (
        "You are an assistant with tools. To call a tool, write <tool_call>, a JSON object "
        '{"name": ..., "arguments": ...} and </tool_call>. Tool results come back in "tool" '
        f"messages; then answer the user briefly.\nTools:\n{listed}"
    )


def run_agent(model: guide.Model, question: str, max_turns: int = 3) -> tuple[str, list[dict]]:
    """Answer ``question``, calling tools as the model asks; returns the answer and the messages."""
    gens = {
        choice: guide.Generator(
            model, guide.Tools(TOOLS, tool_choice=choice, max_calls=1), temperature=0, max_new_tokens=60
        )
        for choice in ("required", "auto", "none")
    }
    messages = [
        {"role": "system", "content": system_prompt(gens["auto"].output_type)},
        {"role": "user", "content": question},
    ]
    for turn in range(max_turns):
        choice = "required" if turn == 0 else "auto" if turn < max_turns - 1 else "none"
        gen = gens[choice]
        reply = gen(messages)
        messages.append({"role": "assistant", "content": gen.last.text})
        if not reply.calls:
            return reply.text, messages
        for call in reply.calls:
            result = gen.output_type.execute(call)
            print(f"  call {call.name}({call.arguments!r}) -> {result!r}")
            messages.append({"role": "tool", "content": json.dumps({"name": call.name, "result": result})})
    raise AssertionError("the last turn allows no call, so the loop ends before this")


def main() -> None:
    model = guide.load()
    for question in ["What is the weather in Paris?", "Calculate 12 times 7."]:
        print("user:", question)
        answer, messages = run_agent(model, question)
        calls = [m for m in messages if m["role"] == "tool"]
        assert calls, "the first turn is a tool call"
        assert messages[-1]["role"] == "assistant" and "<tool_call>" not in answer
        print("assistant:", answer.strip())


if __name__ == "__main__":
    main()
