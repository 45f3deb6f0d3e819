"""The spec algebra on the real SmolLM2 vocabulary: `Sequence`, `Alternatives` and `Repeat` of regexes
agree with Python's `re` on the combined pattern; `Token` parts take only their special id; `Text`
keeps out its excluded strings; bad parts raise `fsm.CompositionError` naming the part."""

from __future__ import annotations

import random
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fsm
from fsm.testing import accepts, check_matcher_contract, random_walk, tokens_of

PATTERNS = [r"a+", r"ab|b", r"(ba)*", r"[ab]?c", r"b{2,3}"]
COMBINED = {  # spec -> the Python pattern of the same language
    "sequence": (lambda ps: fsm.Sequence(*map(fsm.Regex, ps)), lambda ps: "".join(f"(?:{p})" for p in ps)),
    "alternatives": (
        lambda ps: fsm.Alternatives(*map(fsm.Regex, ps)),
        lambda ps: "|".join(f"(?:{p})" for p in ps),
    ),
    "repeat": (
        lambda ps: fsm.Repeat(fsm.Regex(ps[0]), min=1, max=3, separator=fsm.Regex(ps[1])),
        lambda ps: f"(?:{ps[0]})(?:(?:{ps[1]})(?:{ps[0]})){{0,2}}",
    ),
    "repeat-unbounded": (
        lambda ps: fsm.Repeat(fsm.Regex(ps[0]), min=2, separator="-"),
        lambda ps: f"(?:{ps[0]})(?:-(?:{ps[0]})){{1,}}",
    ),
    "repeat-optional": (lambda ps: fsm.Repeat(fsm.Regex(ps[0]), max=2), lambda ps: f"(?:{ps[0]}){{0,2}}"),
}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(sorted(COMBINED)),
    st.lists(st.sampled_from(PATTERNS), min_size=2, max_size=3),
    st.lists(st.text("abc-", max_size=8), min_size=1, max_size=6),
)
def test_combinations_of_regexes_agree_with_python_re(vocab, tokenizer, kind, patterns, texts):
    make_spec, make_pattern = COMBINED[kind]
    index = fsm.compile(make_spec(patterns), vocab)
    pattern = re.compile(make_pattern(patterns))
    for text in texts:
        expected = pattern.fullmatch(text) is not None
        assert accepts(index, text, tokenizer) == expected, (kind, patterns, text)
        if expected:  # the greedy tokenization, whose tokens straddle parts more, too
            assert accepts(index, text), (kind, patterns, text)


@pytest.mark.parametrize("kind", sorted(COMBINED))
def test_random_walks_of_combinations_match_python_re(vocab, kind):
    make_spec, make_pattern = COMBINED[kind]
    patterns = [r"ab|b", r"c+"]
    index = fsm.compile(make_spec(patterns), vocab)
    pattern = re.compile(make_pattern(patterns))
    rng = random.Random(kind)
    for _ in range(20):
        walk = random_walk(index, rng, max_tokens=30)
        if walk.finished:
            assert pattern.fullmatch(walk.text), walk.text
            check_matcher_contract(index, walk.tokens)


def test_a_token_straddling_two_parts_is_allowed(vocab, tokenizer):
    index = fsm.compile(fsm.Sequence(fsm.Regex("[a-z]+"), fsm.Literal(" world")), vocab)
    ids = tokenizer.encode("hello world", add_special_tokens=False)
    assert len(ids) == 2  # "hello", " world": the second token starts the literal
    assert accepts(index, ids)
    assert accepts(index, tokens_of(index, "hello world"))


def test_a_token_part_accepts_only_its_special_id(vocab, tokenizer):
    start = fsm.Token("<|im_start|>", tokenizer)
    index = fsm.compile(fsm.Sequence("a", start, fsm.Regex("b+")), vocab)
    m = index.matcher()
    m.advance(tokenizer.convert_tokens_to_ids("a"))
    assert m.allowed_token_ids().tolist() == [start.token_id]
    assert not m.accepts_tokens(tokens_of(index, "<|im_start|>"))  # the text of the token is not it
    m.advance(start.token_id)
    assert not m.is_accepting() and m.accepts_tokens(tokens_of(index, "bb"))
    check_matcher_contract(
        index, [tokenizer.convert_tokens_to_ids("a"), start.token_id, *tokens_of(index, "b")]
    )


def test_text_keeps_its_excluded_strings_out_and_its_byte_budget(vocab, tokenizer):
    index = fsm.compile(fsm.Text(exclude=["STOP", "<x>"], max_bytes=12), vocab)
    assert accepts(index, "hello there", tokenizer)
    assert not accepts(index, "hello STOP", tokenizer)
    assert not accepts(index, "a<x>", tokenizer)
    assert not accepts(index, "thirteen char", tokenizer)
    rng = random.Random(3)
    for _ in range(10):
        walk = random_walk(index, rng, max_tokens=20)
        assert len(walk.data) <= 12 and b"STOP" not in walk.data and b"<x>" not in walk.data
        if walk.finished:
            walk.data.decode("utf-8")  # whole characters only


def test_tags_around_a_schema(vocab, tokenizer):
    schema = {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}
    index = fsm.compile(fsm.Tag("<a>", fsm.JsonSchema(schema), "</a>"), vocab)
    assert accepts(index, '<a>{"x":3}</a>', tokenizer)
    assert not accepts(index, '<a>{"x":"3"}</a>', tokenizer)
    assert not accepts(index, '<a>{"x":3}', tokenizer)
    check_matcher_contract(index, tokens_of(index, '<a>{"x":31}</a>', tokenizer))


def test_composed_specs_are_cached_by_fingerprint(vocab):
    a = fsm.Sequence("x", fsm.Regex("[0-9]+"))
    b = fsm.Sequence(fsm.Literal("x"), fsm.Regex("[0-9]+"))
    assert a.fingerprint == b.fingerprint
    assert fsm.compile(a, vocab) is fsm.compile(b, vocab)
    assert fsm.Sequence("y", fsm.Regex("[0-9]+")).fingerprint != a.fingerprint


@pytest.mark.parametrize(
    ("make", "names"),
    [
        (lambda tok: fsm.Alternatives(), "Alternatives()"),
        (lambda tok: fsm.Repeat(fsm.Regex("a"), min=2, max=1), "Repeat(Regex"),
        (lambda tok: fsm.Repeat("a", min=-1), "Repeat(Literal('a'))"),
        (lambda tok: fsm.Triggered([fsm.Tag("<a>", fsm.Text(), "</a>")], triggers=["<", "<a"]), "prefix"),
        (lambda tok: fsm.Triggered([fsm.Tag("<a>", fsm.Text(), "</a>")], triggers=["<b>"]), "tag 0"),
        (lambda tok: fsm.Triggered([]), "Triggered"),
        (
            lambda tok: fsm.Triggered([fsm.Tag("<a>", fsm.Text(), "</a>")], min_calls=3, max_calls=1),
            "min_calls",
        ),
        (lambda tok: fsm.Token("hello world", tok), "Token('hello world')"),
        (lambda tok: fsm.Token(""), "the text is empty"),
        (lambda tok: fsm.Sequence("a", 3), "Sequence part 1"),
        (lambda tok: fsm.Text(exclude=[""]), "Text"),
    ],
)
def test_bad_parts_raise_a_composition_error_naming_the_part(tokenizer, make, names):
    with pytest.raises(fsm.CompositionError, match=re.escape(names)) as e:
        make(tokenizer)
    assert isinstance(e.value, fsm.SpecError)


@pytest.mark.parametrize(
    ("spec", "names"),
    [
        (lambda tok: fsm.Sequence("a", fsm.Token(tok.eos_token_id)), "EOS"),
        (lambda tok: fsm.Sequence("a", fsm.Token(tok.convert_tokens_to_ids("a"))), "text token"),
        (lambda tok: fsm.Sequence("a", fsm.Token(10**7)), "outside the vocabulary"),
        (lambda tok: fsm.Sequence("a", fsm.Token("<|no such token|>")), "no special token of the vocabulary"),
        (lambda tok: fsm.Sequence("a", fsm.Token(tok.eos_token)), "EOS"),  # by text, via the vocabulary
    ],
)
def test_parts_that_cannot_be_built_raise_at_compile(vocab, tokenizer, spec, names):
    with pytest.raises(fsm.CompositionError, match=names):
        index = fsm.compile(spec(tokenizer), vocab, cache=False)
        index.matcher().allowed_token_ids()
