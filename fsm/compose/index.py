"""`ComposedIndex`: the token index of a composed spec — rows of a `ComposedDFA` plus token edges.

A row is what every `fsm.index.RowIndex` computes (one trie walk from the state, here through
the composed DFA, so tokens that straddle two parts are found like any other), plus the special
ids of the token slots waiting in the state. Matchers are the plain `fsm.index.RowMatcher`.

No row leads into a token-level dead end when each leaf has none alone: free text never needs one
particular byte, a literal's bytes must each be a token (checked), and each spec's own index kind
is chosen so that its automaton has none (`fsm.json.strategy`). Where a leaf may end, the next
leaf's tokens are allowed too, so the composition adds none.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..index import RowIndex, walk_tokens
from ..limits import DEFAULT_LIMITS, Deadline, Limits
from ..vocabulary import Vocabulary
from .dfa import ComposedDFA
from .errors import CompositionError, describe
from .leaves import SpecLeaf
from .program import LEAF, build_program


class ComposedIndex(RowIndex):
    """Lazy token index of a composed spec; specs inside are compiled when first entered.

    >>> import fsm
    >>> v = fsm.Vocabulary([bytes([b]) for b in range(256)] + [b"ab", None], eos_token_ids=[257])
    >>> index = fsm.compile(fsm.Sequence("a", fsm.Regex("b+")), v)
    >>> index.matcher().allowed_token_ids().tolist()
    [97, 256]
    """

    def __init__(self, part: Any, vocab: Vocabulary, limits: Limits | None = None):
        limits = limits or DEFAULT_LIMITS
        self.part = part
        self.program = build_program(part, vocab, limits)
        unspelled = np.flatnonzero(~vocab.single_bytes).tolist()  # none in byte-level vocabularies
        for slot in self.program.slots if unspelled else ():
            data = getattr(slot.leaf, "data", b"")
            if slot.kind == LEAF and any(b in data for b in unspelled):
                raise CompositionError(
                    "has a byte no token spells alone, so a token-by-token walk could get stuck in it",
                    part=f"Literal({data!r})",
                )
        self.composed = ComposedDFA(self.program, limits)
        super().__init__(self.composed.as_byte_dfa(), vocab, part.fingerprint, limits, n_classes=256)

    def walk(self, states: np.ndarray, deadline: Deadline) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        with self.composed.within(deadline):
            return walk_tokens(self.dfa, states, self.vocabulary.trie, deadline=deadline)

    def on_demand(self) -> ComposedDFA:
        return self.composed

    def _row_arrays(self, state: int, deadline: Deadline) -> tuple[np.ndarray, np.ndarray]:
        tok, end = super()._row_arrays(state, deadline)
        edges = self.composed.token_edges(state)
        if edges:
            tok = np.concatenate([tok, np.fromiter(edges.keys(), np.int32, len(edges))])
            end = np.concatenate([end, np.fromiter(edges.values(), np.int32, len(edges))])
        return tok, end

    def single_byte(self, state: int) -> int:
        if self.composed.token_edges(state):
            return -1  # a special token is allowed too: the byte is not forced
        return super().single_byte(state)

    @property
    def n_states(self) -> int:
        return self.composed.n_states

    @property
    def compiled_parts(self) -> int:
        """How many spec parts (tag bodies...) were compiled so far (they compile on first entry)."""
        seen = {id(s.leaf) for s in self.program.slots if s.kind == LEAF and isinstance(s.leaf, SpecLeaf)}
        leaves = {id(s.leaf): s.leaf for s in self.program.slots if s.kind == LEAF}
        return sum(1 for i in seen if leaves[i].compiled)

    def build_all(self, deadline: Deadline | None = None) -> ComposedIndex:
        """Expand the whole composed DFA and compute every row (finite specs only); returns self."""
        deadline = deadline or self.limits.deadline()
        with self._lock:
            with self.composed.within(deadline):
                self.composed.expand_all()
            self.fill_rows(self.missing_rows(), deadline)
        return self

    @property
    def nbytes(self) -> int:
        return self._nbytes + self.composed.n_states * (256 * 4 + 1)

    def __repr__(self) -> str:
        return f"ComposedIndex({describe(self.part)}, states={self.n_states}, rows={len(self._rows)})"
