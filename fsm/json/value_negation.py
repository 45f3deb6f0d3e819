"""``not`` of ``enum``/``const``: the values unequal (by JSON equality) to every listed one, as a
positive schema per type — null and booleans by what is left, strings by an `Excluded` set (the
string automaton subtracts them), numbers as the open intervals between the excluded ones, arrays
and objects as "a different length, or an item/member that differs" (recursively).

>>> values_negation([1, "a", None])["anyOf"][:2]
[{'type': 'boolean'}, {'type': 'object'}]
"""

from __future__ import annotations

from itertools import pairwise
from typing import Any

from .context import Excluded

# branches the conjunction of negated arrays (or objects) may split into
_MAX_PRODUCT = 256


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def values_negation(values: list, draft: int = 2020) -> Any:
    """A schema for exactly the JSON values equal to none of ``values`` (None: too many compound
    values to say so without thousands of branches)."""
    parts: list[Any] = []
    if not any(v is None for v in values):
        parts.append({"type": "null"})
    bools = [b for b in (True, False) if not any(v is b for v in values)]
    if len(bools) == 2:
        parts.append({"type": "boolean"})
    elif bools:
        parts.append({"const": bools[0]})
    for ty, pick in (("object", lambda v: isinstance(v, dict)), ("array", lambda v: isinstance(v, list))):
        compound = [v for v in values if pick(v)]
        if not compound:
            parts.append({"type": ty})
            continue
        negs = [_differs(v, draft) for v in compound]
        product = 1
        for n in negs:
            product *= len(n["anyOf"]) if "anyOf" in n else 1
        if product > _MAX_PRODUCT:
            return None
        parts.append({"allOf": [{"type": ty}, *negs]})
    strings = [v for v in values if isinstance(v, str)]
    parts.append({"allOf": [{"type": "string"}, Excluded(values=strings)]} if strings else {"type": "string"})
    numbers = sorted({float(v) if isinstance(v, float) else v for v in values if _is_number(v)})
    if not numbers:
        parts.append({"type": "number"})
    else:
        parts.append({"type": "number", "exclusiveMaximum": numbers[0]})
        for a, b in pairwise(numbers):
            parts.append({"type": "number", "exclusiveMinimum": a, "exclusiveMaximum": b})
        parts.append({"type": "number", "exclusiveMinimum": numbers[-1]})
    return {"anyOf": parts}


def _differs(v: Any, draft: int) -> Any:
    """The values of ``v``'s type (an array or an object) unequal to ``v``."""
    if isinstance(v, list):
        n = len(v)
        key = "prefixItems" if draft >= 2020 else "items"
        parts: list[Any] = [{"type": "array", "minItems": n + 1}]
        if n:
            parts.append({"type": "array", "maxItems": n - 1})
        for i, item in enumerate(v):
            # the item negated where it stands (a plain `not`: validators read it too)
            parts.append(
                {"type": "array", "minItems": n, "maxItems": n, key: [True] * i + [{"not": {"const": item}}]}
            )
        return {"anyOf": parts}
    parts = [{"type": "object", "properties": {k: False}} for k in v]
    # every member of v present and another one too
    parts.append({"type": "object", "required": list(v), "minProperties": len(v) + 1})
    for k, item in v.items():
        parts.append({"type": "object", "required": [k], "properties": {k: {"not": {"const": item}}}})
    return {"anyOf": parts}
