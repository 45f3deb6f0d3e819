"""The `LogitsSource` protocol — what the generate loop asks of a model — and the one-model session.

A source turns token ids into next-token logits and keeps its own KV cache. The loop holds it
through two small interfaces, so a guidance combination (DExperts, proxy-tuning, CFG…) that wraps
several models is a source too, and composes with every constraint and sampler:

``LogitsSource``
    ``vocabulary`` (an `fsm.Vocabulary`; its ``size`` is the logits width), ``device``,
    ``tokenizer`` (a HF tokenizer: prompt strings and canonical tokenizations), ``encode(text)``,
    and ``prefill(prompts) -> (session, logits)``: ``prompts`` is a list of token-id lists, ``logits``
    a float32 ``(rows, vocabulary.size)`` tensor on ``device`` for the next token of each prompt.
``Session`` (one open batch)
    ``decode(tokens, lengths=None) -> logits``: append ``tokens[r, :lengths[r]]`` to row ``r``
    (``tokens`` is an int64 ``(rows, k)`` tensor, right-padded; ``lengths`` defaults to ``k``) and
    return each row's logits after its last appended token. ``keep(rows)``: drop every other row
    (``rows``: an int64 tensor of row positions, increasing); later calls see only the kept rows.
    Optional ``rescore(masked_logits) -> logits``: when a session has it, the loop calls it once per
    step after the constraint mask and before sampling (``-inf`` = removed by the mask), for guidance
    truncations that must see the constraint (a nucleus cut before the mask could remove every
    allowed token).

Optional (a `ModelSession` has them; beam search and speculative decoding need them):
``reorder(rows)`` gathers rows (repeats allowed) when beams fork; ``forget(counts)`` drops the last
``counts[r]`` tokens of each row (a rejected draft); ``extend(tokens, lengths)`` is `decode`
returning the logits after every appended token, ``(rows, k, width)``.

A combination implements ``prefill`` by prefilling each of its models and ``decode``/``keep`` by
forwarding to each model's session and combining the logits row by row.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import torch

if TYPE_CHECKING:
    from transformers import Cache, PreTrainedModel, PreTrainedTokenizerBase

    import fsm


@runtime_checkable
class Session(Protocol):
    """One batch of sequences being extended, with its KV cache (see the module docstring)."""

    n_rows: int

    def decode(self, tokens: torch.Tensor, lengths: torch.Tensor | None = None) -> torch.Tensor: ...

    def keep(self, rows: torch.Tensor) -> None: ...


@runtime_checkable
class LogitsSource(Protocol):
    """Anything that opens batches of prompts and yields next-token logits (see the module docstring)."""

    @property
    def vocabulary(self) -> fsm.Vocabulary: ...

    @property
    def tokenizer(self) -> PreTrainedTokenizerBase: ...

    @property
    def device(self) -> torch.device: ...

    def encode(self, text: str) -> list[int]: ...

    def prefill(self, prompts: Sequence[Sequence[int]]) -> tuple[Session, torch.Tensor]: ...


class ModelSession:
    """A batch on one HF causal LM: left-padded prefill, then decode steps on a `DynamicCache`.

    The 2D attention mask is kept only while some column is padding (left padding, or holes left
    by rows that appended fewer tokens than others in a multi-token step); otherwise it is ``None``
    so attention takes the unmasked path, exactly as HF ``generate`` does.

    >>> session, logits = ModelSession.start(model.hf, [[1, 2, 3], [4]], pad_id=2, width=49152)  # doctest: +SKIP
    >>> session.decode(torch.tensor([[5], [6]])).shape                                          # doctest: +SKIP
    torch.Size([2, 49152])
    """

    def __init__(
        self,
        hf: PreTrainedModel,
        cache: Cache,
        mask: torch.Tensor | None,
        next_pos: torch.Tensor,
        width: int,
    ):
        self.hf = hf
        self.cache = cache
        self.cache_kwarg = cache_kwarg(hf)
        self.mask = mask  # (rows, cached length) long, or None when every cached column is real
        self.next_pos = next_pos  # (rows,) position id of each row's next token
        self.width = width

    @property
    def n_rows(self) -> int:
        return int(self.next_pos.shape[0])

    @classmethod
    def start(
        cls, hf: PreTrainedModel, prompts: Sequence[Sequence[int]], pad_id: int, width: int
    ) -> tuple[ModelSession, torch.Tensor]:
        """Prefill ``prompts`` (left-padded into one batch) and return the session and each prompt's
        next-token logits.

        >>> session, logits = ModelSession.start(model.hf, [[1, 2], [3]], pad_id=2, width=49152)  # doctest: +SKIP
        """
        from transformers import DynamicCache

        device = next(hf.parameters()).device
        lengths = [len(p) for p in prompts]
        if not prompts or min(lengths) == 0:
            raise ValueError("every prompt needs at least one token")
        n, longest = len(prompts), max(lengths)
        ids = torch.full((n, longest), int(pad_id), dtype=torch.long)
        mask = torch.zeros((n, longest), dtype=torch.long)
        for r, p in enumerate(prompts):
            ids[r, longest - len(p) :] = torch.as_tensor(p, dtype=torch.long)
            mask[r, longest - len(p) :] = 1
        if int(ids.min()) < 0 or int(ids.max()) >= width:
            raise ValueError(f"prompt token ids must be in [0, {width})")
        ids, mask = ids.to(device), mask.to(device)
        padded = min(lengths) < longest
        # Same position ids as HF generate: count real tokens; padding gets 0.
        pos = (mask.cumsum(-1) - 1).masked_fill(mask == 0, 0)
        cache = DynamicCache(config=hf.config)
        with torch.inference_mode():
            out = hf(
                input_ids=ids,
                attention_mask=mask if padded else None,
                position_ids=pos,
                use_cache=True,
                logits_to_keep=1,
                **{cache_kwarg(hf): cache},
            )
        logits = _as_logits(out.logits[:, -1], width)
        next_pos = torch.as_tensor(lengths, dtype=torch.long, device=device)
        # The model fills `cache` in place, so the output's copy of it is not read back (reading
        # ``out.past_key_values`` is itself deprecated).
        return cls(hf, cache, mask if padded else None, next_pos, width), logits

    def decode(self, tokens: torch.Tensor, lengths: torch.Tensor | None = None) -> torch.Tensor:
        n, k = tokens.shape
        if k == 1 or lengths is None or bool((lengths == k).all()):
            logits, _ = self._append(tokens, lengths, keep=1)
            return _as_logits(logits[:, -1], self.width)
        # Only each row's last real position goes through the LM head (a fifth of a small model's
        # cost per position): the columns some row ends at, then each row's own.
        last = (lengths - 1).to(self.next_pos.device)
        cols = torch.unique(last)
        logits, _ = self._append(tokens, lengths, keep=cols)
        # a transformers release that ignores a tensor ``logits_to_keep`` returns every position
        at = torch.searchsorted(cols, last) if logits.shape[1] == len(cols) else last
        return _as_logits(logits[torch.arange(n, device=logits.device), at], self.width)

    def extend(self, tokens: torch.Tensor, lengths: torch.Tensor | None = None) -> torch.Tensor:
        """Like `decode`, but return the logits after *every* appended token: ``(rows, k, width)``
        (positions past a row's length hold junk). A speculative step verifies a draft with it.

        >>> session.extend(torch.tensor([[5, 6, 7]])).shape   # doctest: +SKIP
        torch.Size([1, 3, 49152])
        """
        logits, _ = self._append(tokens, lengths, keep=tokens.shape[1])
        return _as_logits(logits, self.width)

    def reorder(self, rows: torch.Tensor) -> None:
        """Make row ``i`` a copy of old row ``rows[i]`` (rows may repeat or vanish): the KV cache,
        positions and mask are gathered in place, as beam search needs when beams fork.

        >>> session.reorder(torch.tensor([0, 0, 1]))   # doctest: +SKIP
        """
        rows = rows.to(self.next_pos.device)
        self.cache.reorder_cache(rows)
        self.next_pos = self.next_pos[rows]
        if self.mask is not None:
            self.mask = self.mask[rows]

    def forget(self, counts: torch.Tensor) -> None:
        """Drop the last ``counts[r]`` tokens of each row ``r`` from the cache (rejected draft tokens).

        Columns every row forgot are cropped from the cache; a row that forgot fewer tokens than
        others keeps the freed columns as masked holes, as a ragged `decode` leaves them.

        >>> session.forget(torch.tensor([2, 0]))   # doctest: +SKIP
        """
        device = self.next_pos.device
        counts = counts.to(device)
        if not bool((counts > 0).any()):
            return
        length = self.cache.get_seq_length()
        mask = self.mask
        if mask is None:
            mask = torch.ones((self.n_rows, length), dtype=torch.long, device=device)
        # real columns at or after each column, per row: the last `counts[r]` real ones are dropped
        after = mask.flip(1).cumsum(1).flip(1)
        mask = mask.masked_fill((mask == 1) & (after <= counts[:, None]), 0)
        real = mask.any(dim=0)
        last = int(real.nonzero().max()) + 1 if bool(real.any()) else 0
        if last < length:
            self.cache.crop(last - length)
            mask = mask[:, :last]
        self.next_pos = self.next_pos - counts
        self.mask = None if bool(mask.all()) else mask

    def _append(
        self, tokens: torch.Tensor, lengths: torch.Tensor | None, keep: int | torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Run the model on ``tokens`` (right-padded to ``lengths``) and advance the cache; return
        the logits of the last ``keep`` positions (or of the columns a 1-D tensor ``keep`` lists)
        and the lengths (None when every row used all k)."""
        n, k = tokens.shape
        device = self.next_pos.device
        tokens = tokens.to(device)
        ragged = lengths is not None and k > 1 and bool((lengths != k).any())
        if ragged:
            lengths = lengths.to(device)
            new_cols = (torch.arange(k, device=device)[None, :] < lengths[:, None]).long()
            if self.mask is None:
                self.mask = torch.ones((n, self.cache.get_seq_length()), dtype=torch.long, device=device)
        if self.mask is not None:
            new_cols = new_cols if ragged else torch.ones((n, k), dtype=torch.long, device=device)
            self.mask = torch.cat([self.mask, new_cols], dim=1)
        pos = (
            self.next_pos[:, None] + torch.arange(k, device=device)[None, :]
            if k > 1
            else self.next_pos[:, None]
        )
        with torch.inference_mode():
            out = self.hf(
                input_ids=tokens,
                attention_mask=self.mask,
                position_ids=pos,
                use_cache=True,
                logits_to_keep=keep,
                **{self.cache_kwarg: self.cache},
            )
        self.next_pos = self.next_pos + (lengths if ragged else k)
        return out.logits, (lengths if ragged else None)

    def keep(self, rows: torch.Tensor) -> None:
        rows = rows.to(self.next_pos.device)
        self.cache.batch_select_indices(rows)
        self.next_pos = self.next_pos[rows]
        if self.mask is not None:
            self.mask = self.mask[rows]
            self._trim_left()

    def _trim_left(self) -> None:
        """Drop leading cache columns that are padding in every remaining row (finished rows often
        had the longest prompts), and forget the mask once no padding is left."""
        from transformers.cache_utils import DynamicLayer

        real = self.mask.any(dim=0)
        first = int(real.to(torch.int8).argmax()) if bool(real.any()) else 0
        layers = getattr(self.cache, "layers", None)
        if first > 0 and layers and all(type(layer) is DynamicLayer for layer in layers):
            for layer in layers:
                if layer.keys is not None and layer.keys.numel():
                    layer.keys = layer.keys[:, :, first:]
                    layer.values = layer.values[:, :, first:]
            self.mask = self.mask[:, first:]
        if bool(self.mask.all()):
            self.mask = None


def cache_kwarg(hf: PreTrainedModel) -> str:
    """The keyword ``hf.forward`` takes its KV cache by: ``cache`` in current transformers (where
    ``past_key_values`` is deprecated), ``past_key_values`` in releases before the rename.

    >>> cache_kwarg(model.hf)   # doctest: +SKIP
    'cache'
    """
    kind = type(hf)
    name = _CACHE_KWARG.get(kind)
    if name is None:
        try:
            params = inspect.signature(hf.forward).parameters
        except (TypeError, ValueError):  # a C-level or otherwise opaque forward: assume the old name
            params = {}
        name = "cache" if "cache" in params else "past_key_values"
        _CACHE_KWARG[kind] = name
    return name


# Per model class: inspecting a signature on every forward pass would cost more than the lookup.
_CACHE_KWARG: dict[type, str] = {}


def _as_logits(logits: torch.Tensor, width: int) -> torch.Tensor:
    """Float32 logits exactly ``width`` wide (some models emit a few extra padded columns)."""
    if logits.shape[-1] != width:
        logits = logits[..., :width]
    return logits.float() if logits.dtype != torch.float32 else logits
