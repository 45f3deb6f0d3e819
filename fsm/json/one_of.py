"""``oneOf`` exclusivity: branches may be generated as ``anyOf`` only when they provably exclude
each other (cheap facts about each branch: possible types, finite values, required constant
properties, closed objects).
"""

from __future__ import annotations

from ..automata import NEVER, Node
from ..errors import SchemaError, UnsupportedSchema
from .context import Context, Loc
from .keywords import TYPES, types_of
from .refs import NeedsGrammar
from .values import canon


def check_exclusive(t: Context, base: list[Loc], loc: Loc, nodes: list[Node]) -> None:
    """oneOf as anyOf is exact only if no generated value of one branch validates another."""
    live = [j for j, n in enumerate(nodes) if n != NEVER]
    for a in live:
        for b in live:
            if a != b and not _excludes(t, base, loc.at("oneOf", a), loc.at("oneOf", b)):
                raise UnsupportedSchema(
                    f"oneOf at {loc.ptr or '/'}: branches {a} and {b} can match the same value, so "
                    "'exactly one' cannot be enforced; pass oneof='anyof' to accept anyOf semantics",
                    "oneOf",
                    loc.ptr + "/oneOf",
                )


def _excludes(t: Context, base: list[Loc], a: Loc, b: Loc) -> bool:
    """True when every value valid for ``base + a`` is invalid for ``b``."""
    fa, fb = _facts(t, base + [a]), _facts(t, [b])
    if fa is None or fb is None:
        return False
    if not (fa["types"] & fb["types"]):
        return True
    if fa["values"] is not None:
        return all(not t.is_valid(v, [b]) for v in fa["values"])
    # a property both require, with values that cannot coincide
    for name, va in fa["consts"].items():
        if name not in fa["required"]:
            continue  # a's values may omit it, and then b's const on it says nothing
        vb = fb["consts"].get(name)
        if vb is not None and not (set(map(canon, va)) & set(map(canon, vb))):
            return True
        if name in fb["forbidden"]:
            return True
    for name in fa["required"]:
        # b forbids it: properties: {name: false}, or a closed object that does not declare it
        if name in fb["forbidden"] or any(name not in declared for declared in fb["closed"]):
            return True
    for name in fb["required"]:
        # b needs a property that a's objects never have (a's values are objects: checked above),
        # or that this library never generates for a (a generated value is what must not match b)
        if fa["types"] <= {"object"} and (
            name in fa["forbidden"]
            or any(name not in declared for declared in fa["closed"])
            or (fa["keys"] is not None and name not in fa["keys"])
        ):
            return True
    return False


def _facts(t: Context, locs: list[Loc]) -> dict | None:
    """Cheap facts about a conjunction: possible types, finite values, required consts."""
    flat: list[Loc] = []
    try:
        pushed = sum(t.flatten(loc, flat, set()) for loc in locs)
    except (NeedsGrammar, SchemaError):
        return None
    for _ in range(pushed):
        t.active.pop()
    if any(("anyOf" in f.schema or "oneOf" in f.schema) for f in flat if isinstance(f.schema, dict)):
        return None
    types = set(TYPES)
    values = None
    consts: dict[str, list] = {}
    required: set[str] = set()
    forbidden: set[str] = set()
    closed: list[set[str]] = []
    for f in flat:
        s = f.schema
        if s is False:
            return {
                "types": set(),
                "values": [],
                "consts": {},
                "required": set(),
                "forbidden": set(),
                "closed": [],
                "keys": set(),
            }
        ts = types_of(s, f)
        if ts is not None:
            types &= ts
        if "enum" in s or "const" in s:
            vals = s["enum"] if "enum" in s else [s["const"]]
            values = vals if values is None else [v for v in values if canon(v) in set(map(canon, vals))]
        required |= set(s.get("required", []) or [])
        for name, sub in (s.get("properties") or {}).items():
            if sub is False:
                forbidden.add(name)
            elif isinstance(sub, dict) and ("const" in sub or "enum" in sub):
                consts[name] = sub["enum"] if "enum" in sub else [sub["const"]]
        if s.get("additionalProperties") is False and not s.get("patternProperties"):
            closed.append(set(s.get("properties") or {}))
    if "integer" in types:
        types.add("number")
    if "number" in types:
        types.add("integer")
    # The keys this library generates for these objects when none of them allows extras (the
    # policy for unspecified additionalProperties): declared and required names only.
    dicts = [f.schema for f in flat if isinstance(f.schema, dict)]
    explicit = [d["additionalProperties"] for d in dicts if "additionalProperties" in d]
    opened = (
        t.opts.allow_additional_properties
        or any("patternProperties" in d for d in dicts)
        or (explicit and all(x is not False for x in explicit))
    )
    names = set(required)
    for d in dicts:
        names |= set(d.get("properties") or {})
    # consts hold whenever the property is present (required or not)
    return {
        "types": types,
        "values": values,
        "consts": consts,
        "required": required,
        "forbidden": forbidden,
        "closed": closed,
        "keys": None if opened else names,
    }
