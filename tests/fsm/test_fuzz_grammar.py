"""Fuzzing Lark grammar compilation (bounded for CI): a SpecError, or lark's parser accepts every walk."""

from __future__ import annotations

import lark
import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fsm
from fsm.testing import random_walk

_TERMINALS = [
    '"a"',
    '"b"',
    '"("',
    '")"',
    '","',
    "NUMBER",
    "WORD",
    "/[xyz]+/",
    '"let"i',
    "/a|ab/",
    "/(?=a)a/",
    '""',
]
_HEADER = "%import common.NUMBER\n%import common.WORD\n%import common.WS\n"


@st.composite
def grammars(draw):
    n_rules = draw(st.integers(1, 3))
    names = [f"r{i}" for i in range(n_rules)]
    lines = []
    for name in names:
        alts = []
        for _ in range(draw(st.integers(1, 3))):
            items = draw(st.lists(st.sampled_from(_TERMINALS + names), min_size=1, max_size=3))
            alts.append(" ".join(items))
        lines.append(f"{name}: " + " | ".join(alts))
    start = "start: " + " ".join(draw(st.lists(st.sampled_from(names), min_size=1, max_size=2)))
    ignore = draw(st.sampled_from(["%ignore WS\n", "", "%ignore /#[^\\n]*/\n"]))
    broken = draw(st.sampled_from(["", "", "", "oops: undefined_rule\n", "start: start\n", "x: (\n"]))
    return _HEADER + start + "\n" + "\n".join(lines) + "\n" + ignore + broken


@settings(
    max_examples=30,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(grammars(), st.integers(0, 2**31))
def test_random_grammars_compile_soundly_or_raise_spec_error(vocab, text, seed):
    try:
        index = fsm.compile(fsm.Grammar(text), vocab, limits=fsm.Limits(max_seconds=8.0), cache=False)
    except fsm.SpecError:
        return
    parser = lark.Lark(text, parser="lalr")
    rng = np.random.default_rng(seed)
    for _ in range(2):
        walk = random_walk(index, rng, max_tokens=40, eos_bias=None)  # asserts no stuck state
        if walk.finished:
            parser.parse(walk.text)
