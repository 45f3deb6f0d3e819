"""Subsets without the states a counted repeat's copies repeat (`fsm.automata.copies`): random
patterns of nested counted repeats and loops over overlapping items, their reduced DFAs against a
reference that walks sets of positions (``re`` can backtrack for minutes on them) on random strings,
and the DFA of a label-list pattern staying small.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable

from hypothesis import given, settings
from hypothesis import strategies as st

from fsm.automata import Budget, node_to_char_dfa
from fsm.errors import SpecTooComplex
from fsm.json.patterns import pattern_node
from fsm.limits import Limits

# A reference that cannot backtrack: each pattern is built beside a function from the set of
# positions a piece may start at to the set it may end at. ``re`` itself backtracks exponentially on
# some nested counted repeats (a CI worker once sat > 10 minutes in one ``re.fullmatch``).
Ends = Callable[[str, set[int]], set[int]]


def _char(pred: Callable[[str], bool]) -> Ends:
    return lambda s, at: {i + 1 for i in at if i < len(s) and pred(s[i])}


def _seq(*fs: Ends) -> Ends:
    def run(s: str, at: set[int]) -> set[int]:
        for f in fs:
            at = f(s, at)
        return at

    return run


def _count(f: Ends, lo: int, hi: int | None) -> Ends:
    def run(s: str, at: set[int]) -> set[int]:
        for _ in range(lo):
            at = f(s, at)
        seen, frontier, k = set(at), set(at), lo
        # a position reached again after more rounds has fewer rounds left: nothing new beyond it
        while frontier and (hi is None or k < hi):
            frontier = f(s, frontier) - seen
            seen |= frontier
            k += 1
        return seen

    return run


_A, _B = _char(lambda c: c == "a"), _char(lambda c: c == "b")
_DOT = _char(lambda c: c == ".")
# (text, the part before what a count binds to, the part a count binds to): "ab*" is a then b*
ATOMS = st.sampled_from(
    [
        ("a", None, _A),
        ("b", None, _B),
        (".", None, _char(lambda c: True)),  # DOTALL
        ("[ab]", None, _char(lambda c: c in "ab")),
        ("ab", _A, _B),
        ("(?:a|ab)", None, lambda s, at: _A(s, at) | _seq(_A, _B)(s, at)),
        (r"\.", None, _DOT),
        ("[^.]", None, _char(lambda c: c != ".")),
    ]
)
COUNTS = st.sampled_from(
    [
        ("", 1, 1),
        ("?", 0, 1),
        ("*", 0, None),
        ("+", 1, None),
        ("{2}", 2, 2),
        ("{0,3}", 0, 3),
        ("{1,4}", 1, 4),
        ("{2,5}", 2, 5),
        ("{3,}", 3, None),
    ]
)


def _atom(atom, count) -> tuple[str, Ends]:
    (text, head, last), (suffix, lo, hi) = atom, count
    counted = _count(last, lo, hi)
    return text + suffix, (counted if head is None else _seq(head, counted))


def _group(items, count) -> tuple[str, Ends]:
    suffix, lo, hi = count
    return "(?:" + "".join(t for t, _ in items) + ")" + suffix, _count(_seq(*(f for _, f in items)), lo, hi)


def _either(a, b) -> tuple[str, Ends]:
    return f"(?:{a[0]}|{b[0]})", lambda s, at: a[1](s, at) | b[1](s, at)


def _patterns():
    return st.recursive(
        st.builds(_atom, ATOMS, COUNTS),
        lambda inner: st.one_of(
            st.builds(_group, st.lists(inner, min_size=1, max_size=3), COUNTS),
            st.builds(_either, inner, inner),
        ),
        max_leaves=5,
    )


def test_the_reference_agrees_with_re_where_re_is_quick():
    ab, either, dot = (
        ("ab", _A, _B),
        ("(?:a|ab)", None, lambda s, at: _A(s, at) | _seq(_A, _B)(s, at)),
        (r"\.", None, _DOT),
    )
    pieces = [
        [_atom(ab, ("{2,5}", 2, 5))],
        [_group([_atom(either, ("*", 0, None)), _atom(dot, ("?", 0, 1))], ("{1,4}", 1, 4))],
        [_either(_atom(ab, ("+", 1, None)), _atom(either, ("{3,}", 3, None))), _atom(dot, ("", 1, 1))],
    ]
    for parts in pieces:
        text, f = "".join(t for t, _ in parts), _seq(*(f for _, f in parts))
        for n in range(8):
            for chars in itertools.product("ab.", repeat=n):
                s = "".join(chars)
                assert (n in f(s, {0})) == (re.fullmatch(text, s) is not None), (text, s)


@settings(max_examples=300, deadline=None)
@given(
    parts=st.lists(_patterns(), min_size=1, max_size=3),
    texts=st.lists(st.text(alphabet="ab.c", max_size=10), min_size=20, max_size=20),
)
def test_reduced_subsets_keep_the_language(parts, texts):
    pattern, reference = "".join(t for t, _ in parts), _seq(*(f for _, f in parts))
    try:  # a wide wall-clock budget: CI's two workers must not turn a slow compile into a failure
        d = node_to_char_dfa(pattern_node(pattern, search=False), Budget(Limits(max_seconds=120)))
    except SpecTooComplex:  # over the state or memory budget: refused, never a wrong DFA
        return
    for s in texts:
        want = len(s) in reference(s, {0})
        got = d is not None and d.accepts(s)
        assert got == want, (pattern, s)


def test_a_list_of_labels_tracks_one_length():
    """``(.{1,63}\\.)+``: a dot may end a label or stay in it; one open length per DFA state."""
    d = node_to_char_dfa(pattern_node(r"^(.{1,63}\.)+[a-z]+$"))
    assert len(d) < 300
    assert d.accepts("a" * 63 + ".b") and not d.accepts("a" * 64 + ".b")
    assert d.accepts("a." * 40 + "." + "a" * 62 + ".x")


def test_a_copy_that_ends_inside_its_item_keeps_its_words():
    """``(a b*){0,3}`` after ``a?``: the first copy ends in ``b*``'s loop, which the state before the
    copies cannot read, so it is not dropped beside it (it was: "ab" and "abab" were rejected; a
    draw of the hypothesis test above found it)."""
    d = node_to_char_dfa(pattern_node("a?(?:a(?:b)*){0,3}", search=False))
    for n in range(7):
        for chars in itertools.product("ab", repeat=n):
            s = "".join(chars)
            assert d.accepts(s) == (re.fullmatch("a?(?:ab*){0,3}", s) is not None), s
