"""`MovedRow`: a counter state's row as its shift class's first row moved (`fsm.automata.counter_shift`).

Inside a ``maxLength`` string every count is a state of its own, and each row holds most of the
vocabulary. The states of one shift class allow the same tokens (the class's invariant: reading up
to a token's length from any of them acts alike up to the count), so a moved row's mask *is* its
class's first row's, shared as is. Where a token leads is asked one token at a time, when a matcher
advances by it: the first row's end with the count moved, or — for a token holding a byte that
leaves the block, which may enter the block anew at a count of its own — its bytes stepped from the
state. Deriving the whole row's arrays (each distinct end moved, the leaving tokens walked, 49k
tokens gathered, sorted and packed) cost ~0.5 ms a count on SmolLM2; a moved row costs a few µs
until something reads its arrays (`tokens`, `next_states`: made then, exactly as that derivation).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import numpy as np

from .counted_rows import distinct_ends
from .lazy_row import LazyRow


class _Row(Protocol):
    tokens: np.ndarray
    next_states: np.ndarray
    has_text: bool

    def next_state(self, token_id: int) -> int | None: ...


class MovedRow(LazyRow):
    """A row (`fsm.index.rows.Row`'s interface) made from ``base`` — the first row of its shift
    class — by ``moved`` (an end state with the count moved) and ``stepped`` (a token's end found
    by stepping its bytes from this row's state, -1 if rejected), the latter for the tokens
    ``leaving`` marks."""

    __slots__ = ("_arrays", "base", "has_text", "leaving", "moved", "packed", "stepped")

    HELD_BYTES = 800  # the row, its two closures and their cells (what a budget counts per row)

    def __init__(
        self,
        base: _Row,
        packed: np.ndarray,
        moved: Callable[[int], int],
        stepped: Callable[[int], int],
        leaving: np.ndarray,
    ):
        self.base, self.packed, self.moved, self.stepped, self.leaving = base, packed, moved, stepped, leaving
        self.has_text = base.has_text
        self._arrays: tuple[np.ndarray, np.ndarray] | None = None

    def next_state(self, token_id: int) -> int | None:
        """The state ``token_id`` leads to, or None when it is not allowed."""
        e = self.base.next_state(token_id)
        if e is None or e < 0:  # not allowed, or EOS (FINISHED)
            return e
        return self._end(token_id, e)

    def _end(self, token_id: int, e: int) -> int:
        if self.leaving[token_id]:
            got = self.stepped(token_id)
            # the class's invariant: a token the first row allows, every state of the class allows
            assert got >= 0, f"token {token_id} allowed by the class, not by its bytes"
            return got
        return self.moved(e)

    def _merged(self) -> tuple[np.ndarray, np.ndarray]:
        if self._arrays is None:
            tok, end = self.base.tokens, self.base.next_states
            out = end.copy()
            text = end >= 0
            if text.any():
                present, where = distinct_ends(end[text])
                out[text] = np.array([self.moved(e) for e in present.tolist()], dtype=np.int32)[where]
                for i in np.flatnonzero(text & self.leaving[tok]).tolist():
                    out[i] = self._end(int(tok[i]), int(end[i]))
            self._arrays = (tok, out)
        return self._arrays

    @property
    def tokens(self) -> np.ndarray:
        return self.base.tokens  # the class's: no end state made to read them

    @property
    def nbytes(self) -> int:
        return 0 if self._arrays is None else self._arrays[1].nbytes
