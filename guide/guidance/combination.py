"""The base of every guidance method (`Combination`: participants, vocabulary checks, prompt memory,
sessions) and what methods share: argument checks and the nucleus truncation."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import torch

from ..masks import NEG_INF
from ..sources import LogitsSource
from .errors import GuidanceError
from .session import GuidedSession, Stack, shared_width
from .views import PromptMemory

# Largest top-k tried before a full sort when cutting a nucleus: the nucleus almost always lies inside.
_NUCLEUS_PROBE = 512


class Combination:
    """Shared machinery: participants, vocabulary checks, prompt memory, sessions."""

    _needs_rescore = False  # whether sessions must get `rescore` after the mask
    _tracks_ids = False  # whether sessions keep each row's token ids (for a classifier)

    def __init__(self, base: LogitsSource, others: dict[str, LogitsSource], fuse: bool):
        self._base = base
        self.fuse = bool(fuse)
        self.vocabulary = base.vocabulary
        self.tokenizer = base.tokenizer
        width = base.vocabulary.size
        for role, src in others.items():
            check_source(src, role)
            width = min(width, shared_width(base.vocabulary, src.vocabulary, role))
        check_source(base, "base")
        self._width = width
        self._memory = PromptMemory()
        self._participants: list[LogitsSource] = [base]

    @property
    def device(self) -> torch.device:
        return self._base.device

    @property
    def needs_rescore(self) -> bool:
        """Whether this method truncates after the constraint mask (its sessions' ``rescore`` must run).

        >>> DExperts(model, pos, neg, base_top_p=0.9).needs_rescore   # doctest: +SKIP
        True
        """
        return self._needs_rescore

    @property
    def tracks_ids(self) -> bool:
        """Whether its sessions keep each row's token ids (a classifier scores the text so far)."""
        return self._tracks_ids

    @property
    def width(self) -> int:
        """The logits columns every participant scores (the shared part of their vocabularies)."""
        return self._width

    def encode(self, text: str) -> list[int]:
        """Token ids of a prompt string, as the base encodes it.

        >>> source.encode("Hello")   # doctest: +SKIP
        [19556]
        """
        ids = list(self._base.encode(text))
        self._memory.remember(ids)
        return ids

    def decode(self, token_ids: Sequence[int]) -> str:
        return self.vocabulary.decode(token_ids).decode("utf-8", errors="replace")

    def chat(self, *args: Any, **kwargs: Any) -> str:
        return self._base.chat(*args, **kwargs)

    def prefill(self, prompts: Sequence[Sequence[int]]) -> tuple[GuidedSession, torch.Tensor]:
        """Open a batch on every participant; return the session and the combined first logits.

        >>> session, logits = source.prefill([[1, 2, 3], [4, 5]])   # doctest: +SKIP
        """
        pairs = [self._memory.split(p) for p in prompts]
        stack, parts = Stack.open(self._participants, pairs, self.fuse)
        return GuidedSession.start(self, stack, pairs, parts)

    def combine(self, parts: list[torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor | None]:
        """(combined logits, state for `truncate`) from each participant's logits, in participant order."""
        raise NotImplementedError

    def truncate(
        self, logits: torch.Tensor, state: torch.Tensor | None, session: GuidedSession
    ) -> torch.Tensor:
        """The method's cut of the masked combined ``logits`` (``-inf`` = removed by the constraint)."""
        return logits


def check_source(src: object, role: str) -> None:
    for attr in ("vocabulary", "tokenizer", "prefill", "encode"):
        if not hasattr(src, attr):
            raise GuidanceError(
                f"the {role} must be a LogitsSource (a guide.Model, Prompted…); it has no {attr!r}"
            )


def finite(name: str, value: float) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise GuidanceError(f"{name} must be a number, got {value!r}") from None
    if not math.isfinite(v):
        raise GuidanceError(f"{name} must be finite, got {value!r}")
    return v


# -- truncations ------------------------------------------------------------------------------------


def nucleus_filter(logits: torch.Tensor, top_p: float) -> torch.Tensor:
    """Keep the smallest set of top tokens whose probability reaches ``top_p`` (the first token that
    crosses ``p`` included; DExperts' filter); the rest become ``-inf``. A new tensor.

    >>> nucleus_filter(torch.log(torch.tensor([[0.5, 0.3, 0.2]])), 0.6).isfinite().tolist()
    [[True, True, False]]
    """
    if top_p >= 1:
        return logits.clone()
    _n, v = logits.shape
    k = min(v, _NUCLEUS_PROBE)
    lse = torch.logsumexp(logits, dim=-1, keepdim=True)
    vals, idx = logits.topk(k, dim=-1)
    cum = (vals - lse).exp().cumsum(dim=-1)
    done = cum[:, -1] > top_p
    if k < v and not bool(done.all()):
        vals, idx = logits.sort(dim=-1, descending=True)
        cum = (vals - lse).exp().cumsum(dim=-1)
    remove = cum > top_p
    remove[:, 1:] = remove[:, :-1].clone()  # shift: the token that crosses p stays
    remove[:, 0] = False
    kept = torch.zeros_like(logits, dtype=torch.bool).scatter_(1, idx, ~remove)
    return logits.masked_fill(~kept, NEG_INF)
