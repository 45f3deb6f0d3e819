"""What a `Generator` run returns and raises: `Result`, and the errors for outputs that are not a valid value.

A constrained run ends in one of three ways: the output satisfies the constraint and parses into a
value (`Result.value`); the token budget ran out first (`Truncated`, carrying the partial text); or the
text satisfied the automaton but the final validation refused it (`InvalidOutput`, e.g. a pydantic
validator the schema cannot express). Invalid output is never returned as if it were a value.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


class GenerationError(RuntimeError):
    """A run produced no valid value; ``text``, ``finish_reason`` and ``token_ids`` say what it produced.

    >>> isinstance(Truncated("partial", "length", [1], 1), GenerationError)
    True
    """

    def __init__(self, text: str, finish_reason: str, token_ids: list[int], message: str):
        super().__init__(message)
        self.text = text
        self.finish_reason = finish_reason
        self.token_ids = list(token_ids)


class Truncated(GenerationError):
    """The run hit ``max_new_tokens`` (or a stop string) before the output satisfied the constraint.

    >>> e = Truncated('{"name": "Ad', "length", [1, 2, 3], 3)
    >>> e.text, e.max_new_tokens
    ('{"name": "Ad', 3)
    """

    def __init__(
        self,
        text: str,
        finish_reason: str,
        token_ids: list[int],
        max_new_tokens: int | None,
        what: str = "the output",
    ):
        self.max_new_tokens = max_new_tokens
        if finish_reason == "stop":
            why = "a stop string ended the run"
            fix = "remove the stop string or choose one the output cannot contain"
        else:
            why = f"the run hit max_new_tokens={max_new_tokens}"
            fix = "raise max_new_tokens"
        super().__init__(
            text,
            finish_reason,
            token_ids,
            f"{why} before {what} was complete ({len(token_ids)} tokens, partial text {_clip(text)}); {fix}",
        )


class InvalidOutput(GenerationError):
    """The text matched the constraint's automaton but failed the final parse or validation.

    ``cause`` is the underlying exception (a pydantic ``ValidationError``, a ``jsonschema`` error…).

    >>> InvalidOutput("x", "eos", [], "int", ValueError("bad")).cause
    ValueError('bad')
    """

    def __init__(self, text: str, finish_reason: str, token_ids: list[int], what: str, cause: BaseException):
        self.cause = cause
        super().__init__(
            text,
            finish_reason,
            token_ids,
            f"the generated text {_clip(text)} is not a valid {what}: {cause}",
        )


@dataclass
class Result:
    """One run in full: the parsed ``value`` (None when ``error`` is set), the raw ``text``, ``finish_reason``
    ("eos", "constraint", "stop" or "length"), the generated ``token_ids`` and the ``prompt`` as sent.

    >>> r = Result(36, "36", "eos", [2, 3], "Age: ")
    >>> r.ok, r.value
    (True, 36)
    """

    value: Any
    text: str
    finish_reason: str
    token_ids: list[int] = field(default_factory=list)
    prompt: str | list[int] | None = None
    error: GenerationError | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


def _clip(text: str, limit: int = 80) -> str:
    return repr(text if len(text) <= limit else text[: limit - 3] + "...")
