"""guide.vllm's request arguments, without vLLM: every output type round-trips to the same spec."""

from __future__ import annotations

import json
from typing import Literal

import pytest
from pydantic import BaseModel

import fsm
import guide
from guide.output_types import output_type
from guide.vllm import RequestArgumentError, request_args, spec_from_args


class Person(BaseModel):
    name: str
    age: int


@pytest.mark.parametrize(
    "tp",
    [
        Person,
        {"type": "array", "items": {"type": "integer"}},
        fsm.Regex(r"[a-z]+@[a-z]+\.com"),
        fsm.Choice(["red", "green"]),
        Literal["a", "b"],
        guide.Grammar('start: "x" start | "y"'),
        guide.Grammar('s: "x"', start="s"),
        int,
    ],
)
def test_round_trip_gives_the_same_spec(tp):
    args = request_args(tp)
    json.dumps(args)  # flat and JSON-able: what vllm_xargs carries
    assert all(isinstance(v, (str, int, list)) for v in args.values())
    assert spec_from_args(args).fingerprint == output_type(tp).spec.fingerprint


def test_json_options_travel():
    args = request_args(Person, "pretty", exact=True)
    spec = spec_from_args(json.loads(json.dumps(args)))
    assert spec.fingerprint == fsm.JsonSchema(Person.model_json_schema(), "pretty", exact=True).fingerprint
    assert spec_from_args({"guide_json_schema": {"type": "integer"}, "guide_whitespace": 4.0}).indent == 4


def test_builtin_grammar_by_name():
    assert spec_from_args({"guide_grammar": "arithmetic"}).lark_text == fsm.grammars.load("arithmetic")


def test_other_extra_args_are_ignored():
    assert spec_from_args(None) is None
    assert spec_from_args({"my_processor_option": 3}) is None


@pytest.mark.parametrize(
    "args, needle",
    [
        ({"guide_regx": "a"}, "unknown argument 'guide_regx'"),
        ({"guide_regex": "a", "guide_choice": ["a"]}, "exactly one of"),
        ({"guide_exact": 1}, "exactly one of"),
        ({"guide_regex": ""}, "non-empty string"),
        ({"guide_choice": "yes"}, "list of strings"),
        ({"guide_json_schema": "{"}, "not JSON"),
        ({"guide_json_schema": 3}, "JSON text"),
        ({"guide_json_schema": "{}", "guide_whitespace": True}, "guide_whitespace"),
        ({"guide_json_schema": "{}", "guide_exact": "yes"}, "guide_exact"),
        ({"guide_grammar": "start: 'a'", "guide_grammar_start": ""}, "guide_grammar_start"),
    ],
)
def test_bad_arguments_name_the_problem(args, needle):
    with pytest.raises(RequestArgumentError, match=needle) as e:
        spec_from_args(args)
    assert isinstance(e.value, fsm.SpecError) and isinstance(e.value, ValueError)
