"""`Generator`: a model (or guidance source) plus an output type, compiled once, returning validated values.

>>> gen = guide.Generator(guide.load(), Person)                 # doctest: +SKIP
>>> gen("Extract: Ada Lovelace, 36 years old")                  # doctest: +SKIP
Person(name='Ada Lovelace', age=36)
>>> gen.last.text, gen.last.finish_reason                       # doctest: +SKIP
('{"name": "Ada Lovelace", "age": 36}', 'eos')
"""

from __future__ import annotations

import dataclasses
import functools
import os
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import fsm

from .candidates import Candidate, Utility, rank_candidates
from .generate import Completion, generate, stream
from .output_types import OutputType, describe
from .output_types import output_type as to_output_type
from .prompts import Prompt, format_prompt
from .reasoning import Reasoned, Reasoning, Thought, as_reasoning
from .results import GenerationError, InvalidOutput, Result, Truncated
from .sampling import SamplingParams
from .sources import LogitsSource
from .tools import Tools

if TYPE_CHECKING:
    from .constraints import CompiledConstraint
    from .models import Model

# What a user may pass as the model: a loaded source, a model path, or None for the default model.
ModelArg = LogitsSource | str | os.PathLike | None

_T = TypeVar("_T")

_LOOP_OPTIONS = (
    "max_new_tokens",
    "stop",
    "seed",
    "jump_forward",
    "num_beams",
    "length_penalty",
    "early_stopping",
    "num_return_sequences",
    "draft",
    "num_draft_tokens",
    "watermark",
)
_PROMPT_OPTIONS = ("raw", "system")
OPTIONS = frozenset(
    _LOOP_OPTIONS + _PROMPT_OPTIONS + tuple(f.name for f in dataclasses.fields(SamplingParams))
)
DEFAULT_MAX_NEW_TOKENS = 256


@functools.lru_cache(maxsize=1)
def default_model() -> Model:
    """The embedded default model, loaded once per process.

    >>> default_model().vocabulary.size   # doctest: +SKIP
    49152
    """
    from .models import load

    return load()


def resolve_source(model: ModelArg) -> LogitsSource:
    """A logits source from what the user passed: None (the default model), a path, or a source itself.

    >>> resolve_source(None) is default_model()   # doctest: +SKIP
    True
    """
    if model is None:
        return default_model()
    if isinstance(model, (str, os.PathLike)):
        from .models import load

        return load(model)
    if not (hasattr(model, "vocabulary") and callable(getattr(model, "prefill", None))):
        raise TypeError(
            f"expected a guide.Model, a guidance source (guide.DExperts…), a model path or None, "
            f"got {type(model).__name__}"
        )
    return model


def check_options(options: dict[str, Any], where: str) -> None:
    """Reject unknown generation options early, naming the known ones.

    >>> check_options({"temprature": 0.5}, "Generator")
    Traceback (most recent call last):
    ...
    TypeError: Generator: unknown option(s) ['temprature']; known: ...
    """
    unknown = sorted(set(options) - OPTIONS)
    if unknown:
        raise TypeError(f"{where}: unknown option(s) {unknown}; known: {', '.join(sorted(OPTIONS))}")


class Generator:
    """Generate values of one output type from one model or guidance source.

    The constraint is compiled once, here, and shared by every call. ``model`` is a `guide.Model`, any
    `LogitsSource` (``guide.DExperts(...)``…), a model path, or None for the embedded default model.
    ``output_type``: see `guide.output_types`; ``whitespace`` and ``exact`` (the schema's exact language,
    ``fsm.JsonSchema(..., exact=True)``) apply to JSON outputs. ``defaults``: ``max_new_tokens`` (256), ``stop``, ``seed``,
    ``jump_forward``, ``raw`` (skip the chat template), ``system`` (a system message) and any sampling
    parameter (``temperature``, ``top_p``…); each call may override them. ``tools``: a list of tools
    or a `guide.Tools` (the output type is then `guide.Tools`; each call returns a `guide.ToolReply`).
    ``reasoning=(open_tag, close_tag)``: the model first thinks in free text, at most
    ``max_reasoning_tokens`` tokens (256), then writes the output; calls return a `guide.Reasoned`
    (``.thinking``, ``.value``); see `guide.reasoning`.

    After each call ``gen.last`` holds the `Result` (a list of them after `batch`): raw text,
    ``finish_reason`` and token ids. A run that ends before the constraint is satisfied raises `Truncated`.

    >>> gen = Generator(model, Literal["positive", "negative"], temperature=0)   # doctest: +SKIP
    >>> gen("Review: I loved it. Sentiment:")                                   # doctest: +SKIP
    'positive'
    """

    def __init__(
        self,
        model: ModelArg = None,
        output_type: Any = str,
        *,
        whitespace: str | int | None = None,
        exact: bool = False,
        tools: Tools | Sequence[Any] | None = None,
        reasoning: Reasoning | tuple[str, str] | None = None,
        max_reasoning_tokens: int | None = None,
        **defaults: Any,
    ):
        check_options(defaults, "Generator")
        self.reasoning = as_reasoning(reasoning, max_reasoning_tokens)
        if tools is not None:
            if output_type is not str:
                raise TypeError(
                    "Generator: give tools=[...] or an output type, not both (the reply holds the text)"
                )
            output_type = tools if isinstance(tools, Tools) else Tools(tools, whitespace=whitespace)
        self.output_type = output_type
        # Tools are checked here, before loading; their spec needs the model's tokenizer (below).
        self.kind: OutputType | None = (
            None
            if isinstance(output_type, Tools)
            else to_output_type(output_type, whitespace=whitespace, exact=exact)
        )  # bad types fail before loading
        self.source = resolve_source(model)
        if isinstance(output_type, Tools):
            self.kind = output_type.output_type(self.source)
        self.defaults = {"max_new_tokens": DEFAULT_MAX_NEW_TOKENS, **defaults}
        self.index: CompiledConstraint | None = (
            fsm.compile(self.kind.spec, self.source.vocabulary) if self.kind.spec is not None else None
        )
        self.last: Result | list[Result] | None = None

    def __repr__(self) -> str:
        return f"Generator({getattr(self.source, 'name', type(self.source).__name__)!r}, {describe(self.output_type)})"

    # -- calls ----------------------------------------------------------------------------------------
    def __call__(self, prompt: Prompt, **overrides: Any) -> Any:
        """Generate one value for ``prompt``; raises `Truncated` / `InvalidOutput` when there is none.

        >>> Generator(model, int)("2 + 2 = ", raw=True, max_new_tokens=3)   # doctest: +SKIP
        4
        """
        options = self._options(overrides)
        sent = self._format(prompt, options)
        thought = self._think([sent], _loop_args(options))[0]
        sent = thought.prompt if thought is not None else sent
        completion = generate(self.source, sent, self.index, **_loop_args(options))[0]
        result = self._result(completion, sent, options["max_new_tokens"], thought)
        self.last = result
        if result.error is not None:
            raise result.error
        return result.value

    def batch(
        self,
        prompts: Sequence[Prompt],
        *,
        errors: str = "raise",
        batch_size: int | None = None,
        progress: bool = False,
        **overrides: Any,
    ) -> list[Any]:
        """Generate one value per prompt in batched forward passes.

        ``errors="raise"`` raises the first row's `GenerationError` (after the whole batch ran, so
        ``gen.last`` has every row); ``errors="return"`` puts the exception in that row's place.
        ``batch_size`` splits long lists; ``progress`` shows a tqdm bar. Sampling options may be
        per-prompt lists; an int ``seed`` gives row i the seed ``seed + i``.

        >>> Generator(model, Person).batch(["Ada, 36", "Alan, 41"])   # doctest: +SKIP
        [Person(name='Ada', age=36), Person(name='Alan', age=41)]
        """
        if errors not in ("raise", "return"):
            raise ValueError(f'errors must be "raise" or "return", got {errors!r}')
        prompts = list(prompts)
        if not prompts:
            self.last = []
            return []
        options = self._options(overrides)
        n = len(prompts)
        size = n if not batch_size else int(batch_size)
        if size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        sent = [self._format(p, options) for p in prompts]
        bar = _progress(n, progress)
        results: list[Result] = []
        try:
            for start in range(0, n, size):
                chunk = slice(start, min(n, start + size))
                args = _loop_args(_rows(options, n, chunk))
                thoughts = self._think(sent[chunk], args)
                rows = [s if t is None else t.prompt for s, t in zip(sent[chunk], thoughts, strict=True)]
                done = generate(self.source, rows, self.index, **args)
                budgets = _per_row(options["max_new_tokens"], n)[chunk]
                for c, s, m, t in zip(done, rows, budgets, thoughts, strict=True):
                    results.append(self._result(c, s, m, t))
                if bar is not None:
                    bar.update(len(done))
        finally:
            if bar is not None:
                bar.close()
        self.last = results
        if errors == "raise":
            for r in results:
                if r.error is not None:
                    raise r.error
        return [r.value if r.error is None else r.error for r in results]

    def stream(self, prompt: Prompt, **overrides: Any) -> Iterator[str]:
        """Yield the output text as it is generated; when the stream ends, ``gen.last.value`` holds the
        parsed value (or the stream raises `Truncated` / `InvalidOutput` after its last piece).

        >>> for piece in gen.stream("Write a haiku"): print(piece, end="")   # doctest: +SKIP
        """
        self._no_reasoning("stream")
        options = self._options(overrides)
        sent = self._format(prompt, options)
        pieces: list[str] = []
        finals = yield from _tee(stream(self.source, sent, self.index, **_loop_args(options)), pieces)
        if isinstance(finals, list) and finals and isinstance(finals[0], Completion):
            completion = finals[0]
        else:  # the engine's stream does not hand back its Completion: rebuild what we need from the text
            completion = self._completion_from_text("".join(pieces), options["max_new_tokens"])
        result = self._result(completion, sent, options["max_new_tokens"])
        self.last = result
        if result.error is not None:
            raise result.error

    def candidates(
        self,
        prompt: Prompt,
        n: int = 8,
        *,
        temperature: float = 1.0,
        seed: int | None = None,
        rank: str = "logprob",
        utility: Utility | None = None,
        **overrides: Any,
    ) -> list[Candidate]:
        """Sample ``n`` outputs for one prompt (prefilled once) and return the valid ones, best first.

        ``rank``: "logprob" (the constrained model's log-probability), "mbr" (minimum Bayes risk: mean
        ``utility`` against the other candidates; the default agrees field by field, see
        `guide.candidates`) or "vote" (self-consistency: the share of candidates with the same value).
        ``gen.last`` holds all n `Result`s; when none is valid the first error is raised.

        >>> gen = Generator(model, Person)                                         # doctest: +SKIP
        >>> best = gen.candidates("Ada, 36", n=8, rank="mbr", seed=0)[0]           # doctest: +SKIP
        >>> best.value, best.score                                                 # doctest: +SKIP
        (Person(name='Ada', age=36), 0.93)
        """
        if not isinstance(n, int) or n < 1:
            raise ValueError(f"n must be an int >= 1, got {n!r}")
        rank_candidates([], rank, utility)  # a bad rank or utility fails before generating
        self._no_reasoning("candidates")
        options = self._options({**overrides, "temperature": temperature, "seed": seed})
        sent = self._format(prompt, options)
        done = generate(self.source, [sent] * n, self.index, **_loop_args(options))
        results = [self._result(c, sent, options["max_new_tokens"]) for c in done]
        self.last = results
        valid = [
            Candidate(r.value, r.text, c.logprob, c.logprob, list(c.token_ids))
            for r, c in zip(results, done, strict=True)
            if r.error is None
        ]
        if not valid:
            raise results[0].error
        return rank_candidates(valid, rank, utility)

    # -- helpers --------------------------------------------------------------------------------------
    def _options(self, overrides: dict[str, Any]) -> dict[str, Any]:
        check_options(overrides, "Generator call")
        return {**self.defaults, **overrides}

    def _format(self, prompt: Prompt, options: dict[str, Any]) -> str | list[int]:
        tools = [t.openai() for t in self.output_type.tools] if isinstance(self.output_type, Tools) else None
        return format_prompt(self.source, prompt, bool(options.get("raw")), options.get("system"), tools)

    def _think(self, prompts: Sequence[str | list[int]], options: dict[str, Any]) -> list[Thought | None]:
        if self.reasoning is None:
            return [None] * len(prompts)
        return list(self.reasoning.think(self.source, prompts, options))

    def _no_reasoning(self, what: str) -> None:
        if self.reasoning is not None:
            raise ValueError(f"Generator.{what} does not think first yet: use gen(...) or gen.batch(...)")

    def _result(
        self, c: Completion, prompt: str | list[int], max_new_tokens: int, thought: Thought | None = None
    ) -> Result:
        """Parse a completion (beside its thinking, if any), or attach the reason it has no value."""
        result = Result(None, c.text, c.finish_reason, list(c.token_ids), prompt)
        if self.index is not None and not self._complete(c):
            result.error = Truncated(
                c.text, c.finish_reason, c.token_ids, max_new_tokens, f"the {self.kind.name}"
            )
            return result
        try:
            if self.kind.parse_tokens is not None:
                result.value = self.kind.parse_tokens(_without_eos(c.token_ids, self.source.vocabulary))
            else:
                result.value = self.kind.parse(c.text)
            if thought is not None:
                closed_by = {"stop": "model", "length": "budget"}.get(thought.finish_reason, "eos")
                result.value = Reasoned(thought.text, result.value, thought.tokens, closed_by)
        except (
            Exception
        ) as exc:  # deliberately broad: parsers raise ValueError, pydantic/jsonschema errors, KeyError…
            result.error = InvalidOutput(c.text, c.finish_reason, c.token_ids, self.kind.name, exc)
        return result

    def _complete(self, c: Completion) -> bool:
        """Whether the model finished the output. EOS is only allowed where the constraint is satisfied;
        a run cut by the token budget is incomplete even when its text happens to match (``"12"`` may
        have been on its way to ``"1234"``); text cut at a stop string is checked against the constraint
        (the matchers work on bytes, so any tokenization of the text will do)."""
        if c.finish_reason == "stop":
            return self._accepts(self._encode(c.text))
        return c.finish_reason != "length"

    def _encode(self, text: str) -> list[int]:
        return list(self.source.tokenizer.encode(text, add_special_tokens=False)) if text else []

    def _accepts(self, token_ids: Sequence[int]) -> bool:
        eos = set(self.source.vocabulary.eos_token_ids)
        m = self.index.matcher()
        try:
            for t in token_ids:
                if t in eos:
                    return True
                m.advance(int(t))
        except fsm.TokenRejected:
            return False
        return bool(m.is_accepting())

    def _completion_from_text(self, text: str, max_new_tokens: int) -> Completion:
        ids = self._encode(text)
        done = len(ids) < max_new_tokens and (self.index is None or self._accepts(ids))
        return Completion(text, ids, "eos" if done else "length")


def _without_eos(token_ids: Sequence[int], vocab: fsm.Vocabulary) -> list[int]:
    ids = list(token_ids)
    return ids[:-1] if ids and ids[-1] in vocab.eos_token_ids else ids


def _loop_args(options: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in options.items() if k not in _PROMPT_OPTIONS}


def _per_row(value: _T | Sequence[_T], n: int) -> list[_T]:
    return list(value) if isinstance(value, (list, tuple)) else [value] * n


def _rows(options: dict[str, Any], n: int, chunk: slice) -> dict[str, Any]:
    """The options for rows ``chunk`` of a batch of ``n``: per-row lists sliced, int seeds offset."""
    out = {}
    for k, v in options.items():
        if k == "seed" and isinstance(v, int):
            out[k] = [v + i for i in range(chunk.start, chunk.stop)]
        elif k in ("stop", "logit_bias") or not isinstance(v, (list, tuple)):
            out[k] = v
        elif len(v) != n:
            raise ValueError(f"{k} has {len(v)} values for {n} prompts")
        else:
            out[k] = list(v)[chunk]
    return out


def _tee(pieces: Iterator[str], into: list[str]):
    """Re-yield ``pieces`` while keeping them; returns the wrapped generator's own return value."""
    while True:
        try:
            piece = next(pieces)
        except StopIteration as stop:
            return stop.value
        into.append(piece)
        yield piece


def _progress(total: int, enabled: bool):
    if not enabled:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, desc="generating", unit="prompt")


__all__ = [
    "GenerationError",
    "Generator",
    "InvalidOutput",
    "Result",
    "Truncated",
    "default_model",
    "format_prompt",
]
