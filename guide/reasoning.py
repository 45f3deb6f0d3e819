"""Reasoning, then structure: the model thinks in free text between an open and a close tag (at
most ``max_tokens`` tokens), then writes the constrained output; the thinking comes back beside
the value as a `Reasoned`.

The thinking is its own run: the prompt plus the open tag, free text stopped at the close tag or
after ``max_tokens`` tokens (then the tag is closed for the model: a budget, as in "budget
forcing"), and the constrained run continues from the prompt, the thinking and the close tag. The
bound is thus an exact token count, and any output type follows (tools included).

>>> gen = guide.Generator(model, Person, reasoning=("<think>", "</think>"), max_reasoning_tokens=64)  # doctest: +SKIP
>>> out = gen("Ada Lovelace was 36.")                                                              # doctest: +SKIP
>>> out.thinking, out.value                                                                        # doctest: +SKIP
('The name is Ada Lovelace and the age 36.', Person(name='Ada Lovelace', age=36))
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .generate import generate
from .sources import LogitsSource

DEFAULT_MAX_REASONING_TOKENS = 256
# Options of the constrained run that do not apply to free thinking (it has its own budget and stop).
_NOT_FOR_THINKING = frozenset(
    {"max_new_tokens", "stop", "jump_forward", "num_beams", "length_penalty", "early_stopping"}
    | {"num_return_sequences", "draft", "num_draft_tokens"}
)


@dataclass(frozen=True)
class Reasoning:
    """The thinking's ``open`` and ``close`` tags and its token budget ``max_tokens``.

    >>> Reasoning("<think>", "</think>", 0)
    Traceback (most recent call last):
    ValueError: max_reasoning_tokens must be an int >= 1, got 0
    """

    open: str
    close: str
    max_tokens: int = DEFAULT_MAX_REASONING_TOKENS

    def __post_init__(self):
        if not isinstance(self.open, str) or not isinstance(self.close, str) or not self.close:
            raise ValueError(f"reasoning needs (open, close) tag strings, the close one non-empty: {self}")
        if isinstance(self.max_tokens, bool) or not isinstance(self.max_tokens, int) or self.max_tokens < 1:
            raise ValueError(f"max_reasoning_tokens must be an int >= 1, got {self.max_tokens!r}")

    def think(
        self, source: LogitsSource, prompts: Sequence[str | list[int]], options: dict[str, Any]
    ) -> list[Thought]:
        """One thinking run per prompt (batched); each `Thought` holds the prompt to continue from.

        ``options`` are the constrained run's loop options; the sampling ones apply to thinking too.
        """
        opened = [_join(source, p, self.open) for p in prompts]
        sampling = {k: v for k, v in options.items() if k not in _NOT_FOR_THINKING}
        done = generate(source, opened, None, max_new_tokens=self.max_tokens, stop=[self.close], **sampling)
        return [
            Thought(c.text, _join(source, p, c.text + self.close), len(c.token_ids), c.finish_reason)
            for p, c in zip(opened, done, strict=True)
        ]


@dataclass(frozen=True)
class Thought:
    """One thinking run: its ``text``, the ``prompt`` the output continues from (open tag, thinking
    and close tag appended), its ``tokens`` and how it ended (``"stop"``: the model closed it,
    ``"length"``: the budget did)."""

    text: str
    prompt: str | list[int]
    tokens: int
    finish_reason: str


@dataclass
class Reasoned:
    """A value and the ``thinking`` that preceded it (``thinking_tokens`` long; ``closed_by``
    ``"model"`` when the model closed it, ``"budget"`` when max_reasoning_tokens did, ``"eos"``).

    >>> Reasoned("2 and 2 make 4.", 4).value
    4
    """

    thinking: str
    value: Any
    thinking_tokens: int = 0
    closed_by: str = "model"


def as_reasoning(reasoning: Any, max_tokens: int | None) -> Reasoning | None:
    """``reasoning`` (an ``(open, close)`` pair, a `Reasoning` or None) with ``max_tokens`` applied.

    >>> as_reasoning(("<think>", "</think>"), 32)
    Reasoning(open='<think>', close='</think>', max_tokens=32)
    >>> as_reasoning(None, None) is None
    True
    """
    if reasoning is None:
        if max_tokens is not None:
            raise ValueError("max_reasoning_tokens needs reasoning=(open_tag, close_tag)")
        return None
    if isinstance(reasoning, Reasoning):
        return reasoning if max_tokens is None else Reasoning(reasoning.open, reasoning.close, max_tokens)
    if not (isinstance(reasoning, (tuple, list)) and len(reasoning) == 2):
        raise ValueError(f"reasoning must be an (open_tag, close_tag) pair, got {reasoning!r}")
    return Reasoning(*reasoning, DEFAULT_MAX_REASONING_TOKENS if max_tokens is None else max_tokens)


def _join(source: LogitsSource, prompt: str | list[int], text: str) -> str | list[int]:
    if isinstance(prompt, str):
        return prompt + text
    return list(prompt) + list(source.tokenizer.encode(text, add_special_tokens=False))
