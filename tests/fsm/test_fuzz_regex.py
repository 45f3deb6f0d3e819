"""Fuzzing regex compilation (bounded for CI): a SpecError or a sound automaton, never anything else."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fsm
from fsm.testing import random_walk

from ..fuzz.strategies import maybe_broken_regexes, python_accepts

LIMITS = fsm.Limits(max_seconds=5.0, max_states=20_000, max_regex_positions=5_000)


@settings(
    max_examples=80,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(maybe_broken_regexes, st.integers(0, 2**31))
def test_random_regexes_compile_soundly_or_raise_spec_error(vocab, pattern, seed):
    try:
        index = fsm.compile(fsm.Regex(pattern), vocab, limits=LIMITS, cache=False)
    except fsm.SpecError:
        return
    compiled = python_accepts(pattern)
    assert compiled is not None, f"we compiled {pattern!r} which Python's re rejects"
    rng = np.random.default_rng(seed)
    for _ in range(3):
        walk = random_walk(index, rng, max_tokens=40, eos_bias=None)  # asserts no stuck state
        if walk.finished:
            text = walk.text
            assert compiled.fullmatch(text), (pattern, text)
