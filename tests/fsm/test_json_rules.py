"""A recursive ``$ref`` beside other keywords (`fsm.json.rules`): random recursive schemas whose
recursion goes through ``allOf``/``anyOf`` with sibling constraints, and random nested objects,
against ``jsonschema`` in exact mode — accepted iff valid (objects of at most one member, so member
order cannot matter).
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fsm
from fsm.json.schema import JsonSchema
from fsm.testing import accepts

from .json_helpers import compact, validator

BYTES = fsm.Vocabulary([bytes([i]) for i in range(256)] + [None], eos_token_ids=[256])
SIBLINGS = st.sampled_from(
    [
        {},
        {"required": ["v"]},
        {"maxProperties": 1},
        {"properties": {"v": {"type": "integer"}}},
        {"not": {"required": ["k"]}},
    ]
)


def _schema(wrap: str, sibling: dict, root: dict) -> dict:
    node = (
        {"allOf": [{"$ref": "#/$defs/n"}, sibling]}
        if wrap == "allOf"
        else {"anyOf": [{"$ref": "#/$defs/n"}, sibling]}
    )
    n = {"type": "object", "properties": {"k": node, "v": {"type": ["integer", "string"]}}, **root}
    return {"$defs": {"n": n}, "$ref": "#/$defs/n"}


SCHEMAS = st.builds(_schema, st.sampled_from(["allOf", "anyOf"]), SIBLINGS, SIBLINGS)
LEAVES = st.sampled_from([{}, {"v": 1}, {"v": "s"}, {"k": 1}, {"x": None}])
DOCS = st.recursive(LEAVES, lambda kids: st.builds(lambda d: {"k": d}, kids), max_leaves=6)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema=SCHEMAS, docs=st.lists(DOCS, min_size=8, max_size=8))
def test_recursion_beside_keywords_accepts_exactly_what_jsonschema_validates(schema, docs):
    index = fsm.compile(JsonSchema(schema, exact=True), BYTES, cache=False)
    v = validator(schema, formats=False)
    for doc in docs:
        assert accepts(index, compact(doc)) == v.is_valid(doc), (schema, doc)
