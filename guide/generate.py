"""`guide.generate` and `guide.stream`: the public entry points of the batched generation loop.

They check the decoding mode and run it: the plain loop (`guide.loop`: masks, sampling, jump-forward,
stops), speculative decoding (`guide.speculative_loop`, with ``draft=``) or beam search (`guide.beam`,
with ``num_beams``). Each returns one `Completion` per prompt.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from typing import Any

import fsm

from .beam import BeamOptions, Hypothesis, beam_search
from .completion import FINISH_REASONS, Completion, DecodeStats
from .constraints import Constraint
from .guidance.combination import Combination
from .guidance.errors import GuidanceError
from .guidance.views import resolve
from .inputs import Prompts, budgets, is_batch, matchers, prompt_ids
from .loop import Row, Runner, utf8_complete_prefix
from .sources import LogitsSource
from .speculative import SpeculativeOptions
from .speculative_loop import SpeculativeRunner
from .watermark import Watermark

__all__ = ["FINISH_REASONS", "Completion", "DecodeStats", "Prompts", "generate", "stream"]


_PARAMETERS_DOC = """
    Parameters (shared by `generate` and `stream`):

    ``source``: a `LogitsSource` (a `guide.Model` or a guidance combination).
    ``prompts``: a string (used exactly as given: no chat template), a list of token ids, or a list of
    those. ``constraint``: None, an fsm spec (``fsm.Regex``, ``fsm.JsonSchema``…, compiled once per
    call), a compiled index, or a list with one of those per prompt (None = free row).
    ``max_new_tokens``: an int or one per prompt. ``stop``: stop strings (the text is cut before them).
    ``seed``: int (row i uses seed + i) or per-row list. ``jump_forward``: append text the constraint
    forces without sampling it. ``num_beams`` > 1: beam search (`guide.beam`; deterministic, no stop
    strings, no sampling options, no jump-forward) with ``length_penalty``, ``early_stopping`` (True,
    False or "never") and ``num_return_sequences`` hypotheses per prompt in `Completion.beams`;
    ``stream`` then yields each prompt's text once it is done. ``draft``: speculative decoding
    (`guide.speculative_loop`) with up to ``num_draft_tokens`` drafted per step — ``"prompt"`` (prompt
    lookup), ``"layers:N"`` (the target `guide.Model` truncated to N layers, `Model.truncated`) or a draft
    model sharing the target's vocabulary (`guide.drafts`); greedy output is the same as without, sampled
    output has the same distribution (temperature only; `DecodeStats` counts forward passes and accepted
    draft tokens). Beam search and drafts need a source whose sessions reorder and cut their cache: a
    `guide.Model` or a `Prompted` view, not a guidance combination (`GuidanceError` at the call).
    ``sampling``: temperature, top_k, top_p, min_p, typical_p, mirostat_tau, mirostat_eta,
    repetition_penalty, frequency_penalty, presence_penalty, logit_bias — each a scalar or a per-prompt
    list (see `guide.sampling`). ``watermark``: a `guide.Watermark` whose green-list bias is added to
    every row's masked logits (detect with `guide.detect_watermark`), to each beam's masked
    log-probabilities with beam search, and to both the target's and the draft model's masked
    distributions with drafts.
"""


def stream(
    source: LogitsSource,
    prompts: Prompts,
    constraint: Constraint | list[Constraint] = None,
    max_new_tokens: int | Sequence[int] = 256,
    stop: str | Sequence[str] | None = None,
    seed: int | Sequence[int | None] | None = None,
    jump_forward: bool = True,
    num_beams: int = 1,
    length_penalty: float = 1.0,
    early_stopping: bool | str = False,
    num_return_sequences: int = 1,
    draft: object = None,
    num_draft_tokens: int = 8,
    watermark: Watermark | None = None,
    **sampling: Any,
) -> Generator[str | tuple[int, str], None, list[Completion]]:
    """Generate from a `LogitsSource`, yielding text as it is produced; `generate` runs this to the end.

    Pieces never split a UTF-8 character and never show a stop string. One prompt yields ``str``
    pieces; a list of prompts yields ``(prompt_index, piece)``. The generator's return value
    (``yield from``, ``StopIteration.value``) is the list of `Completion` objects, one per prompt.

    >>> "".join(guide.stream(model, "Once upon a time", max_new_tokens=20))   # doctest: +SKIP
    ', there was a little girl named Lily...'
    """
    batch = is_batch(prompts)
    _check_session_operations(source, num_beams > 1 or num_return_sequences > 1, draft is not None)
    if num_beams > 1 or num_return_sequences > 1:
        beams = BeamOptions(num_beams, length_penalty, early_stopping, num_return_sequences)
        done = _beam_completions(
            source,
            prompts if batch else [prompts],
            constraint,
            max_new_tokens,
            stop,
            sampling,
            beams,
            watermark,
        )
        for i, c in enumerate(done):
            if c.text:
                yield (i, c.text) if batch else c.text
        return done
    rows = prompts if batch else [prompts]
    args = (source, rows, constraint, max_new_tokens, stop, seed, jump_forward, sampling)
    if draft is None:
        runner = Runner(*args, watermark=watermark)
    else:
        runner = SpeculativeRunner(*args, SpeculativeOptions(draft, num_draft_tokens), watermark)
    hold = max((len(s) for s in runner.stops), default=1) - 1
    for touched in runner.steps():
        for row in touched:
            piece = take_piece(row, hold)
            if piece:
                yield (row.index, piece) if batch else piece
    return runner.completions()


def generate(
    source: LogitsSource,
    prompts: Prompts,
    constraint: Constraint | list[Constraint] = None,
    max_new_tokens: int | Sequence[int] = 256,
    stop: str | Sequence[str] | None = None,
    seed: int | Sequence[int | None] | None = None,
    jump_forward: bool = True,
    num_beams: int = 1,
    length_penalty: float = 1.0,
    early_stopping: bool | str = False,
    num_return_sequences: int = 1,
    draft: object = None,
    num_draft_tokens: int = 8,
    watermark: Watermark | None = None,
    **sampling: Any,
) -> list[Completion]:
    """Generate one `Completion` per prompt from a `LogitsSource` (a `guide.Model` or a guidance combination).

    Same parameters, order and defaults as `stream` (tests/guide check the two signatures are equal):
    it runs `stream` to the end and returns its value.

    >>> model = guide.load()                                                         # doctest: +SKIP
    >>> guide.generate(model, "Year: ", fsm.Regex(r"\\d{4}"))[0].text                # doctest: +SKIP
    '2023'
    """
    steps = stream(
        source,
        prompts,
        constraint,
        max_new_tokens,
        stop,
        seed,
        jump_forward,
        num_beams,
        length_penalty,
        early_stopping,
        num_return_sequences,
        draft,
        num_draft_tokens,
        watermark,
        **sampling,
    )
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return done.value


stream.__doc__ = (stream.__doc__ or "") + _PARAMETERS_DOC
generate.__doc__ = (generate.__doc__ or "") + _PARAMETERS_DOC


def _check_session_operations(source: LogitsSource, beams: bool, drafts: bool) -> None:
    """Refuse, at the call, beam search or drafts on a guidance combination: its steps combine several
    models' logits and truncate after the mask, so a beam fork or a drafted position would need every
    participant's cache reordered or cut and the method's state per position; the cost buys nothing
    the plain loop cannot give (see docs/decoding.md)."""
    if not (beams or drafts):
        return
    root, _ = resolve(source)
    if isinstance(root, Combination):
        what = "num_beams > 1 (beam search)" if beams else "draft= (speculative decoding)"
        raise GuidanceError(
            f"{what} does not work with a guidance source ({type(root).__name__}): its sessions combine "
            "several models and truncate after the constraint mask step by step, and cannot reorder "
            "beams or verify and cut drafts; use sampling or greedy decoding with it"
        )


# -- beam search -------------------------------------------------------------------------------------


def _beam_completions(
    source: LogitsSource,
    prompts: Sequence[str | Sequence[int]],
    constraint: Constraint | list[Constraint],
    max_new_tokens: int | Sequence[int],
    stop: str | Sequence[str] | None,
    sampling: dict[str, Any],
    options: BeamOptions,
    watermark: Watermark | None = None,
) -> list[Completion]:
    """Beam-search every prompt in one batch (see `guide.beam`); one `Completion` per prompt."""
    if stop is not None:
        raise ValueError(
            "stop strings are not supported with num_beams > 1 (a beam ends at EOS or the budget)"
        )
    chosen = sorted(k for k, v in sampling.items() if v is not None)
    if chosen:
        raise ValueError(
            f"num_beams > 1 is deterministic beam search; sampling options {chosen} do not apply"
        )
    n = len(prompts)
    if n == 0:
        raise ValueError("generate needs at least one prompt")
    ids = [prompt_ids(source, p, i) for i, p in enumerate(prompts)]
    max_new = budgets(max_new_tokens, n)
    vocab = source.vocabulary
    found = beam_search(source, ids, matchers(constraint, n, vocab), max_new, options, watermark)
    eos = frozenset(vocab.eos_token_ids)
    out = []
    for hyps in found:
        beams = [_hypothesis_completion(h, vocab, eos) for h in hyps]
        if not beams:  # a zero budget, or no hypothesis ended within it
            out.append(Completion("", [], "length"))
            continue
        top = beams[0]
        out.append(Completion(top.text, top.token_ids, top.finish_reason, top.stats, top.score, beams))
    return out


def _hypothesis_completion(h: Hypothesis, vocab: fsm.Vocabulary, eos: frozenset[int]) -> Completion:
    ended = bool(h.token_ids) and h.token_ids[-1] in eos
    text_ids = h.token_ids[:-1] if ended else h.token_ids
    text = vocab.decode(text_ids).decode("utf-8", errors="replace")
    return Completion(
        text, list(h.token_ids), "eos" if ended else "length", DecodeStats(h.forward_passes), h.score
    )


def take_piece(row: Row, hold: int) -> str:
    """The next UTF-8-safe piece of a row's text, holding back a possible stop-string prefix."""
    if row.finish is not None:
        end = len(row.data) if row.text_end is None else row.text_end
    else:
        end = utf8_complete_prefix(row.data, max(row.streamed, len(row.data) - hold))
    if end <= row.streamed:
        return ""
    piece = bytes(row.data[row.streamed : end]).decode("utf-8", errors="replace")
    row.streamed = end
    return piece
