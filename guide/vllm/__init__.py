"""The library inside vLLM: per-request regex, JSON Schema, grammar and choice constraints.

- `LogitsProcessor` (needs vLLM, the ``vllm`` extra): register it with the engine
  (``LLM(..., logits_processors=[guide.vllm.LogitsProcessor])`` or
  ``vllm serve <model> --logits-processors guide.vllm:LogitsProcessor``).
- `request_args` / `spec_from_args`: a constraint as the flat ``guide_*`` arguments a request carries
  (``SamplingParams(extra_args=...)``, or ``extra_body={"vllm_xargs": ...}`` over the OpenAI API).
- `chat` / `complete`: an OpenAI client call that sends the constraint and returns the validated value.

Only `LogitsProcessor` imports vLLM, on first access: clients need neither vLLM nor a GPU.
See docs/serving.md.
"""

from __future__ import annotations

from typing import Any

from .arguments import RequestArgumentError, request_args, spec_from_args
from .client import chat, complete

__all__ = ["LogitsProcessor", "RequestArgumentError", "chat", "complete", "request_args", "spec_from_args"]


def __getattr__(name: str) -> Any:
    if name == "LogitsProcessor":
        # vLLM (and its start-up cost) only for the server side, which names the class.
        from .processor import LogitsProcessor

        return LogitsProcessor
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
