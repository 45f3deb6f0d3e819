"""`pattern` (decoded-string regex, search semantics) and `format` languages."""

from __future__ import annotations

import json
import random

import jsonschema
import pytest

from fsm.automata import Enc, lit, node_to_char_dfa, node_to_dfa, seq
from fsm.errors import UnsupportedSchema
from fsm.json.formats import FORMATS, format_node
from fsm.json.patterns import pattern_node
from fsm.testing import ecma_search, sample_char_dfa

PATTERNS = [
    r"^[a-z]+$",
    r"abc",
    r"^\d{3}-\d{4}$",
    r"^(\([0-9]{3}\))?[0-9]{3}-[0-9]{4}$",
    r"^[A-Z][a-z0-9A-Z]*$|^$",
    r"^\S+@\S+\.\S+$",
    r"[^\s]",
    r"^\w+(\s\w+)*$",
    r"^(?:\S+\s+){0,3}\S+$",
    r"^[^\"\\]*$",
    r"\.",
    r"^(?i:ab)c$",
    r"^[\u00e9-\u00ff]{2}$",
    r"^[^a-z]{1,3}$",
    r"\D\W",
    r"x{2,}y?",
    r"^.$",
    r"^\p",
    r"^é.$",
    r"^\D\W\s\S$",
    r"[^\d\w]",
]


@pytest.mark.parametrize(
    ("pattern", "yes", "no"),
    [
        (r"^\D$", ["\u07c0", "é", "a"], ["0", "9"]),
        (r"^\W$", ["é", "\u00a0", "-"], ["a", "_", "0"]),
        (r"^\w$", ["a", "Z", "_"], ["é", "\u0660"]),
        (r"^\d$", ["0"], ["\u07c0", "\u0660"]),
        (r"^\s$", ["\u00a0", "\ufeff", "\u2028", "\u2029", "\u2003", "\u3000", "\t"], ["\x1c", "\x85", "a"]),
        (r"^\S$", ["\x1c", "\x85", "a"], ["\u00a0", "\ufeff", " "]),
        (r"^[^\s]$", ["\x85"], ["\u2028"]),
    ],
)
def test_categories_read_as_ecma_262(pattern, yes, no):
    d = node_to_char_dfa(pattern_node(pattern))
    for s in yes:
        assert d.accepts(s) and ecma_search(pattern, s), (pattern, s)
    for s in no:
        assert not d.accepts(s) and not ecma_search(pattern, s), (pattern, s)


@pytest.mark.parametrize("pattern", PATTERNS)
def test_pattern_language_is_sound(pattern):
    try:
        node = pattern_node(pattern)
    except UnsupportedSchema as exc:
        assert exc.keyword == "pattern"
        return
    d = node_to_char_dfa(node)
    rnd = random.Random(pattern)
    seen = 0
    for _ in range(300):
        s = sample_char_dfa(d, rnd, max_len=40)
        if s is None:
            continue
        seen += 1
        # ECMA-262's reading: \d \w ASCII (\D \W every non-ASCII character), \s its Unicode spaces
        assert ecma_search(pattern, s), (pattern, s)
    assert seen > 0


def test_anchors_and_search_semantics():
    rx = node_to_char_dfa(pattern_node("b+c"))
    assert rx.accepts("abbcz") and not rx.accepts("ac")
    anchored = node_to_char_dfa(pattern_node("^b+c$"))
    assert anchored.accepts("bbc") and not anchored.accepts("abbc")
    alts = node_to_char_dfa(pattern_node("^a$|b$"))
    assert alts.accepts("a") and alts.accepts("xb") and not alts.accepts("ax")


@pytest.mark.parametrize(
    "pattern,what",
    [
        (r"(a)\1", "backreference"),
        (r"(?<=a)b", "lookbehind"),  # lookaheads are exact: test_lookaround.py
        (r"\bword", "anchor"),
        (r"a^b", "anchor"),
        (r"(?m)^a$", "(?m)"),
        (r"[", "parse"),
        (r"\p{Greek}", "parse"),  # general categories are read (issue 22); scripts are not
    ],
)
def test_unsupported_constructs_raise(pattern, what):
    with pytest.raises(UnsupportedSchema) as err:
        pattern_node(pattern)
    assert err.value.keyword == "pattern"


def test_encoded_pattern_handles_json_escapes():
    # a pattern over the decoded text: a quote, a backslash, a newline, and a non-ASCII letter
    node = seq(lit('"'), Enc(pattern_node(r'^a"\\\nb\u00e9$')), lit('"'))
    dfa = node_to_dfa(node)
    text = json.dumps('a"\\\nbé', ensure_ascii=False)
    assert dfa.accepts(text.encode())
    assert dfa.accepts(b'"a\\"\\\\\\u000ab\xc3\xa9"')  # \u000a is the same newline
    assert not dfa.accepts(b'"a\\"\\\\\\tb\xc3\xa9"')


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_format_samples_pass_the_format_checker(name):
    checker = jsonschema.Draft202012Validator.FORMAT_CHECKER
    d = node_to_char_dfa(format_node(name))
    rnd = random.Random(name)
    n = 0
    for _ in range(150):
        s = sample_char_dfa(d, rnd, max_len=120, stop=0.1)
        if s is None:
            continue
        n += 1
        if name in checker.checkers:
            assert checker.conforms(s, name), (name, s)
    assert n > 0


def test_format_examples():
    def ok(name, s):
        return node_to_char_dfa(format_node(name)).accepts(s)

    assert ok("date", "2024-02-29") and not ok("date", "2023-02-29") and not ok("date", "2023-04-31")
    assert ok("date-time", "2024-01-01T12:00:00Z") and not ok("date-time", "2024-01-01T12:00:00")
    assert ok("ipv4", "192.168.0.1") and not ok("ipv4", "256.1.1.1") and not ok("ipv4", "01.1.1.1")
    assert ok("ipv6", "::1") and ok("ipv6", "2001:db8::8a2e:370:7334") and not ok("ipv6", "1::2::3")
    assert ok("uuid", "123e4567-e89b-12d3-a456-426614174000") and not ok(
        "uuid", "123e4567e89b12d3a456426614174000"
    )
    assert ok("email", "a.b@example.com") and not ok("email", "a@")
    assert (
        ok("duration", "P1Y2M3DT4H5M6S")
        and ok("duration", "P2W")
        and not ok("duration", "P")
        and not ok("duration", "PT")
    )
    assert format_node("int32") is None  # annotations only
