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
every count of that block.

>>> from fsm.automata import LazyByteDFA, cls, lit, node_nfa, rep, seq
>>> lazy = LazyByteDFA(*node_nfa(seq(rep(cls((97, 98)), 0, 500), lit("!"))))
>>> lazy.ensure(lazy.initial); s1 = int(lazy.table_buffer[lazy.initial, 97])
>>> lazy.ensure(s1); s2 = int(lazy.table_buffer[s1, 97])
>>> k1, k2 = shift_class(lazy, s1, 8), shift_class(lazy, s2, 8)
>>> k1[0] == k2[0], k2[2] - k1[2], shifted(lazy, s1, k1[1], 1) == s2
(True, 1, True)
"""

from __future__ import annotations

from .blocks import CounterBlock
from .lazy_dfa import LazyByteDFA


def shift_class(lazy: LazyByteDFA, d: int, horizon: int) -> tuple[tuple, int, int] | None:
    """(class key, counter block, count) of state ``d`` when the next ``horizon`` bytes read from it
    act alike for every state of its class up to a shift of that block's count; None when ``d`` is
    not such a state (no counter, several blocks, near a bound, inside a multi-byte character)."""
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
        if type(blk) is not CounterBlock or (block is not None and b != block_no):
            return None  # product blocks' liveness depends on the count itself; one block only
        block_no, block = b, blk
        local.append(divmod(loc, blk.m))
    if block is None:
        return None
    k0 = min(k for k, _ in local)
    k1 = max(k for k, _ in local)
    if k1 + horizon >= block.hi:
        return None
    if k0 >= block.lo:
        past_lo = True
    elif k1 + horizon < block.lo:
        past_lo = False
    else:
        return None
    key = (block_no, tuple(real), tuple(sorted((k - k0, g) for k, g in local)), past_lo)
    return key, block_no, k0


def shifted(lazy: LazyByteDFA, e: int, block_no: int, delta: int) -> int:
    """The state whose set is ``e``'s with every count of block ``block_no`` moved by ``delta``
    (made if new, not expanded): where a token ends from a class member ``delta`` counts further."""
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
    >>> lazy.ensure(lazy.initial); s1 = int(lazy.table_buffer[lazy.initial, 97])
    >>> Shifts(lazy).moved(s1, shift_class(lazy, s1, 8)[1], 2) == shifted(lazy, s1, 0, 2)
    True
    """

    def __init__(self, lazy: LazyByteDFA):
        self.lazy = lazy
        self._form: dict[int, tuple | None] = {}  # state -> (form, count), ("same",) or None
        self._at: dict[tuple, int] = {}  # (form, count) -> state

    def moved(self, e: int, block_no: int, delta: int) -> int:
        """``shifted(lazy, e, block_no, delta)``."""
        f = self._form.get(e, _UNSEEN)
        if f is _UNSEEN:
            f = self._form[e] = _form(self.lazy, e)
            if f is not None and len(f) == 2:
                self._at[f] = e
        if f is None:
            return shifted(self.lazy, e, block_no, delta)
        if len(f) == 1 or f[0][0] != block_no:
            return e  # no state of that block in the set: nothing moves
        key = (f[0], f[1] + delta)
        d = self._at.get(key)
        if d is None:
            d = self._at[key] = shifted(self.lazy, e, block_no, delta)
        return d


_UNSEEN = object()


def _form(lazy: LazyByteDFA, e: int) -> tuple | None:
    """``((block, real states, (count - least count, item state)...), least count)`` of a set with
    states of one counter block; ``("same",)`` with none (a shift leaves it as it is); None when it
    holds states inside a character or of several blocks (`shifted` works those out each time)."""
    counters = lazy.counters
    n_real = lazy.n_real
    real: list[int] = []
    local: list[tuple[int, int]] = []
    block_no = -1
    for q in lazy.state_set(e):
        if q >= n_real:
            return None
        if q >= 0:
            real.append(q)
            continue
        b, blk, loc = counters.locate(q)
        if block_no >= 0 and b != block_no:
            return None
        block_no = b
        local.append(divmod(loc, blk.m))
    if block_no < 0:
        return ("same",)
    k0 = min(k for k, _ in local)
    return (block_no, tuple(real), tuple(sorted((k - k0, g) for k, g in local))), k0


def _moved(counters, q: int, block_no: int, delta: int) -> int:
    """``q`` with its count moved by ``delta`` if it is a state of block ``block_no``."""
    if q >= 0:
        return q
    b, blk, loc = counters.locate(q)
    if b != block_no:
        return q
    return counters.virtual(b, loc + delta * blk.m)
