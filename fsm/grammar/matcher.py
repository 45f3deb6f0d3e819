"""The matcher of a grammar index: `fsm.Matcher` over configurations instead of DFA states.

Its state is a small tuple (lexer state, interned parser stack, ignore-run length), so copies and
rollbacks are O(1) per token and equal configurations share one cached mask.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..errors import TokenRejected
from ..index import Matcher, unpack_bitmask

if TYPE_CHECKING:
    from .index import GrammarIndex

Config = tuple[int, int, int]  # (lexer state, parser stack id, ignore bytes in the current run)


class GrammarMatcher(Matcher):
    """Tracks one sequence through a compiled grammar.

    >>> from fsm import Grammar, Vocabulary, compile
    >>> v = Vocabulary([b"1", b"+", b"1+", None], eos_token_ids=[3])
    >>> m = compile(Grammar('start: NUM ("+" NUM)*\\nNUM: /[0-9]/'), v).matcher()
    >>> m.advance(2); m.allowed_token_ids().tolist(), m.is_accepting()
    ([0, 2], False)
    """

    __slots__ = ("_ids",)

    FINISHED = None  # the configuration after EOS

    def __init__(self, index: GrammarIndex, state: Config | None = None):
        super().__init__(index, state)
        self._ids: np.ndarray | None = None  # allowed ids of the current state, unpacked once

    @property
    def index(self) -> GrammarIndex:
        return self._index

    @property
    def state(self) -> Config | None:
        """(lexer state, parser stack id, ignore bytes in the current run), or None after EOS."""
        return self._state

    def _mask(self) -> tuple[np.ndarray, bool, bool]:
        return self._index.mask(self._state)

    def _allowed_ids(self) -> np.ndarray:
        if self._ids is None:
            self._ids = unpack_bitmask(self._mask()[0], self._index.vocabulary.size)
        return self._ids

    def _bitmask(self) -> np.ndarray:
        return self._mask()[0]

    def is_allowed(self, token_id: int) -> bool:
        """True when ``advance(token_id)`` would succeed (one bit test, no unpacking)."""
        token_id = int(token_id)
        if self._state is None:
            return token_id in self._index.eos_set
        if not 0 <= token_id < self._index.vocabulary.size:
            return False
        word = int(self._mask()[0][token_id >> 5])
        return bool((word >> (token_id & 31)) & 1)

    def _next_state(self, token_id: int) -> Config | None:
        if not self.is_allowed(token_id):
            raise TokenRejected(token_id)
        idx = self._index
        if token_id in idx.eos_set:
            return None
        nxt = idx.step_token(self._state, idx.vocabulary.token_bytes(token_id))
        if nxt is None:  # the mask said yes: the two must agree
            raise AssertionError(f"grammar index inconsistency on token {token_id}")
        return nxt

    def _accepting(self) -> bool:
        return self._mask()[1]

    def _has_text(self) -> bool:
        return self._mask()[2]

    def _after_byte(self, state: Config, byte: int) -> Config:
        idx = self._index
        return idx.normalize(idx.step_byte(state, byte))

    def _moved(self) -> None:
        self._ids = None

    def copy(self) -> GrammarMatcher:
        m = super().copy()
        m._ids = self._ids
        return m
