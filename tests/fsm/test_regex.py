"""Regex -> byte DFA: agreement with Python's `re` (ASCII classes), errors with positions."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fsm
from fsm.automata import utf8_sequences
from fsm.regex import regex_to_dfa

from .regex_cases import REGEXES

FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize("name", sorted(REGEXES))
def test_valid_strings_accepted(name):
    pattern = REGEXES[name]
    dfa = regex_to_dfa(pattern)

    @FAST
    @given(st.from_regex(re.compile(pattern, re.ASCII), fullmatch=True))
    def check(s):
        assert dfa.accepts(s.encode("utf-8")), s

    check()


@pytest.mark.parametrize("name", sorted(REGEXES))
def test_agrees_with_re_on_arbitrary_text(name):
    pattern = REGEXES[name]
    dfa = regex_to_dfa(pattern)
    compiled = re.compile(pattern, re.ASCII)

    @FAST
    @given(st.text(max_size=30) | st.from_regex(compiled, fullmatch=True).map(lambda s: s[:-1] + "x"))
    def check(s):
        assert dfa.accepts(s.encode("utf-8")) == bool(compiled.fullmatch(s)), s

    check()


def test_multibyte_and_negated_classes():
    dfa = regex_to_dfa(r"[^a]")
    for ch in ["b", "é", "日", "🎉", "\n"]:
        assert dfa.accepts(ch.encode())
    assert not dfa.accepts(b"a")
    assert not dfa.accepts(b"\xed\xa0\x80")  # a UTF-8-encoded surrogate is never valid
    assert not dfa.accepts(b"\xc3")  # half a character


@given(st.integers(0, 0x10FFFF), st.integers(0, 0x10FFFF))
@settings(max_examples=200, deadline=None)
def test_utf8_sequences_cover_exactly(a, b):
    lo, hi = min(a, b), max(a, b)
    hi = min(hi, lo + 3000)
    seqs = utf8_sequences(lo, hi)
    for cp in {lo, hi, (lo + hi) // 2}:
        if 0xD800 <= cp <= 0xDFFF:
            continue
        enc = chr(cp).encode("utf-8", "surrogatepass")
        hits = [
            s
            for s in seqs
            if len(s) == len(enc) and all(r[0] <= x <= r[1] for r, x in zip(s, enc, strict=True))
        ]
        assert len(hits) == 1


@pytest.mark.parametrize(
    "pattern, fragment",
    [
        (r"(a)\1", "backreference"),
        (r"a(?=b)", "lookaround"),
        (r"a(?!b)", "negative lookaround"),
        (r"(?<=a)b", "lookaround"),
        (r"(a)?(?(1)b|c)", "conditional"),
        (r"^abc$", "anchor"),
        (r"a[", "unterminated"),
        (r"a{2,1}", "min repeat greater than max"),
        (r"\p{L}", "bad escape"),
        (r"c{2}+", "possessive"),
        (r"(?>ab)c", "atomic group"),
    ],
)
def test_unsupported_syntax_raises_regex_error(pattern, fragment):
    with pytest.raises(fsm.RegexError, match=fragment) as info:
        regex_to_dfa(pattern)
    assert isinstance(info.value, fsm.SpecError)


def test_error_names_position():
    with pytest.raises(fsm.RegexError, match="position 4"):
        regex_to_dfa(r"abcd(?=x)")


def test_empty_language_is_an_error():
    with pytest.raises(fsm.RegexError, match="no string"):
        regex_to_dfa(r"[^\s\S]")


def test_state_budget():
    with pytest.raises(fsm.SpecTooComplex) as info:
        regex_to_dfa(r"[a-z]{1,300}", fsm.Limits(max_states=50))
    assert info.value.budget == "max_states"


def test_minimized_and_live():
    dfa = regex_to_dfa(r"(ab|ab)c|abc")
    assert dfa.n_states == 4
    assert dfa.accepts(b"abc") and not dfa.accepts(b"ab")
