"""``not``: the subschemas whose negation has an exact positive form here, and that form.

A negated string schema (pattern/length) becomes the complement of its string language; a negated
``enum``/``const`` excludes those values; ``type``, ``required``, numeric bounds and De Morgan over
``anyOf``/``allOf`` are rewritten as positive schemas. Anything else is unsupported.

>>> negation(None, {"type": "string"}, None, 0)
{'type': ['null', 'boolean', 'object', 'array', 'number', 'integer']}
"""

from __future__ import annotations

from typing import Any

from .context import Context, Excluded, Loc
from .keywords import STRING_KW, TYPES, trivial

NO_NEGATION = object()  # a `not` subschema without an exact positive equivalent here


def negate(t: Context, loc: Loc) -> Loc | None:
    """``not`` forms with an exact positive equivalent; others are unsupported."""
    neg = negation(t, loc.schema, loc, 0)
    if neg is NO_NEGATION:
        t.unsupported(
            "not",
            Loc(None, loc.ptr.rsplit("/", 1)[0], loc.base),
            "only not with type, enum, const, required, pattern/minLength/maxLength and "
            "anyOf/allOf/not of those is enforced",
        )
        return None
    if neg is True:
        return None
    return Loc(neg, loc.ptr, loc.base)


def negation(t: Context, s: Any, loc: Loc, depth: int) -> Any:
    """A schema for exactly the values ``s`` rejects, or ``NO_NEGATION``."""
    if depth > 16:
        return NO_NEGATION
    if s is True or trivial(s):
        return False
    if s is False:
        return True
    if not isinstance(s, dict):
        return NO_NEGATION
    keys = set(s) - {"title", "description", "$comment", "default", "examples"}
    if keys == {"$ref"}:
        target, _ = t.resolve(s["$ref"], loc)
        return negation(t, target.schema, target, depth + 1)
    if keys == {"not"}:
        return s["not"]
    if keys in ({"anyOf"}, {"allOf"}) and isinstance(s[next(iter(keys))], list) and s[next(iter(keys))]:
        kw = next(iter(keys))
        parts = [negation(t, sub, loc, depth + 1) for sub in s[kw]]
        if any(p is NO_NEGATION for p in parts):
            return NO_NEGATION
        return {"allOf": parts} if kw == "anyOf" else {"anyOf": parts}  # De Morgan
    if keys == {"required"} and isinstance(s["required"], list) and s["required"]:
        # some required name absent (objects only: the others satisfy "required")
        return {"anyOf": [{"type": "object", "properties": {name: False}} for name in s["required"]]}
    # (not `format`: its automaton may be a subset of what the format checker accepts, and the
    # complement of a subset would let through strings that are valid, so must be rejected)
    if keys and keys <= STRING_KW | {"type"} and keys != {"type"} and s.get("type", "string") == "string":
        other = [t for t in TYPES if t != "string"]
        strings = Excluded(strings={k: v for k, v in s.items() if k != "type"})
        return {"anyOf": [{"type": other}, strings]} if "type" in s else strings
    plain = set(s) - {"title", "description", "$comment"}
    if plain == {"type"}:
        ty = s["type"]
        ts = {ty} if isinstance(ty, str) else set(ty) if isinstance(ty, list) else set()
        keep = [x for x in TYPES if x not in ts and not (x == "integer" and "number" in ts)]
        if "integer" in ts and "number" not in ts:
            keep = [x for x in keep if x not in ("number", "integer")]
            return {"anyOf": [{"type": keep}, Excluded(integers=True)]}  # and the non-integral numbers
        return {"type": keep}
    if plain & _BOUNDS and plain <= _BOUNDS | {"type"}:
        return _number_negation(s)
    if plain in ({"enum"}, {"const"}):
        values = s["enum"] if "enum" in s else [s["const"]]
        if isinstance(values, list):
            return Excluded(values=values)
    return NO_NEGATION


_BOUNDS = {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"}
# a bound's outside, as a bound: numbers below `minimum` are those with that exclusiveMaximum...
_OUTSIDE = {
    "minimum": "exclusiveMaximum",
    "exclusiveMinimum": "maximum",
    "maximum": "exclusiveMinimum",
    "exclusiveMaximum": "minimum",
}


def _number_negation(s: dict) -> Any:
    """The values a schema of numeric bounds (and a numeric ``type``) rejects: other types when it
    has a type, non-integral numbers for ``integer``, and the numbers past each bound."""
    ty = s.get("type")
    if ty not in (None, "number", "integer"):
        return NO_NEGATION
    bounds = {k: s[k] for k in _BOUNDS if k in s}
    if any(isinstance(v, bool) or not isinstance(v, (int, float)) for v in bounds.values()):
        return NO_NEGATION  # draft-4 boolean exclusives: left to the general case
    parts: list[Any] = [{"type": "number", _OUTSIDE[k]: v} for k, v in sorted(bounds.items())]
    if ty is not None:
        parts.append({"type": [x for x in TYPES if x not in ("number", "integer")]})
    if ty == "integer":
        parts.append(Excluded(integers=True))
    return {"anyOf": parts}
