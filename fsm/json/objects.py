"""Object languages: declared properties in order (required present, optional omittable), extra keys
(``additionalProperties``/``patternProperties``, after the declared ones), ``propertyNames``, and
``min``/``maxProperties``.
"""

from __future__ import annotations

import json
import re

from ..automata import (
    ANY_CHAR,
    NEVER,
    And,
    Auto,
    CharDFA,
    Cls,
    Enc,
    Members,
    Minus,
    Node,
    alt,
    complement_dfa,
    lit,
    rep,
    seq,
    small_dfa,
    to_python_syntax,
)
from ..errors import SchemaError, UnsupportedSchema
from .context import Context, Loc
from .keywords import count, sees
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
        # each extra member counts toward min/maxProperties; keys are distinct in the instance data
        # model (JSON Schema core 4.2.1 leaves a repeated key undefined), so a count the declared
        # properties cannot reach is reached with extra keys
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
    names: dict[str, None] = {}  # ordered, and a set: ten thousand properties stay linear
    required: set[str] = set()
    for f in schemas:
        props = f.schema.get("properties", {})
        if not isinstance(props, dict):
            raise SchemaError(f"properties at {f.ptr or '/'} must be an object")
        names.update(dict.fromkeys(props))
    for f in schemas:
        req = f.schema.get("required", [])
        if isinstance(req, bool):  # draft 3 style
            continue
        if not isinstance(req, list):
            raise SchemaError(f"required at {f.ptr or '/'} must be an array")
        for k in req:
            required.add(k)
            names.setdefault(k, None)
    return list(names), required


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
        elif "unevaluatedProperties" in s and not any(
            sees(f, g) and _evaluates(g, name) for g in schemas if g is not f
        ):
            if s["unevaluatedProperties"] is False:
                return None
            out.append(f.at("unevaluatedProperties"))
    return out


def _evaluates(g: Loc, name: str) -> bool:
    """Whether conjunct ``g`` evaluates property ``name`` (so it is not unevaluated for who sees ``g``)."""
    s = g.schema
    return (
        name in (s.get("properties") or {})
        or "additionalProperties" in s
        or any(_search(p, name, g) for p in s.get("patternProperties") or {})
    )


def _extras(
    t: Context, schemas: list[Loc], names: list[str], name_locs: list[Loc], depth: int
) -> Node | None:
    """``key: value`` for keys not declared, or None when no extra key may be generated.

    The undeclared keys are split into regions by which ``patternProperties`` patterns (of every
    conjunct) they match; a region's value satisfies each matching pattern's schema and, for each
    conjunct none of whose patterns match, its ``additionalProperties`` (or ``unevaluatedProperties``,
    unless a conjunct it sees evaluates the key)."""
    key_lang = key_language(t, name_locs)
    if key_lang == NEVER:
        return None
    words = frozenset(names)
    pats = [(f, p) for f in schemas for p in f.schema.get("patternProperties") or {}]
    classes = []
    for matched, lang in _key_regions(t, pats, key_lang):
        vlocs = [pats[i][0].at("patternProperties", pats[i][1]) for i in sorted(matched)]
        owners = {id(pats[i][0]) for i in matched}
        allowed = bool(matched) or t.policy.additional_properties
        for f in schemas:
            if id(f) in owners:
                continue
            s = f.schema
            if "additionalProperties" in s:
                if s["additionalProperties"] is False:
                    break
                vlocs.append(f.at("additionalProperties"))
                allowed = True
            elif "unevaluatedProperties" in s and not any(
                sees(f, g) and (id(g) in owners or "additionalProperties" in g.schema) for g in schemas
            ):
                if s["unevaluatedProperties"] is False:
                    break
                vlocs.append(f.at("unevaluatedProperties"))
                allowed = True
        else:
            if not allowed:
                continue  # the generation policy: no key that only additionalProperties would allow
            vlocs = [v for v in vlocs if v.schema is not True]
            value = t.value(vlocs, depth + 1) if vlocs else t.any_value(depth + 1, schemas[0])
            if value != NEVER:
                classes.append(seq(lit('"'), _key(t, lang, words), lit('"' + t.layout.colon), value))
    return alt(*classes) if classes else None


# more regions than this (several overlapping patterns) is refused rather than built
_MAX_REGIONS = 16


def _key_regions(
    t: Context, pats: list[tuple[Loc, str]], key_lang: Node | None
) -> list[tuple[frozenset, Node | None]]:
    """The decoded keys split by which patterns match them: (indices into ``pats``, the keys' language,
    None for every key), empty regions left out."""
    budget = t.budget()
    regions: list[tuple[frozenset, Node | None]] = [(frozenset(), key_lang)]
    for i, (f, p) in enumerate(pats):
        try:
            inside = _auto(small_dfa(pattern_node(p), budget))
            # keys some regex reading matches and another does not are in neither part: not generated
            outside = _auto(complement_dfa(small_dfa(pattern_node(p, widest=True), budget)))
        except UnsupportedSchema as exc:
            t.unsupported("patternProperties", f, str(exc))
            continue  # lenient: the pattern is ignored
        split = []
        for matched, lang in regions:
            for m, part in ((matched | {i}, inside), (matched, outside)):
                d = small_dfa(part if lang is None else And((lang, part)), budget)
                if any(d.accepting):
                    split.append((m, _auto(d)))
        if len(split) > _MAX_REGIONS:
            t.unsupported("patternProperties", f, f"over {_MAX_REGIONS} key regions of overlapping patterns")
            return regions
        regions = split
    return regions


def _key(t: Context, lang: Node | None, words: frozenset) -> Node:
    """The JSON-encoded key text: decoded in ``lang`` (None: any), not a declared name."""
    if lang is None and not words:
        return Enc(rep(Cls(ANY_CHAR), 0, t.opts.max_string_length), True)
    body = rep(Cls(ANY_CHAR), 0, t.opts.max_string_length)
    if lang is not None:
        body = And((body, lang))
    return Enc(Minus(body, words))


def _auto(d: CharDFA) -> Auto:
    return Auto(tuple(tuple(row) for row in d.edges), tuple(d.accepting))


def _search(pattern: str, text: str, loc: Loc) -> bool:
    try:
        return re.search(to_python_syntax(pattern), text) is not None
    except re.error as exc:
        raise UnsupportedSchema(
            f"patternProperties key {pattern!r} at {loc.ptr or '/'} is not a valid regex: {exc}",
            "patternProperties",
            loc.ptr,
        ) from None
