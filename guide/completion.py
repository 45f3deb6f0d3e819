"""What `guide.generate` returns: one `Completion` per prompt, with what decoding it cost (`DecodeStats`)."""

from __future__ import annotations

from dataclasses import dataclass, field

FINISH_REASONS = ("eos", "constraint", "stop", "length")


@dataclass
class DecodeStats:
    """What decoding one row cost: the forward passes it took part in (the prefill included) and,
    for speculative decoding, the draft tokens proposed and accepted.

    >>> DecodeStats(forward_passes=4, draft_tokens=10, accepted_draft_tokens=7).forward_passes
    4
    """

    forward_passes: int = 0
    draft_tokens: int = 0
    accepted_draft_tokens: int = 0
    draft_forward_passes: int = 0


@dataclass
class Completion:
    """One generated continuation.

    ``token_ids`` are all generated ids (a final EOS included); ``text`` is their exact text without
    special tokens, cut before a stop string; ``finish_reason`` is "eos", "constraint" (the matcher
    allows nothing more), "stop" or "length". ``stats``: what it cost (`DecodeStats`). With beam search,
    ``score`` is the length-penalized log-probability and ``beams`` the ``num_return_sequences`` best
    hypotheses, best first (this completion is ``beams[0]``). ``logprob``: the sum of the sampled
    tokens' log-probabilities under the masked model distribution (before temperature and truncation;
    jump-forward tokens, which the constraint forced, count zero).

    >>> Completion("hi", [6124], "eos").finish_reason
    'eos'
    """

    text: str
    token_ids: list[int]
    finish_reason: str
    # What it cost and how it ranked are not part of what was generated: equality ignores them.
    stats: DecodeStats = field(default_factory=DecodeStats, compare=False)
    score: float | None = field(default=None, compare=False)
    beams: list[Completion] = field(default_factory=list, compare=False)
    logprob: float = field(default=0.0, compare=False)
