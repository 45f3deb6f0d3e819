"""Parts beyond byte DFAs, on the real SmolLM2 vocabulary: `fsm.Grammar` (Lark, LR parser) and
recursive JSON schemas (pushdown) inside `Sequence`/`Tag`/`Triggered`, with tokens that straddle
a part's end; `fsm.Token` given by the text of a special token (resolved through the vocabulary);
`fsm.Literal` text that is one special token in the vocabulary.

Grammar bodies are checked against lark itself (``lark.Lark(..., parser="lalr")``), recursive
bodies against jsonschema."""

from __future__ import annotations

import json
import random

import jsonschema
import lark
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import fsm
from fsm.testing import accepts, check_matcher_contract, random_walk, tokens_of

EXPR = r"""
start: sum
sum: sum "+" term | term
term: "(" sum ")" | NUMBER
NUMBER: /[0-9]+/
"""
TREE = {
    "$defs": {
        "node": {
            "type": "object",
            "properties": {
                "v": {"type": "integer", "minimum": 0, "maximum": 99},
                "kids": {"type": "array", "items": {"$ref": "#/$defs/node"}, "maxItems": 3},
            },
            "required": ["v"],
            "additionalProperties": False,
        }
    },
    "$ref": "#/$defs/node",
}
CALC, TREE_TAG = ("<calc>", "</calc>"), ("<tree>", "</tree>")
PARSER = lark.Lark(EXPR, parser="lalr")


def agent_spec(**opts) -> fsm.Triggered:
    return fsm.Triggered(
        [
            fsm.Tag(CALC[0], fsm.Grammar(EXPR), CALC[1]),
            fsm.Tag(TREE_TAG[0], fsm.JsonSchema(TREE), TREE_TAG[1]),
        ],
        **opts,
    )


@pytest.fixture(scope="module")
def agent(vocab):
    return fsm.compile(agent_spec(), vocab)


def split(text: str) -> tuple[list[str], list[tuple[str, str]]]:
    """Free-text segments and (tag, body) pairs; AssertionError where a tag is not closed."""
    texts, tags, pos = [], [], 0
    while True:
        hits = [(text.find(b, pos), b, e) for b, e in (CALC, TREE_TAG) if text.find(b, pos) >= 0]
        if not hits:
            texts.append(text[pos:])
            return texts, tags
        at, b, e = min(hits)
        texts.append(text[pos:at])
        close = text.find(e, at + len(b))
        assert close >= 0, f"tag not closed: {text[at:]!r}"
        tags.append((b, text[at + len(b) : close]))
        pos = close + len(e)


def check_body(tag: str, body: str) -> None:
    if tag == CALC[0]:
        PARSER.parse(body)  # raises on a text lark rejects
    else:
        jsonschema.validate(json.loads(body), TREE)


def walk_with_tags(index, tokenizer, rng: random.Random, max_tokens=160):
    """A random walk that opens a tag now and then (its begin's tokens), else takes random allowed
    tokens, preferring short ones inside a tag so bodies close: (token ids, finished)."""
    vocab = index.vocabulary
    short = [i for i in range(vocab.n_tokens) if (b := vocab.token_bytes(i)) and len(b) <= 2]
    short_set = set(short)
    m, out = index.matcher(), []
    while len(out) < max_tokens:
        text = vocab.decode(out).decode("utf-8", "replace")
        in_tag = any(text.rfind(b) > text.rfind(e) for b, e in (CALC, TREE_TAG))
        if not in_tag and m.is_accepting():
            r = rng.random()
            if r < 0.1:
                return out, True
            if r < 0.3:
                for t in tokenizer.encode(rng.choice((CALC, TREE_TAG))[0], add_special_tokens=False):
                    m.advance(t)
                    out.append(t)
                continue
        allowed = [int(t) for t in m.allowed_token_ids() if int(t) not in vocab.eos_token_ids]
        if not allowed:
            assert m.is_accepting()
            return out, True
        pool = [t for t in allowed if t in short_set] if in_tag and rng.random() < 0.9 else allowed
        t = rng.choice(pool or allowed)
        m.advance(t)
        out.append(t)
    return out, False


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**31))
def test_walks_split_into_free_text_and_bodies_valid_for_lark_and_the_recursive_schema(
    agent, tokenizer, seed
):
    ids, finished = walk_with_tags(agent, tokenizer, random.Random(seed))
    if not finished:
        return  # cut by the token cap: only completed outputs split
    texts, tags = split(agent.vocabulary.decode(ids).decode("utf-8"))
    assert all(b not in t for t in texts for b in (CALC[0], TREE_TAG[0]))
    for tag, body in tags:
        check_body(tag, body)


def test_walks_do_open_both_kinds_of_tags(agent, tokenizer):
    """The property above is not vacuous: finished walks hold valid bodies of both kinds."""
    kinds = set()
    for seed in range(16):
        ids, finished = walk_with_tags(agent, tokenizer, random.Random(seed))
        if finished:
            for tag, body in split(agent.vocabulary.decode(ids).decode())[1]:
                check_body(tag, body)
                kinds.add(tag)
    assert kinds == {CALC[0], TREE_TAG[0]}


def expr_text():
    leaf = st.integers(0, 10**6).map(str)
    return st.recursive(
        leaf,
        lambda inner: st.one_of(
            st.tuples(inner, inner).map(lambda p: f"{p[0]}+{p[1]}"), inner.map(lambda e: f"({e})")
        ),
        max_leaves=6,
    )


trees = st.recursive(  # keys in the schema's order, as the part requires
    st.integers(0, 99).map(lambda v: {"v": v}),
    lambda kids: st.tuples(st.integers(0, 99), st.lists(kids, max_size=3)).map(
        lambda p: {"v": p[0], "kids": p[1]}
    ),
    max_leaves=8,
)
free = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=20).filter(
    lambda t: CALC[0] not in t and TREE_TAG[0] not in t
)
calls = st.one_of(
    expr_text().map(lambda e: CALC[0] + e + CALC[1]),
    trees.map(lambda t: TREE_TAG[0] + json.dumps(t, separators=(",", ":")) + TREE_TAG[1]),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(free, st.lists(st.tuples(calls, free), max_size=3))
def test_interleavings_with_grammar_and_recursive_bodies_are_accepted(agent, tokenizer, first, rest):
    text = first + "".join(c + t for c, t in rest)
    ids = tokenizer.encode(text, add_special_tokens=False)
    assume(agent.vocabulary.decode(ids) == text.encode())  # SmolLM2 cannot spell U+40000..U+BFFFF
    m = agent.matcher()
    assert m.accepts_tokens(ids), text
    for t in ids:
        m.advance(t)
    assert m.is_accepting(), text


@pytest.mark.parametrize(
    "text",
    [
        "<calc>1+</calc>",
        "<calc>(1))</calc>",
        "<calc>1</calc",
        '<tree>{"v":1,"kids":[{}]}</tree>',
        "<tree>{}</tree>",
    ],
)
def test_bodies_invalid_for_their_part_are_rejected(agent, tokenizer, text):
    assert not accepts(agent, "ok " + text, tokenizer)
    m = agent.matcher()
    ids = tokenizer.encode("ok " + text, add_special_tokens=False)
    if m.accepts_tokens(ids):  # a prefix of something valid: then the text cannot end there
        for t in ids:
            m.advance(t)
        assert not m.is_accepting()


def test_tokens_straddling_a_grammar_part_end_are_allowed(vocab, tokenizer):
    """One `))` token ends the expression (its last byte) and spells the literal after it."""
    spec = fsm.Sequence("f(", fsm.Grammar(EXPR), ")")
    index = fsm.compile(spec, vocab)
    pair = tokenizer.convert_tokens_to_ids("))")
    m = index.matcher()
    for t in tokenizer.encode("f((1+2", add_special_tokens=False):
        m.advance(t)
    assert m.is_allowed(pair)  # one token: the grammar's last byte and the literal's
    m.advance(pair)
    assert m.is_accepting()
    for text in ["f(1)", "f((1+2)+3)", "f(((4)))"]:
        ids = tokens_of(index, text, tokenizer)
        assert accepts(index, text, tokenizer) and accepts(index, text), text
        check_matcher_contract(index, ids)
    assert not accepts(index, "f(1+)", tokenizer)


def test_random_walks_of_a_grammar_between_literals_parse_with_lark(vocab):
    index = fsm.compile(fsm.Sequence("[", fsm.Grammar(EXPR), "]"), vocab)
    rng = random.Random(7)
    done = 0
    for _ in range(30):
        walk = random_walk(index, rng, max_tokens=30)
        if walk.finished:
            text = walk.data.decode()
            assert text[0] == "[" and text[-1] == "]"
            PARSER.parse(text[1:-1])
            done += 1
    assert done >= 5


def test_a_recursive_schema_part_follows_its_recursion(vocab, tokenizer):
    index = fsm.compile(fsm.Tag("<tree>", fsm.JsonSchema(TREE), "</tree>"), vocab)
    deep = {"v": 1, "kids": [{"v": 2, "kids": [{"v": 3, "kids": [{"v": 4}]}]}]}
    assert accepts(index, "<tree>" + json.dumps(deep, separators=(",", ":")) + "</tree>", tokenizer)
    assert not accepts(index, '<tree>{"v":1,"kids":[{"v":2,"kids":[{"v":300}]}]}</tree>', tokenizer)


def test_a_grammar_part_that_does_not_compile_raises_when_entered(vocab, tokenizer):
    index = fsm.compile(fsm.Triggered([fsm.Tag("<g>", fsm.Grammar("start: undefined_rule"), "</g>")]), vocab)
    m = index.matcher()
    for t in tokenizer.encode("fine so far", add_special_tokens=False):
        m.advance(t)  # the body compiles on first entry
    with pytest.raises(fsm.SpecError):
        for t in tokenizer.encode(" <g>x", add_special_tokens=False):
            m.advance(t)


# -- special tokens ----------------------------------------------------------------------------
def test_a_token_given_by_text_resolves_through_the_vocabulary(vocab, tokenizer):
    assert vocab.special_tokens["<|im_start|>"] == tokenizer.convert_tokens_to_ids("<|im_start|>")
    spec = fsm.Sequence(fsm.Token("<|im_start|>"), "assistant\n", fsm.Regex("[a-z ]+"))
    index = fsm.compile(spec, vocab)
    ids = tokenizer.encode("<|im_start|>assistant\nhello there", add_special_tokens=False)
    assert ids[0] == vocab.special_tokens["<|im_start|>"]
    assert accepts(index, ids)
    assert not accepts(index, "<|im_start|>assistant\nhi")  # its text spelled by text tokens
    assert (
        spec.fingerprint
        == fsm.Sequence(fsm.Token("<|im_start|>"), "assistant\n", fsm.Regex("[a-z ]+")).fingerprint
    )
    check_matcher_contract(index, ids)


def test_a_literal_that_is_one_special_token_takes_the_token_or_its_text(vocab, tokenizer):
    """`<file_sep>` is one special token in SmolLM2: the literal accepts it, and its text too (the same
    spec in a vocabulary where it is text)."""
    special = vocab.special_tokens["<file_sep>"]
    spec = fsm.Triggered([fsm.Tag("<file_sep>", fsm.Regex("[a-z]+"), "\n")], triggers=["<file_sep>"])
    index = fsm.compile(spec, vocab)
    as_token = tokenizer.encode("see <file_sep>main\n ok", add_special_tokens=False)
    assert special in as_token
    assert accepts(index, as_token)
    assert accepts(index, "see <file_sep>main\n ok")  # spelled by text tokens (greedy tokenization)
    assert not accepts(index, "see <file_sep>Main\n ok")
    m = index.matcher()
    for t in tokenizer.encode("text then", add_special_tokens=False):
        m.advance(t)
    assert m.is_allowed(special)  # the tag may open with the special token at a character boundary
    assert special not in fsm.compile(fsm.Text(), vocab).matcher().allowed_token_ids()
    check_matcher_contract(index, as_token)
