"""Lexing exactly as lark does: differential tests against lark's LALR parser on tricky grammars.

A byte-level vocabulary (every byte is a token) makes the matcher decide on texts byte by byte, so
hypothesis can throw arbitrary texts at it: whatever the matcher accepts, lark must accept
(soundness); where the grammar leaves no room for lark's backtracking or Unicode classes, the two
must agree exactly (completeness).
"""

from __future__ import annotations

import lark
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fsm
from fsm.grammar import builtin as grammars

DIFF = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

BYTES = fsm.Vocabulary([bytes([i]) for i in range(256)] + [None], eos_token_ids=[256])

GRAMMARS = {
    # keywords vs NAME (lark re-types a NAME that spells a keyword), imported common terminals
    "keywords": (
        r"""
        start: stmt+
        stmt: "let" NAME "=" expr ";" | "print" expr ";" | "if" expr "then" stmt
        expr: NAME | NUMBER | ESCAPED_STRING | expr "+" expr | "(" expr ")"
        NAME: /[a-z_][a-z0-9_]*/
        %import common.NUMBER
        %import common.ESCAPED_STRING
        %import common.WS
        %ignore WS
        """,
        [
            "let",
            "print",
            "if",
            "then",
            "x",
            "letter",
            "iffy",
            "_1",
            "=",
            ";",
            "+",
            "(",
            ")",
            " ",
            "\n",
            "12",
            "1.5",
            "e3",
            '"',
            '\\"',
            "a b",
            '"s"',
            "let x = 1;",
            'print "hi";',
            "print a+b;",
        ],
        True,
    ),
    # where NAME and a keyword may both come, lark re-types a NAME that spells the keyword
    "reserved": (
        r"""
        start: NAME+ "end"
        NAME: /[a-z]+/
        %ignore " "
        """,
        ["a", "b", "end", "ending", " ", "en", "d", "a end"],
        True,
    ),
    # terminal priorities decide between overlapping regexes
    "priorities": (
        r"""
        start: (A | B | C)+
        A.2: /[a-c]+/
        B: /[a-z]+/
        C.3: "xyz" | "ab"
        %ignore " "
        """,
        ["a", "b", "ab", "abc", "x", "xyz", "z", "d", " "],
        True,
    ),
    # two ignored comment styles beside whitespace; C_COMMENT uses a lazy quantifier
    "comments": (
        r"""
        start: item ("," item)*
        item: CNAME | SIGNED_NUMBER | "[" [item ("," item)*] "]"
        %import common.CNAME
        %import common.SIGNED_NUMBER
        %import common.WS
        %import common.C_COMMENT
        %import common.CPP_COMMENT
        %ignore WS
        %ignore C_COMMENT
        %ignore CPP_COMMENT
        """,
        ["a", "b1", ",", "[", "]", "/*", "*/", "*", "/", "//", "\n", " ", "-", "1", ".5", "e", "x"],
        True,
    ),
    # no %ignore, an empty alternative, a newline terminal
    "csv": (
        r"""
        start: row+
        row: field ("," field)* _NL
        field: TEXT | QUOTED |
        TEXT: /[^,"\n]+/
        QUOTED: /"([^"]|"")*"/
        _NL: /\n/
        """,
        ["a", " ", ",", '"', '""', "\n", "x y", "é"],
        True,
    ),
    # case-insensitive keyword next to a case-sensitive NAME; an operator regex with overlaps
    "operators": (
        r"""
        start: "select"i NAME (OP NAME)* ["<" NAME]
        NAME: /[a-z]+/
        OP: "<=" | "<>" | "=" | ">"
        %ignore " "
        """,
        ["select", "SELECT", "Select", "a", "selectx", "<", "=", ">", " ", "b"],
        True,
    ),
    # one token type per context: INT and NUMBER overlap, a literal key overlaps STRING
    "contextual": (
        r"""
        start: "i" INT | "n" NUMBER | "{" KEY ":" STRING "}"
        INT: /[0-9]+/
        NUMBER: /[0-9]+(\.[0-9]+)?/
        KEY: "\"name\""
        STRING: /"[a-z]*"/
        """,
        ["i", "n", "1", "2", ".", "5", "{", "}", ":", '"name"', '"', "name", "x", "i1", "n2.5", '{"name":'],
        True,
    ),
    # Python's re treats non-ASCII letters as \w: such bytes are refused while \w terminals are live
    "unicode": (
        r"""
        start: (WORD | SYM | DIGITS)+
        WORD: /\w+/
        DIGITS: /\d+x/
        SYM: /[^\w\s]/
        %ignore /\s+/
        """,
        ["a", "1", "x", "é", "9x", " ", "+", "!", "\x1c", "ab1", "_"],
        False,
    ),
    "json": (
        grammars.load("json"),
        [
            "{",
            "}",
            "[",
            "]",
            ",",
            ":",
            '"a"',
            '"',
            "a",
            "\\",
            "u",
            "00e9",
            "é",
            "1",
            "0",
            "-",
            ".",
            "e",
            "+",
            "true",
            "tru",
            "null",
            " ",
            "\n",
            "12",
        ],
        True,
    ),
    "arithmetic": (
        grammars.load("arithmetic"),
        [
            "1",
            "2.5",
            ".5",
            "e3",
            "x",
            "sin",
            "(",
            ")",
            ",",
            "+",
            "-",
            "*",
            "/",
            "^",
            " ",
            "E",
            "_a1",
            "1.",
            "e",
        ],
        True,
    ),
}


# Sentences of each grammar: both must accept them, and they seed the generated texts.
SENTENCES = {
    "keywords": ["let x = 1;", 'print "a\\"b" + (y);', "if x then print 1.5e3;\nlet letter=2;"],
    "reserved": ["a end", "a ending end", "b a end"],
    "priorities": ["abc", "xyz ab", "abcd a"],
    "comments": ["a, /* x */ b", "[a, [1, -2.5]] // c", "x /**/ , y"],
    "csv": ["a,b\n", '"x,""y""",\n,\n'],
    "operators": ["select a", "SELECT a <= b <> c", "selectx < y"],
    "contextual": ["i12", "n1.5", '{"name":"abc"}'],
    "unicode": ["cafe + 12x", "a_1 ! b"],
    "json": ['{"a": [1, true, null]}', '"\\u00e9"', "-0.5e3"],
    "arithmetic": ["1 + 2 * (3 - x)", "-sin(x)^2 / .5", "f()"],
}


@pytest.fixture(scope="module")
def compiled():
    # a large %ignore budget: these tests compare lexing, the budget has its own test
    return {
        name: (
            fsm.compile(fsm.Grammar(text, max_ignore=512), BYTES, cache=False),
            lark.Lark(text, parser="lalr"),
        )
        for name, (text, _, _) in GRAMMARS.items()
    }


def matcher_accepts(index, data: bytes) -> bool:
    m = index.matcher()
    for b in data:
        if not m.is_allowed(b):
            return False
        m.advance(b)
    return m.is_accepting()


def lark_accepts(parser, text: str) -> bool:
    try:
        parser.parse(text)
    except lark.exceptions.LarkError:
        return False
    return True


@pytest.mark.parametrize("name", sorted(GRAMMARS))
def test_sentences_accepted_by_both(name, compiled):
    index, parser = compiled[name]
    for text in SENTENCES[name]:
        assert lark_accepts(parser, text), text
        assert matcher_accepts(index, text.encode("utf-8")), text


@pytest.mark.parametrize("name", sorted(GRAMMARS))
def test_agrees_with_lark(name, compiled):
    index, parser = compiled[name]
    _, fragments, exact = GRAMMARS[name]
    pieces = st.sampled_from(fragments) | st.sampled_from(SENTENCES[name])

    @DIFF
    @given(st.lists(pieces, min_size=1, max_size=8).map("".join))
    def check(text):
        ours = matcher_accepts(index, text.encode("utf-8"))
        theirs = lark_accepts(parser, text)
        if ours:
            assert theirs, f"matcher accepts {text!r}, lark rejects it"
        elif exact:
            assert not theirs, f"lark accepts {text!r}, the matcher rejects it"

    check()


def test_unicode_classes_are_conservative(compiled):
    index, parser = compiled["unicode"]
    assert lark_accepts(parser, "caf\u00e9") and not matcher_accepts(index, "caf\u00e9".encode())
    assert matcher_accepts(index, b"cafe + 12x")


def test_lark_contextual_splits_are_followed(compiled):
    # lark's contextual lexer: at the start only "select" may come, so "selectx" is SELECT + NAME
    index, parser = compiled["operators"]
    assert lark_accepts(parser, "selectx") and matcher_accepts(index, b"selectx")
    # only NAME may follow "let", so lark lexes "let" there as a NAME
    index, parser = compiled["keywords"]
    assert lark_accepts(parser, "let let = 1;") and matcher_accepts(index, b"let let = 1;")
    # where both may come, a NAME that spells the keyword is re-typed: it ends the sentence
    index, parser = compiled["reserved"]
    assert matcher_accepts(index, b"a ending end") and matcher_accepts(index, b"a b end")
    assert not lark_accepts(parser, "a end b end") and not matcher_accepts(index, b"a end b end")
    # INT and NUMBER overlap but are never allowed together
    index, _ = compiled["contextual"]
    assert (
        matcher_accepts(index, b"i12")
        and matcher_accepts(index, b"n1.5")
        and not matcher_accepts(index, b"i1.5")
    )
    assert matcher_accepts(index, b'{"name":"abc"}') and not matcher_accepts(index, b'{"nam":"abc"}')


def test_lazy_comment_ends_at_first_close(compiled):
    index, parser = compiled["comments"]
    assert matcher_accepts(index, b"a /* x */ , b")
    assert not lark_accepts(parser, "a /* x */ b */") and not matcher_accepts(index, b"a /* x */ b */")


@pytest.mark.parametrize("name", ["keywords", "comments", "unicode"])
def test_real_vocabulary_walks_are_sound(name, vocab):
    text = GRAMMARS[name][0]
    index = fsm.compile(fsm.Grammar(text), vocab, cache=False)
    parser = lark.Lark(text, parser="lalr")
    rng = np.random.default_rng(7)
    lengths = np.array([len(vocab.token_bytes(i) or b"") for i in range(vocab.size)])
    accepted = 0
    for _ in range(12):
        m = index.matcher()
        out = []
        for step in range(30):
            allowed = m.allowed_token_ids()
            assert len(allowed), f"dead end after {vocab.decode(out)!r}"
            if m.is_accepting() and step > 10:
                break
            short = allowed[lengths[allowed] <= 2]
            t = int(rng.choice(short if len(short) and rng.random() < 0.6 else allowed))
            if t in vocab.eos_token_ids:
                break
            m.advance(t)
            out.append(t)
        if m.is_accepting():
            accepted += 1
            assert lark_accepts(parser, vocab.decode(out).decode("utf-8")), vocab.decode(out)
    assert accepted
