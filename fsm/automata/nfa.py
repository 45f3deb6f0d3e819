"""Compile a `json_ast` tree straight to a byte DFA, without going through regex text.

Regex text for a big schema is large (optional properties are quadratic as text) and a generic
regex parser is slow on it; the tree itself compiles linearly. Steps: a character-level NFA with
code point range edges (Thompson construction; ``Members`` gets one copy of each item), pruned to
states that can still accept; subset construction over range partitions into a character DFA;
every character edge expanded into its UTF-8 byte paths (shared trie nodes); byte columns folded
into classes. ``And`` and ``Minus`` are built on small determinized sub-automata and spliced in.

>>> from fsm.json_ast import lit, alt
>>> node_to_dfa(alt(lit("yes"), lit("no"))).accepts(b"no")
True
"""

from __future__ import annotations

from collections import defaultdict
from functools import lru_cache

import numpy as np

from ..errors import SchemaError, SchemaTooComplex, SpecTooComplex
from ..limits import DEFAULT_LIMITS, Limits
from .byte_dfa import ByteDFA
from .byte_dfa import utf8_sequences as _utf8_sequences
from .language import (
    ANY_CHAR,
    EMPTY,
    NEVER,
    Alt,
    And,
    AnyJson,
    Auto,
    Cls,
    Enc,
    Lit,
    Members,
    Minus,
    Node,
    Ref,
    Rep,
    Seq,
    Val,
    alt,
    cls,
    encoded_char,
    intersect,
    normalize_ranges,
    rep,
    seq,
    subtract,
)


@lru_cache(maxsize=65536)
def utf8_sequences(lo: int, hi: int):
    return _utf8_sequences(lo, hi)


Edge = tuple[int, int, int]  # (lo, hi, target)
_MUST_ESCAPE = ((0x00, 0x1F), (0x22, 0x22), (0x5C, 0x5C))
_HEX = ((0x30, 0x39), (0x41, 0x46), (0x61, 0x66))
_HEX_NOT_D = ((0x30, 0x39), (0x41, 0x43), (0x45, 0x46), (0x61, 0x63), (0x65, 0x66))


class CharDFA:
    """A deterministic automaton over code points: ``edges[s]`` are sorted disjoint (lo, hi, target)."""

    def __init__(self, edges: list[list[Edge]], accepting: list[bool]):
        self.edges = edges
        self.accepting = accepting

    def __len__(self) -> int:
        return len(self.edges)

    def step(self, s: int, c: int) -> int:
        for lo, hi, t in self.edges[s]:
            if lo <= c <= hi:
                return t
        return -1

    def accepts(self, text: str) -> bool:
        s = 0
        for ch in text:
            s = self.step(s, ord(ch))
            if s < 0:
                return False
        return self.accepting[s]


_COUNTER_MIN = 24  # a counted repeat with at least this many optional copies becomes a counter block
_UNIT_MAX = 64  # ... when its item is a DFA of at most this many states
_LOCAL_BITS = 40
_PRODUCT_MAX = 4_000_000  # states of a lazy length product (its liveness table is this many int32)


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

    def local(self, kg: tuple[int, int]) -> int:
        k, g = kg
        return k * self.m + g

    def edges(self, local: int) -> list[Edge]:
        k, g = divmod(local, self.m)
        if g == 0 and k >= self.hi:
            return []
        return [(lo, hi, (k, t)) for lo, hi, t in self.unit.edges[g]]  # type: ignore[misc]

    def all_edges(self):
        return (edge for row in self.unit.edges for edge in row)

    def eps(self, local: int) -> list:
        k, g = divmod(local, self.m)
        out: list = []
        if g == 0:
            if k >= self.lo:
                out.append(self.end)
        elif self.unit.accepting[g]:
            out.append((k + 1, 0))
        return out


def _escape_trie() -> tuple[list[dict[int, int]], dict[int, int]]:
    """A trie of every JSON escape this library writes for a character that must be escaped.

    ``(children, leaf_char)``: node 0 is before the backslash; a leaf maps to its decoded character.
    """
    import re

    from .language import to_regex

    children: list[dict[int, int]] = [{}]
    leaf: dict[int, int] = {}
    for lo, hi in _MUST_ESCAPE:
        for c in range(lo, hi + 1):
            rx = re.compile(to_regex(encoded_char(((c, c),), False)))
            short = [chr(c) if chr(c) in '"\\' else {8: "b", 9: "t", 10: "n", 12: "f", 13: "r"}.get(c, "")]
            cands = {"\\" + x for x in short if x} | {
                f"\\u{c:04x}",
                f"\\u{c:04X}",
                f"\\u{c:04x}".upper().replace("\\U", "\\u"),
            }
            hexs = f"{c:04x}"
            if any(ch.isalpha() for ch in hexs):
                cands |= {"\\u" + "".join(v) for v in _case_variants(hexs)}
            for text in sorted(x for x in cands if rx.fullmatch(x)):
                node = 0
                for ch in text:
                    nxt = children[node].get(ord(ch))
                    if nxt is None:
                        nxt = len(children)
                        children.append({})
                        children[node][ord(ch)] = nxt
                    node = nxt
                leaf[node] = c
    return children, leaf


def _case_variants(s: str):
    if not s:
        yield ""
        return
    for rest in _case_variants(s[1:]):
        yield from {s[0].lower() + rest, s[0].upper() + rest}


_ESCAPES: tuple | None = None


class ProductBlock(CounterBlock):
    """A DFA ``unit`` run for ``lo..hi`` characters, as virtual states ``(k, q, e)``: k characters
    read, ``q`` the DFA state, ``e`` the progress through a JSON escape (0: none; with ``enc``).
    Only live states get edges: ``live(k, q)`` iff ``q`` accepts some length in ``[lo - k, hi - k]``
    (lengths per state by a backward sweep, one numpy step per length).
    """

    def __init__(self, unit: CharDFA, lo: int, hi: int, end: int, cum: np.ndarray, enc: bool = False):
        super().__init__(unit, lo, hi, end)
        self.cum = cum
        self.enc = enc
        global _ESCAPES
        if enc and _ESCAPES is None:
            children, leaf = _escape_trie()
            below: list[set[int]] = [set() for _ in children]  # decoded characters under each node
            for node in range(len(children) - 1, -1, -1):
                if node in leaf:
                    below[node].add(leaf[node])
                for child in children[node].values():
                    below[node] |= below[child]
            _ESCAPES = (children, leaf, below)
        self.n_esc = len(_ESCAPES[0]) if enc else 1
        self.m = len(unit) * self.n_esc

    @staticmethod
    def lengths(unit: CharDFA, hi: int, budget) -> np.ndarray:
        """``cum[j, q]``: how many lengths below ``j`` state ``q`` accepts a text of."""
        n = len(unit)
        src = np.array([q for q, row in enumerate(unit.edges) for _ in row], dtype=np.int64)
        dst = np.array([t for row in unit.edges for _, _, t in row], dtype=np.int64)
        reach = np.zeros((hi + 1, n), dtype=bool)  # reach[j, q]: q accepts some text of length j
        reach[0] = np.asarray(unit.accepting, dtype=bool)
        for j in range(1, hi + 1):
            reach[j, src[reach[j - 1, dst]]] = True
            if j & 255 == 0:
                budget.deadline.check("JSON schema automaton")
        return np.concatenate([np.zeros((1, n), dtype=np.int32), np.cumsum(reach, axis=0, dtype=np.int32)])

    def live(self, k: int, q: int) -> bool:
        a, b = max(0, self.lo - k), self.hi - k
        return b >= a and bool(self.cum[b + 1, q] - self.cum[a, q] > 0)

    def _next(self, k: int, q: int, c: int) -> int:
        """The unit state after decoded character ``c`` if it is live at ``k + 1``, else -1."""
        t = self.unit.step(q, c)
        return t if t >= 0 and self.live(k + 1, t) else -1

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
                for a, b in subtract(((lo, hi),), _MUST_ESCAPE) if self.enc else ((lo, hi),):
                    out.append((a, b, (k + 1, t * ne)))
            if self.enc:
                children, _, below = _ESCAPES
                for ch, child in children[0].items():
                    if any(self._next(k, q, c) >= 0 for c in below[child]):
                        out.append((ch, ch, (k, q * ne + child)))
                out.sort()
            return out  # type: ignore[return-value]
        children, leaf, below = _ESCAPES
        out = []
        for ch, child in sorted(children[e].items()):
            if child in leaf:
                t = self._next(k, q, leaf[child])
                if t >= 0:
                    out.append((ch, ch, (k + 1, t * ne)))
            elif any(self._next(k, q, c) >= 0 for c in below[child]):
                out.append((ch, ch, (k, q * ne + child)))
        return out  # type: ignore[return-value]

    def eps(self, local: int) -> list:
        k, g = divmod(local, self.m)
        q, e = divmod(g, self.n_esc)
        return [self.end] if e == 0 and self.unit.accepting[q] and self.lo <= k <= self.hi else []

    def all_edges(self):
        yield from (edge for row in self.unit.edges for edge in row)
        if self.enc:
            for row in _ESCAPES[0]:
                for ch, child in row.items():
                    yield (ch, ch, child)


class Counters:
    """The counter blocks of one NFA; virtual state ids are negative: ``-1 - (block << 40 | local)``."""

    def __init__(self):
        self.blocks: list[CounterBlock] = []
        self.units: dict = {}
        self.entries: list[tuple[int, int]] = []

    def add(self, block: CounterBlock) -> int:
        self.blocks.append(block)
        return -1 - ((len(self.blocks) - 1) << _LOCAL_BITS)

    def _split(self, q: int) -> tuple[int, CounterBlock, int]:
        x = -1 - q
        b = x >> _LOCAL_BITS
        return b, self.blocks[b], x & ((1 << _LOCAL_BITS) - 1)

    def _id(self, b: int, block: CounterBlock, kg) -> int:
        if isinstance(kg, int):
            return kg  # a real state (the block's end)
        return -1 - ((b << _LOCAL_BITS) | block.local(kg))

    def edges(self, q: int) -> list[Edge]:
        """Character edges of virtual state ``q``."""
        b, block, local = self._split(q)
        return [(lo, hi, self._id(b, block, t)) for lo, hi, t in block.edges(local)]

    def eps(self, q: int) -> list[int]:
        b, block, local = self._split(q)
        return [self._id(b, block, t) for t in block.eps(local)]

    def all_edges(self):
        """Every distinct edge range a block can take (for spellability checks)."""
        for block in self.blocks:
            yield from block.all_edges()


class NotRegular(Exception):
    """Internal: a node (`AnyJson`) needs the lazy DFA's virtual states; a plain automaton cannot hold it."""


class Budget:
    def __init__(self, limits: Limits):
        self.limits = limits
        self.deadline = limits.deadline()
        self.ticks = 0

    def tick(self, n_states: int, what: str) -> None:
        self.ticks += 1
        if self.ticks & 15 == 0:
            self.deadline.check(what)
        if n_states > self.limits.max_states:
            self.limits.check_states(n_states, what)


class NFA:
    """Character NFA under construction: range edges and epsilon edges."""

    def __init__(self, budget: Budget, counters: bool = False, calls=None):
        self.trans: list[list[Edge]] = []
        self.eps: list[list[int]] = []
        self.budget = budget
        self._enc_cache: dict[tuple, Node] = {}
        self._small: dict[Node, CharDFA] = {}
        self._esc_entry: dict[tuple, int] = {}
        # Long counted repeats become `CounterBlock`s (virtual states, see there) when the consumer
        # supports them: the lazy DFA does, `determinize` does not.
        self.counters = Counters() if counters else None
        # `Ref`s become call sites of rules (a pushdown automaton, see `json_pushdown`) when given
        self.calls = calls

    def new(self) -> int:
        self.trans.append([])
        self.eps.append([])
        n = len(self.trans)
        if n & 255 == 0:
            self.budget.tick(n, "JSON schema automaton")
        return n - 1

    # -- Thompson construction ------------------------------------------------------------------
    def build(self, node: Node, s: int, enc: bool = False, full: bool = False) -> int:
        """Add ``node`` starting at state ``s``; return its end state."""
        if isinstance(node, Lit):
            text = node.text
            if not text:
                return s
            if enc and any(c < " " or c in '"\\' for c in text):
                for ch in text:
                    c = ord(ch)
                    if c < 0x20 or ch in '"\\':
                        s = self.build(self._encoded(((c, c),), False), s)
                    else:
                        e = self.new()
                        self.trans[s].append((c, c, e))
                        s = e
                return s
            # a chain of fresh states, allocated at once
            n0 = len(self.trans)
            k = len(text)
            self.trans.extend([(ord(ch), ord(ch), n0 + i + 1)] for i, ch in enumerate(text[1:]))
            self.trans.append([])
            self.eps.extend([] for _ in range(k))
            self.trans[s].append((ord(text[0]), ord(text[0]), n0))
            if (n0 >> 8) != ((n0 + k) >> 8):
                self.budget.tick(n0 + k, "JSON schema automaton")
            return n0 + k - 1
        if isinstance(node, Cls):
            e = self.new()
            self._cls_to(node.ranges, enc, full, s, e)
            return e
        if isinstance(node, Seq):
            for it in node.items:
                s = self.build(it, s, enc, full)
            return s
        if isinstance(node, Alt):
            e = self.new()
            for it in node.items:
                self.eps[self.build(it, s, enc, full)].append(e)
            return e
        if isinstance(node, Rep):
            if self.counters is not None and node.hi is not None and node.hi - node.lo >= _COUNTER_MIN:
                e = self._counter(node, s, enc, full)
                if e is not None:
                    return e
            for _ in range(node.lo):
                s = self.build(node.item, s, enc, full)
            if node.hi is None and isinstance(node.item, Cls):
                m = self.new()
                self.eps[s].append(m)
                self._cls_to(node.item.ranges, enc, full, m, m)
                return m
            if node.hi is None:
                m = self.new()  # a fresh loop head, so no loop runs back into a shared state
                self.eps[s].append(m)
                self.eps[self.build(node.item, m, enc, full)].append(m)
                return m
            e = self.new()
            self.eps[s].append(e)
            for _ in range(node.hi - node.lo):
                s = self.build(node.item, s, enc, full)
                self.eps[s].append(e)
            return e
        if isinstance(node, Members):
            return self._members(node, s, enc, full)
        if isinstance(node, Val):
            return self.build(node.item, s, enc, full)
        if isinstance(node, Enc):
            return self.build(node.item, s, True, node.full)
        if isinstance(node, Auto):
            d = trim_dfa(CharDFA([list(r) for r in node.edges], list(node.accepting)))
            return self.embed(d or _EMPTY_DFA, s, enc)
        if isinstance(node, (And, Minus)):
            if self.counters is not None and isinstance(node, And):
                e = self._length_product(node, s, enc)
                if e is not None:
                    return e
            d = self._small.get(node)
            if d is None:
                d = self._small[node] = small_dfa(node, self.budget)
            return self.embed(d, s, enc)
        if isinstance(node, AnyJson):
            return self._any_json(node, s)
        if isinstance(node, Ref):
            if self.calls is None:
                raise NotRegular(
                    f"rule reference {node.name!r} needs a pushdown automaton or the grammar engine"
                )
            c, r = self.new(), self.new()
            self.eps[s].append(c)
            self.calls.site[c] = (node.name, r)
            return r
        raise TypeError(f"unknown node {node!r}")

    def _counter(self, node: Rep, s: int, enc: bool, full: bool) -> int | None:
        """``node`` as a counter block from ``s``; None when its item is too big to be a unit."""
        key = (node.item, enc, full)
        unit = self.counters.units.get(key, False)
        if unit is False:
            sub = NFA(self.budget)
            st = sub.new()
            try:
                en = sub.build(node.item, st, enc, full)
            except NotRegular:  # an unbounded value or a rule call inside: copies in this NFA instead
                self.counters.units[key] = None
                return None
            unit = None
            if sub.trim(en)[st] and len(sub.trans) <= 4 * _UNIT_MAX:
                d = trim_dfa(determinize(sub, st, en, self.budget))
                # state 0 must mean "between items": not re-entered, not accepting (item non-empty)
                if (
                    d is not None
                    and len(d) <= _UNIT_MAX
                    and not d.accepting[0]
                    and not any(t == 0 for row in d.edges for _, _, t in row)
                ):
                    unit = d
            self.counters.units[key] = unit
        if unit is None:
            return None
        end = self.new()
        block = CounterBlock(unit, node.lo, node.hi, end)
        self.eps[s].append(self.counters.add(block))
        self.counters.entries.append((s, end))
        return end

    def _any_json(self, node: AnyJson, s: int) -> int:
        """An unbounded JSON value as a pushdown block (lazy consumers only, see `json_any`)."""
        from .any_value import AnyValueBlock, scalar_nodes

        if self.counters is None:
            raise NotRegular("an unconstrained JSON value nests without bound")
        key = ("any", node.max_string_length)
        dfas = self.counters.units.get(key)
        if dfas is None:
            dfas = self.counters.units[key] = [
                node_to_char_dfa(part, self.budget) for part in scalar_nodes(node.max_string_length)
            ]
        end = self.new()
        self.eps[s].append(self.counters.add(AnyValueBlock(dfas[0], dfas[1], end, node.indent, node.depth)))
        self.counters.entries.append((s, end))
        return end

    def _length_product(self, node: And, s: int, enc: bool) -> int | None:
        """``And(L, Rep(Cls, lo, hi))`` with a long count as a lazy product block, or None.

        The product of a format's DFA (hundreds of states) with ``maxLength: 255`` has ~10^5 states;
        `ProductBlock` makes only those a token walk reaches.
        """
        counts = [
            it for it in node.items if isinstance(it, Rep) and isinstance(it.item, Cls) and it.hi is not None
        ]
        rest = [it for it in node.items if it not in counts]
        if not counts or not rest:
            return None
        lo = max(c.lo for c in counts)
        hi = min(c.hi for c in counts)
        ranges = counts[0].item.ranges
        for c in counts[1:]:
            ranges = intersect(ranges, c.item.ranges)
        if hi - lo < _COUNTER_MIN or hi < lo:
            return None
        key = ("product", tuple(rest), ranges, lo, hi, enc)
        shared = self.counters.units.get(key, False)
        if shared is False:
            shared = None
            d = small_dfa(rest[0] if len(rest) == 1 else And(tuple(rest)), self.budget)
            n = len(d)
            edges = [
                [(a, b, t) for a0, b0, t in row for a, b in intersect(((a0, b0),), ranges)] for row in d.edges
            ]
            if n * (hi + 1) <= _PRODUCT_MAX and n >= 2:
                unit = CharDFA(edges, d.accepting)
                shared = (unit, ProductBlock.lengths(unit, hi, self.budget))
            self.counters.units[key] = shared
        if shared is None:
            return None
        end = self.new()
        block = ProductBlock(shared[0], lo, hi, end, shared[1], enc)
        if block.live(0, 0):
            self.eps[s].append(self.counters.add(block))
            self.counters.entries.append((s, end))
        return end

    def _cls_to(self, ranges, enc: bool, full: bool, s: int, e: int) -> None:
        """Edges from ``s`` to ``e`` for one character of ``ranges`` (JSON-encoded when ``enc``)."""
        if not enc:
            self.trans[s].extend((a, b, e) for a, b in ranges)
            return
        raw = subtract(ranges, _MUST_ESCAPE)
        self.trans[s].extend((a, b, e) for a, b in raw)
        if full and ranges == ANY_CHAR:
            # \ then a short escape, or u and four hex digits that are not a surrogate
            esc, u1, u2, u2d, u3, u4 = (self.new() for _ in range(6))
            self.trans[s].append((0x5C, 0x5C, esc))
            self.trans[esc].extend((c, c, e) for c in b'"/\\bfnrt')
            self.trans[esc].append((0x75, 0x75, u1))
            self.trans[u1].extend((a, b, u2) for a, b in _HEX_NOT_D)
            self.trans[u1].extend(((0x44, 0x44, u2d), (0x64, 0x64, u2d)))
            self.trans[u2].extend((a, b, u3) for a, b in _HEX)
            self.trans[u2d].append((0x30, 0x37, u3))
            self.trans[u3].extend((a, b, u4) for a, b in _HEX)
            self.trans[u4].extend((a, b, e) for a, b in _HEX)
            # a surrogate pair: \uD800-\uDBFF then \uDC00-\uDFFF (one astral character)
            h2, h3, h4, bs, bu, l1, l2, l3 = (self.new() for _ in range(8))
            self.trans[u2d].extend(((0x38, 0x39, h2), (0x41, 0x42, h2), (0x61, 0x62, h2)))
            self.trans[h2].extend((a, b, h3) for a, b in _HEX)
            self.trans[h3].extend((a, b, h4) for a, b in _HEX)
            self.trans[h4].append((0x5C, 0x5C, bs))
            self.trans[bs].append((0x75, 0x75, bu))
            self.trans[bu].extend(((0x44, 0x44, l1), (0x64, 0x64, l1)))
            self.trans[l1].extend(((0x43, 0x46, l2), (0x63, 0x66, l2)))
            self.trans[l2].extend((a, b, l3) for a, b in _HEX)
            self.trans[l3].extend((a, b, e) for a, b in _HEX)
            return
        special = intersect(ranges, _MUST_ESCAPE + ((0x2F, 0x2F),))
        if special:
            # the escapes (dozens of states) are shared by every edge into ``e`` that needs them
            key = (special, e)
            x = self._esc_entry.get(key)
            if x is None:
                x = self._esc_entry[key] = self.new()
                self.eps[self.build(self._encoded(special, False), x)].append(e)
            self.eps[s].append(x)

    def _encoded(self, ranges, full: bool) -> Node:
        key = (ranges, full)
        n = self._enc_cache.get(key)
        if n is None:
            n = self._enc_cache[key] = encoded_char(ranges, full)
        return n

    def _members(self, m: Members, s: int, enc: bool, full: bool) -> int:
        items, n = m.items, len(m.items)
        sat = (m.max_count + 1) if m.max_count is not None else m.min_count
        end = self.new()
        states: dict[tuple, int] = {}
        todo: list[tuple] = []

        def state(key: tuple) -> int:
            q = states.get(key)
            if q is None:
                q = states[key] = self.new()
                todo.append(key)
            return q

        states[(0, 0, 0, False)] = s
        todo.append((0, 0, 0, False))
        joins: dict[tuple, tuple[int, int]] = {}
        while todo:
            key = todo.pop()
            i, k, c, started = key
            q = states[key]
            if i == n:
                if c >= m.min_count and (m.max_count is None or c <= m.max_count):
                    self.eps[q].append(end)
                continue
            node, lo, hi = items[i]
            if k >= lo:
                self.eps[q].append(state((i + 1, 0, c, started)))
            if hi is not None and k >= hi:
                continue
            c2 = min(c + 1, sat)
            if m.max_count is not None and c2 > m.max_count:
                continue
            k2 = min(k + 1, lo) if hi is None else k + 1
            jkey = (i, k, c)
            if jkey not in joins:  # one copy of the item per (i, k, c), entered with or without sep
                j = self.new()
                after = self.build(node, j, enc, full)
                joins[jkey] = (j, after)
                self.eps[after].append(state((i, k2, c2, True)))
            j = joins[jkey][0]
            if started:
                self.eps[self.build(m.sep, q, enc, full)].append(j)
            else:
                self.eps[q].append(j)
        return end

    def embed(self, dfa: CharDFA, s: int, enc: bool) -> int:
        """Splice a (trimmed) character DFA in at ``s``; return the end state."""
        end = self.new()
        ids = [s] + [self.new() for _ in range(len(dfa) - 1)]
        for q, edges in enumerate(dfa.edges):
            if dfa.accepting[q]:
                self.eps[ids[q]].append(end)
            if not enc:
                self.trans[ids[q]].extend((lo, hi, ids[t]) for lo, hi, t in edges)
                continue
            by_target: dict[int, list] = defaultdict(list)
            for lo, hi, t in edges:
                by_target[t].append((lo, hi))
            for t, rs in by_target.items():
                self._cls_to(normalize_ranges(rs), True, False, ids[q], ids[t])
        return end

    # -- analysis -------------------------------------------------------------------------------
    def trim(self, final: int, calls=None) -> list[bool]:
        """Which states can reach ``final``; edges into the others are dropped.

        With ``calls`` (see `json_pushdown.Calls`), a state is live when it reaches the end of its
        own rule, a call site when its return state is live and the rule it calls can finish.
        """
        n = len(self.trans)
        rev: list[list[int]] = [[] for _ in range(n)]
        for q in range(n):
            for _, _, t in self.trans[q]:
                rev[t].append(q)
            for t in self.eps[q]:
                if t >= 0:
                    rev[t].append(q)
        if self.counters is not None:
            # every state of a counter block can finish it: its entry is live when its exit is
            for entry, exit_ in self.counters.entries:
                rev[exit_].append(entry)
        live = [False] * n
        seeds = [final] + (list(calls.final.values()) if calls is not None else [])
        stack = []
        for q in seeds:
            if not live[q]:
                live[q] = True
                stack.append(q)
        if calls is not None:
            site_of_ret = {r: (c, name) for c, (name, r) in calls.site.items()}
            rule_of_start: dict[int, list[str]] = {}
            for name, st in calls.start.items():
                rule_of_start.setdefault(st, []).append(name)
            sites_of: dict[str, list[tuple[int, int]]] = {}
            for c, (name, r) in calls.site.items():
                sites_of.setdefault(name, []).append((c, r))
            finishes: set[str] = set()
        while stack:
            t = stack.pop()
            for q in rev[t]:
                if not live[q]:
                    live[q] = True
                    stack.append(q)
            if calls is None:
                continue
            hit = site_of_ret.get(t)
            if hit is not None and hit[1] in finishes and not live[hit[0]]:
                live[hit[0]] = True
                stack.append(hit[0])
            for name in rule_of_start.get(t, ()):
                if name not in finishes:
                    finishes.add(name)
                    for c, r in sites_of.get(name, ()):
                        if live[r] and not live[c]:
                            live[c] = True
                            stack.append(c)
        for q in range(n):
            if live[q]:
                tr = self.trans[q]
                if any(not live[t] for _, _, t in tr):
                    self.trans[q] = [e for e in tr if live[e[2]]]
                ep = self.eps[q]
                if any(t >= 0 and not live[t] for t in ep):
                    self.eps[q] = [t for t in ep if t < 0 or live[t]]
        return live


def determinize(nfa: NFA, start: int, final: int, budget: Budget) -> CharDFA:
    """Subset construction over code point range partitions (call ``nfa.trim`` first)."""
    trans, eps = nfa.trans, nfa.eps
    cl_memo: dict[int, frozenset] = {}

    def closure(q: int) -> frozenset:
        r = cl_memo.get(q)
        if r is not None:
            return r
        if not eps[q]:
            r = frozenset((q,))
        else:
            seen = {q}
            stack = [q]
            while stack:
                x = stack.pop()
                for y in eps[x]:
                    if y not in seen:
                        seen.add(y)
                        stack.append(y)
            r = frozenset(seen)
        cl_memo[q] = r
        return r

    ids: dict[frozenset, int] = {}
    sets: list[frozenset] = []
    raw_ids: dict[frozenset, int] = {}

    def dfa_id(raw: frozenset) -> int:
        d = raw_ids.get(raw)
        if d is not None:
            return d
        if len(raw) == 1:
            (q,) = raw
            S = closure(q)
        else:
            S = frozenset().union(*(closure(q) for q in raw))
        d = ids.get(S)
        if d is None:
            d = ids[S] = len(sets)
            sets.append(S)
        raw_ids[raw] = d
        return d

    dfa_id(frozenset((start,)))
    out_edges: list[list[Edge]] = []
    accepting: list[bool] = []
    i = 0
    while i < len(sets):
        S = sets[i]
        i += 1
        accepting.append(final in S)
        ev: list[Edge] = []
        for q in S:
            if trans[q]:
                ev.extend(trans[q])
        if not ev:
            out_edges.append([])
            continue
        if len(ev) == 1:
            lo, hi, t = ev[0]
            out_edges.append([(lo, hi, dfa_id(frozenset((t,))))])
            continue
        ev.sort()
        bounds = sorted({e[0] for e in ev} | {e[1] + 1 for e in ev})
        row: list[Edge] = []
        active: list[tuple[int, int]] = []
        j = 0
        for b in range(len(bounds) - 1):
            x = bounds[b]
            while j < len(ev) and ev[j][0] == x:
                active.append((ev[j][1], ev[j][2]))
                j += 1
            if active:
                active = [a for a in active if a[0] >= x]
            if not active:
                continue
            d = dfa_id(frozenset(t for _, t in active))
            y = bounds[b + 1] - 1
            if row and row[-1][2] == d and row[-1][1] + 1 == x:
                row[-1] = (row[-1][0], y, d)
            else:
                row.append((x, y, d))
        out_edges.append(row)
        budget.tick(len(sets), "JSON schema automaton")
    return CharDFA(out_edges, accepting)


def complement_dfa(dfa: CharDFA) -> CharDFA:
    """The DFA of every character string ``dfa`` (deterministic, missing edges = reject) rejects."""
    n = len(dfa)
    sink = n
    edges = []
    for q in range(n):
        row = list(dfa.edges[q])
        covered = normalize_ranges([(lo, hi) for lo, hi, _ in row])
        row.extend((lo, hi, sink) for lo, hi in subtract(ANY_CHAR, covered))
        edges.append(sorted(row))
    edges.append([(lo, hi, sink) for lo, hi in ANY_CHAR])
    return CharDFA(edges, [not a for a in dfa.accepting] + [True])


def trim_dfa(dfa: CharDFA) -> CharDFA | None:
    """Keep states reachable from 0 that can reach acceptance; None if the language is empty."""
    n = len(dfa)
    rev: list[list[int]] = [[] for _ in range(n)]
    for q, edges in enumerate(dfa.edges):
        for _, _, t in edges:
            rev[t].append(q)
    live = list(dfa.accepting)
    stack = [q for q in range(n) if live[q]]
    while stack:
        t = stack.pop()
        for q in rev[t]:
            if not live[q]:
                live[q] = True
                stack.append(q)
    if not live[0]:
        return None
    order, seen, stack = [], {0}, [0]
    while stack:
        q = stack.pop()
        order.append(q)
        for _, _, t in dfa.edges[q]:
            if live[t] and t not in seen:
                seen.add(t)
                stack.append(t)
    order.sort()
    new = {q: i for i, q in enumerate(order)}
    edges = [[(lo, hi, new[t]) for lo, hi, t in dfa.edges[q] if t in new] for q in order]
    return CharDFA(edges, [dfa.accepting[q] for q in order])


def node_to_char_dfa(node: Node, budget: Budget | None = None) -> CharDFA | None:
    """The trimmed character DFA of ``node`` (None when its language is empty)."""
    budget = budget or Budget(DEFAULT_LIMITS)
    nfa = NFA(budget)
    start = nfa.new()
    final = nfa.build(node, start)
    live = nfa.trim(final)
    if not live[start]:
        return None
    return trim_dfa(determinize(nfa, start, final, budget))


def _product(a: CharDFA, b: CharDFA, budget: Budget) -> CharDFA:
    ids = {(0, 0): 0}
    pairs = [(0, 0)]
    edges: list[list[Edge]] = []
    acc: list[bool] = []
    i = 0
    while i < len(pairs):
        p, q = pairs[i]
        i += 1
        acc.append(a.accepting[p] and b.accepting[q])
        row = []
        ea, eb = a.edges[p], b.edges[q]
        x = y = 0
        while x < len(ea) and y < len(eb):
            lo, hi = max(ea[x][0], eb[y][0]), min(ea[x][1], eb[y][1])
            if lo <= hi:
                key = (ea[x][2], eb[y][2])
                d = ids.get(key)
                if d is None:
                    d = ids[key] = len(pairs)
                    pairs.append(key)
                row.append((lo, hi, d))
            if ea[x][1] < eb[y][1]:
                x += 1
            else:
                y += 1
        edges.append(row)
        budget.tick(len(pairs), "intersection of string constraints")
    return CharDFA(edges, acc)


def _minus_words(a: CharDFA, words: frozenset[str], budget: Budget) -> CharDFA:
    # A trie of the words, run in parallel with ``a``; states where a word ends are not accepting.
    trie: list[dict[int, int]] = [{}]
    ends = {0: False}
    for w in words:
        t = 0
        for ch in w:
            nxt = trie[t].get(ord(ch))
            if nxt is None:
                nxt = len(trie)
                trie.append({})
                ends[nxt] = False
                trie[t][ord(ch)] = nxt
            t = nxt
        ends[t] = True
    ids = {(0, 0): 0}
    pairs = [(0, 0)]
    edges: list[list[Edge]] = []
    acc: list[bool] = []
    i = 0
    while i < len(pairs):
        p, t = pairs[i]
        i += 1
        acc.append(a.accepting[p] and not (t >= 0 and ends[t]))
        row = []
        kids = trie[t] if t >= 0 else {}
        for lo, hi, nq in a.edges[p]:
            cuts = sorted(c for c in kids if lo <= c <= hi)
            x = lo
            for c in cuts + [hi + 1]:
                if x <= c - 1:
                    key = (nq, -1)
                    d = ids.get(key)
                    if d is None:
                        d = ids[key] = len(pairs)
                        pairs.append(key)
                    row.append((x, c - 1, d))
                if c <= hi:
                    key = (nq, kids[c])
                    d = ids.get(key)
                    if d is None:
                        d = ids[key] = len(pairs)
                        pairs.append(key)
                    row.append((c, c, d))
                x = c + 1
        edges.append(row)
        budget.tick(len(pairs), "property names")
    return CharDFA(edges, acc)


_EMPTY_DFA = CharDFA([[]], [False])


def small_dfa(node: Node, budget: Budget) -> CharDFA:
    """Trimmed character DFA for ``And``/``Minus`` (and anything else); empty language allowed."""
    if isinstance(node, And):
        dfas = [node_to_char_dfa(it, budget) for it in node.items]
        if any(d is None for d in dfas):
            return _EMPTY_DFA
        acc = dfas[0]
        for d in dfas[1:]:
            acc = trim_dfa(_product(acc, d, budget))
            if acc is None:
                return _EMPTY_DFA
        return acc
    if isinstance(node, Minus):
        d = node_to_char_dfa(node.item, budget)
        if d is None:
            return _EMPTY_DFA
        return trim_dfa(_minus_words(d, node.words, budget)) or _EMPTY_DFA
    return node_to_char_dfa(node, budget) or _EMPTY_DFA


# ---------------------------------------------------------------------------------------------
# Byte DFA tables: merging equal rows (memory only)


def _equal_rows(a: np.ndarray) -> np.ndarray:
    """Group ids (0.., in order of first appearance) such that rows share an id only if exactly equal."""
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


def _merge_equal_states(
    table: np.ndarray, accepting: np.ndarray, initial: int, budget: Budget, rounds: int = 4
):
    """Merge states with identical rows a few times over (memory only; the language is unchanged)."""
    for _ in range(rounds):
        n = table.shape[0]
        sig = np.column_stack([accepting.astype(np.int32), table])
        block = _equal_rows(sig)
        m = int(block.max()) + 1
        if m == n:
            break
        rep = np.zeros(m, dtype=np.int64)
        rep[block[::-1]] = np.arange(n)[::-1]  # the first state of each block represents it
        ext = np.append(block, -1)
        table = ext[table[rep]].astype(np.int32)
        accepting = accepting[rep]
        initial = int(block[initial])
        budget.deadline.check("JSON schema automaton")
    return table, accepting, initial


def node_nfa(node: Node, limits: Limits | None = None):
    """The trimmed character NFA of ``node``: ``(trans, eps, start, final, limits, counters)``.

    ``counters`` holds the virtual states of long counted repeats (negative ids, see `Counters`).

    Raises `SchemaError` when the language is empty.
    """
    limits = limits or DEFAULT_LIMITS
    nfa, start, final = trimmed_nfa(node, limits)
    return nfa.trans, nfa.eps, start, final, limits, nfa.counters


def trimmed_nfa(node: Node, limits: Limits, calls=None, rules: dict[str, Node] | None = None):
    """``(nfa, start, final)``: ``node`` built (with ``rules`` as call targets when ``calls`` is
    given, see `json_pushdown`) and trimmed; budget overruns become `SchemaTooComplex`.

    Raises `SchemaError` when the language is empty.
    """
    try:
        nfa = NFA(Budget(limits), counters=True, calls=calls)
        start = nfa.new()
        final = nfa.build(node, start)
        if calls is not None:
            for name, rule in (rules or {}).items():
                s = calls.start[name] = nfa.new()
                calls.final[name] = nfa.build(rule, s)
                calls.returns.add(calls.final[name])
            for name, _ in calls.site.values():
                if name not in calls.start:
                    raise SchemaError(f"rule reference {name!r} has no rule")
        live = nfa.trim(final, calls)
    except NotRegular as exc:
        raise SchemaError(str(exc)) from None
    except SchemaTooComplex:
        raise
    except SpecTooComplex as exc:
        raise SchemaTooComplex(str(exc), budget=exc.budget, limit=exc.limit) from None
    except RecursionError:
        raise SchemaTooComplex("the schema is nested too deeply to compile", budget="recursion") from None
    if not live[start]:
        raise SchemaError("the schema admits no JSON document at all (its constraints contradict each other)")
    return nfa, start, final


def node_to_dfa(node: Node, limits: Limits | None = None) -> ByteDFA:
    """Compile a tree to a byte DFA whose every state can still reach acceptance (fully expanded).

    Raises `SchemaError` when the language is empty and `SchemaTooComplex` over a budget.
    """
    from .lazy_dfa import LazyByteDFA

    return LazyByteDFA(*node_nfa(node, limits)).materialize()


# ---------------------------------------------------------------------------------------------
# Character DFA -> plain tree (state elimination), for regex text of small automata.


_ELIMINATION_STATES = 3000
_ELIMINATION_SECONDS = 5.0


def dfa_to_node(dfa: CharDFA) -> Node:
    """A plain tree for a (small) character DFA, by state elimination.

    Regex text is needed only for ``to_regex`` and grammar terminals; big intersections raise
    `SchemaTooComplex` instead of growing without bound.
    """
    import time

    n = len(dfa)
    if n > _ELIMINATION_STATES:
        raise SchemaTooComplex(
            f"a string constraint's automaton has {n:,} states, too many to write as regex text "
            f"(limit {_ELIMINATION_STATES:,}); the regular path (no grammar) handles it",
            budget="max_states",
            limit=_ELIMINATION_STATES,
        )
    stop = time.monotonic() + _ELIMINATION_SECONDS
    start, final = n, n + 1
    out: dict[int, dict[int, Node]] = {q: {} for q in range(n + 2)}
    inc: dict[int, set[int]] = {q: set() for q in range(n + 2)}

    def add(p: int, q: int, node: Node) -> None:
        out[p][q] = alt(out[p][q], node) if q in out[p] else node
        inc[q].add(p)

    add(start, 0, EMPTY)
    for q, edges in enumerate(dfa.edges):
        by_t: dict[int, list] = defaultdict(list)
        for lo, hi, t in edges:
            by_t[t].append((lo, hi))
        for t, rs in by_t.items():
            add(q, t, cls(*rs))
        if dfa.accepting[q]:
            add(q, final, EMPTY)
    remaining = set(range(n))
    while remaining:
        if time.monotonic() > stop:
            raise SchemaTooComplex(
                "writing a string constraint's automaton as regex text took too long "
                f"(over {_ELIMINATION_SECONDS:g} s)",
                budget="max_seconds",
                limit=_ELIMINATION_SECONDS,
            )
        k = min(remaining, key=lambda q: len(inc[q] - {q}) * len(set(out[q]) - {q}))
        remaining.discard(k)
        loop = out[k].pop(k, None)
        inc[k].discard(k)
        star = rep(loop, 0, None) if loop is not None else EMPTY
        for p in list(inc[k]):
            if p == k or k not in out[p]:
                continue
            pk = out[p].pop(k)
            for q, kq in out[k].items():
                add(p, q, seq(pk, star, kq))
        for q in out[k]:
            inc[q].discard(k)
        out[k] = {}
        inc[k] = set()
    return out[start].get(final, NEVER)


def as_plain(node: Node) -> Node:
    """``And``/``Minus``/``Auto`` rewritten as a plain tree (regex text needs it)."""
    budget = Budget(DEFAULT_LIMITS)
    d = (
        small_dfa(node, budget)
        if not isinstance(node, Auto)
        else trim_dfa(CharDFA([list(r) for r in node.edges], list(node.accepting)))
    )
    if d is None or not any(d.accepting):
        return NEVER
    return dfa_to_node(d)
