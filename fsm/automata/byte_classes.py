"""Byte classes of a lazily determinized DFA, read off its NFA's edges before any state is made.

The lazy DFA's table has a row for every state it makes, and a token walk makes the end state of
every token it follows (a whole vocabulary's worth per row), though only a few of those are ever
expanded: one column per byte made ~160,000 states of a big schema hold 160 MB of table. Bytes no
edge tells apart share a column; the classes come from the boundaries of every byte range the NFA's
character edges become in UTF-8 (the ASCII part, each byte of each encoded sequence) and of the
characters a JSON string block must escape (a length block splits its edges at them). A SmolLM2
JSON schema needs 20 to 60 classes. `ClassCuts` checks each byte edge made later against them, so
an edge the reading missed fails loudly instead of writing a whole class.

>>> from fsm.automata import lit, alt, node_nfa
>>> trans, eps, start, final, _, counters = node_nfa(alt(lit("ab"), lit("é")))
>>> cuts = ClassCuts.of_edges(trans, counters)
>>> cuts.n_classes, int(cuts.byte_class[ord("a")]) != int(cuts.byte_class[ord("b")])
(13, True)
"""

from __future__ import annotations

from array import array
from functools import lru_cache

import numpy as np

from .byte_dfa import utf8_sequences
from .escapes import MUST_ESCAPE


@lru_cache(maxsize=65536)
def _byte_ranges(lo: int, hi: int) -> tuple[tuple[int, int], ...]:
    """Every byte range the character range ``lo..hi`` reads, at any position of its UTF-8 form."""
    out = [(lo, min(hi, 0x7F))] if lo < 0x80 else []
    if hi >= 0x80:
        out.extend(r for seq in utf8_sequences(max(lo, 0x80), hi) for r in seq)
    return tuple(out)


@lru_cache(maxsize=65536)
def _cut_points(lo: int, hi: int) -> tuple[int, ...]:
    """The bytes where the byte ranges of ``lo..hi`` (`_byte_ranges`) begin and end past."""
    return tuple({x for a, b in _byte_ranges(lo, hi) for x in (a, b + 1)})


def edge_ranges(trans) -> set[tuple[int, int]]:
    """The distinct ``(lo, hi)`` character ranges of an NFA's edges ``trans``: a big schema's NFA
    repeats a few classes over thousands of edges, and the byte classes and the spelling check
    (`spelling.spelled_to_the_end`) both read them, once.

    >>> sorted(edge_ranges([[(48, 57, 1)], [(48, 57, 0), (97, 97, 1)]]))
    [(48, 57), (97, 97)]
    """
    return {(e[0], e[1]) for edges in trans for e in edges}


class ClassCuts:
    """The byte classes (each an interval of bytes) and where they begin."""

    def __init__(self, cuts: np.ndarray):
        self.cuts = cuts  # cuts[b]: a class begins at byte b (b = 256: past the last)
        self.byte_class = (np.cumsum(cuts[:256]) - 1).astype(np.int32)
        self.n_classes = int(self.byte_class[-1]) + 1
        # as tuples: `write_row` reads them once per edge of every expansion, and a numpy scalar read
        # costs several times a tuple's (a list's as much, but walked by every full collection)
        self._cut_list = tuple(cuts.tolist())
        self._class_list = tuple(self.byte_class.tolist())
        # per byte: its class when that class is the byte alone, else -1 (a literal's one cell)
        self.single = tuple(np.where(cuts[:256] & cuts[1:], self.byte_class, -1).tolist())

    @classmethod
    def of_edges(cls, trans, counters=None, ranges: set[tuple[int, int]] | None = None) -> ClassCuts:
        """The classes of an NFA's character edges ``trans`` and its virtual blocks ``counters``
        (``ranges``: `edge_ranges` of ``trans``, when known; not changed).

        >>> from fsm.automata import cls as chars, node_nfa
        >>> ClassCuts.of_edges(node_nfa(chars((48, 57)))[0]).n_classes
        8
        """
        ranges = set(edge_ranges(trans) if ranges is None else ranges)
        if counters is not None:
            ranges.update((e[0], e[1]) for e in counters.all_edges())
        ranges.update(MUST_ESCAPE)
        # the bytes where classes begin gathered in a set (each range's memoized), written once:
        # not a numpy item write (~0.1 µs) per bound
        points = {0, 256}
        for r in ranges:
            points.update(_cut_points(*r))
        cuts = np.zeros(257, dtype=bool)
        cuts[list(points)] = True
        return cls(cuts)

    def write_row(self, cells: memoryview, base: int, pieces) -> None:
        """Write the targets of byte ranges ``pieces`` ``(lo, hi, target)`` into a row of classes:
        ``cells[base + class]`` (a flat int32 view of a table). Every range must be whole classes,
        else AssertionError: an edge the NFA's reading missed would write a whole class.

        >>> from fsm.automata import cls as chars, node_nfa
        >>> cuts = ClassCuts.of_edges(node_nfa(chars((48, 57)))[0])
        >>> row = array("i", [-1] * cuts.n_classes); cuts.write_row(memoryview(row), 0, [(48, 57, 1)])
        >>> row.tolist()
        [-1, -1, -1, -1, 1, -1, -1, -1]
        """
        cuts, first = self._cut_list, self._class_list
        for lo, hi, t in pieces:
            if not (cuts[lo] and cuts[hi + 1]):
                raise AssertionError(f"byte range {lo:#x}..{hi:#x} splits a byte class of the lazy DFA")
            a, b = first[lo], first[hi] + 1
            if b - a == 1:  # most pieces of a row of keys: a cell, ~0.1 µs where a slice costs ~0.4
                cells[base + a] = t
            else:
                cells[base + a : base + b] = array("i", (t,)) * (b - a)
