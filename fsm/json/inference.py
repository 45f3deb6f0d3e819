"""The types a schema without ``type`` stands for: those its keywords are about.

The generation policy writes only those types (``{"properties": ...}`` is an object), where a
validator would take any JSON value; exact mode takes every type, each with its own keywords. Kept
apart from the translator so either policy asks the same question in one place.

>>> from fsm.json.context import Loc
>>> sorted(inferred_types([Loc({"minLength": 1, "maximum": 3}, "", "")], assert_format=True))
['number', 'string']
"""

from __future__ import annotations

from .context import Loc
from .formats import format_node
from .keywords import ARRAY_KW, NUMBER_KW, OBJECT_KW, STRING_KW, TYPES


def inferred_types(schemas: list[Loc], assert_format: bool) -> set[str] | None:
    """The types a schema without ``type`` generates: those its keywords are about (an asserted,
    known ``format`` makes it a string); None when no keyword is about a type."""
    kws = set()
    for f in schemas:
        kws |= set(f.schema)
    types = set()
    for group, t in (
        (OBJECT_KW, "object"),
        (ARRAY_KW, "array"),
        (STRING_KW, "string"),
        (NUMBER_KW, "number"),
    ):
        if kws & group:
            types.add(t)
    for f in schemas:
        fmt = f.schema.get("format") if assert_format else None
        if isinstance(fmt, str) and format_node(fmt) is not None:
            types.add("string")
    if not types and any(f.excluded is not None and f.excluded.values is not None for f in schemas):
        return None
    return types or None


def any_type(schemas: list[Loc], assert_format: bool) -> set[str] | None:
    """Every type, when a keyword of some type constrains ``schemas`` (each type's language then
    applies only its own keywords); None when nothing does (any JSON value).

    >>> from fsm.json.context import Loc
    >>> len(any_type([Loc({"minLength": 1}, "", "")], False)), any_type([Loc({}, "", "")], False)
    (7, None)
    """
    return set(TYPES) if inferred_types(schemas, assert_format) is not None else None
