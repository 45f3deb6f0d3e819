"""Which index an automaton gets (`fsm.index.for_automaton`): a regex's states made as its rows reach
them give the same masks as its DFA made whole, token for token; big and inexact ones stay eager."""

from __future__ import annotations

import random

import numpy as np
import pytest

import fsm
from fsm.index import DfaIndex, LazyDfaIndex
from fsm.regex import regex_to_dfa
from fsm.regex.compile import LAZY_POSITIONS
from fsm.testing import accepts, random_walk

from .regex_cases import REGEXES


@pytest.mark.parametrize("name", sorted(REGEXES))
def test_a_regex_made_on_demand_has_the_masks_of_its_whole_dfa(name, vocab):
    pattern = REGEXES[name]
    lazy = fsm.compile(fsm.Regex(pattern), vocab, cache=False)
    assert isinstance(lazy, LazyDfaIndex)
    eager = DfaIndex(regex_to_dfa(pattern, extended=True), vocab)
    rng = random.Random(name)
    for _ in range(6):
        # a walk on each side in turn: the states either one reaches, compared at every step
        source = lazy if rng.random() < 0.5 else eager
        walk = random_walk(source, rng, max_tokens=30, eos_bias=0.2)
        a, b = lazy.matcher(), eager.matcher()
        for t in [*walk.tokens, None]:
            assert np.array_equal(a.allowed_token_ids(), b.allowed_token_ids()), (name, walk.text)
            assert a.is_accepting() == b.is_accepting()
            if t is None:
                break
            a.advance(t)
            b.advance(t)


def test_a_choice_is_made_on_demand(vocab, tokenizer):
    index = fsm.compile(fsm.Choice(["alpha", "alps", "beta", "al"]), vocab, cache=False)
    assert isinstance(index, LazyDfaIndex)
    assert all(accepts(index, w, tokenizer) for w in ("alpha", "alps", "beta", "al"))
    assert not any(accepts(index, w, tokenizer) for w in ("alp", "bet", "alphas"))


def test_a_big_regex_is_made_whole_at_compile(vocab):
    pattern = f"(?:[a-c]x){{{LAZY_POSITIONS // 2 + 1}}}"  # two positions a copy
    index = fsm.compile(fsm.Regex(pattern), vocab, cache=False)
    assert isinstance(index, DfaIndex)
    assert accepts(index, "ax" * (LAZY_POSITIONS // 2 + 1))


@pytest.mark.parametrize(
    "spec", [fsm.Regex("(a|b)*a(a|b){12}q"), fsm.Choice([f"{'a' * i}q" for i in range(1, 40)])]
)
def test_an_inexact_regex_too_big_to_make_whole_is_refused_by_name(spec):
    # no token spells "q" alone: lazy rows would lead into dead ends, so the DFA is made whole here,
    # after the compile of the pattern, and its budget overrun still names the regex, not a schema
    tokens = [bytes([b]) for b in range(256) if b != ord("q")] + [b"qq", None]
    v = fsm.Vocabulary(tokens, eos_token_ids=[len(tokens) - 1])
    with pytest.raises(fsm.SpecTooComplex, match=r"^regex '\(") as err:
        fsm.compile(spec, v, limits=fsm.Limits(max_states=30), cache=False)
    assert not isinstance(err.value, fsm.SchemaError)
    assert "schema" not in str(err.value) and "max_states" in str(err.value)


def test_a_lazy_regex_over_its_state_budget_at_a_mask_names_the_pattern(vocab):
    # an exponential DFA in 21 positions: made as the text reaches its states, until the budget trips
    index = fsm.compile(fsm.Regex(".*a.{20}"), vocab, limits=fsm.Limits(max_states=3000), cache=False)
    assert isinstance(index, LazyDfaIndex)
    m, rng = index.matcher(), np.random.default_rng(0)
    with pytest.raises(
        fsm.SpecTooComplex, match=r"^regex '\.\*a\.\{20\}': the automaton: over 3,000 states"
    ) as err:
        for _ in range(200):
            m.advance(int(rng.choice(m.allowed_token_ids())))
    assert not isinstance(err.value, fsm.SchemaError)
