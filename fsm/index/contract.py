"""The contract of a compiled constraint: the `fsm.Index` protocol and the `fsm.Matcher` base class.

An index is the immutable, shareable part (per state: the allowed tokens and where each leads),
whatever the spec; three kinds implement the protocol: `fsm.index.dfa.DfaIndex` (eager DFA),
`fsm.index.lazy.LazyDfaIndex` (lazily determinized DFA) and `fsm.grammar.index.GrammarIndex` (lexer
automaton + LR parser). Its `matcher()` is the per-sequence cursor, one contract for every index kind.

A matcher holds a state of its index and the states it passed through, so copies and rollbacks are
O(1) per token; the index holds everything shared (rows, masks), so matchers are cheap to create.
This base class holds the whole contract — EOS handling, bitmasks, rollback, forced tokens — and
asks its subclass only how its index answers for one state (`allowed ids`, `bitmask`, the next state
of a token or a byte, whether the state accepts and whether any text token is left).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, runtime_checkable

import numpy as np

from ..errors import TokenRejected
from .token_walk import tokenize_longest

if TYPE_CHECKING:
    from ..vocabulary import Vocabulary

_MAX_FORCED_BYTES = 4096  # forced runs longer than this are cut (a cap, not a language property)


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


class Matcher(ABC):
    """Tracks one sequence through a compiled index. Cheap to create, copy and roll back.

    Every index's ``matcher()`` returns one; the contract: ``allowed_token_ids()`` is sorted and
    equals the bits ``fill_bitmask`` sets; it contains the EOS ids exactly when ``is_accepting()``;
    ``advance`` raises `TokenRejected` outside it; after EOS only EOS is allowed (padding).

    >>> import fsm
    >>> v = fsm.Vocabulary([b"a", b"b", b"ab", None], eos_token_ids=[3])
    >>> m = fsm.compile(fsm.Regex("ab"), v).matcher()
    >>> m.advance(2); m.is_accepting(), m.allowed_token_ids().tolist()
    (True, [3])
    """

    __slots__ = ("_history", "_index", "_state")

    FINISHED: ClassVar[Any]  # the state after EOS (a value no other state of the index takes)

    def __init__(self, index: Index, state: Any = None):
        self._index = index
        self._state = index.initial_state if state is None else state
        self._history: list = []

    # -- what a subclass answers for its current, unfinished state -----------------------------
    @abstractmethod
    def _allowed_ids(self) -> np.ndarray:
        """Sorted int32 ids allowed in the current state (EOS included when accepting)."""

    @abstractmethod
    def _bitmask(self) -> np.ndarray:
        """Packed mask of `_allowed_ids`."""

    @abstractmethod
    def _next_state(self, token_id: int) -> Any:
        """The state after ``token_id`` (FINISHED for EOS); raises `TokenRejected` when not allowed."""

    @abstractmethod
    def _accepting(self) -> bool:
        """The text so far is complete."""

    @abstractmethod
    def _has_text(self) -> bool:
        """Some non-EOS token is allowed now."""

    @abstractmethod
    def _after_byte(self, state: Any, byte: int, before: bytearray) -> Any:
        """The state after ``byte``, which the index reported as the only one allowed in ``state``;
        ``before``: the forced bytes read ahead of it in this run (for a matcher whose states also
        depend on its text). None: no state after all, and the run ends before ``byte``."""

    def _moved(self) -> None:  # noqa: B027  (a hook: a no-op unless a subclass caches per state)
        """Called after the state changed (subclasses drop per-state caches here)."""

    # -- the contract ------------------------------------------------------------------------
    @property
    def index(self) -> Index:
        return self._index

    @property
    def state(self) -> Any:
        """The index state this matcher is in (`FINISHED` after EOS)."""
        return self._state

    @property
    def n_consumed(self) -> int:
        """Tokens advanced so far (and not rolled back)."""
        return len(self._history)

    def allowed_token_ids(self) -> np.ndarray:
        """Sorted int32 ids allowed next; contains the EOS ids exactly when accepting."""
        if self._state == self.FINISHED:
            return self._index.eos_ids
        return self._allowed_ids()

    def fill_bitmask(self, out: np.ndarray) -> None:
        """Write the allowed set into ``out`` as ceil(V/32) int32 words (bit i set = token i allowed)."""
        bm = self._index.eos_bitmask if self._state == self.FINISHED else self._bitmask()
        out[: len(bm)] = bm

    def is_allowed(self, token_id: int) -> bool:
        """True when ``advance(token_id)`` would succeed: one bit of the packed mask (a lazily made
        row's token arrays, ~0.5 ms for a string's, are not made to answer it)."""
        token_id = int(token_id)
        if not 0 <= token_id < self._index.vocabulary.size:
            return False
        bm = self._index.eos_bitmask if self._state == self.FINISHED else self._bitmask()
        return bool((int(bm[token_id >> 5]) >> (token_id & 31)) & 1)

    def advance(self, token_id: int) -> None:
        """Consume one token; raises `TokenRejected` if it is outside the current mask."""
        token_id = int(token_id)
        if self._state == self.FINISHED:
            if token_id in self._index.eos_set:  # padding a finished row with EOS is harmless
                self._history.append(self.FINISHED)
                return
            raise TokenRejected(token_id, f"token {token_id} after EOS: the sequence is already finished")
        nxt = self._next_state(token_id)
        self._history.append(self._state)
        self._state = nxt
        self._moved()

    def accepts_tokens(self, token_ids: Iterable[int]) -> bool:
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
        return self._state == self.FINISHED or self._accepting()

    def is_finished(self) -> bool:
        """True when EOS was consumed, or the text is complete and no further text token is possible."""
        if self._state == self.FINISHED:
            return True
        return self._accepting() and not self._has_text()

    def forced_bytes(self) -> bytes:
        """The bytes every continuation must start with (empty when there is a choice now)."""
        if self._state == self.FINISHED:
            return b""
        out = bytearray()
        s = self._state
        idx = self._index
        while len(out) < _MAX_FORCED_BYTES:
            b = idx.single_byte(s)
            if b < 0:
                break
            s = self._after_byte(s, b, out)
            if s is None:
                break
            out.append(b)
        return bytes(out)

    def forced_tokens(self) -> list[int]:
        """Tokens spelling the forced bytes, longest match first; only whole tokens inside them."""
        data = self.forced_bytes()
        if not data:
            return []
        return tokenize_longest(self._index.vocabulary.trie, data)

    def copy(self) -> Matcher:
        """An independent matcher in the same state with the same history."""
        m = type(self)(self._index)
        m._state = self._state  # not via the constructor: a FINISHED of None would read as "start"
        m._history = self._history.copy()
        return m

    def rollback(self, n: int = 1) -> None:
        """Undo the last ``n`` advanced tokens."""
        if n < 0 or n > len(self._history):
            raise ValueError(f"cannot roll back {n} tokens; {len(self._history)} were consumed")
        if n:
            self._state = self._history[-n]
            del self._history[-n:]
            self._moved()

    def reset(self) -> None:
        """Back to the start, history cleared."""
        self._state = self._index.initial_state
        self._history.clear()
        self._moved()

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(state={self._state}, consumed={len(self._history)}, "
            f"accepting={self.is_accepting()})"
        )


class OnDemand(Protocol):
    """An automaton that makes its transition rows when first read (`fsm.automata.LazyByteDFA`,
    a composed DFA): what a row walk needs to expand the states it meets."""

    @property
    def table_buffer(self) -> np.ndarray:
        """The rows made so far (spare capacity at the end; reallocated as it grows)."""

    @property
    def expanded_flags(self) -> np.ndarray:
        """Whether each row is made."""

    def ensure(self, rows: int | np.ndarray) -> None:
        """Make the rows of the states ``rows`` (one state as an int, or an array)."""
