"""`LazyRow`: a row whose arrays are made only when read, for the rows made from others.

A row inside a string holds most of the vocabulary; the rows made from a body's shape, a kept first
row or a shift class's first row answer a matcher (their packed mask, `next_state` of one token)
without their (tokens, end states) arrays, 0.1 to 0.5 ms each on SmolLM2, which are made only if
something reads them (`allowed_token_ids`, the tests).
"""

from __future__ import annotations

import numpy as np


class LazyRow:
    """A row (`Row`'s interface) whose (tokens, end states) arrays are made only when something
    reads them (`_merged`): its mask and `next_state` answer without them. The rows made from a
    shape, a kept row or a shift class's first row (`shaped_row`, `counted_rows`, `moved_row`)."""

    __slots__ = ()

    def _merged(self) -> tuple[np.ndarray, np.ndarray]:
        """(tokens, sorted; the state each leads to), made once."""
        raise NotImplementedError

    @property
    def tokens(self) -> np.ndarray:
        return self._merged()[0]

    @property
    def next_states(self) -> np.ndarray:
        return self._merged()[1]
