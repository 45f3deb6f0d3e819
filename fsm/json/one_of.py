"""``oneOf`` exclusivity: branches may be generated as ``anyOf`` only when they provably exclude
each other, which costs no negation (a negated branch can multiply a big schema): cheap facts about
each branch (possible types, finite values, required names, numeric bounds) and, where those do not
tell them apart, a member one branch requires whose values the two constrain disjointly (through
``properties``, ``patternProperties`` or ``additionalProperties``, a few levels deep), or each branch
of a side's ``anyOf``. Types every value of which two branches take, and the values of finite
branches that two branches take, are valid for none and left out first; only then are overlapping
branches intersected with the exact negations of the others.
"""

from __future__ import annotations

import time
import weakref
from dataclasses import dataclass, field
from typing import Any

from ..automata import NEVER, Node
from ..errors import SchemaError, SpecTooComplex, UnsupportedSchema
from ..limits import Deadline
from .context import Context, Loc
from .keywords import ARRAY_KW, NUMBER_KW, OBJECT_KW, STRING_KW, TYPES, VOCABULARY, meet, types_of
from .negation import NO_NEGATION, _search, negation
from .value_negation import values_negation
from .values import canon

NEGATION_SHARE = 0.3  # of max_seconds: what making overlapping oneOf branches exclusive may take


def exclusive_branches(t: Context, base: list[Loc], loc: Loc, nodes: list[Node], depth: int) -> list[Node]:
    """The branches of a ``oneOf`` (``nodes``: each with ``base``) so that a value matches exactly one.

    Branches that provably exclude each other are kept; otherwise each branch is intersected with
    the negations of the others, when every branch has an exact negation (`negation`): so
    ``[{"type": "integer"}, {"type": "number"}]`` is the numbers with a nonzero fraction, and
    overlapping ``enum``s lose their shared values. Else `UnsupportedSchema`.
    """
    try:
        check_exclusive(t, base, loc, nodes)
        return nodes
    except UnsupportedSchema as exc:
        refused = exc
    branches = loc.schema["oneOf"]
    dropped = _shared_types(t, loc, len(branches))
    if dropped:
        # no value of these types is valid (two branches take each): the branches without them
        kept = [x for x in TYPES if x not in dropped and not (x == "integer" and "number" in dropped)]
        base = [*base, Loc({"type": kept}, loc.ptr, loc.base)]
        nodes = [t.value([*base, loc.at("oneOf", j)], depth) for j in range(len(branches))]
        try:
            check_exclusive(t, base, loc, nodes)
            return nodes
        except UnsupportedSchema:
            pass
    finite = _finite_branches(t, base, loc, len(branches))
    if finite:
        out = _without_shared_values(t, base, loc, finite, depth)
        if out is not None:
            return out
    negs = [negation(t, branches[j], loc.at("oneOf", j), 0) for j in range(len(branches))]
    if any(n is NO_NEGATION for n in negs):
        raise refused
    # the negations may multiply a big schema: given a share of the compile's time, past which the
    # oneOf is refused as before (in bounded time) rather than the whole compile running out
    outer = t.deadline
    t.deadline = Deadline(min(outer.at, time.monotonic() + NEGATION_SHARE * outer.seconds), outer.seconds)
    try:
        out = []
        for i in range(len(branches)):
            if any(negs[j] is False for j in range(len(branches)) if j != i):
                continue  # another branch takes every value
            # under a `not` (a pointer no schema has): a negated branch evaluates no member for
            # unevaluatedProperties/Items (`keywords.sees`), as a failed subschema annotates nothing
            others = [
                Loc(negs[j], f"{loc.ptr}/oneOf/{j}/not", loc.base) for j in range(len(branches)) if j != i
            ]
            out.append(
                t.value([*base, loc.at("oneOf", i), *[o for o in others if o.schema is not True]], depth)
            )
        return out
    except SpecTooComplex as exc:
        if exc.budget == "max_seconds" and outer.remaining() > 0:
            raise refused from None
        raise
    finally:
        t.deadline = outer


def _finite_branches(t: Context, base: list[Loc], loc: Loc, n: int) -> dict[int, list]:
    """The branches with finitely many values (enum, const): each one's values valid with ``base``."""
    out = {}
    for j in range(n):
        f = _facts(t, [*base, loc.at("oneOf", j)])
        if f is not None and f.values is not None:
            try:
                out[j] = [v for v in f.values if t.is_valid(v, [*base, loc.at("oneOf", j)], f.flat)]
            except SchemaError:
                return {}
    return out


MAX_SHARED = 64  # values two branches share that a oneOf excludes by a `not: {enum}`


def _without_shared_values(
    t: Context, base: list[Loc], loc: Loc, finite: dict[int, list], depth: int
) -> list[Node] | None:
    """The branches without the values of finite branches that two branches take (found exactly by
    the validator), when the other branches exclude each other; None: not so."""
    n = len(loc.schema["oneOf"])
    shared: list = []
    try:
        for i, values in finite.items():
            for v in values:
                takers = sum(1 for j in range(n) if j == i or t.is_valid(v, [*base, loc.at("oneOf", j)]))
                if takers >= 2 and canon(v) not in set(map(canon, shared)):
                    shared.append(v)
    except SchemaError:
        return None
    if len(shared) > MAX_SHARED or (shared and values_negation(shared, t.draft) is None):
        return None  # no exact `not` of them here
    rest = [j for j in range(n) if j not in finite]
    facts = {j: (_facts(t, [*base, loc.at("oneOf", j)]), _facts(t, [loc.at("oneOf", j)])) for j in rest}
    for a in rest:
        for b in rest:
            la, lb = [*base, loc.at("oneOf", a)], [loc.at("oneOf", b)]
            if a != b and not _excludes(t, la, lb, facts[a][0], facts[b][1]):
                return None
    # a finite branch's values left are valid for it alone; the others are pairwise exclusive
    cut = [Loc({"not": {"enum": shared}}, loc.ptr, loc.base)] if shared else []
    return [t.value([*base, *cut, loc.at("oneOf", j)], depth) for j in range(n)]


# the keywords that constrain values of one type (a schema with none of them takes every value of it)
_ABOUT = {"object": OBJECT_KW, "array": ARRAY_KW, "string": STRING_KW | {"format"}, "number": NUMBER_KW}
_TYPED = set().union(*_ABOUT.values())


def _shared_types(t: Context, loc: Loc, n: int) -> set[str]:
    """The types (integer counted in number) every value of which two of the ``n`` branches take:
    e.g. every string when two branches only constrain objects."""
    takers = dict.fromkeys(("null", "boolean", "object", "array", "string", "number"), 0)
    for j in range(n):
        try:
            flat = t.conjuncts([loc.at("oneOf", j)])
        except SchemaError:
            continue
        for ty in takers:
            takers[ty] += _takes_every(flat, ty)
    return {ty for ty, k in takers.items() if k >= 2}


def _takes_every(flat: list[Loc], ty: str) -> bool:
    """Whether the conjuncts ``flat`` accept every value of type ``ty``, by their keywords alone."""
    for f in flat:
        s = f.schema
        if f.excluded is not None or not isinstance(s, dict):
            return False
        for k in s:
            if k == "type":
                if ty not in (types_of(s, f) or TYPES):
                    return False
            elif k in _ABOUT.get(ty, ()) or (k in VOCABULARY and k not in _TYPED and k != "nullable"):
                return False  # about ty, or about every type (enum, not, anyOf...)
    return True


# per translation: the oneOf branch lists (by id, with the base their refs resolve against) whose
# branches exclude each other on their own, whatever the siblings: a oneOf under many parents
# (a shared definition) is proved once
_ALONE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def check_exclusive(t: Context, base: list[Loc], loc: Loc, nodes: list[Node]) -> None:
    """oneOf as anyOf is exact only if no generated value of one branch validates another."""
    live = [j for j, n in enumerate(nodes) if n != NEVER]
    subs = {j: loc.at("oneOf", j) for j in live}
    memo = _ALONE.setdefault(t, {})
    known = memo.get((id(loc.schema["oneOf"]), loc.base))
    if known is not None and known[0] is loc.schema["oneOf"]:
        return  # the siblings only narrow each branch
    # each branch's facts read once (alone, then with the siblings), not once per pair
    alone = {j: _facts(t, [subs[j]]) for j in live}
    apart = all(
        _excludes(t, [subs[a]], [subs[b]], alone[a], alone[b], keys=False)
        for a in live
        for b in live
        if a < b
    )
    if apart and len(live) == len(nodes):
        memo[(id(loc.schema["oneOf"]), loc.base)] = (loc.schema["oneOf"],)
    if apart:
        return
    with_base = {j: _facts(t, [*base, subs[j]]) for j in live}
    for a in live:
        for b in live:
            if a != b and not _excludes(t, [*base, subs[a]], [subs[b]], with_base[a], alone[b]):
                raise UnsupportedSchema(
                    f"oneOf at {loc.ptr or '/'}: branches {a} and {b} can match the same value, so "
                    "'exactly one' cannot be enforced; pass oneof='anyof' to accept anyOf semantics",
                    "oneOf",
                    loc.ptr + "/oneOf",
                )


def _excludes(
    t: Context, la: list[Loc], lb: list[Loc], fa: Facts | None, fb: Facts | None, keys: bool = True
) -> bool:
    """True when every value generated for ``la`` is invalid for ``lb`` (``fa``, ``fb``: their facts);
    ``keys=False``: every value (not the generation policy's argument), so both ways."""
    if fa is None or fb is None:
        return False
    if (
        keys
        and fa.types <= {"object"}
        and fa.keys is not None
        and any(name not in fa.keys for name in fb.required)
    ):
        return True  # b needs a property that this library never generates for a (the generation policy)
    return _disjoint(t, la, lb, 0, fa, fb)


MAX_PROOF_DEPTH = 4  # member values and anyOf branches a disjointness proof looks into
MAX_SPLIT = 16  # anyOf/oneOf branches a proof splits a side into


def _disjoint(
    t: Context, la: list[Loc], lb: list[Loc], depth: int, fa: Facts | None = None, fb: Facts | None = None
) -> bool:
    """True when no value validates against both conjunctions ``la`` and ``lb`` (False: not shown).

    Each argument reads a superset of a side's values (conjuncts it cannot read are left out), so a
    proof is sound: no shared type; a finite side whose values the validator finds invalid for the
    other; shared values all objects, with a member one side requires whose values the two sides
    constrain disjointly (``properties``, a matching ``patternProperties``, else
    ``additionalProperties``: false is the member forbidden); shared values all numbers in disjoint
    ranges; else each branch of an ``anyOf``/``oneOf`` of a side disjoint from the other side.
    """
    fa = _facts(t, la) if fa is None else fa
    fb = _facts(t, lb) if fb is None else fb
    if fa is None or fb is None:
        return False
    common = fa.types & fb.types
    if not common:
        return True
    try:
        if fa.values is not None:
            return all(not t.is_valid(v, lb, fb.flat) for v in fa.values)
        if fb.values is not None:
            return all(not t.is_valid(v, la, fa.flat) for v in fb.values)
    except SchemaError:
        return False  # a schema the validator cannot evaluate
    if depth >= MAX_PROOF_DEPTH:
        return False
    if common <= {"object"} and (_members_disjoint(t, fa, fb, depth) or _members_disjoint(t, fb, fa, depth)):
        return True
    if common <= {"number", "integer"} and _ranges_disjoint(fa.range, fb.range):
        return True
    return _split_disjoint(t, la, lb, fa, depth) or _split_disjoint(t, lb, la, fb, depth)


def _members_disjoint(t: Context, fa: Facts, fb: Facts, depth: int) -> bool:
    """A member every object of ``fa`` has, whose values there exclude its values in ``fb``."""
    for name in sorted(fa.required):
        sb = _member_schemas(fb.flat, name)
        if not sb:
            continue  # b leaves the member free
        if any(x.schema is False for x in sb) or _disjoint(t, _member_schemas(fa.flat, name), sb, depth + 1):
            return True
    return False


def _member_schemas(flat: list[Loc], name: str) -> list[Loc]:
    """The subschemas a member ``name``'s value must satisfy in the objects of ``flat`` (some may be
    left out: a pattern Python cannot read, or what an `Excluded` conjunct says)."""
    out: list[Loc] = []
    for f in flat:
        s = f.schema
        if not isinstance(s, dict) or f.excluded is not None:
            continue
        props, pats = s.get("properties"), s.get("patternProperties")
        declared = isinstance(props, dict) and name in props
        if declared:
            out.append(f.at("properties", name))
        matched, unknown = False, False
        for p in pats if isinstance(pats, dict) else ():
            found = _search(p, name)
            unknown |= found is None
            if found:
                matched = True
                out.append(f.at("patternProperties", p))
        if not declared and not matched and not unknown and "additionalProperties" in s:
            out.append(f.at("additionalProperties"))
    return out


def _ranges_disjoint(ra: tuple, rb: tuple) -> bool:
    """Whether two numeric ranges ``(low, low_open, high, high_open)`` share no number."""

    def below(hi: tuple, lo: tuple) -> bool:  # every number under hi is under lo
        (h, h_open), (low, l_open) = hi, lo
        return h is not None and low is not None and (h < low or (h == low and (h_open or l_open)))

    return below(ra[2:], rb[:2]) or below(rb[2:], ra[:2])


def _split_disjoint(t: Context, la: list[Loc], lb: list[Loc], fa: Facts, depth: int) -> bool:
    """``la``'s first ``anyOf``/``oneOf`` conjunct split: every branch (with the other conjuncts)
    disjoint from ``lb``."""
    for i, f in enumerate(fa.flat):
        s = f.schema
        kw = next((k for k in ("anyOf", "oneOf") if isinstance(s, dict) and k in s), None)
        if kw is None or f.excluded is not None:
            continue
        subs = s[kw]
        if not isinstance(subs, list) or not subs or len(subs) > MAX_SPLIT:
            return False
        rest = [*fa.flat[:i], Loc({k: v for k, v in s.items() if k != kw}, f.ptr, f.base), *fa.flat[i + 1 :]]
        return all(_disjoint(t, [*rest, f.at(kw, j)], lb, depth + 1) for j in range(len(subs)))
    return False


@dataclass
class Facts:
    """Cheap facts about the values a conjunction allows (each true of a superset of them)."""

    types: set[str] = field(default_factory=lambda: set(TYPES))  # integer and number go together
    values: list | None = None  # the finite values (enum/const), None: not finite
    required: set[str] = field(default_factory=set)
    keys: set[str] | None = None  # the keys this library generates (None: extras too)
    flat: list[Loc] = field(default_factory=list)  # the conjuncts
    range: tuple = (None, False, None, False)  # numbers: low, low exclusive, high, high exclusive

    @classmethod
    def nothing(cls) -> Facts:
        """The facts of a conjunction no value satisfies."""
        return cls(types=set(), values=[], keys=set())


def _facts(t: Context, locs: list[Loc]) -> Facts | None:
    """Cheap facts about a conjunction: possible types, finite values, required names, bounds."""
    try:
        flat = t.conjuncts(locs)
    except SchemaError:  # (NeedsGrammar goes on: a recursion, for the pushdown translation)
        return None
    # a conjunct's anyOf/oneOf only narrows what it allows: every fact read here stays true of a
    # superset of the values, except the keys generated (branches may declare more)
    split = any(("anyOf" in f.schema or "oneOf" in f.schema) for f in flat if isinstance(f.schema, dict))
    facts = Facts(flat=flat)
    for f in flat:
        s = f.schema
        if s is False:
            return Facts.nothing()
        ts = types_of(s, f)
        if ts is not None:
            # integer is a subtype of number: ``{type: number}`` beside ``{type: integer}`` keeps
            # the integers (a plain intersection left no type, "disjoint" from every branch)
            facts.types = meet(facts.types, ts)
        if "enum" in s or "const" in s:
            vals = s["enum"] if "enum" in s else [s["const"]]
            if not isinstance(vals, list):
                return None
            facts.values = (
                vals
                if facts.values is None
                else [v for v in facts.values if canon(v) in set(map(canon, vals))]
            )
        req = s.get("required", [])
        facts.required |= {n for n in req if isinstance(n, str)} if isinstance(req, list) else set()
        facts.range = _narrowed(facts.range, s)
    if "integer" in facts.types:
        facts.types.add("number")
    if "number" in facts.types:
        facts.types.add("integer")
    facts.keys = None if split else _generated_keys(t, flat, facts.required)
    return facts


def _narrowed(r: tuple, s: dict) -> tuple:
    """The numeric range ``r`` under the bounds of ``s`` (draft-4 boolean exclusives included)."""
    low, low_open, high, high_open = r

    def num(v: Any) -> bool:
        return isinstance(v, (int, float)) and not isinstance(v, bool)

    for kw, excl, is_low in (("minimum", "exclusiveMinimum", True), ("maximum", "exclusiveMaximum", False)):
        bounds = []
        if num(s.get(kw)):
            bounds.append((s[kw], s.get(excl) is True))
        if num(s.get(excl)):
            bounds.append((s[excl], True))
        for v, is_open in bounds:
            if is_low and (low is None or v > low or (v == low and is_open)):
                low, low_open = v, is_open
            if not is_low and (high is None or v < high or (v == high and is_open)):
                high, high_open = v, is_open
    return low, low_open, high, high_open


def _generated_keys(t: Context, flat: list[Loc], required: set[str]) -> set[str] | None:
    """The keys this library generates for these objects when none of them allows extras (the
    policy for unspecified additionalProperties): declared and required names only; None: extras."""
    dicts = [f.schema for f in flat if isinstance(f.schema, dict)]
    explicit = [d["additionalProperties"] for d in dicts if "additionalProperties" in d]
    opened = (
        t.policy.additional_properties
        or any("patternProperties" in d for d in dicts)
        or (explicit and all(x is not False for x in explicit))
    )
    names = set(required)
    for d in dicts:
        names |= set(d.get("properties") or {})
    return None if opened else names
