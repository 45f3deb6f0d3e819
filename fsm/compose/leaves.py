"""Leaf automata of a composition: the byte automata the composed DFA runs side by side.

A leaf answers three questions about its own states (small ints): its ``initial`` state, the
``row`` of a state (for every byte 0..255 the next state, -1 where the byte is rejected) and
whether a state ``accepting``. Rows are computed on first use and kept, so a leaf costs only the
states a generation reaches. `SpecLeaf` compiles its spec through `fsm.compile` on first use (a
500-tool spec compiles only the bodies a generation enters, sharing the `fsm.JsonSchema` cache).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import numpy as np

from ..compiler import compile as compile_spec
from ..limits import Limits
from ..vocabulary import Vocabulary
from .errors import CompositionError

_DEAD = np.full(256, -1, dtype=np.int32)
_DEAD.setflags(write=False)


class Leaf(ABC):
    """A byte automaton with lazily computed rows."""

    @property
    @abstractmethod
    def initial(self) -> int:
        """The start state."""

    @abstractmethod
    def row(self, state: int) -> np.ndarray:
        """int32[256]: the state after each byte (-1: rejected)."""

    @abstractmethod
    def accepting(self, state: int) -> bool:
        """The bytes read so far are a complete match."""


class LiteralLeaf(Leaf):
    """Exactly ``data``; state i = i bytes read.

    >>> leaf = LiteralLeaf(b"ab")
    >>> int(leaf.row(0)[ord("a")]), int(leaf.row(0)[ord("b")]), leaf.accepting(2)
    (1, -1, True)
    """

    def __init__(self, data: bytes):
        self.data = data
        self._rows: dict[int, np.ndarray] = {}

    @property
    def initial(self) -> int:
        return 0

    def row(self, state: int) -> np.ndarray:
        r = self._rows.get(state)
        if r is None:
            if state >= len(self.data):
                r = _DEAD
            else:
                r = _DEAD.copy()
                r[self.data[state]] = state + 1
            self._rows[state] = r
        return r

    def accepting(self, state: int) -> bool:
        return state == len(self.data)


class SpecLeaf(Leaf):
    """A spec's byte automaton, compiled through `fsm.compile` the first time it is entered.

    A spec whose index is row-based (`fsm.Regex`, `fsm.Choice`, `fsm.JsonSchema`, recursive
    schemas' pushdown DFA included) runs its byte DFA; a grammar index (`fsm.Grammar`, a
    left-recursive schema) runs its own lexer + LR parser byte by byte (`GrammarSteps`).
    """

    def __init__(self, spec: Any, vocab: Vocabulary, limits: Limits, name: str):
        self.spec = spec
        self.name = name
        self._vocab = vocab
        self._limits = limits
        self._steps: DfaSteps | GrammarSteps | None = None

    @property
    def compiled(self) -> bool:
        """Whether the spec was compiled (entered) yet."""
        return self._steps is not None

    @property
    def steps(self) -> DfaSteps | GrammarSteps:
        """The byte automaton of the compiled spec (compiled here on first use)."""
        if self._steps is None:
            index = compile_spec(self.spec, self._vocab, self._limits)
            if getattr(index, "dfa", None) is not None:
                self._steps = DfaSteps(index.dfa)
            elif all(hasattr(index, a) for a in ("step_byte", "normalize", "viable", "config_accepting")):
                self._steps = GrammarSteps(index)
            else:
                raise CompositionError(
                    f"compiles to a {type(index).__name__}, which has no byte automaton to compose",
                    part=self.name,
                )
        return self._steps

    @property
    def initial(self) -> int:
        return self.steps.initial

    def row(self, state: int) -> np.ndarray:
        return self.steps.row(state)

    def accepting(self, state: int) -> bool:
        return self.steps.accepting(state)


class DfaSteps:
    """Rows of a compiled spec's byte DFA (eager, lazy or pushdown), cached per state."""

    def __init__(self, dfa: Any):
        self.dfa = dfa
        self.initial = int(dfa.initial)
        self._rows: dict[int, np.ndarray] = {}

    def row(self, state: int) -> np.ndarray:
        r = self._rows.get(state)
        if r is None:
            dfa = self.dfa
            r = np.asarray(dfa.table[state])[dfa.byte_class].astype(np.int32)
            r.setflags(write=False)
            self._rows[state] = r
        return r

    def accepting(self, state: int) -> bool:
        return bool(self.dfa.accepting[state])


class GrammarSteps:
    """A grammar index as a byte automaton: a state is one of its configurations (lexer state,
    parser stack, ignored bytes), numbered as reached; a byte leads where the grammar's own
    stepping leads (then normalized as its matcher does), if it can still be completed. The parser stack is part of the
    state, so the automaton is infinite and built as far as generations go.

    >>> import fsm
    >>> v = fsm.Vocabulary([bytes([b]) for b in range(256)] + [None], eos_token_ids=[256])
    >>> g = GrammarSteps(fsm.compile(fsm.Grammar('start: "(" start ")" | "x"'), v))
    >>> s = g.initial
    >>> for b in b"((x)": s = int(g.row(s)[b])
    >>> int(g.row(s)[ord("x")]), g.accepting(s), g.accepting(int(g.row(s)[ord(")")]))
    (-1, False, True)
    """

    def __init__(self, index: Any):
        self.index = index
        self._ids: dict[Any, int] = {}
        self._configs: list[Any] = []
        self._rows: dict[int, np.ndarray] = {}
        self.initial = self._id(index.normalize(index.initial_state))

    def _id(self, config: Any) -> int:
        i = self._ids.get(config)
        if i is None:
            i = self._ids[config] = len(self._configs)
            self._configs.append(config)
        return i

    def row(self, state: int) -> np.ndarray:
        r = self._rows.get(state)
        if r is None:
            idx, config = self.index, self._configs[state]
            r = _DEAD.copy()
            for b in range(256):
                nxt = idx.step_byte(config, b)
                if nxt is not None and idx.viable(nxt):  # before normalizing: a finished
                    r[b] = self._id(idx.normalize(nxt))  # parse expects no further terminal
            r.setflags(write=False)
            self._rows[state] = r
        return r

    def accepting(self, state: int) -> bool:
        return bool(self.index.config_accepting(self._configs[state]))


def _utf8_step(need: int, lo: int, hi: int, b: int) -> tuple[int, int, int] | None:
    """UTF-8 validation: (continuation bytes still needed, range of the next one) after byte ``b``."""
    if need:
        return (need - 1, 0x80, 0xBF) if lo <= b <= hi else None
    if b < 0x80:
        return (0, 0, 0)
    if 0xC2 <= b <= 0xDF:
        return (1, 0x80, 0xBF)
    if 0xE0 <= b <= 0xEF:
        return (2, 0xA0 if b == 0xE0 else 0x80, 0x9F if b == 0xED else 0xBF)
    if 0xF0 <= b <= 0xF4:
        return (3, 0x90 if b == 0xF0 else 0x80, 0x8F if b == 0xF4 else 0xBF)
    return None


class TextLeaf(Leaf):
    """Valid UTF-8 text of at most ``max_bytes`` bytes that never contains any of ``exclude``.

    A state is (Aho-Corasick node of the excluded strings, UTF-8 progress, bytes read); reaching
    the end of an excluded string rejects the byte. States are numbered as they are reached.

    >>> leaf = TextLeaf((b"<a>",), None)
    >>> s = leaf.initial
    >>> for b in b"x<a": s = int(leaf.row(s)[b])
    >>> int(leaf.row(s)[ord(">")]), leaf.accepting(s)
    (-1, True)
    """

    def __init__(self, exclude: tuple[bytes, ...], max_bytes: int | None):
        self.max_bytes = max_bytes
        self._goto: list[dict[int, int]] = [{}]
        self._out = [False]
        for word in exclude:
            node = 0
            for b in word:
                nxt = self._goto[node].get(b)
                if nxt is None:
                    nxt = len(self._goto)
                    self._goto[node][b] = nxt
                    self._goto.append({})
                    self._out.append(False)
                node = nxt
            self._out[node] = True
        self._fail = [0] * len(self._goto)
        order = list(self._goto[0].values())
        for node in order:  # breadth first: a node's fail link is set before its children's
            for b, child in self._goto[node].items():
                order.append(child)
                f = self._fail[node] if node else 0
                while f and b not in self._goto[f]:
                    f = self._fail[f]
                cand = self._goto[f].get(b, 0)
                self._fail[child] = cand if cand != child else 0
                self._out[child] = self._out[child] or self._out[self._fail[child]]
        self._ids: dict[tuple, int] = {}
        self._keys: list[tuple] = []
        self._rows: dict[int, np.ndarray] = {}
        self._initial = self._id((0, 0, 0, 0, 0))

    def _id(self, key: tuple) -> int:
        i = self._ids.get(key)
        if i is None:
            i = self._ids[key] = len(self._keys)
            self._keys.append(key)
        return i

    def _ac(self, node: int, b: int) -> int:
        while node and b not in self._goto[node]:
            node = self._fail[node]
        return self._goto[node].get(b, 0)

    @property
    def initial(self) -> int:
        return self._initial

    def row(self, state: int) -> np.ndarray:
        r = self._rows.get(state)
        if r is None:
            node, need, lo, hi, n = self._keys[state]
            r = _DEAD.copy()
            if self.max_bytes is None or n < self.max_bytes:
                for b in range(256):
                    u = _utf8_step(need, lo, hi, b)
                    if u is None or (self.max_bytes is not None and n + 1 + u[0] > self.max_bytes):
                        continue  # not UTF-8, or a character the byte budget cannot finish
                    a = self._ac(node, b)
                    if self._out[a]:
                        continue
                    r[b] = self._id((a, *u, n + 1 if self.max_bytes is not None else 0))
            r.setflags(write=False)
            self._rows[state] = r
        return r

    def accepting(self, state: int) -> bool:
        return self._keys[state][1] == 0
