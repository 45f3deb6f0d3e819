"""A token index over a lazily determinized byte DFA (see `json_dfa`).

Same interface as `fsm.index.RegexIndex` as far as matchers use it (rows, bitmasks, forced bytes,
acceptance), computed with the same vectorized trie walk (`fsm.index.walk_tokens`). Because the DFA
itself is built on demand, compiling a large schema costs only its NFA, and each new state the
generation reaches costs one trie walk plus the DFA rows that walk touches. Not persisted to the
disk cache (it is cheap to rebuild); ``build_all()`` expands everything.

>>> from fsm.vocabulary import Vocabulary
>>> from fsm.json_ast import lit, alt
>>> from fsm.json_automaton import node_nfa
>>> from fsm.json_dfa import LazyByteDFA
>>> v = Vocabulary([b"y", b"es", b"no", b"yes", None], eos_token_ids=[4])
>>> idx = LazyJsonIndex(LazyByteDFA(*node_nfa(alt(lit("yes"), lit("no")))), v)
>>> idx.matcher().allowed_token_ids().tolist()
[0, 2, 3]
"""

from __future__ import annotations

import threading

import numpy as np

from .automata import LazyByteDFA
from .errors import SpecTooComplex
from .index import FINISHED, Row, pack_bitmask, walk_tokens
from .limits import DEFAULT_LIMITS, Limits
from .vocabulary import Vocabulary


class LazyJsonIndex:
    """Lazy token index over a `LazyByteDFA`; rows are computed on first use and shared by matchers."""

    def __init__(
        self, lazy: LazyByteDFA, vocab: Vocabulary, fingerprint: str = "", limits: Limits | None = None
    ):
        self.lazy = lazy
        self.dfa = lazy.as_byte_dfa()
        self.vocabulary = vocab
        self.fingerprint = fingerprint
        self.limits = limits or DEFAULT_LIMITS
        self._rows: dict[int, Row] = {}
        self._shared: dict[bytes, tuple[np.ndarray, list]] = {}
        self._lock = threading.RLock()
        self._eos = np.array(vocab.eos_token_ids, dtype=np.int32)
        self._eos_set = frozenset(vocab.eos_token_ids)
        self._single: dict[int, int] = {}
        self._class_sizes = np.bincount(lazy.byte_class, minlength=lazy.n_classes)
        self._nbytes = 0

    @staticmethod
    def usable(lazy: LazyByteDFA, vocab: Vocabulary) -> bool:
        """Lazy rows are exact when no state can need a byte the vocabulary only spells in longer tokens."""
        return lazy.spellable(np.nonzero(vocab.single_bytes)[0])

    def row(self, state: int) -> Row:
        r = self._rows.get(state)
        if r is None:
            with self._lock:
                r = self._rows.get(state)
                if r is None:
                    _, tok, end = walk_tokens(self.dfa, np.array([state]), self.vocabulary.trie)
                    r = self._make_row(state, tok, end)
                    self._rows[state] = r
        return r

    def _make_row(self, state: int, tok: np.ndarray, end: np.ndarray) -> Row:
        has_text = len(tok) > 0
        if self.dfa.accepting[state]:
            tok = np.concatenate([tok, self._eos])
            end = np.concatenate([end, np.full(len(self._eos), FINISHED, dtype=np.int32)])
        order = np.argsort(tok, kind="stable")
        tok, end = tok[order].astype(np.int32), end[order].astype(np.int32)
        key = tok.tobytes()
        shared = self._shared.get(key)
        if shared is not None and np.array_equal(shared[0], tok):
            row = Row(shared[0], end, has_text, None)
            row._bitmask = shared[1][0]
        else:
            row = Row(tok, end, has_text)
            self._shared[key] = (tok, [None])
            self._nbytes += tok.nbytes
        self._nbytes += end.nbytes
        if self._nbytes > self.limits.max_index_bytes:
            raise SpecTooComplex(
                f"token index {self.fingerprint[:40]} grew past max_index_bytes={self.limits.max_index_bytes:,}",
                budget="max_index_bytes",
                limit=self.limits.max_index_bytes,
            )
        return row

    def bitmask(self, state: int) -> np.ndarray:
        r = self.row(state)
        bm = r._bitmask
        if bm is None:
            with self._lock:
                shared = self._shared.get(r.tokens.tobytes())
                if shared is not None and shared[1][0] is not None:
                    bm = shared[1][0]
                else:
                    bm = pack_bitmask(r.tokens, self.vocabulary.size)
                    bm.setflags(write=False)
                    if shared is not None:
                        shared[1][0] = bm
                    self._nbytes += bm.nbytes
                r._bitmask = bm
        return bm

    def build_all(self) -> LazyJsonIndex:
        """Expand the whole DFA and compute every row now; returns self."""
        with self._lock:
            self.lazy.expand_all()
            todo = np.array(sorted(set(range(self.lazy.n_states)) - set(self._rows)), dtype=np.int64)
            for lo in range(0, len(todo), 256):
                chunk = todo[lo : lo + 256]
                src, tok, end = walk_tokens(self.dfa, chunk, self.vocabulary.trie)
                order = np.argsort(src, kind="stable")
                src, tok, end = src[order], tok[order], end[order]
                bounds = np.searchsorted(src, np.arange(len(chunk) + 1))
                for i, s in enumerate(chunk.tolist()):
                    self._rows[s] = self._make_row(
                        s, tok[bounds[i] : bounds[i + 1]], end[bounds[i] : bounds[i + 1]]
                    )
        return self

    def single_byte(self, state: int) -> int:
        """The only byte the DFA accepts from ``state`` when it is not accepting, else -1."""
        b = self._single.get(state)
        if b is None:
            b = -1
            if not self.dfa.accepting[state]:
                live = self.dfa.table[state] >= 0
                if int(self._class_sizes[live].sum()) == 1:
                    cls = int(np.nonzero(live)[0][0])
                    b = int(np.nonzero(self.lazy.byte_class == cls)[0][0])
            self._single[state] = b
        return b

    @property
    def initial_state(self) -> int:
        return self.dfa.initial

    def is_accepting_state(self, state: int) -> bool:
        return state == FINISHED or bool(self.dfa.accepting[state])

    @property
    def n_rows(self) -> int:
        return len(self._rows)

    @property
    def nbytes(self) -> int:
        return self._nbytes + self.lazy.n_states * (self.lazy.n_classes * 4 + 1)

    def matcher(self):
        from .matcher import Matcher

        return Matcher(self)  # type: ignore[arg-type]

    def __repr__(self) -> str:
        return f"LazyJsonIndex({self.fingerprint[:24]}, states={self.lazy.n_states}, rows={len(self._rows)})"
