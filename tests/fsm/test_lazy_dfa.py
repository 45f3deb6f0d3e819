"""The lazy byte DFA's expansions (`fsm.automata.lazy_dfa`): whatever shortcut an expansion takes,
each state's row is the one its NFA state set gives, and the language is the automaton's."""

from __future__ import annotations

import random
import re

from fsm.automata import LazyByteDFA, cls, lit, node_nfa, rep, seq

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
