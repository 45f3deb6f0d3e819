"""`fsm.Index` and `fsm.Matcher`: every spec kind compiles to an `Index` whose matchers are `Matcher`s
and honour one contract (allowed ids == bitmask bits, EOS exactly when accepting, copy/rollback,
forced tokens), on the real SmolLM2 vocabulary."""

from __future__ import annotations

import random

import pytest

import fsm
from fsm.grammar.index import GrammarIndex
from fsm.index import DfaIndex, LazyDfaIndex
from fsm.testing import accepts, check_matcher_contract, random_walk, tokens_of

FAR = "\U00040000"  # its UTF-8 lead byte 0xF1 is no SmolLM2 token: lazy rows would not be exact

TREE = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 4},
        "kids": {"type": "array", "items": {"$ref": "#"}, "maxItems": 3},
    },
    "required": ["name"],
    "additionalProperties": False,
}

# kind -> (spec, index class the compile strategy picks, a text the spec accepts)
SPECS = {
    "regex": (fsm.Regex(r"[a-z]+@[a-z]+\.(com|org)"), LazyDfaIndex, "ada@math.org"),
    "regex-eager": (fsm.Regex(f"x{FAR}y|a"), DfaIndex, "a"),  # lazy rows would not be exact
    "regex-big": (fsm.Regex(r"(?:[a-c]x){600}"), DfaIndex, "ax" * 600),  # made whole at compile
    "choice": (fsm.Choice(["yes", "no", "maybe"]), LazyDfaIndex, "maybe"),
    "json-lazy": (
        fsm.JsonSchema({"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}),
        LazyDfaIndex,
        '{"a":12}',
    ),
    "json-eager": (fsm.JsonSchema({"enum": ["a", FAR]}), DfaIndex, '"a"'),
    "json-pushdown": (fsm.JsonSchema(TREE), LazyDfaIndex, '{"name":"a","kids":[{"name":"b"}]}'),
    # recursive, and a byte no token spells alone: the pushdown rows would not be exact -> grammar
    "json-grammar": (
        fsm.JsonSchema({**TREE, "properties": {**TREE["properties"], "name": {"enum": ["a", FAR]}}}),
        GrammarIndex,
        '{"name":"a","kids":[{"name":"a"}]}',
    ),
    "grammar": (fsm.Grammar.builtin("arithmetic"), GrammarIndex, "1+(2*3)"),
}


@pytest.fixture(scope="module")
def indexes(vocab):
    return {kind: fsm.compile(spec, vocab, cache=False) for kind, (spec, _, _) in SPECS.items()}


@pytest.mark.parametrize("kind", sorted(SPECS))
def test_compile_returns_an_index_and_its_matcher_is_a_matcher(kind, indexes):
    index = indexes[kind]
    index.matcher().allowed_token_ids()  # a lazy index computes its first row here
    assert isinstance(index, fsm.Index)
    assert isinstance(index, SPECS[kind][1]), type(index).__name__
    assert isinstance(index.matcher(), fsm.Matcher)
    if kind != "json-pushdown":  # a pushdown automaton has no finite "all" to build
        assert index.build_all() is index
    assert index.n_rows > 0 and index.nbytes > 0


@pytest.mark.parametrize("kind", sorted(SPECS))
def test_matcher_contract_along_an_accepted_text(kind, indexes, tokenizer):
    index, text = indexes[kind], SPECS[kind][2]
    assert accepts(index, text, tokenizer)
    check_matcher_contract(index, tokens_of(index, text, tokenizer))


@pytest.mark.parametrize("kind", sorted(SPECS))
def test_matcher_contract_along_random_walks(kind, indexes):
    rng = random.Random(kind)
    for _ in range(5):
        walk = random_walk(indexes[kind], rng, max_tokens=40)
        check_matcher_contract(indexes[kind], walk.tokens)


def test_rejected_token_leaves_the_matcher_unchanged(indexes):
    m = indexes["grammar"].matcher()
    bad = int(next(t for t in range(indexes["grammar"].vocabulary.n_tokens) if not m.is_allowed(t)))
    with pytest.raises(fsm.TokenRejected):
        m.advance(bad)
    assert m.n_consumed == 0 and m.state == indexes["grammar"].initial_state


def test_spec_and_index_protocols_reject_other_objects():
    assert not isinstance("\\d+", fsm.Spec)
    assert not isinstance(fsm.Regex(r"\d"), fsm.Index)
