"""Single-byte spelling checked per state (`fsm.automata.spelling`): an edge no single-byte token
spells is harmless where its state has another way on, so the lazy index still serves the schema,
exactly; a state with no other way on still sends it to the eager index, which prunes the dead end.
"""

from __future__ import annotations

import random

import fsm
from fsm.automata import alt, lit, node_nfa
from fsm.automata.spelling import spelled_to_the_end
from fsm.index import DfaIndex, LazyDfaIndex
from fsm.testing import accepts, random_walk

F1 = "\U00050000"  # UTF-8 f1 90 80 80
# every byte a token but f1 (as SmolLM2 lacks it), and the character whole as one token
VOCAB = fsm.Vocabulary(
    [bytes([i]) for i in range(256) if i != 0xF1] + [F1.encode(), b"ab", None], eos_token_ids=[257]
)


def test_an_unspelled_edge_beside_a_spelled_one_keeps_the_lazy_index_exact():
    schema = {"type": "string", "pattern": f"^(?:a|{F1}|b[{F1}b])+c$"}
    index = fsm.compile(fsm.JsonSchema(schema), VOCAB, cache=False)
    assert isinstance(index, LazyDfaIndex)
    cases = {"a": True, F1: True, "ab" + F1: True, "abb": True, "b": False, "": False, "ba": False}
    for text, ok in cases.items():
        assert accepts(index, f'"{text}c"') == ok, text
    rng = random.Random(0)
    for _ in range(50):  # no token leads into a dead end: a walk always finds a way on
        walk = random_walk(index, rng, max_tokens=40)
        assert not walk.finished or walk.text.endswith('c"')


def test_a_state_that_only_an_unspelled_byte_finishes_goes_to_the_eager_index():
    schema = {"type": "string", "pattern": f"^(?:yes|x{F1}|x{F1}z)$"}
    index = fsm.compile(fsm.JsonSchema(schema), VOCAB, cache=False)
    assert isinstance(index, DfaIndex)
    assert accepts(index, f'"x{F1}"') and accepts(index, '"yes"')


def test_answers_are_kept_per_vocabulary():
    # the ranges' answers are remembered per set of single-byte tokens: alternating two sets
    # (two models in one server) must not mix them
    trans, eps, _, final, _, counters = node_nfa(alt(lit("ab"), lit("c")))  # after a: only b
    cont = list(range(0x80, 0xC0))
    with_a, with_ab = [ord("a"), *cont], [ord("a"), ord("b"), *cont]
    for _ in range(2):
        assert not spelled_to_the_end(trans, eps, final, counters, None, with_a)
        assert spelled_to_the_end(trans, eps, final, counters, None, with_ab)
    assert not spelled_to_the_end(trans, eps, final, counters, None, [ord("a"), ord("b")])  # no continuations


def test_a_vocabulary_of_every_byte_spells_every_state():
    # (a vocabulary with every byte of UTF-8 text a token needs no edge read: true whatever the
    # automaton) — and taking one such byte out makes it read them again
    schema = {"type": "string", "pattern": f"^(?:x{F1}|y)$"}
    trans, eps, _, final, _, counters = node_nfa(fsm.JsonSchema(schema).tree())
    every = list(range(256))
    assert spelled_to_the_end(trans, eps, final, counters, None, every)
    assert not spelled_to_the_end(trans, eps, final, counters, None, [b for b in every if b != 0xF1])
    utf8 = [b for b in every if not (b in (0xC0, 0xC1) or b >= 0xF5)]  # bytes no UTF-8 text holds
    assert spelled_to_the_end(trans, eps, final, counters, None, utf8)
    full = fsm.Vocabulary([bytes([i]) for i in range(256)] + [None], eos_token_ids=[256])
    assert isinstance(fsm.compile(fsm.JsonSchema(schema), full, cache=False), LazyDfaIndex)
