"""Virtual NFA states: blocks whose states the lazy DFA makes only when a token walk reaches them.

A `CounterBlock` runs a counted repeat ``Rep(item, lo, hi)`` as ``(count, item state)`` pairs, a
`ProductBlock` a small DFA for ``lo..hi`` characters (a format with ``maxLength``); `Counters`
numbers the blocks' states with negative ids next to an NFA's real ones. Expanding them up front
would cost ``hi`` copies of the item.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import cached_property, lru_cache
from weakref import WeakKeyDictionary

import numpy as np

from .char_dfa import CharDFA, Edge
from .escapes import MUST_ESCAPE, escape_trie
from .language import Cls, Rep
from .ranges import subtract
from .utf8_chains import LEAD, Utf8Chains

_LOCAL_BITS = 40
COUNTER_MIN = 24  # a counted repeat with at least this many optional copies becomes a counter block
# ... and from this many when each copy is a wide class: a string's character is a UTF-8 tree of a
# few states per copy whose rows walk most of the vocabulary trie, and a block shares those rows
# across strings and schemas (`fsm.index.counted_rows`); a narrow class (digits) stays copies
WIDE_COUNTER_MIN = 8
_WIDE = 0x80


class LocalStates:
    """A block's local states: keys (tuples) interned to small ints on first use, the ids a block's
    virtual NFA states carry (`Counters`).

    >>> ls = LocalStates(); ls.local(("V", "")), ls.local(("O", "[")), ls.local(("V", "")), ls.keys[1]
    (0, 1, 0, ('O', '['))
    """

    def __init__(self) -> None:
        self._ids: dict[tuple, int] = {}
        self.keys: list[tuple] = []  # key of each local id

    def local(self, key: tuple) -> int:
        """The small int of ``key``; made on first use."""
        i = self._ids.get(key)
        if i is None:
            i = self._ids[key] = len(self.keys)
            self.keys.append(key)
        return i


def counted_block(node: Rep) -> bool:
    """Whether a counted repeat becomes a counter block: many optional copies, or fewer of a wide class.

    >>> counted_block(Rep(Cls(((48, 57),)), 0, 10)), counted_block(Rep(Cls(((0, 0x10FFFF),)), 0, 10))
    (False, True)
    """
    if node.hi is None:
        return False
    span = node.hi - node.lo
    if span >= COUNTER_MIN:
        return True
    item = node.item
    return (
        span >= WIDE_COUNTER_MIN and isinstance(item, Cls) and sum(b - a + 1 for a, b in item.ranges) > _WIDE
    )


# Per unit DFA and what else the edges depend on, `offset_edges` of each item state and their
# byte edges: blocks of one unit share them (a schema's strings of one pattern; Snowplow's hold ~100
# blocks of one unit), so they hold at most the unit's edges, not a copy per block.
_OFFSETS: WeakKeyDictionary[CharDFA, dict] = WeakKeyDictionary()


def _offset_tables(unit: CharDFA, key) -> tuple[dict[int, tuple[Edge, ...]], dict[int, tuple[Edge, ...]]]:
    per_unit = _OFFSETS.get(unit)
    if per_unit is None:
        per_unit = _OFFSETS[unit] = {}
    got = per_unit.get(key)
    if got is None:
        got = per_unit[key] = ({}, {})
    return got


class CounterBlock:
    """``Rep(item, lo, hi)`` as virtual NFA states ``(k, g)``: k items done, ``g`` a state of the
    item's DFA (0: between items). Expanding ``hi`` copies of the item would cost ``hi`` times its
    states up front (``maxLength: 10000`` strings are common); the lazy DFA asks for the few
    states a token walk reaches instead. Every state can finish the block (the unit DFA is trimmed
    and ``lo <= hi``), so no state is dead.
    """

    def __init__(self, unit: CharDFA, lo: int, hi: int, end: int):
        self.unit, self.lo, self.hi, self.end = unit, lo, hi, end
        self.m = len(unit)
        self._offsets, self._byte_offsets = _offset_tables(unit, None)

    def offset_edges(self, local: int) -> tuple[Edge, ...] | None:
        """The edges of local state ``local`` as ``(lo, hi, target's local number - local)``: the
        same for every count where the block's bounds are out of a step's reach, so derived once
        per item state (a string's states at each count asked the unit again, ~30 µs an expansion
        of a format's); None where the count matters (the bound reached: no edge).

        >>> b = CounterBlock(CharDFA([[(97, 97, 1)], [(98, 98, 0)]], [True, False]), 0, 9, 5)
        >>> b.offset_edges(b.local((3, 0))), b.offset_edges(b.local((9, 0)))
        (((97, 97, 1),), None)
        """
        k, g = divmod(local, self.m)
        if g == 0 and k >= self.hi:
            return None
        got = self._offsets.get(g)
        if got is None:
            got = self._offsets[g] = tuple((lo, hi, t - g) for lo, hi, t in self.unit.edges[g])
        return got

    def offset_byte_edges(self, local: int) -> tuple[Edge, ...] | None:
        """`offset_edges` as byte edges (`Utf8Chains.byte_edges`: a lead byte's target `LEAD`)."""
        offsets = self.offset_edges(local)
        if offsets is None:
            return None
        g = local % self.m
        got = self._byte_offsets.get(g)
        if got is None:
            got = self._byte_offsets[g] = Utf8Chains.byte_edges(offsets)
        return got

    def local(self, kg: tuple[int, int]) -> int:
        """The local number of virtual state ``(k, g)``."""
        k, g = kg
        return k * self.m + g

    def edges(self, local: int) -> list[Edge]:
        """Character edges of local state ``local``; targets are local keys ``(k, g)`` or ``end``."""
        k, g = divmod(local, self.m)
        if g == 0 and k >= self.hi:
            return []
        return [(lo, hi, (k, t)) for lo, hi, t in self.unit.edges[g]]  # type: ignore[misc]

    def all_edges(self) -> Iterator[Edge]:
        """Every edge range the block can take (for spellability checks)."""
        return iter(dfa_ranges(self.unit))

    def eps(self, local: int) -> list:
        """Epsilon targets of local state ``local`` (local keys, or ``end`` when the block is done)."""
        k, g = divmod(local, self.m)
        out: list = []
        if g == 0:
            if k >= self.lo:
                out.append(self.end)
        elif self.unit.accepting[g]:
            out.append((k + 1, 0))
        return out


_ESCAPES: tuple | None = None


@lru_cache(maxsize=4096)
def _unescaped(lo: int, hi: int) -> tuple[tuple[int, int], ...]:
    """The characters of ``lo..hi`` a JSON string may hold raw (memoized: every counter state of a
    string block asks again for the same few ranges, ~16 µs each)."""
    return subtract(((lo, hi),), MUST_ESCAPE)


class ProductBlock(CounterBlock):
    """A DFA ``unit`` run for ``lo..hi`` characters, as virtual states ``(k, q, e)``: k characters
    read, ``q`` the DFA state, ``e`` the progress through a JSON escape (0: none; with ``enc``).
    Only live states get edges: ``live(k, q)`` iff ``q`` accepts some length in ``[lo - k, hi - k]``
    (lengths per state by a backward sweep, one numpy step per length).
    """

    def __init__(self, unit: CharDFA, lo: int, hi: int, end: int, cum: np.ndarray, enc: bool = False):
        super().__init__(unit, lo, hi, end)
        self.cum = cum
        # far from the bounds the edges are the unit's, escapes and liveness read alike
        self._offsets, self._byte_offsets = _offset_tables(unit, (enc, self.ends_within_bound))
        self.enc = enc
        global _ESCAPES
        if enc and _ESCAPES is None:
            children, leaf = escape_trie()
            below: list[set[int]] = [set() for _ in children]  # decoded characters under each node
            for node in range(len(children) - 1, -1, -1):
                if node in leaf:
                    below[node].add(leaf[node])
                for child in children[node].values():
                    below[node] |= below[child]
            _ESCAPES = (children, leaf, below)
        self.n_esc = len(_ESCAPES[0]) if enc else 1
        self.m = len(unit) * self.n_esc
        # (unit state, escape trie node) -> the unit states the characters below the node lead to:
        # a state's escape edges asked the unit for each of ~34 characters at every count (~80 µs
        # an expansion, most of a format string's), where a few distinct targets' liveness differs
        self._esc_targets: dict[tuple[int, int], tuple[int, ...]] = {}

    @staticmethod
    def lengths(unit: CharDFA, hi: int, budget) -> np.ndarray:
        """``cum[j, q]``: how many lengths below ``j`` state ``q`` accepts a text of."""
        n = len(unit)
        src = np.array([q for q, row in enumerate(unit.edges) for _ in row], dtype=np.int64)
        dst = np.array([t for row in unit.edges for _, _, t in row], dtype=np.int64)
        reach = np.zeros((hi + 1, n), dtype=bool)  # reach[j, q]: q accepts some text of length j
        reach[0] = np.asarray(unit.accepting, dtype=bool)
        # row j depends on row j - 1 alone: once a row repeats an earlier one, the rows repeat with
        # that period (a format's loop makes them constant within a few steps; ``maxLength: 2048``
        # was 2,048 numpy steps, most of a schema's compile)
        seen: dict[bytes, int] = {reach[0].tobytes(): 0}
        for j in range(1, hi + 1):
            reach[j, src[reach[j - 1, dst]]] = True
            first = seen.setdefault(reach[j].tobytes(), j)
            if first < j:
                period = j - first
                for k in range(j + 1, hi + 1, period):  # blocks of whole periods, the last cut
                    m = min(period, hi + 1 - k)
                    reach[k : k + m] = reach[first + 1 : first + 1 + m]
                break
            if j & 255 == 0:
                budget.deadline.check("the automaton")
        return np.concatenate([np.zeros((1, n), dtype=np.int32), np.cumsum(reach, axis=0, dtype=np.int32)])

    def offset_edges(self, local: int) -> tuple[Edge, ...] | None:
        """`CounterBlock.offset_edges`: within ``lo <= k + 1 <= hi - longest_shortest`` a target's
        liveness (`live`, always asked at ``k + 1``) is whether its unit state can end at all, so
        the edges are the same at every such count; None outside (near ``lo`` or ``hi``).

        >>> from fsm.automata.char_dfa import CharDFA
        >>> unit = CharDFA([[(97, 97, 0)]], [True])  # a*
        >>> b = ProductBlock(unit, 2, 10, 0, ProductBlock.lengths(unit, 10, None))
        >>> b.offset_edges(b.local((5, 0))) == ((97, 97, b.m),), b.offset_edges(b.local((0, 0)))
        (True, None)
        """
        k, g = divmod(local, self.m)
        if not self.lo <= k + 1 <= self.hi - self.longest_shortest:
            return None
        got = self._offsets.get(g)
        if got is None:
            got = self._offsets[g] = tuple((lo, hi, self.local(t) - local) for lo, hi, t in self.edges(local))
        return got

    @cached_property
    def ends_within_bound(self) -> tuple[bool, ...]:
        """Per unit state, whether it ends some text within ``hi`` characters: where its count is
        out of reach of ``lo`` and ``hi``, whether a state is live (`offset_edges`)."""
        return tuple(bool(x) for x in self.cum[-1] > 0)

    def count_free(self, k0: int, k1: int, horizon: int) -> bool:
        """Whether states at counts ``k0..k1``, and every state ``horizon`` characters on from
        them, act alike at any count up to the count itself: past ``lo`` and farther from ``hi``
        than the longest shortest ending, a product state's liveness stays put, so its rows shift
        (`counter_shift`) and are shared (`block_forms`) as a counter's; nearer, they depend on it.

        >>> from fsm.automata.char_dfa import CharDFA
        >>> unit = CharDFA([[(97, 97, 0)]], [True])  # a*
        >>> b = ProductBlock(unit, 2, 100, 0, ProductBlock.lengths(unit, 100, None))
        >>> b.count_free(5, 5, 8), b.count_free(1, 5, 8), b.count_free(5, 95, 8)
        (True, False, False)
        """
        return k0 >= self.lo and k1 + horizon + self.longest_shortest + 1 < self.hi

    @cached_property
    def longest_shortest(self) -> int:
        """The longest, over unit states that can end within ``hi`` characters, of the shortest text
        each ends with: farther than this from ``hi``, and past ``lo``, liveness does not depend on k.

        >>> from fsm.automata.char_dfa import CharDFA
        >>> unit = CharDFA([[(97, 97, 1)], [(98, 98, 2)], []], [False, False, True])  # "ab"
        >>> ProductBlock(unit, 0, 10, 0, ProductBlock.lengths(unit, 10, None)).longest_shortest
        2
        """
        reach = np.diff(self.cum, axis=0) > 0  # reach[j, q]: q ends a text of length j
        ends = reach.any(axis=0)
        return int(reach.argmax(axis=0)[ends].max()) if ends.any() else 0

    def live(self, k: int, q: int) -> bool:
        """Whether ``k`` characters read and unit state ``q`` can still end within ``lo..hi``."""
        a, b = max(0, self.lo - k), self.hi - k
        return b >= a and bool(self.cum[b + 1, q] - self.cum[a, q] > 0)

    def _next(self, k: int, q: int, c: int) -> int:
        """The unit state after decoded character ``c`` if it is live at ``k + 1``, else -1."""
        t = self.unit.step(q, c)
        return t if t >= 0 and self.live(k + 1, t) else -1

    def _escapes_live(self, k: int, q: int, node: int) -> bool:
        """Whether some character below escape trie ``node`` leads ``q`` to a state live at ``k + 1``."""
        targets = self._esc_targets.get((q, node))
        if targets is None:
            step = self.unit.step
            found = {step(q, c) for c in _ESCAPES[2][node]}
            found.discard(-1)
            targets = self._esc_targets[(q, node)] = tuple(sorted(found))
        return any(self.live(k + 1, t) for t in targets)

    def edges(self, local: int) -> list[Edge]:
        k, g = divmod(local, self.m)
        q, e = divmod(g, self.n_esc)
        if k >= self.hi:
            return []
        ne = self.n_esc
        if e == 0:
            out = []
            for lo, hi, t in self.unit.edges[q]:
                if not self.live(k + 1, t):
                    continue
                for a, b in _unescaped(lo, hi) if self.enc else ((lo, hi),):
                    out.append((a, b, (k + 1, t * ne)))
            if self.enc:
                children = _ESCAPES[0]
                for ch, child in children[0].items():
                    if self._escapes_live(k, q, child):
                        out.append((ch, ch, (k, q * ne + child)))
                out.sort()
            return out  # type: ignore[return-value]
        children, leaf, _ = _ESCAPES
        out = []
        for ch, child in sorted(children[e].items()):
            if child in leaf:
                t = self._next(k, q, leaf[child])
                if t >= 0:
                    out.append((ch, ch, (k + 1, t * ne)))
            elif self._escapes_live(k, q, child):
                out.append((ch, ch, (k, q * ne + child)))
        return out  # type: ignore[return-value]

    def eps(self, local: int) -> list:
        k, g = divmod(local, self.m)
        q, e = divmod(g, self.n_esc)
        return [self.end] if e == 0 and self.unit.accepting[q] and self.lo <= k <= self.hi else []

    def all_edges(self) -> Iterator[Edge]:
        yield from dfa_ranges(self.unit)
        if self.enc:
            for row in _ESCAPES[0]:
                for ch, child in row.items():
                    yield (ch, ch, child)


# each block's unit is shared (by every block of a schema, and across compiles through the DFA memo)
_RANGES: WeakKeyDictionary[CharDFA, tuple[Edge, ...]] = WeakKeyDictionary()


def dfa_ranges(dfa: CharDFA) -> tuple[Edge, ...]:
    """The distinct ranges of ``dfa``'s edges as ``(lo, hi, 0)``, listed once per DFA object: an
    any-value block's scalar DFA has ~1,100 edges and ~40 ranges, and the spellability and byte
    class passes read every block's (a schema with a dozen ``{}`` values read 13,000 edges).

    >>> dfa_ranges(CharDFA([[(97, 98, 1)], [(97, 98, 1), (48, 57, 0)]], [False, True]))
    ((97, 98, 0), (48, 57, 0))
    """
    out = _RANGES.get(dfa)
    if out is None:
        out = _RANGES[dfa] = tuple(
            (lo, hi, 0) for lo, hi in dict.fromkeys((e[0], e[1]) for row in dfa.edges for e in row)
        )
    return out


class Counters:
    """The counter blocks of one NFA; virtual state ids are negative: ``-1 - (block << 40 | local)``.
    Also its guard points (`language.Guard`): a state with no edge, which the lazy DFA leaves for
    the state after it only once the matcher's text passes the check."""

    def __init__(self):
        self.blocks: list[CounterBlock] = []
        self.units: dict = {}
        self.entries: list[tuple[int, int]] = []
        self.guards: dict[int, tuple[Callable[[bytes], bool], int]] = {}  # point -> (check, after)
        self.required: dict[int, str] = {}  # point -> the keyword that needs its check run
        # keywords of blocks a plain DFA cannot hold (a huge multipleOf's remainders)
        self.lazy_only: set[str] = set()

    def guard(self, point: int, check: Callable[[bytes], bool], after: int, required_by: str | None) -> None:
        """Record guard point ``point`` (live when ``after`` is: an entry, as a block's is)."""
        self.guards[point] = (check, after)
        self.entries.append((point, after))
        if required_by:
            self.required[point] = required_by

    def add(self, block: CounterBlock) -> int:
        """Register ``block``; the id of its first virtual state."""
        self.blocks.append(block)
        return -1 - ((len(self.blocks) - 1) << _LOCAL_BITS)

    def _split(self, q: int) -> tuple[int, CounterBlock, int]:
        x = -1 - q
        b = x >> _LOCAL_BITS
        return b, self.blocks[b], x & ((1 << _LOCAL_BITS) - 1)

    def locate(self, q: int) -> tuple[int, CounterBlock, int]:
        """(block number, block, local number) of virtual state ``q``.

        >>> c = Counters(); q = c.add(CounterBlock(CharDFA([[(97, 97, 1)], []], [False, True]), 0, 9, 5))
        >>> c.locate(q)[0], c.locate(q)[2], c.virtual(0, 7) == q - 7
        (0, 0, True)
        """
        return self._split(q)

    def virtual(self, b: int, local: int) -> int:
        """The id of local state ``local`` of block ``b``."""
        return -1 - ((b << _LOCAL_BITS) | local)

    def _id(self, b: int, block: CounterBlock, kg) -> int:
        if isinstance(kg, int):
            return kg  # a real state (the block's end)
        return -1 - ((b << _LOCAL_BITS) | block.local(kg))

    def edges(self, q: int) -> list[Edge]:
        """Character edges of virtual state ``q``."""
        b, block, local = self._split(q)
        if isinstance(block, CounterBlock):
            offsets = block.offset_edges(local)
            if offsets is not None:  # local + d is virtual state q - d (`virtual`)
                return [(lo, hi, q - d) for lo, hi, d in offsets]
        return [(lo, hi, self._id(b, block, t)) for lo, hi, t in block.edges(local)]

    def byte_edges(self, q: int) -> tuple[Edge, ...]:
        """`edges` of virtual state ``q`` as byte edges (`Utf8Chains.byte_edges`)."""
        _, block, local = self._split(q)
        if isinstance(block, CounterBlock):
            offsets = block.offset_byte_edges(local)
            if offsets is not None:
                return tuple((lo, hi, t if t == LEAD else q - t) for lo, hi, t in offsets)
        return Utf8Chains.byte_edges(self.edges(q))

    def eps(self, q: int) -> list[int]:
        """Epsilon targets of virtual state ``q``."""
        b, block, local = self._split(q)
        return [self._id(b, block, t) for t in block.eps(local)]

    def all_edges(self) -> Iterator[Edge]:
        """Every distinct edge range a block can take (for spellability checks), as ``(lo, hi, 0)``.

        >>> c = Counters(); d = CharDFA([[(97, 98, 1)], [(97, 98, 1)]], [False, True])
        >>> _ = c.add(CounterBlock(d, 0, 30, 5)); _ = c.add(CounterBlock(d, 0, 40, 6))
        >>> list(c.all_edges())
        [(97, 98, 0)]
        """
        seen: set[tuple[int, int]] = set()
        for block in self.blocks:
            for e in block.all_edges():
                if (e[0], e[1]) not in seen:
                    seen.add((e[0], e[1]))
                    yield (e[0], e[1], 0)
