"""The batched generation loop: prefill, decode with the KV cache, masks, sampling, jump-forward, stops.

`Runner` holds one generate call's state; ``steps()`` runs the loop (`guide.generate` and
`guide.stream` drive it):

* prompts are left-padded into one prefill; each decode step feeds one token per row;
* constrained rows are masked from their matcher's packed bitmask before sampling; free rows pay nothing;
* rows that finish (EOS, matcher finished, stop string, length) leave the batch and its KV cache at once;
* jump-forward: when a matcher forces the next bytes, their canonical tokenization (as the tokenizer
  would write them, when the matcher accepts it; else the matcher's own forced tokens) is appended
  without sampling and fed in the same forward pass as the sampled token. The last forced token is
  left for the model to pick, so it can merge with what follows as canonical text would. A pass
  feeds a width chosen by cost (`guide.feed_width`); a longer feed's rest goes into the next passes,
  and its row samples nothing until the whole feed is in.

Speculative decoding runs the same loop with verify steps instead (`guide.speculative_loop`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import torch

import fsm

from .completion import Completion, DecodeStats
from .constraints import Constraint, TokenMatcher
from .feed_width import default_overhead, step_width
from .inputs import budgets, matchers, prompt_ids, stop_bytes
from .masks import MaskBuffer, forbid_padding_ids
from .sampling import Sampler, SamplingParams, check_logits, sampling_params, seed_list
from .sources import LogitsSource, Session
from .watermark import Watermark, context_tail


@dataclass(eq=False)
class Row:
    """One prompt's generation so far: ids, text bytes, matcher, budget, how it finished."""

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
    pending: list[int] = field(default_factory=list)  # booked ids the model has not been fed yet


@dataclass(eq=False)
class Batch:
    """The open batch of one generate call: what the model side needs between steps."""

    session: Session
    sampler: Sampler
    masks: MaskBuffer
    logits: torch.Tensor  # (rows, vocabulary.size): the next-token logits of each active row
    rescore: Callable[[torch.Tensor], torch.Tensor] | None  # a guidance session's post-mask hook


@dataclass(eq=False)
class Step:
    """What one sampling step made: the rows that got tokens, and what the next forward pass feeds."""

    rows: list[Row]  # the rows that were active, in batch order (some may have finished)
    tokens: torch.Tensor  # (rows,) the sampled ids
    feeds: list[list[int]] | None  # per row, the sampled id plus jump-forward ids; None if no row jumped


@dataclass(eq=False)
class Staged:
    """Masks being written into the batch's host buffer ahead of their step, on the worker thread."""

    rows: list[int]  # batch positions of the constrained rows, in the order their masks are staged
    written: Future[int]  # resolves to the number of host rows written (= len(rows))


class Runner:
    """State of one generate call; ``steps()`` runs the loop and yields the rows touched per step.

    ``masks_ahead``: write step t+1's masks on a worker thread while step t's forward pass runs (the
    matchers' states are known once the sampled tokens are committed); same output, faster or not
    by device and free cores (docs/performance.md).
    ``forward_overhead``: a pass's fixed cost in padded positions of the batch, for how wide a pass
    feeds jump-forward tokens (`guide.feed_width`); None: the device's default. ``makespan_feeds``:
    feed wide only where it shortens the batch's remaining passes (`makespan_width`), else at the
    most tokens per cost (`feed_width`); None: on for a CPU, where padding costs like real positions.
    """

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
        watermark: Watermark | None = None,
        masks_ahead: bool = False,
        forward_overhead: float | None = None,
        makespan_feeds: bool | None = None,
    ):
        self.source = source
        device = torch.device(source.device).type
        if forward_overhead is not None and not forward_overhead >= 0:
            raise ValueError(f"forward_overhead must be >= 0, got {forward_overhead!r}")
        self.forward_overhead = default_overhead(device) if forward_overhead is None else forward_overhead
        self.makespan_feeds = device == "cpu" if makespan_feeds is None else makespan_feeds
        self.positions = 0  # positions the decode passes computed, padding included
        self.masks_ahead = masks_ahead
        self.staged: Staged | None = None
        self.worker: ThreadPoolExecutor | None = None
        self.watermark = watermark
        self.vocab = source.vocabulary
        n = len(prompts)
        if n == 0:
            raise ValueError("generate needs at least one prompt")
        self.prompt_ids = [prompt_ids(source, p, i) for i, p in enumerate(prompts)]
        self.stops = stop_bytes(stop)
        self.jump_forward = jump_forward
        max_new = budgets(max_new_tokens, n)
        per_prompt = matchers(constraint, n, self.vocab)
        self.rows = [Row(i, per_prompt[i], max_new[i]) for i in range(n)]
        seeds = seed_list(n, seed)
        self.params: list[SamplingParams] = sampling_params(n, seed=seeds, **sampling)
        self.seeds = seeds
        self.eos = frozenset(self.vocab.eos_token_ids)
        self.token_bytes = self.vocab.tokens
        self.canonical_cache: dict[bytes, list[int] | None] = {}
        # Per-step state: the rows still generating, in batch order, and their open batch.
        self.active: list[Row] = []
        self.batch: Batch | None = None

    # -- the loop ------------------------------------------------------------------------------------
    def steps(self) -> Iterator[list[Row]]:
        """Run the loop; yield the rows that got new tokens after each step (for streaming)."""
        try:
            touched = self.begin()
            if touched:
                yield touched
            while self.active:
                step = self.sample()
                yield step.rows
                self.feed(step)
        finally:
            self.close()

    def close(self) -> None:
        """Stop the mask worker thread, if one was started (waits for masks it is writing)."""
        if self.worker is not None:
            self.worker.shutdown(wait=True)
            self.worker = None
        self.staged = None

    @torch.inference_mode()
    def begin(self) -> list[Row]:
        """Finish rows that need no model call, jump-forward from the start, and prefill."""
        rows = self.rows
        self.active = []
        for row in rows:  # a spec may be complete before any token (e.g. a regex matching "")
            if row.max_new == 0:
                row.finish = "length"
            elif row.matcher is not None and row.matcher.is_finished():
                row.finish = "constraint"
        # Jump-forward from the start: forced leading text goes into the prefill, unless the rows
        # share one prompt, prefilled once (`prefill_batch`): then the starts are their first feeds.
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
        prompts = [self.prompt_ids[r.index] for r in active]
        if starts and len(active) > 1 and all(p == prompts[0] for p in prompts):
            for r in active:
                r.pending = starts.get(r.index, [])
            starts = {}
        session, logits = prefill_batch(
            self.source, [p + starts.get(r.index, []) for p, r in zip(prompts, active, strict=True)]
        )
        if starts:
            fed = [starts.get(r.index, []) for r in active]
            sampler.observe(*pad(fed, max(1, max(len(f) for f in fed))))
        # `rescore` is an optional Session method (see guide.sources), so it is looked up, not called.
        rescore = getattr(session, "rescore", None)
        masks = MaskBuffer(self.vocab.size, logits.device, len(active))
        for r in active:
            r.stats.forward_passes += 1
        self.batch = Batch(session, sampler, masks, logits, rescore)
        self.active = active
        return touched

    @torch.inference_mode()
    def sample(self) -> Step:
        """Mask, sample and book one token per active row (plus any jump-forward tokens)."""
        batch = self.batch
        assert batch is not None, "_begin opens the batch before any step"
        active, logits = self.active, batch.logits
        n_text = self.vocab.n_tokens
        token_bytes = self.token_bytes
        # Masks are written on the host before anything reads the logits: on a GPU the forward pass
        # is still running until check_logits waits for it, so this work overlaps it.
        staged, self.staged = self.staged, None
        if staged is not None:
            constrained, n = staged.rows, staged.written.result()
        else:
            constrained = [i for i, r in enumerate(active) if r.matcher is not None]
            n = batch.masks.stage([active[i].matcher for i in constrained])
        check_logits(logits)
        forbid_padding_ids(logits, n_text)
        if constrained:
            batch.masks.apply_staged(logits, constrained, n)
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
            if row.pending:  # its last pass stopped inside its feed: these logits are not its next token's
                if feeds is None:
                    feeds = [[s] for s in sampled]
                feeds[i], row.pending = row.pending, []
                continue
            row.logprob += chosen[i]
            jumped = self.commit(row, t, token_bytes, n_text)
            if jumped:
                if feeds is None:
                    feeds = [[s] for s in sampled]
                feeds[i].extend(jumped)
        return Step(active, tokens, feeds)

    def commit(self, row: Row, t: int, token_bytes: Sequence[bytes | None], n_text: int) -> list[int]:
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

    @torch.inference_mode()
    def feed(self, step: Step) -> None:
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
        if self.masks_ahead:
            self._stage_ahead(batch)
        if feeds is None:
            fed = tokens[:, None]
            self.positions += len(self.active)
            batch.logits = batch.session.decode(fed)
            batch.sampler.observe(fed)
        else:
            left = [r.max_new - len(r.ids) for r in self.active]
            width = step_width([len(f) for f in feeds], left, self.forward_overhead, self.makespan_feeds)
            self.positions += len(self.active) * width
            for row, f in zip(self.active, feeds, strict=True):
                row.pending = f[width:]
            fed, lengths = pad([f[:width] for f in feeds], width)
            batch.logits = batch.session.decode(fed, lengths)
            batch.sampler.observe(fed, lengths)

    def _stage_ahead(self, batch: Batch) -> None:
        """Start writing the next step's masks on the worker thread; `sample` waits for them."""
        rows = [i for i, r in enumerate(self.active) if r.matcher is not None]
        if not rows:
            return
        if self.worker is None:
            self.worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="guide-masks")
        matchers = [self.active[i].matcher for i in rows]
        self.staged = Staged(rows, self.worker.submit(batch.masks.stage, matchers))

    # -- per-row bookkeeping -------------------------------------------------------------------------
    def _append_bytes(self, row: Row, data: bytes | None) -> None:
        if not data:
            return
        start = len(row.data)
        row.data += data
        if self.stops and row.text_end is None:
            for s in self.stops:
                at = row.data.find(s, max(0, start - len(s) + 1))
                if at >= 0 and (row.text_end is None or at < row.text_end):
                    row.text_end = at

    def _check_done(self, row: Row) -> bool:
        if row.text_end is not None:
            row.finish = "stop"
        elif row.matcher is not None and row.matcher.is_finished():
            row.finish = "constraint"
        elif len(row.ids) >= row.max_new:
            row.finish = "length"
        return row.finish is not None

    def _jump(self, row: Row) -> list[int]:
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
        cut = utf8_complete_prefix(forced)
        ids = None
        if cut:
            try:  # forced bytes may start inside a character the model already began
                text = forced[:cut].decode("utf-8")
                ids = list(self.source.tokenizer.encode(text, add_special_tokens=False))
            except Exception:  # broad on purpose: not text, or a tokenizer that cannot encode it
                ids = None  # the matcher's own forced tokens are used instead
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


# -- helpers -------------------------------------------------------------------------------------


def prefill_batch(source: LogitsSource, prompts: list[list[int]]) -> tuple[Session, torch.Tensor]:
    """Open the batch; n copies of one prompt (candidates, self-consistency) are prefilled once."""
    if len(prompts) == 1 or any(p != prompts[0] for p in prompts):
        return source.prefill(prompts)
    session, logits = source.prefill(prompts[:1])
    # selecting row 0 n times copies its KV cache into n rows, as dropping rows selects the rest
    session.keep(torch.zeros(len(prompts), dtype=torch.long))
    return session, logits.expand(len(prompts), -1).clone()


def pad(rows: list[list[int]], width: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Right-pad token lists into one ``(rows, width)`` tensor, with each row's length.

    >>> pad([[1, 2], [3]], 2)[1].tolist()
    [2, 1]
    """
    out = torch.zeros((len(rows), width), dtype=torch.long)
    for r, ids in enumerate(rows):
        if ids:
            out[r, : len(ids)] = torch.as_tensor(ids, dtype=torch.long)
    return out, torch.as_tensor([len(ids) for ids in rows], dtype=torch.long)


def utf8_complete_prefix(data: bytes | bytearray, end: int | None = None) -> int:
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
