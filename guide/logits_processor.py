"""A Hugging Face ``LogitsProcessor`` that enforces a constraint inside ``model.generate``.

Rows of ``input_ids`` are not stable identities: beam search reorders, duplicates and drops beams
every step. So matchers are keyed by what each row generated so far (its ``input_ids`` after the
prompt): a row whose prefix was seen last step continues a copy of that matcher advanced by its
newest token. This is correct under batching, sampling, beam search and padding of finished rows.
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
        self._masks: MaskBuffer | None = None
        self._prompt = torch.zeros((0, 0), dtype=torch.long)

    def __call__(self, input_ids: torch.LongTensor, scores: torch.Tensor) -> torch.Tensor:
        n_rows, length = input_ids.shape
        width = scores.shape[-1]
        fresh = length != self._last_len + 1 or n_rows != self._batch or width != self._width
        if fresh or not torch.equal(input_ids[:, : self._prompt_len], self._prompt):
            self._start(n_rows, length, width)
            self._prompt = input_ids.clone()
        self._last_len = length
        per_item = max(1, n_rows // len(self._indexes))
        suffixes = input_ids[:, self._prompt_len :].tolist()
        eos = self._eos
        states: dict[tuple, TokenMatcher | str] = {}
        rows, matchers = [], []
        for r, suffix in enumerate(suffixes):
            item = min(r // per_item, len(self._indexes) - 1)
            if self._indexes[item] is None:
                continue
            key = (item, *suffix)
            m = states.get(key)
            if m is None:
                m = self._state_for(key, eos)
                states[key] = m
            if m is not _DONE:
                rows.append(r)
                matchers.append(m)
        self._states = states
        if rows:
            self._apply(scores, rows, matchers)
        return scores

    # -- internals ------------------------------------------------------------------------------------
    def _start(self, n_rows: int, length: int, width: int) -> None:
        """A new generate call: fresh matchers, prompt length, vocabulary sized to the logits."""
        self._prompt_len, self._batch = length, n_rows
        self._states = {}
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

    def _state_for(self, key: tuple, eos: frozenset) -> TokenMatcher | str:
        item, suffix = key[0], key[1:]
        if not suffix:
            return self._indexes[item].matcher()
        parent = self._states.get(key[:-1])
        if parent is None:  # not seen last step (e.g. the processor joined late): replay the prefix
            parent = self._indexes[item].matcher()
            for t in suffix[:-1]:
                if parent is _DONE or t in eos:
                    parent = _DONE
                    continue
                parent.advance(t)
        if parent is _DONE or suffix[-1] in eos:
            return _DONE
        m = parent.copy()
        try:
            m.advance(suffix[-1])
        except fsm.TokenRejected:
            raise fsm.TokenRejected(
                suffix[-1],
                f"generate chose token {suffix[-1]} which the constraint disallows; is another logits "
                "processor or a forced token overriding this one?",
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
