"""`DfaIndex`: the token index of a whole (eager) `ByteDFA` — regexes, choices, regular schemas.

Rows are walked over the vocabulary trie folded onto the DFA's byte classes (`class_trie`), built
once per index: a few hundred class paths instead of ~100k tokens for a free-text state. When some
state needs a byte no single token spells, the index is built whole at once and transitions into
states no token sequence can finish are pruned, so a matcher never walks into a token-level dead end.
"""

from __future__ import annotations

import time

import numpy as np

from ..automata import ByteDFA
from ..errors import SpecError
from ..limits import Deadline, Limits
from ..vocabulary import TokenTrie, Vocabulary
from .kernels import kernels
from .rows import FINISHED, Row, RowIndex
from .token_walk import class_trie, walk_tokens

_FOLD_AFTER_SECONDS = 0.004  # byte-trie walks past this: fold the trie for the next rows


class DfaIndex(RowIndex):
    """Lazy token index over a byte DFA; immutable from the outside and safe to share across threads.

    >>> from fsm.vocabulary import Vocabulary
    >>> from fsm.regex import regex_to_dfa
    >>> v = Vocabulary([b"a", b"b", b"ab", None], eos_token_ids=[3])
    >>> m = DfaIndex(regex_to_dfa("ab"), v).matcher()
    >>> m.allowed_token_ids().tolist()
    [0, 2]
    """

    def __init__(
        self,
        dfa: ByteDFA,
        vocab: Vocabulary,
        fingerprint: str = "",
        limits: Limits | None = None,
        deadline: Deadline | None = None,
        name: str = "",
    ):
        """``deadline``: the compile's, for the work done here (default: ``limits.max_seconds`` from now);
        ``name``: what a budget overrun while a row is made names (`RowIndex`)."""
        super().__init__(dfa, vocab, fingerprint, limits, n_classes=dfa.table.shape[1], name=name)
        self._class_trie: TokenTrie | None = None
        self._class_preorder = None  # the same, numbered depth first (`preorder.PreorderTrie`)
        self._class_steps = None  # uniform steps over class labels (the byte walks' are over bytes)
        self._byte_walks = 0.0  # seconds spent walking the byte trie, before the fold
        deadline = deadline or self.limits.deadline()
        if not self._all_states_reach_accept_by_single_bytes(deadline):
            # Some state needs a byte that is no token on its own: prune by token-level liveness.
            self.build_all(deadline)
            self._prune_token_dead(deadline)

    def walk(self, states: np.ndarray, deadline: Deadline) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if self._class_trie is not None:
            return walk_tokens(self.dfa, states, self._class_trie, labels_are_classes=True, deadline=deadline)
        # The byte trie first: folding it onto this DFA's classes costs several ms, more than all
        # the rows of a small regex (an ISO date's take well under one each), so the fold is made
        # once the walks have cost about as much (rows are the same either way).
        t = time.perf_counter()
        src, tok, end = walk_tokens(self.dfa, states, self.vocabulary.trie, deadline=deadline)
        self._byte_walks += time.perf_counter() - t
        if self._byte_walks > _FOLD_AFTER_SECONDS:
            _ = self.trie
        return src, tok, end

    def kernel_row(self, state: int, deadline: Deadline) -> tuple[np.ndarray, np.ndarray]:
        k = kernels()
        if self._class_preorder is not None:
            return k.walk_row(
                self.dfa,
                state,
                self._class_preorder,
                labels_are_classes=True,
                deadline=deadline,
                steps=self._class_steps,
            )
        t = time.perf_counter()
        row = super().kernel_row(state, deadline)  # over the byte trie
        self._byte_walks += time.perf_counter() - t
        if self._byte_walks > _FOLD_AFTER_SECONDS:
            _ = self.trie
        return row

    @property
    def n_states(self) -> int:
        return self.dfa.n_states

    def build_all(self, deadline: Deadline | None = None) -> DfaIndex:
        """Compute every row now (ahead-of-time use), within ``deadline`` (default:
        ``limits.max_seconds`` from now); returns self."""
        with self._lock:
            _ = self.trie  # every row: the fold pays
            self.fill_rows(self.missing_rows(), deadline)
        return self

    def _all_states_reach_accept_by_single_bytes(self, deadline: Deadline) -> bool:
        singles = self.vocabulary.single_bytes
        # Only the classes the DFA distinguishes matter: a class is usable if one of its bytes is a token.
        usable = np.zeros(self.dfa.table.shape[1], dtype=bool)
        usable[self.dfa.byte_class[singles]] = True
        full = self.dfa.table[:, usable]
        # backward search from the accepting states over the reversed usable edges: linear, where
        # a fixpoint of whole-table passes costs one pass per state of a long chain (a{1,10000})
        src, col = np.nonzero(full >= 0)
        dst = full[src, col]
        order = np.argsort(dst, kind="stable")
        src, dst = src[order], dst[order]
        starts = np.searchsorted(dst, np.arange(self.dfa.n_states + 1))
        live = self.dfa.accepting.copy()
        frontier = np.flatnonzero(live)
        while len(frontier):
            lo, cnt = starts[frontier], starts[frontier + 1] - starts[frontier]
            at = np.repeat(lo - (np.cumsum(cnt) - cnt), cnt) + np.arange(int(cnt.sum()))
            preds = np.unique(src[at])
            frontier = preds[~live[preds]]
            live[frontier] = True
            deadline.check(f"index {self.fingerprint[:40]}: token-level liveness")
        return bool(live.all())

    def _prune_token_dead(self, deadline: Deadline) -> None:
        """Drop transitions into states from which no token sequence reaches acceptance."""
        n = self.dfa.n_states
        alive = np.ones(n, dtype=bool)
        rows = self.computed_rows()
        while True:
            deadline.check(f"index {self.fingerprint[:40]}: token-level pruning")
            changed = False
            for s, r in rows.items():
                if not alive[s]:
                    continue
                ok = (r.next_states == FINISHED) | alive[np.maximum(r.next_states, 0)]
                if not ok.any():
                    alive[s] = False
                    changed = True
            if not changed:
                break
        if not alive[self.dfa.initial]:
            raise SpecError(
                "no sequence of this vocabulary's tokens can produce a string the spec accepts "
                "(the spec needs bytes that are not tokens)"
            )
        for s, r in rows.items():
            ok = (r.next_states == FINISHED) | alive[np.maximum(r.next_states, 0)]
            if not ok.all():
                tok, end = r.tokens[ok], r.next_states[ok]
                self._store(s, Row(tok.copy(), end.copy(), bool((end != FINISHED).any())))

    @property
    def trie(self) -> TokenTrie:
        """The vocabulary trie folded onto this DFA's byte classes (built once per index)."""
        if self._class_trie is None:
            with self._lock:
                if self._class_trie is None:
                    folded = class_trie(self.vocabulary.trie, self.dfa)
                    self._class_steps = kernels().Steps()
                    self._class_preorder = kernels().preorder(folded)
                    self._class_trie = folded
        return self._class_trie

    @property
    def nbytes(self) -> int:
        return self._nbytes + self.dfa.nbytes

    def __repr__(self) -> str:
        return f"DfaIndex({self.fingerprint[:24]}, states={self.dfa.n_states}, rows={len(self._rows)})"


RegexIndex = DfaIndex  # the public name of old (`fsm.RegexIndex`), kept for users
