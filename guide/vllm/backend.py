"""The library as one of vLLM's structured-output backends: ``structured_outputs_config={"backend": "guide"}``.

vLLM's own path for ``response_format`` / ``structured_outputs`` requests (json, json_object, regex,
choice, grammar): the engine's scheduler asks the backend for each request's grammar (compiled on
vLLM's worker threads), feeds it the sampled tokens (`GuideGrammar.accept_tokens`), checks draft
tokens of speculative decoding (`validate_tokens`, `rollback`) and has it write the request's packed
bitmask row (`fill_bitmask`), which vLLM computes while the model runs the previous step and applies
in the model runner — V1 and V2 runners alike. Our packed rows have vLLM's (xgrammar's) layout:
ceil(V/32) int32 words, bit ``i % 32`` of word ``i // 32`` set = token ``i`` allowed.

vLLM 0.32 picks backends from a fixed list; `guide.vllm.plugin` adds this one (see there).
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any, ClassVar

import torch
from vllm.v1.structured_output.backend_types import (
    StructuredOutputBackend,
    StructuredOutputGrammar,
    StructuredOutputOptions,
)

import fsm

from .arguments import spec_from_args
from .processor import byte_vocabulary, eos_ids

log = logging.getLogger(__name__)

# vLLM's request fields, as the guide_* argument that holds the same thing (one translation, one
# set of error messages: `guide.vllm.arguments`).
_ARGUMENT = {
    StructuredOutputOptions.JSON: "guide_json_schema",
    StructuredOutputOptions.REGEX: "guide_regex",
    StructuredOutputOptions.CHOICE: "guide_choice",
    StructuredOutputOptions.GRAMMAR: "guide_grammar",
}


class UnsupportedRequestError(fsm.SpecError):
    """A structured-output request of a kind the ``guide`` backend does not serve (structural tags)."""


def spec_of(kind: StructuredOutputOptions, text: str) -> fsm.Spec:
    """The `fsm` spec of a vLLM structured-output request (its ``structured_output_key``).

    A grammar is Lark text or a built-in grammar's name (``"json"``, ``"sql"``); a choice is its
    JSON list, as vLLM carries it.

    >>> spec_of(StructuredOutputOptions.REGEX, r"\\d+").pattern
    '\\\\d+'
    >>> spec_of(StructuredOutputOptions.CHOICE, '["yes", "no"]').options
    ('yes', 'no')
    """
    if kind == StructuredOutputOptions.JSON_OBJECT:
        return fsm.JsonSchema({"type": "object"})
    if kind not in _ARGUMENT:
        raise UnsupportedRequestError(
            f"{kind.name.lower()} requests are not supported by the 'guide' backend "
            "(it serves json, json_object, regex, choice and Lark grammars)"
        )
    key = _ARGUMENT[kind]
    value: Any = text
    if kind == StructuredOutputOptions.CHOICE:
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            value = None  # refused by spec_from_args with the argument's own message
    spec = spec_from_args({key: value})
    assert spec is not None  # one guide_* key was given
    return spec


def check(kind: StructuredOutputOptions, text: str, limits: fsm.Limits) -> None:
    """Refuse a request the engine could not serve: `fsm.SpecError` naming the problem.

    Compiles over a 257-token byte vocabulary (the language, not the model's tokens) under
    ``limits``, so parse errors, unsupported keywords and budget overruns stop at admission.

    >>> check(StructuredOutputOptions.REGEX, "(ab", fsm.Limits())
    Traceback (most recent call last):
    ...
    fsm.errors.RegexError: invalid regex '(ab': missing ), unterminated subpattern at position 0
    """
    fsm.compile(spec_of(kind, text), byte_vocabulary(), limits=limits)


@dataclass
class GuideBackend(StructuredOutputBackend):
    """The engine-wide part: the model's vocabulary and the compile budget.

    vLLM builds it (``GuideBackend(vllm_config, tokenizer=..., vocab_size=...)``) when the first
    structured request of an engine arrives, and calls `compile_grammar` on its worker threads;
    indexes are shared across requests through `fsm.compile`'s memory and disk caches.
    ``limits`` bounds every compile, at admission and in the engine: set
    ``GuideBackend.limits = fsm.Limits(...)`` before the engine starts.
    """

    limits: ClassVar[fsm.Limits] = fsm.Limits()

    def __post_init__(self) -> None:
        model = self.vllm_config.model_config
        eos = sorted(set(eos_ids(model)) | ({self.tokenizer.eos_token_id} - {None}))
        self.vocab = fsm.Vocabulary.from_tokenizer(self.tokenizer, size=self.vocab_size, eos_token_ids=eos)

    def compile_grammar(
        self, request_type: StructuredOutputOptions, grammar_spec: str, stop_token_ids: set[int] | None = None
    ) -> GuideGrammar:
        """The request's matcher (a `fsm.SpecError` fails this request alone)."""
        index = fsm.compile(spec_of(request_type, grammar_spec), self.vocab, limits=self.limits)
        return GuideGrammar(index.matcher())

    def allocate_token_bitmask(self, max_num_seqs: int) -> torch.Tensor:
        """vLLM's bitmask: one packed row per sequence (and per speculative position), all allowed."""
        return torch.full((max_num_seqs, (self.vocab_size + 31) // 32), -1, dtype=torch.int32)

    def destroy(self) -> None:
        """Nothing to release: indexes live in `fsm.compile`'s caches."""


@dataclass
class GuideGrammar(StructuredOutputGrammar):
    """One request's state: the library's matcher over the request's index.

    ``is_terminated`` once EOS was accepted (vLLM then stops the request); tokens vLLM reports after
    that are ignored, as in its own backends.
    """

    matcher: Any  # an fsm Matcher (its class depends on the index)

    def accept_tokens(self, request_id: str, tokens: list[int]) -> bool:
        """Advance over sampled ``tokens``; False (vLLM ends the request) if one is outside the mask."""
        for t in tokens:
            if self.is_terminated():
                return True
            try:
                self.matcher.advance(t)
            except fsm.TokenRejected as e:
                log.error(
                    "guide backend: request %s sampled a token its constraint refuses: %s", request_id, e
                )
                return False
        return True

    def validate_tokens(self, tokens: list[int]) -> list[int]:
        """The longest prefix of draft ``tokens`` the constraint accepts (the matcher is left as it was)."""
        n = 0
        for t in tokens:
            if self.is_terminated():
                break
            try:
                self.matcher.advance(t)
            except fsm.TokenRejected:
                break
            n += 1
        self.matcher.rollback(n)
        return tokens[:n]

    def rollback(self, num_tokens: int) -> None:
        """Undo the last ``num_tokens`` accepted tokens."""
        self.matcher.rollback(num_tokens)

    def fill_bitmask(self, bitmask: torch.Tensor, batch_index: int) -> None:
        """Write the allowed tokens into ``bitmask[batch_index]`` (our packed row is vLLM's layout)."""
        self.matcher.fill_bitmask(bitmask[batch_index].numpy())

    def is_terminated(self) -> bool:
        """EOS was accepted."""
        return self.matcher.state == self.matcher.FINISHED

    def reset(self) -> None:
        """Back to the start."""
        self.matcher.reset()
