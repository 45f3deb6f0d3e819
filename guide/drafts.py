"""Draft models for speculative decoding: a smaller model with the target's vocabulary proposes tokens.

`ModelDrafter` keeps the draft model's own batch (its KV cache) beside the target's. Each step it
catches the draft cache up with what the target committed, then proposes up to ``budget`` tokens per
row autoregressively, one batched draft forward pass per drafted position:

* under a constraint a copy of the row's matcher masks every proposal, so a draft never holds a token
  the constraint forbids; it stops at EOS, where the constraint is complete, and (with jump-forward)
  where the constraint forces text, which the loop then jumps over; without jump-forward the forced
  tokens join the draft for free (no draft pass);
* greedy rows propose the draft's argmax; sampled rows draw from the draft's masked distribution ``q``
  at the row's temperature and keep ``q`` for the acceptance rule (`guide.speculative`);
* a watermark's green-list bias is added to ``q`` as it is to the target's distribution.

After the target verified, `settle` cuts the rejected drafted tokens (and the filler fed to rows that
had stopped drafting) from the draft cache, so it again holds a prefix of the committed sequence.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import torch

import fsm

from .constraints import TokenMatcher
from .guidance import shared_width
from .masks import NEG_INF, MaskBuffer, forbid_padding_ids
from .sources import LogitsSource, Session
from .speculative import draw
from .watermark import Watermark, context_tail


@dataclass(eq=False)
class Draft:
    """One row's proposal: the drafted ids and, for sampled rows, the draft distribution ``q`` each
    was drawn from (None for a greedy row; a None entry is a point mass, e.g. a forced token).

    >>> Draft([5, 6]).tokens
    [5, 6]
    """

    tokens: list[int] = field(default_factory=list)
    probs: list[torch.Tensor | None] | None = None


@dataclass(eq=False)
class DraftRow:
    """What drafting needs of one row this step: ``context`` is the prompt plus every committed id,
    ``matcher`` the row's matcher (copied, never advanced), ``budget`` the most tokens to draft.

    >>> DraftRow([1, 2], None, 4, 0.0, None).budget
    4
    """

    context: list[int]
    matcher: TokenMatcher | None
    budget: int
    temperature: float
    generator: torch.Generator | None


class ModelDrafter:
    """Proposes drafts from a draft model sharing the target's vocabulary (see the module docstring).

    >>> drafter = ModelDrafter(model.truncated(10), model.vocabulary, jump_forward=True)   # doctest: +SKIP
    >>> drafter.propose([DraftRow(model.encode("Hi"), None, 4, 0.0, None)])[0].tokens       # doctest: +SKIP
    [28, 1837, 30, 28]
    """

    def __init__(
        self,
        source: LogitsSource,
        vocabulary: fsm.Vocabulary,
        jump_forward: bool,
        watermark: Watermark | None = None,
    ):
        self.source = source
        self.vocab = vocabulary
        self.width = shared_width(vocabulary, source.vocabulary, "draft model")
        self.eos = frozenset(vocabulary.eos_token_ids)
        self.jump_forward = jump_forward
        self.watermark = watermark
        self.session: Session | None = None
        self.masks: MaskBuffer | None = None
        self.synced: list[int] = []  # per row: the committed ids the draft cache holds
        self.fed: list[int] = []  # per row, this step: ids fed after the synced ones (drafted or filler)
        self.fed_drafted: list[int] = []  # per row, this step: drafted ids among them
        self.passes: list[int] = []  # per row, this step: draft forward passes it took part in

    def propose(self, rows: Sequence[DraftRow]) -> list[Draft]:
        """One draft per row (same order as the loop's active rows).

        >>> drafter.propose(rows)   # doctest: +SKIP
        """
        n = len(rows)
        with torch.inference_mode():
            logits = self._catch_up(rows)
            self.fed, self.fed_drafted, self.passes = [0] * n, [0] * n, [1] * n
            matchers = [r.matcher.copy() if r.matcher is not None else None for r in rows]
            drafts = [Draft([], [] if r.temperature > 0 else None) for r in rows]
            going = [
                r.budget > 0 and not (m is not None and m.is_finished())
                for r, m in zip(rows, matchers, strict=True)
            ]
            while True:
                self._pick(logits, rows, matchers, drafts, going)
                if not any(going):
                    break
                feed = [[d.tokens[-1]] if g else [0] for d, g in zip(drafts, going, strict=True)]
                for i, g in enumerate(going):
                    self.fed[i] += 1
                    self.fed_drafted[i] += int(g)
                    self.passes[i] += int(g)
                logits = self.session.decode(torch.as_tensor(feed, dtype=torch.long))  # type: ignore[union-attr]
        for r, m, d in zip(rows, matchers, drafts, strict=True):
            self._forced_tail(r, m, d)
        return drafts

    def settle(self, accepted: Sequence[int]) -> None:
        """Keep the accepted drafted ids in the draft cache and cut everything fed after them.

        >>> drafter.settle([3, 0])   # doctest: +SKIP
        """
        if self.session is None:
            return
        kept = [min(a, f) for a, f in zip(accepted, self.fed_drafted, strict=True)]
        cut = [f - k for f, k in zip(self.fed, kept, strict=True)]
        self.session.forget(torch.as_tensor(cut, dtype=torch.long))  # type: ignore[attr-defined]
        self.synced = [s + k for s, k in zip(self.synced, kept, strict=True)]

    def keep(self, rows: torch.Tensor) -> None:
        """Follow the loop when rows leave the batch (``rows``: the positions kept, increasing).

        >>> drafter.keep(torch.tensor([0, 2]))   # doctest: +SKIP
        """
        if self.session is None:
            return
        self.session.keep(rows)
        keep = rows.tolist()
        self.synced = [self.synced[i] for i in keep]

    def _catch_up(self, rows: Sequence[DraftRow]) -> torch.Tensor:
        """Open the draft batch on the first step, else feed each row what it committed since: the
        draft's logits after the whole committed sequence."""
        if self.session is None:
            self.session, logits = self.source.prefill([r.context for r in rows])
            if not callable(getattr(self.session, "forget", None)):
                raise ValueError(
                    "a draft model must be a guide.Model (its sessions cut rejected tokens); "
                    f"got {type(self.source).__name__}"
                )
            self.masks = MaskBuffer(self.vocab.size, logits.device, len(rows))
        else:
            lacking = [r.context[s:] for r, s in zip(rows, self.synced, strict=True)]
            width = max(len(x) for x in lacking)
            fed = torch.zeros((len(rows), width), dtype=torch.long)
            for i, ids in enumerate(lacking):
                fed[i, : len(ids)] = torch.as_tensor(ids, dtype=torch.long)
            lengths = torch.as_tensor([len(x) for x in lacking], dtype=torch.long)
            logits = self.session.decode(fed, lengths)
        self.synced = [len(r.context) for r in rows]
        return logits

    def _pick(
        self,
        logits: torch.Tensor,
        rows: Sequence[DraftRow],
        matchers: list[TokenMatcher | None],
        drafts: list[Draft],
        going: list[bool],
    ) -> None:
        """Draft one token for every row still drafting; stop rows that are done."""
        live = [i for i, g in enumerate(going) if g]
        if not live:
            return
        z = self._masked(logits, live, rows, matchers, drafts)
        for j, i in enumerate(live):
            r, m, d = rows[i], matchers[i], drafts[i]
            if not bool(torch.isfinite(z[j]).any()):  # the draft cannot score any allowed id
                going[i] = False
                continue
            if r.temperature == 0:
                t = int(z[j].argmax())
            else:
                q = torch.softmax(z[j] / r.temperature, dim=-1)
                t = draw(q, r.generator)
                d.probs.append(q)  # type: ignore[union-attr]
            d.tokens.append(t)
            if m is not None:
                m.advance(t)
            done = t in self.eos or len(d.tokens) >= r.budget
            if m is not None:
                done = done or m.is_finished() or (self.jump_forward and bool(m.forced_bytes()))
            if done:
                going[i] = False

    def _masked(
        self,
        logits: torch.Tensor,
        live: list[int],
        rows: Sequence[DraftRow],
        matchers: list[TokenMatcher | None],
        drafts: list[Draft],
    ) -> torch.Tensor:
        """The live rows' draft logits on the target's vocabulary, masked as the target's will be."""
        z = logits[torch.as_tensor(live, device=logits.device), : self.width].float()
        if self.width < self.vocab.size:  # ids the draft cannot score are never proposed
            z = torch.cat([z, z.new_full((len(live), self.vocab.size - self.width), NEG_INF)], -1)
        forbid_padding_ids(z, self.vocab.n_tokens)
        constrained = [j for j, i in enumerate(live) if matchers[i] is not None]
        if constrained:
            self.masks.apply(z, constrained, [matchers[live[j]] for j in constrained])  # type: ignore[union-attr,misc]
        if self.watermark is not None:
            width = self.watermark.context_width
            contexts = [context_tail(rows[i].context, drafts[i].tokens, width) for i in live]
            z = self.watermark.apply(z, contexts)
        return z

    def _forced_tail(self, row: DraftRow, m: TokenMatcher | None, d: Draft) -> None:
        """Without jump-forward, tokens the constraint then forces join the draft without a draft pass."""
        if m is None or self.jump_forward or (d.tokens and d.tokens[-1] in self.eos):
            return
        room = row.budget - len(d.tokens)
        while room > 0 and not m.is_finished():
            forced = m.forced_tokens()[:room]
            if not forced:
                return
            for t in forced:
                m.advance(t)
                d.tokens.append(t)
                if d.probs is not None:
                    d.probs.append(None)
            room -= len(forced)
