"""The guidance methods that combine models' logits: `DExperts`, `ProxyTuning`,
`ClassifierFreeGuidance` and `Contrastive`."""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch

from ..masks import NEG_INF
from ..sources import LogitsSource
from .combination import Combination, finite, nucleus_filter
from .errors import GuidanceError
from .session import GuidedSession
from .views import Unconditional


class DExperts(Combination):
    """DExperts (Liu et al. 2021):
    ``z = top_p_filter(z_base, base_top_p) + alpha * (z_expert - z_antiexpert)``.

    The nucleus is cut from the base's distribution over the tokens the constraint allows.
    ``base_top_p=1`` disables it; negative ``alpha`` steers away from the expert; ``alpha=0`` skips the
    expert forwards (with ``base_top_p=1`` it is exactly the base).

    >>> model = guide.load()                                                               # doctest: +SKIP
    >>> pos = Prompted(model, "A happy review:\\n")                                        # doctest: +SKIP
    >>> neg = Prompted(model, "An angry review:\\n")                                       # doctest: +SKIP
    >>> guide.generate(DExperts(model, pos, neg, alpha=2.0), "The food", max_new_tokens=10)  # doctest: +SKIP
    """

    def __init__(
        self,
        base: LogitsSource,
        expert: LogitsSource,
        antiexpert: LogitsSource,
        alpha: float = 2.0,
        base_top_p: float = 0.9,
        *,
        fuse: bool = True,
    ):
        super().__init__(base, {"expert": expert, "antiexpert": antiexpert}, fuse)
        self.expert, self.antiexpert = expert, antiexpert
        self.alpha = finite("alpha", alpha)
        self.base_top_p = finite("base_top_p", base_top_p)
        if not 0 < self.base_top_p <= 1:
            raise GuidanceError(f"base_top_p must be in (0, 1], got {base_top_p!r}")
        if self.alpha != 0:
            self._participants = [base, expert, antiexpert]
        self._needs_rescore = self.base_top_p < 1

    def combine(self, parts: list[torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor | None]:
        base = parts[0]
        z = base if self.alpha == 0 else base + self.alpha * (parts[1] - parts[2])
        return z, base

    def truncate(self, logits: torch.Tensor, base: torch.Tensor, session: GuidedSession) -> torch.Tensor:
        allowed = logits[:, : base.shape[-1]] != NEG_INF
        nucleus = nucleus_filter(base.masked_fill(~allowed, NEG_INF), self.base_top_p)
        cut = torch.ones_like(logits, dtype=torch.bool)
        cut[:, : base.shape[-1]] = nucleus == NEG_INF
        return logits.masked_fill(cut, NEG_INF)


class ProxyTuning(Combination):
    """Proxy-tuning (Liu et al. 2024): ``z = z_base + alpha * (z_expert - z_antiexpert)``, e.g. a large
    untuned base steered by a small tuned expert and its untuned anti-expert. Each participant may
    format the prompt its own way (``Prompted(expert, chat=True)``); only generated ids are shared, and
    the experts' logits are truncated to the base vocabulary.

    >>> ProxyTuning(big_base, Prompted(small_chat, chat=True), small_base, alpha=1.0)   # doctest: +SKIP
    """

    def __init__(
        self,
        base: LogitsSource,
        expert: LogitsSource,
        antiexpert: LogitsSource,
        alpha: float = 1.0,
        *,
        fuse: bool = True,
    ):
        super().__init__(base, {"expert": expert, "antiexpert": antiexpert}, fuse)
        self.expert, self.antiexpert = expert, antiexpert
        self.alpha = finite("alpha", alpha)
        if self.alpha != 0:
            self._participants = [base, expert, antiexpert]

    def combine(self, parts: list[torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor | None]:
        if self.alpha == 0:
            return parts[0], None
        return parts[0] + self.alpha * (parts[1] - parts[2]), None


class ClassifierFreeGuidance(Combination):
    """Classifier-free guidance (Sanchez et al. 2023):
    ``scale * (logsoftmax(z_cond) - logsoftmax(z_uncond)) + logsoftmax(z_uncond)``.

    The unconditional branch sees only the prompt's last token (and, like the conditional one, every
    generated token), or ``negative_prompt`` instead of the prompt. ``scale=1`` is exactly the model
    (no second branch is run).

    >>> cfg = ClassifierFreeGuidance(model, scale=1.5)                       # doctest: +SKIP
    >>> guide.generate(cfg, "Write about the sea:", max_new_tokens=12)      # doctest: +SKIP
    """

    def __init__(
        self,
        model: LogitsSource,
        negative_prompt: str | Sequence[int] | None = None,
        scale: float = 1.5,
        *,
        fuse: bool = True,
    ):
        super().__init__(model, {}, fuse)
        self.model = model
        self.scale = finite("scale", scale)
        neg: list[int] | None = None
        if isinstance(negative_prompt, str):
            neg = list(model.encode(negative_prompt)) if negative_prompt else None
        elif negative_prompt is not None:
            neg = [int(t) for t in negative_prompt]
            bad = [t for t in neg if not 0 <= t < model.vocabulary.size]
            if bad:
                raise GuidanceError(f"negative_prompt has token ids outside the vocabulary: {bad[:5]}")
        self.negative_ids = neg
        if self.scale != 1:
            self._participants = [model, Unconditional(model, neg)]

    def combine(self, parts: list[torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor | None]:
        if self.scale == 1:
            return parts[0], None
        cond = torch.log_softmax(parts[0], dim=-1)
        uncond = torch.log_softmax(parts[1], dim=-1)
        return self.scale * (cond - uncond) + uncond, None


class Contrastive(Combination):
    """Contrastive decoding (Li et al. 2023): among tokens with ``p_exp >= alpha * max p_exp`` (over the
    tokens the constraint allows), score ``logp_exp - beta * logp_ama``; the rest ``-inf``.
    ``beta=0`` is the expert alone (argmax unchanged; the amateur is not run).

    >>> Contrastive(guide.load("big"), guide.load("small"), alpha=0.1)   # doctest: +SKIP
    """

    def __init__(
        self,
        expert: LogitsSource,
        amateur: LogitsSource,
        alpha: float = 0.1,
        beta: float = 1.0,
        *,
        fuse: bool = True,
    ):
        super().__init__(expert, {"amateur": amateur}, fuse)
        self.expert, self.amateur = expert, amateur
        self.alpha = finite("alpha", alpha)
        self.beta = finite("beta", beta)
        if not 0 <= self.alpha <= 1:
            raise GuidanceError(f"alpha (plausibility threshold) must be in [0, 1], got {alpha!r}")
        if self.beta != 0:
            self._participants = [expert, amateur]
        self._needs_rescore = self.alpha > 0

    def combine(self, parts: list[torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor | None]:
        if self.beta == 0:
            return parts[0], parts[0]
        expert = torch.log_softmax(parts[0], dim=-1)
        return expert - self.beta * torch.log_softmax(parts[1], dim=-1), parts[0]

    def truncate(self, logits: torch.Tensor, expert: torch.Tensor, session: GuidedSession) -> torch.Tensor:
        w = expert.shape[-1]
        z = expert.masked_fill(logits[:, :w] == NEG_INF, NEG_INF)
        head = z >= z.max(dim=-1, keepdim=True).values + math.log(self.alpha)
        cut = torch.ones_like(logits, dtype=torch.bool)
        cut[:, :w] = ~head
        return logits.masked_fill(cut, NEG_INF)
