"""The lazy byte DFA's expansions (`fsm.automata.lazy_dfa`): whatever shortcut an expansion takes
(a row copied from a state of the same set, ranges grouped instead of overlaid, a row written piece
by piece over byte classes), each state's row is the one its NFA state set gives."""

from __future__ import annotations

import random
import re
from array import array
from itertools import pairwise

import pytest

from fsm.automata import LazyByteDFA, alt, cls, lazy_dfa, lit, node_nfa, opt, rep, seq
from fsm.automata.byte_classes import ClassCuts
from fsm.automata.ranges import grouped, overlay, pieces

LOOP = rep(cls((0x20, 0x21), (0x23, 0xFFFF)), 0, None)  # a string's characters, most of them multi-byte


def _row(lazy: LazyByteDFA, d: int) -> list[int]:
    return [lazy.step(d, b) for b in range(256)]


def test_states_inside_a_character_with_one_set_have_one_row():
    """A lead byte's target inside a character is a state of its own (made before its set), so the
    set of ``[80-BF]`` then the loop is the state of C2..DF and, after E0 A0, another: expanded once,
    its row serves both (the second copies it), and each is still its set's row."""
    lazy = LazyByteDFA(*node_nfa(seq(lit('"'), LOOP, lit('"'))))
    s = lazy.step(lazy.initial, ord('"'))
    two = lazy.step(s, 0xC3)  # a two-byte character: one continuation byte left
    three = lazy.step(lazy.step(s, 0xE0), 0xA0)  # a three-byte one, after its second byte
    assert two != three and lazy.state_set(two) == lazy.state_set(three)
    assert _row(lazy, two) == _row(lazy, three)
    after = lazy.step(s, ord("a"))  # where a whole character leads
    assert _row(lazy, two)[0x80] == _row(lazy, two)[0xBF] == after and _row(lazy, two)[0x7F] == -1


def test_a_string_of_multibyte_characters_keeps_its_language():
    lazy = LazyByteDFA(*node_nfa(seq(lit('"'), LOOP, lit('"')))).as_byte_dfa()
    rng = random.Random(3)
    chars = ["a", "!", "é", "—", "\u0800", "\uffff", "漢", '"', "😀", "\x7f"]
    for _ in range(300):
        text = "".join(rng.choice(chars) for _ in range(rng.randint(0, 6)))
        doc = f'"{text}"'.encode()
        want = re.fullmatch(r'"[ !#-\uffff]*"', f'"{text}"') is not None
        assert lazy.accepts(doc) == want, doc


def test_edges_of_a_state_out_of_order_keep_the_language():
    """A state's character edges need not come sorted: its byte edges then go through the overlay
    (which sorts them), never read as disjoint as they stand."""
    trans = [[(0x62, 0x62, 1), (0xE9, 0xE9, 1), (0x61, 0x61, 1)], []]
    lazy = LazyByteDFA(trans, [[], []], 0, 1).as_byte_dfa()
    for text in ("a", "b", "é"):
        assert lazy.accepts(text.encode()), text
    for text in ("c", "ab", "è", ""):
        assert not lazy.accepts(text.encode()), text


def test_disjoint_edges_out_of_order_are_kept_sorted_and_keep_the_language(monkeypatch):
    """A JSON string's loop reads its quote and backslash last: its byte edges are disjoint but out
    of order, kept sorted once (no `pieces` cut at each expansion), and the rows read the same."""
    quote, esc, loop = 1, 2, 0
    trans = [
        [
            (0x20, 0x21, loop),
            (0x23, 0x5B, loop),
            (0x5D, 0x10FFFF, loop),
            (0x5C, 0x5C, esc),
            (0x22, 0x22, quote),
        ],
        [],
        [(0x6E, 0x6E, loop)],
    ]
    cut = []
    monkeypatch.setattr(lazy_dfa, "pieces", lambda ev: cut.append(ev) or pieces(ev))
    lazy = LazyByteDFA(trans, [[], [], []], 0, 1)
    lazy.ensure(lazy.initial)
    assert cut == []  # read as they stand, once sorted
    d = lazy.as_byte_dfa()
    for text in ('"', 'ab"', '\\n"', 'é漢"', '😀"'):
        assert d.accepts(text.encode()), text
    for text in ("", "a", '\\x"', '"a', '\x01"'):
        assert not d.accepts(text.encode()), text


def test_a_row_writes_each_piece_over_its_classes_and_refuses_a_split_class():
    cuts = ClassCuts.of_edges([[(0x61, 0x7A, 1)], [(0x30, 0x39, 0)]])
    row = array("i", [-1] * cuts.n_classes)
    cuts.write_row(memoryview(row), 0, [(0x30, 0x39, 7), (0x61, 0x7A, 8)])
    by_byte = [row[c] for c in cuts.byte_class.tolist()]
    assert by_byte == [7 if 0x30 <= b <= 0x39 else 8 if 0x61 <= b <= 0x7A else -1 for b in range(256)]
    with pytest.raises(AssertionError, match="splits a byte class"):
        cuts.write_row(memoryview(row), 0, [(0x61, 0x62, 9)])


def test_grouped_pieces_are_the_overlay_of_equal_or_disjoint_ranges():
    rng = random.Random(5)
    for _ in range(500):
        spans = sorted({(lo, lo + rng.randint(0, 3)) for lo in rng.sample(range(0, 40, 4), 4)})
        edges = sorted((lo, hi, rng.randint(0, 3)) for lo, hi in spans for _ in range(rng.randint(1, 3)))
        if rng.random() < 0.3:  # a range overlapping another partly: left to the overlay
            edges = sorted([*edges, (edges[0][0] + 1, edges[-1][1], 9)])
        got = grouped(edges)
        want = [(lo, hi, set(ts)) for lo, hi, ts in overlay(edges)]
        if got is None:
            assert any(a[1] >= b[0] and a[:2] != b[:2] for a, b in pairwise(edges)), edges
        else:
            assert [(lo, hi, t if isinstance(t, set) else {t}) for lo, hi, t in got] == want, edges


def test_overlay_gives_each_point_the_edges_covering_it():
    """`overlay` filters the edges begun only past the first one's end: every point still gets
    exactly the targets of the edges over it, pieces disjoint and in order."""
    rng = random.Random(11)
    for _ in range(400):
        edges = [
            (lo, lo + rng.randint(0, 12), rng.randint(0, 5))
            for lo in rng.choices(range(40), k=rng.randint(1, 9))
        ]
        pieces = list(overlay(edges))
        assert all(a[1] < b[0] for a, b in pairwise(pieces))
        for x in range(60):
            want = {t for lo, hi, t in edges if lo <= x <= hi}
            got = [ts for lo, hi, ts in pieces if lo <= x <= hi]
            assert (got[0] if got else set()) == want and len(got) <= 1, (edges, x)


def test_each_target_is_the_state_of_its_closed_nfa_set():
    """A target of one NFA state is made in the expansion itself (the state alone when it has no
    epsilon move, else its memoized closure): it is still the state of the closed set its byte
    leads to, and accepts exactly when that set holds the final state."""
    ws = rep(cls((0x20, 0x20)), 0, None)
    key = alt(lit('"ab"'), lit('"ac"'), lit('"b"'))
    node = seq(lit("{"), ws, opt(seq(key, ws, lit(":"), ws, lit("1"))), ws, lit("}"))
    trans, eps, start, final, _, _ = node_nfa(node)
    lazy = LazyByteDFA(trans, eps, start, final)
    lazy.expand_all()
    assert lazy.n_states > 10
    for d in range(lazy.n_states):
        s = lazy.state_set(d)
        assert bool(lazy.accepting_flags[d]) == (final in s)
        for b in range(128):
            nxt = {t for q in s for lo, hi, t in lazy.char_edges(q) if lo <= b <= hi}
            got = lazy.step(d, b)
            if not nxt:
                assert got == -1
            else:
                assert lazy.state_set(got) == tuple(sorted(set().union(*(lazy.closure_of(t) for t in nxt))))


def test_a_literal_is_expanded_to_its_end_in_one_call():
    """A state reading one byte to one state (a key's characters) is expanded with the states of its
    literal after it, up to the first that reads more than one byte, which waits to be read; the
    language is the same."""
    ws = rep(cls((0x20, 0x20)), 0, None)
    node = seq(lit('{"name":'), ws, alt(lit("1"), lit("2")), lit("}"))
    lazy = LazyByteDFA(*node_nfa(node))
    lazy.ensure(lazy.initial)
    walk = [lazy.initial]
    for b in b'{"name":':
        walk.append(int(lazy.table_buffer[lazy.row_index[walk[-1]], lazy.byte_class[b]]))
    flags = lazy.expanded_flags
    assert all(flags[d] for d in walk[:-1]) and not flags[walk[-1]]  # ':' leads to spaces or a digit
    dfa = lazy.as_byte_dfa()
    for text, ok in (
        (b'{"name":1}', True),
        (b'{"name":  2}', True),
        (b'{"name":3}', False),
        (b'{"nam":1}', False),
    ):
        assert dfa.accepts(text) == ok, text


def test_flags_and_rows_written_through_views_survive_growth():
    """Expansions write the expanded flags and row numbers through flat views of the per-state
    arrays; the arrays grow (64 states at first), the views with them: every state of a DFA of over a
    hundred states reads as expanded, with its own row, through the arrays the index reads."""
    words = [f"k{i:03d}-{i:03d}" for i in range(120)]  # a tail per word: its own states
    lazy = LazyByteDFA(*node_nfa(alt(*(lit(w) for w in words))))
    lazy.expand_all()
    n = lazy.n_states
    assert n > 100  # past the first two growths (64, 96)
    assert bool(lazy.expanded_flags[:n].all())
    rows = lazy.row_index[:n]
    assert rows.min() >= 0 and len(set(rows.tolist())) == n
    dfa = lazy.as_byte_dfa()
    assert all(dfa.accepts(w.encode()) for w in words) and not dfa.accepts(b"k120-120")


def test_states_that_only_pass_on_are_left_out_of_sets():
    """An NFA state with epsilon moves and no byte (a word's end before what follows) is left out
    of its set: sets that differ by such states alone are one DFA state, and a set that is one
    literal's character besides them reads one byte (a literal row, not a walk)."""
    lazy = LazyByteDFA(*node_nfa(alt(lit("xa"), lit("yb"))))

    def walk(word: str) -> int:
        d = lazy.initial
        for ch in word:
            d = lazy.step(d, ord(ch))
        return d

    assert walk("xa") == walk("yb") and lazy.as_byte_dfa().accepts(b"yb")
    lazy = LazyByteDFA(*node_nfa(seq(alt(lit("a"), lit("b")), lit("c"))))
    assert walk("a") == walk("b") and lazy.reads_one_byte(walk("a"))
    assert lazy.as_byte_dfa().accepts(b"bc") and not lazy.as_byte_dfa().accepts(b"b")


def test_pieces_give_each_point_the_edges_covering_it():
    """`pieces` cuts wide ranges apart from single points laid over them: every point gets exactly
    the targets of the edges over it (one as an int, several as a set), pieces disjoint and in order,
    whatever mix of points and ranges, repeated or not."""
    rng = random.Random(13)
    for _ in range(600):
        edges = sorted(
            (lo, lo + (0 if rng.random() < 0.6 else rng.randint(1, 12)), rng.randint(0, 5))
            for lo in rng.choices(range(40), k=rng.randint(2, 14))
        )
        got = pieces(rng.sample(edges, len(edges)))  # (a set's edges come in no order)
        assert all(a[1] < b[0] for a, b in pairwise(got)), edges
        # cut where `overlay` cuts, even where a byte adds no target: a lead byte's target is a
        # placeholder each piece's first byte resolves (see the next test)
        assert [(lo, hi) for lo, hi, _ in got] == [(lo, hi) for lo, hi, _ in overlay(edges)], edges
        for x in range(60):
            want = {t for lo, hi, t in edges if lo <= x <= hi}
            over = [t for lo, hi, t in got if lo <= x <= hi]
            assert len(over) <= 1, (edges, x)
            if over:
                t = over[0]
                assert (t if isinstance(t, set) else {t}) == want and (isinstance(t, int) == (len(want) == 1))
            else:
                assert not want, (edges, x)


def test_a_lead_byte_inside_a_wider_lead_range_keeps_its_own_character():
    """U+0375 (CD B5) is one character of the range U+0080..U+07FF (lead bytes C2..DF) and also a
    literal of its own: the lead byte CD's piece is cut from the range's though both lead inside a
    character, or its continuation would be the range's alone (idn-hostname's KERAIA rule was lost so)."""
    tree = alt(seq(cls((0x80, 0x7FF)), lit("a")), seq(lit("\u0375"), lit("b")))
    lazy = LazyByteDFA(*node_nfa(tree)).as_byte_dfa()
    for text, want in (
        ("\u0375b", True),
        ("\u0375a", True),
        ("\u0376a", True),
        ("\u0376b", False),
        ("\u0080b", False),
    ):
        assert lazy.accepts(text.encode()) == want, text
