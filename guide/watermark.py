"""The soft watermark of Kirchenbauer et al. (2023), bit-compatible with transformers' implementation.

`Watermark` holds the parameters of transformers' ``WatermarkingConfig`` and reproduces the green
lists of its ``WatermarkLogitsProcessor`` (same hashing, same CPU ``torch.Generator`` permutations),
so text marked by `guide.generate(..., watermark=wm)` is detected by transformers'
``WatermarkDetector`` and by `detect_watermark`. In our loop the bias is added to the *masked* logits
of each row, seeded from that row's context (prompt and tokens so far), before the sampler's
temperature and truncation.

`detect_watermark` without a spec gives the z-score of transformers' detector. With a spec it replays
the constraint over the tokens and counts only positions where the mask left a real choice, each
against its own null: the green share among the tokens the mask allowed. Forced syntax (JSON
punctuation, keys, enum values) then neither dilutes nor fakes the evidence.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import torch

import fsm

from .constraints import CompiledConstraint, Constraint

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase, WatermarkingConfig

_TABLE_SIZE = 1_000_003  # transformers' fixed table for selfhash seeding
_SELFHASH_CANDIDATES = 40  # transformers scores the 40 likeliest tokens under selfhash
_EXACT_SELFHASH_NULL = 512  # above this many allowed tokens a selfhash null is taken as the ratio


@dataclass(frozen=True)
class Watermark:
    """A green-list watermark: ``greenlist_ratio`` of the vocabulary gets ``bias`` added to its logits.

    The parameters and their defaults are transformers' ``WatermarkingConfig``: ``seeding_scheme``
    is "lefthash" (the green list depends on the previous token) or "selfhash" (also on the
    candidate token itself, over the ``context_width`` last tokens).

    >>> wm = Watermark(hashing_key=7)
    >>> len(wm.greenlist([42], vocab_size=100))
    25
    """

    greenlist_ratio: float = 0.25
    bias: float = 2.0
    hashing_key: int = 15485863
    seeding_scheme: str = "lefthash"
    context_width: int = 1

    def __post_init__(self) -> None:
        if self.seeding_scheme not in ("lefthash", "selfhash"):
            raise ValueError(f"seeding_scheme must be 'lefthash' or 'selfhash', got {self.seeding_scheme!r}")
        if not 0.0 < self.greenlist_ratio < 1.0:
            raise ValueError(f"greenlist_ratio must be in (0, 1), got {self.greenlist_ratio}")
        if not isinstance(self.context_width, int) or self.context_width < 1:
            raise ValueError(f"context_width must be an int >= 1, got {self.context_width!r}")

    def to_hf(self) -> WatermarkingConfig:
        """The same watermark as transformers' ``WatermarkingConfig`` (for ``WatermarkDetector``).

        >>> Watermark(bias=1.5).to_hf().bias
        1.5
        """
        from transformers import WatermarkingConfig  # lazy: transformers loads slowly

        return WatermarkingConfig(
            greenlist_ratio=self.greenlist_ratio,
            bias=self.bias,
            hashing_key=self.hashing_key,
            seeding_scheme=self.seeding_scheme,
            context_width=self.context_width,
        )

    def greenlist(self, context: Sequence[int], vocab_size: int) -> torch.Tensor:
        """The green token ids after ``context`` (its last token is the candidate under selfhash).

        >>> Watermark().greenlist([5, 6], 1000).shape
        torch.Size([250])
        """
        return _greenlist(self.seed(context), vocab_size, int(vocab_size * self.greenlist_ratio))

    def seed(self, context: Sequence[int]) -> int:
        """transformers' seed for a context (``WatermarkLogitsProcessor.set_seed``), overflow included.

        >>> Watermark(hashing_key=3).seed([10])
        30
        """
        window = list(context)[-self.context_width :]
        if self.seeding_scheme == "selfhash":
            table = _fixed_table(self.hashing_key)
            ids = torch.as_tensor(window, dtype=torch.long)
            a = table[ids % _TABLE_SIZE] + 1
            b = table[ids[-1] % _TABLE_SIZE] + 1
            seed = int((self.hashing_key * a * b).min().item())  # int64 arithmetic, as transformers
        else:
            seed = self.hashing_key * int(window[-1])
        return seed % (2**64 - 1)

    def apply(self, logits: torch.Tensor, contexts: Sequence[Sequence[int]]) -> torch.Tensor:
        """Add the bias to each row's green tokens (in place); a row's context ends before its next token.

        >>> Watermark(bias=1.0).apply(torch.zeros(1, 8), [[3]]).sum().item()
        2.0
        """
        width = logits.shape[-1]
        size = int(width * self.greenlist_ratio)
        for r, context in enumerate(contexts):
            if len(context) < self.context_width:
                continue  # transformers skips seeding too
            if self.seeding_scheme == "selfhash":
                green = self._selfhash_green(list(context), logits[r], width)
            else:
                green = _greenlist(self.seed(context), width, size)
            logits[r, green.to(logits.device)] += self.bias
        return logits

    def _selfhash_green(self, context: list[int], row: torch.Tensor, width: int) -> torch.Tensor:
        """transformers' rejection step: of the 40 likeliest tokens, those green under themselves."""
        size = int(width * self.greenlist_ratio)
        top = torch.topk(row.float(), min(_SELFHASH_CANDIDATES, width)).indices.tolist()
        allowed = torch.isfinite(row)
        green = [t for t in top if allowed[t] and _is_green(self.seed([*context, t]), width, size, t)]
        return torch.as_tensor(green, dtype=torch.long)


@dataclass(frozen=True)
class WatermarkScore:
    """A detection: ``z`` (one-sided z-score), ``p_value``, the ``counted`` positions, ``green`` among them.

    ``expected`` is the green count the null predicts (ratio times counted without a spec).

    >>> WatermarkScore(z=5.0, p_value=2.9e-07, counted=100, green=47, expected=25.0).detected()
    True
    """

    z: float
    p_value: float
    counted: int
    green: int
    expected: float

    def detected(self, z_threshold: float = 4.0) -> bool:
        """Whether the z-score passes the threshold.

        >>> WatermarkScore(1.0, 0.16, 10, 4, 2.5).detected()
        False
        """
        return self.z > z_threshold


def detect_watermark(
    token_ids: Sequence[int],
    wm: Watermark,
    vocab_size: int | None = None,
    spec: Constraint = None,
    tokenizer: PreTrainedTokenizerBase | None = None,
) -> WatermarkScore:
    """Score generated ``token_ids`` (prompt excluded) for the watermark ``wm``.

    Without ``spec``: transformers' ``WatermarkDetector`` (a leading BOS dropped, every n-gram
    counted). With ``spec`` (an fsm spec or a compiled index): only positions where the constraint
    allowed more than one token and the token was not inside forced text, each against the green
    share of what the mask allowed. ``tokenizer`` defaults to the default model's; ``vocab_size``
    (the model's logits width) defaults to the tokenizer's length.

    >>> wm = guide.Watermark()                                                   # doctest: +SKIP
    >>> guide.detect_watermark(out.token_ids, wm, spec=fsm.JsonSchema(s)).z        # doctest: +SKIP
    7.3
    """
    ids = [int(t) for t in token_ids]
    if tokenizer is None:
        tokenizer = _default_tokenizer()
    if vocab_size is None:
        vocab_size = len(tokenizer)
    if ids and ids[0] == tokenizer.bos_token_id:
        ids = ids[1:]
    if spec is None:
        return _plain_score(ids, wm, vocab_size)
    return _constrained_score(ids, wm, vocab_size, _index(spec, tokenizer, vocab_size))


def _index(spec: Constraint, tokenizer: PreTrainedTokenizerBase, vocab_size: int) -> CompiledConstraint:
    if callable(getattr(spec, "matcher", None)):
        return spec  # already compiled (for the model's vocabulary, as the loop requires)
    return fsm.compile(spec, fsm.Vocabulary.from_tokenizer(tokenizer, size=vocab_size))


def _plain_score(ids: list[int], wm: Watermark, vocab_size: int) -> WatermarkScore:
    n = wm.context_width + (0 if wm.seeding_scheme == "selfhash" else 1)
    if len(ids) - wm.context_width < 1:
        raise ValueError(f"need at least {wm.context_width + 1} tokens to score, got {len(ids)}")
    size = int(vocab_size * wm.greenlist_ratio)
    green = counted = 0
    for end in range(n, len(ids) + 1):
        ngram = ids[end - n : end]
        context = ngram if wm.seeding_scheme == "selfhash" else ngram[:-1]
        green += _is_green(wm.seed(context), vocab_size, size, ngram[-1])
        counted += 1
    expected = wm.greenlist_ratio * counted
    var = counted * wm.greenlist_ratio * (1 - wm.greenlist_ratio)
    return _score(green, counted, expected, var)


def _constrained_score(
    ids: list[int], wm: Watermark, vocab_size: int, index: CompiledConstraint
) -> WatermarkScore:
    size = int(vocab_size * wm.greenlist_ratio)
    selfhash = wm.seeding_scheme == "selfhash"
    m = index.matcher()
    tokens = index.vocabulary.tokens
    green = counted = 0
    expected = var = 0.0
    for j, t in enumerate(ids):
        if m.is_finished():
            break
        allowed = m.allowed_token_ids()
        forced = m.forced_bytes()
        spelled = tokens[t] if t < len(tokens) else None
        within_forced = bool(forced and spelled and forced.startswith(spelled))
        # the n-gram that seeds position j: the cw tokens before it (lefthash), or ending at it (selfhash)
        start = j + 1 - wm.context_width if selfhash else j - wm.context_width
        if len(allowed) > 1 and not within_forced and start >= 0:
            context = ids[start : j + 1] if selfhash else ids[start:j]
            share = _green_share(wm, context, allowed, vocab_size, size, selfhash)
            green += _is_green(wm.seed(context), vocab_size, size, t)
            counted += 1
            expected += share
            var += share * (1 - share)
        try:
            m.advance(t)
        except fsm.TokenRejected:
            raise fsm.TokenRejected(t, f"token {t} at position {j} is outside the given spec") from None
    return _score(green, counted, expected, var)


def _green_share(
    wm: Watermark, context: list[int], allowed: Sequence[int], vocab_size: int, size: int, selfhash: bool
) -> float:
    """The null probability that a choice among ``allowed`` is green (uniform over what the mask allowed)."""
    allowed = [a for a in allowed if a < vocab_size]
    if not allowed:
        return wm.greenlist_ratio
    if not selfhash:
        green = _green_mask(wm.seed(context), vocab_size, size)
        return float(green[torch.as_tensor(allowed, dtype=torch.long)].float().mean())
    if len(allowed) > _EXACT_SELFHASH_NULL:
        return wm.greenlist_ratio  # each candidate has its own list: exact shares cost a permutation each
    prefix = context[:-1]
    hits = sum(_is_green(wm.seed([*prefix, a]), vocab_size, size, a) for a in allowed)
    return hits / len(allowed)


def _score(green: int, counted: int, expected: float, var: float) -> WatermarkScore:
    z = (green - expected) / math.sqrt(var) if var > 0 else 0.0
    return WatermarkScore(
        z=z, p_value=0.5 * math.erfc(z / math.sqrt(2)), counted=counted, green=green, expected=expected
    )


@lru_cache(maxsize=4)
def _fixed_table(hashing_key: int) -> torch.Tensor:
    rng = torch.Generator(device="cpu")
    rng.manual_seed(hashing_key)
    return torch.randperm(_TABLE_SIZE, generator=rng)


@lru_cache(maxsize=512)
def _greenlist(seed: int, vocab_size: int, size: int) -> torch.Tensor:
    # a permutation costs ~20 ms of CPU: repeated contexts (lefthash: the previous token) reuse it
    rng = torch.Generator(device="cpu")
    rng.manual_seed(seed)
    return torch.randperm(vocab_size, generator=rng)[:size]


@lru_cache(maxsize=512)
def _green_mask(seed: int, vocab_size: int, size: int) -> torch.Tensor:
    mask = torch.zeros(vocab_size, dtype=torch.bool)
    mask[_greenlist(seed, vocab_size, size)] = True
    return mask


def _is_green(seed: int, vocab_size: int, size: int, token: int) -> bool:
    return bool(_green_mask(seed, vocab_size, size)[token]) if token < vocab_size else False


def _default_tokenizer() -> Any:
    from .models import load  # lazy: loading the default model is only needed when no tokenizer is given

    return load().tokenizer


def context_tail(prompt: Sequence[int], ids: Sequence[int], width: int) -> list[int]:
    """The last ``width`` tokens of prompt + generated ids (what seeds the next green list).

    >>> context_tail([1, 2, 3], [4], 2)
    [3, 4]
    """
    if len(ids) >= width:
        return list(ids[len(ids) - width :])
    return [*prompt[max(0, len(prompt) - (width - len(ids))) :], *ids]
