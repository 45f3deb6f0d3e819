"""Literal JSON values (``enum``/``const``): canonical identity, validity against schemas, finite value sets.

A literal's validity is decided for the common keywords here (`quick_valid`) and otherwise by the
``jsonschema`` validator, imported only when a value needs it (its import costs seconds with the
format extras installed).

>>> canon(1) == canon(1.0), canon(True) == canon(1)
(True, False)
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from itertools import permutations
from json.encoder import encode_basestring  # json.dumps of a str, no encoder made per call
from typing import Any

from ..automata import NEVER, Lit, Node, alt, lit, seq
from ..errors import SchemaError
from .context import Context, Excluded, Loc
from .formats import format_node
from .keywords import ARRAY_KW, NUMBER_KW, OBJECT_KW
from .layout import Layout
from .numbers import zero_fraction
from .policy import PERMUTED_MEMBERS
from .refs import registry


def canon(v: Any) -> str:
    """A hashable identity for JSON values where 1 == 1.0 but True != 1 (as validators compare)."""
    if isinstance(v, bool) or v is None:
        return json.dumps(v)
    if isinstance(v, (int, float)):
        return "n:" + (str(int(v)) if float(v).is_integer() else repr(float(v)))
    if isinstance(v, str):  # json.dumps's text, without an encoder made per call (enums of thousands)
        return encode_basestring(v)
    return json.dumps(v, sort_keys=True, ensure_ascii=False, default=str)


def finite(v: Any) -> bool:
    """Whether ``v`` is JSON (no NaN or infinity, nothing unserializable)."""
    if isinstance(v, str):
        return True
    try:
        json.dumps(v, allow_nan=False)
        return True
    except (ValueError, TypeError):
        return False


_ANNOTATIONS = {
    "title",
    "description",
    "default",
    "examples",
    "example",
    "$comment",
    "$schema",
    "$id",
    "id",
    "$anchor",
    "$defs",
    "definitions",
    "readOnly",
    "writeOnly",
    "deprecated",
    "nullable",
}

# Keywords a validator of some draft checks a scalar against and `_keyword_valid` leaves to jsonschema
# (references, draft 3's forms); any keyword in no draft's vocabulary is ignored by
# validators, so a literal passes it without loading jsonschema (seconds to import with the format
# extras: a server's first enum check would stall on it).
_DEFERRED = {
    "$ref",
    "$dynamicRef",
    "$recursiveRef",
    "if",
    "extends",
    "disallow",
    "divisibleBy",
}

_JSON_TYPE = {
    type(None): "null",
    bool: "boolean",
    str: "string",
    int: "integer",
    float: "number",
    list: "array",
    dict: "object",
}


def canon_set(vals: list) -> set[str]:
    """The canonical identities of an ``enum``'s values.

    >>> sorted(canon_set([1, 1.0, True]))
    ['n:1', 'true']
    """
    return set(map(canon, vals))


def quick_valid(
    v: Any, flat: list[Loc], draft: int = 2020, members: Callable[[list], set[str]] = canon_set
) -> bool | None:
    """Validity of a literal value against flat schemas for the common keywords; None: ask jsonschema."""
    t = _JSON_TYPE.get(type(v))
    if t is None or t in ("array", "object"):
        return None
    for f in flat:
        ok = _scalar_valid(v, t, f.schema, draft, members)
        if ok is not True:
            return ok
    return True


def _scalar_valid(v: Any, t: str, s: Any, draft: int, members: Callable[[list], set[str]]) -> bool | None:
    """Whether the scalar ``v`` validates against the schema ``s`` (no reference followed); None: ask jsonschema."""
    if isinstance(s, bool):
        return s
    if isinstance(s, Excluded):
        if s.integers:
            return t == "number" and not float(v).is_integer()
        if s.multiple is not None:
            return t in ("integer", "number") and not _is_multiple(v, s.multiple)
        if s.member is not None:
            return False  # only an object has a member
        if s.strings is not None:
            return t == "string" and not _string_valid(v, s.strings)
        return s.values is None or canon(v) not in canon_set(s.values)
    if not isinstance(s, dict):
        return None
    for kw, arg in s.items():
        if kw in _ANNOTATIONS or kw in OBJECT_KW or kw in ARRAY_KW:
            continue
        ok = _keyword_valid(v, t, kw, arg, s, draft, members)
        if ok is not True:
            return ok
    return True


def _combined_valid(
    v: Any, t: str, kw: str, arg: Any, draft: int, members: Callable[[list], set[str]]
) -> bool | None:
    """allOf / anyOf / oneOf / not over subschemas, for a scalar; None: some branch needs jsonschema."""
    if kw == "not":
        r = _scalar_valid(v, t, arg, draft, members)
        return None if r is None else not r
    if not isinstance(arg, list):
        return None
    results = [_scalar_valid(v, t, sub, draft, members) for sub in arg]
    if kw == "allOf" and False in results:
        return False
    if None in results:
        return None
    return all(results) if kw == "allOf" else any(results) if kw == "anyOf" else sum(results) == 1


def _keyword_valid(
    v: Any, t: str, kw: str, arg: Any, s: dict, draft: int, members: Callable[[list], set[str]]
) -> bool | None:
    """Whether the scalar ``v`` (of JSON type ``t``) satisfies ``kw: arg`` of ``s``; None: ask jsonschema."""
    if kw == "type":
        ts = [arg] if isinstance(arg, str) else arg
        if s.get("nullable") is True and v is None:
            return True
        return (
            t in ts
            or (t == "integer" and "number" in ts)
            or (t == "number" and "integer" in ts and float(v).is_integer() and draft > 4)
        )
    if kw in ("enum", "const"):
        vals = arg if kw == "enum" else [arg]
        return isinstance(vals, list) and canon(v) in members(vals)
    if kw in ("minLength", "maxLength", "pattern"):
        if t != "string":
            return True
        if kw == "pattern":
            try:
                return re.search(arg, v) is not None
            except (re.error, TypeError):
                return None
        if not isinstance(arg, int):
            return None
        return not ((len(v) < arg) if kw == "minLength" else (len(v) > arg))
    if kw in NUMBER_KW:
        return _number_valid(v, t, kw, arg, s)
    if kw == "format":
        return None if t == "string" and isinstance(arg, str) and format_node(arg) is not None else True
    if kw in ("allOf", "anyOf", "oneOf", "not"):
        return _combined_valid(v, t, kw, arg, draft, members)
    if kw in _DEFERRED:
        return None
    # then/else without if, dependencies, or a keyword of no vocabulary: nothing a scalar can fail
    return True


def _number_valid(v: Any, t: str, kw: str, arg: Any, s: dict) -> bool | None:
    if t not in ("integer", "number"):
        return True
    if isinstance(arg, bool) or not isinstance(arg, (int, float)):
        return True  # draft 4 boolean exclusives: handled with their bound below
    if kw == "minimum" and (v < arg or (s.get("exclusiveMinimum") is True and v == arg)):
        return False
    if kw == "maximum" and (v > arg or (s.get("exclusiveMaximum") is True and v == arg)):
        return False
    if kw == "exclusiveMinimum" and v <= arg:
        return False
    if kw == "exclusiveMaximum" and v >= arg:
        return False
    if kw == "multipleOf":
        return None
    return True


def validator_view(schema: Any) -> Any:
    """``schema`` with every `Excluded` in it (alone, or inside the ``anyOf``/``allOf`` that
    `negation` builds) replaced by the plain JSON Schema it stands for.

    >>> validator_view({"anyOf": [{"type": "null"}, Excluded(values=[1])]})
    {'anyOf': [{'type': 'null'}, {'not': {'enum': [1]}}]}
    """
    if isinstance(schema, Excluded):
        return schema.exact()
    if isinstance(schema, dict):
        for kw in ("anyOf", "allOf"):
            subs = schema.get(kw)
            if isinstance(subs, list):
                view = [validator_view(x) for x in subs]
                if any(a is not b for a, b in zip(view, subs, strict=True)):
                    schema = {**schema, kw: view}
    return schema


class LiteralCheck:
    """Validity of literal values against subschemas of one root schema."""

    def __init__(self, root: Any, draft: int, formats: bool = True, resources: dict | None = None):
        self.root = root
        self.draft = draft
        self.resources = resources or {}  # documents a $ref names by URI (`JsonSchema`'s resources)
        self.formats = formats  # format asserted (else an annotation, as exact mode reads it by default)
        self._validator_cls = None
        self._views: dict[int, tuple[Any, Any]] = {}
        self._members: dict[int, tuple[list, set[str]]] = {}

    def members(self, vals: list) -> set[str]:
        """`canon_set` of an enum list, computed once per list (held, so its id stays its own)."""
        hit = self._members.get(id(vals))
        if hit is None or hit[0] is not vals:
            hit = self._members[id(vals)] = (vals, canon_set(vals))
        return hit[1]

    def view(self, schema: Any) -> Any:
        """``schema`` as the validator reads it: `Excluded` parts as the plain JSON Schema they stand for."""
        hit = self._views.get(id(schema))
        if hit is None or hit[0] is not schema:
            hit = self._views[id(schema)] = (schema, validator_view(schema))
        return hit[1]

    def validator(self):
        """The ``jsonschema`` validator for the translation's draft, with its format checker."""
        if self._validator_cls is None:
            import jsonschema  # lazy: seconds to import with the format extras; most schemas never need it

            cls = {
                3: jsonschema.Draft3Validator,
                4: jsonschema.Draft4Validator,
                6: jsonschema.Draft6Validator,
                7: jsonschema.Draft7Validator,
                2019: jsonschema.Draft201909Validator,
            }.get(self.draft, jsonschema.Draft202012Validator)
            kw = {"registry": registry(self.resources, self.draft)} if self.resources else {}
            self._validator_cls = cls(
                self.root if isinstance(self.root, (dict, bool)) else {},
                format_checker=cls.FORMAT_CHECKER if self.formats else None,
                **kw,
            )
        return self._validator_cls

    def is_valid(self, value: Any, locs: list[Loc], flat: list[Loc] | None = None) -> bool:
        """Whether ``value`` validates against every schema in ``locs`` (``flat``: their conjuncts,
        for the quick check)."""
        if flat is not None:
            quick = quick_valid(value, flat, self.draft, self.members)
            if quick is not None:
                return quick
        v = self.validator()
        try:
            return all(v.evolve(schema=self.view(loc.schema)).is_valid(value) for loc in locs)
        except (
            Exception
        ) as exc:  # deliberately broad: a schema jsonschema cannot evaluate (bad regex, remote ref)
            raise SchemaError(f"cannot evaluate enum/const values against the schema: {exc}") from None


def finite_values(t: Context, locs: list[Loc]) -> list | None:
    """The values valid for ``locs`` when their conjuncts allow finitely many (enum, const,
    boolean); None otherwise."""
    flat = t.conjuncts(locs)
    values = None
    for f in flat:
        s = f.schema
        if s is False:
            return []
        if isinstance(s, dict) and ("enum" in s or "const" in s):
            vals = s["enum"] if "enum" in s else [s["const"]]
            values = (
                list(vals) if values is None else [v for v in values if canon(v) in set(map(canon, vals))]
            )
        elif isinstance(s, dict) and s.get("type") == "boolean" and values is None:
            values = [True, False]
    if values is None:
        return None
    out, seen = [], set()
    for v in values:
        t.tick()  # an enum may list tens of thousands of values
        c = canon(v)
        if c not in seen and finite(v) and t.is_valid(v, locs, flat):
            seen.add(c)
            out.append(v)
    return out


def excluded_value(v: Any, schemas: list[Loc]) -> bool:
    """Whether a conjunct of ``schemas`` excludes ``v`` (a negated enum/const, integer type or string schema)."""
    integral = isinstance(v, (int, float)) and not isinstance(v, bool) and float(v).is_integer()
    if integral and any(f.excluded is not None and f.excluded.integers for f in schemas):
        return True
    if isinstance(v, str) and any(
        f.excluded is not None and f.excluded.strings is not None and _string_valid(v, f.excluded.strings)
        for f in schemas
    ):
        return True  # a negated string schema accepts it
    number = isinstance(v, (int, float)) and not isinstance(v, bool)
    if number and any(
        f.excluded is not None and f.excluded.multiple is not None and _is_multiple(v, f.excluded.multiple)
        for f in schemas
    ):
        return True  # a multiple of a negated multipleOf
    c = canon(v)
    return any(
        c in set(map(canon, f.excluded.values))
        for f in schemas
        if f.excluded is not None and f.excluded.values is not None
    )


def _is_multiple(v: int | float, m: int) -> bool:
    """Whether the number ``v`` is a multiple of the integer ``m`` (as validators divide: a float by
    its double value)."""
    return v % m == 0 if isinstance(v, int) else float(v).is_integer() and float(v) % m == 0


def _string_valid(v: str, strings: dict) -> bool:
    """Whether a string schema (pattern/minLength/maxLength) accepts ``v`` as ``jsonschema`` reads it
    (code points; ``re.search``), or may: a pattern Python cannot read counts as accepting, so the
    value is left out (jsonschema's import, seconds of parser tables, is not paid here)."""
    lo, hi = strings.get("minLength", 0), strings.get("maxLength")
    if not (isinstance(lo, (int, float)) and len(v) >= lo) or (isinstance(hi, (int, float)) and len(v) > hi):
        return False
    pattern = strings.get("pattern")
    if pattern is None:
        return True
    try:
        return re.search(pattern, v) is not None
    except (re.error, TypeError):
        return True


def spellings(layout: Layout, v: Any, depth: int) -> Node:
    """``v`` in the spellings JSON equality does not tell apart: numbers with a zero fraction
    (``0``, ``0.0``), objects in any member order (up to `PERMUTED_MEMBERS` members), laid out at
    ``depth``.

    >>> from fsm.automata import to_regex
    >>> to_regex(spellings(Layout(None), [1.0], 0))
    '\\\\[1(?:\\\\.0{1,20})?\\\\]'
    """
    if isinstance(v, bool) or v is None or isinstance(v, str):
        return lit(layout.dump(v, depth))
    if isinstance(v, (int, float)):
        if float(v).is_integer() and abs(v) <= 2**53:
            return zero_fraction(lit(str(int(v))))
        return lit(layout.dump(v, depth))
    sep = lit(layout.sep(depth))
    if isinstance(v, list):
        if not v:
            return lit("[]")
        body = [spellings(layout, x, depth + 1) for x in v]
        return layout.container("[", "]", seq(*_joined(body, sep)), False, depth)
    if not v:
        return lit("{}")
    members = [
        seq(lit(layout.dump(k, 0) + layout.colon), spellings(layout, x, depth + 1)) for k, x in v.items()
    ]
    orders = permutations(members) if len(members) <= PERMUTED_MEMBERS else [members]
    return alt(*(layout.container("{", "}", seq(*_joined(list(o), sep)), False, depth) for o in orders))


def _joined(nodes: list[Node], sep: Node) -> list[Node]:
    out = [nodes[0]]
    for n in nodes[1:]:
        out += [sep, n]
    return out


def literal_values(
    t: Context, schemas: list[Loc], flat: list[Loc], locs: list[Loc], depth: int
) -> Node | None:
    """The finite values ``enum``/``const`` allow that are valid against the whole schema (a
    validator is exact for any keyword), as literals; None when no conjunct lists values."""
    values = None
    for f in schemas:
        s = f.schema
        if "enum" in s or "const" in s:
            vals = s["enum"] if "enum" in s else [s["const"]]
            if not isinstance(vals, list):
                raise SchemaError(f"enum at {f.ptr or '/'} must be an array")
            if values is None:
                values = list(vals)
            else:
                keep = set(map(canon, vals))
                values = [v for v in values if canon(v) in keep]
    if values is None:
        return None
    out, seen = [], set()
    for v in values:
        t.tick()  # an enum may list tens of thousands of values
        c = canon(v)
        if c in seen or not finite(v):
            continue
        seen.add(c)
        if t.is_valid(v, locs, flat) and not excluded_value(v, schemas):
            if t.policy.number_spellings:
                out.append(spellings(t.layout, v, depth))
            else:
                out.append(lit(t.layout.dump(v, depth)))
    # longest text first, so a leftmost-first regex engine never stops at a shorter number
    out.sort(key=lambda n: -len(n.text) if isinstance(n, Lit) else 0)
    return alt(*out) if out else NEVER
