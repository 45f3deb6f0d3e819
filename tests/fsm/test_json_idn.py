# ruff: noqa: RUF001  (the point of these names is their non-ASCII letters)
"""``idn-hostname`` and ``idn-email`` in exact mode (`fsm.json.idn`): random names over letters that
IDNA2008 allows, forbids or allows only in context, checked against ``jsonschema``'s format checker
(the ``idna`` package) — every accepted name is valid; and the suite's plain cases are accepted.
"""

from __future__ import annotations

import json
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fsm
from fsm.json.schema import JsonSchema
from fsm.testing import accepts

from .json_helpers import validator

pytest.importorskip("idna")

BYTES = fsm.Vocabulary([bytes([i]) for i in range(256)] + [None], eos_token_ids=[256])
# ASCII, separators, PVALID left-to-right letters, uppercase, marks, right-to-left letters, contextual
# characters (middle dots, joiners, keraia, geresh), jamo, a disallowed one, an A-label prefix
PIECES = [
    *"abz09-.。．｡Aé실례테스트ßςα〇ぁ丈Ü",
    "\u0301", "\u0903", "א", "ב", "ب", "ي", "۽", "٠", "۰", "·", "・", "\u200d", "\u200c", "͵", "׳", "״", "\u1161",
    "〮", "xn--", "ǅ", "Ⅻ", "\u094d", "क", "l", "1", "α", "ァ",
]  # fmt: skip
NAMES = st.lists(st.sampled_from(PIECES), min_size=1, max_size=14).map("".join)


def _index(fmt: str):
    # ~3.3 s of CPU for idn-hostname alone: CI runs two test workers on a shared 2-core machine, where
    # the default 10 s budget was exceeded at collection time
    limits = fsm.Limits(max_seconds=120)
    return fsm.compile(
        JsonSchema({"format": fmt}, exact=True, assert_format=True), BYTES, cache=False, limits=limits
    )


HOST, EMAIL = _index("idn-hostname"), _index("idn-email")


@settings(max_examples=400, deadline=None)
@given(name=NAMES)
def test_an_accepted_idn_hostname_is_valid(name):
    if accepts(HOST, json.dumps(name, ensure_ascii=False)):
        assert validator({"format": "idn-hostname"}).is_valid(name), name


@settings(max_examples=200, deadline=None)
@given(local=NAMES, domain=NAMES)
def test_an_accepted_idn_email_has_a_valid_domain(local, domain):
    address = f"{local}@{domain}"
    if accepts(EMAIL, json.dumps(address, ensure_ascii=False)) and "@" not in local + domain:
        assert validator({"format": "idn-email"}).is_valid(address), address
        # the domain as validators read it: normalized (a decomposed letter is one, fsm.json.idn)
        nfc = unicodedata.normalize("NFC", domain)
        assert validator({"format": "idn-hostname"}).is_valid(nfc) or domain.startswith("["), address


@pytest.mark.parametrize(
    "name",
    ["실례.테스트", "a。b", "a．b", "a｡b", "ßς་〇", "a" * 63, "host-name", "é.example.com", "ab-é"],
)
def test_plain_idn_hostnames_are_accepted(name):
    assert accepts(HOST, json.dumps(name, ensure_ascii=False))


@pytest.mark.parametrize(
    "address", ["실례@실례.테스트", "δοκιμή@example.com", '"δοκιμή"@example.com', "𝕏@example.com"]
)
def test_plain_idn_emails_are_accepted(address):
    assert accepts(EMAIL, json.dumps(address, ensure_ascii=False))


@pytest.mark.parametrize(
    "name",
    # the suite's U-labels with context rules and right-to-left letters (RFC 5892 appendix A, RFC 5893)
    [
        "۽۾",
        "l·l",
        "α͵β",
        "א׳ב",
        "א״ב",
        "・ぁ",
        "・ァ",
        "・丈",
        "ب٠ب",
        "۰0",
        "क्\u200dष",
        "क्\u200cष",
        "بي\u200cبي",
        "א.com",
    ],
)
def test_contextual_and_right_to_left_u_labels_are_accepted(name):
    assert validator({"format": "idn-hostname"}).is_valid(name)
    assert accepts(HOST, json.dumps(name, ensure_ascii=False)), name


@pytest.mark.parametrize(
    "name",
    # out of context, a Bidi rule broken, a leading mark, a right-to-left name with a digit-first label
    [
        "a·l",
        "l·",
        "α͵S",
        "͵",
        "A׳ב",
        "׳ב",
        "def・abc",
        "・",
        "ب٠۰",
        "क\u200dष",
        "\u200d",
        "a\u200cb",
        "٠ب",
        "\u094dक",
        "א.1a",
    ],
)
def test_u_labels_out_of_context_are_rejected(name):
    assert not accepts(HOST, json.dumps(name, ensure_ascii=False)), name


# a letter and a combining mark, decomposed: the JSON-Schema-Test-Suite's "a domain label that is not
# in Unicode NFC is valid" (cafe + U+0301), marks that compose and marks that stay, inner hyphens
DECOMPOSED = ["user@cafe\u0301.com", "a@xe\u0301.cafe\u0301", "a@x\u0301-1.org", "a@ab-c\u0323d--e.fr"]


@pytest.mark.parametrize("address", DECOMPOSED)
def test_idn_email_domains_spelled_decomposed_are_accepted(address, vocab, tokenizer):
    nfc = unicodedata.normalize("NFC", address.split("@")[1])
    assert validator({"format": "idn-hostname"}).is_valid(nfc), nfc
    assert accepts(EMAIL, json.dumps(address, ensure_ascii=False)), address
    assert accepts(_email_index(vocab), json.dumps(address, ensure_ascii=False), tokenizer), address


@pytest.mark.parametrize(
    # a mark first, a leading or trailing hyphen, a hyphen pair at the 3rd and 4th characters once
    # composed (or an xn-- prefix), an uppercase letter (É is not PVALID)
    "domain",
    ["\u0301a.com", "-e\u0301.com", "e\u0301-.com", "ae\u0301--b.com", "xn--e\u0301.com", "E\u0301.com"],
)
def test_idn_email_domains_whose_nfc_is_no_host_name_are_rejected(domain):
    assert not validator({"format": "idn-hostname"}).is_valid(unicodedata.normalize("NFC", domain))
    assert not accepts(EMAIL, json.dumps("a@" + domain, ensure_ascii=False)), domain


_EMAIL_INDEXES: dict = {}


def _email_index(vocab):
    if vocab not in _EMAIL_INDEXES:
        schema = JsonSchema({"format": "idn-email"}, exact=True, assert_format=True)
        _EMAIL_INDEXES[vocab] = fsm.compile(schema, vocab, cache=False, limits=fsm.Limits(max_seconds=120))
    return _EMAIL_INDEXES[vocab]
