"""Speculative decoding in the batched loop: `SpeculativeRunner` verifies drafts in one forward pass per step.

Each step drafts for every row — by prompt lookup, or from a draft model (`guide.drafts.ModelDrafter`)
in one batch — then feeds each row's committed tokens plus its draft through ``session.extend``,
checks the draft position by position against the row's masked target distribution with the
acceptance rule (`guide.speculative`), commits the accepted prefix and one more token, and cuts the
rejected positions from the KV cache with ``session.forget`` (and from the draft model's); the row's
matcher never sees a rejected token.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Generator, Iterator, Sequence
from typing import Any

import torch

import fsm

from .constraints import Constraint
from .drafts import Draft, DraftRow, ModelDrafter
from .loop import Row, Runner, pad
from .masks import forbid_padding_ids
from .models import Model
from .sampling import SamplingParams, check_logits
from .sources import LogitsSource
from .speculative import SpeculativeOptions, accept_or_resample, choose, prompt_lookup
from .watermark import Watermark, context_tail


class SpeculativeRunner(Runner):
    """A `Runner` whose steps verify drafts (`SpeculativeOptions`): greedy output identical to the
    plain loop's, sampled output distributed as the masked target's.

    >>> SpeculativeRunner(model, ["Copy: ab"], None, 8, None, None, True, {}, SpeculativeOptions("prompt"))  # doctest: +SKIP
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
        speculative: SpeculativeOptions,
        watermark: Watermark | None = None,
    ):
        super().__init__(
            source, prompts, constraint, max_new_tokens, stop, seed, jump_forward, sampling, watermark
        )
        self.speculative = speculative
        check_speculative_sampling(self.params)
        self.drafter = (
            None
            if speculative.draft == "prompt"
            else ModelDrafter(draft_model(speculative, source), self.vocab, jump_forward, watermark)
        )

    def steps(self) -> Iterator[list[Row]]:
        """Sample the first token from the prefill, then verify drafts: one forward pass per step."""
        touched = self.begin()
        if touched:
            yield touched
        if not self.active:
            return
        batch = self.batch
        assert batch is not None, "begin opens the batch before any step"
        if not callable(getattr(batch.session, "extend", None)):
            raise ValueError(
                "draft= needs a source whose sessions can verify drafts and cut rejected tokens "
                f"(a guide.Model); {type(self.source).__name__} cannot"
            )
        # Acceptance draws continue each row's sampler stream: a fresh generator with the same seed
        # would replay the draw that picked the first token, and correlate with it.
        self.draft_len: dict[int, int] = {}
        self.generators = dict(zip((r.index for r in self.active), batch.sampler.generators, strict=True))
        step = self.sample()
        yield step.rows
        pending = step.feeds if step.feeds is not None else [[t] for t in step.tokens.tolist()]
        while True:
            alive = [i for i, r in enumerate(self.active) if r.finish is None]
            if not alive:
                self.active = []
                return
            if len(alive) < len(self.active):
                batch.session.keep(torch.as_tensor(alive, dtype=torch.long))
                if self.drafter is not None:
                    self.drafter.keep(torch.as_tensor(alive, dtype=torch.long))
                self.active = [self.active[i] for i in alive]
                pending = [pending[i] for i in alive]
            pending = yield from self._speculate(pending)

    @torch.inference_mode()
    def _speculate(self, pending: list[list[int]]) -> Generator[list[Row], None, list[list[int]]]:
        """One verify pass: feed each row's committed tokens plus its draft, keep what the target accepts."""
        batch = self.batch
        assert batch is not None and self.speculative is not None
        rows = self.active
        drafts = self._drafts(rows)
        feeds = [p + d.tokens for p, d in zip(pending, drafts, strict=True)]
        fed, lengths = pad(feeds, max(len(f) for f in feeds))
        logits = batch.session.extend(fed, lengths)
        forget, after = [], []
        for i, row in enumerate(rows):
            row.stats.forward_passes += 1
            row.stats.draft_tokens += len(drafts[i].tokens)
            nxt, cut = self._verify(row, logits[i], len(pending[i]) - 1, drafts[i])
            self._adapt_draft_length(row, len(drafts[i].tokens), cut)
            after.append(nxt)
            forget.append(cut)
        batch.session.forget(torch.as_tensor(forget, dtype=torch.long))
        if self.drafter is not None:
            self.drafter.settle([len(d.tokens) - c for d, c in zip(drafts, forget, strict=True)])
        yield rows
        return after

    def _budget(self, row: Row) -> int:
        opts = self.speculative
        return min(self.draft_len.get(row.index, opts.num_draft_tokens), row.max_new - len(row.ids))

    def _drafts(self, rows: list[Row]) -> list[Draft]:
        """Each row's draft: by prompt lookup, or from the draft model in one batch."""
        if self.drafter is None:
            return [Draft(self._draft(r)) for r in rows]
        asks = [
            DraftRow(
                self.prompt_ids[r.index] + r.ids,
                r.matcher,
                self._budget(r),
                self.params[r.index].effective_temperature,
                self.generators[r.index],
            )
            for r in rows
        ]
        drafts = self.drafter.propose(asks)
        for r, passes in zip(rows, self.drafter.passes, strict=True):
            r.stats.draft_forward_passes += passes
        return drafts

    def _adapt_draft_length(self, row: Row, drafted: int, cut: int) -> None:
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

    def _draft(self, row: Row) -> list[int]:
        """Prompt-lookup draft after the committed ids, cut at the first token the constraint forbids
        and at the budget; tokens the constraint then forces join it."""
        opts = self.speculative
        budget = self._budget(row)
        if budget <= 0:
            return []
        context = self.prompt_ids[row.index] + row.ids
        proposal = prompt_lookup(context, budget, opts.max_ngram)
        if row.matcher is None:
            return [t for t in until_eos(proposal, self.eos)]
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

    def _verify(self, row: Row, logits: torch.Tensor, first: int, draft: Draft) -> tuple[list[int], int]:
        """Check ``draft`` against the target; commit the accepted prefix and one more token.

        Returns the row's next pending tokens and how many drafted tokens to cut from the cache."""
        temperature = self.params[row.index].effective_temperature
        generator = self.generators[row.index]
        n_text, token_bytes = self.vocab.n_tokens, self.token_bytes
        tokens = draft.tokens
        for j, d in enumerate(tokens):
            target = self._masked(row, logits[first + j])
            q = draft.probs[j] if draft.probs is not None else None
            accepted, t = accept_or_resample(target, d, temperature, generator, q)
            jumped = self.commit(row, t, token_bytes, n_text)
            if not accepted:
                return [t, *jumped], len(tokens) - j
            row.stats.accepted_draft_tokens += 1
            if row.finish is not None or jumped:
                return jumped, len(tokens) - j - 1
        t = choose(self._masked(row, logits[first + len(tokens)]), temperature, generator)
        return [t, *self.commit(row, t, token_bytes, n_text)], 0

    def _masked(self, row: Row, logits: torch.Tensor) -> torch.Tensor:
        """One position's logits with padding ids and what the row's constraint forbids at -inf, plus
        the watermark's bias seeded by what the row committed so far (as the plain loop adds it)."""
        out = logits[None].clone()
        check_logits(out)
        forbid_padding_ids(out, self.vocab.n_tokens)
        if row.matcher is not None:
            self.batch.masks.apply(out, [0], [row.matcher])  # type: ignore[union-attr]
        if self.watermark is not None:
            context = context_tail(self.prompt_ids[row.index], row.ids, self.watermark.context_width)
            out = self.watermark.apply(out, [context])
        return out[0]


def draft_model(options: SpeculativeOptions, target: LogitsSource) -> LogitsSource:
    """The draft model ``options`` name for ``target``: "layers:N" truncates the target (a
    `guide.Model`), a Hugging Face causal LM is wrapped with the target's tokenizer, a source is used
    as it is (its vocabulary is checked against the target's when drafting starts).

    >>> draft_model(SpeculativeOptions("layers:10"), model).name   # doctest: +SKIP
    '...[:10 layers]'
    """
    layers = options.draft_layers
    if layers is not None:
        if not isinstance(target, Model):
            raise ValueError(
                f'draft="layers:N" truncates the target model, which must be a guide.Model; got '
                f"{type(target).__name__} (pass a draft model instead)"
            )
        return target.truncated(layers)
    draft = options.draft
    if callable(getattr(draft, "prefill", None)):
        return draft  # type: ignore[return-value]
    return Model.from_hf(draft, target.tokenizer)  # type: ignore[arg-type]


def check_speculative_sampling(params: Sequence[SamplingParams]) -> None:
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


def until_eos(tokens: list[int], eos: frozenset[int]) -> list[int]:
    """``tokens`` up to and including the first EOS (nothing is generated after one)."""
    for i, t in enumerate(tokens):
        if t in eos:
            return tokens[: i + 1]
    return tokens
