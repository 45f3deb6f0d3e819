"""Speculative decoding's pieces: drafting by prompt lookup, and the acceptance rule.

The loop (`guide.generate` with ``draft=``) feeds each row's committed tokens plus a draft in one
forward pass (``session.extend``), checks the draft position by position against the target's
*masked* distribution, commits the accepted prefix and one more token, and cuts the rejected
positions from the KV cache (``session.forget``); the row's matcher never sees a rejected token.

The speculative-sampling rule of Leviathan et al. (2023) and Chen et al. (2023): accept a drafted
token ``d`` with probability ``min(1, p(d) / q(d))``, else draw from the normalized ``max(0, p - q)``,
where ``p`` is the constrained target's distribution (mask, watermark bias, then temperature) and ``q``
the draft's. Each committed token is then distributed exactly as ``p``. A draft model (`guide.drafts`)
samples ``d`` from its own masked ``q``; prompt lookup is deterministic, so ``q`` is a point mass on
``d`` and the rule becomes: accept ``d`` with probability ``p(d)``, else draw from ``p`` with ``d``
removed. Greedy rows accept ``d`` exactly when it is the target's argmax.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

DRAFTS = ("prompt", "layers:N")


@dataclass(frozen=True)
class SpeculativeOptions:
    """How one call drafts: ``draft`` is "prompt" (n-gram lookup in the prompt and the output so far),
    "layers:N" (the target `guide.Model` truncated to its first N layers, `Model.truncated`), or a draft
    model sharing the target's vocabulary (a `guide.Model`, or a Hugging Face causal LM, which gets the
    target's tokenizer); ``num_draft_tokens`` per step, n-gram sizes tried from ``max_ngram`` down to 1.

    >>> SpeculativeOptions("prompt", 8).num_draft_tokens
    8
    >>> SpeculativeOptions("layers:10").draft_layers
    10
    """

    draft: object
    num_draft_tokens: int = 8
    max_ngram: int = 3

    def __post_init__(self) -> None:
        if isinstance(self.draft, str) and self.draft != "prompt" and self.draft_layers is None:
            raise ValueError(f"draft must be one of {DRAFTS} or a draft model, got {self.draft!r}")
        is_model = callable(getattr(self.draft, "forward", None)) or callable(
            getattr(self.draft, "prefill", None)
        )
        if not isinstance(self.draft, str) and not is_model:
            raise ValueError(f"draft must be one of {DRAFTS} or a draft model, got {self.draft!r}")
        if not isinstance(self.num_draft_tokens, int) or self.num_draft_tokens < 1:
            raise ValueError(f"num_draft_tokens must be an int >= 1, got {self.num_draft_tokens!r}")

    @property
    def draft_layers(self) -> int | None:
        """N of a "layers:N" draft (an int >= 1), else None."""
        head, _, n = self.draft.partition(":") if isinstance(self.draft, str) else ("", "", "")
        return int(n) if head == "layers" and n.isdigit() and int(n) >= 1 else None


def prompt_lookup(context: Sequence[int], k: int, max_ngram: int = 3) -> list[int]:
    """Up to ``k`` tokens that followed the first earlier occurrence of the longest (≤ ``max_ngram``)
    suffix of ``context`` — HF's prompt-lookup rule; ``[]`` when no suffix recurs.

    >>> prompt_lookup([5, 6, 7, 8, 9, 1, 5, 6], k=3)
    [7, 8, 9]
    """
    seq = np.asarray(context, dtype=np.int64)
    n = len(seq)
    for size in range(min(max_ngram, n - 1), 0, -1):
        tail = seq[n - size :]
        windows = np.lib.stride_tricks.sliding_window_view(seq[: n - 1], size)
        hits = np.flatnonzero((windows == tail).all(axis=1))
        for start in hits:
            begin = int(start) + size
            if begin < n:
                return seq[begin : min(begin + k, n)].tolist()
    return []


def choose(logits: torch.Tensor, temperature: float, generator: torch.Generator | None) -> int:
    """One token from masked ``logits`` (a row): the argmax when ``temperature`` is 0, else a draw.

    >>> choose(torch.tensor([0.0, 2.0, float("-inf")]), 0.0, None)
    1
    """
    if temperature == 0:
        return int(logits.argmax())
    probs = torch.softmax(logits.float() / temperature, dim=-1)
    return draw(probs, generator)


def accept_or_resample(
    logits: torch.Tensor,
    drafted: int,
    temperature: float,
    generator: torch.Generator | None,
    q: torch.Tensor | None = None,
) -> tuple[bool, int]:
    """Check one drafted token against masked target ``logits``: ``(True, drafted)`` if accepted,
    else ``(False, t)`` with ``t`` drawn from the residual ``max(0, p - q)`` (see the module
    docstring). ``q``: the draft distribution ``drafted`` was drawn from; None = a point mass on it.

    >>> accept_or_resample(torch.tensor([0.0, 3.0]), 1, 0.0, None)
    (True, 1)
    """
    if temperature == 0:
        best = int(logits.argmax())
        return best == drafted, best
    probs = torch.softmax(logits.float() / temperature, dim=-1)
    p = float(probs[drafted])
    qd = 1.0 if q is None else float(q[drafted])
    if float(torch.rand((), generator=generator)) * qd < p:
        return True, drafted
    if q is None:
        probs[drafted] = 0.0
    else:
        residual = (probs - q.to(probs.device)).clamp_(min=0.0)
        if float(residual.sum()) > 0:  # else p == q up to rounding: p itself is the residual's limit
            probs = residual
    return False, draw(probs, generator)


def draw(probs: torch.Tensor, generator: torch.Generator | None) -> int:
    """Inverse-CDF draw from (possibly unnormalized) probabilities.

    >>> draw(torch.tensor([0.0, 2.0, 0.0]), None)
    1
    """
    cdf = probs.cumsum(-1)
    u = float(torch.rand((), generator=generator)) * float(cdf[-1])
    return min(int(torch.searchsorted(cdf, torch.tensor([u], dtype=cdf.dtype), right=True)), len(probs) - 1)
