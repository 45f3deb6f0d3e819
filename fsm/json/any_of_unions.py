"""``anyOf`` beside ``unevaluatedProperties``/``unevaluatedItems``: every branch that passes evaluates,
so an object may need the members of two branches at once (``{"foo", "bar", "baz"}`` where one
branch evaluates ``bar`` and another ``baz``). The translator's split takes one branch at a time,
each with what it alone evaluates: sound, but such objects are rejected. Here the split is over
the sets of branches that pass, each set one conjunction evaluating what its branches evaluate.

Only branches that can evaluate something are combined (a ``type`` or ``required`` adds nothing a
set without it lacks), and only up to `MAX_COMBINED` of them (2^n - 1 sets): past it, one branch
at a time as before (its language a subset: sound).

>>> from fsm.json.context import Loc
>>> flat = [Loc({"unevaluatedProperties": False, "anyOf": [{"properties": {"a": {}}}, {"properties": {"b": {}}}, {"required": ["a"]}]}, "", "u")]
>>> [[b.ptr for b in u] for u in any_of_unions(flat, 0)]
[['/anyOf/0'], ['/anyOf/1'], ['/anyOf/2'], ['/anyOf/0', '/anyOf/1']]
"""

from __future__ import annotations

import itertools

from .context import Loc
from .keywords import sees

MAX_COMBINED = 4  # branches that can evaluate, combined in every way (15 sets for 4)

# keywords through which a branch can evaluate members or items (directly, or in place below)
_EVALUATING = frozenset(
    (
        "properties",
        "patternProperties",
        "additionalProperties",
        "unevaluatedProperties",
        "prefixItems",
        "items",
        "additionalItems",
        "contains",
        "unevaluatedItems",
        "$ref",
        "$dynamicRef",
        "$recursiveRef",
        "allOf",
        "anyOf",
        "oneOf",
        "if",
        "dependentSchemas",
        "dependencies",
    )
)
_UNEVALUATED = ("unevaluatedProperties", "unevaluatedItems")


def any_of_unions(flat: list[Loc], i: int) -> list[tuple[Loc, ...]] | None:
    """The branch sets to split conjunct ``flat[i]``'s ``anyOf`` into (each a tuple of branches),
    when an unevaluated* keyword of the conjunction sees its branches; None: one at a time."""
    loc = flat[i]
    n = len(loc.schema["anyOf"])
    branches = [loc.at("anyOf", j) for j in range(n)]
    if not any(
        isinstance(f.schema, dict)
        and any(f.schema.get(kw, True) is not True for kw in _UNEVALUATED)
        and sees(f, branches[0])
        for f in flat
    ):
        return None
    evaluating = [b for b in branches if isinstance(b.schema, dict) and _EVALUATING & set(b.schema)]
    if len(evaluating) < 2 or len(evaluating) > MAX_COMBINED:
        return None
    out: list[tuple[Loc, ...]] = [(b,) for b in branches]
    for k in range(2, len(evaluating) + 1):
        out += itertools.combinations(evaluating, k)
    return out
