"""A Hugging Face ``LogitsProcessor`` that enforces a constraint inside ``model.generate``.

Rows of ``input_ids`` are not stable identities: beam search reorders, duplicates and drops beams
every step. So matchers are keyed by what each row generated so far (its ``input_ids`` after the
prompt): a row whose prefix was seen last step continues a copy of that matcher advanced by its
newest token. This is correct under batching, sampling, beam search and padding of finished rows.

Hugging Face's assisted generation (``prompt_lookup_num_tokens``, ``assistant_model``) scores every
drafted position of a round in one pass, so one call sees a prefix holding not-yet-verified drafts and
the next round's call may be shorter than the last. Matchers therefore stay cached by prefix across
calls (pruned below the shortest live prefix), a length that is not the last plus one continues the
same generation when its prefix was seen, and a draft the constraint forbids makes a *dead* row: HF
rejects that draft anyway (its masked position cannot pick it), so the row's later positions are left
unmasked and never advance a matcher.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import torch
from transformers import LogitsProcessor as _HFLogitsProcessor

import fsm

from .constraints import CompiledConstraint, Constraint, TokenMatcher
from .masks import MaskBuffer

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

_DONE = "done"  # a row that already emitted EOS: HF pads it, nothing to enforce
_FIRST_ROUND = 64  # drafted tokens HF may score before its first jump back (prompt lookup: 10)
_DEAD = "dead"  # a row behind a forbidden unverified draft: HF rejects the draft, its scores are moot


class LogitsProcessor(_HFLogitsProcessor):
    """Constrain ``model.generate`` to a spec (or one spec per prompt).

    ``constraint``: an fsm spec, a compiled index, or a list with one per prompt (None = free).
    ``eos_token_ids`` adds EOS ids beyond the tokenizer's (e.g. the generation config's).
    Use a fresh processor per ``generate`` call, or the same one: it resets when a new prompt batch arrives.

    >>> proc = guide.LogitsProcessor(fsm.Regex(r"\\d{3}"), tokenizer)              # doctest: +SKIP
    >>> out = hf_model.generate(**enc, logits_processor=[proc], max_new_tokens=5)   # doctest: +SKIP
    """

    def __init__(
        self,
        constraint: Constraint | list[Constraint],
        tokenizer: PreTrainedTokenizerBase,
        eos_token_ids: Sequence[int] | None = None,
    ):
        if constraint is None:
            raise ValueError("LogitsProcessor needs a constraint (an fsm spec or a compiled index)")
        self.constraint = constraint
        self.tokenizer = tokenizer
        self.eos_token_ids = list(eos_token_ids or [])
        self._width: int | None = None
        self._indexes: list[CompiledConstraint | None] | None = None
        self._prompt_len = 0
        self._last_len = -1
        self._batch = 0
        self._states: dict[tuple, TokenMatcher | str] = {}
        self._jumped, self._floor = False, 0
        self._masks: MaskBuffer | None = None
        self._prompt = torch.zeros((0, 0), dtype=torch.long)

    def __call__(self, input_ids: torch.LongTensor, scores: torch.Tensor) -> torch.Tensor:
        n_rows, length = input_ids.shape
        width = scores.shape[-1]
        if self._new_generation(input_ids, width):
            self._start(n_rows, length, width)
            self._prompt = input_ids.clone()
        # a jump in length marks assisted generation: a round never restarts before the last jump's
        # parent; before any jump, the first round may come back up to _FIRST_ROUND steps
        suffix_len = length - self._prompt_len
        if length != self._last_len + 1:
            self._jumped, self._floor = True, suffix_len - 1
        elif not self._jumped:
            self._floor = suffix_len - 1 - _FIRST_ROUND
        self._last_len = length
        per_item = max(1, n_rows // len(self._indexes))
        suffixes = input_ids[:, self._prompt_len :].tolist()
        drafts = _scores_a_draft_slice(scores)
        eos = self._eos
        rows, matchers = [], []
        for r, suffix in enumerate(suffixes):
            item = min(r // per_item, len(self._indexes) - 1)
            if self._indexes[item] is None:
                continue
            key = (item, *suffix)
            m = self._states.get(key)
            if m is None:
                m = self._state_for(key, eos, drafts)
                self._states[key] = m
            if m is not _DONE and m is not _DEAD:
                rows.append(r)
                matchers.append(m)
        self._prune()
        if rows:
            self._apply(scores, rows, matchers)
        return scores

    def _new_generation(self, input_ids: torch.Tensor, width: int) -> bool:
        """Whether this call starts a new generation rather than continuing (or re-scoring) the last."""
        n_rows, length = input_ids.shape
        if n_rows != self._batch or width != self._width or length < self._prompt_len:
            return True
        if not torch.equal(input_ids[:, : self._prompt_len], self._prompt):
            return True
        if length == self._last_len + 1:
            return False
        # assisted generation jumps in length; it continues only if every row's parent was seen
        n_items = len(self._indexes)
        per_item = max(1, n_rows // n_items)
        for r, suffix in enumerate(input_ids[:, self._prompt_len : length - 1].tolist()):
            item = min(r // per_item, n_items - 1)
            if self._indexes[item] is not None and suffix and (item, *suffix) not in self._states:
                return True
        return False

    def _prune(self) -> None:
        """Drop matchers for prefixes shorter than any the generation can come back to."""
        if any(len(k) - 1 < self._floor for k in self._states):
            self._states = {k: v for k, v in self._states.items() if len(k) - 1 >= self._floor}

    # -- internals ------------------------------------------------------------------------------------
    def _start(self, n_rows: int, length: int, width: int) -> None:
        """A new generate call: fresh matchers, prompt length, vocabulary sized to the logits."""
        self._prompt_len, self._batch = length, n_rows
        self._states = {}
        self._jumped, self._last_len = False, length - 1
        if self._width != width or self._indexes is None:
            self._width = width
            vocab = None
            items = self.constraint if isinstance(self.constraint, list) else [self.constraint]
            cache: dict[int, CompiledConstraint] = {}
            indexes = []
            for c in items:
                if c is None:
                    indexes.append(None)
                    continue
                if id(c) not in cache:
                    if callable(getattr(c, "matcher", None)):
                        cache[id(c)] = c
                    else:
                        if vocab is None:
                            vocab = fsm.Vocabulary.from_tokenizer(
                                self.tokenizer, size=width, eos_token_ids=self.eos_token_ids
                            )
                        cache[id(c)] = fsm.compile(c, vocab)
                indexes.append(cache[id(c)])
            for idx in indexes:
                if idx is not None and idx.vocabulary.size > width:
                    raise fsm.VocabularyError(
                        f"the constraint's vocabulary has {idx.vocabulary.size} ids but the model's "
                        f"logits only {width}"
                    )
            self._indexes = indexes
            self._eos = frozenset(
                e for idx in indexes if idx is not None for e in idx.vocabulary.eos_token_ids
            )
        if isinstance(self.constraint, list) and n_rows % len(self._indexes):
            raise ValueError(
                f"{len(self._indexes)} constraints do not divide the {n_rows} rows of the batch "
                "(one constraint per prompt is expected)"
            )
        self._masks = None

    def _state_for(self, key: tuple, eos: frozenset, drafts: bool) -> TokenMatcher | str:
        item, suffix = key[0], key[1:]
        if not suffix:
            return self._indexes[item].matcher()
        parent = self._states.get(key[:-1])
        if parent is None:  # not seen last step (e.g. the processor joined late): replay the prefix
            parent = self._replay(item, suffix[:-1], eos, drafts)
        if parent is _DEAD:
            return _DEAD
        if parent is _DONE or suffix[-1] in eos:
            return _DONE
        m = parent.copy()
        try:
            m.advance(suffix[-1])
        except fsm.TokenRejected:
            if drafts:
                return _DEAD
            raise fsm.TokenRejected(
                suffix[-1],
                f"generate chose token {suffix[-1]} which the constraint disallows; is another logits "
                "processor or a forced token overriding this one?",
            ) from None
        return m

    def _replay(self, item: int, tokens: Sequence[int], eos: frozenset, drafts: bool) -> TokenMatcher | str:
        """A matcher for a prefix never seen: advanced token by token from the start."""
        m = self._indexes[item].matcher()
        for i, t in enumerate(tokens):
            if t in eos:
                return _DONE
            try:
                m.advance(t)
            except fsm.TokenRejected:
                if drafts:
                    return _DEAD
                raise fsm.TokenRejected(
                    t, f"the prefix's token {t} at {i} is outside the constraint"
                ) from None
        return m

    def _apply(self, scores: torch.Tensor, rows: list[int], matchers: list[TokenMatcher]) -> None:
        width = scores.shape[-1]
        if self._masks is None or self._masks.capacity < len(rows) or self._masks.device != scores.device:
            self._masks = MaskBuffer(width, scores.device, scores.shape[0])
        host = self._masks.host
        narrow = any(m.index.vocabulary.size < width for m in matchers if hasattr(m, "index"))
        if narrow:
            host[: len(rows)] = 0
        for i, m in enumerate(matchers):
            m.fill_bitmask(host[i])
        self._masks.apply_staged(scores, rows, len(rows))


def _scores_a_draft_slice(scores: torch.Tensor) -> bool:
    """Whether ``scores`` is one position of a larger logits tensor: HF verifying drafted tokens."""
    # assisted generation hands each drafted position as new_logits[:, i, :]; plain decoding and
    # beam search hand a tensor of their own, where a forbidden token is a real error to report
    return scores.untyped_storage().nbytes() > scores.numel() * scores.element_size()
