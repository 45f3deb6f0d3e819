"""``if``/``then``/``else`` conditionals that test one member's value, read as one switch on it.

One at a time, each conditional is an ``anyOf`` of two branches ("if and then", "not if and else")
that the translator splits, so n conditionals of one conjunction are 2^n conjunctions: an ``allOf``
of a hundred ``if: {properties: {kind: {const: ...}}}`` pairs (a discriminator) never finishes,
though all but n + 1 of them are contradictory (two kinds at once), found only at their leaves.
Such ``if``s only ask which value the member has, so the instances fall into a few cells on each
of which every ``if`` is decided: not an object (where ``properties`` and ``required`` ask nothing:
every ``if`` passes there but one of type object), an object without the member (an ``if`` that does
not require it passes there), the member equal to each value listed, the member equal to none of
them. One ``anyOf`` with a branch per cell — the ``then`` of each ``if`` that passes there, the
``else`` of the others — says the same in three branches more than the values listed at most.

>>> from fsm.json.context import Loc
>>> conds = [Loc({"if": {"properties": {"k": {"const": v}}}, "then": {"required": [v]}}, f"/allOf/{i}", "u")
...          for i, v in enumerate("ab")]
>>> [(members, [b["allOf"][1:] for b in s.schema["anyOf"]]) for members, s in switches(None, conds)]
[([0, 1], [[{'required': ['a']}, {'required': ['b']}], [{'required': ['a']}], [{'required': ['b']}], []])]
"""

from __future__ import annotations

from typing import Any

from .conditionals import conditional
from .context import Context, Loc
from .keywords import NO_CONSTRAINT, trivial
from .values import canon

# the types that are not object, whose instances `properties`/`required` ask nothing of
_NOT_OBJECT = ["null", "boolean", "number", "string", "array"]


class _Test:
    """What one ``if`` asks: the member ``name`` has one of ``values`` (canonical key -> value), and
    whether it passes on a non-object and on an object without the member."""

    def __init__(self, name: str, values: dict[Any, Any], non_object: bool, absent: bool):
        self.name, self.values, self.non_object, self.absent = name, values, non_object, absent


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
    """What ``loc``'s ``if`` asks when it only tests one member's value (None otherwise)."""
    cond = loc.schema.get("if")
    if not isinstance(cond, dict) or not set(cond) - NO_CONSTRAINT <= {"properties", "required", "type"}:
        return None
    props, required, ty = cond.get("properties"), cond.get("required", []), cond.get("type")
    if not isinstance(props, dict) or len(props) != 1 or ty not in (None, "object", ["object"]):
        return None
    ((name, member),) = props.items()
    if not isinstance(required, list) or any(r != name for r in required):
        return None
    if not isinstance(member, dict) or not set(member) - NO_CONSTRAINT <= {"const", "enum", "type"}:
        return None
    listed = [member["const"]] if "const" in member else member.get("enum")
    if not isinstance(listed, list):
        return None
    at = Loc(member, f"{loc.ptr}/if/properties/{_escape(name)}", loc.base)
    # the member's other keywords (a type, the enum beside a const) leave out some listed values
    values = {_key(v): v for v in listed if t is None or t.is_valid(v, [at], [at])}
    strict = name in required
    return _Test(name, values, non_object=ty is None, absent=not strict)


def _branches(name: str, conds: list[tuple[dict, _Test]]) -> list[dict]:
    """One branch per cell of the instances: each cell's test and the consequences it decides."""
    cells: list[tuple[dict, list[bool]]] = []
    non_object = [test.non_object for _, test in conds]
    absent = [test.absent for _, test in conds]
    if non_object == absent:  # `properties` holds for a non-object: one cell for both
        cells.append(({"properties": {name: False}}, absent))
    else:
        cells.append(({"type": list(_NOT_OBJECT)}, non_object))
        cells.append(({"type": "object", "properties": {name: False}}, absent))
    values: dict[Any, Any] = {}
    for _, test in conds:
        values.update(test.values)
    for key, v in values.items():
        head = {"type": "object", "required": [name], "properties": {name: {"const": v}}}
        cells.append((head, [key in test.values for _, test in conds]))
    other = {"not": {"enum": list(values.values())}} if values else True
    cells.append(({"type": "object", "required": [name], "properties": {name: other}}, [False] * len(conds)))
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


def _escape(name: str) -> str:
    return name.replace("~", "~0").replace("/", "~1")
