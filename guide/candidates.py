"""Ranked candidates: n validated values for one prompt, ordered by log-prob, MBR or majority vote.

``rank="logprob"``: the candidate's log-probability under the constrained model (the masked
distribution, before temperature; forced jump-forward tokens count zero). ``rank="mbr"`` is minimum
Bayes risk decoding: the samples stand for the model's distribution, and each candidate is scored by
its mean utility against the others, so the consensus value wins over a likely outlier.
``rank="vote"`` is self-consistency: the share of candidates with the same value.

The default utility suits values: objects agree field by field (recursively), lists element by
element, strings by a text similarity (``difflib``'s ratio), anything else by equality.

>>> value_utility({"a": 1, "b": "xy"}, {"a": 1, "b": "xz"})
0.75
"""

from __future__ import annotations

import dataclasses
import difflib
import json
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

RANKS = ("logprob", "mbr", "vote")

Utility = Callable[[Any, Any], float]


@dataclass(frozen=True)
class Candidate:
    """One validated candidate: its ``value``, ``text``, ranking ``score`` and ``logprob``.

    >>> Candidate(3, "3", score=-0.5, logprob=-0.5).value
    3
    """

    value: Any
    text: str
    score: float
    logprob: float
    token_ids: list[int] = field(default_factory=list, repr=False)


def rank_candidates(
    candidates: Sequence[Candidate], rank: str = "logprob", utility: Utility | None = None
) -> list[Candidate]:
    """The candidates re-scored by ``rank`` and sorted best first (ties: higher log-prob first).

    >>> cs = [Candidate("a", "a", 0, -1.0), Candidate("b", "b", 0, -0.5), Candidate("a", "a", 0, -2.0)]
    >>> [c.value for c in rank_candidates(cs, "vote")]
    ['a', 'a', 'b']
    """
    if rank not in RANKS:
        raise ValueError(f"rank must be one of {RANKS}, got {rank!r}")
    if utility is not None and rank != "mbr":
        raise ValueError(f"a utility is only used by rank='mbr', not rank={rank!r}")
    if rank == "logprob":
        scores = [c.logprob for c in candidates]
    elif rank == "vote":
        counts = Counter(value_key(c.value) for c in candidates)
        scores = [counts[value_key(c.value)] / len(candidates) for c in candidates]
    else:
        scores = mbr_scores([c.value for c in candidates], utility or value_utility)
    scored = [dataclasses.replace(c, score=s) for c, s in zip(candidates, scores, strict=True)]
    return sorted(scored, key=lambda c: (c.score, c.logprob), reverse=True)


def mbr_scores(values: Sequence[Any], utility: Utility) -> list[float]:
    """Each value's mean utility against the other values (its expected utility; 1 candidate: 1.0).

    >>> mbr_scores([1, 1, 2], value_utility)
    [0.5, 0.5, 0.0]
    """
    n = len(values)
    if n == 1:
        return [1.0]
    return [
        sum(utility(v, w) for j, w in enumerate(values) if j != i) / (n - 1) for i, v in enumerate(values)
    ]


def value_utility(a: Any, b: Any) -> float:
    """Agreement of two values in [0, 1]: field by field, element by element, text similarity, equality.

    >>> value_utility([1, 2, 3], [1, 2]), value_utility("Paris", "Paris"), value_utility(2, 2.5)
    (0.6666666666666666, 1.0, 0.0)
    """
    a, b = _plain(a), _plain(b)
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        keys = set(a) | set(b)
        if not keys:
            return 1.0
        return sum(value_utility(a[k], b[k]) if k in a and k in b else 0.0 for k in keys) / len(keys)
    if isinstance(a, list) and isinstance(b, list):
        if not a and not b:
            return 1.0
        return sum(value_utility(x, y) for x, y in zip(a, b, strict=False)) / max(len(a), len(b))
    if isinstance(a, str) and isinstance(b, str):
        return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()
    return 1.0 if a == b and isinstance(a, bool) == isinstance(b, bool) else 0.0


def value_key(value: Any) -> str:
    """A canonical text for a value, equal exactly when the values are (used by the vote).

    >>> value_key({"b": 1, "a": [True]})
    '{"a": [true], "b": 1}'
    """
    return json.dumps(_plain(value), sort_keys=True, default=repr)


def _plain(value: Any) -> Any:
    """Pydantic models, dataclasses, tuples and sets as plain dicts and lists."""
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return _plain(dump())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _plain(dataclasses.asdict(value))
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted((_plain(v) for v in value), key=repr)
    return value
