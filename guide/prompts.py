"""The prompt as the model sees it: `format_prompt` puts text or chat messages through the chat
template (with the tools, where the template lists them); token ids pass as they are.

>>> format_prompt(model, "Hi")              # doctest: +SKIP
'<|im_start|>system\\n...<|im_end|>\\n<|im_start|>user\\nHi<|im_end|>\\n<|im_start|>assistant\\n'
"""

from __future__ import annotations

from collections.abc import Sequence

from .sources import LogitsSource

# A prompt: text, a list of chat messages, or token ids.
Prompt = str | Sequence[dict[str, str]] | Sequence[int]


def format_prompt(
    source: LogitsSource,
    prompt: Prompt,
    raw: bool = False,
    system: str | None = None,
    tools: list[dict] | None = None,
) -> str | list[int]:
    """The prompt as the model sees it: plain text goes through the chat template (when the tokenizer has
    one and ``raw`` is false); a list of ``{"role", "content"}`` messages always does; token ids pass as is.
    ``tools`` (OpenAI tool definitions) go to the template, which lists them if it knows how.

    >>> format_prompt(model, "Hi")              # doctest: +SKIP
    '<|im_start|>system\\n...<|im_end|>\\n<|im_start|>user\\nHi<|im_end|>\\n<|im_start|>assistant\\n'
    """
    if isinstance(prompt, str):
        if raw or not _has_chat_template(source):
            return prompt
        messages = [{"role": "user", "content": prompt}]
    elif isinstance(prompt, (list, tuple)) and prompt and all(isinstance(t, int) for t in prompt):
        return list(prompt)
    elif isinstance(prompt, (list, tuple)) and prompt and all(isinstance(m, dict) for m in prompt):
        if raw:
            raise ValueError("raw=True needs a plain-text prompt, not a list of chat messages")
        if not _has_chat_template(source):
            raise ValueError("chat messages were given but the model's tokenizer has no chat template")
        messages = list(prompt)
    else:
        raise TypeError(
            f"a prompt must be a string, a list of chat messages or a list of token ids, got {type(prompt).__name__}"
        )
    if system is not None and messages[0].get("role") != "system":
        messages = [{"role": "system", "content": system}, *messages]
    extra = {"tools": tools} if tools else {}
    return source.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True, **extra)


def _has_chat_template(source: LogitsSource) -> bool:
    return bool(getattr(getattr(source, "tokenizer", None), "chat_template", None))
