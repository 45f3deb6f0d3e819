"""Narrow rows by a depth-first walk in plain Python, where the vectorized walk pays numpy's overhead.

Most rows of a JSON schema are narrow: after ``{`` only a quote is allowed, inside a key or a
literal one byte or a few, so the tokens of the row follow a few paths of the vocabulary trie. The
level-by-level numpy walk (`fsm.index.token_walk.walk_tokens`) then spends ~25 numpy calls per trie
depth (0.3 ms a row) on a frontier of one or two (state, node) pairs. Here the walk goes depth
first: from a state with few live bytes each live byte's child is found by bisection among the
node's children (sorted by byte), and the walk gives up (None: the caller walks with numpy) as soon
as a state has more live bytes than `MAX_LIVE_BYTES` or the walk more steps than `MAX_STEPS` — so
a wide row costs at most a few tens of µs more. The rows are exactly the trie walk's
(``tests/fsm/test_path_walk.py`` checks that over many schemas and regexes).

>>> from fsm.vocabulary import Vocabulary
>>> from fsm.regex import regex_to_dfa
>>> v = Vocabulary([b"a", b"ab", b"b", None], eos_token_ids=[3])
>>> tok, end = PathWalker(regex_to_dfa("ab"), trie_arrays(v)).row(0)
>>> sorted(tok.tolist())
[0, 1]
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from dataclasses import dataclass

import numpy as np

from ..automata import ByteDFA
from ..vocabulary import Vocabulary

MAX_LIVE_BYTES = 24  # a state allowing more bytes starts a wide row: numpy walks it faster
MAX_STEPS = 600  # children probed before the walk hands over to numpy (~100 µs of Python)


@dataclass(frozen=True)
class TrieArrays:
    """The vocabulary's byte trie as `array.array`s: indexed from Python, they give Python ints
    (numpy scalars are several times slower), at 4 bytes an entry."""

    child_start: array
    child_count: array
    node_byte: array
    tok_start: array
    tok_count: array
    tok_ids: array


def trie_arrays(vocab: Vocabulary) -> TrieArrays:
    """`TrieArrays` of ``vocab``'s trie, made once per vocabulary and kept on it."""

    def build() -> TrieArrays:
        t = vocab.trie

        def arr(a: np.ndarray) -> array:
            return array("i", np.ascontiguousarray(a, dtype=np.int32).tobytes())

        return TrieArrays(
            arr(t.child_start),
            arr(t.child_count),
            arr(t.node_byte),
            arr(t.tok_start),
            arr(t.tok_count),
            arr(t.tok_ids),
        )

    return vocab.derived("trie_arrays", build)


class PathWalker:
    """Depth-first rows of one DFA over one vocabulary; remembers each state's live bytes (a
    state's transitions never change once made, lazily determinized or not)."""

    def __init__(self, dfa: ByteDFA, trie: TrieArrays):
        self.dfa = dfa
        self.trie = trie
        self._live: dict[int, tuple | None] = {}  # state -> ((byte, next state), ...), None if wide

    def _live_bytes(self, state: int) -> tuple | None:
        lv = self._live.get(state, ())
        if lv == ():
            nxt = self.dfa.table[state][self.dfa.byte_class]
            live = np.flatnonzero(nxt >= 0)
            lv = (
                None
                if len(live) > MAX_LIVE_BYTES
                else tuple(zip(live.tolist(), nxt[live].tolist(), strict=True))
            )
            self._live[state] = lv
        return lv

    def row(self, state: int) -> tuple[np.ndarray, np.ndarray] | None:
        """(tokens, end states) of ``state`` — the trie walk's pairs, unsorted — or None when the
        row is wide (let the vectorized walk do it)."""
        lv0 = self._live_bytes(state)
        if lv0 is None:
            return None
        t = self.trie
        cstart, ccount, nbyte = t.child_start, t.child_count, t.node_byte
        tstart, tcount, tids = t.tok_start, t.tok_count, t.tok_ids
        out_tok: list[int] = []
        out_end: list[int] = []
        stack = [(state, 0)]
        steps = 0
        live_bytes = self._live_bytes
        while stack:
            s, node = stack.pop()
            n = ccount[node]
            if not n:
                continue
            lv = live_bytes(s)
            if lv is None:
                return None
            steps += len(lv)
            if steps > MAX_STEPS:
                return None
            lo = cstart[node]
            hi = lo + n
            for b, nxt in lv:
                j = bisect_left(nbyte, b, lo, hi)
                if j < hi and nbyte[j] == b:
                    k = tcount[j]
                    if k:
                        a = tstart[j]
                        out_tok.extend(tids[a : a + k])
                        out_end.extend([nxt] * k)
                    stack.append((nxt, j))
        return np.array(out_tok, dtype=np.int32), np.array(out_end, dtype=np.int32)
