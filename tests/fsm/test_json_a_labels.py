# ruff: noqa: RUF001  (the point of these names is their non-ASCII letters)
"""Host names with A-labels (``xn--``) in exact mode (`fsm.json.a_labels`): the official suite's
A-label cases of ``hostname`` and ``idn-hostname`` (draft 2020-12) as the suite says, under the
real tokenizer and byte by byte; random punycode labels accepted exactly when they decode to a
valid U-label that encodes back; names inside objects; random walks only finish on valid names.
"""

from __future__ import annotations

import json
import os
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fsm
from fsm.index import GuardedDfaIndex
from fsm.json.a_labels import a_label_ok
from fsm.json.schema import JsonSchema
from fsm.testing import accepts, random_walk

idna = pytest.importorskip("idna")

SUITE = os.path.join(os.path.dirname(__file__), "..", "data", "json-schema-test-suite")
BYTES = fsm.Vocabulary([bytes([i]) for i in range(256)] + [None], eos_token_ids=[256])
LIMITS = fsm.Limits(max_seconds=120)  # CI's two workers share two cores


def _index(schema, vocab, draft=2020):
    spec = JsonSchema(schema, exact=True, assert_format=True, draft=draft)
    return fsm.compile(spec, vocab, cache=False, limits=LIMITS)


def _suite_cases():
    out = []
    for folder, draft in (("draft2020-12", 2020),):  # the repo's copy of the suite's format tests
        for fmt in ("hostname", "idn-hostname"):
            path = os.path.join(SUITE, folder, "optional", "format", f"{fmt}.json")
            with open(path, encoding="utf-8") as f:
                groups = json.load(f)
            for group in groups:
                for test in group["tests"]:
                    data = test["data"]
                    if isinstance(data, str) and "xn--" in data.lower():
                        out.append((folder, draft, fmt, data, test["valid"]))
    return out


CASES = _suite_cases()


def test_the_suite_has_a_label_cases():
    assert sum(valid for *_, valid in CASES) >= 15 and sum(not v for *_, v in CASES) >= 25


@pytest.mark.parametrize(("folder", "draft", "fmt", "data", "valid"), CASES)
def test_suite_a_labels_as_the_suite_says(folder, draft, fmt, data, valid, vocab, tokenizer):
    text = json.dumps(data, ensure_ascii=False)
    assert accepts(_index({"format": fmt}, BYTES, draft), text) == valid, (folder, data)
    assert accepts(_index({"format": fmt}, vocab, draft), text, tokenizer) == valid, (folder, data)


PUNYCODE = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-", min_size=1, max_size=12)


@settings(max_examples=300, deadline=None)
@given(body=PUNYCODE, upper=st.booleans())
def test_random_punycode_labels_are_accepted_exactly_when_they_decode(body, upper):
    label = ("XN--" if upper else "xn--") + body
    want = a_label_ok(label) and not label.endswith("-")
    try:  # the reference: idna decodes it to a U-label that encodes back
        ref = idna.encode(idna.decode(label)).decode() == label.lower()
    except (idna.IDNAError, UnicodeError, ValueError):
        ref = False
    assert a_label_ok(label) == ref
    assert accepts(HOST_BYTES, json.dumps(f"{label}.example")) == want, label


HOST_BYTES = _index({"format": "hostname"}, BYTES)


def test_a_labels_inside_an_object(vocab, tokenizer):
    schema = {
        "type": "object",
        "properties": {"host": {"type": "string", "format": "hostname"}, "n": {"type": "integer"}},
        "required": ["host", "n"],
    }
    index = _index(schema, vocab)
    assert isinstance(index, GuardedDfaIndex)
    for host, valid in [
        ("xn--9n2bp8q.xn--9t4b11yi5a", True),
        ("xn--X", False),
        ("a.b", True),
        ("xn--hello-txk", False),
    ]:
        text = json.dumps({"host": host, "n": 1}, separators=(",", ":"))
        assert accepts(index, text, tokenizer) == valid, host


@pytest.mark.parametrize("pattern", [None, "^xn--"])
def test_random_walks_finish_on_valid_names(pattern, vocab):
    schema = {"type": "string", "format": "hostname", **({"pattern": pattern} if pattern else {})}
    index = _index(schema, vocab)
    rnd = random.Random(0)
    names = []
    for _ in range(40):
        walk = random_walk(index, rnd, max_tokens=30)
        if walk.finished:
            names.append(json.loads(walk.text))
    for name in names:
        labels = [x for x in name.split(".") if x[:4].lower() == "xn--"]
        assert all(a_label_ok(x) for x in labels), name
    assert names or pattern, "no walk finished"


IDN_BYTES = _index({"format": "idn-hostname"}, BYTES)
LONG_PIECES = ["a", "z", "0", "-", "é", "ü", "ß", "α", "π", "실", "例", "א", "ب", "\u0301", "·", "."]


@settings(max_examples=150, deadline=None)
@given(label=st.lists(st.sampled_from(LONG_PIECES[:-1]), min_size=10, max_size=40).map("".join),
       rest=st.sampled_from(["", ".com", ".xn--9t4b11yi5a", "。例", ".a-b"]))  # fmt: skip
def test_long_u_labels_are_accepted_exactly_when_idna_encodes_them(label, rest):
    name = label + rest
    try:
        idna.encode(name)
        valid = True
    except (idna.IDNAError, UnicodeError, ValueError):
        valid = False
    assert accepts(IDN_BYTES, json.dumps(name, ensure_ascii=False)) == valid, name
