"""The batched generation loop: prefill, decode with the KV cache, masks, sampling, jump-forward, stops.

``generate`` returns one `Completion` per prompt; ``stream`` yields UTF-8-safe text pieces as tokens
arrive. Both run the same loop:

* prompts are left-padded into one prefill; each decode step feeds one token per row;
* constrained rows are masked from their matcher's packed bitmask before sampling; free rows pay nothing;
* rows that finish (EOS, matcher finished, stop string, length) leave the batch and its KV cache at once;
* jump-forward: when a matcher forces the next bytes, their canonical tokenization (as the tokenizer
  would write them, when the matcher accepts it; else the matcher's own forced tokens) is appended
  without sampling and fed in the same forward pass as the sampled token. The last forced token is
  left for the model to pick, so it can merge with what follows as canonical text would.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

import torch

import fsm

from .beam import BeamOptions, Hypothesis, beam_search
from .constraints import CompiledConstraint, Constraint, TokenMatcher
from .masks import MaskBuffer, forbid_padding_ids
from .sampling import Sampler, SamplingParams, check_logits, sampling_params, seed_list
from .sources import LogitsSource, Session
from .speculative import SpeculativeOptions, accept_or_resample, choose, prompt_lookup
from .watermark import Watermark, context_tail

if TYPE_CHECKING:
    pass

FINISH_REASONS = ("eos", "constraint", "stop", "length")

# One prompt (text, or token ids) or a list of those.
Prompts = str | Sequence[int] | Sequence[str | Sequence[int]]

_T = TypeVar("_T")


@dataclass
class DecodeStats:
    """What decoding one row cost: the forward passes it took part in (the prefill included) and,
    for speculative decoding, the draft tokens proposed and accepted.

    >>> DecodeStats(forward_passes=4, draft_tokens=10, accepted_draft_tokens=7).forward_passes
    4
    """

    forward_passes: int = 0
    draft_tokens: int = 0
    accepted_draft_tokens: int = 0


@dataclass
class Completion:
    """One generated continuation.

    ``token_ids`` are all generated ids (a final EOS included); ``text`` is their exact text without
    special tokens, cut before a stop string; ``finish_reason`` is "eos", "constraint" (the matcher
    allows nothing more), "stop" or "length". ``stats``: what it cost (`DecodeStats`). With beam search,
    ``score`` is the length-penalized log-probability and ``beams`` the ``num_return_sequences`` best
    hypotheses, best first (this completion is ``beams[0]``). ``logprob``: the sum of the sampled
    tokens' log-probabilities under the masked model distribution (before temperature and truncation;
    jump-forward tokens, which the constraint forced, count zero).

    >>> Completion("hi", [6124], "eos").finish_reason
    'eos'
    """

    text: str
    token_ids: list[int]
    finish_reason: str
    # What it cost and how it ranked are not part of what was generated: equality ignores them.
    stats: DecodeStats = field(default_factory=DecodeStats, compare=False)
    score: float | None = field(default=None, compare=False)
    beams: list[Completion] = field(default_factory=list, compare=False)
    logprob: float = field(default=0.0, compare=False)


@dataclass(eq=False)
class _Row:
    index: int
    matcher: TokenMatcher | None
    max_new: int
    ids: list[int] = field(default_factory=list)
    data: bytearray = field(default_factory=bytearray)
    finish: str | None = None
    text_end: int | None = None  # byte offset where a stop string starts
    streamed: int = 0  # bytes already yielded by `stream`
    stats: DecodeStats = field(default_factory=DecodeStats)
    logprob: float = 0.0


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
    ``stream`` then yields each prompt's text once it is done. ``draft="prompt"``: speculative decoding
    (`guide.speculative`) with up to ``num_draft_tokens`` drafted per step by prompt lookup; greedy output
    is the same as without, sampled output has the same distribution (temperature only; `DecodeStats`
    counts forward passes and accepted draft tokens). ``sampling``: temperature, top_k, top_p, min_p, typical_p,
    mirostat_tau, mirostat_eta, repetition_penalty, frequency_penalty, presence_penalty, logit_bias —
    each a scalar or a per-prompt list (see `guide.sampling`). ``watermark``: a `guide.Watermark`
    whose green-list bias is added to every row's masked logits (detect with `guide.detect_watermark`;
    not with beam search or draft= yet).
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
    draft: str | None = None,
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
    batch = _is_batch(prompts)
    if watermark is not None and (num_beams > 1 or num_return_sequences > 1 or draft is not None):
        raise ValueError(
            "watermark= works with sampling and greedy decoding, not yet with beam search or draft="
        )
    if num_beams > 1 or num_return_sequences > 1:
        beams = BeamOptions(num_beams, length_penalty, early_stopping, num_return_sequences)
        done = _beam_completions(
            source, prompts if batch else [prompts], constraint, max_new_tokens, stop, sampling, beams
        )
        for i, c in enumerate(done):
            if c.text:
                yield (i, c.text) if batch else c.text
        return done
    runner = _Runner(
        source,
        prompts if batch else [prompts],  # type: ignore[list-item]
        constraint,
        max_new_tokens,
        stop,
        seed,
        jump_forward,
        sampling,
        SpeculativeOptions(draft, num_draft_tokens) if draft is not None else None,
        watermark,
    )
    hold = max((len(s) for s in runner.stops), default=1) - 1
    for touched in runner.steps():
        for row in touched:
            piece = _take_piece(row, hold)
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
    draft: str | None = None,
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


# ---------------------------------------------------------------------------------------------------


@dataclass(eq=False)
class _Batch:
    """The open batch of one generate call: what the model side needs between steps."""

    session: Session
    sampler: Sampler
    masks: MaskBuffer
    logits: torch.Tensor  # (rows, vocabulary.size): the next-token logits of each active row
    rescore: Callable[[torch.Tensor], torch.Tensor] | None  # a guidance session's post-mask hook


@dataclass(eq=False)
class _Step:
    """What one sampling step made: the rows that got tokens, and what the next forward pass feeds."""

    rows: list[_Row]  # the rows that were active, in batch order (some may have finished)
    tokens: torch.Tensor  # (rows,) the sampled ids
    feeds: list[list[int]] | None  # per row, the sampled id plus jump-forward ids; None if no row jumped


class _Runner:
    """State of one generate call; ``steps()`` runs the loop and yields the rows touched per step."""

    def __init__(
        self,
        source: LogitsSource,
        prompts: Sequence[str | Sequence[int]],
        constraint: Constraint | list[Constraint],
        max_new_tokens: int | Sequence[int],
        stop: str | Sequence[str] | None,
        seed: int | Sequence[int | None] | None,
        jump_forward: bool,
        sampling: dict[str, Any],
        speculative: SpeculativeOptions | None = None,
        watermark: Watermark | None = None,
    ):
        self.source = source
        self.watermark = watermark
        self.speculative = speculative
        self.vocab = source.vocabulary
        n = len(prompts)
        if n == 0:
            raise ValueError("generate needs at least one prompt")
        self.prompt_ids = [_prompt_ids(source, p, i) for i, p in enumerate(prompts)]
        self.stops = _stop_bytes(stop)
        self.jump_forward = jump_forward
        max_new = _per_row("max_new_tokens", max_new_tokens, n)
        for r, m in enumerate(max_new):
            if not isinstance(m, int) or m < 0:
                raise ValueError(f"max_new_tokens must be an int >= 0, got {m!r} for prompt {r}")
        matchers = _matchers(constraint, n, self.vocab)
        self.rows = [_Row(i, matchers[i], max_new[i]) for i in range(n)]
        seeds = seed_list(n, seed)
        self.params: list[SamplingParams] = sampling_params(n, seed=seeds, **sampling)
        self.seeds = seeds
        if speculative is not None:
            _check_speculative_sampling(self.params)
        self.eos = frozenset(self.vocab.eos_token_ids)
        self.token_bytes = self.vocab.tokens
        self.canonical_cache: dict[bytes, list[int] | None] = {}
        # Per-step state: the rows still generating, in batch order, and their open batch.
        self.active: list[_Row] = []
        self.batch: _Batch | None = None

    # -- the loop ------------------------------------------------------------------------------------
    def steps(self) -> Iterator[list[_Row]]:
        """Run the loop; yield the rows that got new tokens after each step (for streaming)."""
        touched = self._begin()
        if touched:
            yield touched
        if self.speculative is not None:
            yield from self._speculative_steps()
            return
        while self.active:
            step = self._sample()
            yield step.rows
            self._feed(step)

    @torch.inference_mode()
    def _begin(self) -> list[_Row]:
        """Finish rows that need no model call, jump-forward from the start, and prefill."""
        rows = self.rows
        self.active = []
        for row in rows:  # a spec may be complete before any token (e.g. a regex matching "")
            if row.max_new == 0:
                row.finish = "length"
            elif row.matcher is not None and row.matcher.is_finished():
                row.finish = "constraint"
        # Jump-forward from the start: forced leading text goes into the prefill itself.
        starts = {}
        for row in rows:
            if row.finish is None and row.matcher is not None and self.jump_forward:
                jumped = self._jump(row)
                if jumped:
                    starts[row.index] = jumped
        touched = [r for r in rows if r.finish is not None or r.index in starts]
        active = [r for r in rows if r.finish is None]
        if not active:
            return touched
        sampler = Sampler(
            [self.params[r.index] for r in active],
            self.vocab.size,
            self.source.device,
            seeds=[self.seeds[r.index] for r in active],
            prompts=[self.prompt_ids[r.index] for r in active],
        )
        session, logits = _prefill(
            self.source, [self.prompt_ids[r.index] + starts.get(r.index, []) for r in active]
        )
        if starts:
            fed = [starts.get(r.index, []) for r in active]
            sampler.observe(*_pad(fed, max(1, max(len(f) for f in fed))))
        # `rescore` is an optional Session method (see guide.sources), so it is looked up, not called.
        rescore = getattr(session, "rescore", None)
        masks = MaskBuffer(self.vocab.size, logits.device, len(active))
        for r in active:
            r.stats.forward_passes += 1
        self.batch = _Batch(session, sampler, masks, logits, rescore)
        self.active = active
        return touched

    @torch.inference_mode()
    def _sample(self) -> _Step:
        """Mask, sample and book one token per active row (plus any jump-forward tokens)."""
        batch = self.batch
        assert batch is not None, "_begin opens the batch before any step"
        active, logits = self.active, batch.logits
        n_text = self.vocab.n_tokens
        token_bytes = self.token_bytes
        check_logits(logits)
        forbid_padding_ids(logits, n_text)
        constrained = [i for i, r in enumerate(active) if r.matcher is not None]
        if constrained:
            batch.masks.apply(logits, constrained, [active[i].matcher for i in constrained])
        if batch.rescore is not None:  # a guidance truncation that must see the mask (see guide.sources)
            logits = batch.rescore(logits)
        if self.watermark is not None:  # green-list bias on the masked logits, seeded per row
            width = self.watermark.context_width
            contexts = [context_tail(self.prompt_ids[r.index], r.ids, width) for r in active]
            logits = self.watermark.apply(logits, contexts)
        # taken before the sampler, which scales and truncates the logits in place
        log_probs = torch.log_softmax(logits, dim=-1)
        tokens = batch.sampler(logits)
        sampled = tokens.tolist()
        chosen = log_probs.gather(1, tokens[:, None].to(log_probs.device))[:, 0].tolist()
        feeds: list[list[int]] | None = None
        for i, (row, t) in enumerate(zip(active, sampled, strict=True)):
            row.logprob += chosen[i]
            jumped = self._commit(row, t, token_bytes, n_text)
            if jumped:
                if feeds is None:
                    feeds = [[s] for s in sampled]
                feeds[i].extend(jumped)
        return _Step(active, tokens, feeds)

    def _commit(self, row: _Row, t: int, token_bytes: Sequence[bytes | None], n_text: int) -> list[int]:
        """Book token ``t`` for ``row`` and jump forward; return the jumped ids (none once it finished)."""
        row.ids.append(t)
        if row.matcher is not None:
            row.matcher.advance(t)
        if t in self.eos:
            row.finish = "eos"
            return []
        self._append_bytes(row, token_bytes[t] if t < n_text else None)
        if self._check_done(row) or not self.jump_forward or row.matcher is None:
            return []
        jumped = self._jump(row)
        return jumped if row.finish is None else []

    # -- speculative decoding (see guide.speculative) ----------------------------------------------
    def _speculative_steps(self) -> Iterator[list[_Row]]:
        """Sample the first token from the prefill, then verify drafts: one forward pass per step."""
        if not self.active:
            return
        batch = self.batch
        assert batch is not None, "_begin opens the batch before any step"
        if not callable(getattr(batch.session, "extend", None)):
            raise ValueError(
                "draft= needs a source whose sessions can verify drafts and cut rejected tokens "
                f"(a guide.Model); {type(self.source).__name__} cannot"
            )
        # Acceptance draws continue each row's sampler stream: a fresh generator with the same seed
        # would replay the draw that picked the first token, and correlate with it.
        self.draft_len: dict[int, int] = {}
        self.generators = dict(zip((r.index for r in self.active), batch.sampler.generators, strict=True))
        step = self._sample()
        yield step.rows
        pending = step.feeds if step.feeds is not None else [[t] for t in step.tokens.tolist()]
        while True:
            alive = [i for i, r in enumerate(self.active) if r.finish is None]
            if not alive:
                self.active = []
                return
            if len(alive) < len(self.active):
                batch.session.keep(torch.as_tensor(alive, dtype=torch.long))
                self.active = [self.active[i] for i in alive]
                pending = [pending[i] for i in alive]
            pending = yield from self._speculate(pending)

    @torch.inference_mode()
    def _speculate(self, pending: list[list[int]]) -> Generator[list[_Row], None, list[list[int]]]:
        """One verify pass: feed each row's committed tokens plus its draft, keep what the target accepts."""
        batch = self.batch
        assert batch is not None and self.speculative is not None
        rows = self.active
        drafts = [self._draft(r, p) for r, p in zip(rows, pending, strict=True)]
        feeds = [p + d for p, d in zip(pending, drafts, strict=True)]
        fed, lengths = _pad(feeds, max(len(f) for f in feeds))
        logits = batch.session.extend(fed, lengths)
        forget, after = [], []
        for i, row in enumerate(rows):
            row.stats.forward_passes += 1
            row.stats.draft_tokens += len(drafts[i])
            nxt, cut = self._verify(row, logits[i], len(pending[i]) - 1, drafts[i])
            self._adapt_draft_length(row, len(drafts[i]), cut)
            after.append(nxt)
            forget.append(cut)
        batch.session.forget(torch.as_tensor(forget, dtype=torch.long))
        yield rows
        return after

    def _adapt_draft_length(self, row: _Row, drafted: int, cut: int) -> None:
        """Lengthen a row's drafts while they are accepted whole, shorten them to what was accepted
        (plus one) otherwise: a rejected drafted position costs as much compute as an accepted one."""
        opts = self.speculative
        assert opts is not None
        if drafted == 0:
            return
        current = self.draft_len.get(row.index, opts.num_draft_tokens)
        accepted = drafted - cut
        grown = min(opts.num_draft_tokens, current + 2) if cut == 0 else max(1, accepted + 1)
        self.draft_len[row.index] = grown

    def _draft(self, row: _Row, pending: list[int]) -> list[int]:
        """Prompt-lookup draft after ``pending``, cut at the first token the constraint forbids and
        at the budget; tokens the constraint then forces join it."""
        opts = self.speculative
        assert opts is not None
        budget = min(self.draft_len.get(row.index, opts.num_draft_tokens), row.max_new - len(row.ids))
        if budget <= 0:
            return []
        context = self.prompt_ids[row.index] + row.ids
        proposal = prompt_lookup(context, budget, opts.max_ngram)
        if row.matcher is None:
            return [t for t in _until_eos(proposal, self.eos)]
        m = row.matcher.copy()
        out: list[int] = []
        for t in proposal:
            if m.is_finished():
                break
            try:
                m.advance(t)
            except fsm.TokenRejected:
                break
            out.append(t)
            if t in self.eos:
                return out
            if self.jump_forward and m.forced_bytes():
                return out  # the loop jumps here and stops verifying: drafting on would be wasted
        room = row.max_new - len(row.ids) - len(out)
        while room > 0 and not m.is_finished():  # forced tokens are accepted whatever the target says
            forced = m.forced_tokens()[:room]
            if not forced:
                break
            for t in forced:
                m.advance(t)
            out.extend(forced)
            room -= len(forced)
        return out

    def _verify(self, row: _Row, logits: torch.Tensor, first: int, draft: list[int]) -> tuple[list[int], int]:
        """Check ``draft`` against the target; commit the accepted prefix and one more token.

        Returns the row's next pending tokens and how many drafted tokens to cut from the cache."""
        temperature = self.params[row.index].effective_temperature
        generator = self.generators[row.index]
        n_text, token_bytes = self.vocab.n_tokens, self.token_bytes
        for j, d in enumerate(draft):
            target = self._masked(row, logits[first + j])
            accepted, t = accept_or_resample(target, d, temperature, generator)
            jumped = self._commit(row, t, token_bytes, n_text)
            if not accepted:
                return [t, *jumped], len(draft) - j
            row.stats.accepted_draft_tokens += 1
            if row.finish is not None or jumped:
                return jumped, len(draft) - j - 1
        t = choose(self._masked(row, logits[first + len(draft)]), temperature, generator)
        return [t, *self._commit(row, t, token_bytes, n_text)], 0

    def _masked(self, row: _Row, logits: torch.Tensor) -> torch.Tensor:
        """One position's logits with padding ids and what the row's constraint forbids at -inf."""
        out = logits[None].clone()
        check_logits(out)
        forbid_padding_ids(out, self.vocab.n_tokens)
        if row.matcher is not None:
            self.batch.masks.apply(out, [0], [row.matcher])  # type: ignore[union-attr]
        return out[0]

    @torch.inference_mode()
    def _feed(self, step: _Step) -> None:
        """Drop finished rows from the batch, then run the next forward pass for the rest."""
        batch = self.batch
        assert batch is not None, "_begin opens the batch before any step"
        active, tokens, feeds = step.rows, step.tokens, step.feeds
        alive = [i for i, r in enumerate(active) if r.finish is None]
        if not alive:
            self.active = []
            return
        if len(alive) < len(active):
            keep = torch.as_tensor(alive, dtype=torch.long)
            batch.session.keep(keep)
            batch.sampler.keep(keep)
            self.active = [active[i] for i in alive]
            if feeds is not None:
                feeds = [feeds[i] for i in alive]
            else:
                tokens = tokens[keep.to(tokens.device)]
        for r in self.active:
            r.stats.forward_passes += 1
        if feeds is None:
            fed = tokens[:, None]
            batch.logits = batch.session.decode(fed)
            batch.sampler.observe(fed)
        else:
            fed, lengths = _pad(feeds, max(len(f) for f in feeds))
            batch.logits = batch.session.decode(fed, lengths)
            batch.sampler.observe(fed, lengths)

    # -- per-row bookkeeping -------------------------------------------------------------------------
    def _append_bytes(self, row: _Row, data: bytes | None) -> None:
        if not data:
            return
        start = len(row.data)
        row.data += data
        if self.stops and row.text_end is None:
            for s in self.stops:
                at = row.data.find(s, max(0, start - len(s) + 1))
                if at >= 0 and (row.text_end is None or at < row.text_end):
                    row.text_end = at

    def _check_done(self, row: _Row) -> bool:
        if row.text_end is not None:
            row.finish = "stop"
        elif row.matcher is not None and row.matcher.is_finished():
            row.finish = "constraint"
        elif len(row.ids) >= row.max_new:
            row.finish = "length"
        return row.finish is not None

    def _jump(self, row: _Row) -> list[int]:
        """Append the tokens of the forced text (all but the last, unless nothing can follow it)."""
        m = row.matcher
        forced = m.forced_bytes()
        if not forced:
            return []
        budget = row.max_new - len(row.ids)
        jumped: list[int] = []
        for path in (self._canonical(forced), m.forced_tokens()):
            if not path:
                continue
            jumped = []
            try:
                for t in path[:budget]:
                    m.advance(t)
                    jumped.append(t)
            except fsm.TokenRejected:
                m.rollback(len(jumped))
                jumped = []
                continue
            # Keep the last forced token for the model unless nothing can follow it: it may merge
            # with the free text after it, as the tokenizer would write it.
            whole = len(jumped) == len(path) and self.vocab.decode(path) == forced
            if whole and not m.is_finished():
                m.rollback(1)
                jumped.pop()
            break
        for t in jumped:
            row.ids.append(t)
            self._append_bytes(row, self.token_bytes[t])
        if jumped:
            self._check_done(row)
        return jumped

    def _canonical(self, forced: bytes) -> list[int] | None:
        """The tokenizer's own tokenization of the forced text, if it spells exactly those bytes."""
        hit = self.canonical_cache.get(forced, False)
        if hit is not False:
            return hit
        cut = _utf8_complete_prefix(forced)
        ids = None
        if cut:
            try:  # forced bytes may start inside a character the model already began
                text = forced[:cut].decode("utf-8")
                ids = list(self.source.tokenizer.encode(text, add_special_tokens=False))
            except (
                Exception
            ):  # deliberately broad: not text, or a tokenizer that cannot encode it: use the matcher path
                ids = None
            if ids is not None and self.vocab.decode(ids) != forced[:cut]:
                ids = None  # e.g. a SentencePiece dummy prefix: not the forced bytes
        self.canonical_cache[forced] = ids
        return ids

    def completions(self) -> list[Completion]:
        out = []
        for r in self.rows:
            data = bytes(r.data if r.text_end is None else r.data[: r.text_end])
            text = data.decode("utf-8", errors="replace")
            out.append(Completion(text, list(r.ids), r.finish or "length", r.stats, logprob=r.logprob))
        return out


# -- beam search -------------------------------------------------------------------------------------


def _beam_completions(
    source: LogitsSource,
    prompts: Sequence[str | Sequence[int]],
    constraint: Constraint | list[Constraint],
    max_new_tokens: int | Sequence[int],
    stop: str | Sequence[str] | None,
    sampling: dict[str, Any],
    options: BeamOptions,
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
    ids = [_prompt_ids(source, p, i) for i, p in enumerate(prompts)]
    max_new = _per_row("max_new_tokens", max_new_tokens, n)
    for r, m in enumerate(max_new):
        if not isinstance(m, int) or m < 0:
            raise ValueError(f"max_new_tokens must be an int >= 0, got {m!r} for prompt {r}")
    vocab = source.vocabulary
    found = beam_search(source, ids, _matchers(constraint, n, vocab), max_new, options)
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


# -- helpers -----------------------------------------------------------------------------------------


def _check_speculative_sampling(params: Sequence[SamplingParams]) -> None:
    """Speculative sampling keeps the target distribution for temperature sampling only."""
    default = SamplingParams()
    for r, p in enumerate(params):
        others = [
            f.name
            for f in dataclasses.fields(p)
            if f.name != "temperature" and getattr(p, f.name) != getattr(default, f.name)
        ]
        if others:
            raise ValueError(f"draft= supports greedy and temperature sampling only; row {r} sets {others}")


def _until_eos(tokens: list[int], eos: frozenset[int]) -> list[int]:
    """``tokens`` up to and including the first EOS (nothing is generated after one)."""
    for i, t in enumerate(tokens):
        if t in eos:
            return tokens[: i + 1]
    return tokens


def _is_batch(prompts: object) -> bool:
    if isinstance(prompts, str):
        return False
    if isinstance(prompts, (list, tuple)):
        if not prompts:
            return True
        return not isinstance(prompts[0], int)
    raise TypeError(
        f"prompts must be a string, a list of token ids, or a list of those; got {type(prompts).__name__}"
    )


def _prompt_ids(source: LogitsSource, prompt: str | Sequence[int] | torch.Tensor, i: int) -> list[int]:
    if isinstance(prompt, str):
        ids = source.encode(prompt)
    elif isinstance(prompt, (list, tuple)) and all(isinstance(t, int) for t in prompt):
        ids = list(prompt)
    elif isinstance(prompt, torch.Tensor) and prompt.dim() == 1:
        ids = prompt.tolist()
    else:
        raise TypeError(f"prompt {i} must be a string or a list of token ids, got {type(prompt).__name__}")
    if not ids:
        raise ValueError(f"prompt {i} is empty: the model needs at least one token to condition on")
    size = source.vocabulary.size
    bad = [t for t in ids if not 0 <= t < size]
    if bad:
        raise ValueError(f"prompt {i} has token ids outside the vocabulary [0, {size}): {bad[:5]}")
    return ids


def _per_row(name: str, value: _T | Sequence[_T], n: int) -> list[_T]:
    if isinstance(value, (list, tuple)):
        if len(value) != n:
            raise ValueError(f"{name} has {len(value)} values for {n} prompts")
        return list(value)
    return [value] * n


def _stop_bytes(stop: str | Sequence[str] | None) -> list[bytes]:
    if stop is None:
        return []
    items = [stop] if isinstance(stop, str) else list(stop)
    for s in items:
        if not isinstance(s, str) or not s:
            raise ValueError(f"stop strings must be non-empty strings, got {s!r}")
    return [s.encode("utf-8") for s in items]


def _matchers(
    constraint: Constraint | list[Constraint], n: int, vocab: fsm.Vocabulary
) -> list[TokenMatcher | None]:
    per_row = list(constraint) if isinstance(constraint, list) else [constraint] * n
    if len(per_row) != n:
        raise ValueError(f"constraint list has {len(per_row)} entries for {n} prompts")
    compiled: dict[int, CompiledConstraint] = {}
    out: list[TokenMatcher | None] = []
    for c in per_row:
        if c is None:
            out.append(None)
            continue
        index = compiled.get(id(c))
        if index is None:
            index = _as_index(c, vocab)
            compiled[id(c)] = index
        out.append(index.matcher())
    return out


def _as_index(c: Constraint, vocab: fsm.Vocabulary) -> CompiledConstraint:
    if callable(getattr(c, "matcher", None)):
        iv = getattr(c, "vocabulary", None)
        if iv is not None and getattr(iv, "fingerprint", None) != vocab.fingerprint:
            raise fsm.VocabularyError(
                "the constraint was compiled for a different vocabulary than the model's; "
                "compile it with fsm.compile(spec, model.vocabulary)"
            )
        return c
    return fsm.compile(c, vocab)


def _prefill(source: LogitsSource, prompts: list[list[int]]) -> tuple[Session, torch.Tensor]:
    """Open the batch; n copies of one prompt (candidates, self-consistency) are prefilled once."""
    if len(prompts) == 1 or any(p != prompts[0] for p in prompts):
        return source.prefill(prompts)
    session, logits = source.prefill(prompts[:1])
    # selecting row 0 n times copies its KV cache into n rows, as dropping rows selects the rest
    session.keep(torch.zeros(len(prompts), dtype=torch.long))
    return session, logits.expand(len(prompts), -1).clone()


def _pad(rows: list[list[int]], width: int) -> tuple[torch.Tensor, torch.Tensor]:
    out = torch.zeros((len(rows), width), dtype=torch.long)
    for r, ids in enumerate(rows):
        if ids:
            out[r, : len(ids)] = torch.as_tensor(ids, dtype=torch.long)
    return out, torch.as_tensor([len(ids) for ids in rows], dtype=torch.long)


def _utf8_complete_prefix(data: bytes | bytearray, end: int | None = None) -> int:
    """Length of the longest prefix of ``data[:end]`` that does not end inside a UTF-8 character."""
    end = len(data) if end is None else end
    for back in range(1, min(4, end) + 1):
        b = data[end - back]
        if b < 0x80:
            return end  # ASCII: nothing pending
        if b >= 0xC0:  # a lead byte: is its sequence complete?
            need = 2 if b < 0xE0 else 3 if b < 0xF0 else 4
            return end if back >= need else end - back
    return end  # only continuation bytes (invalid UTF-8): let the decoder replace them


def _take_piece(row: _Row, hold: int) -> str:
    """The next UTF-8-safe piece of a row's text, holding back a possible stop-string prefix."""
    if row.finish is not None:
        end = len(row.data) if row.text_end is None else row.text_end
    else:
        end = _utf8_complete_prefix(row.data, max(row.streamed, len(row.data) - hold))
    if end <= row.streamed:
        return ""
    piece = bytes(row.data[row.streamed : end]).decode("utf-8", errors="replace")
    row.streamed = end
    return piece
