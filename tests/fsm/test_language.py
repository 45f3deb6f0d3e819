"""Smart constructors of the language tree (`fsm.automata.language`)."""

from __future__ import annotations

import random

from fsm.automata import EMPTY, NEVER, Alt, Seq, alt, cls, lit, opt, rep, seq


def _reference_alt(*items):
    out, seen = [], set()
    for it in items:
        for p in it.items if isinstance(it, Alt) else (it,):
            if p not in seen:
                seen.add(p)
                out.append(p)
    return out[0] if len(out) == 1 else Alt(tuple(out))


def test_alt_drops_exactly_the_equal_repeats_in_order():
    rng = random.Random(3)
    # equal nodes built apart (not one object), of several classes
    makers = [
        lambda: lit("a"),
        lambda: lit("b"),
        lambda: cls((48, 57)),
        lambda: seq(lit("x"), cls((48, 57))),
        lambda: seq(lit("y"), cls((48, 57))),
        lambda: rep(lit("ab"), 0, 3),
        lambda: alt(lit("p"), lit("q")),
    ]
    for _ in range(500):
        items = [rng.choice(makers)() for _ in range(rng.randrange(0, 6))]
        got, want = alt(*items), _reference_alt(*items)
        assert got == want and type(got) is type(want), items
        if isinstance(want, Alt):
            assert got.items == want.items


def test_the_empty_language_and_string_are_recognized_by_value_not_identity():
    never, empty = Alt(()), Seq(())  # equal to NEVER and EMPTY, not the same objects
    assert seq(lit("a"), never, lit("b")) == NEVER
    assert rep(never, 0, 3) == EMPTY and rep(never, 1, 3) == NEVER
    assert rep(empty, 2, 5) == EMPTY and opt(never) == EMPTY
    assert opt(lit("a")) == Alt((EMPTY, lit("a")))
    assert seq(lit("a"), empty, lit("b")) == lit("ab")
