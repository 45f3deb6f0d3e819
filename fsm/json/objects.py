"""Object languages: declared properties in order (required present, optional omittable), extra keys
(``additionalProperties``/``patternProperties``, after the declared ones), ``propertyNames``, and
``min``/``maxProperties``.
"""

from __future__ import annotations

import json
import re

from ..automata import ANY_CHAR, NEVER, And, Cls, Enc, Members, Minus, Node, alt, lit, rep, seq, small_dfa
from ..errors import SchemaError, UnsupportedSchema
from .context import Context, Loc
from .keywords import count
from .patterns import pattern_node
from .strings import key_language


def object_language(t: Context, schemas: list[Loc], depth: int) -> Node:
    """The objects valid against every schema in ``schemas`` (already flattened)."""
    names, required = _declared(schemas)
    min_p = max(
        [count(f.schema["minProperties"], "minProperties", f) for f in schemas if "minProperties" in f.schema]
        or [0]
    )
    maxes = [
        count(f.schema["maxProperties"], "maxProperties", f) for f in schemas if "maxProperties" in f.schema
    ]
    max_p = min(maxes) if maxes else None
    name_locs = [f.at("propertyNames") for f in schemas if "propertyNames" in f.schema]

    colon = t.layout.colon
    sep = lit(t.layout.sep(depth))
    items: list[tuple[Node, int, int | None]] = []
    for name in names:
        if name_locs and not t.is_valid(name, name_locs):
            value = NEVER
        else:
            vlocs = _value_locs(schemas, name)
            if vlocs is None:
                value = NEVER
            elif not vlocs:
                value = t.any_value(depth + 1, schemas[0])
            else:
                value = t.value(vlocs, depth + 1)
        if value == NEVER:
            if name in required:
                return NEVER
            continue
        key = lit(json.dumps(name, ensure_ascii=False) + colon)
        items.append((seq(key, value), 1 if name in required else 0, 1))
    n_required = sum(1 for _, lo, _ in items if lo == 1)
    extras = _extras(t, schemas, names, name_locs, depth)
    if extras is not None:
        if min_p - n_required >= 2 and min_p > 1:
            # extra keys may repeat, and a repeat adds no property: count one at most toward the minimum
            items.append((extras, 0, 1))
        else:
            items.append((extras, 0, None))
    if max_p is not None and n_required > max_p:
        return NEVER
    if len(items) < min_p and extras is None:
        return NEVER
    members = Members(tuple(items), sep, min_count=max(min_p, 1), max_count=max_p)
    can_be_empty = min_p == 0 and n_required == 0
    if not items:
        return lit("{}") if can_be_empty else NEVER
    return t.layout.container("{", "}", members, can_be_empty, depth)


def _declared(schemas: list[Loc]) -> tuple[list[str], set[str]]:
    """The declared property names in order (``properties`` first, then ``required``), and the
    required ones."""
    names: list[str] = []
    required: set[str] = set()
    for f in schemas:
        props = f.schema.get("properties", {})
        if not isinstance(props, dict):
            raise SchemaError(f"properties at {f.ptr or '/'} must be an object")
        for k in props:
            if k not in names:
                names.append(k)
    for f in schemas:
        req = f.schema.get("required", [])
        if isinstance(req, bool):  # draft 3 style
            continue
        if not isinstance(req, list):
            raise SchemaError(f"required at {f.ptr or '/'} must be an array")
        for k in req:
            required.add(k)
            if k not in names:
                names.append(k)
    return names, required


def _value_locs(schemas: list[Loc], name: str) -> list[Loc] | None:
    """Schemas a property's value must satisfy; None when some schema forbids the property."""
    out = []
    for f in schemas:
        s = f.schema
        props = s.get("properties") or {}
        # a declared name is also checked by every patternProperties entry it matches
        matched = name in props
        if matched:
            out.append(f.at("properties", name))
        for pat in s.get("patternProperties") or {}:
            if _search(pat, name, f):
                out.append(f.at("patternProperties", pat))
                matched = True
        if matched:
            continue
        if "additionalProperties" in s:
            ap = s["additionalProperties"]
            if ap is False:
                return None
            out.append(f.at("additionalProperties"))
        elif s.get("unevaluatedProperties") is False:
            return None
    return out


def _extras(
    t: Context, schemas: list[Loc], names: list[str], name_locs: list[Loc], depth: int
) -> Node | None:
    """``key: value`` for keys not declared, or None when no extra key may be generated."""
    with_patterns = [f for f in schemas if f.schema.get("patternProperties")]
    for f in schemas:
        s = f.schema
        if s.get("additionalProperties") is False and not s.get("patternProperties"):
            return None
        if (
            s.get("unevaluatedProperties") is False
            and "additionalProperties" not in s
            and not s.get("patternProperties")
        ):
            return None
        if "unevaluatedProperties" in s and s["unevaluatedProperties"] not in (False, True):
            t.unsupported("unevaluatedProperties", f, "only false is enforced")
    key_lang = key_language(t, name_locs)
    if key_lang == NEVER:
        return None
    words = frozenset(names)
    if len(with_patterns) == 1:
        classes = _pattern_extras(t, with_patterns[0], schemas, key_lang, words, depth)
    elif with_patterns:
        return None  # several schemas with patternProperties: generate declared keys only
    else:
        classes = _additional_extras(t, schemas, key_lang, words, depth)
    return alt(*classes) if classes else None


def _pattern_extras(
    t: Context, g: Loc, schemas: list[Loc], key_lang: Node | None, words: frozenset, depth: int
) -> list[Node] | None:
    """One ``key: value`` class per pattern of the one schema ``g`` with ``patternProperties``."""
    others = [f for f in schemas if f is not g]
    pats = list(g.schema["patternProperties"])
    if len(pats) > 1 and not _disjoint_patterns(t, pats, g):
        vals = [json.dumps(g.schema["patternProperties"][p], sort_keys=True) for p in pats]
        if len(set(vals)) > 1:
            t.unsupported("patternProperties", g, "overlapping patterns with different schemas")
            return None
    classes = []
    colon = t.layout.colon
    for p in pats:
        vlocs = [g.at("patternProperties", p)] + [
            f.at("additionalProperties") for f in others if "additionalProperties" in f.schema
        ]
        lang = pattern_node(p)
        if key_lang is not None:
            lang = And((lang, key_lang))
        value = t.value(vlocs, depth + 1)
        if value != NEVER:
            classes.append(seq(lit('"'), Enc(Minus(lang, words)), lit('"' + colon), value))
    # keys matching no pattern are never generated (sound; their language needs a complement)
    return classes


def _additional_extras(
    t: Context, schemas: list[Loc], key_lang: Node | None, words: frozenset, depth: int
) -> list[Node] | None:
    """The ``key: value`` class of ``additionalProperties`` (or of the allow-extras policy)."""
    explicit = [f for f in schemas if "additionalProperties" in f.schema]
    if not explicit and not t.policy.additional_properties:
        return None
    vlocs = [f.at("additionalProperties") for f in explicit]
    vlocs = [v for v in vlocs if v.schema is not True]
    value = t.value(vlocs, depth + 1) if vlocs else t.any_value(depth + 1, schemas[0])
    if value == NEVER:
        return None
    if key_lang is None and not words:
        key = Enc(rep(Cls(ANY_CHAR), 0, t.opts.max_string_length), True)
    else:
        lang = rep(Cls(ANY_CHAR), 0, t.opts.max_string_length)
        if key_lang is not None:
            lang = And((lang, key_lang))
        key = Enc(Minus(lang, words))
    return [seq(lit('"'), key, lit('"' + t.layout.colon), value)]


def _disjoint_patterns(t: Context, pats: list[str], loc: Loc) -> bool:
    budget = t.budget()
    for i in range(len(pats)):
        for j in range(i + 1, len(pats)):
            d = small_dfa(And((pattern_node(pats[i]), pattern_node(pats[j]))), budget)
            if any(d.accepting):
                return False
    return True


def _search(pattern: str, text: str, loc: Loc) -> bool:
    try:
        return re.search(pattern, text) is not None
    except re.error as exc:
        raise UnsupportedSchema(
            f"patternProperties key {pattern!r} at {loc.ptr or '/'} is not a valid regex: {exc}",
            "patternProperties",
            loc.ptr,
        ) from None
