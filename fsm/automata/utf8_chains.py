"""The byte-NFA states inside UTF-8 characters, made only when a DFA state inside a character is read.

A character NFA read byte by byte passes through states inside each multi-byte character: after
the lead byte of a character that leads to NFA state ``t``, the state that still reads the
continuation bytes ``seq`` and is then at ``t`` (a *chain* state, shared by every edge with the
same ``(seq, t)``). Expanding a DFA state makes its target for every lead byte it allows — a
dozen byte ranges for a class such as ``\\S``, whose Unicode spaces split the lead bytes — yet a
token walk reads few of them: on a schema of word-count patterns in long strings, 96 % of the
states inside a character were never expanded nor a token's end, and their chain states and sets
were two thirds of the automaton's memory (1.9 million chain states for 0.9 million DFA states).
So a state's lead-byte edges name no chain (`LEAD`), and the lazy DFA makes the set of a target
inside a character from its source state and lead byte when something first reads it
(`lead_targets`).

>>> chains = Utf8Chains(2)
>>> [hex(lo) for lo, hi, t in Utf8Chains.byte_edges([(0x61, 0xE9, 1)]) if t == LEAD]
['0xc2', '0xc3']
>>> q = chains.lead_targets([(0x61, 0xE9, 1)], 0xC3)[0]
>>> chains.key(q), chains.edges(q)
((((128, 169),), 1), ((128, 169, 1),))
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from .budget import EDGE_BYTES, SET_BYTES, SET_MEMBER_BYTES, Budget
from .byte_dfa import utf8_sequences as _utf8_sequences

# The target of a lead byte's edge before its chain is made: no state id is this (real and chain
# states count from 0, counter blocks' virtual states down from -1 by block << 40, configurations
# of rule calls up from 1 << 62).
LEAD = -(1 << 63)


@lru_cache(maxsize=65536)
def utf8_sequences(lo: int, hi: int):
    """`byte_dfa.utf8_sequences`, memoized: the lazy DFA asks for the same ranges over and over."""
    return _utf8_sequences(lo, hi)


@lru_cache(maxsize=65536)
def _lead_edges(lo: int, hi: int) -> tuple[tuple[int, int, int], ...]:
    """The lead byte edges of characters ``lo..hi`` (>= 0x80), one tuple shared by every state."""
    return tuple((seq[0][0], seq[0][1], LEAD) for seq in utf8_sequences(lo, hi))


@lru_cache(maxsize=65536)
def _after_lead(lo: int, hi: int, b: int) -> tuple[tuple, ...]:
    """The continuation byte ranges after lead byte ``b`` of characters ``lo..hi`` (>= 0x80), one
    per sequence it leads: a state inside a character is made from every edge of its source's
    states, and the same few ranges (a string's characters) come back from schema to schema."""
    return tuple(seq[1:] for seq in utf8_sequences(lo, hi) if seq[0][0] <= b <= seq[0][1])


class Utf8Chains:
    """The chain states of a character NFA of ``n_real`` states: ids from ``n_real`` up."""

    def __init__(self, n_real: int, charge=None):
        self.n_real = n_real
        self._ids: dict[tuple, int] = {}
        self._keys: list[tuple] = []  # (byte ranges still to read, the NFA state after them)
        self._edges: dict[int, tuple] = {}  # the continuation edge of each chain state read so far
        self._charge = charge  # called with the bytes each new chain state holds

    def __len__(self) -> int:
        return len(self._keys)

    def state(self, seq: tuple, t: int) -> int:
        """The state that reads the byte ranges ``seq`` and is then at ``t`` (``t`` itself when
        ``seq`` is empty; made if new)."""
        if not seq:
            return t
        key = (seq, t)
        q = self._ids.get(key)
        if q is None:
            q = self._ids[key] = self.n_real + len(self._keys)
            self._keys.append(key)
            if self._charge is not None:
                self._charge(CHAIN_BYTES)
        return q

    def key(self, q: int) -> tuple[tuple, int]:
        """(byte ranges still to read, the NFA state after them) of chain state ``q``."""
        return self._keys[q - self.n_real]

    def edges(self, q: int) -> tuple[tuple[int, int, int], ...]:
        """The one byte edge of chain state ``q``: its next continuation byte."""
        out = self._edges.get(q)
        if out is None:
            seq, t = self._keys[q - self.n_real]
            out = self._edges[q] = ((seq[0][0], seq[0][1], self.state(seq[1:], t)),)
            if self._charge is not None:
                self._charge(CHAIN_EDGE_BYTES)
        return out

    @staticmethod
    def byte_edges(char_edges) -> tuple[tuple[int, int, int], ...]:
        """Character edges ``(lo, hi, t)`` as byte edges: ASCII to ``t``, each lead byte range of a
        multi-byte character to `LEAD` (which chain, `lead_targets` says once it is asked).

        >>> Utf8Chains.byte_edges([(0x30, 0x39, 4), (0x100, 0x7FF, 5)])
        ((48, 57, 4), (196, 223, -9223372036854775808))
        """
        for e in char_edges:
            if e[1] >= 0x80:
                break
        else:  # ASCII only (most states: a key's next character, a number's digits): as they are
            return char_edges if char_edges.__class__ is tuple else tuple(char_edges)
        out = []
        for lo, hi, t in char_edges:
            if lo < 0x80:
                out.append((lo, min(hi, 0x7F), t))
            if hi >= 0x80:
                out.extend(_lead_edges(max(lo, 0x80), hi))
        return tuple(out)

    def lead_targets(self, char_edges, b: int) -> list[int]:
        """The chain states lead byte ``b`` takes the character edges ``char_edges`` to (made if new).

        >>> Utf8Chains(1).lead_targets([(0x100, 0x7FF, 0), (0x80, 0xFF, 0)], 0xC4)
        [1]
        """
        out = []
        for lo, hi, t in char_edges:
            if hi >= 0x80:
                for rest in _after_lead(max(lo, 0x80), hi, b):
                    out.append(self.state(rest, t))
        return out


class CharacterStates:
    """`LazyByteDFA`'s states inside a character (a mixin over its sets, closures and state ids):
    a lead byte's target made as (source state, lead byte), its set and chain states when read."""

    _sets: dict[int, tuple[int, ...]]
    _lead_of: np.ndarray  # per DFA state: source << 8 | lead byte, -1 when made with its set
    _leads: memoryview  # a flat view of it
    _chains: Utf8Chains
    _char_trans: list
    _n_real: int
    _counters: object
    _calls: object
    budget: Budget

    def _closure(self, q: int) -> tuple[int, ...]: ...
    def _new(self, s: tuple[int, ...] | None) -> int: ...
    def _new_many(self, n: int) -> int: ...
    def _count_set(self) -> None: ...

    def _lead_targets(self, q: int, b: int) -> list[int]:
        """The states inside a character that lead byte ``b`` takes NFA state ``q`` to."""
        if self._calls is not None and q >= self._calls.BASE:
            inner, sid = self._calls.split(q)
            return [self._calls.conf(t, sid) for t in self._lead_targets(inner, b)]
        return self._chains.lead_targets(self._char_trans[q] if q >= 0 else self._counters.edges(q), b)

    def _insides(self, src: int, leads: list[int]) -> int:
        """The states lead bytes ``leads`` take ``src`` to, inside a character, consecutive from the
        one returned: their sets (chain states made) only once something reads them (`_set`); none
        accepts, as no character ends there."""
        n = len(leads)
        first = self._new_many(n)
        self.budget.charge(2 * 8 * n, "the automaton")  # their slots in the sets list and the lead array
        view, base = self._leads, src << 8
        for i, b in enumerate(leads):
            view[first + i] = base | b
        return first

    def _set(self, d: int) -> tuple[int, ...]:
        """The NFA state set of ``d``, made now for a state inside a character (`_insides`)."""
        s = self._sets.get(d)
        if s is None:
            src, b = divmod(self._leads[d], 256)
            # a source set is mostly states that read ASCII only (a key's declared names beside
            # the free key): asked for no lead byte's targets, ~1 µs a state
            ct, n_real = self._char_trans, self._n_real
            targets = {
                t
                for q in self._set(src)
                if not 0 <= q < n_real or any(e[1] >= 0x80 for e in ct[q])
                for t in self._lead_targets(q, b)
            }
            if self._calls is None:  # chain states only, none with an epsilon move
                s = tuple(sorted(targets))
            else:
                s = tuple(sorted(set().union(*(self._closure(t) for t in targets))))
            # not the state of its set (`_closed`): which state a set names must not depend on
            # what was read first (`counter_shift` relies on it), and ``d`` acts alike anyway
            self._sets[d] = s
            self._count_set()
            self.budget.charge(SET_BYTES + len(s) * SET_MEMBER_BYTES + 2 * EDGE_BYTES, "the automaton")
        return s

    @property
    def n_chain_states(self) -> int:
        """NFA states inside a character made so far (`utf8_chains`): what the states read hold."""
        return len(self._chains)

    def chain_key(self, q: int) -> tuple[tuple, int]:
        """(byte ranges still to read, the NFA state after them) of a state inside a character."""
        return self._chains.key(q)

    def chain_state(self, seq: tuple, t: int) -> int:
        """The state inside a character that reads ``seq`` and then is at ``t`` (made if new)."""
        return self._chains.state(seq, t)

    def lead_of(self, d: int) -> tuple[int, int] | None:
        """(source state, lead byte) of a state inside a character made as a lead byte's target
        (its set made only when read), else None."""
        x = int(self._lead_of[d])
        return divmod(x, 256) if x >= 0 else None


# Bytes a chain state holds (CPython, 64-bit): its key (a 2-tuple, the tail of byte ranges, the
# target int) ~150, its dict entry ~70, its list slot and id ~40; its edge tuple once read ~130.
CHAIN_BYTES = 260
CHAIN_EDGE_BYTES = 130
