"""Fuzzing JSON Schema compilation (bounded for CI): a SpecError, or every walk validates."""

from __future__ import annotations

import json
import warnings

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

import fsm
from fsm.testing import random_walk

from ..fuzz.schema_strategies import schemas

LIMITS = fsm.Limits(max_seconds=8.0, max_states=50_000)


@settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(schemas, st.integers(0, 2**31))
def test_random_schemas_compile_soundly_or_raise_spec_error(vocab, schema, seed):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            index = fsm.compile(fsm.JsonSchema(schema), vocab, limits=LIMITS, cache=False)
    except fsm.SpecError:
        return
    validator = Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)
    rng = np.random.default_rng(seed)
    for _ in range(2):
        walk = random_walk(index, rng, max_tokens=60, eos_bias=None)  # asserts no stuck state
        if walk.finished:
            validator.validate(json.loads(walk.text))
