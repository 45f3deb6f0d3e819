"""States of a counter block written free of the block, so that blocks of the same unit share rows.

Every ``maxLength`` string of a schema is a `CounterBlock` of its own (JSONSchemaBench's Snowplow
schemas hold ~100), and the first row of each walks the vocabulary trie through ~100 new states
(a state per count within a token's length, the states of escapes and of multi-byte characters at
each count): ~4 ms, most of such a request, where the rows after it are moved along the count
(`counter_shift`). Yet two blocks with the same unit DFA, both far from their bounds, read a token
that never leaves them alike, up to the block they are in and the count they start at.

So a state such a token ends in is written as its *form* relative to the row's state (its
*anchor*): (count offset, unit state) items, states inside a character over such items, and
whether the set holds the block's end closure; `BlockForms.make` makes the state of a form in
another block at another count. Which tokens never leave: leaving takes an edge of a state of the
end's closure, whose first byte is an *exit byte* of the anchor (`Anchor.exits`), so a token
holding none stays inside. Tokens holding one are walked (`fsm.index.counted_rows`).

>>> from fsm.automata import LazyByteDFA, alt, cls, lit, node_nfa, rep, seq
>>> unit = rep(cls((97, 98)), 0, 500)
>>> lazy = LazyByteDFA(*node_nfa(alt(seq(lit("x"), unit, lit("!x")), seq(lit("y"), unit, lit("!y")))))
>>> forms = BlockForms(lazy)
>>> a, b = forms.anchor(lazy.step(lazy.initial, ord("x")), 8), forms.anchor(lazy.step(lazy.initial, ord("y")), 8)
>>> a.key == b.key, a.block_no != b.block_no, a.exits
(True, True, b'!')
>>> e = lazy.step(lazy.step(a.state, 97), 98)  # "ab" read in the first block
>>> lazy.state_set(forms.make(forms.form(e, a), b)) == lazy.state_set(lazy.step(lazy.step(b.state, 97), 98))
True
"""

from __future__ import annotations

from dataclasses import dataclass

from .blocks import CounterBlock, ProductBlock
from .counter_shift import block_parts, lo_side
from .lazy_dfa import LazyByteDFA
from .utf8_chains import Utf8Chains

# an item of a form: ("v", count offset, unit state) or ("c", bytes still to read, inner item)
Item = tuple


@dataclass(frozen=True)
class Anchor:
    """A state whose row other blocks of the same unit can share: ``key`` names what its row
    depends on (the unit, the form of its set, which side of ``lo`` it is, whether its set holds
    the end closure, its exit bytes)."""

    state: int
    block_no: int
    block: CounterBlock
    count: int  # least count of the block in the state's set
    end_set: tuple[int, ...]  # the closure of the block's end: what the set holds past ``lo``
    has_end: bool
    exits: bytes  # first bytes of the end closure's edges, sorted
    key: tuple
    room: int  # counts left before the block's bound (``hi - count``)
    far: bool  # no token can reach the bound: the row is the unit's alone, shareable both ways

    def fits(self, form: tuple) -> bool:
        """Whether a state of ``form`` (`BlockForms.form`) exists this close to the bound: no item
        started at a count of ``hi`` or more. A token's count only grows along its bytes, so its
        end's form tells whether every step of it fits."""
        return need(form) <= self.room


def need(form: tuple) -> int:
    """The least room (counts left before the bound) a state of ``form`` needs: an item at count
    offset ``dk`` needs ``dk`` when it has ended an item (unit state 0), ``dk + 1`` inside one.

    >>> need(((("v", 3, 0), ("c", b"x", ("v", 2, 1))), False))
    3
    """
    return max((_need(item) for item in form[0]), default=0)


def _need(item: tuple) -> int:
    if item[0] == "c":
        return _need(item[2])
    _, dk, g = item
    return dk if g == 0 else dk + 1


class BlockForms:
    """`Anchor`s, forms and the states of forms, over one lazy DFA (unit keys kept per block)."""

    def __init__(self, lazy: LazyByteDFA):
        self.lazy = lazy
        self._units: dict[int, tuple] = {}  # block number -> (unit key, end closure, exit bytes)

    def anchor(self, d: int, horizon: int) -> Anchor | None:
        """``d`` as an `Anchor` — or None: its set holds no counter block's states, or those of
        several blocks or of a block that does not count, or states inside a character, or real
        states with edges other than its block's end closure, or ``lo`` is within a token's reach.

        ``horizon``: the longest token, in bytes (a character is at least one)."""
        parts = block_parts(self.lazy, d)
        if parts is None:
            return None
        (block_no, real, form), block, k0, k1 = parts
        if type(block) is ProductBlock:
            # a product state's row is its unit state's where its count cannot matter; nearer
            # ``lo`` or ``hi``, walked
            if not block.count_free(k0, k1, horizon):
                return None
        elif type(block) is not CounterBlock:
            return None
        past_lo = lo_side(block, k0, k1, horizon)
        if past_lo is None:
            return None
        unit_key, end_set, exits = self._unit(block_no, block)
        has_end = block.end in real
        rest = set(real) - set(end_set) if has_end else set(real)
        if any(self.lazy.char_edges(q) for q in rest):
            # another branch's states beside the block: its row is not the block's alone (states
            # without edges, such as the one the block was entered from, change no transition)
            return None
        # the exit bytes whether or not the set holds the end closure now: a token can finish an
        # item (an escape) and then leave
        key = (unit_key, form, past_lo, has_end, exits)
        far = k1 + horizon < block.hi
        return Anchor(d, block_no, block, k0, end_set, has_end, exits, key, block.hi - k0, far)

    def _unit(self, block_no: int, block: CounterBlock) -> tuple:
        got = self._units.get(block_no)
        if got is None:
            unit = block.unit
            unit_key = (tuple(tuple(row) for row in unit.edges), tuple(bool(a) for a in unit.accepting))
            if type(block) is ProductBlock:
                # far from its bounds a product state's edges are its unit state's to the states
                # that can end within ``hi`` (`ProductBlock.offset_edges`), escapes read if ``enc``
                unit_key = ("product", block.enc, block.ends_within_bound, unit_key)
            end_set = self.lazy.closure_of(block.end)
            got = self._units[block_no] = (unit_key, end_set, self._first_bytes(end_set))
        return got

    def exits(self, block_no: int, real: tuple[int, ...]) -> bytes:
        """The first bytes of the edges of the real states ``real`` and of block ``block_no``'s end
        closure, sorted: a token holding none of them, read from a state of that block with those
        real states beside it, never leaves the block — nor enters it anew (a new array item), which
        only a way out leads to.

        >>> from fsm.automata import LazyByteDFA, cls, lit, node_nfa, rep, seq
        >>> lazy = LazyByteDFA(*node_nfa(seq(lit("x"), rep(cls((97, 98)), 0, 500), lit("!"))))
        >>> BlockForms(lazy).exits(0, ())
        b'!'
        """
        block = self.lazy.counters.blocks[block_no]
        _, _, end_exits = self._unit(block_no, block)
        return bytes(sorted(set(end_exits) | set(self._first_bytes(real))))

    def _first_bytes(self, states: tuple[int, ...]) -> bytes:
        first: set[int] = set()
        for q in states:
            if q < 0 or q >= self.lazy.n_real:
                return bytes(range(256))  # another block or a character's inside: every byte
            for lo, hi, _ in Utf8Chains.byte_edges(self.lazy.char_edges(q)):
                first.update(range(lo, hi + 1))
        return bytes(sorted(first))

    def form(self, e: int, anchor: Anchor) -> tuple | None:
        """The form of state ``e`` reached from ``anchor`` (``(items, has_end)``), or None when its
        set is not of the anchor's block alone (a token left the block)."""
        items: list[Item] = []
        real: list[int] = []
        for q in self.lazy.state_set(e):
            if 0 <= q < self.lazy.n_real:
                real.append(q)
                continue
            item = self._item(q, anchor)
            if item is None:
                return None
            items.append(item)
        if real and tuple(real) != anchor.end_set:
            return None
        return tuple(sorted(items)), bool(real)

    def _item(self, q: int, anchor: Anchor) -> Item | None:
        if q >= self.lazy.n_real:
            seq, t = self.lazy.chain_key(q)
            inner = self._item(t, anchor) if t < 0 or t >= self.lazy.n_real else None
            return None if inner is None else ("c", seq, inner)
        b, block, local = self.lazy.counters.locate(q)
        if b != anchor.block_no:
            return None
        k, g = divmod(local, block.m)
        return ("v", k - anchor.count, g)

    def make(self, form: tuple, anchor: Anchor) -> int:
        """The state of ``form`` from ``anchor`` (made if new, not expanded)."""
        items, has_end = form
        ids = [self._id(item, anchor) for item in items]
        if has_end:
            ids.extend(anchor.end_set)
        return self.lazy.state_of_set(tuple(sorted(ids)))

    def _id(self, item: Item, anchor: Anchor) -> int:
        if item[0] == "c":
            return self.lazy.chain_state(item[1], self._id(item[2], anchor))
        _, dk, g = item
        return self.lazy.counters.virtual(anchor.block_no, anchor.block.local((anchor.count + dk, g)))
