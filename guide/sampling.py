"""Choosing the next token from (already masked) logits, with per-row parameters and per-row seeds.

Order per step: logit bias, repetition / frequency / presence penalties, then greedy argmax or
temperature -> top-k -> top-p -> min-p -> typical (or mirostat v2) -> draw. All of this runs after
the constraint mask, and every step only ever lowers masked logits further, so a constrained row
can never draw a token its matcher disallowed; a row left with no finite logit raises
`SamplingError` instead of drawing garbage.

Defaults: ``temperature=None`` means greedy unless some sampling parameter (``top_k``, ``top_p``,
``min_p``, ``typical_p``, ``mirostat_tau``) or a ``seed`` is given, in which case it means 1.0.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any

import torch

from .truncation import inverse_cdf, min_p_filter, mirostat_filter, top_k_filter, top_p_filter, typical_filter

NEG_INF = float("-inf")


class SamplingError(ValueError):
    """Bad sampling parameters, or parameters that leave a row with no token to draw."""


class InvalidLogitsError(RuntimeError):
    """The logits source produced NaN or +inf logits (a broken model, dtype overflow, bad guidance)."""


@dataclass(frozen=True)
class SamplingParams:
    """One row's decoding parameters (see the module docstring for defaults and order).

    >>> SamplingParams(temperature=0.7, top_p=0.9).greedy
    False
    """

    temperature: float | None = None
    top_k: int = 0
    top_p: float = 1.0
    min_p: float = 0.0
    typical_p: float = 1.0
    mirostat_tau: float | None = None
    mirostat_eta: float = 0.1
    repetition_penalty: float = 1.0
    frequency_penalty: float = 0.0
    presence_penalty: float = 0.0
    logit_bias: dict[int, float] | None = None

    @property
    def effective_temperature(self) -> float:
        if self.temperature is not None:
            return float(self.temperature)
        sampling = self.top_k or self.top_p < 1 or self.min_p > 0 or self.typical_p < 1
        return 1.0 if sampling or self.mirostat_tau is not None else 0.0

    @property
    def greedy(self) -> bool:
        return self.effective_temperature == 0.0

    def validate(self, where: str, vocab_size: int) -> None:
        def bad(msg: str) -> SamplingError:
            return SamplingError(f"{where}: {msg}")

        if self.temperature is not None and not (math.isfinite(self.temperature) and self.temperature >= 0):
            raise bad(f"temperature must be a finite number >= 0 (0 = greedy), got {self.temperature}")
        if not isinstance(self.top_k, int) or self.top_k < 0:
            raise bad(f"top_k must be an int >= 0 (0 = off), got {self.top_k!r}")
        if not 0 < self.top_p <= 1:
            raise bad(f"top_p must be in (0, 1], got {self.top_p}")
        if not 0 <= self.min_p < 1:
            raise bad(f"min_p must be in [0, 1), got {self.min_p}")
        if not 0 < self.typical_p <= 1:
            raise bad(f"typical_p must be in (0, 1], got {self.typical_p}")
        if self.mirostat_tau is not None and not (math.isfinite(self.mirostat_tau) and self.mirostat_tau > 0):
            raise bad(f"mirostat_tau must be > 0, got {self.mirostat_tau}")
        if not (math.isfinite(self.mirostat_eta) and self.mirostat_eta > 0):
            raise bad(f"mirostat_eta must be > 0, got {self.mirostat_eta}")
        if not (math.isfinite(self.repetition_penalty) and self.repetition_penalty > 0):
            raise bad(f"repetition_penalty must be > 0 (1 = off), got {self.repetition_penalty}")
        for name in ("frequency_penalty", "presence_penalty"):
            if not math.isfinite(getattr(self, name)):
                raise bad(f"{name} must be finite, got {getattr(self, name)}")
        if self.logit_bias is not None:
            if not isinstance(self.logit_bias, dict):
                raise bad(
                    f"logit_bias must be a dict {{token_id: bias}}, got {type(self.logit_bias).__name__}"
                )
            for tok, b in self.logit_bias.items():
                if not isinstance(tok, int) or not 0 <= tok < vocab_size:
                    raise bad(f"logit_bias token id {tok!r} is outside the vocabulary [0, {vocab_size})")
                if math.isnan(b) or b == float("inf"):
                    raise bad(f"logit_bias for token {tok} must be finite or -inf, got {b}")


_PARAM_NAMES = tuple(f.name for f in fields(SamplingParams))


def sampling_params(
    n_rows: int, seed: int | Sequence[int | None] | None = None, **sampling: Any
) -> list[SamplingParams]:
    """Per-row `SamplingParams` from keyword arguments that are scalars (all rows) or per-row lists.

    >>> [p.effective_temperature for p in sampling_params(2, temperature=[0, 0.5])]
    [0.0, 0.5]
    """
    unknown = set(sampling) - set(_PARAM_NAMES)
    if unknown:
        raise TypeError(f"unknown sampling parameter(s) {sorted(unknown)}; known: {', '.join(_PARAM_NAMES)}")
    per_row: list[dict[str, Any]] = [{} for _ in range(n_rows)]
    for name, value in sampling.items():
        if value is None:
            continue
        is_list = isinstance(value, (list, tuple)) and not (name == "logit_bias" and isinstance(value, dict))
        if is_list:
            if len(value) != n_rows:
                raise SamplingError(f"{name} has {len(value)} values for {n_rows} prompts")
            for r, v in enumerate(value):
                if v is not None:
                    per_row[r][name] = v
        else:
            for r in range(n_rows):
                per_row[r][name] = value
    seeds = seed_list(n_rows, seed)
    out = []
    for r, kw in enumerate(per_row):
        if seeds[r] is not None and "temperature" not in kw and SamplingParams(**kw).greedy:
            kw["temperature"] = 1.0  # a seed asks for sampling
        out.append(SamplingParams(**kw))
    return out


def seed_list(n_rows: int, seed: int | Sequence[int | None] | None) -> list[int | None]:
    """Row seeds: an int gives rows ``seed, seed+1, …``; a list gives one per row.

    >>> seed_list(3, 7)
    [7, 8, 9]
    """
    if seed is None:
        return [None] * n_rows
    if isinstance(seed, int):
        return [seed + r for r in range(n_rows)]
    seeds = list(seed)
    if len(seeds) != n_rows:
        raise SamplingError(f"seed has {len(seeds)} values for {n_rows} prompts")
    return seeds


def check_logits(logits: torch.Tensor) -> None:
    """Raise `InvalidLogitsError` if any logit is NaN or +inf (-inf is a legitimate ban).

    One reduction in the common case; the detailed scan only runs when the sum is not finite.
    """
    total = logits.sum()
    if bool(torch.isfinite(total)):
        return
    nan_rows = torch.isnan(logits).any(dim=-1)
    pinf_rows = (logits == float("inf")).any(dim=-1)
    bad = (nan_rows | pinf_rows).nonzero().flatten().tolist()
    if bad:
        kind = "NaN" if bool(nan_rows.any()) else "+inf"
        raise InvalidLogitsError(
            f"the logits source returned {kind} logits for batch row(s) {bad}; the model or its dtype "
            "is producing invalid values (try float32, or check the guidance weights)"
        )


class Sampler:
    """Per-row decoding state for one generate call: parameters, RNGs, penalty counts, mirostat mu.

    ``sampler(logits)`` picks one token per row (modifying ``logits`` in place); ``observe`` records
    tokens for the penalties; ``keep`` drops finished rows in step with the session.

    >>> s = Sampler([SamplingParams()], vocab_size=4, device=torch.device("cpu"))
    >>> s(torch.tensor([[0.0, 3.0, 1.0, -1.0]])).tolist()
    [1]
    """

    def __init__(
        self,
        params: Sequence[SamplingParams],
        vocab_size: int,
        device: torch.device,
        seeds: Sequence[int | None] | None = None,
        prompts: Sequence[Sequence[int]] | None = None,
    ):
        n = len(params)
        self.vocab_size, self.device = vocab_size, device
        for r, p in enumerate(params):
            p.validate(f"row {r}", vocab_size)
        seeds = list(seeds) if seeds is not None else [None] * n
        self.rows = list(range(n))  # original row of each compact position, for error messages
        f32 = {"dtype": torch.float32, "device": device}
        temps = [p.effective_temperature for p in params]
        self.greedy = torch.tensor([t == 0 for t in temps], device=device)
        self.temperature = torch.tensor([t if t > 0 else 1.0 for t in temps], **f32)[:, None]
        self.top_k = torch.tensor([p.top_k for p in params], dtype=torch.long, device=device)
        self.top_p = torch.tensor([p.top_p for p in params], **f32)
        self.min_p = torch.tensor([p.min_p for p in params], **f32)
        self.typical_p = torch.tensor([p.typical_p for p in params], **f32)
        self.mirostat = torch.tensor(
            [p.mirostat_tau is not None and t > 0 for p, t in zip(params, temps, strict=True)], device=device
        )
        self.tau = torch.tensor([p.mirostat_tau or 0.0 for p in params], **f32)
        self.eta = torch.tensor([p.mirostat_eta for p in params], **f32)
        self.mu = 2 * self.tau
        self.generators: list[torch.Generator | None] = []
        for s, t in zip(seeds, temps, strict=True):
            if t == 0:
                self.generators.append(None)
                continue
            g = torch.Generator()
            g.manual_seed(int(s) if s is not None else int(torch.randint(0, 2**62, (1,))))
            self.generators.append(g)
        self.rep = None
        if any(p.repetition_penalty != 1 for p in params):
            self.rep = torch.tensor([p.repetition_penalty for p in params], **f32)[:, None]
            self.seen = torch.zeros((n, vocab_size), dtype=torch.bool, device=device)
            for r, prompt in enumerate(prompts or []):
                if prompt:
                    self.seen[r, torch.as_tensor(list(prompt), dtype=torch.long, device=device)] = True
        self.counts = None
        if any(p.frequency_penalty or p.presence_penalty for p in params):
            self.freq = torch.tensor([p.frequency_penalty for p in params], **f32)[:, None]
            self.pres = torch.tensor([p.presence_penalty for p in params], **f32)[:, None]
            self.counts = torch.zeros((n, vocab_size), **f32)
        self.bias = None
        if any(p.logit_bias for p in params):
            self.bias = torch.zeros((n, vocab_size), **f32)
            for r, p in enumerate(params):
                for tok, b in (p.logit_bias or {}).items():
                    self.bias[r, tok] = b
        self._refresh()

    def _refresh(self) -> None:
        """Recompute which filters are active after construction or compaction."""
        sampled = ~self.greedy
        self.any_top_k = bool((self.top_k[sampled] > 0).any())
        self.any_top_p = bool((self.top_p[sampled] < 1).any())
        self.any_min_p = bool((self.min_p[sampled] > 0).any())
        self.any_typical = bool((self.typical_p[sampled] < 1).any())
        self.any_mirostat = bool(self.mirostat.any())
        self.sampled_rows = sampled.nonzero().flatten()
        self.sampled_list = self.sampled_rows.tolist()
        self.n_sampled = len(self.sampled_list)

    # -- per step ---------------------------------------------------------------------------------
    def __call__(self, logits: torch.Tensor) -> torch.Tensor:
        """One token id per row (int64 tensor on the logits' device); ``logits`` may be modified in place."""
        if self.bias is not None:
            logits += self.bias
        if self.rep is not None:
            penalized = torch.where(logits < 0, logits * self.rep, logits / self.rep)
            logits = torch.where(self.seen, penalized, logits)
        if self.counts is not None:
            logits -= self.counts * self.freq + (self.counts > 0).float() * self.pres
        tokens = logits.argmax(dim=-1)
        best = logits.gather(1, tokens[:, None])
        if bool((best == NEG_INF).any()):
            rows = [self.rows[i] for i in (best[:, 0] == NEG_INF).nonzero().flatten().tolist()]
            raise SamplingError(
                f"row(s) {rows}: every token the constraint allows has logit -inf after logit_bias / "
                "penalties; nothing can be drawn (remove the -inf bias on those tokens)"
            )
        if self.n_sampled == 0:
            return tokens
        idx = self.sampled_rows
        all_rows = self.n_sampled == logits.shape[0]
        sub = logits if all_rows else logits[idx]
        sub = sub / self.temperature if all_rows else sub / self.temperature[idx]
        drawn = self._draw(sub, idx, all_rows)
        if all_rows:
            return drawn
        tokens[idx] = drawn
        return tokens

    def _draw(self, logits: torch.Tensor, idx: torch.Tensor, all_rows: bool) -> torch.Tensor:
        def sel(t: torch.Tensor) -> torch.Tensor:
            return t if all_rows else t[idx]

        miro = sel(self.mirostat) if self.any_mirostat else None
        normal = ~miro if miro is not None else None
        if self.any_top_k:
            logits = top_k_filter(logits, sel(self.top_k), normal)
        if self.any_top_p:
            logits = top_p_filter(logits, sel(self.top_p), normal)
        if self.any_min_p:
            logits = min_p_filter(logits, sel(self.min_p), normal)
        if self.any_typical:
            logits = typical_filter(logits, sel(self.typical_p), normal)
        if miro is not None:
            logits = mirostat_filter(logits, sel(self.mu), miro)
        probs = torch.softmax(logits, dim=-1)
        u = torch.stack([torch.rand((), generator=self.generators[i]) for i in self.sampled_list])
        tokens = inverse_cdf(probs, u.to(logits.device))
        if miro is not None:
            p = probs.gather(1, tokens[:, None])[:, 0].clamp_min(1e-30)
            surprise = -torch.log2(p)
            mu, eta, tau = sel(self.mu), sel(self.eta), sel(self.tau)
            new_mu = torch.where(miro, mu - eta * (surprise - tau), mu)
            if all_rows:
                self.mu = new_mu
            else:
                self.mu[idx] = new_mu
        return tokens

    def observe(self, tokens: torch.Tensor, lengths: torch.Tensor | None = None) -> None:
        """Record appended tokens (``(rows, k)``, right-padded to ``lengths``) for the penalties."""
        if self.rep is None and self.counts is None:
            return
        tokens = tokens.to(self.device)
        ones = torch.ones(tokens.shape, dtype=torch.float32, device=self.device)
        if lengths is not None:
            ones *= (
                torch.arange(tokens.shape[1], device=self.device)[None, :] < lengths.to(self.device)[:, None]
            )
        if self.rep is not None:
            hit = torch.zeros_like(self.seen, dtype=torch.float32).scatter_add_(1, tokens, ones)
            self.seen |= hit > 0
        if self.counts is not None:
            self.counts.scatter_add_(1, tokens, ones)

    def keep(self, rows: torch.Tensor) -> None:
        """Keep only the given compact rows (int64 tensor), in step with `Session.keep`."""
        keep = rows.tolist()
        rows = rows.to(self.device)
        self.rows = [self.rows[i] for i in keep]
        self.generators = [self.generators[i] for i in keep]
        for name in (
            "greedy",
            "temperature",
            "top_k",
            "top_p",
            "min_p",
            "typical_p",
            "mirostat",
            "tau",
            "eta",
            "mu",
        ):
            setattr(self, name, getattr(self, name)[rows])
        if self.rep is not None:
            self.rep, self.seen = self.rep[rows], self.seen[rows]
        if self.counts is not None:
            self.freq, self.pres, self.counts = self.freq[rows], self.pres[rows], self.counts[rows]
        if self.bias is not None:
            self.bias = self.bias[rows]
        self._refresh()
