"""``oneOf`` exclusivity: branches may be generated as ``anyOf`` only when they provably exclude
each other (cheap facts about each branch: possible types, finite values, required constant
properties, closed objects).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from ..automata import NEVER, Node
from ..errors import SchemaError, SpecTooComplex, UnsupportedSchema
from ..limits import Deadline
from .context import Context, Loc
from .keywords import TYPES, types_of
from .negation import NO_NEGATION, negation
from .refs import NeedsGrammar
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
            others = [Loc(negs[j], f"{loc.ptr}/oneOf/{j}", loc.base) for j in range(len(branches)) if j != i]
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
    fa, fb = _facts(t, [*base, a]), _facts(t, [b])
    if fa is None or fb is None:
        return False
    if not (fa.types & fb.types):
        return True
    if fa.values is not None:
        return all(not t.is_valid(v, [b]) for v in fa.values)
    # a property both require, with values that cannot coincide
    for name, va in fa.consts.items():
        if name not in fa.required:
            continue  # a's values may omit it, and then b's const on it says nothing
        vb = fb.consts.get(name)
        if vb is not None and not (set(map(canon, va)) & set(map(canon, vb))):
            return True
        if name in fb.forbidden:
            return True
    for name in fa.required:
        # b forbids it: properties: {name: false}, or a closed object that does not declare it
        if name in fb.forbidden or any(name not in declared for declared in fb.closed):
            return True
    for name in fb.required:
        # b needs a property that a's objects never have (a's values are objects: checked above),
        # or that this library never generates for a (a generated value is what must not match b)
        if fa.types <= {"object"} and (
            name in fa.forbidden
            or any(name not in declared for declared in fa.closed)
            or (fa.keys is not None and name not in fa.keys)
        ):
            return True
    return False


@dataclass
class Facts:
    """Cheap facts about the values a conjunction allows."""

    types: set[str] = field(default_factory=lambda: set(TYPES))  # integer and number go together
    values: list | None = None  # the finite values (enum/const), None: not finite
    consts: dict[str, list] = field(default_factory=dict)  # values a property has whenever present
    required: set[str] = field(default_factory=set)
    forbidden: set[str] = field(default_factory=set)  # properties: {name: false}
    closed: list[set[str]] = field(default_factory=list)  # the names each closed object declares
    keys: set[str] | None = None  # the keys this library generates (None: extras too)

    @classmethod
    def nothing(cls) -> Facts:
        """The facts of a conjunction no value satisfies."""
        return cls(types=set(), values=[], keys=set())


def _facts(t: Context, locs: list[Loc]) -> Facts | None:
    """Cheap facts about a conjunction: possible types, finite values, required consts."""
    try:
        flat = t.conjuncts(locs)
    except (NeedsGrammar, SchemaError):
        return None
    # a conjunct's anyOf/oneOf only narrows what it allows: every fact read here stays true of a
    # superset of the values, except the keys generated (branches may declare more)
    split = any(("anyOf" in f.schema or "oneOf" in f.schema) for f in flat if isinstance(f.schema, dict))
    facts = Facts()
    for f in flat:
        s = f.schema
        if s is False:
            return Facts.nothing()
        ts = types_of(s, f)
        if ts is not None:
            facts.types &= ts
        if "enum" in s or "const" in s:
            vals = s["enum"] if "enum" in s else [s["const"]]
            facts.values = (
                vals
                if facts.values is None
                else [v for v in facts.values if canon(v) in set(map(canon, vals))]
            )
        facts.required |= set(s.get("required", []) or [])
        for name, sub in (s.get("properties") or {}).items():
            if sub is False:
                facts.forbidden.add(name)
            elif isinstance(sub, dict) and ("const" in sub or "enum" in sub):
                facts.consts[name] = sub["enum"] if "enum" in sub else [sub["const"]]
        if s.get("additionalProperties") is False and not s.get("patternProperties"):
            facts.closed.append(set(s.get("properties") or {}))
    if "integer" in facts.types:
        facts.types.add("number")
    if "number" in facts.types:
        facts.types.add("integer")
    facts.keys = None if split else _generated_keys(t, flat, facts.required)
    return facts


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
