"""Values held in several places as rules of their own (`fsm.automata.shared`): a recursive schema
whose levels cycle through phases (each level's value met from a declared property and from
``additionalProperties``) compiles within the default limits, and random nested documents are
accepted iff ``jsonschema`` validates them; the rewrite keeps a tree's language.
"""

from __future__ import annotations

import json
import time

from hypothesis import given, settings
from hypothesis import strategies as st

import fsm
from fsm.automata import Ref, Val, alt, expansion_size, lit, node_to_char_dfa, seq
from fsm.automata.pushdown import pushdown_dfa
from fsm.automata.shared import share_values
from fsm.json.schema import JsonSchema
from fsm.testing import accepts

from .json_helpers import compact, validator

BYTES = fsm.Vocabulary([bytes([i]) for i in range(256)] + [None], eos_token_ids=[256])

# levels in phases of 2 and 3: a member's value at each level meets the next phase of both, so the
# same conjunctions recur only every 6 levels, each level referring to the next from two places
SCHEMA = {
    "allOf": [{"$ref": "#/definitions/node"}, {"$ref": "#/definitions/p0"}, {"$ref": "#/definitions/q0"}],
    "definitions": {
        "node": {
            "type": "object",
            "properties": {"n": {"$ref": "#/definitions/node"}, "v": {"type": "integer", "minimum": 0}},
            "required": ["v"],
        },
        "p0": {"additionalProperties": {"allOf": [{"$ref": "#/definitions/p1"}, {"multipleOf": 2}]}},
        "p1": {"additionalProperties": {"$ref": "#/definitions/p0"}, "required": ["n"]},
        "q0": {"additionalProperties": {"allOf": [{"$ref": "#/definitions/q1"}, {"multipleOf": 3}]}},
        "q1": {"additionalProperties": {"$ref": "#/definitions/q2"}, "required": ["n"]},
        "q2": {"additionalProperties": {"$ref": "#/definitions/q0"}, "required": ["n"]},
    },
}
_INDEX: dict = {}


def _index():
    if "i" not in _INDEX:
        start = time.process_time()
        _INDEX["i"] = fsm.compile(JsonSchema(SCHEMA, exact=True), BYTES, cache=False)
        assert time.process_time() - start < fsm.Limits().max_seconds
    return _INDEX["i"]


def _doc(depth: int, values: list[int], extra: bool):
    """Members in the declared order (``n``, ``v``), then an undeclared one: the order generated."""
    doc: dict = {"n": _doc(depth - 1, values[1:] + values[:1], not extra)} if depth else {}
    doc["v"] = values[0]
    if extra:
        doc["w"] = values[1]
    return doc


@settings(max_examples=80, deadline=None)
@given(
    depth=st.integers(0, 13),
    values=st.lists(st.sampled_from([0, 6, 12, 3, 2, 7]), min_size=3, max_size=3),
    extra=st.booleans(),
)
def test_phased_levels_accept_exactly_the_valid_documents(depth, values, extra):
    doc = _doc(depth, values, extra)
    assert accepts(_index(), compact(doc)) == validator(SCHEMA, formats=False).is_valid(doc), json.dumps(doc)


def test_a_shared_value_becomes_one_rule_with_the_same_language():
    v = Val(alt(*[lit(f"<{i:02}>") for i in range(40)]))
    root, rules = share_values(seq(lit("["), v, lit(","), v, lit("]")), {})
    assert isinstance(root.items[1], Ref) and len(rules) == 1
    d = pushdown_dfa(root, rules).as_byte_dfa()
    plain = node_to_char_dfa(seq(lit("["), v, lit(","), v, lit("]")))
    for text in ("[<01>,<39>]", "[<01>,<40>]", "[<01><02>]", "[<07>,<07>]"):
        assert d.accepts(text.encode()) == plain.accepts(text), text


def test_equal_subtrees_that_are_different_objects_become_one_rule():
    """A bundled schema writes a subschema out at each use: equal values, not one object."""
    v1 = Val(alt(*[lit(f"<{i:02}>") for i in range(40)]))
    v2 = Val(alt(*[lit(f"<{i:02}>") for i in range(40)]))
    assert v1 is not v2
    root, rules = share_values(seq(lit("["), v1, lit(","), v2, lit("]")), {})
    assert root.items[1] == root.items[3] and isinstance(root.items[1], Ref) and len(rules) == 1


def _bundled(depth: int) -> dict:
    """Objects nested ``depth`` deep, each member's schema a fresh copy of the level below (a
    ``$ref`` inlined at each use): 7^depth copies of the leaf's enum as a tree."""
    if depth == 0:
        return {"enum": [f"value-number-{i:03}" for i in range(40)]}
    return {"type": "object", "properties": {n: _bundled(depth - 1) for n in "abcdefg"}, "required": ["a"]}


def _bundled_doc(depth: int, seed: int, flaw: str = ""):
    """A valid document, or one ``flaw`` on its last path: a value out of the enum, no "a"."""
    if depth == 0:
        return f"value-number-{41 if flaw == 'enum' else seed * 7 % 40:03}"
    names = "abcdefg"[: 2 + seed % 5]
    doc = {
        n: _bundled_doc(depth - 1, seed + i + 1, flaw if n == names[-1] else "") for i, n in enumerate(names)
    }
    if flaw == "required" and depth == 1:
        del doc["a"]
    return doc


def test_a_bundled_schema_over_the_estimate_compiles_as_rules_and_stays_exact():
    schema = _bundled(4)
    spec = JsonSchema(schema)
    assert expansion_size(spec.tree(), nfa=True) > 20 * fsm.Limits().max_regex_positions
    # refused by the estimate before the rules; compiled within a wide wall-clock deadline (CI's
    # two workers on two shared cores took over 10 s for ~3 s alone): its speed is the benchmarks'
    index = fsm.compile(spec, BYTES, cache=False, limits=fsm.Limits(max_seconds=120))
    check = validator(schema, formats=False)
    verdicts = set()
    for seed in range(40):
        doc = _bundled_doc(4, seed, ("", "enum", "required")[seed % 3])
        verdicts.add(check.is_valid(doc))
        assert accepts(index, compact(doc)) == check.is_valid(doc), json.dumps(doc)
    assert verdicts == {True, False}
