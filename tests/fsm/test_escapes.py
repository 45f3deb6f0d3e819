"""JSON string escapes (`fsm.automata.escapes`): the minimal DFA of a class's spellings."""

from __future__ import annotations

import itertools

import pytest

from fsm.automata.escapes import MAY_ESCAPE, _words, encoded_char, escape_dfa, escape_split

CLASSES = [
    ((0x00, 0x1F),),
    ((0x22, 0x22),),
    ((0x5C, 0x5C),),
    ((0x2F, 0x2F),),
    ((0x09, 0x0D),),  # the controls in \s
    ((0x00, 0x08), (0x0E, 0x1F), (0x22, 0x22), (0x5C, 0x5C)),  # those in \S
    MAY_ESCAPE,
]


def _spellings(ranges) -> set[str]:
    """Every spelling of one character of ``ranges``, from the language tree (the reference)."""
    return _words(encoded_char(ranges))


@pytest.mark.parametrize("ranges", CLASSES)
def test_escape_dfa_accepts_exactly_the_spellings(ranges):
    special = escape_split(ranges)[1]
    d = escape_dfa(special)
    words = _spellings(special)
    assert all(d.accepts(w) for w in words)
    # every string of up to 4 characters over the escapes' alphabet: none outside the spellings
    alphabet = sorted({ch for w in words for ch in w} | {"x", "0"})
    for n in range(1, 5):
        for chars in itertools.product(alphabet, repeat=n):
            s = "".join(chars)
            assert d.accepts(s) == (s in words), s
    for w in words:  # and the longer ones: each spelling with a character changed
        for i in range(len(w)):
            for ch in alphabet:
                s = w[:i] + ch + w[i + 1 :]
                assert d.accepts(s) == (s in words), s


def test_escape_dfa_is_small():
    # \S's controls, the quote and the backslash: 33 characters, up to 4 spellings each
    assert len(escape_dfa(((0x00, 0x08), (0x0E, 0x1F), (0x22, 0x22), (0x5C, 0x5C)))) <= 10


@pytest.mark.parametrize("n0, e", [(0, 0), (2, 1), (1000, 7)])
def test_the_escape_rows_are_the_table_renumbered(n0, e):
    from fsm.automata.escapes import _ANY_ESCAPE, _any_escape_at

    want = tuple(tuple((a, b, e if t < 0 else n0 + t) for a, b, t in row) for row in _ANY_ESCAPE)
    assert _any_escape_at(n0, e) == want
