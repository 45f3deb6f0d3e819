"""Regex dialects: what PCRE and ECMA-262 patterns add to Python's ``re`` syntax, in `fsm.Regex` and
in JSON Schema ``pattern``; anchors at the ends of a full match; errors where an anchor could match
inside the text."""

from __future__ import annotations

import re
import unicodedata

import pytest

import fsm
from fsm.automata import node_to_char_dfa, to_python_syntax, unicode_property
from fsm.errors import UnsupportedSchema
from fsm.json.patterns import pattern_node
from fsm.json.schema import JsonSchema
from fsm.regex import regex_to_dfa
from fsm.testing import accepts

# pattern, full matches, non-matches
FULL_MATCH = [
    ("^abc$", ["abc"], ["abcd", "xabc", "abc\n"]),
    (r"\Aa+\Z", ["aa"], ["", "ab"]),
    ("^a|b$", ["a", "b"], ["ab", ""]),
    ("^(?:x|y)z$", ["xz", "yz"], ["z"]),
    (r"(?<year>\d{4})-(?P<month>\d\d)", ["2024-01"], ["2024-1"]),
    (r"\e\[0m", ["\x1b[0m"], ["e[0m"]),
    (r"\cJ\cm", ["\n\r"], ["cJcm"]),
    (r"\u{20BB7}\u{41}\x{42}", ["\U00020bb7AB"], ["u{41}"]),
    (r"\p{Lu}\p{Ll}+", ["Été", "Ab"], ["été", "AB"]),
    (r"[\p{L}\p{Nd}_]+", ["aé9_", "ж"], ["a-b", " "]),
    (r"\P{L}+", ["12 !"], ["a1"]),
    (r"\p{Letter}\p{gc=Decimal_Number}", ["x7"], ["77"]),
    (r"[^\p{N}]", ["a"], ["5", "٣"]),
]


@pytest.mark.parametrize(("pattern", "yes", "no"), FULL_MATCH, ids=[c[0] for c in FULL_MATCH])
def test_regex_spec_reads_pcre_and_ecma_syntax(pattern, yes, no):
    dfa = regex_to_dfa(pattern, extended=True)
    for text in yes:
        assert dfa.accepts(text.encode()), (pattern, text)
    for text in no:
        assert not dfa.accepts(text.encode()), (pattern, text)
    # the rewrite is Python syntax with the same meaning: Python's own engine agrees
    python = to_python_syntax(pattern)
    for text in yes + no:
        assert dfa.accepts(text.encode()) == bool(re.fullmatch(python, text, re.ASCII)), (pattern, text)


def test_anchored_regex_compiles_through_the_public_api(vocab, tokenizer):
    index = fsm.compile(fsm.Regex(r"^\d{3}-\d{4}$"), vocab, cache=False)
    assert accepts(index, "555-1234", tokenizer)
    assert not accepts(index, "555-12345", tokenizer)


@pytest.mark.parametrize(
    ("pattern", "fragment"),
    [
        ("a^b", "anchor at position 1"),
        ("a$b", "anchor at position 1"),
        ("(a^)", "anchor at position 2"),
        (r"ab\Zc", "anchor at position 2"),
        (r"a\bb", "word boundary"),
        (r"\p{Greek}", "Unicode property 'Greek' is not supported"),
        (r"\p{Script=Latin}", "general categories only"),
    ],
)
def test_anchors_inside_the_text_and_unknown_properties_raise_regex_error(pattern, fragment):
    with pytest.raises(fsm.RegexError, match=re.escape(fragment)):
        regex_to_dfa(pattern, extended=True)


def test_grammar_terminals_keep_python_syntax():
    """A lark terminal is run by Python's engine where the previous one ended: no rewriting, no anchors."""
    with pytest.raises(fsm.RegexError, match="anchor"):
        regex_to_dfa("^abc$")
    with pytest.raises(fsm.RegexError, match="bad escape"):
        regex_to_dfa(r"\e")


def test_json_pattern_is_an_ecma_search():
    for pattern, yes, no in [
        (r"\p{Lu}", ["xÉy"], ["abc"]),
        (r"^(?<k>[a-z]+)\u{3D}", ["key=1"], ["Key=1", "=1"]),
        (r"\cI$", ["a\t"], ["\ta"]),
        (r"^\P{Nd}*$", ["ab", ""], ["a1"]),
    ]:
        d = node_to_char_dfa(pattern_node(pattern))
        for text in yes:
            assert d.accepts(text), (pattern, text)
        for text in no:
            assert not d.accepts(text), (pattern, text)
    with pytest.raises(UnsupportedSchema, match="Greek"):
        pattern_node(r"\p{Greek}")


def test_pattern_properties_and_declared_names_read_the_same_dialect(vocab, tokenizer):
    schema = {
        "type": "object",
        "properties": {"Ab": {"type": "integer"}},
        "patternProperties": {r"^\p{Lu}": {"type": "integer"}},
        "additionalProperties": False,
    }
    index = fsm.compile(JsonSchema(schema), vocab, cache=False)
    assert accepts(index, '{"Ab":1,"Éa":2}', tokenizer)
    assert not accepts(index, '{"Ab":1,"éa":2}', tokenizer)
    assert not accepts(index, '{"Ab":"x"}', tokenizer)


def test_general_categories_come_from_unicodedata():
    for name, samples in [("Lu", "AÉЖ"), ("Nd", "09٣"), ("Zs", " \u3000"), ("P", "!«")]:
        ranges = unicode_property(name)
        for ch in samples:
            assert any(a <= ord(ch) <= b for a, b in ranges), (name, ch)
            assert unicodedata.category(ch).startswith(name)
        assert not any(a <= ord("a") <= b for a, b in ranges)
    assert unicode_property("Letter") == unicode_property("L")
