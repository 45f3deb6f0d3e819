"""Speculative decoding in the batched loop: `SpeculativeRunner` verifies drafts in one forward pass per step.

Each step feeds every row's committed tokens plus a draft (`guide.speculative` for the drafting and the
acceptance rule) through ``session.extend``, checks the draft position by position against the row's
masked target distribution, commits the accepted prefix and one more token, and cuts the rejected
positions from the KV cache with ``session.forget``; the row's matcher never sees a rejected token.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Generator, Iterator, Sequence
from typing import Any

import torch

import fsm

from .constraints import Constraint
from .loop import Row, Runner, pad
from .masks import forbid_padding_ids
from .sampling import SamplingParams, check_logits
from .sources import LogitsSource
from .speculative import SpeculativeOptions, accept_or_resample, choose, prompt_lookup
from .watermark import Watermark


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
                self.active = [self.active[i] for i in alive]
                pending = [pending[i] for i in alive]
            pending = yield from self._speculate(pending)

    @torch.inference_mode()
    def _speculate(self, pending: list[list[int]]) -> Generator[list[Row], None, list[list[int]]]:
        """One verify pass: feed each row's committed tokens plus its draft, keep what the target accepts."""
        batch = self.batch
        assert batch is not None and self.speculative is not None
        rows = self.active
        drafts = [self._draft(r, p) for r, p in zip(rows, pending, strict=True)]
        feeds = [p + d for p, d in zip(pending, drafts, strict=True)]
        fed, lengths = pad(feeds, max(len(f) for f in feeds))
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

    def _draft(self, row: Row, pending: list[int]) -> list[int]:
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

    def _verify(self, row: Row, logits: torch.Tensor, first: int, draft: list[int]) -> tuple[list[int], int]:
        """Check ``draft`` against the target; commit the accepted prefix and one more token.

        Returns the row's next pending tokens and how many drafted tokens to cut from the cache."""
        temperature = self.params[row.index].effective_temperature
        generator = self.generators[row.index]
        n_text, token_bytes = self.vocab.n_tokens, self.token_bytes
        for j, d in enumerate(draft):
            target = self._masked(row, logits[first + j])
            accepted, t = accept_or_resample(target, d, temperature, generator)
            jumped = self.commit(row, t, token_bytes, n_text)
            if not accepted:
                return [t, *jumped], len(draft) - j
            row.stats.accepted_draft_tokens += 1
            if row.finish is not None or jumped:
                return jumped, len(draft) - j - 1
        t = choose(self._masked(row, logits[first + len(draft)]), temperature, generator)
        return [t, *self.commit(row, t, token_bytes, n_text)], 0

    def _masked(self, row: Row, logits: torch.Tensor) -> torch.Tensor:
        """One position's logits with padding ids and what the row's constraint forbids at -inf."""
        out = logits[None].clone()
        check_logits(out)
        forbid_padding_ids(out, self.vocab.n_tokens)
        if row.matcher is not None:
            self.batch.masks.apply(out, [0], [row.matcher])  # type: ignore[union-attr]
        return out[0]


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
