"""Truncating a row's distribution before the draw: top-k, top-p, min-p, typical, mirostat v2, and
the inverse-CDF draw itself (`guide.sampling.Sampler` runs them in that order).

Each filter lowers removed logits to -inf, keeps at least the row's best token, and leaves rows where
``enabled`` is False untouched; all are batched over rows with per-row parameters (a tensor each),
so one call serves a batch whose rows sample differently.
"""

from __future__ import annotations

import math

import torch

NEG_INF = float("-inf")


def _apply(logits: torch.Tensor, remove: torch.Tensor, enabled: torch.Tensor | None) -> torch.Tensor:
    if enabled is not None:
        remove &= enabled[:, None]
    return logits.masked_fill(remove, NEG_INF)


def top_k_filter(logits: torch.Tensor, k: torch.Tensor, enabled: torch.Tensor | None) -> torch.Tensor:
    """Keep each row's ``k`` best tokens (``k`` 0: all).

    >>> top_k_filter(torch.tensor([[1.0, 3.0, 2.0]]), torch.tensor([2]), None).isfinite().tolist()
    [[False, True, True]]
    """
    on = k > 0
    kk = k.clamp(min=1, max=logits.shape[-1])
    kmax = int(kk.max())
    top = torch.topk(logits, kmax, dim=-1).values
    thresh = top.gather(1, (kk - 1)[:, None])
    en = on if enabled is None else on & enabled
    return _apply(logits, logits < thresh, en)


_TOP_P_CANDIDATES = (64, 1024)  # nucleus searched among this many best tokens first (sorting is slow on CPU)


def top_p_filter(logits: torch.Tensor, p: torch.Tensor, enabled: torch.Tensor | None) -> torch.Tensor:
    """Nucleus filter: keep the best tokens until their mass reaches ``p`` (at least one).

    >>> top_p_filter(torch.tensor([[0.0, 5.0, 0.0]]), torch.tensor([0.9]), None).isfinite().tolist()
    [[False, True, False]]

    The nucleus is looked for among the top 64, then 1024 candidates with ``topk``; only rows whose
    nucleus is wider still (very flat distributions) pay for a full sort, done as HF's TopPLogitsWarper.
    """
    on = p < 1
    if enabled is not None:
        on = on & enabled
    probs = torch.softmax(logits, dim=-1)
    remove = torch.ones_like(logits, dtype=torch.bool)
    todo = on.nonzero().flatten()
    for k in _TOP_P_CANDIDATES:
        if todo.numel() == 0:
            break
        k = min(k, logits.shape[-1])
        top, idx = probs[todo].topk(k, dim=-1)
        cum = top.cumsum(dim=-1)
        keep_top = (cum - top) < p[todo, None]  # the mass strictly above a token is still short of p
        done = cum[:, -1] >= p[todo]
        if bool(done.all()):
            remove[todo] = remove[todo].scatter_(1, idx, ~keep_top)
            todo = todo[:0]
            break
        rows = todo[done]
        remove[rows] = remove[rows].scatter_(1, idx[done], ~keep_top[done])
        todo = todo[~done]
    if todo.numel():
        sorted_logits, order = torch.sort(logits[todo], dim=-1, descending=False)
        cum_asc = sorted_logits.softmax(dim=-1).cumsum(dim=-1)
        remove_sorted = cum_asc <= (1 - p[todo])[:, None]
        remove_sorted[:, -1] = False
        remove[todo] = remove_sorted.scatter(1, order, remove_sorted)
    return _apply(logits, remove, on)


def min_p_filter(logits: torch.Tensor, p: torch.Tensor, enabled: torch.Tensor | None) -> torch.Tensor:
    """Drop tokens less likely than ``p`` times the row's best.

    >>> min_p_filter(torch.tensor([[0.0, 3.0]]), torch.tensor([0.1]), None).isfinite().tolist()
    [[False, True]]
    """
    on = p > 0
    probs = torch.softmax(logits, dim=-1)
    remove = probs < p[:, None] * probs.max(dim=-1, keepdim=True).values
    en = on if enabled is None else on & enabled
    return _apply(logits, remove, en)


def typical_filter(logits: torch.Tensor, mass: torch.Tensor, enabled: torch.Tensor | None) -> torch.Tensor:
    """Locally typical sampling (Meister et al. 2022), as in HF's TypicalLogitsWarper.

    >>> typical_filter(torch.tensor([[0.0, 0.0, -9.0]]), torch.tensor([0.5]), None).isfinite().tolist()
    [[True, True, False]]
    """
    on = mass < 1
    logp = torch.log_softmax(logits, dim=-1)
    p = logp.exp()
    ent = -(logp * p).nansum(dim=-1, keepdim=True)  # -inf * 0 = nan for banned tokens: skip them
    shifted = (-logp - ent).abs()
    sorted_shift, order = torch.sort(shifted, dim=-1)
    cum = logits.gather(1, order).softmax(dim=-1).cumsum(dim=-1)
    last = (cum < mass[:, None]).sum(dim=1).clamp(max=logits.shape[-1] - 1)
    remove_sorted = sorted_shift > sorted_shift.gather(1, last[:, None])
    remove_sorted[:, 0] = False
    remove = remove_sorted.scatter(1, order, remove_sorted)
    en = on if enabled is None else on & enabled
    return _apply(logits, remove, en)


def mirostat_filter(logits: torch.Tensor, mu: torch.Tensor, enabled: torch.Tensor) -> torch.Tensor:
    """Mirostat v2 (Basu et al. 2021): drop tokens whose surprise -log2 p exceeds the row's mu.

    >>> mirostat_filter(torch.tensor([[0.0, 4.0]]), torch.tensor([1.0]), torch.tensor([True])).isfinite().tolist()
    [[False, True]]
    """
    logp2 = torch.log_softmax(logits, dim=-1) / math.log(2)
    remove = -logp2 > mu[:, None]
    remove.scatter_(1, logits.argmax(dim=-1, keepdim=True), False)
    return _apply(logits, remove, enabled)


def inverse_cdf(probs: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
    """Draw one index per row with uniforms ``u``; never returns a zero-probability index.

    >>> inverse_cdf(torch.tensor([[0.0, 0.5, 0.5]]), torch.tensor([0.75])).tolist()
    [2]
    """
    cdf = probs.cumsum(dim=-1)
    target = (u * cdf[:, -1])[:, None]
    tokens = torch.searchsorted(cdf, target, right=True)[:, 0].clamp_(max=probs.shape[-1] - 1)
    zero = probs.gather(1, tokens[:, None])[:, 0] <= 0
    if bool(zero.any()):  # only when u*total rounds onto the last boundary
        tokens = torch.where(zero, probs.argmax(dim=-1), tokens)
    return tokens
