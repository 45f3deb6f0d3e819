"""The NFA of `Members` (`fsm.automata.members`): ordered items with counts, and no dead ends."""

from __future__ import annotations

import itertools
import random

import fsm
from fsm.automata import Lit, Members, Seq, node_to_char_dfa
from fsm.automata.budget import Budget
from fsm.automata.liveness import live_states
from fsm.automata.nfa import NFA


def _random_members(rng: random.Random) -> Members:
    """One to three single-letter items ``a``, ``b``, ``c`` with random counts and bounds."""
    items = []
    for c in "abc"[: rng.randrange(1, 4)]:
        lo = rng.randrange(2)
        items.append((Lit(c), lo, rng.choice([None, lo, lo + 1, lo + 2])))
    return Members(tuple(items), Lit(","), rng.randrange(4), rng.choice([None, 0, 1, 2, 3]))


def _fits(m: Members, letters: tuple[str, ...]) -> bool:
    """The reference: ``letters`` are ``m``'s items in order, each within its counts and the total too."""
    order = [it.text for it, _, _ in m.items]
    if any(x not in order for x in letters) or list(letters) != sorted(letters, key=order.index):
        return False
    for it, lo, hi in m.items:
        k = letters.count(it.text)
        if k < lo or (hi is not None and k > hi):
            return False
    return len(letters) >= m.min_count and (m.max_count is None or len(letters) <= m.max_count)


def _spellings(n: int):
    return itertools.chain.from_iterable(itertools.product("abc", repeat=k) for k in range(n + 1))


def test_meetable_members_leave_no_dead_state():
    # an object with optional members (at least one present: `{}` is a branch of its own) had a
    # dead end, the state past the last member with none present, and so a liveness pass per compile
    rng = random.Random(3)
    checked = 0
    for _ in range(300):
        m = _random_members(rng)
        nfa = NFA(Budget(fsm.Limits()), counters=True)
        start = nfa.new()
        final = nfa.build(Seq((Lit("{"), m, Lit("}"))), start)
        if any(_fits(m, w) for w in _spellings(6)):  # its counts can be met (at most 3 + 3 copies)
            assert not nfa.maybe_dead, m
            assert all(live_states(nfa.trans, nfa.eps, final)), m
            checked += 1
        else:
            assert nfa.maybe_dead, m
    assert checked > 100


def test_members_accept_exactly_their_words():
    rng = random.Random(4)
    for _ in range(200):
        m = _random_members(rng)
        d = node_to_char_dfa(m)
        for w in _spellings(6):
            assert (d is not None and d.accepts(",".join(w))) == _fits(m, w), (m, w)
