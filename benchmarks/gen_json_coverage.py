"""Generate docs/json-schema.md: every JSON Schema keyword, its status, a live probe, and its test.

Each row carries a probe schema that is compiled when the page is generated: a keyword marked
supported must compile, one marked unsupported must raise `UnsupportedSchema` naming it. The test
column points at the test that covers it (checked to exist). Run:

    python benchmarks/gen_json_coverage.py            # rewrites docs/json-schema.md
    python benchmarks/gen_json_coverage.py --check    # exits 1 if the page is stale
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import sys
import warnings
from pathlib import Path

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

S, P, U, A = "supported", "partial", "unsupported", "annotation"

# keyword, status, what is enforced, probe schema, test (file::function)
ROWS = [
    (
        "type",
        S,
        "single type or list; `integer` is a subtype of `number`; OpenAPI `nullable`",
        {"type": ["string", "null"]},
        "test_json_schema.py::test_any_of_all_of_merge_and_type_lists",
    ),
    (
        "enum",
        S,
        "values checked against the whole schema by a validator, then emitted as literals",
        {"enum": ["a", 1]},
        "test_json_schema.py::test_enum_const_filtered_by_the_rest_of_the_schema",
    ),
    (
        "const",
        S,
        "as enum",
        {"const": {"a": 1}},
        "test_json_schema.py::test_enum_const_filtered_by_the_rest_of_the_schema",
    ),
    (
        "properties",
        S,
        "in declared order; optional ones omittable",
        {"properties": {"a": {"type": "integer"}}},
        "test_json_schema.py::test_properties_in_declared_order_optional_omittable_required_present",
    ),
    (
        "required",
        S,
        "always present",
        {"properties": {"a": {"type": "integer"}}, "required": ["a"]},
        "test_json_schema.py::test_properties_in_declared_order_optional_omittable_required_present",
    ),
    (
        "additionalProperties",
        S,
        "false / schema / true; unspecified = no extra properties (flag to allow); "
        "extra keys come after the declared ones and never repeat a declared name",
        {"type": "object", "additionalProperties": {"type": "string"}},
        "test_json_schema.py::test_additional_properties_policy",
    ),
    (
        "patternProperties",
        S,
        "keys split by which patterns (of every conjunct) match them, up to 64 regions (a pattern written again "
        "splits nothing more); a key's value "
        "meets every matching pattern's schema, else additionalProperties",
        {"type": "object", "patternProperties": {"^x": {"type": "integer"}}},
        "test_json_objects.py::test_overlapping_patterns_from_several_schemas_meet_on_shared_keys",
    ),
    (
        "propertyNames",
        S,
        "string keywords (pattern, length, format, enum) on every key; anyOf/oneOf of them as the strings they make",
        {"type": "object", "additionalProperties": {"type": "integer"}, "propertyNames": {"maxLength": 3}},
        "test_json_schema.py::test_pattern_properties_and_property_names",
    ),
    (
        "minProperties / maxProperties",
        S,
        "counted over every member, declared, pattern and additional: a count the declared ones cannot "
        "reach is reached with extra keys (a repeated key, undefined in JSON Schema, is not detected)",
        {"type": "object", "minProperties": 2, "additionalProperties": {"type": "string"}},
        "test_json_objects.py::test_min_properties_reached_with_additional_properties",
    ),
    (
        "dependentRequired / dependentSchemas / dependencies",
        S,
        "as 'absent, or present with the dependents'",
        {
            "type": "object",
            "properties": {"a": {"type": "null"}, "b": {"type": "null"}},
            "dependentRequired": {"a": ["b"]},
        },
        "test_json_schema.py::test_dependent_required_and_schemas",
    ),
    (
        "items",
        S,
        "schema (2020-12) or array form (drafts 4-2019)",
        {"type": "array", "items": {"type": "integer"}},
        "test_json_schema.py::test_arrays_items_prefix_items_and_counts",
    ),
    (
        "prefixItems",
        S,
        "positional items",
        {"type": "array", "prefixItems": [{"type": "integer"}], "items": False},
        "test_json_schema.py::test_arrays_items_prefix_items_and_counts",
    ),
    (
        "additionalItems",
        S,
        "with array-form items",
        {
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "array",
            "items": [{"type": "null"}],
            "additionalItems": False,
        },
        "test_json_schema.py::test_arrays_items_prefix_items_and_counts",
    ),
    (
        "minItems / maxItems",
        S,
        "exact counts",
        {"type": "array", "items": {"type": "null"}, "minItems": 1, "maxItems": 3},
        "test_json_schema.py::test_arrays_items_prefix_items_and_counts",
    ),
    (
        "contains / minContains",
        P,
        "at least minContains matching items anywhere; not with prefixItems",
        {"type": "array", "items": {"type": "integer"}, "contains": {"const": 1}, "maxItems": 3},
        "test_json_schema.py::test_contains_and_unique_items_on_finite_sets",
    ),
    (
        "maxContains",
        P,
        "minContains..maxContains (at most 64) items match contains, the others its exact negation (see "
        "not); one contains, no prefixItems",
        {"type": "array", "items": {"type": "integer"}, "contains": {"const": 1}, "maxContains": 1},
        "test_json_conditionals.py::test_cases_accept_exactly_what_jsonschema_validates",
    ),
    (
        "maxContains (contains without an exact negation)",
        U,
        "e.g. contains with uniqueItems or a decimal multipleOf",
        {"type": "array", "contains": {"multipleOf": 0.5}, "maxContains": 1},
        "test_json_suite.py::test_invalid_instances_rejected_valid_ones_accepted_or_explained",
    ),
    (
        "uniqueItems",
        P,
        "true when items come from a finite set (emitted in a fixed order) or maxItems <= 1; in exact mode "
        "over any items (not beside contains): a check of the text where each item ends that it differs "
        "from the earlier ones (JSON equality: 1 = 1.0, members in any order), run by the matcher "
        "(`fsm.json.unique_items`; to_dfa/to_regex refuse it; a generation can run out of tokens after "
        "an item that cannot grow, such as a repeated true)",
        {"type": "array", "items": {"enum": [1, 2]}, "uniqueItems": True},
        "test_json_schema.py::test_contains_and_unique_items_on_finite_sets",
    ),
    (
        "minLength / maxLength",
        S,
        "decoded code points",
        {"type": "string", "minLength": 1, "maxLength": 3},
        "test_json_schema.py::test_strings_escapes_unicode_and_lengths",
    ),
    (
        "pattern",
        S,
        "on the decoded string, ECMA-262 search semantics (see regex dialects), JSON-escaped; "
        "lookaheads exact (intersections), in groups and ? groups; no lookbehind/backreference/\\b",
        {"type": "string", "pattern": "^[a-z]+$"},
        "test_json_pattern.py::test_pattern_language_is_sound",
    ),
    (
        "format",
        S,
        "date-time, date, time, duration, email, idn-email, hostname, idn-hostname, ipv4, ipv6, uuid, "
        "uri, uri-reference, iri, iri-reference, uri-template, json-pointer, relative-json-pointer, regex; "
        "other values are annotations; a validator-safe subset by default, the RFC grammars in exact mode "
        "with assert_format=True (see Formats)",
        {"type": "string", "format": "date-time"},
        "test_json_pattern.py::test_format_samples_pass_the_format_checker",
    ),
    (
        "minimum / maximum / exclusiveMinimum / exclusiveMaximum",
        S,
        "exact digit ranges; decimals compared as the double they parse to; draft-4 boolean exclusives",
        {"type": "number", "minimum": 0, "exclusiveMaximum": 1},
        "test_json_numbers.py::test_number_bounds_hold_for_the_parsed_double",
    ),
    (
        "multipleOf",
        S,
        "by decimal arithmetic (the decimal the schema wrote: 19.99 is a multiple of 0.01, where jsonschema's "
        "double division says no): a divisor's power of ten is trailing zeros, the rest a remainder automaton "
        "(over 100,000 states: SchemaTooComplex); a decimal divisor through its decimal expansion",
        {"type": "integer", "multipleOf": 7},
        "test_json_multiples.py::test_integer_divisors_accept_exactly_the_multiples",
    ),
    (
        "multipleOf (non-integral)",
        S,
        "e.g. 2.5, 0.01: integer part and fraction digits read as one integer; no exponent spellings (integers with a divisor 1/n, as 0.5: every integer, in any spelling)",
        {"type": "number", "multipleOf": 0.01},
        "test_json_multiples.py::test_decimal_divisors_accept_exactly_the_multiples",
    ),
    (
        "anyOf",
        S,
        "union; siblings intersected into each branch; a combination (anyOf/oneOf/allOf/not, any depth) of one "
        "scalar type's keywords is one boolean formula, not branches: patterns and lengths as one minimized "
        "string DFA, integer multipleOfs as one remainder automaton modulo their lcm",
        {"anyOf": [{"type": "string"}, {"type": "null"}]},
        "test_json_schema.py::test_any_of_all_of_merge_and_type_lists",
    ),
    (
        "oneOf",
        P,
        "as anyOf when branches provably exclude each other: no shared type; a finite branch whose values the "
        "validator finds invalid for the other; a member one branch requires whose values the two constrain "
        "disjointly (properties, a matching patternProperties, additionalProperties: false forbids it; discriminator "
        "enums through $ref, up to 4 levels), required vs not required, disjoint numeric ranges, each branch of an "
        "anyOf; with additionalProperties unspecified, a member one never generates. Types two branches take "
        "entirely (an untyped object discriminator: every string) and the values of finite branches two "
        "branches take are left out (valid for none: a not enum on the others). "
        "Else each branch intersected with the negations of the others when they have exact ones (see not: "
        "type difference, overlapping enums, numeric bounds, objects by required/properties/counts, arrays by "
        "length/items/contains, strings by pattern/length); exact as a boolean formula over one scalar type's keywords "
        "(see anyOf); else an error, or anyOf semantics with oneof='anyof'",
        {"oneOf": [{"type": "string"}, {"type": "integer"}]},
        "test_json_one_of.py::test_disjoint_branches_accept_what_jsonschema_validates",
    ),
    (
        "allOf",
        S,
        "merged keyword by keyword",
        {"allOf": [{"type": "integer"}, {"minimum": 1}]},
        "test_json_schema.py::test_any_of_all_of_merge_and_type_lists",
    ),
    (
        "not",
        P,
        "a schema is the conjunction of its keyword groups, so its negation is the union of theirs (De Morgan), "
        "each exact: type (not integer: the non-integral numbers), enum/const of any type (numbers as the "
        "intervals between them, arrays/objects by a differing length or member), required, properties (a "
        "declared member whose value breaks its schema; with patternProperties, additionalProperties or propertyNames, "
        "an undeclared member whose key and value break them), pattern/minLength/maxLength (a complemented string "
        "DFA), numeric bounds, an integral multipleOf (the non-multiples of at most 15 significant digits), "
        "min/maxProperties, min/maxItems, items/prefixItems, contains, dependencies, "
        "if/then/else, an asserted format in exact mode whose automaton is its RFC grammar (date, date-time, time, "
        "ipv4, ipv6, json-pointer, relative-json-pointer: "
        "a complemented DFA), anyOf/allOf/oneOf/not/$ref of those (any depth; $ref hops cut a recursive one); "
        "unknown keywords and unasserted formats are annotations",
        {"type": "string", "not": {"pattern": "^a"}},
        "test_json_schema.py::test_not_of_required_string_keywords_and_combinations_is_exact",
    ),
    (
        "not (other forms)",
        U,
        "a decimal multipleOf, an asserted format in the generation policy or of a documented subset (hostname, email, "
        "idn-*, regex) or read more widely by validators (duration as ISO 8601, uuid, uri-template, the uri family), uniqueItems (duplicates are "
        "not a regular language), a recursive $ref, "
        "items after prefixItems, min/maxContains",
        {"type": "number", "not": {"multipleOf": 0.5}},
        "test_json_schema.py::test_unsupported_keywords_name_keyword_and_pointer",
    ),
    (
        "if / then / else",
        P,
        "(if and then) or (not if and else), where not if is exact (see not); an if without then is if or "
        "else; before draft 7 unknown keywords",
        {"if": {"type": "string"}, "then": {"minLength": 1}},
        "test_json_conditionals.py::test_cases_accept_exactly_what_jsonschema_validates",
    ),
    (
        "if (no exact negation)",
        U,
        "then needs not if: e.g. if uniqueItems",
        {"type": "array", "if": {"uniqueItems": True}, "then": {"maxItems": 1}},
        "test_json_conditionals.py::test_if_without_an_exact_negation_names_if",
    ),
    (
        "$ref / $defs / definitions",
        S,
        "local refs, JSON pointers, $id-relative; recursive refs as rules of a "
        "lazy pushdown automaton (json_pushdown)",
        {"$defs": {"a": {"type": "integer"}}, "$ref": "#/$defs/a"},
        "test_json_schema.py::test_refs_defs_anchors_and_ids",
    ),
    (
        "$ref (recursive, beside other keywords)",
        S,
        "the target unfolded in place (its own refs below a member or item stay rule calls); a target the "
        "combination already holds is conjoined once (two allOf members sharing a base); siblings outside the "
        "vocabulary (markdownDescription, x-*) keep a $ref pure",
        {
            "$defs": {
                "n": {
                    "type": "object",
                    "properties": {
                        "v": {"type": "integer"},
                        "next": {"$ref": "#/$defs/n", "required": ["v"]},
                    },
                }
            },
            "$ref": "#/$defs/n",
        },
        "test_json_refs.py::test_recursive_refs_in_combinations_accept_what_jsonschema_validates",
    ),
    (
        "$ref (left-recursive)",
        U,
        "a target that holds itself through allOf/$ref before any member or item: the combination never ends",
        {"$defs": {"a": {"allOf": [{"$ref": "#/$defs/a"}, {"type": "object"}]}}, "$ref": "#/$defs/a"},
        "test_json_refs.py::test_a_left_recursive_combination_is_refused_naming_ref",
    ),
    (
        "$anchor / $id",
        S,
        "plain-name anchors and embedded resources",
        {"$defs": {"a": {"$anchor": "x", "type": "null"}}, "$ref": "#x"},
        "test_json_schema.py::test_refs_defs_anchors_and_ids",
    ),
    (
        "$ref (remote)",
        P,
        "to the documents given as JsonSchema(..., resources={uri: schema}) and the official metaschemas "
        "(jsonschema_specifications); nothing is fetched; a document of another draft is refused",
        {"$ref": "https://json-schema.org/draft/2020-12/meta/format-annotation"},
        "test_json_remote_refs.py::test_the_suites_remote_ref_groups_compile_and_agree",
    ),
    (
        "$dynamicRef",
        S,
        "by the dynamic scope (the outermost resource on the path that has the $dynamicAnchor): as $ref when "
        "the document has one such anchor, else the schema rewritten with a copy of each target per binding "
        "of the anchors it is reached under (fsm/json/dynamic_scope.py, at most 2,000 copies)",
        {
            "$dynamicAnchor": "item",
            "type": "array",
            "items": {"$dynamicRef": "#item"},
            "maxItems": 2,
            "$defs": {"s": {"$id": "urn:s", "$dynamicAnchor": "item", "type": "string"}},
        },
        "test_json_dynamic_scope.py::test_the_suites_dynamic_ref_groups_agree",
    ),
    (
        "$recursiveRef",
        S,
        "draft 2019-09's dynamic reference: $recursiveAnchor true at a resource root read as a nameless "
        "$dynamicAnchor, by the same rewrite",
        {
            "$schema": "https://json-schema.org/draft/2019-09/schema",
            "$recursiveAnchor": True,
            "type": "array",
            "items": {"$recursiveRef": "#"},
            "maxItems": 2,
        },
        "test_json_dynamic_scope.py::test_the_suites_recursive_ref_groups_agree",
    ),
    (
        "unevaluatedProperties / unevaluatedItems",
        P,
        "false or a schema, for what the schema and the subschemas it sees through allOf/anyOf/oneOf/"
        "dependentSchemas and in-place $refs do not evaluate: by the branch an instance takes (if and "
        "then where the if passes, else where it fails; anyOf branches passing together, up to 4 "
        "that can evaluate), a nested unevaluated* evaluating all, contains its matches (2020-12); "
        "what a dynamic reference, an else beside an if with no exact negation, or more anyOf "
        "branches evaluate is checked again (only stricter)",
        {
            "type": "object",
            "properties": {"a": {"type": "null"}},
            "unevaluatedProperties": {"type": "string"},
        },
        "test_json_one_of.py::test_accepts_what_jsonschema_validates",
    ),
    (
        "boolean schemas",
        S,
        "true = any value (pushdown block), false = nothing",
        {"type": "array", "items": False},
        "test_json_suite.py::test_invalid_instances_rejected_valid_ones_accepted_or_explained",
    ),
    (
        "title / description / default / examples / $comment / readOnly / writeOnly / deprecated / content*",
        A,
        "ignored",
        {"type": "string", "title": "t", "default": "d", "contentMediaType": "text/plain"},
        "test_json_suite.py::test_invalid_instances_rejected_valid_ones_accepted_or_explained",
    ),
]


def _probe(schema) -> str:
    from fsm.errors import SpecError, UnsupportedSchema
    from fsm.json.schema import JsonSchema

    warnings.simplefilter("ignore")
    try:
        spec = JsonSchema(schema)
        if spec.translation()[1] is not None:  # recursive: rules of the pushdown automaton
            from fsm.automata import pushdown_dfa

            pushdown_dfa(*spec.rules(None, pushdown=True))
        elif spec.is_recursive:  # an unbounded any-value block
            from fsm.automata import node_nfa

            node_nfa(spec.tree())
        else:
            spec.to_dfa()
        return "compiles"
    except UnsupportedSchema as exc:
        return f"UnsupportedSchema({exc.keyword})"
    except SpecError as exc:
        return f"{type(exc).__name__}"


def _category(group: dict, data, matcher_allows_first) -> str:
    """Why a valid instance is not generated (the policies above), as tests/fsm/test_json_suite.py sorts it."""

    def has(x, pred):
        if pred(x):
            return True
        if isinstance(x, dict):
            return any(has(v, pred) for v in x.values())
        if isinstance(x, list):
            return any(has(v, pred) for v in x)
        return False

    schema_text = json.dumps(group["schema"])
    if not matcher_allows_first:
        return "type not generated"
    if has(data, lambda x: isinstance(x, float) and x.is_integer()) or has(
        group["schema"], lambda x: isinstance(x, float) and x.is_integer()
    ):
        return "number spelling"
    if "format" in schema_text:
        return "format asserted"
    if "unevaluatedItems" in schema_text:
        return "unevaluatedItems"
    if has(data, lambda x: isinstance(x, dict) and x):
        return "property order / undeclared property"
    return "other"


DRAFTS = {4: "draft4", 6: "draft6", 7: "draft7", 2019: "draft2019-09", 2020: "draft2020-12"}


def _exact_reason(group: dict, data) -> str:
    """Why exact mode does not accept a valid instance (tests/fsm/test_json_suite.py sorts them alike)."""

    def has(x, pred):
        if pred(x):
            return True
        if isinstance(x, dict):
            return any(has(v, pred) for v in x.values())
        if isinstance(x, list):
            return any(has(v, pred) for v in x)
        return False

    schema_text = json.dumps(group["schema"])
    if "unevaluatedItems" in schema_text or "unevaluatedProperties" in schema_text:
        return "unevaluated*: what some subschema evaluates is not seen (the keyword table says which)"
    if isinstance(group["schema"], dict) and "metaschema" in str(group["schema"].get("$schema", "")):
        return "custom metaschema: its vocabularies are not read"
    if has(data, lambda x: isinstance(x, dict) and len(x) > 1):
        return "property order (declared first)"
    if "format" in schema_text:
        return "format: a case the RFC grammar leaves out (see Formats)"
    if "multipleOf" in schema_text or has(data, lambda x: isinstance(x, float)):
        return "number spelling (exponent) or multipleOf"
    return "other"


def _suite(draft: int, folder: str, tok, vocab, exact: bool = False) -> tuple[str, list[str]]:
    """Compile every group of one folder; a summary row, and the valid instances the constraint does
    not accept. The ``optional/format`` folder asserts formats (exact mode: ``assert_format=True``)."""
    import fsm
    from fsm.errors import SpecError
    from fsm.json.schema import JsonSchema
    from fsm.testing import accepts

    root = os.path.join(ROOT, "tests", "data", "json-schema-test-suite", folder)
    opts = {"assert_format": True} if exact and folder.endswith("format") else {}
    groups = ok = invalid = valid = 0
    rows = []
    for path in sorted(glob.glob(os.path.join(root, "*.json"))):
        for g in json.loads(Path(path).read_text()):
            groups += 1
            try:
                spec = JsonSchema(g["schema"], draft=draft, exact=exact, **opts)
                index = fsm.compile(spec, vocab, cache=False)
            except SpecError:
                continue
            ok += 1
            for t in g["tests"]:
                text = json.dumps(t["data"], separators=(",", ":"), ensure_ascii=False)
                ids = tok.encode(text, add_special_tokens=False)
                first = index.matcher().is_allowed(ids[0]) if ids else True
                accepted = accepts(index, ids)
                if not t["valid"]:
                    invalid += 1
                    if accepted:
                        raise SystemExit(f"accepted an invalid instance: {path} / {g['description']}")
                    continue
                valid += 1
                if not accepted:
                    cat = _exact_reason(g, t["data"]) if exact else _category(g, t["data"], first)
                    cells = [
                        f"{folder}/{os.path.basename(path)}",
                        g["description"],
                        t["description"],
                        f"`{text[:60]}`",
                        cat,
                    ]
                    rows.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    rate = f"{100 * (valid - len(rows)) / valid:.1f} %" if valid else "-"
    summary = f"| {folder} | {ok} of {groups} | {invalid} | 0 | {valid - len(rows)} of {valid} | {rate} |"
    return summary, rows


# every folder of the official suite the repo ships (tests/data), with the draft its schemas are read in
FOLDERS = [
    (4, "draft4"),
    (6, "draft6"),
    (7, "draft7"),
    (2019, "draft2019-09"),
    (2020, "draft2020-12"),
    (2020, "draft2020-12/optional"),
    (2020, "draft2020-12/optional/format"),
]


def _suites(exact: bool) -> tuple[list[str], list[str]]:
    """The summary table (one row per folder) and the valid instances not accepted: every folder's
    in exact mode, draft 2020-12's in the default mode."""
    from transformers import AutoTokenizer

    import fsm
    from guide.default_model import default_model_dir

    tok = AutoTokenizer.from_pretrained(default_model_dir())
    vocab = fsm.Vocabulary.from_tokenizer(tok)
    summaries, rows = [], []
    for draft, folder in FOLDERS:
        summary, missed = _suite(draft, folder, tok, vocab, exact)
        summaries.append(summary)
        if exact or folder == "draft2020-12":
            rows += missed
    return summaries, rows


# formats side by side: the generation subset and exact mode's RFC grammars (tests/fsm/test_json_formats.py)
FORMAT_TABLE = [
    "## Formats",
    "",
    "The generation policy asserts a subset of each RFC that every mainstream validator accepts",
    "(`fsm/json/formats.py`, `FORMATS`); exact mode takes `format` as an annotation, as drafts 2019-09",
    "and 2020-12 say, unless `assert_format=True` (or a custom `$schema`, whose vocabularies are not",
    "read): then the RFC grammars (`RFC_FORMATS`). Both reject every invalid instance of the suite's",
    "`optional/format` tests.",
    "",
    "| format | generation (default) | exact, `assert_format=True` |",
    "|---|---|---|",
    "| `date-time` (RFC 3339) | `T`, `Z`; no leap second; 1-9 fraction digits | `T`/`t`, `Z`/`z`; leap seconds where UTC is 23:59:60 (offsets with 0, 30, 45 minutes); any fraction |",
    "| `time` | as in date-time, offset required | as in date-time |",
    "| `date` | month lengths, leap years; years 0001-9999 | same |",
    "| `duration` (RFC 3339 app. A) | Y [M [D]], M [D], D; H [M [S]], M [S], S; W; 1-4 digits each | same grammar, any digits (`P01234D`) |",
    "| `hostname` (RFC 1123) | labels of at most 48 characters, at most 5 labels | labels of at most 63 characters, 253 in all |",
    "| both | no `--` as a label's 3rd and 4th characters (A-labels, `xn--`, need IDNA tables) | also A-labels (`xn--`, any case), valid when their punycode decodes to a valid U-label that encodes back (RFC 5890 2.3.2.1; the `idna` package decodes it, as `jsonschema` does). No automaton of a useful size says that (every prefix of the punycode is a state of its own: a token row would walk ~22,000 of them); the automaton holds their letters and a text check where the string ends (a guard point, `fsm.json.a_labels`), which the matcher runs for the few tokens that close the string there. Without `idna`: no A-labels. Only where the automaton is the lazy DFA (not inside `not`, a `propertyNames`, a grammar terminal or two checked formats on one string: there A-labels stay out) |",
    '| `email` (RFC 5321) | dot-atom local part @ hostname | also a quoted local part (`"joe bloggs"@x`) and address literals (`[127.0.0.1]`, `[IPv6:...]`) |',
    "| `uri`, `uri-reference` (RFC 3986) | userinfo with `:`, IP literals incl. IPvFuture (`[v1.test]`) | same |",
    "| `iri`, `iri-reference` (RFC 3987) | as `uri`: ASCII only | also `ucschar` (non-ASCII) anywhere, `iprivate` in the query |",
    "| `relative-json-pointer` | a prefix without inner zeros (`100` is refused, as validators do) | any non-negative integer prefix |",
    "| `uri-template` (RFC 6570) | levels 1-4 expressions; names start with a letter, digit or `_`; prefixes up to 999 | names may start with a %-escape; prefixes up to 9999; non-ASCII and `'` literals (erratum 6937) |",
    "| `ipv4`, `ipv6`, `uuid`, `json-pointer` | the RFC grammar | same |",
    "| `idn-hostname` (RFC 5890-5893) | ASCII labels only | also U-labels of up to 9 characters IDNA2008 allows, contextual ones in their context (joiners, middle dots, keraia, geresh, Arabic-Indic digits: RFC 5892 appendix A), right-to-left ones under the Bidi rule (RFC 5893; the other labels of such a name right-to-left or ASCII starting with a letter), NFC by construction (viramas the only marks), in names of up to 3 labels, any IDNA full stop; and names with an A-label or a U-label of 10 to 63 characters (whose A-label must fit 63 octets, a length only the whole label's punycode tells: the suite's 52-letter Greek label encodes to exactly 63) by a text check where the string ends, the `idna` package's encoding (as `jsonschema` checks it; see hostname); not other marks in short U-labels |",
    "| `idn-email` (RFC 6531) | as `email` | `email`'s exact grammar with non-ASCII atext/qtext, the domain an `idn-hostname` or one whose NFC is: ASCII labels of up to 9 characters with a combining mark after some letters or digits (`cafe\\u0301`, as validators read RFC 6531) |",
    "| `regex` (ECMA-262) | literal text only | a regular subset of the pattern grammar, valid with and without the `u` flag (`fsm/json/regex_format.py`): groups, lookarounds, groups 2 deep, one named group first, no control characters, classes (empty ones too), quantifiers with ordered bounds, `\\cX`, `\\xHH`, `\\uHHHH`; not backreferences (`\\1`, `\\k<n>`: they must name a group that exists) |",
    "",
]

# the regex dialect table: what each syntax means where, and what fsm reads (tests/fsm/test_regex_dialects.py)
DIALECTS = [
    "## Regex dialects",
    "",
    "`fsm.Regex` is a full match of Python `re` syntax (under `re.ASCII`) plus what PCRE and ECMA-262 add",
    "that Python lacks (each is an error to Python's parser, so no Python pattern changes meaning);",
    "JSON Schema `pattern` (and `patternProperties` keys) is an ECMA-262 search over the decoded string.",
    "Grammar terminals keep Python's syntax: lark's lexer runs them with Python's engine.",
    "",
    "| construct | Python `re` | ECMA-262 | PCRE | `fsm.Regex` | JSON Schema `pattern` |",
    "|---|---|---|---|---|---|",
    "| `^` at the start, `$` at the end | anchors | anchors | anchors | allowed, no-ops (the match is full) | anchor the search |",
    "| `^`, `$` elsewhere (`a^b`, `(a$)b`) | anchors | anchors | anchors | `RegexError` naming the position | `$`: the end of the text (nothing may follow; a repeat's iteration through it is the last); `^`: `UnsupportedSchema` |",
    "| `\\A`, `\\Z` | start, end | — | start, end (before a final newline) | as `^`, `$` | as `^`, `$` |",
    "| `\\b`, `\\B` | word boundary | word boundary | word boundary | `RegexError` | `UnsupportedSchema` |",
    "| `(?P<name>...)` | named group | — | named group | group | group |",
    "| `(?<name>...)` | — (3.11) | named group | named group | group | group |",
    "| `\\e` | — | — | ESC | U+001B | U+001B |",
    "| `\\cX` | — | control X | control X | control X (code mod 32) | control X |",
    "| `\\uXXXX` | code point | code point | — | code point | code point |",
    "| `\\u{H...}`, `\\x{H...}` | — | `\\u{}` with `u` | `\\x{}` | code point | code point |",
    "| `\\p{..}`, `\\P{..}` | — | with `u` | yes | general categories (`L`, `Lu`, `Nd`, `Letter`, `gc=P`...) from `unicodedata`; scripts and binary properties: `RegexError` | same; else `UnsupportedSchema` |",
    "| `\\d \\w \\s` | Unicode | ASCII (`\\s`: Unicode spaces) | ASCII | ASCII (`re.ASCII`) | ECMA's: `\\d \\w` ASCII, so `\\D \\W` hold every non-ASCII character; `\\s` ECMA's Unicode spaces (U+00A0, U+FEFF, U+2028...) |",
    "| `.` | not `\\n` | no line terminator | not `\\n` | not `\\n` | no line terminator |",
    "| `(?i)`, `(?s)` | flags | — (outside the pattern) | flags | ASCII case folding, dot-all | same |",
    "| `(?m)`, `(?x)` | flags | — | flags | `RegexError` | `UnsupportedSchema` |",
    "| lookahead | yes | yes | yes | `RegexError` | exact: the rest of the text intersected with (or minus) it (a length "
    "lookahead stays one count, the repeat bounds it implies dropped); not under `*`/`+`/`{n,m}` |",
    "| lookbehind, backreference, atomic group, possessive quantifier | yes | partly | yes | `RegexError` | `UnsupportedSchema` |",
    "",
]


# the five goal measures of issue 22 on cases written outside the project, as bench_json_external.py
# printed them (a run takes tens of minutes, so the figures are pasted here, not recomputed)
EXTERNAL = [
    "## Cases written outside the project",
    "",
    "`benchmarks/bench_json_external.py` compiles every spec of the external corpora in",
    "`/work/shared/corpora` (the official suite's draft 2020-12 folders, one spec per group, and",
    "JSONSchemaBench with its MaskBench instances) in exact mode, formats asserted where the corpus",
    "asserts them, with the default `fsm.Limits`, and checks every instance (valid instances in every",
    "member order it tries: exact mode's only policy is member order).",
    "",
    "    python benchmarks/bench_json_external.py --per-corpus 60   # the first 60 specs of each corpus",
    "",
    "It prints, per corpus and in total, the share of specs unsupported (goal at most 2 %), over a",
    "budget (goal 0), refused as empty although a valid instance exists (goal 0), the valid instances",
    "rejected (goal at most 0.5 %) and the invalid instances accepted (must be 0), then the causes of",
    "each failure class by count. Its figures depend on the machine's load (a compile over 10 s is over",
    "budget), so they are kept with the issue notes rather than on this page.",
    "",
]


def render() -> str:
    lines = [
        "# JSON Schema coverage",
        "",
        "Generated by `benchmarks/gen_json_coverage.py` (do not edit by hand). Every row's probe schema is",
        "compiled when the page is generated; *supported* rows compile, *unsupported* ones raise",
        "`fsm.UnsupportedSchema` naming the keyword and its JSON pointer (`lenient=True` turns that into a",
        "warning and ignores the keyword; the ignored list is `JsonSchema.ignored`).",
        "",
        "Coverage, time to first mask and accepted-invalid counts on JSONSchemaBench, beside llguidance,",
        "xgrammar and outlines-core: [performance](performance.md#json-schemas-benchmarksbench_jsonpy).",
        "",
        "| keyword | status | what is enforced | probe | test |",
        "|---|---|---|---|---|",
    ]
    summaries, rows = _suites(exact=False)
    exact_summaries, exact_rows = _suites(exact=True)
    tests_dir = os.path.join(ROOT, "tests", "fsm")
    for kw, status, what, probe, test in ROWS:
        fname, func = test.split("::")
        with open(os.path.join(tests_dir, fname)) as f:
            if f"def {func}(" not in f.read():
                raise SystemExit(f"row {kw!r}: test {test} does not exist")
        got = _probe(probe)
        expect_ok = status in (S, P, A)
        if expect_ok != (got == "compiles"):
            raise SystemExit(f"row {kw!r} says {status} but its probe gives {got}")
        lines.append(f"| `{kw}` | {status} | {what} | `{json.dumps(probe)}` → {got} | `tests/fsm/{test}` |")
    lines += [
        "",
        "## Policies",
        "",
        "- **Property order**: properties are generated in the order the schema declares them (`required`-only",
        "  names after `properties`); optional properties may be omitted, required ones are always present.",
        "- **Extra properties**: `additionalProperties` left unspecified means none are generated",
        "  (`JsonSchema(..., allow_additional_properties=True)` allows them); explicit `true`/schema allows",
        "  them after the declared ones. An extra key never equals a declared name. Extra properties count",
        "  toward `minProperties`/`maxProperties` like declared ones; two extra members with the same key",
        "  (which JSON Schema leaves undefined, and an automaton cannot tell apart) are not detected.",
        "- **Types**: a schema without `type` generates the types its keywords constrain",
        "  (`properties` → object, `pattern` → string, ...); a schema constraining nothing is any JSON value.",
        "- **Any JSON value** (`{}`, `true`, unconstrained items or extras) is a pushdown block of the lazy",
        "  DFA (`fsm/json_any.py`): the bracket stack lives in the state, so nesting has no depth cut and",
        "  both layouts work; `any_value_depth=N` instead gives a regular, depth-bounded any-value (opt-in).",
        "- **Recursive `$ref`**: every `$ref` target is a rule, run by a lazily determinized pushdown",
        "  automaton (`fsm/json_pushdown.py`) — exact for any rule structure (no LALR restriction), no",
        "  table built up front; compact layout only. Left-recursive schemas go to the Lark grammar engine",
        "  (`JsonSchema.to_grammar()`). Regular schemas whose inlined `$ref`s pass 100,000 NFA states",
        "  use the rules too.",
        "- **Whitespace**: `compact` (default, none) or `pretty`/an indent width: exactly",
        "  `json.dumps(indent=...)`'s layout; never free whitespace.",
        '- **Strings**: any Unicode; `"`, `\\\\` and control characters only escaped; `\\\\uXXXX` escapes',
        "  allowed in unconstrained strings (never lone surrogates). With `pattern`/`format`/`enum`,",
        "  each character has its canonical encoding. `max_string_length` bounds strings without",
        "  `maxLength`.",
        "- **Numbers**: canonical JSON syntax; at most 20 integer digits (400 in exact mode: bignums), 20 fraction",
        "  digits and 3 exponent digits when unbounded. With bounds, numbers are written without exponent (exact",
        "  mode also takes exponent spellings, see Two policies) and compared",
        "  exactly — decimals as the double they parse to, so `exclusiveMaximum: 1` never admits a",
        "  decimal that rounds to 1.0. `multipleOf` is decimal arithmetic on the number as written (19.99",
        "  is a multiple of 0.01; `jsonschema` divides doubles and says no).",
        "- **oneOf** is exact: it is used as anyOf when no branch's values can validate another branch, else",
        "  each branch minus the others when their negations are exact; otherwise `UnsupportedSchema`, or",
        '  anyOf semantics with `oneof="anyof"`.',
        "- **not, if/then/else, maxContains** are exact through the negation of a schema by its keyword",
        "  groups (the `not` row): `if` is (if and then) or (not if and else); a group without an exact",
        "  negation (uniqueItems, a decimal multipleOf, a format outside the complemented ones) makes them `UnsupportedSchema`",
        "  naming the keyword.",
        "- **Drafts**: `JsonSchema(..., draft=4|6|7|2019|2020)`, else the draft `$schema` names, else 2020-12.",
        "  The draft decides the keywords: `id` (draft 4) or `$id`; `$anchor` from 2019-09;",
        "  `dependencies` up to draft 7, `dependentRequired`/`dependentSchemas` after; up to draft 7 a",
        "  `$ref` makes its siblings be ignored (`$id` included: it never moves the base URI).",
        "  `items` as an array with `additionalItems` (drafts 4-2019) and `prefixItems` (2020-12) are both read.",
        "- **Remote `$ref`**: `JsonSchema(..., resources={uri: schema})` gives the documents a `$ref` may name",
        "  outside the schema (as `jsonschema`'s registry does); the official metaschemas are known without it.",
        "  Nothing is fetched (a server must not open the URLs of a user's schema); a document is read in its",
        "  own draft, and one whose `$schema` names another draft than the referrer's is `UnsupportedSchema`.",
        "- **format** is asserted (a subset of each RFC that validators accept; see Formats); unknown",
        "  format names are annotations and ignored, as validators do.",
        "",
        *DIALECTS,
        *FORMAT_TABLE,
        "",
        "## Two policies: generation (default) and exact",
        "",
        "| choice the schema leaves open | generation policy (default) | `exact=True` |",
        "|---|---|---|",
        "| no `type` | the types its keywords are about (`properties` → object) | every type; each type's keywords apply to it only |",
        "| `additionalProperties` absent | no extra properties (`allow_additional_properties=True` allows them) | extra properties allowed, any value (the `AnyJson` block), after the declared ones |",
        "| integers | one spelling (`1`) | also with a zero fraction (`1.0`, `1.00`) and an exponent (`1e2`, `1.5E+1`, `150e-1`, `1e+308`; `1e-400` parses to 0.0) |",
        "| numbers with bounds | written without exponent | also with an exponent (`2e0`, `0.25E1`, `3e-5` for `minimum: 0, maximum: 3`), compared as the double they parse to (`1e-400` is 0.0: not above `exclusiveMinimum: 0`) |",
        "| `enum` / `const` | the values as `json.dumps` writes them | by JSON equality: `0.0` for `0`, `-2` for `-2.0`, objects in any member order (up to 4 members) |",
        "| `format` | asserted | an annotation (drafts 2019-09 and 2020-12 say so by default) |",
        "| layout | the whitespace policy | the whitespace policy |",
        "| property order | declared order, then extra properties | declared order, then extra properties |",
        "",
        "Exact mode's language is the instances that validate, except layout, property order and the",
        "spellings listed below, and these exponent spellings (`fsm/automata/exponents.py`; each costs a few",
        "hundred states, so a mantissa's digits are capped): a mantissa of over 20 integer or fraction",
        "digits; for integers, one of over 12, other than an integer (`150e-1`), `d.ddd` (`1.5e1`) or zero",
        "(`0.5e1` is left out), exponents beyond 99 after two or more digits (`15e300`), values from 1e308",
        "(`1.5e308`, finite), and a fraction that is only whole after rounding (`1.00000000000000001e0`);",
        "bounds rounded inwards to their shortest decimal within a few units in the last place (a value a",
        "hair inside a bound's rounding midpoint is rejected); integers with a `multipleOf` whose divisor is",
        "not 1/n, numbers with any `multipleOf`, and numbers in a schema compiled to a Lark grammar (its",
        "terminals are regex text) take no exponent;",
        "keywords no automaton enforces exactly still raise `UnsupportedSchema`. The generation policy",
        "never makes a satisfiable schema unsatisfiable: when it leaves nothing to generate",
        '(`{"minProperties": 1}`), the schema is translated again with extra properties allowed and no',
        "type inferred (`JsonSchema.policy_used` says which policy was used).",
        "",
        *EXTERNAL,
        "## Test suite",
        "",
        "JSON-Schema-Test-Suite, every draft folder the repo ships and draft 2020-12's `optional` and",
        "`optional/format` folders, checked by `tests/fsm/test_json_suite.py` and",
        "`tests/fsm/test_json_formats.py` (instances are compact `json.dumps`, fed as SmolLM2 tokens; each",
        "folder's draft passed as `JsonSchema(..., draft=)`): in the groups that compile, every invalid",
        "instance is rejected. Groups that do not compile raise `UnsupportedSchema` (or `SchemaTooComplex`",
        "for a multipleOf needing over 100,000 remainders) or are unsatisfiable (`false` schemas). Figures:",
        "`python benchmarks/gen_json_coverage.py`.",
        "",
        "| folder | groups compiled | invalid instances | invalid accepted | valid instances accepted | valid accepted |",
        "|---|---|---|---|---|---|",
        *summaries,
        "",
        "The valid instances of draft 2020-12 not accepted, each with the policy that excludes it:",
        "",
        "| file | group | test | instance | why |",
        "|---|---|---|---|---|",
        *rows,
        "",
        "### Exact mode",
        "",
        "`JsonSchema(..., exact=True)`, same folders (`optional/format` with `assert_format=True`); every",
        "invalid instance rejected:",
        "",
        "| folder | groups compiled | invalid instances | invalid accepted | valid instances accepted | valid accepted |",
        "|---|---|---|---|---|---|",
        *exact_summaries,
        "",
        "The valid instances exact mode does not accept, each with its reason:",
        "",
        "| file | group | test | instance | why |",
        "|---|---|---|---|---|",
        *exact_rows,
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    text = render()
    path = os.path.join(ROOT, "docs", "json-schema.md")
    if args.check:
        with open(path) as f:
            sys.exit(0 if f.read() == text else 1)
    with open(path, "w") as f:
        f.write(text)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
