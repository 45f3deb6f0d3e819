"""`guide.Tools` on the real SmolLM2 tokenizer: tools from models, functions and dicts; the formats;
random walks of the composed spec parse into calls valid for their schemas; written calls are
accepted and parse back; bad tools fail with errors naming them."""

from __future__ import annotations

import json
import random
from types import SimpleNamespace
from typing import Literal

import jsonschema
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field

import fsm
import guide
from guide.output_types import to_jsonable
from guide.tool_formats import HERMES, LLAMA3_JSON, MISTRAL, ToolFormat, detect_format, resolve_format
from guide.tools import ToolError, Tools, as_tool


class get_weather(BaseModel):
    """The weather in a city."""

    city: str = Field(max_length=12)
    unit: Literal["c", "f"]


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


SEARCH = {
    "type": "function",
    "function": {
        "name": "search",
        "description": "Search the web.",
        "parameters": {
            "type": "object",
            "properties": {"query": {"type": "string", "maxLength": 8}},
            "required": ["query"],
            "additionalProperties": False,
        },
    },
}
TOOLS = [get_weather, add, SEARCH]
# <jupyter_code> is one special token of SmolLM2: a begin generated as that token, never as text.
SPECIAL = ToolFormat.custom("<jupyter_code>", "</code>")
FORMATS = {"hermes": HERMES, "mistral": MISTRAL, "llama3_json": LLAMA3_JSON, "special": SPECIAL}


def bound(tools: Tools, tokenizer, vocab):
    return tools.output_type(SimpleNamespace(tokenizer=tokenizer, vocabulary=vocab))


# -- formats ------------------------------------------------------------------------------------------


def test_formats_are_detected_from_template_text(tokenizer):
    qwen = '{{- \'<tool_call>\\n{"name": "\' }}{{- tool_call.name }}{{- \'", "arguments": \' }}'
    assert detect_format(qwen) is HERMES
    assert detect_format('{{- "[TOOL_CALLS] [" }}') is MISTRAL
    tight = detect_format('{{- "[TOOL_CALLS][" }}')
    assert tight.begin == "[TOOL_CALLS][" and not tight.per_call
    llama = '{{- \'"parameters": \' }}{{- tool_call.arguments | tojson }}{{- "<|eot_id|>" }}'
    assert detect_format(llama) is LLAMA3_JSON
    # SmolLM2's own template declares no tool format: Hermes (ChatML's) is used.
    assert detect_format(tokenizer.chat_template) is None
    assert resolve_format(None, tokenizer.chat_template) is HERMES
    assert resolve_format("mistral", None) is MISTRAL


def test_a_single_special_token_trigger_becomes_an_fsm_token(tokenizer):
    spec = Tools(TOOLS, format=SPECIAL, tool_choice="required").spec(tokenizer)
    assert "Token(13)" in repr(spec)  # <jupyter_code>
    text_spec = Tools(TOOLS).spec(tokenizer)  # <tool_call> is no single SmolLM2 token: text
    assert isinstance(text_spec, fsm.Triggered) and text_spec.triggers == (b"<tool_call>",)


# -- tools ------------------------------------------------------------------------------------------


def test_tools_from_models_functions_dicts_and_guide_functions():
    @guide.function
    def summarize(text: str, words: int = 10) -> str:
        """Summarize in {words} words: {text}"""

    tools = Tools([get_weather, add, SEARCH, summarize])
    assert list(tools.by_name) == ["get_weather", "add", "search", "summarize"]
    assert tools.by_name["add"].schema["required"] == ["a", "b"]
    assert tools.by_name["summarize"].schema["required"] == ["text"]
    assert tools.by_name["get_weather"].description == "The weather in a city."
    call = tools.call({"name": "add", "arguments": {"a": 2, "b": 3}}, HERMES)
    assert (call.arguments.a, call.arguments.b, tools.execute(call)) == (2, 3, 5)
    weather = tools.call({"name": "get_weather", "arguments": {"city": "Oslo", "unit": "c"}}, HERMES)
    assert isinstance(weather.arguments, get_weather)
    assert json.loads(weather.openai()["function"]["arguments"]) == {"city": "Oslo", "unit": "c"}


@pytest.mark.parametrize(
    "tools, options, message",
    [
        ([], {}, "at least one tool"),
        ([add, add], {}, "two tools are named 'add'"),
        ([lambda x: x], {}, "parameter 'x' needs a type annotation"),
        ([3], {}, "is not a tool"),
        (
            [{"name": "f", "parameters": {"type": "array"}}],
            {},
            "tool 'f': its arguments must be a JSON object",
        ),
        ([add], {"tool_choice": "mul"}, "tool_choice 'mul'"),
        ([add], {"max_calls": 0}, "max_calls"),
        ([add], {"format": "chatml"}, "unknown tool format 'chatml'"),
    ],
)
def test_bad_tools_fail_naming_the_problem(tools, options, message):
    with pytest.raises(ToolError if "format" not in options else fsm.SpecError, match=message):
        Tools(tools, **options)


def test_a_schema_tool_is_checked_against_its_metaschema_when_first_called():
    tools = Tools([{"name": "f", "parameters": {"type": "object", "maxProperties": "x"}}])
    with pytest.raises(ToolError, match="tool 'f': its parameters are no valid JSON Schema"):
        tools.call({"name": "f", "arguments": {}}, HERMES)


def test_varargs_and_calls_to_unknown_tools_are_refused():
    def spread(*names: str) -> None: ...

    with pytest.raises(ToolError, match=r"tool 'spread': \*names"):
        as_tool(spread)
    with pytest.raises(ToolError, match="names no tool"):
        Tools([add]).parse('<tool_call>\n{"name": "mul", "arguments": {}}\n</tool_call>')


# -- the composed spec on the real vocabulary ------------------------------------------------------

CLOSERS = ('"', "}", "]", ",", "0", "7", "c", "f", "x", "\n", ";", " ")


def agent_walk(index, tokenizer, trigger_ids, rng: random.Random, max_tokens=300):
    """Random tokens; in free text (p=0.2) the trigger where it is allowed; short closing tokens
    preferred (so bodies end). Returns (ids, finished)."""
    vocab = index.vocabulary
    eos = set(vocab.eos_token_ids)
    closers = {tokenizer.convert_tokens_to_ids(t) for t in CLOSERS} | {
        tokenizer.encode(t, add_special_tokens=False)[0] for t in CLOSERS
    }
    m, out = index.matcher(), []
    while len(out) < max_tokens:
        if m.is_accepting() and rng.random() < 0.15:
            return out, True
        if rng.random() < 0.2 and m.accepts_tokens(trigger_ids):
            for t in trigger_ids:
                m.advance(t)
            out.extend(trigger_ids)
            continue
        allowed = [int(t) for t in m.allowed_token_ids() if int(t) not in eos]
        if not allowed:
            assert m.is_accepting()
            return out, True
        forced = m.forced_tokens()
        if forced:
            t = forced[0]
        elif rng.random() < 0.8 and (near := [t for t in allowed if t in closers]):
            t = rng.choice(near)
        else:
            t = rng.choice(allowed)
        m.advance(t)
        out.append(t)
    return out, False


@pytest.fixture(scope="module")
def compiled(tokenizer, vocab):
    cache = {}

    def get(fmt_name: str, choice: str):
        if (fmt_name, choice) not in cache:
            tools = Tools(TOOLS, format=FORMATS[fmt_name], tool_choice=choice, max_calls=3)
            kind = bound(tools, tokenizer, vocab)
            cache[fmt_name, choice] = (tools, kind, fsm.compile(kind.spec, vocab))
        return cache[fmt_name, choice]

    return get


def check_reply(tools: Tools, reply, choice: str, trigger: str) -> None:
    assert trigger not in reply.text
    if choice != "auto":
        assert reply.text == "" and 1 <= len(reply.calls) <= 3
    for call in reply.calls:
        if choice not in ("auto", "required"):
            assert call.name == choice
        jsonschema.validate(to_jsonable(call.arguments), tools.by_name[call.name].schema)


@pytest.mark.parametrize("fmt_name", list(FORMATS))
@settings(
    max_examples=10,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(seed=st.integers(0, 2**31), choice=st.sampled_from(["auto", "required", "add"]))
def test_random_walks_parse_into_calls_valid_for_their_schemas(compiled, tokenizer, fmt_name, seed, choice):
    tools, kind, index = compiled(fmt_name, choice)
    trigger = FORMATS[fmt_name].trigger_text
    trigger_ids = tokenizer.encode(trigger, add_special_tokens=False)
    ids, finished = agent_walk(index, tokenizer, trigger_ids, random.Random(seed))
    if not finished:
        return  # cut by the token cap: only finished outputs are replies
    check_reply(tools, kind.parse_tokens(ids), choice, trigger)


@pytest.mark.parametrize("fmt_name", list(FORMATS))
def test_walks_do_make_calls(compiled, tokenizer, fmt_name):
    """The property above is not vacuous: finished walks hold calls, in every format."""
    _tools, kind, index = compiled(fmt_name, "auto")
    trigger_ids = tokenizer.encode(FORMATS[fmt_name].trigger_text, add_special_tokens=False)
    n = 0
    for seed in range(10):
        ids, finished = agent_walk(index, tokenizer, trigger_ids, random.Random(seed))
        if finished:
            n += len(kind.parse_tokens(ids).calls)
    assert n >= 2


ORDER = {"get_weather": ["city", "unit"], "add": ["a", "b"], "search": ["query"]}  # the schemas' order


def write_call(fmt: ToolFormat, name: str, args: dict) -> str:
    body = json.dumps({k: args[k] for k in ORDER[name]}, separators=(",", ":"), ensure_ascii=False)
    return fmt.call_prefix(name) + body + "}"


free_text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=20)
ints = st.integers(-(10**12), 10**12)
call_args = {
    "get_weather": st.fixed_dictionaries({"city": st.text(max_size=12), "unit": st.sampled_from(["c", "f"])}),
    "add": st.fixed_dictionaries({"a": ints, "b": ints}),
    "search": st.fixed_dictionaries({"query": st.text(max_size=8)}),
}
calls_st = st.sampled_from(sorted(call_args)).flatmap(lambda n: st.tuples(st.just(n), call_args[n]))


@pytest.mark.parametrize("fmt_name", list(FORMATS))
@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(first=free_text, calls=st.lists(calls_st, min_size=1, max_size=3))
def test_written_calls_are_accepted_and_parse_back(compiled, tokenizer, fmt_name, first, calls):
    fmt = FORMATS[fmt_name]
    assume(fmt.trigger_text not in first and "<jupyter" not in first)
    _tools, kind, index = compiled(fmt_name, "auto")
    if fmt.per_call:
        text = first + "".join(fmt.begin + write_call(fmt, n, a) + fmt.end + " ok" for n, a in calls)
    else:
        text = first + fmt.begin + fmt.separator.join(write_call(fmt, n, a) for n, a in calls) + fmt.end
    ids = tokenizer.encode(text, add_special_tokens=False)
    assume(tokenizer.decode(ids) == text)  # SmolLM2 cannot spell U+40000..U+BFFFF
    m = index.matcher()
    assert m.accepts_tokens(ids), text
    for t in ids:
        m.advance(t)
    assert m.is_accepting(), text
    reply = kind.parse_tokens(ids)
    assert [(c.name, to_jsonable(c.arguments)) for c in reply.calls] == [(n, a) for n, a in calls]


def test_free_text_never_starts_a_call_outside_a_tag(compiled, tokenizer):
    _tools, _kind, index = compiled("hermes", "auto")
    for bad in ["hi <tool_call> there", '<tool_call>\n{"name": "mul", "arguments": {}}\n</tool_call>']:
        assert not index.matcher().accepts_tokens(tokenizer.encode(bad, add_special_tokens=False)), bad
    none = fsm.compile(Tools(TOOLS, tool_choice="none").spec(tokenizer), index.vocabulary)
    assert not none.matcher().accepts_tokens(tokenizer.encode("a <tool_call>", add_special_tokens=False))
    assert none.matcher().accepts_tokens(tokenizer.encode("just text", add_special_tokens=False))


def test_bodies_compile_only_when_entered(vocab, tokenizer):
    names = [f"tool_{i}" for i in range(200)]
    schema = {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}
    tools = Tools([{"name": n, "parameters": {**schema, "title": n}} for n in names])
    index = fsm.compile(tools.spec(tokenizer), vocab)
    m = index.matcher()
    for t in tokenizer.encode(
        'hi <tool_call>\n{"name": "tool_7", "arguments": {"x":', add_special_tokens=False
    ):
        m.advance(t)
    assert index.compiled_parts == 1
