"""Fuzzing regex compilation (bounded for CI): a SpecError or a sound automaton, never anything else."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fsm

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
        m = index.matcher()
        out = []
        for _ in range(40):
            allowed = m.allowed_token_ids()
            assert len(allowed), f"stuck state for {pattern!r}"
            t = int(rng.choice(allowed))
            m.advance(t)
            if t in vocab.eos_token_ids:
                text = vocab.decode(out).decode("utf-8")
                assert compiled.fullmatch(text), (pattern, text)
                break
            out.append(t)
