"""``$ref`` to documents outside the schema: given ``resources`` and the official metaschemas."""

import json
import os

import pytest

import fsm
from fsm.testing import accepts

from .json_helpers import compact, suite_remotes

_SUITE = os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "json-schema-test-suite"
)
DRAFTS = {4: "draft4", 6: "draft6", 7: "draft7", 2019: "draft2019-09", 2020: "draft2020-12"}


@pytest.fixture(scope="module")
def byte_vocab():
    return fsm.Vocabulary([bytes([b]) for b in range(256)] + [None], eos_token_ids=[256])


def _index(schema, vocab, **kw):
    return fsm.compile(fsm.JsonSchema(schema, exact=True, **kw), vocab, cache=False)


def test_refs_resolve_inside_a_remote_document_against_its_own_uri(byte_vocab):
    remote = {
        "$defs": {"n": {"type": "integer", "minimum": 3}, "both": {"$ref": "#/$defs/n"}},
        "$ref": "other.json",  # relative to the remote document's URI, not the referrer's
    }
    resources = {
        "http://x.test/dir/a.json": remote,
        "http://x.test/dir/other.json": {"type": "integer", "maximum": 5},
        "http://y.test/a.json": {"type": "string"},  # same file name elsewhere: must not be picked
    }
    idx = _index({"$ref": "http://x.test/dir/a.json#/$defs/both"}, byte_vocab, resources=resources)
    assert [accepts(idx, x) for x in ("3", "9", '"a"')] == [True, True, False]
    idx = _index({"$ref": "http://x.test/dir/a.json"}, byte_vocab, resources=resources)
    assert [accepts(idx, x) for x in ("5", "6", '"a"')] == [True, False, False]


def test_a_remote_documents_own_id_and_anchors_name_its_parts(byte_vocab):
    doc = {
        "$id": "http://real.test/schemas/s.json",  # refs inside resolve against this, not the retrieval URI
        "$defs": {"a": {"$anchor": "num", "type": "number"}, "b": {"$ref": "t.json"}},
    }
    resources = {"http://served.test/s.json": doc, "http://real.test/schemas/t.json": {"type": "boolean"}}
    idx = _index({"$ref": "http://served.test/s.json#num"}, byte_vocab, resources=resources)
    assert [accepts(idx, x) for x in ("1.5", "true")] == [True, False]
    idx = _index({"$ref": "http://served.test/s.json#/$defs/b"}, byte_vocab, resources=resources)
    assert [accepts(idx, x) for x in ("true", "1")] == [True, False]


def test_a_relative_id_in_an_embedded_resource_applies_once(byte_vocab):
    schema = {
        "$id": "http://x.test/root.json",
        "properties": {"list": {"$ref": "folder/"}},
        "$defs": {"baz": {"$id": "folder/", "type": "array", "items": {"$ref": "item.json"}}},
    }
    idx = _index(schema, byte_vocab, resources={"http://x.test/folder/item.json": {"type": "integer"}})
    assert accepts(idx, '{"list":[1,2]}') and not accepts(idx, '{"list":["a"]}')


def test_what_is_not_given_or_of_another_draft_is_refused_by_name(byte_vocab):
    with pytest.raises(fsm.UnsupportedSchema, match="not among the resources given") as e:
        _index({"$ref": "http://x.test/missing.json"}, byte_vocab)
    assert e.value.keyword == "$ref"
    other = {"$schema": "http://json-schema.org/draft-07/schema#", "items": [{"type": "integer"}]}
    with pytest.raises(fsm.UnsupportedSchema, match="draft 7 document, from a draft 2020"):
        _index({"$ref": "http://x.test/d7.json"}, byte_vocab, resources={"http://x.test/d7.json": other})
    for bad, match in (
        ([1], "must map URIs"),
        ({"a.json": {}}, "not an absolute URI"),
        ({"u:x": 3}, "must be a schema"),
    ):
        with pytest.raises(fsm.SchemaError, match=match):
            fsm.JsonSchema({}, resources=bad)


def test_resources_are_part_of_the_fingerprint():
    a = fsm.JsonSchema(
        {"$ref": "http://x.test/a.json"}, resources={"http://x.test/a.json": {"type": "integer"}}
    )
    b = fsm.JsonSchema(
        {"$ref": "http://x.test/a.json"}, resources={"http://x.test/a.json": {"type": "string"}}
    )
    assert a.fingerprint != b.fingerprint


def test_an_official_metaschema_needs_no_resource(byte_vocab):
    # the draft-07 metaschema (from jsonschema_specifications); its uniqueItems are ignored here
    idx = _index({"$ref": "http://json-schema.org/draft-07/schema#"}, byte_vocab, draft=7, lenient=True)
    assert accepts(idx, '{"minLength":2,"type":"string"}')  # exact mode: members in declared order
    assert not accepts(idx, '{"type":5}') and not accepts(idx, '{"minLength":-1}')


@pytest.mark.parametrize("draft", sorted(DRAFTS))
def test_the_suites_remote_ref_groups_compile_and_agree(byte_vocab, draft):
    """refRemote.json of each draft, its remotes served as the suite says: every group compiles, and
    every instance is accepted exactly when the suite says it is valid."""
    resources = suite_remotes()
    with open(os.path.join(_SUITE, DRAFTS[draft], "refRemote.json")) as f:
        groups = json.load(f)
    checked = 0
    for g in groups:
        idx = _index(g["schema"], byte_vocab, draft=draft, resources=resources)
        for t in g["tests"]:
            assert accepts(idx, compact(t["data"])) == t["valid"], (g["description"], t["description"])
            checked += 1
    assert checked >= 17
