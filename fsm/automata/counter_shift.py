"""States of a lazy DFA that differ only by how far one counter has counted.

Inside a ``maxLength: 1000`` string every character read is a new DFA state — the count is part of
the state — so a token index computing rows on first visit walks the vocabulary trie again for
every step of such a string (40k+ tokens each, with the chain of counter states expanded ahead):
on JSONSchemaBench's Snowplow schemas most of a request's time. Yet while the count is far from
its bound, the state at count 7 and the one at count 8 read the next ``horizon`` bytes alike: the
same tokens stay live, and each ends in the state with the same count offset. `shift_class` names
that class (two states with the same key are such shifts of each other, ``count`` apart) and
`shifted` maps an end state found from one member to the matching state of another, so a row is
walked once per class and derived for the others (`fsm.index.lazy`).

Why it is exact: a `CounterBlock` state ``(k, g)`` changes behaviour with ``k`` only at ``lo`` (the
block may end) and ``hi`` (no more items). Reading ``n <= horizon`` bytes adds at most ``n`` to ``k``
(an item is at least one byte), so when every count of the set stays below ``hi - horizon`` and on
one side of ``lo`` over those bytes, subset construction commutes with adding the same offset to
every count of that block. A `ProductBlock` state (a format with ``maxLength``) also has edges only
to live states, live when its unit state ends some text within the room left: past ``lo``, that is
"its shortest ending fits", the same at every count farther than the longest shortest ending from
``hi`` (`ProductBlock.longest_shortest`).

>>> from fsm.automata import LazyByteDFA, cls, lit, node_nfa, rep, seq
>>> lazy = LazyByteDFA(*node_nfa(seq(rep(cls((97, 98)), 0, 500), lit("!"))))
>>> s1 = lazy.step(lazy.initial, 97); s2 = lazy.step(s1, 97)
>>> k1, k2 = shift_class(lazy, s1, 8), shift_class(lazy, s2, 8)
>>> k1[0] == k2[0], k2[2] - k1[2], shifted(lazy, s1, k1[1], 1) == s2
(True, 1, True)
"""

from __future__ import annotations

from .blocks import CounterBlock, ProductBlock
from .lazy_dfa import LazyByteDFA


def shift_class(lazy: LazyByteDFA, d: int, horizon: int) -> tuple[tuple, int, int] | None:
    """(class key, counter block, count) of state ``d`` when the next ``horizon`` bytes read from it
    act alike for every state of its class up to a shift of that block's count; None when ``d`` is
    not such a state (no counter, several blocks, near a bound, inside a multi-byte character)."""
    parts = block_parts(lazy, d)
    if parts is None or parts[1] is None:
        return None
    form, block, k0, k1 = parts
    if type(block) is ProductBlock:
        # a product state lives while its unit state can still end within the room left: it
        # shifts as a counter does only where that cannot change over the horizon
        if not block.count_free(k0, k1, horizon):
            return None
    elif type(block) is not CounterBlock or k1 + horizon >= block.hi:
        return None
    past_lo = lo_side(block, k0, k1, horizon)
    if past_lo is None:
        return None
    return (*form, past_lo), form[0], k0


def lo_side(block: CounterBlock, k0: int, k1: int, horizon: int) -> bool | None:
    """Whether counts ``k0..k1``, and up to ``horizon`` more, are all past the block's ``lo`` (True)
    or all short of it (False); None when ``lo`` is within reach (the block may end on the way).

    >>> from fsm.automata.char_dfa import CharDFA
    >>> b = CounterBlock(CharDFA([[(97, 97, 1)], []], [False, True]), 10, 500, 0)
    >>> lo_side(b, 12, 12, 8), lo_side(b, 0, 1, 8), lo_side(b, 5, 5, 8)
    (True, False, None)
    """
    if k0 >= block.lo:
        return True
    if k1 + horizon < block.lo:
        return False
    return None


def block_parts(lazy: LazyByteDFA, d: int) -> tuple[tuple, CounterBlock | None, int, int] | None:
    """``((block number, real states, (count - least count, item state)...), block, least count,
    greatest count)`` of the set of ``d``; the block None when the set holds no virtual state; None
    when it holds states inside a character, of several blocks, or of a block that does not count.
    What shift classes and `block_forms` anchors are read from.

    >>> from fsm.automata import cls, lit, node_nfa, rep, seq
    >>> lazy = LazyByteDFA(*node_nfa(seq(rep(cls((97, 98)), 0, 500), lit("!"))))
    >>> (block_no, _, form), block, k0, k1 = block_parts(lazy, lazy.step(lazy.initial, 97))
    >>> block_no, k0, block.hi
    (0, 0, 500)
    """
    counters = lazy.counters
    if counters is None:
        return None
    n_real = lazy.n_real
    real: list[int] = []
    local: list[tuple[int, int]] = []
    block_no, block = -1, None
    for q in lazy.state_set(d):
        if q >= n_real:
            return None  # inside a UTF-8 character: rare as a row's state, not worth a key
        if q >= 0:
            real.append(q)
            continue
        b, blk, loc = counters.locate(q)
        if not isinstance(blk, CounterBlock) or (block is not None and b != block_no):
            return None  # a pushdown block (an unconstrained value) has no counts; one block only
        block_no, block = b, blk
        local.append(divmod(loc, blk.m))
    if block is None:
        return (block_no, tuple(real), ()), None, 0, 0
    k0 = min(k for k, _ in local)
    k1 = max(k for k, _ in local)
    return (block_no, tuple(real), tuple(sorted((k - k0, g) for k, g in local))), block, k0, k1


def shifted(lazy: LazyByteDFA, e: int, block_no: int, delta: int) -> int:
    """The state whose set is ``e``'s with every count of block ``block_no`` moved by ``delta``
    (made if new, not expanded): where a token ends from a class member ``delta`` counts further."""
    lead = lazy.lead_of(e)
    if lead is not None:  # inside a character, its set not made: the moved source's lead byte
        src = shifted(lazy, lead[0], block_no, delta)
        got = lazy.step(src, lead[1])
        if got >= 0:
            return got
    counters = lazy.counters
    n_real = lazy.n_real
    out = []
    for q in lazy.state_set(e):
        if q >= n_real:
            seq, t = lazy.chain_key(q)
            out.append(lazy.chain_state(seq, _moved(counters, t, block_no, delta)))
        else:
            out.append(_moved(counters, q, block_no, delta))
    return lazy.state_of_set(tuple(sorted(out)))


class Shifts:
    """`shifted`, memoized for one lazy DFA by what a state is up to its count.

    A derived row moves each of its end states (up to ``horizon`` counts of one block and the states
    after the block) by its own offset; consecutive rows of a long string ask for nearly the same
    states, so after the first few rows each end state is a dict lookup, not a new set made.

    >>> from fsm.automata import cls, lit, node_nfa, rep, seq
    >>> lazy = LazyByteDFA(*node_nfa(seq(rep(cls((97, 98)), 0, 500), lit("!"))))
    >>> s1 = lazy.step(lazy.initial, 97)
    >>> Shifts(lazy).moved(s1, shift_class(lazy, s1, 8)[1], 2) == shifted(lazy, s1, 0, 2)
    True
    """

    def __init__(self, lazy: LazyByteDFA):
        self.lazy = lazy
        self._parts: dict[int, tuple | None] = {}  # state -> `block_parts` of its set
        self._at: dict[tuple, int] = {}  # (form, least count) -> state

    def moved(self, e: int, block_no: int, delta: int) -> int:
        """``shifted(lazy, e, block_no, delta)``."""
        parts = self._parts.get(e, _UNSEEN)
        if parts is _UNSEEN and self.lazy.lead_of(e) is not None:
            parts = self._parts[e] = None  # inside a character: `shifted` moves its source
        if parts is _UNSEEN:
            parts = self._parts[e] = block_parts(self.lazy, e)
            if parts is not None and parts[1] is not None:
                self._at[parts[0], parts[2]] = e
        if parts is None:
            return shifted(self.lazy, e, block_no, delta)
        form, block, k0, _ = parts
        if block is None or form[0] != block_no:
            return e  # no state of that block in the set: nothing moves
        key = (form, k0 + delta)
        d = self._at.get(key)
        if d is None:
            d = self._at[key] = shifted(self.lazy, e, block_no, delta)
        return d


_UNSEEN = object()


def _moved(counters, q: int, block_no: int, delta: int) -> int:
    """``q`` with its count moved by ``delta`` if it is a state of block ``block_no``."""
    if q >= 0:
        return q
    b, blk, loc = counters.locate(q)
    if b != block_no:
        return q
    return counters.virtual(b, loc + delta * blk.m)
