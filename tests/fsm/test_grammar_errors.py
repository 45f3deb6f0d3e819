"""Grammars that cannot be honoured raise `fsm.GrammarError` naming the rule or terminal and its line."""

from __future__ import annotations

import pytest

import fsm

BYTES = fsm.Vocabulary([bytes([i]) for i in range(256)] + [None], eos_token_ids=[256])

CASES = {
    "grammar syntax": ('start: "a" |\n  ) b', r"line 2"),
    "undefined rule": ('start: "a" other\n', r"other.*line 1|line 1.*other"),
    "reduce/reduce": ('start: a | b\na: "x"\nb: "x"\n', r"LALR.*'a' \(line 2\) and 'b' \(line 3\)"),
    "lookbehind": ('start: STR\nSTR: /"(?<!x)a"/\n', r"terminal STR \(line 2\).*lookaround"),
    "lookahead": ("start: A\nA: /a(?=b)/\n", r"terminal A \(line 2\).*lookaround"),
    "backreference": ("start: A\nA: /(a)\\1/\n", r"terminal A \(line 2\).*backreference"),
    "anchor": ("start: A\nA: /^a/\n", r"terminal A \(line 2\).*anchor"),
    "empty match": ("start: A\nA: /a*/\n", r"terminal A \(line 2\).*empty string"),
    "first alternative wins": ("start: A+\nA: /a|ab/\n", r"terminal A \(line 2\).*matches 'a', not 'ab'"),
    "shadowed terminal": (
        'start: (A | B | C)+\nA.2: /[a-c]+/\nB: /[a-z]+/\nC: "abc" | "xyz"\n',
        r"terminal C \(line 4\) can never be lexed.*A, B",
    ),
    "unseparable neighbours": ("start: NAME NAME\nNAME: /[a-z]+/\n", r"NAME .*can follow NAME.*separator"),
    "unproductive rule": ('start: "a" | "b" loop\nloop: "c" loop\n', r"rule 'loop' \(line 2\).*finite"),
    "declared terminal": ('start: "a" INDENT\n%declare INDENT\n', r"INDENT.*no pattern"),
    "ignore overlaps a terminal": ("start: X+\nX: / +x/\n%ignore / +/\n", r"%ignore.*X|X.*%ignore"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_grammar_raises_grammar_error(case):
    text, pattern = CASES[case]
    with pytest.raises(fsm.GrammarError, match=pattern):
        fsm.compile(fsm.Grammar(text), BYTES, cache=False)


def test_grammar_error_is_a_spec_error():
    with pytest.raises(fsm.SpecError):
        fsm.compile(fsm.Grammar("start: A\nA: /a(?=b)/"), BYTES, cache=False)


def test_bad_arguments():
    with pytest.raises(fsm.GrammarError, match="lark text"):
        fsm.Grammar(42)
    with pytest.raises(fsm.GrammarError, match="max_ignore"):
        fsm.Grammar('start: "a"', max_ignore=0)
    with pytest.raises(fsm.GrammarError, match="nope"):
        fsm.compile(fsm.Grammar('start: "a"', start="nope"), BYTES, cache=False)


def test_lark_common_escaped_string_is_supported():
    # its lookbehind is replaced by an equivalent lookaround-free pattern
    g = fsm.Grammar("start: ESCAPED_STRING\n%import common.ESCAPED_STRING")
    m = fsm.compile(g, BYTES, cache=False).matcher()
    for b in b'"a\\"b"':
        m.advance(b)
    assert m.is_accepting() and not m.is_allowed(ord('"'))


def test_big_grammar_lalr_build_is_bounded_in_time():
    """lark's LALR construction runs in a forked child: over the budget it is SpecTooComplex, not a hang."""
    from fsm.errors import SpecTooComplex
    from fsm.grammar.lark import load_lark
    from fsm.grammar.lark_fork import load_lark_bounded

    # 120 rules, one alternative a line: over the 300 lines that send the build to a child, yet seconds
    # to build (lark's LALR build grows ~cubically: 400 such rules take a minute and a half).
    rules = [f'r{i}: "k{i}" r{i + 1}\n  | "v{i}"\n  | r{i + 1} "x{i}"' for i in range(120)] + ['r120: "end"']
    text = "start: r0\n" + "\n".join(rules) + "\n"
    with pytest.raises(SpecTooComplex) as err:
        load_lark_bounded(text, seconds=0.01)
    assert err.value.budget == "max_seconds"
    g = load_lark_bounded(text, seconds=120)
    ref = load_lark(text)
    assert [t.name for t in g.terminals] == [t.name for t in ref.terminals]
    assert len(g.table.action) == len(ref.table.action)
    with pytest.raises(fsm.GrammarError):  # errors found in the child come back as GrammarError
        load_lark_bounded(text.replace('r120: "end"', "r120: undefined_rule"), seconds=120)
