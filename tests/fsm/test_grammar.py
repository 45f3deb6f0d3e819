"""fsm.Grammar on the real SmolLM2 vocabulary: the shipped grammars, soundness against lark's own
parser, completeness on canonically tokenized sentences, and the Matcher contract."""

from __future__ import annotations

import json

import lark
import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import fsm
from fsm.grammar import builtin as grammars
from fsm.grammar.index import GrammarMatcher
from fsm.index import pack_bitmask, unpack_bitmask
from fsm.testing import accepts

WALKS = settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

# Bytes that close structures: random walks pick tokens made of them now and then, so they end.
CLOSERS = {"json": b'"}]0 ', "arithmetic": b"1)", "sql": b"1) ;"}


@pytest.fixture(scope="module")
def indexes(vocab):
    return {name: fsm.compile(fsm.Grammar.builtin(name), vocab, cache=False) for name in grammars.names()}


@pytest.fixture(scope="module")
def larks():
    return {name: lark.Lark(grammars.load(name), parser="lalr") for name in grammars.names()}


@pytest.fixture(scope="module")
def closers(vocab):
    out = {}
    for name, chars in CLOSERS.items():
        ids = [
            i
            for i in range(vocab.n_tokens)
            if vocab.token_bytes(i) and set(vocab.token_bytes(i)) <= set(chars)
        ]
        out[name] = np.array(ids)
    return out


def random_walk(index, rng, closing: np.ndarray, max_tokens: int = 48):
    """Random tokens from the mask; later in the walk, closers and EOS are preferred so walks end."""
    m = index.matcher()
    vocab = index.vocabulary
    out = []
    for step in range(max_tokens):
        allowed = m.allowed_token_ids()
        assert len(allowed) > 0, f"a reachable state with no allowed token after {vocab.decode(out)!r}"
        if m.is_accepting() and rng.random() < step / max_tokens:
            t = vocab.eos_token_ids[0]
        else:
            pool = allowed
            if rng.random() < step / max_tokens:
                close = np.intersect1d(allowed, closing, assume_unique=True)
                if len(close):
                    pool = close
            t = int(rng.choice(pool))
        m.advance(t)
        if t in vocab.eos_token_ids:
            assert m.is_finished()
            return vocab.decode(out), True
        out.append(t)
    return vocab.decode(out), m.is_accepting()


def walk_text(index, tokenizer, text: str) -> bool:
    """Feed the canonical tokenization of ``text``; True when every token is allowed and it ends accepting."""
    ids = tokenizer.encode(text, add_special_tokens=False)
    # SmolLM2 has no token for some bytes (0xF1, 0xF2...): its tokenizer silently drops them.
    assert index.vocabulary.decode(ids) == text.encode("utf-8"), f"the tokenizer cannot spell {text!r}"
    return accepts(index, text, tokenizer)


@pytest.mark.parametrize("name", ["json", "arithmetic", "sql"])
def test_random_walks_are_sentences_lark_accepts(name, indexes, larks, closers):
    seen_accepting = []

    @WALKS
    @given(st.integers(0, 2**32 - 1))
    def check(seed):
        text, accepting = random_walk(indexes[name], np.random.default_rng(seed), closers[name])
        if accepting:
            s = text.decode("utf-8")
            larks[name].parse(s)  # raises if lark disagrees
            if name == "json":
                json.loads(s)
            seen_accepting.append(s)

    check()
    assert seen_accepting, "no walk ended in an accepting state: the test proves nothing"


JSON_DOCS = [
    '{"name": "Ada Lovelace", "age": 36, "tags": ["math", "poetry"], "alive": false}',
    '[1, -2.5, 3e10, 0.001E-3, true, null, {"a": {}}, [], ""]',
    '"caf\u00e9 \\u00e9\\n\\t\\"quoted\\" \\\\ / \U0001f600"',
    "-0.0",
    '{"nested": [[[[{"deep": [1, [2, [3]]]}]]]]}',
    '{\n  "pretty": [\n    1,\n    2\n  ],\n  "x": {"y": "z"}\n}',
    '{"k":1,"l":[true,false,null],"m":"\u65e5\u672c\u8a9e"}',
]


@pytest.mark.parametrize("doc", JSON_DOCS)
def test_json_sentences_accepted_token_by_token(doc, indexes, tokenizer):
    json.loads(doc)
    assert walk_text(indexes["json"], tokenizer, doc)


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**12), 10**12)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12),
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=8), kids, max_size=4),
    max_leaves=12,
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(json_values, st.sampled_from([None, 2]), st.booleans())
def test_any_json_value_accepted(indexes, tokenizer, value, indent, ascii_only):
    doc = json.dumps(value, indent=indent, ensure_ascii=ascii_only)
    ids = tokenizer.encode(doc, add_special_tokens=False)
    assume(indexes["json"].vocabulary.decode(ids) == doc.encode("utf-8"))
    assert walk_text(indexes["json"], tokenizer, doc), doc


def test_json_corpus_instances_accepted(indexes, tokenizer):
    import pathlib

    data = pathlib.Path(__file__).resolve().parents[1] / "data" / "jsonschemabench"
    docs = []
    for path in sorted(data.glob("*.jsonl")):  # real-world instances (copied from the shared corpora)
        with path.open() as fh:
            for line in fh:
                docs.extend(json.dumps(t["data"]) for t in json.loads(line)["tests"])
                if len(docs) >= 30:
                    break
    docs = docs or [json.dumps(json.loads(d), indent=1) for d in JSON_DOCS]
    for doc in docs:
        assert walk_text(indexes["json"], tokenizer, doc), doc


@pytest.mark.parametrize(
    "text",
    ['{"a" 1}', "[1,]", "01", '"\x01"', "tru", "1 2", '{"a":}', "[", '{"a":1,}', "+1", ".5", '"\\x"', "nul"],
)
def test_invalid_json_rejected(text, indexes, tokenizer, larks):
    with pytest.raises(lark.exceptions.LarkError):
        larks["json"].parse(text)
    assert not walk_text(indexes["json"], tokenizer, text)


ARITH = ["1 + 2 * (3 - x)", "-sin(x)^2 / 4.5e3", "f(1, g(2), h())", "((a))", "2^3^4", ".5 * 1.", "x_1*y2-3"]


@pytest.mark.parametrize("text", ARITH)
def test_arithmetic_sentences_accepted(text, indexes, tokenizer, larks):
    larks["arithmetic"].parse(text)
    assert walk_text(indexes["arithmetic"], tokenizer, text)


@pytest.mark.parametrize("text", ["1 +", "(1", "1 2", "f(,)", "* 3", "1..2", "x^", ""])
def test_invalid_arithmetic_rejected(text, indexes, tokenizer):
    assert not walk_text(indexes["arithmetic"], tokenizer, text)


SQL = [
    "SELECT name, age FROM users WHERE age > 30 ORDER BY name DESC LIMIT 10;",
    "select count(*) from orders o join customers c on o.cid = c.id group by c.id having count(*) >= 2",
    "SELECT DISTINCT a.x AS y FROM t AS a WHERE a.x IS NOT NULL AND a.y NOT IN (1, 2) OR a.z LIKE 'ab%'",
    "SELECT * FROM t LEFT JOIN u ON t.id = u.tid WHERE t.v BETWEEN 1 AND 2.5",
    "SELECT -price * 1.2 || 'x' FROM items",
]


@pytest.mark.parametrize("text", SQL)
def test_sql_sentences_accepted(text, indexes, tokenizer, larks):
    larks["sql"].parse(text)
    assert walk_text(indexes["sql"], tokenizer, text)


@pytest.mark.parametrize(
    "text", ["SELECT FROM t", "SELECT a FROM", "SELECT a t", "SELECT a FROM t WHERE", "DELETE FROM t"]
)
def test_invalid_sql_rejected(text, indexes, tokenizer):
    assert not walk_text(indexes["sql"], tokenizer, text)


# --- the Matcher contract ------------------------------------------------------------------------


def test_matcher_contract_along_a_sentence(indexes, tokenizer, vocab):
    index = indexes["json"]
    ids = tokenizer.encode('{"a": [1, true], "b": "x"}', add_special_tokens=False)
    m = index.matcher()
    assert isinstance(m, GrammarMatcher)
    words = np.zeros((vocab.size + 31) // 32, dtype=np.int32)
    for t in ids:
        allowed = m.allowed_token_ids()
        assert allowed.dtype == np.int32 and np.all(np.diff(allowed) > 0)
        assert (np.isin(vocab.eos_token_ids, allowed).all()) == m.is_accepting()
        m.fill_bitmask(words)
        np.testing.assert_array_equal(words, pack_bitmask(allowed, vocab.size))
        np.testing.assert_array_equal(unpack_bitmask(words, vocab.size), allowed)
        m.advance(t)
    assert m.is_accepting() and not m.is_finished()  # whitespace may still follow
    m.advance(vocab.eos_token_ids[0])
    assert m.is_finished() and m.allowed_token_ids().tolist() == list(vocab.eos_token_ids)


def test_rejects_tokens_outside_the_mask(indexes, tokenizer, vocab):
    m = indexes["json"].matcher()
    bad = tokenizer.encode("}", add_special_tokens=False)[0]
    assert not m.is_allowed(bad)
    with pytest.raises(fsm.TokenRejected):
        m.advance(bad)
    with pytest.raises(fsm.TokenRejected):
        m.advance(vocab.eos_token_ids[0])  # empty text is not JSON


def test_copy_and_rollback(indexes, tokenizer):
    index = indexes["json"]
    ids = tokenizer.encode('[{"k": "v"}, 2]', add_special_tokens=False)
    m = index.matcher()
    masks = []
    for t in ids:
        masks.append(m.allowed_token_ids().copy())
        m.advance(t)
    c = m.copy()
    m.rollback(len(ids) - 2)
    np.testing.assert_array_equal(m.allowed_token_ids(), masks[2])
    assert c.is_accepting() and not m.is_accepting()
    m.rollback(2)
    np.testing.assert_array_equal(m.allowed_token_ids(), masks[0])
    with pytest.raises(ValueError):
        m.rollback(1)
    for t in ids:  # replaying gives the same configurations
        m.advance(t)
    assert m.state == c.state


def test_forced_bytes_and_tokens(indexes, tokenizer, vocab):
    m = indexes["json"].matcher()
    for t in tokenizer.encode('{"a": tr', add_special_tokens=False):
        m.advance(t)
    assert m.forced_bytes() == b"ue"
    forced = m.forced_tokens()
    assert vocab.decode(forced) == b"ue"
    for t in forced:
        m.advance(t)
    assert not m.forced_bytes()  # now "," or "}" or whitespace
    m2 = indexes["sql"].matcher()
    assert m2.forced_bytes() == b""  # SELECT, select, Select... or whitespace


def test_whitespace_runs_are_bounded(vocab, tokenizer):
    index = fsm.compile(fsm.Grammar.builtin("json", max_ignore=4), vocab, cache=False)
    assert walk_text(index, tokenizer, "[1,    2]")
    assert not walk_text(index, tokenizer, "[1,     2]")
    m = index.matcher()
    for t in tokenizer.encode("[1,    ", add_special_tokens=False):
        m.advance(t)
    allowed = m.allowed_token_ids()
    assert len(allowed) and not any(vocab.token_bytes(int(t)).startswith(b" ") for t in allowed)


def test_compile_caches_by_fingerprint(vocab):
    g = fsm.Grammar.builtin("arithmetic")
    a = fsm.compile(g, vocab)
    assert fsm.compile(fsm.Grammar(grammars.load("arithmetic")), vocab) is a
    assert fsm.Grammar.builtin("arithmetic", max_ignore=3).fingerprint != g.fingerprint
    assert a.vocabulary is vocab and a.build_all() is a


def test_shipped_grammar_names():
    assert grammars.names() == ["arithmetic", "json", "sql"]
    with pytest.raises(fsm.GrammarError, match="no shipped grammar"):
        grammars.load("yaml")
