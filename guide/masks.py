"""Constraint masks on the logits' device, from the matchers' packed bitmasks.

Each step the constrained rows' matchers write their packed allowed-sets (ceil(V/32) int32 words,
bit i = token i) into one host buffer (pinned on CUDA); one copy moves it to the device and one
vectorized unpack sets every disallowed logit to -inf. Nothing is built per token in Python, no
dense mask is built on the host for a GPU, and rows without a constraint are never touched.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import torch

if TYPE_CHECKING:
    from .constraints import TokenMatcher

NEG_INF = float("-inf")
_NEG_INF_BITS = np.array(np.float32(NEG_INF)).view(np.int32)  # 0xFF800000


class MaskBuffer:
    """Reusable bitmask staging for up to ``capacity`` rows of a ``vocab_size``-wide logits tensor.

    >>> buf = MaskBuffer(vocab_size=64, device=torch.device("cpu"), capacity=2)
    >>> logits = torch.zeros(2, 64)
    >>> buf.host[0, :] = [0b101, 0]            # row 0 allows tokens 0 and 2 only
    >>> buf.apply_staged(logits, rows=[0], n=1)
    >>> torch.isfinite(logits[0]).nonzero().flatten().tolist(), bool(torch.isfinite(logits[1]).all())
    ([0, 2], True)
    """

    def __init__(self, vocab_size: int, device: torch.device, capacity: int):
        self.vocab_size = vocab_size
        self.words = (vocab_size + 31) // 32
        self.device = torch.device(device)
        self.capacity = max(1, capacity)
        pin = self.device.type == "cuda"
        self._host_t = torch.zeros((self.capacity, self.words), dtype=torch.int32, pin_memory=pin)
        self.host: np.ndarray = self._host_t.numpy()
        if self.device.type == "cpu":
            self._dev = None
        else:
            self._dev = torch.empty((self.capacity, self.words), dtype=torch.int32, device=self.device)
            self._shifts = torch.arange(32, dtype=torch.int32, device=self.device)

    def apply(self, logits: torch.Tensor, rows: Sequence[int], matchers: Sequence[TokenMatcher]) -> None:
        """Mask ``logits[rows[i]]`` to what ``matchers[i]`` allows, in place.

        >>> buf.apply(logits, rows=[0, 2], matchers=[m0, m2])   # doctest: +SKIP
        """
        if rows:
            self.apply_staged(logits, rows, self.stage(matchers))

    def stage(self, matchers: Sequence[TokenMatcher]) -> int:
        """Write each matcher's packed allowed-set into ``self.host`` (row i for ``matchers[i]``); return how many.

        Touches only the host buffer and the matchers, so it may run on a worker thread while the
        forward pass runs (see `guide.loop`), as long as nothing else uses either meanwhile.

        >>> buf.stage([m0, m2])   # doctest: +SKIP
        2
        """
        n = len(matchers)
        if n > self.capacity:
            self._grow(n)
        host = self.host
        for i, m in enumerate(matchers):
            m.fill_bitmask(host[i])
        return n

    def apply_staged(self, logits: torch.Tensor, rows: Sequence[int], n: int) -> None:
        """Mask ``logits[rows]`` with the first ``n`` rows already written into ``self.host``."""
        width = logits.shape[-1]
        if width > self.words * 32:
            raise ValueError(f"logits are {width} wide but the masks cover only {self.words * 32} tokens")
        whole = n == logits.shape[0] and list(rows) == list(range(n))
        if self._dev is None:
            # CPU logits: unpacking the host words is already "on the logits' device". Masked
            # writes branch per element, so build an additive mask with integer ops instead:
            # (bit - 1) & bits(-inf) is 0.0 for allowed tokens and -inf for the rest.
            bits = np.unpackbits(self.host[:n].view(np.uint8), axis=1, bitorder="little")[:, :width]
            add = bits.astype(np.int32)
            add -= 1
            add &= _NEG_INF_BITS
            addend = torch.from_numpy(add.view(np.float32))
            if whole:
                logits.add_(addend)
            else:
                logits.index_add_(0, torch.as_tensor(list(rows), dtype=torch.long), addend)
            return
        dev = self._dev[:n]
        dev.copy_(self._host_t[:n], non_blocking=True)
        allowed = ((dev[:, :, None] >> self._shifts) & 1).view(n, self.words * 32)[:, :width].bool()
        if whole:
            logits.masked_fill_(~allowed, NEG_INF)
        else:
            idx = torch.as_tensor(list(rows), dtype=torch.long, device=logits.device)
            logits[idx] = logits[idx].masked_fill_(~allowed, NEG_INF)

    def _grow(self, n: int) -> None:
        fresh = MaskBuffer(self.vocab_size, self.device, max(n, 2 * self.capacity))
        self.__dict__.update(fresh.__dict__)


def forbid_padding_ids(logits: torch.Tensor, n_tokens: int) -> None:
    """Ids at or beyond the tokenizer's size (padded embedding rows) are never real tokens: ban them.

    >>> x = torch.zeros(1, 4); forbid_padding_ids(x, 3); x.tolist()
    [[0.0, 0.0, 0.0, -inf]]
    """
    if logits.shape[-1] > n_tokens:
        logits[:, n_tokens:] = NEG_INF
