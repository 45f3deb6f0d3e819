"""``format: regex`` in exact mode (`fsm.json.regex_format`): a regular subset of ECMA-262 patterns."""

from __future__ import annotations

import json
import random
import shutil
import subprocess

import pytest

import fsm
from fsm.automata import node_to_char_dfa, to_regex
from fsm.json.formats import format_node
from fsm.json.regex_format import regex_format
from fsm.testing import accepts, sample_char_dfa

VALID = [
    "",
    "a|",
    r"([abc])+\s+$",
    "(?<name>x)",
    "(?<=a+)b",
    "(?<!a)b",
    "(?=x)(?!y)z",
    "[]",
    "[^]",
    r"\cA",
    r"^\d{2,}-\w{1,3}?\.$",
    "a{3,12}",
    "[a-z0-9_-]",
    "[-a]",
    r"[\]\-\\]",
    r"\x41\u00e9\/",
    "((a)|(?:b|c))*",
    "é+",
]
INVALID = [  # the suite's invalid ones, and what the subset's rules exist for
    r"\a",
    "(?P<name>x)",
    "(?P<n>a)(?P=n)",
    "(?#comment)a",
    "(?i)abc",
    "(?ims)abc",
    "^(abc]",
    "a{3,2}",
    "[z-a]",
    "a**",
    "*a",
    "(?=a)*",
    "a)",
    "(a",
    "[a",
    "a{",
    "}",
    "(?<a>x)(?<a>y)",
    r"\1",
]


@pytest.fixture(scope="module")
def dfa():
    return node_to_char_dfa(regex_format())


@pytest.mark.parametrize("text", VALID)
def test_valid_patterns_are_in_the_subset(dfa, text):
    assert dfa.accepts(text)


@pytest.mark.parametrize("text", INVALID)
def test_invalid_patterns_are_rejected(dfa, text):
    assert not dfa.accepts(text)


def test_format_node_reads_regex_as_the_subset_in_exact_mode_only(dfa):
    assert format_node("regex", rfc=True) == regex_format()
    assert not node_to_char_dfa(format_node("regex")).accepts("a+")  # generation: literal text


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node for the ECMA-262 reference")
def test_every_sampled_pattern_is_valid_ecma_262_with_and_without_u(dfa):
    rnd = random.Random(7)
    samples = {s for s in (sample_char_dfa(dfa, rnd, max_len=30, stop=0.1) for _ in range(800)) if s}
    script = (
        "const xs = JSON.parse(require('fs').readFileSync(0, 'utf8')); const bad = [];"
        "for (const x of xs) for (const f of ['', 'u']) { try { new RegExp(x, f) } catch (e) { bad.push([x, f]) } }"
        "console.log(JSON.stringify(bad));"
    )
    out = subprocess.run(
        ["node", "-e", script], input=json.dumps(sorted(samples)), capture_output=True, text=True, check=True
    )
    assert len(samples) > 300 and json.loads(out.stdout) == []


def test_a_schema_asserting_regex_compiles_and_checks(vocab, tokenizer):
    schema = {"type": "array", "items": {"type": "string", "format": "regex"}}
    index = fsm.compile(fsm.JsonSchema(schema, exact=True, assert_format=True), vocab, cache=False)
    assert accepts(index, json.dumps([r"^[a-z]+\d*$", "(?<y>\\d{4})"], separators=(",", ":")), tokenizer)
    assert not accepts(index, json.dumps(["^(abc]"]), tokenizer)


def test_the_grammar_path_reads_regex_and_idn_formats_as_their_text_subsets():
    # grammar terminals are regex text: the exact automata have none of useful size
    for name in ("regex", "idn-hostname", "idn-email"):
        node = format_node(name, rfc=True, text=True)
        assert len(to_regex(node)) < 20_000, name
    schema = {"type": "object", "properties": {"r": {"format": "regex"}, "h": {"format": "idn-hostname"}}}
    grammar = fsm.JsonSchema(schema, exact=True, assert_format=True).to_grammar()
    assert "start" in grammar
