"""`LazyDfaIndex`: a token index over a lazily determinized byte DFA (`fsm.automata.LazyByteDFA`).

The rows are those of every `RowIndex`; what differs is the automaton: because the DFA itself is
built on demand, compiling a large schema costs only its NFA, and each new state the generation
reaches costs one trie walk plus the DFA rows that walk touches. The walk uses the byte trie (a
class trie would need every DFA row up front). Not persisted to the disk cache (it is cheap to
rebuild); ``build_all()`` expands everything.

>>> from fsm.vocabulary import Vocabulary
>>> from fsm.automata import LazyByteDFA, alt, lit, node_nfa
>>> v = Vocabulary([b"y", b"es", b"no", b"yes", None], eos_token_ids=[4])
>>> idx = LazyDfaIndex(LazyByteDFA(*node_nfa(alt(lit("yes"), lit("no")))), v)
>>> idx.matcher().allowed_token_ids().tolist()
[0, 2, 3]
"""

from __future__ import annotations

import numpy as np

from ..automata import LazyByteDFA
from ..limits import Deadline, Limits
from ..vocabulary import Vocabulary
from .rows import RowIndex
from .token_walk import walk_tokens


class LazyDfaIndex(RowIndex):
    """Lazy token index over a `LazyByteDFA`; rows are computed on first use and shared by matchers."""

    def __init__(
        self, lazy: LazyByteDFA, vocab: Vocabulary, fingerprint: str = "", limits: Limits | None = None
    ):
        self.lazy = lazy
        super().__init__(lazy.as_byte_dfa(), vocab, fingerprint, limits, n_classes=lazy.n_classes)

    @staticmethod
    def usable(lazy: LazyByteDFA, vocab: Vocabulary) -> bool:
        """Lazy rows are exact when no state can need a byte the vocabulary only spells in longer tokens."""
        return lazy.spellable(np.nonzero(vocab.single_bytes)[0])

    def walk(self, states: np.ndarray, deadline: Deadline) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        self.lazy.use_deadline(deadline)  # the DFA rows this walk expands count against it too
        try:
            return walk_tokens(self.dfa, states, self.vocabulary.trie, deadline=deadline)
        finally:
            self.lazy.use_deadline(None)

    def on_demand(self) -> LazyByteDFA:
        return self.lazy

    @property
    def n_states(self) -> int:
        return self.lazy.n_states

    def build_all(self, deadline: Deadline | None = None) -> LazyDfaIndex:
        """Expand the whole DFA and compute every row now, within ``deadline`` (default:
        ``limits.max_seconds`` from now); returns self."""
        deadline = deadline or self.limits.deadline()
        with self._lock:
            self.lazy.use_deadline(deadline)
            try:
                self.lazy.expand_all()
            finally:
                self.lazy.use_deadline(None)
            self.fill_rows(self.missing_rows(), deadline)
        return self

    @property
    def nbytes(self) -> int:
        return self._nbytes + self.lazy.n_states * (self.lazy.n_classes * 4 + 1)

    def __repr__(self) -> str:
        return f"LazyDfaIndex({self.fingerprint[:24]}, states={self.lazy.n_states}, rows={len(self._rows)})"
