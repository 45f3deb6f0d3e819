"""``$dynamicRef`` resolved by its dynamic scope (`fsm.json.dynamic_scope`)."""

import itertools
import json
import os

import pytest

import fsm
from fsm.json import dynamic_scope
from fsm.json.refs import static_dynamic_refs
from fsm.testing import accepts

from .json_helpers import compact, suite_remotes

_SUITE = os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "json-schema-test-suite"
)


@pytest.fixture(scope="module")
def byte_vocab():
    return fsm.Vocabulary([bytes([b]) for b in range(256)] + [None], eos_token_ids=[256])


def _accepts_some_order(idx, data) -> bool:
    """Exact mode writes an object's members in declared order: a valid object counts when some
    order of its members is accepted."""
    if not isinstance(data, dict) or len(data) > 5:
        return accepts(idx, compact(data))
    return any(accepts(idx, compact(dict(p))) for p in itertools.permutations(data.items()))


def test_the_outermost_dynamic_anchor_in_scope_is_the_target(byte_vocab):
    # a generic list whose items are whatever the schema that entered it calls "item"
    generic = {
        "$id": "urn:list",
        "type": "array",
        "items": {"$dynamicRef": "#item"},
        "$defs": {"default": {"$dynamicAnchor": "item", "type": "string"}},
    }
    ints = {
        "$id": "urn:ints",
        "$ref": "urn:list",
        "$defs": {"i": {"$dynamicAnchor": "item", "type": "integer"}},
    }
    idx = fsm.compile(
        fsm.JsonSchema(ints, exact=True, resources={"urn:list": generic}), byte_vocab, cache=False
    )
    assert accepts(idx, "[1,2]") and not accepts(idx, '["a"]')
    # entered directly, the list's own anchor is the outermost one in scope
    idx = fsm.compile(fsm.JsonSchema(generic, exact=True), byte_vocab, cache=False)
    assert accepts(idx, '["a"]') and not accepts(idx, "[1]")


def test_a_recursive_dynamic_reference_stays_a_recursion(byte_vocab):
    tree = {
        "$id": "urn:tree",
        "$dynamicAnchor": "node",
        "type": "object",
        "properties": {"kids": {"type": "array", "items": {"$dynamicRef": "#node"}}},
    }
    strict = {
        "$id": "urn:strict",
        "$dynamicAnchor": "node",
        "$ref": "urn:tree",
        "properties": {"name": {"type": "string"}},
        "required": ["name"],
    }
    idx = fsm.compile(
        fsm.JsonSchema(strict, exact=True, resources={"urn:tree": tree}), byte_vocab, cache=False
    )
    # members in declared order (the $ref target's first)
    assert accepts(idx, compact({"kids": [{"kids": [{"name": "c"}], "name": "b"}], "name": "a"}))
    assert not _accepts_some_order(idx, {"kids": [{"kids": []}], "name": "a"})  # a nested node needs a name


def test_too_many_copies_is_a_budget_error(monkeypatch, byte_vocab):
    monkeypatch.setattr(dynamic_scope, "MAX_COPIES", 1)
    s = {
        "$dynamicAnchor": "a",
        "$defs": {"x": {"$dynamicAnchor": "b"}},
        "items": [{"$dynamicRef": "#a"}, {"$dynamicRef": "#/$defs/x"}],
    }
    s["$defs"]["x"]["$id"] = "urn:x"
    with pytest.raises(fsm.SchemaTooComplex, match="copies"):
        fsm.JsonSchema({**s, "$defs": {**s["$defs"], "y": {"$dynamicAnchor": "a"}}}, draft=2020)


def test_the_suites_dynamic_ref_groups_agree(byte_vocab):
    """dynamicRef.json (draft 2020-12), its remotes given: every group compiles; no invalid instance
    is accepted; every valid one is accepted in some member order (strict-tree's too: its
    ``unevaluatedProperties`` sees what the in-place ``$ref`` evaluates)."""
    with open(os.path.join(_SUITE, "draft2020-12", "dynamicRef.json")) as f:
        groups = json.load(f)
    resources = suite_remotes()
    missed = []
    for g in groups:
        idx = fsm.compile(
            fsm.JsonSchema(g["schema"], exact=True, resources=resources), byte_vocab, cache=False
        )
        for t in g["tests"]:
            if not t["valid"]:
                assert not accepts(idx, compact(t["data"])), (g["description"], t["description"])
            elif not _accepts_some_order(idx, t["data"]):
                missed.append(g["description"])
    assert missed == [], missed


def test_the_suites_recursive_ref_groups_agree(byte_vocab):
    """recursiveRef.json (draft 2019-09): ``$recursiveAnchor: true`` read as a nameless dynamic
    anchor; every group compiles and every instance is accepted exactly when valid (in some order)."""
    with open(os.path.join(_SUITE, "draft2019-09", "recursiveRef.json")) as f:
        groups = json.load(f)
    resources = suite_remotes()
    for g in groups:
        spec = fsm.JsonSchema(g["schema"], exact=True, draft=2019, resources=resources)
        idx = fsm.compile(spec, byte_vocab, cache=False)
        for t in g["tests"]:
            got = _accepts_some_order(idx, t["data"]) if t["valid"] else accepts(idx, compact(t["data"]))
            assert got == t["valid"], (g["description"], t["description"])


def test_a_schema_without_dynamic_refs_is_not_copied():
    plain = {"$dynamicAnchor": "n", "properties": {"a": {"$ref": "#n"}}, "enum": [{"$dynamicRef": "#n"}]}
    assert static_dynamic_refs(plain) is plain  # a $dynamicRef inside a value is data, not a ref
    dyn = {"$dynamicAnchor": "n", "items": {"$dynamicRef": "#n"}}
    out = static_dynamic_refs(dyn)
    assert out is not dyn and out["items"] == {"$ref": "#n"} and dyn["items"] == {"$dynamicRef": "#n"}
