"""Constrained requests to a vLLM OpenAI-compatible server, answered as validated values.

The server runs ``vllm serve <model> --logits-processors guide.vllm:LogitsProcessor``; these helpers
send the constraint as ``vllm_xargs`` and parse the reply with the same `guide.output_type` parser the
local `guide.Generator` uses, so a pydantic model comes back as an instance (a `guide.Tools` as a
`guide.ToolReply` of validated calls), and a reply cut by ``max_tokens`` raises `guide.Truncated`
instead of returning a broken object.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..output_types import output_type
from ..results import Truncated
from ..tools import Tools
from .arguments import request_args


def chat(
    client: Any,
    model: str,
    messages: str | Sequence[dict],
    tp: Any,
    *,
    whitespace: str | int | None = None,
    exact: bool = False,
    **create: Any,
) -> Any:
    """Ask ``client`` (an ``openai.OpenAI``) for a chat reply that follows ``tp``; return the value.

    ``messages`` is the OpenAI list or one user message; ``create`` goes to
    ``client.chat.completions.create`` (``max_tokens``, ``temperature``…).

    >>> person = chat(openai.OpenAI(base_url=url), "smollm2", "Ada, 36", Person)   # doctest: +SKIP
    """
    msgs = [{"role": "user", "content": messages}] if isinstance(messages, str) else list(messages)
    reply = client.chat.completions.create(
        model=model, messages=msgs, extra_body=_body(tp, whitespace, exact, create), **create
    )
    choice = reply.choices[0]
    return _value(tp, whitespace, exact, choice.message.content or "", choice.finish_reason, create)


def complete(
    client: Any,
    model: str,
    prompt: str,
    tp: Any,
    *,
    whitespace: str | int | None = None,
    exact: bool = False,
    **create: Any,
) -> Any:
    """Like `chat`, through the completions endpoint (the prompt sent as is, no chat template).

    >>> complete(openai.OpenAI(base_url=url), "smollm2", "Answer: ", int)   # doctest: +SKIP
    """
    reply = client.completions.create(
        model=model, prompt=prompt, extra_body=_body(tp, whitespace, exact, create), **create
    )
    choice = reply.choices[0]
    return _value(tp, whitespace, exact, choice.text or "", choice.finish_reason, create)


def _body(tp: Any, whitespace: str | int | None, exact: bool, create: dict) -> dict:
    body = dict(create.pop("extra_body", None) or {})
    body["vllm_xargs"] = {**body.get("vllm_xargs", {}), **request_args(tp, whitespace, exact=exact)}
    if isinstance(tp, Tools):  # a call's begin may be a special token: keep it in the reply's text
        body.setdefault("skip_special_tokens", False)
    return body


def _value(tp: Any, whitespace: str | int | None, exact: bool, text: str, finish: str, create: dict) -> Any:
    if finish == "length":
        raise Truncated(text, "length", [], create.get("max_tokens"))
    if isinstance(tp, Tools):  # a guide.ToolReply: the free text and the validated calls
        return tp.parse(text)
    return output_type(tp, whitespace, exact=exact).parse(text)
