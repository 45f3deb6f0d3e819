"""A guidance source's open batch: the participants' sessions stacked by model (`Stack`), the
combined logits per step and the post-mask ``rescore`` hook (`GuidedSession`, `rescore_masked`), and
the vocabulary check participants must pass (`shared_width`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import torch

import fsm

from ..masks import NEG_INF
from ..sources import LogitsSource, Session
from .errors import GuidanceError, VocabularyMismatch
from .views import apply_formats, resolve

if TYPE_CHECKING:
    from .combination import Combination


def shared_width(base: fsm.Vocabulary, other: fsm.Vocabulary, role: str = "participant") -> int:
    """Logits columns two participants can combine: ``base.size`` when the fingerprints agree, else the
    common width after checking every shared token id spells the same bytes.

    >>> v = fsm.Vocabulary([b"a", b"b", None], eos_token_ids=[2])
    >>> shared_width(v, fsm.Vocabulary([b"a", b"b", None], eos_token_ids=[2], size=8))
    3
    """
    if other.fingerprint == base.fingerprint:
        return base.size
    n = min(base.n_tokens, other.n_tokens)
    a, b = base.tokens, other.tokens
    if a[:n] != b[:n]:
        i = next(i for i in range(n) if a[i] != b[i])
        raise VocabularyMismatch(
            f"the {role} does not share the base's vocabulary: token id {i} is {a[i]!r} for the base and "
            f"{b[i]!r} for the {role}; guidance needs models with the same tokenizer"
        )
    if any(t is not None for t in a[other.n_tokens :]):
        raise VocabularyMismatch(
            f"the base has text tokens beyond the {role}'s {other.n_tokens} tokens; "
            f"the {role} cannot score them"
        )
    width = min(base.size, other.size)
    late = [e for e in base.eos_token_ids if e >= width]
    if late:
        raise VocabularyMismatch(f"the base's EOS ids {late} are beyond the {role}'s {other.size} logits")
    return width


# -- stacked participant sessions --------------------------------------------------------------------


class Stack:
    """The sessions of a combination's participants. Participants that resolve to the same model object
    share one batch (their formatted prompts stacked), so one forward pass serves all of them."""

    def __init__(self, groups: list[tuple[Session, list[int]]], n_parts: int, n_rows: int):
        self.groups = groups  # (session, participant indices stacked in it, in order)
        self.n_parts = n_parts
        self.n = n_rows

    @classmethod
    def open(
        cls, participants: Sequence[LogitsSource], pairs: list[tuple[list[int], list[int]]], fuse: bool
    ) -> tuple[Stack, list[torch.Tensor]]:
        order: dict[int, list[int]] = {}
        roots = []
        for i, p in enumerate(participants):
            root, formats = resolve(p)
            roots.append((root, formats))
            order.setdefault(id(root) if fuse else i, []).append(i)
        parts: list[torch.Tensor | None] = [None] * len(participants)
        groups = []
        n = len(pairs)
        for members in order.values():
            root = roots[members[0]][0]
            prompts = [apply_formats(roots[i][1], *pair) for i in members for pair in pairs]
            session, logits = root.prefill(prompts)
            for j, i in enumerate(members):
                parts[i] = logits[j * n : (j + 1) * n]
            groups.append((session, members))
        return cls(groups, len(participants), n), parts  # type: ignore[return-value]

    def decode(self, tokens: torch.Tensor, lengths: torch.Tensor | None) -> list[torch.Tensor]:
        parts: list[torch.Tensor | None] = [None] * self.n_parts
        n = self.n
        for session, members in self.groups:
            m = len(members)
            t = tokens.repeat(m, 1) if m > 1 else tokens
            ln = None if lengths is None else (lengths.repeat(m) if m > 1 else lengths)
            logits = session.decode(t, ln)
            for j, i in enumerate(members):
                parts[i] = logits[j * n : (j + 1) * n]
        return parts  # type: ignore[return-value]

    def keep(self, rows: torch.Tensor) -> None:
        n = self.n
        for session, members in self.groups:
            m = len(members)
            session.keep(torch.cat([rows + j * n for j in range(m)]) if m > 1 else rows)
        self.n = int(rows.shape[0])


class GuidedSession:
    """One open batch of a guidance source: the participants' sessions plus what ``rescore`` needs.

    ``decode``/``keep`` follow the `Session` protocol; ``rescore(masked_logits)`` applies the method's
    truncation after the constraint mask and must be called once per step before sampling when the
    source needs it (`rescore_masked`).
    """

    def __init__(self, source: Combination, stack: Stack, pairs: list[tuple[list[int], list[int]]]):
        self.source = source
        self.stack = stack
        self.state: torch.Tensor | None = (
            None  # what the method's `combine` left for its `truncate` (a tensor or None)
        )
        self.pending = False
        self.ids: list[list[int]] | None = None
        self.starts: list[int] | None = None
        if source.tracks_ids:
            self.ids = [p + e for p, e in pairs]
            self.starts = [len(p) for p, _ in pairs]

    @classmethod
    def start(
        cls,
        source: Combination,
        stack: Stack,
        pairs: list[tuple[list[int], list[int]]],
        parts: list[torch.Tensor],
    ) -> tuple[GuidedSession, torch.Tensor]:
        """A session over freshly prefilled participants, and the combination of their first logits."""
        session = cls(source, stack, pairs)
        return session, session.combine_parts(parts)

    @property
    def n_rows(self) -> int:
        return self.stack.n

    def decode(self, tokens: torch.Tensor, lengths: torch.Tensor | None = None) -> torch.Tensor:
        self._check_rescored()
        parts = self.stack.decode(tokens, lengths)
        if self.ids is not None:
            rows = tokens.tolist()
            lens = lengths.tolist() if lengths is not None else [tokens.shape[1]] * len(rows)
            for r, (toks, k) in enumerate(zip(rows, lens, strict=True)):
                self.ids[r].extend(toks[:k])
        return self.combine_parts(parts)

    def keep(self, rows: torch.Tensor) -> None:
        self._check_rescored()
        self.stack.keep(rows)
        if self.ids is not None:
            keep = rows.tolist()
            self.ids = [self.ids[i] for i in keep]
            self.starts = [self.starts[i] for i in keep]  # type: ignore[index]
        self.state = None

    def rescore(self, logits: torch.Tensor) -> torch.Tensor:
        """The method's truncation of the masked combined logits (``-inf`` = removed by the constraint)."""
        self.pending = False
        if not self.source.needs_rescore:
            return logits
        return self.source.truncate(logits, self.state, self)

    def combine_parts(self, parts: list[torch.Tensor]) -> torch.Tensor:
        """The combined logits of one step from each participant's (marks ``rescore`` as due if needed)."""
        width, device = self.source.width, self.source.device
        parts = [p[:, :width].to(device) if p.shape[-1] != width or p.device != device else p for p in parts]
        logits, self.state = self.source.combine(parts)
        size = self.source.vocabulary.size
        if logits.shape[-1] < size:  # ids some participant cannot score (never text: checked) are banned
            logits = torch.cat(
                [logits, logits.new_full((logits.shape[0], size - logits.shape[-1]), NEG_INF)], -1
            )
        self.pending = self.source.needs_rescore
        return logits

    def _check_rescored(self) -> None:
        if self.pending:
            raise GuidanceError(
                f"{type(self.source).__name__} truncates after the constraint mask, but the generate loop "
                "sampled without calling session.rescore(logits); use guide.generate, or call "
                "guide.guidance.rescore_masked(session, logits) after masking"
            )


def rescore_masked(session: Session, logits: torch.Tensor) -> torch.Tensor:
    """The generate loop's hook: after the constraint mask, before sampling, let a guidance session
    truncate (nucleus, plausibility head, classifier top-k); other sessions pass through.

    >>> logits = rescore_masked(session, masked_logits)   # doctest: +SKIP
    """
    rescore = getattr(session, "rescore", None)
    return logits if rescore is None else rescore(logits)
