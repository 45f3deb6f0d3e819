"""Hostile JSON schemas for the adversarial suite (`tests.fuzz.adversarial.FAMILIES`): each factory
takes a seeded ``random.Random`` and returns its family's specs, the most telling first (CI runs
the first two of each family, ``python -m tests.fuzz.adversarial`` all of them).
"""

from __future__ import annotations

import random

import fsm


def _nested_objects(levels: int) -> dict:
    schema: dict = {"type": "integer"}
    for _ in range(levels):
        schema = {"type": "object", "properties": {"a": schema}, "required": ["a"]}
    return schema


def _nested_arrays(levels: int) -> dict:
    schema: dict = {"type": "boolean"}
    for _ in range(levels):
        schema = {"type": "array", "items": schema, "maxItems": 2}
    return schema


def json_deep_nesting(rnd: random.Random) -> list[fsm.Spec]:
    """Objects and arrays nested hundreds of levels (past Python's recursion limit), and 60 levels."""
    d = rnd.randint(450, 550)
    return [
        fsm.JsonSchema(_nested_objects(d)),
        fsm.JsonSchema(_nested_arrays(d)),
        fsm.JsonSchema(_nested_objects(60)),
    ]


def json_many_properties(rnd: random.Random) -> list[fsm.Spec]:
    """Ten thousand properties, optional or required, and a thousand patterned ones."""
    n = rnd.randint(9_000, 11_000)
    props = {f"p{i}": {"type": "integer"} for i in range(n)}
    patterned = {f"k{i}": {"type": "string", "pattern": f"^[a-z]{{1,{1 + i % 40}}}$"} for i in range(1000)}
    return [
        fsm.JsonSchema({"type": "object", "properties": props}),
        fsm.JsonSchema({"type": "object", "properties": props, "required": list(props)}),
        fsm.JsonSchema({"type": "object", "properties": patterned, "required": list(patterned)[:500]}),
    ]


def json_huge_enums(rnd: random.Random) -> list[fsm.Spec]:
    """Enums of tens of thousands of strings or numbers, and of a thousand objects."""
    n = rnd.randint(40_000, 60_000)
    return [
        fsm.JsonSchema({"enum": [f"value-{i}-{rnd.randint(0, 9)}" for i in range(n)]}),
        fsm.JsonSchema({"enum": [rnd.randint(-(10**12), 10**12) for _ in range(n // 2)]}),
        fsm.JsonSchema({"enum": [{"id": i, "tag": f"t{i % 7}"} for i in range(1000)]}),
    ]


def json_ref_chains(rnd: random.Random) -> list[fsm.Spec]:
    """``$ref`` chains a thousand long (bare, and through a property each), and a hundred long."""
    n = rnd.randint(900, 1100)

    def chain(n: int, through_property: bool) -> dict:
        if through_property:
            defs = {
                f"d{i}": {"type": "object", "properties": {"x": {"$ref": f"#/$defs/d{i + 1}"}}}
                for i in range(n)
            }
        else:
            defs = {f"d{i}": {"$ref": f"#/$defs/d{i + 1}"} for i in range(n)}
        defs[f"d{n}"] = {"type": "string", "maxLength": 5}
        return {"$defs": defs, "$ref": "#/$defs/d0"}

    return [
        fsm.JsonSchema(chain(n, False)),
        fsm.JsonSchema(chain(n, True)),
        fsm.JsonSchema(chain(100, False)),
    ]


def json_all_of_patterns(rnd: random.Random) -> list[fsm.Spec]:
    """``allOf`` of many unanchored patterns (a product of "contains" automata) or anchored ones."""
    n = rnd.randint(40, 60)
    letters = "abcdefghijklmnopqrstuvwxyz"
    return [
        fsm.JsonSchema(
            {"type": "string", "allOf": [{"pattern": letters[i % 26] * (1 + i // 26)} for i in range(n)]}
        ),
        fsm.JsonSchema(
            {"type": "string", "allOf": [{"pattern": f"^.{{0,{i}}}{letters[i % 26]}"} for i in range(4 * n)]}
        ),
        fsm.JsonSchema(
            {"type": "string", "allOf": [{"pattern": f"[{letters[i % 26]}-z]{{{i % 9},}}"} for i in range(n)]}
        ),
    ]


def json_item_products(rnd: random.Random) -> list[fsm.Spec]:
    """``uniqueItems`` over big finite item sets and ``contains`` with big counts (products)."""
    k = rnd.randint(30, 50)
    return [
        fsm.JsonSchema(
            {"type": "array", "items": {"enum": list(range(k))}, "uniqueItems": True, "minItems": k // 2}
        ),
        fsm.JsonSchema(
            {
                "type": "array",
                "items": {"type": "string", "pattern": "^[a-c]{1,20}$"},
                "contains": {"pattern": "^a+$"},
                "minContains": k,
                "maxItems": 8 * k,
            }
        ),
        fsm.JsonSchema(
            {"type": "array", "items": {"enum": [f"v{i}" for i in range(5 * k)]}, "uniqueItems": True}
        ),
        fsm.JsonSchema(
            {
                "type": "array",
                "minItems": 100,
                "items": {"type": "array", "minItems": 100, "items": {"type": "array", "minItems": k}},
            }
        ),
    ]


def json_long_strings(rnd: random.Random) -> list[fsm.Spec]:
    """Big ``maxLength``/``minLength``/``minItems`` with patterns, nested counts inside a pattern, and
    pattern texts too long to parse."""
    n = rnd.randint(150, 250)
    return [
        fsm.JsonSchema(
            {
                "type": "array",
                "items": {"type": "string", "pattern": "[a-z]{1,50}", "maxLength": 100},
                "minItems": n,
                "maxItems": n,
            }
        ),
        fsm.JsonSchema({"type": "string", "pattern": "^(a{1,100}){1,100}$"}),
        fsm.JsonSchema({"type": "string", "pattern": "^(((ab|c){1,100}x){1,100}y){1,100}$"}),
        fsm.JsonSchema({"type": "string", "pattern": "^(ab|cd)*x?$", "maxLength": 10**9}),
        fsm.JsonSchema({"type": "string", "pattern": "^[a-z]*$", "minLength": 10**6}),
        fsm.JsonSchema({"type": "string", "pattern": "a" * 1_000_000}),
        fsm.JsonSchema(
            {"type": "string", "pattern": "^(" + "|".join(f"w{i}" for i in range(100_000)) + ")$"}
        ),
    ]
