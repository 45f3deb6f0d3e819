"""The per-sequence cursor over a grammar index; same contract as `fsm.Matcher`.

Its state is a small tuple (lexer state, interned parser stack, ignore-run length), so copies and
rollbacks are O(1) per token and equal configurations share one cached mask.
"""

from __future__ import annotations

import numpy as np

from ..errors import TokenRejected
from ..index import unpack_bitmask
from ..matcher import tokenize_longest
from .index import GrammarIndex

FINISHED = None  # the configuration after EOS


class GrammarMatcher:
    """Tracks one sequence through a compiled grammar.

    >>> from fsm import Grammar, Vocabulary, compile
    >>> v = Vocabulary([b"1", b"+", b"1+", None], eos_token_ids=[3])
    >>> m = compile(Grammar('start: NUM ("+" NUM)*\\nNUM: /[0-9]/'), v).matcher()
    >>> m.advance(2); m.allowed_token_ids().tolist(), m.is_accepting()
    ([0, 2], False)
    """

    __slots__ = ("_history", "_ids", "_index", "_state")

    def __init__(self, index: GrammarIndex, state=None):
        self._index = index
        self._state = index.initial_state if state is None else state
        self._history: list = []
        self._ids: np.ndarray | None = None

    @property
    def index(self) -> GrammarIndex:
        return self._index

    @property
    def state(self):
        """(lexer state, parser stack id, ignore bytes in the current run), or None after EOS."""
        return self._state

    def _mask(self):
        return self._index.mask(self._state)

    def allowed_token_ids(self) -> np.ndarray:
        """Sorted int32 ids allowed next; contains the EOS ids exactly when accepting."""
        if self._state is FINISHED:
            return self._index._eos
        if self._ids is None:
            self._ids = unpack_bitmask(self._mask()[0], self._index.vocabulary.size)
        return self._ids

    def fill_bitmask(self, out: np.ndarray) -> None:
        """Write the allowed set into ``out`` as ceil(V/32) int32 words (bit i set = token i allowed)."""
        bm = self._index._eos_words if self._state is FINISHED else self._mask()[0]
        out[: len(bm)] = bm

    def is_allowed(self, token_id: int) -> bool:
        token_id = int(token_id)
        if self._state is FINISHED:
            return token_id in self._index._eos_set
        if not 0 <= token_id < self._index.vocabulary.size:
            return False
        word = int(self._mask()[0][token_id >> 5])
        return bool((word >> (token_id & 31)) & 1)

    def advance(self, token_id: int) -> None:
        """Consume one token; raises `TokenRejected` if it is outside the current mask."""
        token_id = int(token_id)
        idx = self._index
        if self._state is FINISHED:
            if token_id in idx._eos_set:  # padding a finished row with EOS is harmless
                self._history.append(FINISHED)
                return
            raise TokenRejected(token_id, f"token {token_id} after EOS: the sequence is already finished")
        if not self.is_allowed(token_id):
            raise TokenRejected(token_id)
        if token_id in idx._eos_set:
            nxt = FINISHED
        else:
            nxt = idx.step_token(self._state, idx.vocabulary.token_bytes(token_id))
            if nxt is None:  # the mask said yes: the two must agree
                raise AssertionError(f"grammar index inconsistency on token {token_id}")
        self._history.append(self._state)
        self._state = nxt
        self._ids = None

    def accepts_tokens(self, token_ids) -> bool:
        """True when the tokens can be consumed in order from here (the matcher is not changed)."""
        m = self.copy()
        try:
            for t in token_ids:
                m.advance(t)
        except TokenRejected:
            return False
        return True

    def is_accepting(self) -> bool:
        """True when the text so far is a complete sentence (EOS is allowed)."""
        return self._state is FINISHED or self._mask()[1]

    def is_finished(self) -> bool:
        """True when EOS was consumed, or the text is complete and no further text token is possible."""
        if self._state is FINISHED:
            return True
        _, accepting, has_text = self._mask()
        return accepting and not has_text

    def forced_bytes(self) -> bytes:
        """The bytes every continuation must start with (empty when there is a choice now)."""
        if self._state is FINISHED:
            return b""
        out = bytearray()
        cfg = self._state
        idx = self._index
        while len(out) < 4096:
            b = idx.single_byte(cfg)
            if b < 0:
                break
            out.append(b)
            cfg = idx.normalize(idx.step_byte(cfg, b))
        return bytes(out)

    def forced_tokens(self) -> list[int]:
        """Tokens spelling the forced bytes, longest match first; only whole tokens inside them."""
        data = self.forced_bytes()
        if not data:
            return []
        return tokenize_longest(self._index.vocabulary.trie, data)

    def copy(self) -> GrammarMatcher:
        m = GrammarMatcher(self._index, self._state)
        m._history = self._history.copy()
        m._ids = self._ids
        return m

    def rollback(self, n: int = 1) -> None:
        """Undo the last ``n`` advanced tokens."""
        if n < 0 or n > len(self._history):
            raise ValueError(f"cannot roll back {n} tokens; {len(self._history)} were consumed")
        if n:
            self._state = self._history[-n]
            del self._history[-n:]
            self._ids = None

    def reset(self) -> None:
        self._state = self._index.initial_state
        self._history.clear()
        self._ids = None

    @property
    def n_consumed(self) -> int:
        return len(self._history)

    def __repr__(self) -> str:
        return f"GrammarMatcher(state={self._state}, consumed={len(self._history)}, accepting={self.is_accepting()})"
