"""Packed token bitmasks: ceil(V/32) int32 words, bit ``i % 32`` of word ``i // 32`` = token ``i``.

The packed form is what samplers consume (one int32 word per 32 tokens, 4 KiB for a 32k vocabulary),
so indexes cache masks in this form and matchers copy them out without unpacking.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def pack_bitmask(token_ids: np.ndarray, size: int) -> np.ndarray:
    """Packed allowed-set: ceil(size/32) int32 words, bit ``i % 32`` of word ``i // 32`` = token ``i``.

    >>> pack_bitmask(np.array([0, 33]), 64).tolist()
    [1, 2]
    """
    words = (size + 31) // 32
    bits = np.zeros(words * 32, dtype=bool)
    bits[token_ids] = True
    return np.packbits(bits, bitorder="little").view("<i4").astype(np.int32, copy=False)


def unpack_bitmask(words: np.ndarray, size: int) -> np.ndarray:
    """Inverse of `pack_bitmask`: sorted token ids whose bit is set.

    >>> unpack_bitmask(pack_bitmask(np.array([3, 40]), 64), 64).tolist()
    [3, 40]
    """
    bits = np.unpackbits(np.ascontiguousarray(words, dtype="<i4").view(np.uint8), bitorder="little")
    return np.nonzero(bits[:size])[0].astype(np.int32)


def frozen_bitmask(token_ids: Iterable[int], size: int) -> np.ndarray:
    """`pack_bitmask` of ``token_ids``, read-only (safe to share between matchers and threads).

    >>> frozen_bitmask([2], 32).tolist(), frozen_bitmask([2], 32).flags.writeable
    ([4], False)
    """
    words = pack_bitmask(np.asarray(list(token_ids), dtype=np.int64), size)
    words.setflags(write=False)
    return words
