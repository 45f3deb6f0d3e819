"""A token's place in a sorted row, without the copy ``searchsorted`` makes of a row given a Python int.

An advance looks its token up in the row of the state it leaves (a string interior's row: 45k
tokens). ``ndarray.searchsorted`` given a Python int casts the whole int32 row to int64 first under
NumPy 2: a copy on every advance, ~11 µs against ~2 µs with the id cast to the row's type.
"""

from __future__ import annotations

import numpy as np


def find_token(tokens: np.ndarray, token_id: int) -> int:
    """The position of ``token_id`` in the sorted array ``tokens``, -1 when absent (the id cast to
    the array's type first: see the module).

    >>> find_token(np.array([2, 5, 9], np.int32), 5), find_token(np.array([2, 5, 9], np.int32), 4)
    (1, -1)
    """
    if not 0 <= token_id <= 0x7FFFFFFF:
        return -1
    i = int(tokens.searchsorted(tokens.dtype.type(token_id)))
    return i if i < len(tokens) and int(tokens[i]) == token_id else -1
