"""Formats: the generation subset (`formats.FORMATS`) and, in exact mode with ``assert_format=True``,
the RFC grammars (`formats.RFC_FORMATS`), checked on the official suite's ``optional/format`` tests
(written outside the project) and on the cases issue 22 lists."""

from __future__ import annotations

import glob
import json
import os

import pytest

import fsm
from fsm.errors import SpecError
from fsm.json.schema import JsonSchema
from fsm.testing import accepts

FORMAT_DIR = os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
    "data",
    "json-schema-test-suite",
    "draft2020-12",
    "optional",
    "format",
)
FILES = sorted(glob.glob(os.path.join(FORMAT_DIR, "*.json")))


@pytest.mark.parametrize("path", FILES, ids=[os.path.basename(p)[:-5] for p in FILES])
def test_optional_format_suite_no_invalid_accepted_in_either_mode(path, vocab):
    """Both languages reject every invalid instance; the RFC grammar accepts at least what the subset does."""
    with open(path) as f:
        groups = json.load(f)
    for g in groups:
        indexes = []
        for opts in ({}, {"exact": True, "assert_format": True}):
            try:
                indexes.append(fsm.compile(JsonSchema(g["schema"], **opts), vocab, cache=False))
            except SpecError:
                indexes.append(None)
        for t in g["tests"]:
            text = json.dumps(t["data"], separators=(",", ":"), ensure_ascii=False)
            got = [i is not None and accepts(i, text) for i in indexes]
            if not t["valid"]:
                assert got == [False, False], (g["description"], t["description"], got)
            elif isinstance(t["data"], str):
                assert got[1] or not got[0], (g["description"], t["description"])


RFC_CASES = [
    ("uri", ["ftp://user:pass@host/", "http://[v1.test]/"], ["http://a b"]),
    ("email", ['"joe bloggs"@example.com', "joe.bloggs@[127.0.0.1]", "x@[IPv6:::1]"], ["a@b@c"]),
    (
        "date-time",
        ["1963-06-19t08:30:06.283185z", "1998-12-31T23:59:60Z", "1998-12-31T15:59:60.123-08:00"],
        ["1998-12-31T22:59:60Z"],
    ),
    ("time", ["23:59:60Z", "08:30:06z"], ["23:59:60+01:00"]),
    ("hostname", ["a" * 63 + ".com", ".".join(["a" * 63] * 3) + "." + "b" * 61], ["a" * 64, "xn--X"]),
    ("duration", ["P01234D", "P1Y2M3DT4H5M6S", "P2W"], ["P1Y2D", "PT1H2S"]),
    (
        "uri-template",
        ["{x_y_z*}", "http://example.com/dictionary/{term:1}/{term}", "{v:9999}", "a'b"],
        ["{,+var}"],
    ),
    ("iri", ["http://ƒøø.ßår/?∂éœ=πîx#πîüx", "http://ƒøø.ßår/\U00010300"], ["http://a b", "/âππ"]),
    ("iri-reference", ["/âππ", "#ƒrägmênt"], ["\\\\WINDOWS\\filëßåré"]),
    ("relative-json-pointer", ["120/foo/bar", "100", "0#"], ["01", "/foo"]),
]


@pytest.mark.parametrize(("fmt", "valid", "invalid"), RFC_CASES, ids=[c[0] for c in RFC_CASES])
def test_exact_mode_asserts_the_rfc_grammars(fmt, valid, invalid, vocab, tokenizer):
    index = fsm.compile(
        JsonSchema({"type": "string", "format": fmt}, exact=True, assert_format=True), vocab, cache=False
    )
    for s in valid:
        assert accepts(index, json.dumps(s, ensure_ascii=False), tokenizer), (fmt, s)
    for s in invalid:
        assert not accepts(index, json.dumps(s, ensure_ascii=False), tokenizer), (fmt, s)


def test_hostname_length_limit_holds_in_exact_mode(vocab):
    spec = JsonSchema({"type": "string", "format": "hostname"}, exact=True, assert_format=True)
    index = fsm.compile(spec, vocab, cache=False)
    name = ".".join(["a" * 63] * 4)  # 255 characters
    assert not accepts(index, json.dumps(name))
    assert accepts(index, json.dumps(name[:253].rstrip(".")))


def test_format_is_an_annotation_in_exact_mode_unless_asserted():
    schema = {"type": "string", "format": "date"}
    assert JsonSchema(schema, exact=True).to_dfa().accepts(b'"yesterday"')
    assert not JsonSchema(schema, exact=True, assert_format=True).to_dfa().accepts(b'"yesterday"')
    assert JsonSchema(schema, assert_format=False).to_dfa().accepts(b'"yesterday"')
    # a custom metaschema may turn format-assertion on; its vocabularies are not read: asserted
    custom = {"$schema": "http://localhost:1234/draft2020-12/format-assertion-true.json", **schema}
    assert not JsonSchema(custom, exact=True).to_dfa().accepts(b'"yesterday"')
