"""The JSON Schema vocabulary as this translator reads it: keyword sets, and checks of keyword arguments.

>>> sorted(types_of({"type": ["integer", "null"]}, Loc({}, "", "")))
['integer', 'null']
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ..errors import SchemaError
from .context import Loc

TYPES = ("null", "boolean", "object", "array", "string", "number", "integer")

OBJECT_KW = {
    "properties",
    "required",
    "additionalProperties",
    "patternProperties",
    "propertyNames",
    "minProperties",
    "maxProperties",
    "dependentRequired",
    "unevaluatedProperties",
}

ARRAY_KW = {
    "items",
    "prefixItems",
    "additionalItems",
    "minItems",
    "maxItems",
    "contains",
    "minContains",
    "maxContains",
    "uniqueItems",
    "unevaluatedItems",
}

STRING_KW = {"minLength", "maxLength", "pattern"}

NUMBER_KW = {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"}

# Vocabulary keywords that constrain instances in a way no automaton here enforces.
UNSUPPORTED = {"$dynamicRef", "$recursiveRef"}

# Every keyword that can constrain an instance (others, e.g. ``x-*`` or ``discriminator``, are annotations).
VOCABULARY = (
    OBJECT_KW
    | ARRAY_KW
    | STRING_KW
    | NUMBER_KW
    | UNSUPPORTED
    | {"type", "nullable", "enum", "const", "format", "not", "allOf", "anyOf", "oneOf", "$ref"}
    | {"if", "then", "else", "dependentSchemas", "dependencies"}
)

# Annotations: keywords that never constrain an instance.
ANNOTATIONS = {
    "title",
    "description",
    "$comment",
    "default",
    "examples",
    "example",
    "readOnly",
    "writeOnly",
    "deprecated",
}

REF_SIBLINGS_OK = ANNOTATIONS | {"$ref"}

NO_CONSTRAINT = ANNOTATIONS | {"$schema"}


DEPENDENCY_KW = ("dependentRequired", "dependentSchemas", "dependencies")


def dependency_keywords(draft: int) -> tuple[str, ...]:
    """The object-dependency keywords of ``draft``: ``dependencies`` up to draft 7, then its two halves
    and, as the suite's optional compatibility tests ask, ``dependencies`` still (only stricter).

    >>> dependency_keywords(7), dependency_keywords(2020)
    (('dependencies',), ('dependentRequired', 'dependentSchemas', 'dependencies'))
    """
    return DEPENDENCY_KW[2:] if draft <= 7 else DEPENDENCY_KW


def type_set(t: Any) -> set[str]:
    """The type names of a ``type`` value (a string or a list), ``{"string"}`` for ``"string"``."""
    return (
        {t} if isinstance(t, str) else {x for x in t if isinstance(x, str)} if isinstance(t, list) else set()
    )


def trivial(s: Any) -> bool:
    """A schema every value satisfies, by its keys alone (true, {}, annotations only)."""
    return s is True or (isinstance(s, dict) and set(s) <= NO_CONSTRAINT)


def pure_ref(s: Any, draft: int) -> str | None:
    """The $ref of a schema that is nothing but a reference: its siblings are annotations, keywords
    outside the vocabulary (``markdownDescription``, ``x-*``: they assert nothing), or ignored.

    >>> pure_ref({"$ref": "#/a", "description": "d", "x-order": 1}, 2020), pure_ref({"$ref": "#/a", "type": "null"}, 2020)
    ('#/a', None)
    """
    if not isinstance(s, dict) or "$ref" not in s:
        return None
    # $defs, $anchor, x-*... assert nothing; an identifier would move the base the $ref resolves against
    if draft <= 7 or all(k in REF_SIBLINGS_OK or (k not in VOCABULARY and k not in ("$id", "id")) for k in s):
        return s["$ref"]
    return None


def meet(a: set[str], b: set[str]) -> set[str]:
    """Types allowed by both sets (integer is a subtype of number)."""
    out = set()
    for t in a:
        if t in b:
            out.add(t)
        elif (t == "integer" and "number" in b) or (t == "number" and "integer" in b):
            out.add("integer")
    return out


def count(v: Any, kw: str, loc: Loc) -> int:
    """``v`` as a non-negative integer count (``2.0`` is 2), or `SchemaError` naming ``kw``."""
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    if not isinstance(v, int) or isinstance(v, bool) or v < 0:
        raise SchemaError(f"{kw} at {loc.ptr or '/'} must be a non-negative integer, got {v!r}")
    return v


def num(v: Any, kw: str, loc: Loc):
    """``v`` as a finite number, or `SchemaError` naming ``kw``."""
    if (
        isinstance(v, bool)
        or not isinstance(v, (int, float))
        or (isinstance(v, float) and not math.isfinite(v))
    ):
        raise SchemaError(f"{kw} at {loc.ptr or '/'} must be a finite number, got {v!r}")
    return v


def types_of(s: dict, loc: Loc) -> set[str] | None:
    """The types ``s`` declares (``nullable`` adds null), None when it declares none (or ``any``)."""
    t = s.get("type")
    if t is None:
        return None
    ts = [t] if isinstance(t, str) else t
    if not isinstance(ts, list) or not all(isinstance(x, str) for x in ts):
        raise SchemaError(f"type at {loc.ptr or '/'} must be a string or an array of strings")
    out = set()
    for x in ts:
        if x == "any":
            return None
        if x not in TYPES:
            raise SchemaError(f"unknown type {x!r} at {loc.ptr or '/'}/type")
        out.add(x)
    if s.get("nullable") is True:
        out.add("null")
    return out


_UNEVALUATED = ("unevaluatedProperties", "unevaluatedItems")


def has_unevaluated(root: Any, resources: Any = None, mentions: Callable[..., bool] | None = None) -> bool:
    """Whether the schema ``root`` or a document of ``resources`` uses ``unevaluatedProperties`` or
    ``unevaluatedItems`` (a key anywhere: a false positive costs only the exact branches they
    would need); ``mentions``, whether ``root``'s text names a keyword (`JsonSchema.mentions`):
    without resources and unnamed, none is looked for.

    >>> has_unevaluated({"properties": {"a": {"unevaluatedItems": False}}}), has_unevaluated({})
    (True, False)
    """
    if not resources and mentions is not None and not mentions(*_UNEVALUATED):
        return False
    stack = [root, resources]
    while stack:
        x = stack.pop()
        if isinstance(x, dict):
            if any(k in x for k in _UNEVALUATED):
                return True
            stack.extend(x.values())
        elif isinstance(x, list):
            stack.extend(x)
    return False


# in-place applicators: a subschema under one of these (then an index or a name) applies to the same
# instance as the schema holding it, and its annotations reach that schema's unevaluated* keywords
_IN_PLACE = {"allOf", "anyOf", "oneOf", "dependentSchemas", "dependencies"}
# in place too, with no index: the translator places a conditional's branches at their own pointers
# (the ``if`` where it passes, ``then`` beside it, ``else`` beside its negation, whose conjuncts
# sit under ``if/not``: a failed ``if`` annotates nothing)
_IN_PLACE_ONE = {"if", "then", "else"}


def sees(f: Loc, g: Loc) -> bool:
    """Whether ``f``'s ``unevaluatedProperties``/``unevaluatedItems`` see what conjunct ``g`` evaluates:
    ``g`` is ``f``, or sits under it through in-place applicators and ``$ref`` hops only (each hop's
    ``$ref`` in place under where the path stands, the path going on from its target; never under
    a ``not``). A conjunct whose path is not known so is counted unseen: what it evaluates is then
    checked again by the unevaluated* schema, which can only reject more.

    >>> sees(Loc({}, "", "u"), Loc({}, "/allOf/0/anyOf/1", "u")), sees(Loc({}, "", "u"), Loc({}, "/$defs/a", "u"))
    (True, False)
    >>> sees(Loc({}, "", "u"), Loc({}, "/$defs/a", "u", refs=(("u", "/allOf/0", "u", "/$defs/a"),)))
    True
    >>> sees(Loc({}, "", "u"), Loc({}, "/then", "u")), sees(Loc({}, "", "u"), Loc({}, "/if/not", "u"))
    (True, False)
    """
    if g is f or (g.ptr == f.ptr and g.base == f.base and g.excluded is None and g.refs == f.refs):
        return True
    k = len(f.refs)
    if g.excluded is not None or g.refs[:k] != f.refs:
        return False
    at = (f.base, f.ptr)
    for ref_base, ref_ptr, target_base, target_ptr in g.refs[k:]:
        if not _in_place(at, (ref_base, ref_ptr)):
            return False
        at = (target_base, target_ptr)
    return _in_place(at, (g.base, g.ptr))


def _in_place(outer: tuple[str, str], inner: tuple[str, str]) -> bool:
    """Whether the schema at ``inner`` (base, pointer) is the one at ``outer`` or under it through
    in-place applicators only."""
    (ob, op), (ib, ip) = outer, inner
    if ib != ob:
        return False
    if ip == op:
        return True
    if not ip.startswith(op + "/"):
        return False
    parts = ip[len(op) + 1 :].split("/")
    i = 0
    while i < len(parts):
        if parts[i] in _IN_PLACE_ONE:
            i += 1
        elif parts[i] in _IN_PLACE and i + 1 < len(parts):
            i += 2
        else:
            return False
    return True
