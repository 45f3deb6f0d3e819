"""``if``/``then``/``else`` conditionals that test one member's value, read as one switch on it.

One at a time, each conditional is an ``anyOf`` of two branches ("if and then", "not if and else")
that the translator splits, so n conditionals of one conjunction are 2^n conjunctions: an ``allOf``
of a hundred ``if: {properties: {kind: {const: ...}}}`` pairs (a discriminator) never finishes,
though all but n + 1 of them are contradictory (two kinds at once), found only at their leaves.
Such ``if``s (``properties`` of the member listing values, ``required`` of it, ``type: object``,
and ``anyOf``/``allOf``/``not`` of those) only ask which value the member has, so the instances
fall into a few cells on each of which every ``if`` is decided: not an object (where
``properties`` and ``required`` ask nothing: every ``if`` but one of type object passes there), an
object without the member (an ``if`` that does not require it passes there), the member equal to
a listed value (one cell for the values every ``if`` decides alike), to none of them. One ``anyOf``
with a branch per cell — the ``then`` of each ``if`` that passes there, the ``else`` of the
others — says the same in n + 3 branches for n discriminator values.

>>> from fsm.json.context import Loc
>>> conds = [Loc({"if": {"properties": {"k": {"const": v}}}, "then": {"required": [v]}}, f"/allOf/{i}", "u")
...          for i, v in enumerate("ab")]
>>> [(members, [b["allOf"][1:] for b in s.schema["anyOf"]]) for members, s in switches(None, conds)]
[([0, 1], [[{'required': ['a']}, {'required': ['b']}], [{'required': ['a']}], [{'required': ['b']}], []])]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .conditionals import conditional
from .context import Context, Loc
from .keywords import NO_CONSTRAINT, trivial
from .values import canon

# the types that are not object, whose instances `properties`/`required` ask nothing of
_NOT_OBJECT = ["null", "boolean", "number", "string", "array"]
# the keywords an ``if`` about one member's value may hold (besides annotations)
_TEST_KW = {"properties", "required", "type", "anyOf", "allOf", "not"}


@dataclass(frozen=True)
class _Test:
    """An ``if`` decided on each cell: whether it passes on a non-object, on an object without the
    member ``name``, with the member equal to each value in ``on`` (key: (value, passes)), and with
    it equal to any other value; ``name`` None: it asks nothing of a member (a type, true)."""

    name: str | None
    non_object: bool
    absent: bool
    on: dict[Any, tuple[Any, bool]]
    other: bool

    def at(self, key: Any) -> bool:
        """Whether the ``if`` passes with the member equal to the value of ``key``."""
        return self.on[key][1] if key in self.on else self.other


_PASS = _Test(None, True, True, {}, True)
_FAIL = _Test(None, False, False, {}, False)


def switches(t: Context | None, conds: list[Loc]) -> list[tuple[list[int], Loc]]:
    """The groups of two or more of ``conds`` (schemas holding ``if``/``then``/``else``) whose ``if``
    only tests one member against listed values, each with the ``anyOf`` it is (placed where its
    first member was); conds in no group are left to `conditionals.conditional`."""
    if t is not None and t.draft < 7:
        return []  # if/then/else are unknown keywords there
    groups: dict[tuple[str, str], list[tuple[int, _Test]]] = {}
    for i, loc in enumerate(conds):
        test = _test(t, loc)
        if test is not None:
            groups.setdefault((test.name, loc.base), []).append((i, test))
    out = []
    for (name, base), members in groups.items():
        if len(members) < 2:
            continue
        first = conds[members[0][0]]
        branches = _branches(name, [(conds[i].schema, test) for i, test in members])
        out.append(([i for i, _ in members], Loc({"anyOf": branches}, f"{first.ptr}/if", base)))
    return out


def with_conditionals(t: Context, flat: list[Loc], conds: list[tuple[int, Loc]]) -> list[Loc]:
    """``flat`` with the disjunction of each of ``conds`` (schemas holding ``if``/``then``/``else``,
    each with the index in ``flat`` it stood before) put back where it stood: those testing one
    member's value as one switch on it, each other one on its own (`conditionals.conditional`)."""
    made: dict[int, list[Loc]] = {}
    grouped: set[int] = set()
    for members, loc in switches(t, [c for _, c in conds]):
        made.setdefault(conds[members[0]][0], []).append(loc)
        grouped.update(members)
    for i, (at, loc) in enumerate(conds):
        if i not in grouped:
            rest, cond = conditional(t, loc)
            if cond is not None or rest.schema:  # rest: an if without an exact negation, reported later
                made.setdefault(at, []).append(cond if cond is not None else rest)
    out: list[Loc] = []
    for i, f in enumerate(flat):
        out += made.get(i, ())
        out.append(f)
    out += made.get(len(flat), ())
    return out


def _test(t: Context | None, loc: Loc) -> _Test | None:
    """What ``loc``'s ``if`` asks when that is only about one member's value (None otherwise)."""
    if "if" not in loc.schema:
        return None
    test = _schema_test(t, loc.schema["if"], loc.at("if"))
    return test if test is not None and test.name is not None else None


def _schema_test(t: Context | None, s: Any, loc: Loc) -> _Test | None:
    """``s`` as a `_Test`: ``properties`` of one member, ``required`` of it, ``type: object``, and
    ``anyOf``/``allOf``/``not`` of those (each decided on every cell, so combined cell by cell)."""
    if s is True or s is False or trivial(s):
        return _FAIL if s is False else _PASS
    if not isinstance(s, dict) or set(s) - NO_CONSTRAINT - _TEST_KW:
        return None
    parts: list[_Test | None] = []
    if "type" in s:
        parts.append(_Test(None, False, True, {}, True) if s["type"] in ("object", ["object"]) else None)
    if "required" in s:
        req = s["required"]
        names = set(req) if isinstance(req, list) and all(isinstance(r, str) for r in req) else None
        if names is None or len(names) > 1:
            return None
        parts += [_Test(n, True, False, {}, True) for n in names]
    if "properties" in s:
        props = s["properties"]
        if not isinstance(props, dict) or len(props) > 1:
            return None
        for name in props:
            member = _member(t, props[name], loc.at("properties", name))
            parts.append(None if member is None else _Test(name, True, True, *member))
    for kw, op in (("anyOf", any), ("allOf", all)):
        if kw in s:
            subs = s[kw]
            if not isinstance(subs, list) or not subs:
                return None
            parts.append(_combine([_schema_test(t, x, loc.at(kw, i)) for i, x in enumerate(subs)], op))
    if "not" in s:
        parts.append(_flip(_schema_test(t, s["not"], loc.at("not"))))
    return _combine(parts, all) if parts else _PASS


def _member(t: Context | None, m: Any, at: Loc) -> tuple[dict[Any, tuple[Any, bool]], bool] | None:
    """What ``m`` says of a present member: of each value it lists whether it passes (key: (value,
    passes)), and whether every other value does; None when ``m`` lists no values."""
    if m is True or m is False or trivial(m):
        return {}, m is not False
    if not isinstance(m, dict):
        return None
    kws = set(m) - NO_CONSTRAINT
    if kws == {"not"}:
        inner = _member(t, m["not"], at.at("not"))
        return None if inner is None else ({k: (v, not p) for k, (v, p) in inner[0].items()}, not inner[1])
    listed = [m["const"]] if "const" in m else m.get("enum")
    if not kws <= {"const", "enum", "type"} or not isinstance(listed, list):
        return None
    # the member's other keywords (a type, the enum beside a const) leave out some listed values
    return {_key(v): (v, t is None or t.is_valid(v, [at], [at])) for v in listed}, False


def _combine(tests: list[_Test | None], op: Any) -> _Test | None:
    """``tests`` combined cell by cell with ``op`` (`all`, `any`); None unless all are about one member."""
    if any(x is None for x in tests):
        return None
    names = {x.name for x in tests if x is not None} - {None}
    if len(names) > 1:
        return None
    on: dict[Any, Any] = {}
    for x in tests:
        for k, (v, _) in x.on.items():
            on.setdefault(k, v)
    return _Test(
        next(iter(names), None),
        op(x.non_object for x in tests),
        op(x.absent for x in tests),
        {k: (v, op(x.at(k) for x in tests)) for k, v in on.items()},
        op(x.other for x in tests),
    )


def _flip(x: _Test | None) -> _Test | None:
    """``not x``: it passes on every cell ``x`` fails on."""
    if x is None:
        return None
    return _Test(
        x.name, not x.non_object, not x.absent, {k: (v, not p) for k, (v, p) in x.on.items()}, not x.other
    )


def _branches(name: str, conds: list[tuple[dict, _Test]]) -> list[dict]:
    """One branch per cell of the instances: each cell's test and the consequences it decides."""
    tests = [test for _, test in conds]
    cells: list[tuple[dict, list[bool]]] = []
    non_object, absent = [x.non_object for x in tests], [x.absent for x in tests]
    if non_object == absent:  # `properties` holds for a non-object: one cell for both
        cells.append(({"properties": {name: False}}, absent))
    else:
        cells.append(({"type": list(_NOT_OBJECT)}, non_object))
        cells.append(({"type": "object", "properties": {name: False}}, absent))
    values: dict[Any, Any] = {}
    for x in tests:
        for key, (v, _) in x.on.items():
            values.setdefault(key, v)
    # values the ifs decide alike share a cell (two ifs over long enums: not a cell per value); the
    # values decided as unlisted ones are, with those, the cell of every value but the others
    alike: dict[tuple[bool, ...], list[Any]] = {}
    for key, v in values.items():
        alike.setdefault(tuple(x.at(key) for x in tests), []).append(v)
    rest = tuple(x.other for x in tests)
    for passes, vs in alike.items():
        if passes != rest:
            member = {"const": vs[0]} if len(vs) == 1 else {"enum": vs}
            cells.append(({"type": "object", "required": [name], "properties": {name: member}}, list(passes)))
    others = [v for passes, vs in alike.items() if passes != rest for v in vs]
    member = {"not": {"enum": others}} if others else True
    cells.append(({"type": "object", "required": [name], "properties": {name: member}}, list(rest)))
    branches = []
    for head, passes in cells:
        parts = [s.get("then" if p else "else", True) for (s, _), p in zip(conds, passes, strict=True)]
        branches.append({"allOf": [head, *(x for x in parts if not trivial(x))]})
    return branches


def _key(v: Any) -> Any:
    """``v``'s identity under JSON equality, at any depth ([1] is [1.0]; true is not 1)."""
    if isinstance(v, dict):
        return ("o", tuple(sorted((k, _key(x)) for k, x in v.items())))
    if isinstance(v, list):
        return ("a", tuple(_key(x) for x in v))
    return canon(v)
