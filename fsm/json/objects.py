"""Object languages: declared properties in order (required present, optional omittable), extra keys
(``additionalProperties``/``patternProperties``, after the declared ones), ``propertyNames``, and
``min``/``maxProperties``.
"""

from __future__ import annotations

import json
import re
from json.encoder import encode_basestring  # json.dumps(name, ensure_ascii=False) without an encoder per name

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
from ..automata.char_dfa import CharDFAMemo
from ..errors import SchemaError, UnsupportedSchema
from .context import Context, Loc
from .keywords import count, sees
from .patterns import pattern_node
from .strings import key_language


def object_language(t: Context, schemas: list[Loc], depth: int, witnesses: tuple[Loc, ...] = ()) -> Node:
    """The objects valid against every schema in ``schemas`` (already flattened); with ``witnesses``
    (conjuncts whose `Witness` must be met), with one undeclared member meeting each, after the others."""
    found = [f for f in schemas if f.excluded is not None and f.excluded.member is not None]
    if found:  # the witness's conjunct stays as the object type it stands for
        rest = [Loc(f.schema, f.ptr, f.base) if f is found[0] else f for f in schemas]
        return _witnessed(t, rest, found[0], depth, witnesses)
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
        key = lit((encode_basestring(name) if isinstance(name, str) else json.dumps(name)) + colon)
        items.append((seq(key, value), 1 if name in required else 0, 1))
    n_required = sum(1 for _, lo, _ in items if lo == 1)
    extras = _extras(t, schemas, names, name_locs, depth)
    if extras is not None:
        # each extra member counts toward min/maxProperties; keys are distinct in the instance data
        # model (JSON Schema core 4.2.1 leaves a repeated key undefined), so a count the declared
        # properties cannot reach is reached with extra keys
        items.append((extras, 0, None))
    if not witnesses:
        return _members(t, items, n_required, (min_p, max_p), extras is not None, sep, depth)
    # each group of witnesses met by one member of its own (several by one: it meets them all)
    out = []
    groupings = _partitions(witnesses) if len(witnesses) <= _MAX_WITNESSES else [[(w,) for w in witnesses]]
    for groups in groupings:
        wit_items = [_extras(t, schemas, names, name_locs, depth, group) for group in groups]
        if all(m is not None for m in wit_items):
            its = items + [(m, 1, 1) for m in wit_items]
            counts = (min_p, max_p)
            out.append(_members(t, its, n_required + len(groups), counts, extras is not None, sep, depth))
    return alt(*out)


def _members(
    t: Context, items: list, n_required: int, counts: tuple, extras: bool, sep: Node, depth: int
) -> Node:
    """The object of these member ``items`` (``counts``: min/maxProperties; ``extras``: an item of
    undeclared keys among them)."""
    min_p, max_p = counts
    if max_p is not None and n_required > max_p:
        return NEVER
    if len(items) < min_p and not extras:
        return NEVER
    members = Members(tuple(items), sep, min_count=max(min_p, 1), max_count=max_p)
    can_be_empty = min_p == 0 and n_required == 0
    if not items:
        return lit("{}") if can_be_empty else NEVER
    return t.layout.container("{", "}", members, can_be_empty, depth)


_MAX_WITNESSES = 4  # more are met by a member each (15 ways to group 4, 52 to group 5)


def _partitions(xs: tuple) -> list[list[tuple]]:
    """Every way to split ``xs`` into groups.

    >>> len(_partitions((1, 2, 3)))
    5
    """
    if not xs:
        return [[]]
    first, rest = xs[0], xs[1:]
    out = []
    for part in _partitions(rest):
        out.append([(first,), *part])
        for i in range(len(part)):
            out.append([*part[:i], (first, *part[i]), *part[i + 1 :]])
    return out


def _witnessed(t: Context, schemas: list[Loc], w: Loc, depth: int, witnesses: tuple[Loc, ...]) -> Node:
    """The objects of ``schemas`` with a member meeting ``w``'s `Witness`: a declared name that fits
    its keys, present with its value; or an undeclared key (one of `object_language`'s ``witnesses``).
    Several witnesses take a member each (one member meeting two is not generated)."""
    wit = w.excluded.member
    names, _ = _declared(schemas)
    branches = []
    for name in names:
        t.tick()
        if _fits(t, wit, name, w):
            have = Loc({"required": [name], "properties": {name: wit.value}}, w.ptr, w.base)
            branches.append(object_language(t, [*schemas, have], depth, witnesses))
    branches.append(object_language(t, schemas, depth, (*witnesses, w)))
    return alt(*branches)


def _fits(t: Context, wit, name: str, w: Loc) -> bool:
    """Whether the key ``name`` is one the `Witness` ``wit`` may have."""
    return (
        name not in wit.names
        and all(_search(p, name, w) for p in wit.patterns)
        and not any(_search(p, name, w) for p in wit.not_patterns)
        and (wit.breaks is None or not t.is_valid(name, [Loc(wit.breaks, w.ptr, w.base)]))
    )


def _witness_keys(t: Context, w: Loc) -> Node | None:
    """The decoded keys ``w``'s `Witness` allows beside its names (None: any)."""
    wit = w.excluded.member
    budget = t.budget()
    parts: list[Node] = []
    try:
        parts += [pattern_node(p) for p in wit.patterns]
        # a key no reading of the pattern matches
        parts += [
            _auto(complement_dfa(small_dfa(pattern_node(p, widest=True), budget))) for p in wit.not_patterns
        ]
    except UnsupportedSchema as exc:
        raise UnsupportedSchema(f"not: {exc}", "not", w.ptr) from None
    if wit.breaks is not None:  # the keys of its negation (a negated string schema: a complement)
        names = key_language(t, [Loc({"not": wit.breaks}, w.ptr, w.base)])
        if names is not None:
            parts.append(names)
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else And(tuple(parts))


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
    """Whether conjunct ``g`` evaluates property ``name`` (so it is not unevaluated for who sees ``g``):
    its own ``unevaluatedProperties`` evaluates every member its siblings leave."""
    s = g.schema
    return (
        name in (s.get("properties") or {})
        or "additionalProperties" in s
        or "unevaluatedProperties" in s
        or any(_search(p, name, g) for p in s.get("patternProperties") or {})
    )


def _evaluates_all(g: Loc, f: Loc) -> bool:
    """Whether conjunct ``g`` evaluates every undeclared member for ``f``'s unevaluatedProperties:
    by ``additionalProperties``, or by an ``unevaluatedProperties`` of its own (a nested one)."""
    return "additionalProperties" in g.schema or (g is not f and "unevaluatedProperties" in g.schema)


def _extras(
    t: Context,
    schemas: list[Loc],
    names: list[str],
    name_locs: list[Loc],
    depth: int,
    witnesses: tuple = (),
) -> Node | None:
    """``key: value`` for keys not declared, or None when no extra key may be generated.

    The undeclared keys are split into regions by which ``patternProperties`` patterns (of every
    conjunct) they match; a region's value satisfies each matching pattern's schema and, for each
    conjunct none of whose patterns match, its ``additionalProperties`` (or ``unevaluatedProperties``,
    unless a conjunct it sees evaluates the key)."""
    key_lang = key_language(t, name_locs)
    words = frozenset(names)
    extra_value: list[Loc] = []
    for witness in witnesses:  # the one member these witnesses ask for: their keys and values too
        wit = witness.excluded.member
        keys = _witness_keys(t, witness)
        if keys is not None:
            key_lang = keys if key_lang is None else And((key_lang, keys))
        words |= frozenset(wit.names)
        extra_value.append(Loc(wit.value, witness.ptr, witness.base))
    if key_lang == NEVER:
        return None
    pats = [(f, p) for f in schemas for p in f.schema.get("patternProperties") or {}]
    classes = []
    for matched, lang in _key_regions(t, pats, key_lang):
        vlocs = [pats[i][0].at("patternProperties", pats[i][1]) for i in sorted(matched)] + extra_value
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
                sees(f, g) and (id(g) in owners or _evaluates_all(g, f)) for g in schemas
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


# more regions than this (many overlapping patterns) is refused rather than built; disjoint
# patterns (anchored names, the usual case) add one region each
_MAX_REGIONS = 64
# the regions of a set of patterns (every key allowed): the same sets recur across a schema's
# objects and across schemas (OCDS's language-tagged ``^(title_...)$`` on every object: 90
# objects of one schema asked for 6 sets, 1.3 s of products and complements made anew)
_REGIONS = CharDFAMemo(128)


def _key_regions(
    t: Context, pats: list[tuple[Loc, str]], key_lang: Node | None
) -> list[tuple[frozenset, Node | None]]:
    """The decoded keys split by which patterns match them: (indices into ``pats``, the keys' language,
    None for every key), empty regions left out. A pattern written again (by another conjunct) splits
    nothing more: its index joins the first one's."""
    if not pats:  # most objects: no pattern, one region (and no budget to make)
        return [(frozenset(), key_lang)]
    same: dict[str, list[int]] = {}
    for i, (_, p) in enumerate(pats):
        same.setdefault(p, []).append(i)
    key = tuple(same) if key_lang is None else None
    found, regions = _REGIONS.get(key) if key is not None else (False, None)
    if not found:
        regions, whole = _split_keys(t, pats, same, key_lang)
        if regions is None:
            return [(frozenset(), key_lang)]
        if key is not None and whole:  # a pattern ignored (lenient) is told about at each object
            _REGIONS.put(key, regions)
    return [(frozenset(i for p in ps for i in same[p]), lang) for ps, lang in regions]


def _split_keys(
    t: Context, pats: list[tuple[Loc, str]], same: dict[str, list[int]], key_lang: Node | None
) -> tuple[list[tuple[frozenset, Node | None]] | None, bool]:
    """`_key_regions`' work, regions named by their patterns (None past `_MAX_REGIONS`), and
    whether every pattern was read (none ignored as unsupported)."""
    budget = t.budget()
    regions: list[tuple[frozenset, Node | None]] = [(frozenset(), key_lang)]
    whole = True
    for p, idxs in same.items():
        f = pats[idxs[0]][0]
        try:
            inside = _auto(small_dfa(pattern_node(p), budget))
            # keys some regex reading matches and another does not are in neither part: not generated
            outside = _auto(complement_dfa(small_dfa(pattern_node(p, widest=True), budget)))
        except UnsupportedSchema as exc:
            t.unsupported("patternProperties", f, str(exc))
            whole = False
            continue  # lenient: the pattern is ignored
        split = []
        for matched, lang in regions:
            for m, part in ((matched | {p}, inside), (matched, outside)):
                d = small_dfa(part if lang is None else And((lang, part)), budget)
                if any(d.accepting):
                    split.append((m, _auto(d)))
        if len(split) > _MAX_REGIONS:
            t.unsupported("patternProperties", f, f"over {_MAX_REGIONS} key regions of overlapping patterns")
            return None, False
        regions = split
    return regions, whole


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
