"""`fsm.Triggered` on the real SmolLM2 vocabulary: free text with Hermes-style tool calls.

Random walks that start calls produce text that splits into free text (never holding a trigger)
and tags whose bodies validate against their tool's schema; random interleavings of text and
calls, tokenized by the real tokenizer, are accepted; bodies compile on first entry and share
the `fsm.JsonSchema` cache.
"""

from __future__ import annotations

import json
import random

import jsonschema
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import fsm
from fsm.testing import check_matcher_contract

TRIGGER = "<tool_call>"
END = "}</tool_call>"
TOOLS = {
    "get_weather": {
        "type": "object",
        "properties": {"city": {"type": "string", "maxLength": 12}, "unit": {"enum": ["c", "f"]}},
        "required": ["city", "unit"],
        "additionalProperties": False,
    },
    "add": {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
        "additionalProperties": False,
    },
    "search": {
        "type": "object",
        "properties": {
            "query": {"type": "string", "maxLength": 10},
            "limit": {"type": "integer", "minimum": 1},
        },
        "required": ["query"],
        "additionalProperties": False,
    },
    "stop": {"type": "object", "properties": {}, "additionalProperties": False},
    "flag": {
        "type": "object",
        "properties": {"on": {"type": "boolean"}},
        "required": ["on"],
        "additionalProperties": False,
    },
}


def begin(name: str) -> str:
    return f'{TRIGGER}{{"name": "{name}", "arguments": '


def triggered(names, **opts) -> fsm.Triggered:
    tags = [fsm.Tag(begin(n), fsm.JsonSchema(TOOLS[n]), END) for n in names]
    return fsm.Triggered(tags, triggers=[TRIGGER], **opts)


def split_calls(text: str, names) -> tuple[list[str], list[tuple[str, object]]]:
    """Free-text segments and (tool, arguments) calls; raises AssertionError where a call is malformed."""
    texts, calls, pos = [], [], 0
    decoder = json.JSONDecoder()
    while True:
        at = text.find(TRIGGER, pos)
        if at < 0:
            texts.append(text[pos:])
            return texts, calls
        texts.append(text[pos:at])
        name = next((n for n in names if text.startswith(begin(n), at)), None)
        assert name is not None, f"a trigger starts no known tag: {text[at:]!r}"
        args, end = decoder.raw_decode(text, at + len(begin(name)))
        assert text.startswith(END, end), f"tag not closed: {text[end:]!r}"
        calls.append((name, args))
        pos = end + len(END)


CLOSERS = ('"', "}", ",", "0", "1", "7", "true", "false", "c", "f", "x")


def agent_walk(index, tokenizer, rng: random.Random, names, max_tokens=400):
    """A random walk that starts calls now and then: (token ids, finished). In free text it takes a
    random allowed token or (p=0.15, between characters) a tag's whole begin; in a body it prefers short closing tokens."""
    vocab = index.vocabulary
    closers = {tokenizer.convert_tokens_to_ids(t) for t in CLOSERS}
    m, out, in_call = index.matcher(), [], False
    while len(out) < max_tokens:
        if not in_call:
            if m.is_accepting() and rng.random() < 0.1:
                return out, True
            if m.is_accepting() and rng.random() < 0.15:  # at a character boundary
                for t in tokenizer.encode(begin(rng.choice(names)), add_special_tokens=False):
                    m.advance(t)  # a tag's begin is allowed anywhere in free text
                    out.append(t)
                in_call = True
                continue
        allowed = [int(t) for t in m.allowed_token_ids() if int(t) not in vocab.eos_token_ids]
        forced = m.forced_tokens()
        if not allowed:
            assert m.is_accepting()
            return out, True
        if in_call and forced:
            t = forced[0]
        elif in_call and rng.random() < 0.8 and (near := [t for t in allowed if t in closers]):
            t = rng.choice(near)
        else:
            t = rng.choice(allowed)
        m.advance(t)
        out.append(t)
        if in_call and vocab.decode(out).endswith(END.encode()):
            in_call = False
    return out, False


@pytest.fixture(scope="module")
def five(vocab):
    return fsm.compile(triggered(list(TOOLS)), vocab)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**31))
def test_random_walks_split_into_free_text_and_valid_calls(five, tokenizer, seed):
    names = list(TOOLS)
    ids, finished = agent_walk(five, tokenizer, random.Random(seed), names)
    text = five.vocabulary.decode(ids).decode("utf-8", "strict" if finished else "replace")
    if not finished:
        return  # cut by the token cap: only completed outputs split
    texts, calls = split_calls(text, names)
    assert all(TRIGGER not in t for t in texts)
    for name, args in calls:
        jsonschema.validate(args, TOOLS[name])


def test_walks_do_call_tools(five, tokenizer):
    """The property above is not vacuous: walks finish with calls in them."""
    names, n_calls = list(TOOLS), 0
    for seed in range(12):
        ids, finished = agent_walk(five, tokenizer, random.Random(seed), names)
        if finished:
            n_calls += len(split_calls(five.vocabulary.decode(ids).decode(), names)[1])
    assert n_calls >= 3


free_text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=30).filter(
    lambda t: TRIGGER not in t
)
ints = st.integers(-(10**15), 10**15)  # fsm.JsonSchema bounds an integer's digits by default
call_args = {
    "get_weather": st.fixed_dictionaries({"city": st.text(max_size=12), "unit": st.sampled_from(["c", "f"])}),
    "add": st.fixed_dictionaries({"a": ints, "b": ints}),
    "search": st.fixed_dictionaries(
        {"query": st.text(max_size=10)}, optional={"limit": st.integers(1, 10**15)}
    ),
    "stop": st.just({}),
    "flag": st.fixed_dictionaries({"on": st.booleans()}),
}
calls = st.sampled_from(sorted(TOOLS)).flatmap(lambda n: st.tuples(st.just(n), call_args[n]))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(free_text, st.lists(st.tuples(calls, free_text), max_size=3))
def test_interleavings_of_text_and_calls_are_accepted(five, tokenizer, first, rest):
    text = first
    for (name, args), after in rest:
        args = {k: args[k] for k in TOOLS[name]["properties"] if k in args}  # the schema's order
        body = json.dumps(args, separators=(",", ":"), ensure_ascii=False)
        text += begin(name) + body + END + after
    ids = tokenizer.encode(text, add_special_tokens=False)
    assume(five.vocabulary.decode(ids) == text.encode())  # SmolLM2 cannot spell U+40000..U+BFFFF
    m = five.matcher()
    assert m.accepts_tokens(ids), text
    for t in ids:
        m.advance(t)
    assert m.is_accepting(), text


def test_a_trigger_outside_a_tag_is_rejected(five, tokenizer):
    m = five.matcher()
    for bad in ["hi <tool_call> plain", '<tool_call>{"name": "nope", "arguments": {}}</tool_call>']:
        ids = tokenizer.encode(bad, add_special_tokens=False)
        assert not m.accepts_tokens(ids), bad
    ok = 'ok <tool_call>{"name": "add", "arguments": {"a":1,"b":2}}</tool_call> done'
    check_matcher_contract(five, tokenizer.encode(ok, add_special_tokens=False))


def test_call_counts_and_stop_after_calls(vocab, tokenizer):
    call = begin("flag") + '{"on":true}' + END

    def ok(spec, text):
        m = fsm.compile(spec, vocab).matcher()
        ids = tokenizer.encode(text, add_special_tokens=False)
        if not m.accepts_tokens(ids):
            return False
        for t in ids:
            m.advance(t)
        return m.is_accepting()

    assert not ok(triggered(["flag"], min_calls=1), "just text")
    assert ok(triggered(["flag"], min_calls=1), "text " + call + " more")
    assert not ok(triggered(["flag"], max_calls=1), call + call)
    assert ok(triggered(["flag"], max_calls=2), call + " and " + call)
    assert not ok(triggered(["flag"], stop_after_calls=True), call + " more text")
    assert ok(triggered(["flag"], stop_after_calls=True), "thinking " + call + call)


def test_bodies_compile_on_first_entry_and_share_the_schema_cache(vocab, tokenizer):
    names = [f"tool_{i}" for i in range(60)]
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    specs = {n: fsm.JsonSchema({**schema, "title": n}) for n in names}
    spec = fsm.Triggered([fsm.Tag(begin(n), specs[n], END) for n in names], triggers=[TRIGGER])
    index = fsm.compile(spec, vocab, cache=False)
    m = index.matcher()
    for t in tokenizer.encode("Sure. ", add_special_tokens=False):
        m.advance(t)
    assert index.compiled_parts == 0
    for t in tokenizer.encode(begin("tool_7") + '{"n":', add_special_tokens=False):
        m.advance(t)
    assert index.compiled_parts == 1
    shared = fsm.compile(specs["tool_7"], vocab)  # the cached index the composition walked
    fresh = fsm.compile(specs["tool_7"], vocab, cache=False)
    assert shared.dfa.n_states > fresh.dfa.n_states
    for t in tokenizer.encode("42}" + END, add_special_tokens=False):
        m.advance(t)
    assert m.is_accepting()
