"""Exact mode on what cases written outside the project asked for (issue 22): negated RFC formats (a
``oneOf`` whose branches differ by a ``format``), integers of any length (bignums), many
``patternProperties`` key regions, negations of deeply nested schemas and recursion through
combined schemas. Each against ``jsonschema``: accepted iff it validates.
"""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

import fsm
from fsm.json.schema import JsonSchema
from fsm.testing import accepts

from .json_helpers import compact, validator

BYTES = fsm.Vocabulary([bytes([i]) for i in range(256)] + [None], eos_token_ids=[256])

# near misses of each format: valid samples with one character changed, dropped or doubled
SAMPLES = {
    "date": ["1963-06-19", "2020-02-29", "2021-02-29"],
    # (no leap seconds: jsonschema's date-time checker refuses some RFC 3339 allows, a known difference)
    "date-time": ["1963-06-19T08:30:06.283185Z", "1998-12-31T23:59:59Z", "1990-12-31T15:59:59-08:00"],
    "time": ["08:30:06Z", "23:59:59Z", "12:00:00+01:30"],
    "ipv4": ["192.168.0.1", "255.255.255.255", "1.2.3.4"],
    "ipv6": ["::1", "2001:db8::8a2e:370:7334", "::ffff:192.168.0.1"],
    "json-pointer": ["/foo/bar~0/baz~1", "", "/a~01"],
    "relative-json-pointer": ["1", "0/foo", "2#"],
}
EDIT_CHARS = ":/.-T0Z9a@[]% ~#?"
# formats left out are no exact complement here: uri and iri (//:/b is valid, our grammar says no),
# uuid, duration, uri-template (jsonschema reads them more widely)


def _near(sample: str, pos: int, how: int, ch: str) -> str:
    if not sample:
        return ch
    pos %= len(sample)
    if how == 0:
        return sample[:pos] + ch + sample[pos + 1 :]
    if how == 1:
        return sample[:pos] + sample[pos + 1 :]
    return sample[:pos] + ch + sample[pos:]


@settings(max_examples=200, deadline=None)
@given(
    fmt=st.sampled_from(sorted(SAMPLES)),
    edits=st.lists(
        st.tuples(st.integers(0, 40), st.integers(0, 2), st.sampled_from(EDIT_CHARS), st.integers(0, 2)),
        min_size=4,
        max_size=8,
    ),
)
def test_a_negated_rfc_format_accepts_exactly_the_strings_that_break_it(fmt, edits):
    """``not: {format}`` (and a oneOf told apart by it) is the complement of the RFC grammar."""
    schema = {"oneOf": [{"type": "string", "format": fmt}, {"type": "string", "maxLength": 12}]}
    v = validator(schema)
    index = fsm.compile(JsonSchema(schema, exact=True, assert_format=True), BYTES, cache=False)
    samples = SAMPLES[fmt]
    texts = {*samples, *(_near(samples[k % len(samples)], p, h, c) for p, h, c, k in edits)}
    for s in texts:
        text = json.dumps(s, ensure_ascii=False)
        assert accepts(index, text) == v.is_valid(s), (schema, s)


@settings(max_examples=40, deadline=None)
@given(
    digits=st.integers(21, 308),
    sign=st.sampled_from(["", "-"]),
    kind=st.sampled_from([{"type": "integer"}, {"type": "number"}, {"minimum": 5}, {"maximum": -3}]),
    frac=st.sampled_from(["", ".5", ".0", "e3"]),
)
def test_exact_mode_takes_integers_of_any_length(digits, sign, kind, frac):
    """A bignum is an integer like any other: no digit cap on an open side in exact mode."""
    schema = {**kind}
    text = sign + "9" + "1" * (digits - 1) + frac
    index = fsm.compile(JsonSchema(schema, exact=True), BYTES, cache=False)
    valid = validator(schema).is_valid(json.loads(text))
    if frac:
        # exponents and fractions of long numbers (which may parse to an integral double) are
        # spellings not generated: never accepted when invalid
        assert not accepts(index, text) or valid, (schema, text)
        return
    assert accepts(index, text) == valid, (schema, text)


NAMES = st.text(alphabet="abcxyz:_", min_size=1, max_size=4)


@settings(max_examples=25, deadline=None)
@given(
    names=st.lists(NAMES, min_size=17, max_size=30, unique=True),
    repeat=st.booleans(),
    keys=st.lists(NAMES, min_size=1, max_size=3, unique=True),
    value=st.sampled_from([1, "s", None]),
)
def test_many_disjoint_patterns_split_keys_into_many_regions(names, repeat, keys, value):
    """Anchored names (disjoint patterns, one region each) past the old 16-region cap; a pattern
    written again by another conjunct splits nothing more."""
    pats = {f"^{n}$": {"type": ["integer", "string"][i % 2]} for i, n in enumerate(names)}
    schema = {"type": "object", "patternProperties": pats, "additionalProperties": {"type": "null"}}
    if repeat:
        schema = {"allOf": [schema, {"patternProperties": {f"^{names[0]}$": {"minimum": 3}}}]}
    v = validator(schema)
    index = fsm.compile(JsonSchema(schema, exact=True), BYTES, cache=False)
    for k in [*keys, names[0], names[1]]:
        doc = {k: value}
        assert accepts(index, compact(doc)) == v.is_valid(doc), (schema, doc)


def _nested(depth: int, leaf: dict) -> dict:
    schema = leaf
    for i in range(depth):
        schema = {"type": "object", "properties": {f"k{i % 3}": schema}, "required": [f"k{i % 3}"]}
    return schema


@settings(max_examples=20, deadline=None)
@given(depth=st.integers(14, 30), leaf_value=st.sampled_from([1, "a", 2.5]))
def test_one_of_branches_differing_deep_inside_are_exact(depth, leaf_value):
    """Negating a branch looks as deep as the schema goes (it stopped at 16 levels)."""
    a, b = _nested(depth, {"type": "integer"}), _nested(depth, {"type": "number"})
    schema = {"oneOf": [a, b]}
    v = validator(schema)
    index = fsm.compile(JsonSchema(schema, exact=True), BYTES, cache=False)
    doc = leaf_value
    for i in reversed(range(depth)):
        doc = {f"k{i % 3}": doc}
    assert accepts(index, compact(doc)) == v.is_valid(doc)


def test_recursion_through_combined_schemas_past_forty_levels():
    """Periodic additionalProperties chains (periods 2, 3 and 5) met again only after 30 levels, and a
    negated 29-level const: each conjunction a rule once it recurs (the cap was 40 open ones)."""
    chain = {}
    for name, period in (("x", 2), ("y", 3), ("z", 5)):
        for i in range(period):
            chain[f"{name}{i}"] = {
                "additionalProperties": {"$ref": f"#/definitions/{name}{(i + 1) % period}"}
            }
    witness: dict = {}
    for _ in range(29):
        witness = {"a": witness}
    schema = {
        "allOf": [
            {"$ref": "#/definitions/word"},
            *({"$ref": f"#/definitions/{n}0"} for n in "xyz"),
            {"not": {"const": witness}},
        ],
        "definitions": {
            "word": {
                "type": "object",
                "properties": {"a": {"$ref": "#/definitions/word"}},
                "additionalProperties": False,
            },
            **chain,
        },
    }
    v = validator(schema)
    index = fsm.compile(JsonSchema(schema, exact=True), BYTES, cache=False)
    for depth in (0, 1, 5, 28, 29, 30, 31, 45):
        doc: dict = {}
        for _ in range(depth):
            doc = {"a": doc}
        assert accepts(index, compact(doc)) == v.is_valid(doc), depth
    assert not accepts(index, compact({"b": {}}))


@settings(max_examples=30, deadline=None)
@given(
    names=st.lists(NAMES, min_size=1, max_size=4, unique=True),
    pattern=st.sampled_from(["^x", "a$", "^[a-c]+$", ":"]),
    kw=st.sampled_from(["anyOf", "oneOf"]),
    keys=st.lists(NAMES, min_size=1, max_size=3, unique=True),
)
def test_property_names_with_branches_of_string_schemas(names, pattern, kw, keys):
    """``propertyNames`` through anyOf/oneOf (an enum beside a pattern): the key language is the
    strings the branches make, read back decoded."""
    names_schema = {kw: [{"enum": names}, {"type": "string", "pattern": pattern}]}
    schema = {"type": "object", "propertyNames": names_schema, "additionalProperties": {"type": "integer"}}
    v = validator(schema)
    index = fsm.compile(JsonSchema(schema, exact=True), BYTES, cache=False)
    for k in [*keys, *names]:
        doc = {k: 1}
        assert accepts(index, compact(doc)) == v.is_valid(doc), (schema, doc)


@settings(max_examples=30, deadline=None)
@given(
    tag=st.sampled_from(["a", "b"]),
    extra=st.sampled_from([{}, {"k": 1}, {"k": "s"}]),
)
def test_one_of_closed_objects_beside_an_any_of_are_told_apart(tag, extra):
    """A oneOf branch whose conjuncts hold an anyOf still gives its required names and closed
    members: a branch requiring a name the other (closed) one does not declare excludes it."""
    schema = {
        "oneOf": [
            {
                "type": "object",
                "required": ["a"],
                "properties": {"a": {}, "k": {}},
                "additionalProperties": False,
            },
            {
                "anyOf": [{"required": ["k"]}, {"maxProperties": 1}],
                "required": ["b"],
                "properties": {"b": {}, "k": {"type": "integer"}},
                "additionalProperties": False,
            },
        ]
    }
    v = validator(schema)
    index = fsm.compile(JsonSchema(schema, exact=True), BYTES, cache=False)
    doc = {tag: None, **extra}
    assert accepts(index, compact(doc)) == v.is_valid(doc), doc


NESTED = st.recursive(
    st.integers(-3, 9) | st.text("ab", max_size=2), lambda c: st.lists(c, max_size=3), max_leaves=8
)


@settings(max_examples=40, deadline=None)
@given(
    top=st.integers(0, 6),
    max_items=st.integers(1, 3),
    pointer=st.booleans(),
    docs=st.lists(NESTED, min_size=3, max_size=6),
)
def test_a_dynamic_ref_with_one_dynamic_anchor_is_a_ref(top, max_items, pointer, docs):
    """``$dynamicRef`` with a single ``$dynamicAnchor`` of its name in the document resolves
    statically (recursive here: a rule of the pushdown automaton); the anchor named by a plain-name
    fragment, or a $defs entry holding it."""
    node = {
        "$dynamicAnchor": "node",
        "type": "array",
        "maxItems": max_items,
        "items": {"anyOf": [{"type": "integer", "maximum": top}, {"$dynamicRef": "#node"}]},
    }
    schema = {"$defs": {"n": node}, "$ref": "#/$defs/n"} if pointer else node
    v = validator(schema)
    index = fsm.compile(JsonSchema(schema, exact=True), BYTES, cache=False)
    for doc in docs:
        assert accepts(index, compact(doc)) == v.is_valid(doc), (schema, doc)
