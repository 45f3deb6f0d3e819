"""Deterministic automata over bytes: the shape every compiled spec takes before it meets a vocabulary.

`ByteDFA` is the finished form (live states only, byte columns folded into classes); `finish_dfa`
trims and minimizes a raw transition table into one; `utf8_sequences` splits a code point range
into byte-range sequences, which is how every character automaton here becomes a byte automaton,
so a token that ends in the middle of a multi-byte character is handled exactly.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .budget import Budget
from .ranges import SURROGATES


@dataclass
class ByteDFA:
    """A deterministic automaton over bytes in which every state can still reach an accepting state.

    ``table[s, byte_class[b]]`` is the state after reading byte ``b`` in state ``s`` (-1: rejected).

    >>> from fsm.regex import regex_to_dfa
    >>> dfa = regex_to_dfa("ab|c")
    >>> dfa.accepts(b"ab"), dfa.accepts(b"a"), dfa.accepts(b"abc")
    (True, False, False)
    """

    table: np.ndarray
    byte_class: np.ndarray
    initial: int
    accepting: np.ndarray

    @property
    def n_states(self) -> int:
        """How many states the table has."""
        return int(self.table.shape[0])

    def step(self, state: int, byte: int) -> int:
        """The state after ``byte`` from ``state`` (-1: rejected)."""
        return int(self.table[state, self.byte_class[byte]])

    def walk(self, state: int, data: bytes) -> int:
        """State after reading ``data`` from ``state``; -1 as soon as a byte is rejected."""
        table, cls = self.table, self.byte_class
        for b in data:
            state = int(table[state, cls[b]])
            if state < 0:
                return -1
        return state

    def accepts(self, data: bytes) -> bool:
        """Whether the whole of ``data`` is accepted from the initial state."""
        s = self.walk(self.initial, data)
        return s >= 0 and bool(self.accepting[s])

    def full_table(self) -> np.ndarray:
        """The (n_states, 256) transition table."""
        return self.table[:, self.byte_class]

    @property
    def nbytes(self) -> int:
        """Memory held by the arrays."""
        return int(self.table.nbytes + self.byte_class.nbytes + self.accepting.nbytes)


def codepoint_ranges_between(lo: int, hi: int) -> list[tuple[int, int]]:
    """``lo..hi`` without the surrogates, which UTF-8 cannot encode."""
    out = []
    if lo < SURROGATES[0]:
        out.append((lo, min(hi, SURROGATES[0] - 1)))
    if hi > SURROGATES[1]:
        out.append((max(lo, SURROGATES[1] + 1), hi))
    return [(a, b) for a, b in out if a <= b]


def utf8_sequences(lo: int, hi: int) -> list[tuple[tuple[int, int], ...]]:
    """Split code points ``lo..hi`` into byte-range sequences whose products are exactly their UTF-8 encodings.

    >>> utf8_sequences(0x61, 0x62)
    [((97, 98),)]
    """
    out = []
    stack = [r for r in codepoint_ranges_between(lo, hi)]
    while stack:
        s, e = stack.pop()
        while True:
            for maxv in (0x7F, 0x7FF, 0xFFFF):
                if s <= maxv < e:
                    stack.append((maxv + 1, e))
                    e = maxv
            if e <= 0x7F:
                out.append(((s, e),))
                break
            split = False
            for i in range(1, 4):
                m = (1 << (6 * i)) - 1
                if (s & ~m) != (e & ~m):
                    if (s & m) != 0:
                        stack.append(((s | m) + 1, e))
                        e = s | m
                        split = True
                        break
                    if (e & m) != m:
                        stack.append((e & ~m, e))
                        e = (e & ~m) - 1
                        split = True
                        break
            if split:
                continue
            a, b = chr(s).encode("utf-8"), chr(e).encode("utf-8")
            out.append(tuple(zip(a, b, strict=True)))
            break
    return out


def finish_dfa(
    table: np.ndarray,
    initial: int,
    accepting: np.ndarray,
    deadline,
    what: str,
    byte_class: np.ndarray | None = None,
) -> ByteDFA | None:
    """Trim to states reachable and co-reachable, minimize, and fold byte columns into classes.

    ``table`` has one column per byte, or per class of ``byte_class`` when given.
    """
    if byte_class is None:
        byte_class = np.arange(256)
    n = table.shape[0]
    # Co-reachable: can reach an accepting state (reverse BFS, vectorized per frontier).
    live = accepting.copy()
    src, byte = np.nonzero(table >= 0)
    dst = table[src, byte]
    edges_src, edges_dst = src, dst
    frontier = live.copy()
    while frontier.any():
        hit = frontier[edges_dst] & ~live[edges_src]
        new = np.zeros(n, dtype=bool)
        new[edges_src[hit]] = True
        new &= ~live
        live |= new
        frontier = new
    if not live[initial]:
        return None
    table = np.where((table >= 0) & live[np.maximum(table, 0)], table, -1)
    # Reachable from the initial state.
    reach = np.zeros(n, dtype=bool)
    reach[initial] = True
    frontier = reach.copy()
    while frontier.any():
        nxt = table[frontier]
        nxt = nxt[nxt >= 0]
        new = np.zeros(n, dtype=bool)
        new[nxt] = True
        new &= ~reach
        reach |= new
        frontier = new
    keep = np.nonzero(reach & live)[0]
    remap = np.full(n + 1, -1, dtype=np.int64)
    remap[keep] = np.arange(len(keep))
    table = remap[table[keep]].astype(np.int32)  # -1 -> remap[-1] == -1 (sentinel slot)
    accepting = accepting[keep]
    initial = int(remap[initial])
    table, initial, accepting = minimize_table(table, initial, accepting, deadline, what)
    cols, col_class = np.unique(table.T, axis=0, return_inverse=True)
    return ByteDFA(
        np.ascontiguousarray(cols.T.astype(np.int32)),
        col_class.reshape(-1)[byte_class].astype(np.int32),
        initial,
        accepting,
    )


def minimize_table(
    table: np.ndarray, initial: int, accepting: np.ndarray, deadline, what: str, rounds: int = 64
) -> tuple[np.ndarray, int, np.ndarray]:
    """Merge states with identical rows, repeatedly: always sound, and minimal on the acyclic parts.

    Full Moore refinement needs as many passes as the longest chain (a ``{1,1000}`` repeat costs
    1000 sorts), while equal-row merging converges in a few passes on real specs; minimality is
    only a memory optimisation here, correctness never depends on it.
    """
    for _ in range(rounds):
        n = table.shape[0]
        sig = np.column_stack([accepting.astype(np.int32), table])
        _, first, block = np.unique(sig, axis=0, return_index=True, return_inverse=True)
        block = block.reshape(-1)
        m = len(first)
        if m == n:
            break
        # Keep the representatives in their original order so ids stay deterministic.
        order = np.argsort(first, kind="stable")
        rank = np.empty(m, dtype=np.int64)
        rank[order] = np.arange(m)
        block = rank[block]
        rep = first[order]
        ext = np.append(block, -1)
        table = ext[table[rep]].astype(np.int32)
        accepting = accepting[rep]
        initial = int(block[initial])
        deadline.check(what)
    return table, initial, accepting


# ---------------------------------------------------------------------------------------------
# Byte DFA tables: merging equal rows (memory only)


def equal_rows(a: np.ndarray) -> np.ndarray:
    """Group ids (0.., in order of first appearance) such that rows share an id only if exactly equal.

    >>> equal_rows(np.array([[1, 2], [3, 4], [1, 2]])).tolist()
    [0, 1, 0]
    """
    n = a.shape[0]
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    rng = np.random.default_rng(12345)
    w = rng.integers(1, 2**61, size=a.shape[1], dtype=np.uint64)
    h = (a.astype(np.uint64) * w).sum(axis=1, dtype=np.uint64)
    order = np.argsort(h, kind="stable")
    hs, rows = h[order], a[order]
    same = np.zeros(n, dtype=bool)
    same[1:] = (hs[1:] == hs[:-1]) & (rows[1:] == rows[:-1]).all(axis=1)  # exact check, never trust a hash
    block_sorted = np.cumsum(~same) - 1
    block = np.empty(n, dtype=np.int64)
    block[order] = block_sorted
    # renumber by first appearance so ids are deterministic and representatives come first
    first = np.full(block_sorted[-1] + 1, n, dtype=np.int64)
    np.minimum.at(first, block, np.arange(n))
    rank = np.empty(len(first), dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(len(first))
    return rank[block]


def merge_equal_states(
    table: np.ndarray, accepting: np.ndarray, initial: int, budget: Budget, rounds: int = 4
) -> tuple[np.ndarray, np.ndarray, int]:
    """Merge states with identical rows a few times over (memory only; the language is unchanged)."""
    for _ in range(rounds):
        n = table.shape[0]
        sig = np.column_stack([accepting.astype(np.int32), table])
        block = equal_rows(sig)
        m = int(block.max()) + 1
        if m == n:
            break
        rep = np.zeros(m, dtype=np.int64)
        rep[block[::-1]] = np.arange(n)[::-1]  # the first state of each block represents it
        ext = np.append(block, -1)
        table = ext[table[rep]].astype(np.int32)
        accepting = accepting[rep]
        initial = int(block[initial])
        budget.deadline.check("the automaton")
    return table, accepting, initial
