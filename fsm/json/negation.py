"""``not``: the subschemas whose negation has an exact positive form here, and that form.

A schema is the conjunction of its keyword groups (``type``; the string keywords; the numeric bounds;
``properties``; ``required``; counts; ``items``; ``contains``; dependencies; ``if``/``then``/``else``;
the combinators), so its negation is the disjunction of the groups' negations (De Morgan), and a
group's negation is "a value of the type the group is about, that breaks it" — ``properties`` broken
is an object with a declared member whose value is ``{"not": <its schema>}``, left for the translator
to negate there. A negated string schema (pattern/length) becomes the complement of its string
language; a negated ``enum``/``const`` excludes those values. A group with no exact positive form
(``uniqueItems``, a decimal ``multipleOf``, an asserted ``format``, ``patternProperties``, a schema-valued
``additionalProperties``, ``propertyNames``...) makes the whole negation unsupported.

>>> negation(None, {"type": "string"}, None, 0)
{'type': ['null', 'boolean', 'object', 'array', 'number', 'integer']}
>>> negation(None, {"minItems": 2}, None, 0)
{'type': 'array', 'maxItems': 1}
"""

from __future__ import annotations

import re
from typing import Any

from ..automata import to_python_syntax
from .context import Context, Excluded, Loc, Witness
from .formats import known_format
from .keywords import ANNOTATIONS, STRING_KW, TYPES, VOCABULARY, trivial
from .value_negation import values_negation

NO_NEGATION = object()  # a `not` subschema without an exact positive equivalent here
# how deep a negation may look: a subschema costs 1, a $ref hop REF_COST, so a deeply nested schema
# (each level's exactness checked through every level below it) is negated, while a recursive $ref,
# whose negation would unfold forever, is cut after a few hops
MAX_DEPTH = 96
REF_COST = 12


def negate(t: Context, loc: Loc) -> Loc | None:
    """``not`` forms with an exact positive equivalent; others are unsupported."""
    neg = negation(t, loc.schema, loc, 0)
    if neg is NO_NEGATION:
        t.unsupported(
            "not",
            Loc(None, loc.ptr.rsplit("/", 1)[0], loc.base),
            "only not with type, enum, const, required, properties, string lengths/pattern, numeric "
            "bounds, counts, items, contains, dependencies, if/then/else and anyOf/allOf/oneOf/not of "
            "those is enforced (not uniqueItems, a decimal multipleOf, an asserted format, patternProperties, "
            "additionalProperties or propertyNames)",
        )
        return None
    if neg is True:
        return None
    return Loc(neg, loc.ptr, loc.base)


def negation(t: Context, s: Any, loc: Loc, depth: int) -> Any:
    """A schema for exactly the values ``s`` rejects, or ``NO_NEGATION``."""
    if depth > MAX_DEPTH:
        return NO_NEGATION
    if s is True or trivial(s):
        return False
    if s is False:
        return True
    if not isinstance(s, dict):
        return NO_NEGATION
    parts = []
    for group in _groups(t, s):
        neg = _group_negation(t, group, loc, depth)
        if neg is NO_NEGATION:
            return NO_NEGATION
        if neg is True:
            return True  # this group rejects every value, so s does
        if neg is not False:
            parts.append(neg)
    if not parts:
        return False
    return parts[0] if len(parts) == 1 else {"anyOf": parts}  # De Morgan


# keywords that only say something together (one group each); every other keyword is its own group
_TOGETHER = (
    frozenset(("properties", "patternProperties", "additionalProperties")),
    frozenset(("prefixItems", "items", "additionalItems")),
    frozenset(("contains", "minContains", "maxContains")),
    frozenset(("if", "then", "else")),
    frozenset(("type", "nullable")),
    frozenset(STRING_KW),
    frozenset(("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")),
)
# keywords that never constrain an instance where they stand (annotations, identifiers, containers)
_INERT = ANNOTATIONS | {
    "$schema", "$id", "id", "$anchor", "$dynamicAnchor", "$defs", "definitions", "$vocabulary",
    "contentMediaType", "contentEncoding", "contentSchema",
}  # fmt: skip


def _groups(t: Context, s: dict) -> list[dict]:
    """``s`` as the keyword groups whose conjunction it is."""
    keys = [k for k in s if k not in _INERT and (k != "format" or _asserted(t))]
    if "$ref" in keys and (t is None or t.draft <= 7):
        keys = ["$ref"]  # drafts 4-7: siblings of $ref are ignored
    out: list[dict] = []
    done: set[str] = set()
    for k in keys:
        if k in done:
            continue
        group = next((g for g in _TOGETHER if k in g), frozenset((k,)))
        done |= group
        out.append({g: s[g] for g in keys if g in group})
    return out


def _draft(t: Context) -> int:
    return 2020 if t is None else t.draft


def _asserted(t: Context) -> bool:
    return t is None or t.policy.assert_format


def _not(s: Any) -> Any:
    """``s`` negated where it will be translated (its exactness already checked by the caller)."""
    if isinstance(s, bool):
        return not s
    return False if trivial(s) else {"not": s}


def _group_negation(t: Context, g: dict, loc: Loc, depth: int) -> Any:
    """The values one keyword group rejects (False: none), or ``NO_NEGATION``."""
    (k, v), *_ = g.items()
    neg = _SIMPLE.get(k)
    if neg is not None and len(g) == 1:
        return neg(v)
    if k in ("enum", "const"):
        # (``const: null`` is a value like any other: not read as "no values")
        if k == "enum" and not isinstance(v, list):
            return NO_NEGATION
        neg = values_negation([v] if k == "const" else v, _draft(t))
        return NO_NEGATION if neg is None else neg
    if "$ref" in g:
        target, _ = t.resolve(v, loc)
        return negation(t, target.schema, target, depth + REF_COST)
    if k == "not":
        return v
    if k in ("anyOf", "allOf", "oneOf"):
        if not isinstance(v, list) or not v:
            return NO_NEGATION
        parts = [negation(t, sub, loc, depth + 1) for sub in v]
        if any(p is NO_NEGATION for p in parts):
            return NO_NEGATION
        if k == "anyOf":
            return {"allOf": parts}
        if k == "allOf":
            return {"anyOf": parts}
        # none of the branches, or two of them
        pairs = [{"allOf": [v[i], v[j]]} for i in range(len(v)) for j in range(i + 1, len(v))]
        return {"anyOf": [{"allOf": parts}, *pairs]} if len(v) <= 6 else NO_NEGATION
    if "type" in g:
        return _type_negation(g)
    if set(g) <= STRING_KW:
        return Excluded(strings=dict(g))  # strings that break them (other types satisfy them)
    if set(g) <= _OUTSIDE.keys():
        return _bounds_negation(g)
    if set(g) & {"properties", "patternProperties", "additionalProperties"}:
        return _members_negation(t, g, loc, depth)
    if k == "propertyNames":
        return _names_negation(v)
    if set(g) & {"prefixItems", "items", "additionalItems"}:
        return _items_negation(t, g, loc, depth)
    if set(g) & {"contains", "minContains", "maxContains"}:
        return _contains_negation(t, g, loc, depth)
    if "if" in g:
        return _conditional_negation(t, g, loc, depth)
    if k in ("dependentRequired", "dependentSchemas", "dependencies") and isinstance(v, dict):
        return _dependencies_negation(t, v, loc, depth)
    if k == "format":
        known = isinstance(v, str) and known_format(v)  # not built: idn-* and regex take seconds
        if known and t is not None and t.policy.rfc_formats and v in COMPLEMENTED_FORMATS:
            return Excluded(strings={"format": v})  # the strings outside its RFC grammar
        return NO_NEGATION if known else False  # an unknown format is an annotation
    return NO_NEGATION if k in VOCABULARY else False  # an unknown keyword is an annotation


# asserted formats whose exact-mode automaton is their RFC grammar, no smaller: their complement is
# exactly the strings that break them. Not the documented subsets (hostname and the names built on it,
# without A-labels; idn-*; regex, a subset of ECMA-262's grammar), whose complement would hold valid names, nor
# what validators read more widely: uuid (extra hyphens), uri-template (a stray %), duration (as
# ISO 8601: P4DT.2H), the uri family (an empty host before an empty port, //:/b)
COMPLEMENTED_FORMATS = frozenset(
    {
        "date", "date-time", "time", "ipv4", "ipv6", "json-pointer", "relative-json-pointer",
    }
)  # fmt: skip


def _type_negation(g: dict) -> Any:
    ty = g.get("type", list(TYPES))
    ts = {ty} if isinstance(ty, str) else set(ty) if isinstance(ty, list) else set()
    if g.get("nullable") is True:
        ts.add("null")
    keep = [x for x in TYPES if x not in ts and not (x == "integer" and "number" in ts)]
    if "integer" in ts and "number" not in ts:
        keep = [x for x in keep if x not in ("number", "integer")]
        return {"anyOf": [{"type": keep}, Excluded(integers=True)]}  # and the non-integral numbers
    return {"type": keep} if keep else False


def _count(v: Any) -> int | None:
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else None


def _at_most(ty: str, kw: str) -> Any:
    """``minX: n`` broken: a value of ``ty`` with ``kw`` (the matching maxX) n - 1."""

    def neg(v: Any) -> Any:
        n = _count(v)
        if n is None:
            return NO_NEGATION
        return False if n == 0 else {"type": ty, kw: n - 1}

    return neg


def _at_least(ty: str, kw: str) -> Any:
    def neg(v: Any) -> Any:
        n = _count(v)
        return NO_NEGATION if n is None else {"type": ty, kw: n + 1}

    return neg


def _required_negation(v: Any) -> Any:
    if not isinstance(v, list) or not all(isinstance(n, str) for n in v):
        return NO_NEGATION
    if not v:
        return False
    # some required name absent (objects only: the others satisfy "required")
    return {"anyOf": [{"type": "object", "properties": {name: False}} for name in dict.fromkeys(v)]}


def _multiple_negation(v: Any) -> Any:
    """The numbers that are not multiples of an integral ``multipleOf`` (other types satisfy it); a
    decimal divisor, whose multiples validators judge by double division, has no exact form here."""
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v <= 0 or not float(v).is_integer():
        return NO_NEGATION
    return Excluded(integers=True) if v == 1 else Excluded(multiple=v)  # other types satisfy it


_SIMPLE = {
    "required": _required_negation,
    "multipleOf": _multiple_negation,
    "minProperties": _at_most("object", "maxProperties"),
    "maxProperties": _at_least("object", "minProperties"),
    "minItems": _at_most("array", "maxItems"),
    "maxItems": _at_least("array", "minItems"),
    "uniqueItems": lambda v: False if v is False else NO_NEGATION,  # duplicates: not regular
}


_OUTSIDE = {  # a bound's outside, as a bound: numbers below `minimum` are those with that exclusiveMaximum...
    "minimum": "exclusiveMaximum",
    "exclusiveMinimum": "maximum",
    "maximum": "exclusiveMinimum",
    "exclusiveMaximum": "minimum",
}


def _bounds_negation(g: dict) -> Any:
    """The numbers past each bound (other types satisfy numeric bounds)."""
    if any(isinstance(v, bool) or not isinstance(v, (int, float)) for v in g.values()):
        return NO_NEGATION  # draft-4 boolean exclusives: left to the general case
    parts = [{"type": "number", _OUTSIDE[k]: v} for k, v in sorted(g.items())]
    return parts[0] if len(parts) == 1 else {"anyOf": parts}


def _exact(t: Context, subs: list, loc: Loc, depth: int) -> bool:
    return all(negation(t, sub, loc, depth + 1) is not NO_NEGATION for sub in subs)


def _members_negation(t: Context, g: dict, loc: Loc, depth: int) -> Any:
    """An object with a member whose value breaks the schema its key gets: a declared member (the
    ``properties`` schema and every matching pattern's), or an undeclared one (a `Witness`: a key
    matching a pattern, or matching none for ``additionalProperties``)."""
    props = g.get("properties", {})
    pats = g.get("patternProperties", {})
    extra = g.get("additionalProperties", True)
    if not isinstance(props, dict) or not isinstance(pats, dict) or not isinstance(extra, (bool, dict)):
        return NO_NEGATION
    parts: list[Any] = []
    for name, sub in props.items():
        found = {p: _search(p, name) for p in pats}
        if None in found.values():
            return NO_NEGATION  # a pattern Python cannot read
        matched = [pats[p] for p in pats if found[p]]
        conj = [x for x in (sub, *matched) if not trivial(x)]
        if not conj:
            continue
        if not _exact(t, conj, loc, depth):
            return NO_NEGATION
        broken = _not(conj[0]) if len(conj) == 1 else {"not": {"allOf": conj}}
        parts.append({"type": "object", "required": [name], "properties": {name: broken}})
    names = tuple(props)
    for p, sub in pats.items():
        if trivial(sub):
            continue
        if not _exact(t, [sub], loc, depth):
            return NO_NEGATION
        source = {"patternProperties": {p: sub}}
        parts.append(Excluded(member=Witness(_not(sub), patterns=(p,), names=names, source=source)))
    if not (extra is True or trivial(extra)):
        if not _exact(t, [extra], loc, depth):
            return NO_NEGATION
        source = {
            "properties": dict.fromkeys(props, True),
            "patternProperties": dict.fromkeys(pats, True),
            "additionalProperties": extra,
        }
        parts.append(
            Excluded(member=Witness(_not(extra), not_patterns=tuple(pats), names=names, source=source))
        )
    if not parts:
        return False
    return parts[0] if len(parts) == 1 else {"anyOf": parts}


def _search(pattern: str, name: str) -> bool | None:
    """Whether ``pattern`` (ECMA-262 read as Python) finds a match in ``name``; None: unreadable."""
    try:
        return re.search(to_python_syntax(pattern), name) is not None
    except (re.error, TypeError):
        return None


def _names_negation(names: Any) -> Any:
    """An object with a key that breaks ``propertyNames`` (any value)."""
    if names is True or trivial(names):
        return False
    if names is False:
        return {"type": "object", "minProperties": 1}
    if not isinstance(names, dict):
        return NO_NEGATION
    return Excluded(member=Witness(True, breaks=names, source={"propertyNames": names}))


def _items_negation(t: Context, g: dict, loc: Loc, depth: int) -> Any:
    """An array with an item that breaks the schema of its position."""
    prefix = g.get("prefixItems", [])
    rest = g.get("items", True)
    if isinstance(rest, list):  # drafts 4-2019: the array form, then additionalItems
        prefix, rest = rest, g.get("additionalItems", True)
    if not isinstance(prefix, list) or not isinstance(rest, (bool, dict)):
        return NO_NEGATION
    if not _exact(t, [*prefix, rest], loc, depth):
        return NO_NEGATION
    key = "prefixItems" if _draft(t) >= 2020 else "items"
    parts = [
        {"type": "array", "minItems": i + 1, key: [True] * i + [_not(s)]}
        for i, s in enumerate(prefix)
        if not trivial(s)
    ]
    if rest is False or (isinstance(rest, dict) and negation(t, rest, loc, depth + 1) is True):
        parts.append({"type": "array", "minItems": len(prefix) + 1})  # an item past the prefix
    elif not trivial(rest):
        if prefix:
            return NO_NEGATION  # "an item past the prefix breaks it": `contains` would see the prefix too
        parts.append({"type": "array", "contains": _not(rest)})
    if not parts:
        return False
    return parts[0] if len(parts) == 1 else {"anyOf": parts}


def _contains_negation(t: Context, g: dict, loc: Loc, depth: int) -> Any:
    """``contains`` alone broken: an array none of whose items matches."""
    if "contains" not in g:
        return False  # minContains/maxContains without contains say nothing
    if set(g) != {"contains"} or not _exact(t, [g["contains"]], loc, depth):
        return NO_NEGATION
    return {"type": "array", "items": _not(g["contains"])}


def _conditional_negation(t: Context, g: dict, loc: Loc, depth: int) -> Any:
    """(if and not then) or (not if and not else)."""
    cond, then, other = g.get("if", True), g.get("then", True), g.get("else", True)
    if "if" not in g or (t is not None and t.draft < 7):
        return False
    if not _exact(t, [cond, then, other], loc, depth):
        return NO_NEGATION
    return {"anyOf": [{"allOf": [cond, _not(then)]}, {"allOf": [_not(cond), _not(other)]}]}


def _dependencies_negation(t: Context, deps: dict, loc: Loc, depth: int) -> Any:
    """An object with a member present whose dependency breaks."""
    parts = []
    for name, dep in deps.items():
        if isinstance(dep, list):
            parts += [{"type": "object", "required": [name], "properties": {d: False}} for d in dep]
        elif not trivial(dep):
            if not _exact(t, [dep], loc, depth):
                return NO_NEGATION
            parts.append({"allOf": [{"type": "object", "required": [name]}, _not(dep)]})
    if not parts:
        return False
    return parts[0] if len(parts) == 1 else {"anyOf": parts}
