"""`GuardedDfaIndex`: a lazy token index whose automaton holds guard points (`fsm.automata.Guard`),
checks of the text that no automaton of a useful size can make, run where the text reaches them.

An A-label (``xn--``) is valid when its punycode decodes to a valid U-label; as an automaton every
prefix of one has a future of its own (thousands of states per row, past any memory budget). Here
the automaton holds the regular superset (the label's letters) and a guard point where the string
ends; the index keeps every row what it was — a guarded state's row is the row with every check
failed — and the row walk sets aside only the trie nodes whose byte leads elsewhere once the checks
pass (a string's closing quote after a name with an A-label: a few dozen of SmolLM2's tokens). A
matcher runs the checks on its own text for those nodes, once per step and only in rows that have
them, and resolves a guarded state the moment a token ends in one (`LazyByteDFA.resolve`). What a
deferred node leads to once decided is walked once per resolved state and kept.

A check that fails further on than the next token can leave a matcher with nothing allowed (no
automaton foresees it): the JSON checks sit where the text can still go on (a label can grow) but
at its length limits.

>>> from fsm.automata import Guard, LazyByteDFA, alt, lit, node_nfa, seq
>>> from fsm.vocabulary import Vocabulary
>>> v = Vocabulary([b"a", b"b", b"!", b"b!", None], eos_token_ids=[4])
>>> node = seq(lit("a"), alt(lit("b"), seq(lit("b"), Guard(lambda text: text.endswith(b"ab")), lit("!"))))
>>> m = GuardedDfaIndex(LazyByteDFA(*node_nfa(node)), v).matcher()
>>> m.advance(0); m.allowed_token_ids().tolist()
[1, 3]
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..automata import LazyByteDFA
from ..errors import TokenRejected
from ..limits import Deadline, Limits
from ..vocabulary import Vocabulary
from .bitmask import pack_bitmask
from .kernels import kernels
from .lazy import LazyDfaIndex
from .row_lookup import find_token
from .rows import FINISHED, RowMatcher

_NONE = np.zeros(0, dtype=np.int32)


@dataclass(frozen=True)
class Deferred:
    """Trie nodes a row walk left to the matcher (`walk_kernel.walk_subtrees`): kind 0, the subtree of
    ``nodes[i]`` read from guarded state ``states[i]``; kind 1, the tokens at ``nodes[i]``, which
    end in guarded state ``states[i]``."""

    states: np.ndarray
    nodes: np.ndarray
    kinds: np.ndarray

    @staticmethod
    def joined(parts: list) -> Deferred | None:
        """The (states, nodes, kinds) arrays of a walk's rounds as one, None when there are none."""
        if not parts:
            return None
        return Deferred(*(np.concatenate([p[i] for p in parts]) for i in range(3)))


class GuardedDfaIndex(LazyDfaIndex):
    """`LazyDfaIndex` over a lazy DFA with guard points; its matchers keep their text."""

    def __init__(
        self,
        lazy: LazyByteDFA,
        vocab: Vocabulary,
        fingerprint: str = "",
        limits: Limits | None = None,
        name: str = "",
    ):
        # a counter class's rows are moved copies of one walk, which knows nothing of deferred nodes
        super().__init__(lazy, vocab, fingerprint, limits, shift_rows=False, name=name)
        self._deferred: dict[int, Deferred | None] = {}
        self._below: dict[tuple[int, int], tuple[np.ndarray, np.ndarray, Deferred | None]] = {}

    def kernel_row(self, state: int, deadline: Deadline) -> tuple[np.ndarray, np.ndarray]:
        """The row's tokens that no check decides; the nodes a guarded state decides are kept aside."""
        parts: list = []
        tok, end = super().kernel_row(state, deadline, deferred=parts)
        self._deferred[state] = Deferred.joined(parts)
        return tok, end

    def fill_rows(self, states: np.ndarray, deadline: Deadline | None = None) -> None:
        """Every row by the compiled walk (the vectorized one knows no guard points)."""
        for s in states.tolist():
            self.row(int(s))

    @property
    def initial_state(self) -> int:
        return self.resolve(self.dfa.initial, b"")

    def resolve(self, state: int, text: bytes, seen: dict | None = None) -> int:
        """``state``, or the state guarded ``state`` stands for after ``text`` (-1: none); ``seen``
        keeps the checks' results by (check, text) across the calls of one step.

        >>> from fsm.automata import Guard, LazyByteDFA, lit, node_nfa, seq
        >>> from fsm.vocabulary import Vocabulary
        >>> idx = GuardedDfaIndex(LazyByteDFA(*node_nfa(seq(Guard(bool), lit("a")))), Vocabulary([b"a", None], [1]))
        >>> idx.resolve(idx.dfa.initial, b"") , idx.resolve(idx.dfa.initial, b"x") >= 0
        (-1, True)
        """
        if not self.lazy.is_guarded(state):
            return state
        seen = {} if seen is None else seen  # (check, text) -> passed: shared by a step's nodes

        def passes(check: Callable[[bytes], bool]) -> bool:
            key = (check, text)
            if key not in seen:
                seen[key] = bool(check(text))
            return seen[key]

        with self._lock:
            return self.lazy.resolve(state, passes)

    def crossing(self, state: int, text: bytes) -> tuple[np.ndarray, np.ndarray]:
        """The tokens of ``state``'s deferred nodes that ``text`` lets through, sorted, with their
        end states (a guarded end is resolved on `advance`)."""
        self.row(state)
        d = self._deferred.get(state)
        if d is None:
            return _NONE, _NONE
        toks: list[np.ndarray] = []
        ends: list[np.ndarray] = []
        self._settle(d, text, toks, ends, {})
        if not toks:
            return _NONE, _NONE
        tok, end = np.concatenate(toks), np.concatenate(ends)
        order = np.argsort(tok, kind="stable")
        return tok[order].astype(np.int32), end[order].astype(np.int32)

    def _settle(self, d: Deferred, text: bytes, toks: list, ends: list, seen: dict) -> None:
        trie = kernels().vocabulary_preorder(self.vocabulary)
        for g, j, kind in zip(d.states.tolist(), d.nodes.tolist(), d.kinds.tolist(), strict=True):
            head = self._path(trie, j)  # the token bytes through node j
            if kind == 1:
                if self.resolve(g, text + head, seen) >= 0:
                    a = int(trie.tok_start[j])
                    ids = trie.tok_ids[a : a + int(trie.tok_count[j])]
                    toks.append(ids)
                    ends.append(np.full(len(ids), g, dtype=np.int32))
                continue
            r = self.resolve(g, text + head[:-1], seen)
            if r < 0:
                continue
            tok, end, nested = self._walk_below(r, j)
            if len(tok):
                toks.append(tok)
                ends.append(end)
            if nested is not None:
                self._settle(nested, text, toks, ends, seen)

    def _path(self, trie, j: int) -> bytes:
        """The bytes from the trie's root through node ``j`` (a prefix of any token below it)."""
        t = int(trie.tok_ids[int(trie.tok_start[j])])
        return (self.vocabulary.token_bytes(t) or b"")[: int(trie.depth[j])]

    def _walk_below(self, r: int, j: int) -> tuple[np.ndarray, np.ndarray, Deferred | None]:
        """Node ``j`` and its subtree read from unguarded state ``r`` (the state above ``j``): its
        tokens with their ends, and what this walk defers in turn; walked once, kept."""
        key = (r, j)
        hit = self._below.get(key)
        if hit is not None:
            return hit
        with self._lock:
            k = kernels()
            trie = k.vocabulary_preorder(self.vocabulary)
            deadline = self.limits.deadline()
            with self.lazy.within(deadline):
                s2 = self.lazy.step(r, int(trie.label[j]))
                toks, ends, parts = [], [], []
                if s2 >= 0:
                    a, n = int(trie.tok_start[j]), int(trie.tok_count[j])
                    if n and self.lazy.guard_arrays[1][s2]:
                        parts.append((np.array([s2]), np.array([j]), np.array([1], np.int8)))
                    elif n:
                        toks.append(trie.tok_ids[a : a + n])
                        ends.append(np.full(n, s2, dtype=np.int32))
                    if int(trie.size[j]) > 1:
                        self.lazy.ensure(s2)
                        starts = (np.array([s2], np.int64), np.array([j], np.int64))
                        tok, end = k.walk_below(
                            self.dfa, starts, trie, False, self.lazy, deadline, self.steps, parts
                        )
                        toks.append(tok)
                        ends.append(end)
            tok = np.concatenate(toks) if toks else _NONE
            end = np.concatenate(ends) if ends else _NONE
            hit = self._below[key] = (tok.astype(np.int32), end.astype(np.int32), Deferred.joined(parts))
            self._nbytes += tok.nbytes + end.nbytes
        return hit

    def matcher(self) -> GuardedMatcher:
        """A fresh matcher at the start (it keeps the text it was given)."""
        return GuardedMatcher(self)

    def __repr__(self) -> str:
        return (
            f"GuardedDfaIndex({self.fingerprint[:24]}, states={self.lazy.n_states}, rows={len(self._rows)})"
        )


class GuardedMatcher(RowMatcher):
    """A `RowMatcher` that keeps its text: the checks of `GuardedDfaIndex` read it.

    >>> from fsm.automata import Guard, LazyByteDFA, alt, lit, node_nfa, seq
    >>> from fsm.vocabulary import Vocabulary
    >>> v = Vocabulary([b"x", b"y", b"!", None], eos_token_ids=[3])
    >>> node = seq(alt(lit("x"), lit("y")), Guard(lambda text: text == b"y"), lit("!"))
    >>> m = GuardedDfaIndex(LazyByteDFA(*node_nfa(node)), v).matcher()
    >>> m.allowed_token_ids().tolist()  # "x" would end where the check fails
    [1]
    >>> m.advance(1); m.allowed_token_ids().tolist()
    [2]
    """

    __slots__ = ("_crossed", "_marks", "_text")

    def __init__(self, index: GuardedDfaIndex, state: int | None = None):
        super().__init__(index, state)
        self._text = bytearray()
        self._marks: list[int] = []  # the text's length before each token
        self._crossed: tuple[np.ndarray, np.ndarray] | None = None

    def _crossing(self) -> tuple[np.ndarray, np.ndarray]:
        if self._crossed is None:
            self._crossed = self._index.crossing(self._state, bytes(self._text))
        return self._crossed

    def _moved(self) -> None:
        self._crossed = None

    def _allowed_ids(self) -> np.ndarray:
        base = super()._allowed_ids()
        tok = self._crossing()[0]
        return base if not len(tok) else np.union1d(base, tok).astype(np.int32)

    def _bitmask(self) -> np.ndarray:
        base = super()._bitmask()
        tok = self._crossing()[0]
        if not len(tok):
            return base
        return base | pack_bitmask(tok, self._index.vocabulary.size)

    def _has_text(self) -> bool:
        return super()._has_text() or len(self._crossing()[0]) > 0

    def _next_state(self, token_id: int) -> int:
        try:
            return super()._next_state(token_id)
        except TokenRejected:
            tok, end = self._crossing()
            i = find_token(tok, token_id)
            if i < 0:
                raise
            return int(end[i])

    def advance(self, token_id: int) -> None:
        """Consume one token; raises `TokenRejected` if it is outside the current mask."""
        token_id = int(token_id)
        if self._state == FINISHED:
            super().advance(token_id)
            self._marks.append(len(self._text))
            return
        nxt = self._next_state(token_id)
        self._marks.append(len(self._text))
        if nxt != FINISHED:
            self._text += self._index.vocabulary.token_bytes(token_id) or b""
            nxt = self._index.resolve(nxt, bytes(self._text))
        self._history.append(self._state)
        self._state = nxt
        self._moved()

    def rollback(self, n: int = 1) -> None:
        """Undo the last ``n`` advanced tokens (their text too)."""
        super().rollback(n)
        if n:
            del self._text[self._marks[-n] :]
            del self._marks[-n:]

    def reset(self) -> None:
        """Back to the start, history and text cleared."""
        super().reset()
        self._text.clear()
        self._marks.clear()

    def copy(self) -> GuardedMatcher:
        """An independent matcher in the same state with the same history and text."""
        m = super().copy()
        m._text = bytearray(self._text)
        m._marks = self._marks.copy()
        return m

    def _after_byte(self, state: int, byte: int, before: bytearray) -> int | None:
        """The state after the forced ``byte``, a guarded one resolved with the text it follows."""
        nxt = self._index.resolve(
            super()._after_byte(state, byte, before), bytes(self._text + before) + bytes([byte])
        )
        return None if nxt < 0 else nxt
