"""Masks written ahead on a worker thread (`Runner(masks_ahead=True)`): the same tokens as without,
every constrained row valid, free rows untouched, and the worker stopped when the loop ends."""

from __future__ import annotations

import json
import threading

import jsonschema
import pytest

import fsm
import guide
from guide.loop import Runner

# One schema per row, each different (strings with a bound, enums, numbers, arrays, nesting), as a
# server's batch would have.
SCHEMAS = [
    {
        "type": "object",
        "properties": {"name": {"type": "string", "maxLength": 12}, "age": {"type": "integer"}},
        "required": ["name", "age"],
        "additionalProperties": False,
    },
    {
        "type": "object",
        "properties": {"color": {"enum": ["red", "green", "blue"]}, "ok": {"type": "boolean"}},
        "required": ["color", "ok"],
        "additionalProperties": False,
    },
    {"type": "array", "items": {"type": "number"}, "minItems": 1, "maxItems": 4},
    {
        "type": "object",
        "properties": {
            "city": {"type": "object", "properties": {"zip": {"type": "string", "pattern": "^[0-9]{5}$"}}}
        },
        "required": ["city"],
        "additionalProperties": False,
    },
]


@pytest.fixture(scope="module")
def model():
    return guide.load()


def _run(model, constraints, ahead: bool, **sampling) -> list[guide.Completion]:
    prompts = [model.chat("Write one JSON object with realistic values.")] * len(constraints)
    runner = Runner(model, prompts, constraints, 48, None, 7, True, sampling, masks_ahead=ahead)
    for _ in runner.steps():
        pass
    assert runner.worker is None  # the worker thread is stopped when the loop ends
    return runner.completions()


def _check_valid(schemas, outs) -> None:
    for schema, o in zip(schemas, outs, strict=True):
        if schema is None:
            continue
        if o.finish_reason == "constraint":
            jsonschema.validate(json.loads(o.text), schema)
        else:  # cut by the budget: still a prefix the constraint allows
            m = fsm.compile(fsm.JsonSchema(schema), guide.load().vocabulary).matcher()
            for t in o.token_ids:
                m.advance(t)


@pytest.mark.parametrize("sampling", [{}, {"temperature": 1.0}], ids=["greedy", "sampled"])
def test_same_tokens_with_and_without_masks_ahead(model, sampling):
    schemas = [*SCHEMAS, None]  # a free row beside the constrained ones
    runs = {}
    for ahead in (False, True):
        fsm.clear_memory_cache()  # each run compiles its schemas anew: cold rows on the worker thread
        constraints = [None if s is None else fsm.JsonSchema(s) for s in schemas]
        runs[ahead] = _run(model, constraints, ahead, **sampling)
    for off, on in zip(runs[False], runs[True], strict=True):
        assert on.token_ids == off.token_ids
        assert on.finish_reason == off.finish_reason
    _check_valid(schemas, runs[True])
    assert any(o.finish_reason == "constraint" for o in runs[True][:-1])


def test_worker_stops_when_the_caller_stops_early(model):
    before = {t.name for t in threading.enumerate()}
    prompts = [model.chat("Write JSON.")] * 2
    specs = [fsm.JsonSchema(s) for s in SCHEMAS[:2]]
    runner = Runner(model, prompts, specs, 48, None, None, True, {}, masks_ahead=True)
    steps = runner.steps()
    for _ in range(3):
        next(steps)
    assert runner.worker is not None
    steps.close()  # a stream abandoned mid-way
    assert runner.worker is None
    assert {t.name for t in threading.enumerate()} - before == set()
