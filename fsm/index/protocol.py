"""The `Index` protocol: what `fsm.compile` returns, whatever the spec.

An index is the immutable, shareable part of a compiled constraint (per state: the allowed tokens
and where each leads); its `matcher()` is the cheap per-sequence cursor (`fsm.Matcher`). Three
kinds implement it: `fsm.index.dfa.DfaIndex` (eager DFA), `fsm.index.lazy.LazyDfaIndex` (lazily
determinized DFA) and `fsm.grammar.index.GrammarIndex` (lexer automaton + LR parser).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

if TYPE_CHECKING:
    from ..vocabulary import Vocabulary
    from .matcher import Matcher


@runtime_checkable
class Index(Protocol):
    """A compiled constraint for one vocabulary, shared by all the matchers of its sequences.

    >>> import fsm
    >>> v = fsm.Vocabulary([b"a", b"b", None], eos_token_ids=[2])
    >>> index = fsm.compile(fsm.Regex("ab*"), v)
    >>> isinstance(index, fsm.Index), isinstance(index.matcher(), fsm.Matcher)
    (True, True)
    """

    vocabulary: Vocabulary
    fingerprint: str  # the spec's fingerprint (the cache key, with the vocabulary's)
    eos_ids: np.ndarray  # the vocabulary's EOS ids, sorted int32
    eos_set: frozenset[int]
    eos_bitmask: np.ndarray  # packed mask of the EOS ids (read-only)

    @property
    def initial_state(self) -> Any:
        """The state a fresh matcher starts in."""
        ...

    @property
    def n_rows(self) -> int:
        """Rows (per-state token tables) computed so far."""
        ...

    @property
    def nbytes(self) -> int:
        """Memory held by the index (what the in-memory cache budgets)."""
        ...

    def matcher(self) -> Matcher:
        """A fresh matcher at the start (cheap: one per sequence)."""
        ...

    def build_all(self) -> Index:
        """Compute everything ahead of time (instead of on first use); returns self."""
        ...

    def single_byte(self, state: Any) -> int:
        """The only byte allowed in ``state`` when the text cannot end there, else -1."""
        ...
