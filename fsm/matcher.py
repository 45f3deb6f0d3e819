"""The per-sequence cursor over a token index: masks, advancing, forced continuations, rollback."""

from __future__ import annotations

import numpy as np

from .errors import TokenRejected
from .index import FINISHED, RegexIndex


class Matcher:
    """Tracks one sequence through a compiled index. Cheap to create, copy and roll back.

    >>> from fsm.vocabulary import Vocabulary
    >>> from fsm.regex import regex_to_dfa
    >>> v = Vocabulary([b"a", b"b", b"ab", None], eos_token_ids=[3])
    >>> m = RegexIndex(regex_to_dfa("ab"), v).matcher()
    >>> m.advance(2); m.is_accepting(), m.allowed_token_ids().tolist()
    (True, [3])
    """

    __slots__ = ("_index", "_state", "_history")

    def __init__(self, index: RegexIndex, state: int | None = None):
        self._index = index
        self._state = index.initial_state if state is None else state
        self._history: list[int] = []

    @property
    def index(self) -> RegexIndex:
        return self._index

    @property
    def state(self) -> int:
        return self._state

    def allowed_token_ids(self) -> np.ndarray:
        """Sorted int32 ids allowed next; contains the EOS ids exactly when accepting."""
        if self._state == FINISHED:
            return self._index._eos
        return self._index.row(self._state).tokens

    def fill_bitmask(self, out: np.ndarray) -> None:
        """Write the allowed set into ``out`` as ceil(V/32) int32 words (bit i set = token i allowed)."""
        if self._state == FINISHED:
            out[: len(self._eos_words())] = self._eos_words()
            return
        bm = self._index.bitmask(self._state)
        out[: len(bm)] = bm

    def _eos_words(self) -> np.ndarray:
        idx = self._index
        bm = getattr(idx, "_eos_bitmask", None)
        if bm is None:
            from .index import pack_bitmask

            bm = pack_bitmask(idx._eos, idx.vocabulary.size)
            idx._eos_bitmask = bm
        return bm

    def is_allowed(self, token_id: int) -> bool:
        toks = self.allowed_token_ids()
        i = int(np.searchsorted(toks, token_id))
        return i < len(toks) and int(toks[i]) == token_id

    def advance(self, token_id: int) -> None:
        """Consume one token; raises `TokenRejected` if it is outside the current mask."""
        token_id = int(token_id)
        if self._state == FINISHED:
            if token_id in self._index._eos_set:  # padding a finished row with EOS is harmless
                self._history.append(FINISHED)
                return
            raise TokenRejected(token_id, f"token {token_id} after EOS: the sequence is already finished")
        row = self._index.row(self._state)
        toks = row.tokens
        i = int(np.searchsorted(toks, token_id))
        if i >= len(toks) or int(toks[i]) != token_id:
            raise TokenRejected(token_id)
        self._history.append(self._state)
        self._state = int(row.next_states[i])

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
        """True when the text so far is a complete match (EOS is allowed)."""
        return self._index.is_accepting_state(self._state)

    def is_finished(self) -> bool:
        """True when EOS was consumed, or the text is complete and no further text token is possible."""
        if self._state == FINISHED:
            return True
        return self.is_accepting() and not self._index.row(self._state).has_text

    def forced_bytes(self) -> bytes:
        """The bytes every continuation must start with (empty when there is a choice now)."""
        if self._state == FINISHED:
            return b""
        out = bytearray()
        s = self._state
        dfa = self._index.dfa
        while len(out) < 4096:
            b = self._index.single_byte(s)
            if b < 0:
                break
            out.append(b)
            s = dfa.step(s, b)
        return bytes(out)

    def forced_tokens(self) -> list[int]:
        """Tokens spelling the forced bytes, longest match first; only whole tokens inside them."""
        data = self.forced_bytes()
        if not data:
            return []
        return tokenize_longest(self._index.vocabulary.trie, data)

    def copy(self) -> "Matcher":
        m = Matcher(self._index, self._state)
        m._history = self._history.copy()
        return m

    def rollback(self, n: int = 1) -> None:
        """Undo the last ``n`` advanced tokens."""
        if n < 0 or n > len(self._history):
            raise ValueError(f"cannot roll back {n} tokens; {len(self._history)} were consumed")
        if n:
            self._state = self._history[-n]
            del self._history[-n:]

    def reset(self) -> None:
        self._state = self._index.initial_state
        self._history.clear()

    @property
    def n_consumed(self) -> int:
        return len(self._history)

    def __repr__(self) -> str:
        return f"Matcher(state={self._state}, consumed={len(self._history)}, accepting={self.is_accepting()})"


def tokenize_longest(trie, data: bytes) -> list[int]:
    """Greedy longest-match tokenization of ``data`` over the trie; stops where no token fits whole."""
    out: list[int] = []
    pos = 0
    nb, cs, cc, ts, tc, ti = (
        trie.node_byte,
        trie.child_start,
        trie.child_count,
        trie.tok_start,
        trie.tok_count,
        trie.tok_ids,
    )
    while pos < len(data):
        node, best, best_len = 0, -1, 0
        k = pos
        while k < len(data):
            a, n = int(cs[node]), int(cc[node])
            if n == 0:
                break
            j = a + int(np.searchsorted(nb[a : a + n], data[k]))
            if j >= a + n or nb[j] != data[k]:
                break
            node = j
            k += 1
            if tc[node]:
                best, best_len = int(ti[ts[node]]), k - pos
        if best < 0:
            break
        out.append(best)
        pos += best_len
    return out
