"""JSON Schema (drafts 4 to 2020-12) and pydantic models as a constraint.

`JsonSchema` translates a schema into a `json_ast` tree — properties in declared order, optional ones
omittable, required ones always present — and compiles that tree to a byte DFA (`json_automaton`) for
the token index. Every document the automaton accepts validates against the schema; where a keyword
cannot be enforced exactly it is never silently dropped: `UnsupportedSchema` names it and its JSON
pointer (or, with ``lenient=True``, it is ignored and listed in `JsonSchema.ignored` with a warning).

Policies (see docs/json-schema.md):

- ``additionalProperties`` left unspecified means *no* extra properties (``allow_additional_properties``
  turns them on); an explicit schema or ``true`` allows them, in any order, after the declared ones.
- A schema without ``type`` generates the types its keywords are about (``properties`` → object);
  a schema that constrains nothing (``{}``/``true``) is any JSON value, which needs the grammar engine
  (or ``any_value_depth`` for an explicitly bounded nesting).
- Whitespace is a policy: ``"compact"`` (none) or ``"pretty"``/an indent width (exactly the layout of
  ``json.dumps(indent=...)``); never free runs of whitespace.
- Strings: any Unicode, control characters only escaped; ``max_string_length`` bounds strings
  that have no ``maxLength``. Numbers: see `json_numbers`.
- ``oneOf`` is exact: branches are used as ``anyOf`` only when they provably exclude each other;
  ``oneof="anyof"`` opts into anyOf semantics.

>>> s = JsonSchema({"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]})
>>> s.to_regex()
'\\\\{"ok":(?:true|false)\\\\}'
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import time
import warnings
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any
from urllib.parse import unquote, urldefrag, urljoin

from ..automata import (
    ANY_CHAR,
    EMPTY,
    NEVER,
    And,
    AnyJson,
    Auto,
    Bounds,
    Cls,
    Enc,
    Lit,
    Members,
    Minus,
    Node,
    Ref,
    Val,
    alt,
    divisible_integers,
    integer_node,
    lit,
    number_node,
    opt,
    rep,
    seq,
    to_regex,
)
from ..errors import GrammarError, SchemaError, SchemaTooComplex, SpecError, SpecTooComplex, UnsupportedSchema
from ..limits import DEFAULT_LIMITS, Limits
from .formats import format_node
from .patterns import pattern_node

_ROOT_URI = "urn:fsm-json-schema:root"
_NFA_STATES_BEFORE_GRAMMAR = 100_000


_TYPES = ("null", "boolean", "object", "array", "string", "number", "integer")
_NO_NEGATION = object()  # a `not` subschema without an exact positive equivalent here

_OBJECT_KW = {
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
_ARRAY_KW = {
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
_STRING_KW = {"minLength", "maxLength", "pattern"}
_NUMBER_KW = {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"}
_HANDLED = (
    _OBJECT_KW
    | _ARRAY_KW
    | _STRING_KW
    | _NUMBER_KW
    | {
        "type",
        "enum",
        "const",
        "format",
        "anyOf",
        "oneOf",
        "allOf",
        "$ref",
        "nullable",
        "dependentSchemas",
        "dependencies",
        "not",
        "if",
        "then",
        "else",
    }
)
# Vocabulary keywords that constrain instances in a way no automaton here enforces.
_UNSUPPORTED = {"$dynamicRef", "$recursiveRef"}


class NeedsGrammar(Exception):
    """Internal: the schema needs a grammar (recursive ``$ref`` or an unbounded any-JSON value)."""

    def __init__(self, reason: str, pointer: str):
        super().__init__(f"{reason} at {pointer or '/'}")
        self.reason = reason
        self.pointer = pointer


@dataclass(frozen=True)
class _Loc:
    """A subschema with where it sits (JSON pointer) and the base URI its refs resolve against."""

    schema: Any
    ptr: str
    base: str

    def at(self, *keys) -> _Loc:
        sub, ptr = self.schema, self.ptr
        for k in keys:
            sub = sub[k]
            ptr += "/" + str(k).replace("~", "~0").replace("/", "~1")
        return _Loc(sub, ptr, self.base)


class _Layout:
    """Where whitespace goes: compact, or json.dumps(indent=k) layout."""

    def __init__(self, indent: int | None):
        self.indent = indent

    @property
    def colon(self) -> str:
        return ":" if self.indent is None else ": "

    def sep(self, depth: int) -> str:
        return "," if self.indent is None else ",\n" + " " * (self.indent * (depth + 1))

    def container(self, open_: str, close: str, body: Node, body_if_empty_allowed: bool, depth: int) -> Node:
        """``open body close``; ``body`` must be non-empty; the empty container is allowed if asked."""
        empty = lit(open_ + close) if body_if_empty_allowed else NEVER
        if self.indent is None:
            return alt(empty, seq(lit(open_), body, lit(close)))
        pad = " " * (self.indent * (depth + 1))
        end = " " * (self.indent * depth)
        return alt(empty, seq(lit(open_ + "\n" + pad), body, lit("\n" + end + close)))

    def dump(self, value: Any, depth: int) -> str:
        if self.indent is None:
            return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
        text = json.dumps(value, indent=self.indent, ensure_ascii=False, allow_nan=False)
        return text.replace("\n", "\n" + " " * (self.indent * depth))


def _draft_of(schema: Any) -> int:
    uri = schema.get("$schema", "") if isinstance(schema, dict) else ""
    if not isinstance(uri, str):
        return 2020
    for tag, d in (("draft-03", 3), ("draft-04", 4), ("draft-06", 6), ("draft-07", 7), ("2019-09", 2019)):
        if tag in uri:
            return d
    return 2020


def _ptr_unescape(part: str) -> str:
    return unquote(part).replace("~1", "/").replace("~0", "~")


class _Translator:
    def __init__(self, root: Any, opts: JsonSchema, limits: Limits):
        self.root = root
        self.opts = opts
        self.draft = _draft_of(root)
        self.layout = _Layout(opts._indent)
        self.ignored: list[str] = []
        self.limits = limits
        self._canon_memo: dict[int, tuple[Any, str]] = {}
        self.deadline = limits.deadline()
        self.calls = 0
        self.active: list[str] = []  # refs being expanded on the current path (cycle = recursion)
        self.resources: dict[str, Any] = {}
        self.anchors: dict[str, tuple[Any, str, str]] = {}
        root_base = _ROOT_URI
        if isinstance(root, dict):
            rid = root.get("$id", root.get("id") if self.draft <= 4 else None)
            if isinstance(rid, str) and not rid.startswith("#"):
                root_base = urljoin(_ROOT_URI, rid) if ":" not in rid else rid
                root_base = urldefrag(root_base)[0]
        self.root_base = root_base
        self.resources[root_base] = (root, "")
        self.resources[_ROOT_URI] = (root, "")
        self._index(root, "", root_base)
        self._validator_cls = None
        self._memo: dict[tuple, tuple] = {}
        self.grammar = False  # grammar mode: every pure $ref is a rule, {} is the json_value rule
        self.any_json = False  # an unbounded any-value (AnyJson) was emitted: lazy DFA only
        self.pushdown = False  # rules for the pushdown automaton: {} stays an AnyJson block
        self.rules: dict[str, Node] = {}
        self.rule_names: dict[str, str] = {}

    # -- resources and refs -----------------------------------------------------------------------
    def _index(self, s: Any, ptr: str, base: str) -> None:
        if isinstance(s, list):
            for i, x in enumerate(s):
                self._index(x, f"{ptr}/{i}", base)
            return
        if not isinstance(s, dict):
            return
        sid = s.get("$id", s.get("id") if self.draft <= 4 else None)
        if isinstance(sid, str):
            if sid.startswith("#") and self.draft <= 7:
                self.anchors[urljoin(base, sid)] = (s, ptr, base)
            else:
                base = urldefrag(urljoin(base, sid))[0]
                self.resources.setdefault(base, (s, ptr))
        for key in ("$anchor", "$dynamicAnchor"):
            a = s.get(key)
            if isinstance(a, str):
                self.anchors.setdefault(base + "#" + a, (s, ptr, base))
        for k, v in s.items():
            if k in ("enum", "const", "default", "examples", "example"):
                continue
            esc = k.replace("~", "~0").replace("/", "~1")
            if isinstance(v, (dict, list)):
                self._index(v, f"{ptr}/{esc}", base)

    def resolve(self, ref: str, loc: _Loc) -> tuple[_Loc, str]:
        """The subschema ``ref`` points to and a key naming it (for cycle detection)."""
        if not isinstance(ref, str):
            raise SchemaError(f"$ref at {loc.ptr or '/'} must be a string")
        full = urljoin(loc.base, ref) if not ref.startswith("#") else loc.base + ref
        url, frag = urldefrag(full)
        if full in self.anchors and not frag.startswith("/"):
            s, ptr, base = self.anchors[full]
            return _Loc(s, ptr, base), full
        doc = self.resources.get(url)
        if doc is None:
            raise UnsupportedSchema(
                f"$ref {ref!r} at {loc.ptr or '/'} points outside this schema (remote refs are not fetched)",
                "$ref",
                loc.ptr,
            )
        schema, ptr = doc
        if frag and not frag.startswith("/"):
            raise SchemaError(f"$ref {ref!r} at {loc.ptr or '/'}: no $anchor {frag!r} in this schema")
        node = schema
        for part in frag.split("/")[1:] if frag else []:
            key = _ptr_unescape(part)
            if isinstance(node, list):
                try:
                    node = node[int(key)]
                except (ValueError, IndexError):
                    raise SchemaError(f"$ref {ref!r} at {loc.ptr or '/'} does not resolve") from None
            elif isinstance(node, dict) and key in node:
                node = node[key]
            else:
                raise SchemaError(f"$ref {ref!r} at {loc.ptr or '/'} does not resolve (no {key!r})")
            ptr += "/" + part
        base = url
        if isinstance(node, dict):
            sid = node.get("$id", node.get("id") if self.draft <= 4 else None)
            if isinstance(sid, str) and not sid.startswith("#"):
                base = urldefrag(urljoin(base, sid))[0]
        return _Loc(node, ptr, base), url + "#" + frag

    # -- validation of literal values (enum/const filtering) -----------------------------------------
    def _validator(self):
        if self._validator_cls is None:
            import jsonschema

            cls = jsonschema.validators.validator_for(
                self.root if isinstance(self.root, dict) else {}, default=jsonschema.Draft202012Validator
            )
            self._validator_cls = cls(
                self.root if isinstance(self.root, (dict, bool)) else {}, format_checker=cls.FORMAT_CHECKER
            )
        return self._validator_cls

    def is_valid(self, value: Any, locs: list[_Loc], flat: list[_Loc] | None = None) -> bool:
        if flat is not None:
            quick = _quick_valid(value, flat, self.draft)
            if quick is not None:
                return quick
        v = self._validator()
        try:
            return all(v.evolve(schema=loc.schema).is_valid(value) for loc in locs)
        except Exception as exc:  # noqa: BLE001 - a schema jsonschema cannot evaluate (bad regex, remote ref)
            raise SchemaError(f"cannot evaluate enum/const values against the schema: {exc}") from None

    # -- the main recursion ---------------------------------------------------------------------------
    def tick(self) -> None:
        self.calls += 1
        if self.calls & 63 == 0:
            self.deadline.check("translating the JSON schema")

    def unsupported(self, keyword: str, loc: _Loc, why: str = "") -> None:
        where = f"{loc.ptr}/{keyword}"
        msg = f"keyword {keyword!r} at {where} is not supported{': ' + why if why else ''}"
        if self.opts.lenient:
            self.ignored.append(msg)
            return
        raise UnsupportedSchema(msg + " (pass lenient=True to ignore it)", keyword, where)

    def value(self, locs: list[_Loc], depth: int) -> Node:
        """The language of JSON values valid against every schema in ``locs``."""
        # A finished translation never depended on the refs being expanded around it (a cycle would
        # have raised), so the same schemas at the same depth give the same tree: share it.
        key = (tuple((id(loc.schema), loc.base) for loc in locs), depth)
        hit = self._memo.get(key)
        if hit is not None and all(a.schema is b.schema for a, b in zip(hit[0], locs)):
            return hit[1]
        node = self._value(locs, depth)
        self._memo[key] = (tuple(locs), node)
        return node

    def _value(self, locs: list[_Loc], depth: int) -> Node:
        self.tick()
        if len(locs) > 1:
            locs = self._distinct(locs)
        if self.grammar and len(locs) > 1:
            # what is left of a parent beside an anyOf branch is often empty: a branch that is a
            # pure (recursive) $ref must still become a rule reference
            kept = [loc for loc in locs if not _trivial(loc.schema)]
            refs = [loc for loc in kept if _pure_ref(loc.schema, self.draft) is not None]
            if len(kept) > 1 and len(refs) == 1:  # e.g. {"type": "object"} beside a ref to an object schema
                kept = [loc for loc in kept if loc is refs[0] or not self._implied_by_ref(loc, refs[0])]
            locs = kept if kept else locs[:1]
        if self.grammar and len(locs) == 1:
            ref = _pure_ref(locs[0].schema, self.draft)
            if ref is not None:
                target, key = self.resolve(ref, locs[0])
                return Ref(self.rule(key, target))
        flat: list[_Loc] = []
        pushed = 0
        try:
            for loc in locs:
                pushed += self._flatten(loc, flat, set())
            if any(isinstance(f.schema, dict) and ("enum" in f.schema or "const" in f.schema) for f in flat):
                node = self._conjunction(flat, locs, depth)  # finite values: the validator decides
                return Val(node) if self.grammar and node != NEVER else node
            for i, loc in enumerate(flat):
                s = loc.schema
                if not isinstance(s, dict):
                    continue
                for kw in ("anyOf", "oneOf"):
                    if kw in s:
                        node = self._branch(flat, i, kw, locs, depth)
                        return Val(node) if self.grammar and node != NEVER else node
            node = self._conjunction(flat, locs, depth)
            return Val(node) if self.grammar and node != NEVER else node
        finally:
            for _ in range(pushed):
                self.active.pop()

    def _budget(self):
        """An automaton budget on the translation's own deadline (one budget per compile)."""
        from ..automata import Budget

        budget = Budget(self.limits)
        budget.deadline = self.deadline
        return budget

    def _distinct(self, locs: list[_Loc]) -> list[_Loc]:
        """``locs`` without repeats of an equal schema (A and A is A): e.g. a property matched by
        ``properties`` and a ``patternProperties`` pattern with the same subschema."""
        out: list[_Loc] = []
        seen: set = set()
        for loc in locs:
            key = self._canon_memo.get(id(loc.schema))
            if key is None or key[0] is not loc.schema:
                key = self._canon_memo[id(loc.schema)] = (loc.schema, _canon(loc.schema))
            k = (loc.base, key[1])
            if k not in seen:
                seen.add(k)
                out.append(loc)
        return out

    def _implied_by_ref(self, loc: _Loc, ref_loc: _Loc) -> bool:
        """True when ``loc`` is only a ``type`` that the (pure) ``$ref`` target declares anyway."""
        s = loc.schema
        if not isinstance(s, dict) or set(s) - _NO_CONSTRAINT != {"type"}:
            return False
        allowed = _type_set(s["type"])
        target = ref_loc
        for _ in range(8):
            ref = _pure_ref(target.schema, self.draft)
            if ref is None:
                break
            target, _ = self.resolve(ref, target)
        ts = target.schema
        if not isinstance(ts, dict):
            return False
        if "type" in ts:
            declared = _type_set(ts["type"])
        elif not set(ts) & {"anyOf", "oneOf", "allOf", "$ref", "enum", "const", "not", "if"}:
            declared = self._inferred_types([target])  # the types this library generates for it
        else:
            return False
        return bool(allowed and declared) and all(
            x in allowed or (x == "integer" and "number" in allowed) for x in declared
        )

    def _flatten(self, loc: _Loc, out: list[_Loc], seen: set) -> int:
        """Expand ``$ref`` and ``allOf`` into ``out``; returns how many refs were pushed on ``active``."""
        s = loc.schema
        if s is True:
            return 0
        if s is False:
            out.append(loc)
            return 0
        if not isinstance(s, dict):
            raise SchemaError(
                f"the schema at {loc.ptr or '/'} must be an object or a boolean, got {type(s).__name__}"
            )
        sid = s.get("$id", s.get("id") if self.draft <= 4 else None)
        if isinstance(sid, str) and not sid.startswith("#") and loc.ptr:
            loc = _Loc(s, loc.ptr, urldefrag(urljoin(loc.base, sid))[0])
        pushed = 0
        if "$ref" in s:
            target, key = self.resolve(s["$ref"], loc)
            if key in self.active or key in seen:
                if self.grammar:
                    raise UnsupportedSchema(
                        f"recursive $ref {s['$ref']!r} at {loc.ptr or '/'} is combined with other keywords; "
                        "only a $ref standing alone can recurse",
                        "$ref",
                        loc.ptr + "/$ref",
                    )
                raise NeedsGrammar(f"recursive $ref {s['$ref']!r}", loc.ptr + "/$ref")
            seen.add(key)
            self.active.append(key)
            pushed += 1
            pushed += self._flatten(target, out, seen)
            if self.draft <= 7:
                return pushed  # drafts 4-7: siblings of $ref are ignored
            s = {k: v for k, v in s.items() if k != "$ref"}
            loc = _Loc(s, loc.ptr, loc.base)
        if "allOf" in s:
            subs = s["allOf"]
            if not isinstance(subs, list) or not subs:
                raise SchemaError(f"allOf at {loc.ptr or '/'} must be a non-empty array")
            for i in range(len(subs)):
                pushed += self._flatten(loc.at("allOf", i), out, seen)
            s = {k: v for k, v in s.items() if k != "allOf"}
            loc = _Loc(s, loc.ptr, loc.base)
        if "not" in s:
            # a `not` with an exact positive form is replaced by it here, before anyOf branches are
            # split (the form may itself be an anyOf); other forms stay for `_conjunction`
            neg = self._negation(s["not"], loc.at("not"), 0)
            if neg is not _NO_NEGATION:
                at = loc.ptr + "/not"
                s = {k: v for k, v in s.items() if k != "not"}
                loc = _Loc(s, loc.ptr, loc.base)
                if neg is not True:
                    pushed += self._flatten(_Loc(neg, at, loc.base), out, seen)
        # Object dependencies are disjunctions: "a absent" or "a present and ...".
        deps = []
        for kw in ("dependentRequired", "dependentSchemas", "dependencies"):
            if kw in s and isinstance(s[kw], dict):
                for name, dep in s[kw].items():
                    deps.append((kw, name, dep))
        if deps:
            s = {
                k: v
                for k, v in s.items()
                if k not in ("dependentRequired", "dependentSchemas", "dependencies")
            }
            for kw, name, dep in deps:
                absent = {"properties": {name: False}}
                if isinstance(dep, list):
                    present: Any = {"required": [name] + list(dep)}
                else:
                    present = {"allOf": [{"required": [name]}, dep]}
                out.append(_Loc({"anyOf": [absent, present]}, f"{loc.ptr}/{kw}/{name}", loc.base))
        out.append(_Loc(s, loc.ptr, loc.base))
        return pushed

    def _negate(self, loc: _Loc) -> _Loc | None:
        """``not`` forms with an exact positive equivalent; others are unsupported."""
        neg = self._negation(loc.schema, loc, 0)
        if neg is _NO_NEGATION:
            self.unsupported(
                "not",
                _Loc(None, loc.ptr.rsplit("/", 1)[0], loc.base),
                "only not with type, enum, const, required, pattern/minLength/maxLength and "
                "anyOf/allOf/not of those is enforced",
            )
            return None
        if neg is True:
            return None
        return _Loc(neg, loc.ptr, loc.base)

    def _negation(self, s: Any, loc: _Loc, depth: int) -> Any:
        """A schema for exactly the values ``s`` rejects, or ``_NO_NEGATION``."""
        if depth > 16:
            return _NO_NEGATION
        if s is True or _trivial(s):
            return False
        if s is False:
            return True
        if not isinstance(s, dict):
            return _NO_NEGATION
        keys = set(s) - {"title", "description", "$comment", "default", "examples"}
        if keys == {"$ref"}:
            target, _ = self.resolve(s["$ref"], loc)
            return self._negation(target.schema, target, depth + 1)
        if keys == {"not"}:
            return s["not"]
        if keys in ({"anyOf"}, {"allOf"}) and isinstance(s[next(iter(keys))], list) and s[next(iter(keys))]:
            kw = next(iter(keys))
            parts = [self._negation(sub, loc, depth + 1) for sub in s[kw]]
            if any(p is _NO_NEGATION for p in parts):
                return _NO_NEGATION
            return {"allOf": parts} if kw == "anyOf" else {"anyOf": parts}  # De Morgan
        if keys == {"required"} and isinstance(s["required"], list) and s["required"]:
            # some required name absent (objects only: the others satisfy "required")
            return {"anyOf": [{"type": "object", "properties": {name: False}} for name in s["required"]]}
        # (not `format`: its automaton may be a subset of what the format checker accepts, and the
        # complement of a subset would let through strings that are valid, so must be rejected)
        if (
            keys
            and keys <= _STRING_KW | {"type"}
            and keys != {"type"}
            and s.get("type", "string") == "string"
        ):
            other = [t for t in _TYPES if t != "string"]
            strings = {"type": "string", "x-fsm-not-string": {k: v for k, v in s.items() if k != "type"}}
            return {"anyOf": [{"type": other}, strings]} if "type" in s else strings
        plain = set(s) - {"title", "description", "$comment"}
        if plain == {"type"}:
            t = s["type"]
            ts = {t} if isinstance(t, str) else set(t) if isinstance(t, list) else set()
            keep = [x for x in _TYPES if x not in ts and not (x == "integer" and "number" in ts)]
            if "integer" in ts and "number" not in ts:
                keep.remove("number")  # non-integral numbers only: not expressible, keep it simple
            return {"type": keep}
        if plain in ({"enum"}, {"const"}):
            values = s["enum"] if "enum" in s else [s["const"]]
            if isinstance(values, list):
                return {"x-fsm-not-enum": values}
        return _NO_NEGATION

    def _branch(self, flat: list[_Loc], i: int, kw: str, locs: list[_Loc], depth: int) -> Node:
        loc = flat[i]
        branches = loc.schema[kw]
        if not isinstance(branches, list) or not branches:
            raise SchemaError(f"{kw} at {loc.ptr or '/'} must be a non-empty array")
        rest = {k: v for k, v in loc.schema.items() if k != kw}
        base = flat[:i] + [_Loc(rest, loc.ptr, loc.base)] + flat[i + 1 :]
        nodes = [self.value(base + [loc.at(kw, j)], depth) for j in range(len(branches))]
        if kw == "oneOf" and self.opts.oneof != "anyof":
            self._check_exclusive(base, loc, nodes)
        return alt(*nodes)

    def _check_exclusive(self, base: list[_Loc], loc: _Loc, nodes: list[Node]) -> None:
        """oneOf as anyOf is exact only if no generated value of one branch validates another."""
        live = [j for j, n in enumerate(nodes) if n != NEVER]
        for a in live:
            for b in live:
                if a != b and not self._excludes(base, loc.at("oneOf", a), loc.at("oneOf", b)):
                    raise UnsupportedSchema(
                        f"oneOf at {loc.ptr or '/'}: branches {a} and {b} can match the same value, so "
                        "'exactly one' cannot be enforced; pass oneof='anyof' to accept anyOf semantics",
                        "oneOf",
                        loc.ptr + "/oneOf",
                    )

    def _excludes(self, base: list[_Loc], a: _Loc, b: _Loc) -> bool:
        """True when every value valid for ``base + a`` is invalid for ``b``."""
        fa, fb = self._facts(base + [a]), self._facts([b])
        if fa is None or fb is None:
            return False
        if not (fa["types"] & fb["types"]):
            return True
        if fa["values"] is not None:
            return all(not self.is_valid(v, [b]) for v in fa["values"])
        # a property both require, with values that cannot coincide
        for name, va in fa["consts"].items():
            if name not in fa["required"]:
                continue  # a's values may omit it, and then b's const on it says nothing
            vb = fb["consts"].get(name)
            if vb is not None and not (set(map(_canon, va)) & set(map(_canon, vb))):
                return True
            if name in fb["forbidden"]:
                return True
        for name in fa["required"]:
            # b forbids it: properties: {name: false}, or a closed object that does not declare it
            if name in fb["forbidden"] or any(name not in declared for declared in fb["closed"]):
                return True
        for name in fb["required"]:
            # b needs a property that a's objects never have (a's values are objects: checked above),
            # or that this library never generates for a (a generated value is what must not match b)
            if fa["types"] <= {"object"} and (
                name in fa["forbidden"]
                or any(name not in declared for declared in fa["closed"])
                or (fa["keys"] is not None and name not in fa["keys"])
            ):
                return True
        return False

    def _facts(self, locs: list[_Loc]) -> dict | None:
        """Cheap facts about a conjunction: possible types, finite values, required consts."""
        flat: list[_Loc] = []
        try:
            pushed = sum(self._flatten(loc, flat, set()) for loc in locs)
        except (NeedsGrammar, SchemaError):
            return None
        for _ in range(pushed):
            self.active.pop()
        if any(("anyOf" in f.schema or "oneOf" in f.schema) for f in flat if isinstance(f.schema, dict)):
            return None
        types = set(_TYPES)
        values = None
        consts: dict[str, list] = {}
        required: set[str] = set()
        forbidden: set[str] = set()
        closed: list[set[str]] = []
        for f in flat:
            s = f.schema
            if s is False:
                return {
                    "types": set(),
                    "values": [],
                    "consts": {},
                    "required": set(),
                    "forbidden": set(),
                    "closed": [],
                    "keys": set(),
                }
            ts = self._types_of(s, f)
            if ts is not None:
                types &= ts
            if "enum" in s or "const" in s:
                vals = s["enum"] if "enum" in s else [s["const"]]
                values = (
                    vals if values is None else [v for v in values if _canon(v) in set(map(_canon, vals))]
                )
            required |= set(s.get("required", []) or [])
            for name, sub in (s.get("properties") or {}).items():
                if sub is False:
                    forbidden.add(name)
                elif isinstance(sub, dict) and ("const" in sub or "enum" in sub):
                    consts[name] = sub["enum"] if "enum" in sub else [sub["const"]]
            if s.get("additionalProperties") is False and not s.get("patternProperties"):
                closed.append(set(s.get("properties") or {}))
        if "integer" in types:
            types.add("number")
        if "number" in types:
            types.add("integer")
        # The keys this library generates for these objects when none of them allows extras (the
        # policy for unspecified additionalProperties): declared and required names only.
        dicts = [f.schema for f in flat if isinstance(f.schema, dict)]
        explicit = [d["additionalProperties"] for d in dicts if "additionalProperties" in d]
        opened = (
            self.opts.allow_additional_properties
            or any("patternProperties" in d for d in dicts)
            or (explicit and all(x is not False for x in explicit))
        )
        names = set(required)
        for d in dicts:
            names |= set(d.get("properties") or {})
        # consts hold whenever the property is present (required or not)
        return {
            "types": types,
            "values": values,
            "consts": consts,
            "required": required,
            "forbidden": forbidden,
            "closed": closed,
            "keys": None if opened else names,
        }

    def _types_of(self, s: dict, loc: _Loc) -> set[str] | None:
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
            if x not in _TYPES:
                raise SchemaError(f"unknown type {x!r} at {loc.ptr or '/'}/type")
            out.add(x)
        if s.get("nullable") is True:
            out.add("null")
        return out

    # -- a conjunction of flat schemas (no $ref/allOf/anyOf/oneOf left) ------------------------------
    def _conjunction(self, flat: list[_Loc], locs: list[_Loc], depth: int) -> Node:
        for f in flat:
            if f.schema is False:
                return NEVER
        schemas = [f for f in flat if isinstance(f.schema, dict)]
        has_values = any("enum" in f.schema or "const" in f.schema for f in schemas)
        if not has_values:  # with finite values the validator enforces every keyword, these included
            extra = []
            for f in schemas:
                for kw in f.schema:
                    if kw in _UNSUPPORTED:
                        self.unsupported(kw, f)
                if "if" in f.schema:
                    self.unsupported("if", f, "conditional schemas cannot be enforced exactly")
                if "not" in f.schema:
                    neg = self._negate(f.at("not"))
                    if neg is not None:
                        extra.append(neg)
            if extra:
                flat2 = list(flat)
                for e in extra:
                    self._flatten(e, flat2, set())
                schemas = [f for f in flat2 if isinstance(f.schema, dict)]
                if any(f.schema is False for f in flat2):
                    return NEVER
        # Finite values: check each against the whole schema with a validator: exact for any keyword.
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
                    keep = set(map(_canon, vals))
                    values = [v for v in values if _canon(v) in keep]
        if values is not None:
            out, seen = [], set()
            for v in values:
                c = _canon(v)
                if c in seen or not _finite(v):
                    continue
                seen.add(c)
                if self.is_valid(v, locs, flat) and not self._excluded_value(v, schemas):
                    out.append(lit(self.layout.dump(v, depth)))
            # longest text first, so a leftmost-first regex engine never stops at a shorter number
            out.sort(key=lambda n: -len(n.text) if isinstance(n, Lit) else 0)
            return alt(*out) if out else NEVER

        types: set[str] | None = None
        for f in schemas:
            ts = self._types_of(f.schema, f)
            if ts is not None:
                types = ts if types is None else _meet(types, ts)
        if types is None:
            types = self._inferred_types(schemas)
            if types is None:
                return self.any_value(depth, schemas[0] if schemas else _Loc(True, "", self.root_base))
        if "number" in types:
            types.discard("integer")
        nodes = []
        for t in _TYPES:
            if t not in types:
                continue
            if t == "null":
                nodes.append(lit("null"))
            elif t == "boolean":
                nodes.append(alt(lit("true"), lit("false")))
            elif t == "string":
                nodes.append(self.string(schemas))
            elif t in ("number", "integer"):
                nodes.append(self.number(schemas, t == "integer"))
            elif t == "object":
                nodes.append(self.object(schemas, depth))
            elif t == "array":
                nodes.append(self.array(schemas, depth))
        return alt(*nodes) if nodes else NEVER

    def _excluded_value(self, v: Any, schemas: list[_Loc]) -> bool:
        c = _canon(v)
        return any(c in set(map(_canon, f.schema.get("x-fsm-not-enum", []))) for f in schemas)

    def _inferred_types(self, schemas: list[_Loc]) -> set[str] | None:
        kws = set()
        for f in schemas:
            kws |= set(f.schema)
        types = set()
        if kws & _OBJECT_KW:
            types.add("object")
        if kws & _ARRAY_KW:
            types.add("array")
        if kws & _STRING_KW:
            types.add("string")
        if kws & _NUMBER_KW:
            types.add("number")
        for f in schemas:
            fmt = f.schema.get("format")
            if isinstance(fmt, str) and format_node(fmt) is not None:
                types.add("string")
        if "x-fsm-not-enum" in kws and not types:
            return None
        return types or None

    def rule(self, key: str, target: _Loc) -> str:
        """The grammar rule for a $ref target (translated once; recursion refers back by name)."""
        name = self.rule_names.get(key)
        if name is None:
            name = self.rule_names[key] = f"d{len(self.rule_names)}"
            self.rules[name] = NEVER
            self.rules[name] = self.value([target], 0)
        return name

    def any_value(self, depth: int, loc: _Loc) -> Node:
        """Any JSON value: nested without bound (a pushdown block of the lazy DFA, or the grammar's
        ``json_value`` rule), or to ``any_value_depth`` levels when the caller asks for a regular one."""
        limit = self.opts.any_value_depth
        if self.grammar and limit is None and not self.pushdown:
            return Ref("json_value")
        if limit is None:
            self.any_json = True
            return AnyJson(self.layout.indent, depth, self.opts.max_string_length)
        return self._any(depth, limit)

    def _any(self, depth: int, remaining: int) -> Node:
        scalars = [
            lit("null"),
            lit("true"),
            lit("false"),
            number_node(Bounds()),
            self._string_node(0, None, []),
        ]
        if remaining <= 0:
            return alt(*scalars)
        inner = self._any(depth + 1, remaining - 1)
        sep = lit(self.layout.sep(depth))
        arr = self.layout.container("[", "]", seq(inner, rep(seq(sep, inner), 0, None)), True, depth)
        key = seq(
            lit('"'),
            Enc(rep(Cls(ANY_CHAR), 0, self.opts.max_string_length), True),
            lit('"' + self.layout.colon),
        )
        member = seq(key, inner)
        obj = self.layout.container("{", "}", seq(member, rep(seq(sep, member), 0, None)), True, depth)
        return alt(*scalars, arr, obj)

    # -- strings ----------------------------------------------------------------------------------------
    def string(self, schemas: list[_Loc]) -> Node:
        lo, hi = 0, None
        langs: list[Node] = []
        for f in schemas:
            s = f.schema
            if "minLength" in s:
                lo = max(lo, _count(s["minLength"], "minLength", f))
            if "maxLength" in s:
                m = _count(s["maxLength"], "maxLength", f)
                hi = m if hi is None else min(hi, m)
            if "pattern" in s:
                try:
                    langs.append(pattern_node(s["pattern"]))
                except UnsupportedSchema as exc:
                    self.unsupported("pattern", f, str(exc))
            fmt = s.get("format")
            if isinstance(fmt, str):
                node = format_node(fmt)
                if node is not None:
                    langs.append(node)
            if "x-fsm-not-string" in s:
                langs.append(self._string_complement(s["x-fsm-not-string"], f))
        if hi is None:
            hi = self.opts.max_string_length
        return self._string_node(lo, hi, langs, schemas)

    def _string_complement(self, s: dict, loc: _Loc) -> Node:
        """The decoded strings that ``s``'s pattern/minLength/maxLength reject (a complemented DFA)."""
        from ..automata import complement_dfa, small_dfa

        parts: list[Node] = []
        lo = _count(s["minLength"], "minLength", loc) if "minLength" in s else 0
        hi = _count(s["maxLength"], "maxLength", loc) if "maxLength" in s else None
        if lo > 0 or hi is not None:
            parts.append(rep(Cls(ANY_CHAR), lo, hi))
        if "pattern" in s:
            try:
                parts.append(pattern_node(s["pattern"]))
            except UnsupportedSchema as exc:
                raise UnsupportedSchema(f"not: {exc}", "not", loc.ptr + "/not") from None
        if not parts:
            return NEVER  # s accepts every string
        body = parts[0] if len(parts) == 1 else And(tuple(parts))
        d = complement_dfa(small_dfa(body, self._budget()))
        return Auto(tuple(tuple(row) for row in d.edges), tuple(d.accepting))

    def _string_node(self, lo: int, hi: int | None, langs: list[Node], schemas=()) -> Node:
        if hi is not None and hi < lo:
            return NEVER
        excluded = set()
        for f in schemas:
            excluded |= {v for v in f.schema.get("x-fsm-not-enum", []) if isinstance(v, str)}
        if not langs and not excluded:
            return seq(lit('"'), Enc(rep(Cls(ANY_CHAR), lo, hi), True), lit('"'))
        parts = list(langs)
        if lo > 0 or hi is not None or not parts:
            parts.append(rep(Cls(ANY_CHAR), lo, hi))
        body = parts[0] if len(parts) == 1 else And(tuple(parts))
        if excluded:
            body = Minus(body, frozenset(excluded))
        return seq(lit('"'), Enc(body), lit('"'))

    # -- numbers ----------------------------------------------------------------------------------------
    def number(self, schemas: list[_Loc], integer: bool) -> Node:
        b = Bounds()
        multiples: list[int] = []
        for f in schemas:
            s = f.schema
            for kw, lower in (("minimum", True), ("maximum", False)):
                if kw in s:
                    v = _num(s[kw], kw, f)
                    excl_kw = "exclusiveMinimum" if lower else "exclusiveMaximum"
                    excl = s.get(excl_kw) is True
                    (b.tighten_lower if lower else b.tighten_upper)(v, excl)
            for kw, lower in (("exclusiveMinimum", True), ("exclusiveMaximum", False)):
                v = s.get(kw)
                if isinstance(v, bool) or v is None:
                    continue
                (b.tighten_lower if lower else b.tighten_upper)(_num(v, kw, f), True)
            if "multipleOf" in s:
                m = _num(s["multipleOf"], "multipleOf", f)
                if m <= 0:
                    raise SchemaError(f"multipleOf at {f.ptr or '/'} must be > 0")
                if isinstance(m, float) and not m.is_integer():
                    self.unsupported("multipleOf", f, "non-integral multipleOf is not enforced")
                    continue
                multiples.append(int(m))
                if isinstance(m, float):  # validators divide as doubles: stay where that is exact
                    b.tighten_lower(-(2**53), False)
                    b.tighten_upper(2**53, False)
        extra = [divisible_integers(m) for m in sorted(set(multiples)) if m != 1]
        if multiples or integer:
            node = integer_node(b)
            return And((node, *extra)) if extra and node != NEVER else node
        return number_node(b)

    # -- objects ----------------------------------------------------------------------------------------
    def object(self, schemas: list[_Loc], depth: int) -> Node:
        names: list[str] = []
        required: set[str] = set()
        for f in schemas:
            props = f.schema.get("properties", {})
            if not isinstance(props, dict):
                raise SchemaError(f"properties at {f.ptr or '/'} must be an object")
            for k in props:
                if k not in names:
                    names.append(k)
        for f in schemas:
            req = f.schema.get("required", [])
            if isinstance(req, bool):  # draft 3 style
                continue
            if not isinstance(req, list):
                raise SchemaError(f"required at {f.ptr or '/'} must be an array")
            for k in req:
                required.add(k)
                if k not in names:
                    names.append(k)
        min_p = max(
            [
                _count(f.schema["minProperties"], "minProperties", f)
                for f in schemas
                if "minProperties" in f.schema
            ]
            or [0]
        )
        maxes = [
            _count(f.schema["maxProperties"], "maxProperties", f)
            for f in schemas
            if "maxProperties" in f.schema
        ]
        max_p = min(maxes) if maxes else None
        name_locs = [f.at("propertyNames") for f in schemas if "propertyNames" in f.schema]

        colon = self.layout.colon
        sep = lit(self.layout.sep(depth))
        items: list[tuple[Node, int, int | None]] = []
        for name in names:
            if name_locs and not self.is_valid(name, name_locs):
                value = NEVER
            else:
                vlocs = self._value_locs(schemas, name)
                if vlocs is None:
                    value = NEVER
                elif not vlocs:
                    value = self.any_value(depth + 1, schemas[0])
                else:
                    value = self.value(vlocs, depth + 1)
            if value == NEVER:
                if name in required:
                    return NEVER
                continue
            key = lit(json.dumps(name, ensure_ascii=False) + colon)
            items.append((seq(key, value), 1 if name in required else 0, 1))
        n_required = sum(1 for _, lo, _ in items if lo == 1)
        extras = self._extras(schemas, names, name_locs, depth)
        if extras is not None:
            if min_p - n_required >= 2 and min_p > 1:
                # extra keys may repeat, and a repeat adds no property: count one at most toward the minimum
                items.append((extras, 0, 1))
            else:
                items.append((extras, 0, None))
        if max_p is not None and n_required > max_p:
            return NEVER
        if len(items) < min_p and extras is None:
            return NEVER
        members = Members(tuple(items), sep, min_count=max(min_p, 1), max_count=max_p)
        can_be_empty = min_p == 0 and n_required == 0
        if not items:
            return lit("{}") if can_be_empty else NEVER
        return self.layout.container("{", "}", members, can_be_empty, depth)

    def _value_locs(self, schemas: list[_Loc], name: str) -> list[_Loc] | None:
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
            elif s.get("unevaluatedProperties") is False:
                return None
        return out

    def _extras(
        self, schemas: list[_Loc], names: list[str], name_locs: list[_Loc], depth: int
    ) -> Node | None:
        """``key: value`` for keys not declared, or None when no extra key may be generated."""
        with_patterns = [f for f in schemas if f.schema.get("patternProperties")]
        for f in schemas:
            s = f.schema
            if s.get("additionalProperties") is False and not s.get("patternProperties"):
                return None
            if (
                s.get("unevaluatedProperties") is False
                and "additionalProperties" not in s
                and not s.get("patternProperties")
            ):
                return None
            if "unevaluatedProperties" in s and s["unevaluatedProperties"] not in (False, True):
                self.unsupported("unevaluatedProperties", f, "only false is enforced")
        key_lang = self._key_language(name_locs)
        if key_lang == NEVER:
            return None
        words = frozenset(names)
        colon = self.layout.colon
        classes = []
        if len(with_patterns) == 1:
            g = with_patterns[0]
            others = [f for f in schemas if f is not g]
            pats = list(g.schema["patternProperties"])
            if len(pats) > 1 and not self._disjoint_patterns(pats, g):
                vals = [json.dumps(g.schema["patternProperties"][p], sort_keys=True) for p in pats]
                if len(set(vals)) > 1:
                    self.unsupported("patternProperties", g, "overlapping patterns with different schemas")
                    return None
            for p in pats:
                vlocs = [g.at("patternProperties", p)] + [
                    f.at("additionalProperties") for f in others if "additionalProperties" in f.schema
                ]
                lang = pattern_node(p)
                if key_lang is not None:
                    lang = And((lang, key_lang))
                value = self.value(vlocs, depth + 1)
                if value != NEVER:
                    classes.append(seq(lit('"'), Enc(Minus(lang, words)), lit('"' + colon), value))
            # keys matching no pattern are never generated (sound; their language needs a complement)
        elif with_patterns:
            return None  # several schemas with patternProperties: generate declared keys only
        else:
            explicit = [f for f in schemas if "additionalProperties" in f.schema]
            if not explicit and not self.opts.allow_additional_properties:
                return None
            vlocs = [f.at("additionalProperties") for f in explicit]
            vlocs = [v for v in vlocs if v.schema is not True]
            value = self.value(vlocs, depth + 1) if vlocs else self.any_value(depth + 1, schemas[0])
            if value == NEVER:
                return None
            if key_lang is None and not words:
                key = Enc(rep(Cls(ANY_CHAR), 0, self.opts.max_string_length), True)
            else:
                lang = rep(Cls(ANY_CHAR), 0, self.opts.max_string_length)
                if key_lang is not None:
                    lang = And((lang, key_lang))
                key = Enc(Minus(lang, words))
            classes.append(seq(lit('"'), key, lit('"' + colon), value))
        return alt(*classes) if classes else None

    def _key_language(self, name_locs: list[_Loc]) -> Node | None:
        """The decoded language ``propertyNames`` allows (None: unconstrained)."""
        if not name_locs:
            return None
        langs = []
        for loc in name_locs:
            node = self._string_schema_language(loc)
            if node is not None:
                langs.append(node)
        if not langs:
            return None
        return langs[0] if len(langs) == 1 else And(tuple(langs))

    def _string_schema_language(self, loc: _Loc) -> Node | None:
        s = loc.schema
        if s is True:
            return None
        if s is False:
            return NEVER
        flat: list[_Loc] = []
        pushed = sum([self._flatten(loc, flat, set())])
        for _ in range(pushed):
            self.active.pop()
        langs: list[Node] = []
        lo, hi = 0, None
        for f in flat:
            sch = f.schema
            if sch is False:
                return NEVER
            for kw in sch:
                if kw in (
                    "type",
                    "title",
                    "description",
                    "$comment",
                    "minLength",
                    "maxLength",
                    "pattern",
                    "format",
                    "enum",
                    "const",
                    "$schema",
                    "$id",
                    "examples",
                    "default",
                ):
                    continue
                self.unsupported(kw, f, "propertyNames supports string keywords only")
            if "enum" in sch or "const" in sch:
                vals = sch["enum"] if "enum" in sch else [sch["const"]]
                strs = [v for v in vals if isinstance(v, str)]
                langs.append(alt(*[lit(v) for v in strs]) if strs else NEVER)
            if "pattern" in sch:
                langs.append(pattern_node(sch["pattern"]))
            if isinstance(sch.get("format"), str) and format_node(sch["format"]) is not None:
                langs.append(format_node(sch["format"]))
            if "minLength" in sch:
                lo = max(lo, _count(sch["minLength"], "minLength", f))
            if "maxLength" in sch:
                hi = _count(sch["maxLength"], "maxLength", f) if hi is None else min(hi, sch["maxLength"])
        if lo or hi is not None:
            langs.append(rep(Cls(ANY_CHAR), lo, hi))
        if not langs:
            return None
        return langs[0] if len(langs) == 1 else And(tuple(langs))

    def _disjoint_patterns(self, pats: list[str], loc: _Loc) -> bool:
        from ..automata import small_dfa

        budget = self._budget()
        for i in range(len(pats)):
            for j in range(i + 1, len(pats)):
                d = small_dfa(And((pattern_node(pats[i]), pattern_node(pats[j]))), budget)
                if any(d.accepting):
                    return False
        return True

    # -- arrays -----------------------------------------------------------------------------------------
    def array(self, schemas: list[_Loc], depth: int) -> Node:
        prefixes: list[list[_Loc]] = []
        rests: list[_Loc | None] = []
        for f in schemas:
            s = f.schema
            prefix: list[_Loc] = []
            rest: _Loc | None = None
            items = s.get("items")
            if "prefixItems" in s:
                if not isinstance(s["prefixItems"], list):
                    raise SchemaError(f"prefixItems at {f.ptr or '/'} must be an array")
                prefix = [f.at("prefixItems", i) for i in range(len(s["prefixItems"]))]
            if isinstance(items, list):
                prefix = [f.at("items", i) for i in range(len(items))]
                if "additionalItems" in s:
                    rest = f.at("additionalItems")
            elif items is not None:
                rest = f.at("items")
            if rest is None and s.get("unevaluatedItems") is False:
                rest = _Loc(False, f.ptr + "/unevaluatedItems", f.base)
            elif "unevaluatedItems" in s and s["unevaluatedItems"] not in (False, True):
                self.unsupported("unevaluatedItems", f, "only false is enforced")
            prefixes.append(prefix)
            rests.append(rest)
        min_i = max(
            [_count(f.schema["minItems"], "minItems", f) for f in schemas if "minItems" in f.schema] or [0]
        )
        maxes = [_count(f.schema["maxItems"], "maxItems", f) for f in schemas if "maxItems" in f.schema]
        max_i = min(maxes) if maxes else None
        n = max((len(p) for p in prefixes), default=0)
        if max_i is not None:
            n = min(n, max_i)

        def locs_at(i: int) -> list[_Loc]:
            out = []
            for p, r in zip(prefixes, rests):
                if i < len(p):
                    out.append(p[i])
                elif r is not None:
                    out.append(r)
            return out

        contains = [f for f in schemas if "contains" in f.schema]
        unique = any(f.schema.get("uniqueItems") is True for f in schemas)
        rest_locs = [r for r in rests if r is not None]
        rest_allowed = max_i is None or max_i > n
        if any(r.schema is False for r in rest_locs):
            rest_allowed = False
        if unique and (max_i is None or max_i > 1):
            return self._unique_array(schemas, prefixes, rest_locs, min_i, max_i, depth)
        if contains:
            return self._contains_array(schemas, contains, prefixes, rest_locs, min_i, max_i, depth)

        sep = lit(self.layout.sep(depth))
        elems: list[Node] = []
        for i in range(n):
            node = self.value(locs_at(i), depth + 1)
            elems.append(node)
        # rest elements beyond the prefix
        k_hi = None if max_i is None else max_i - n
        if rest_allowed and (k_hi is None or k_hi > 0):
            rest_locs = [r for r in rest_locs if r.schema is not True]
            rest = self.value(rest_locs, depth + 1) if rest_locs else self.any_value(depth + 1, schemas[0])
        else:
            rest = NEVER
            k_hi = 0
        if n < min_i and rest == NEVER:
            return NEVER

        def build(min_count: int) -> tuple[Node, bool]:
            """Elements with at least ``min_count`` of them (>= 1): the body, and whether it can be empty."""
            lo_rest = max(0, min_count - n)
            if rest == NEVER:
                tail = EMPTY if lo_rest == 0 else NEVER
            elif n == 0:
                hi1 = None if k_hi is None else k_hi - 1
                tail = seq(rest, rep(seq(sep, rest), max(lo_rest - 1, 0), hi1))
                if lo_rest == 0:
                    tail = opt(tail)
            else:
                tail = rep(seq(sep, rest), lo_rest, k_hi)
            node = tail
            for i in range(n - 1, -1, -1):
                node = seq(sep if i > 0 else EMPTY, elems[i], node)
                if i >= min_count:
                    node = opt(node)
            return node, False

        body, _ = build(max(min_i, 1))
        return self.layout.container("[", "]", body, min_i == 0, depth)

    def _unique_array(self, schemas, prefixes, rest_locs, min_i, max_i, depth) -> Node:
        """uniqueItems over a finite item set: the items in a fixed order, each at most once."""
        loc = next(f for f in schemas if f.schema.get("uniqueItems") is True)
        if any(prefixes) or not rest_locs:
            self.unsupported(
                "uniqueItems", loc, "enforced only for items drawn from a finite set (enum/const)"
            )
            return self.array(
                [
                    _Loc({k: v for k, v in f.schema.items() if k != "uniqueItems"}, f.ptr, f.base)
                    for f in schemas
                ],
                depth,
            )
        values = self._finite_values(rest_locs)
        if values is None:
            self.unsupported(
                "uniqueItems", loc, "enforced only for items drawn from a finite set (enum/const)"
            )
            return self.array(
                [
                    _Loc({k: v for k, v in f.schema.items() if k != "uniqueItems"}, f.ptr, f.base)
                    for f in schemas
                ],
                depth,
            )
        items = tuple((lit(self.layout.dump(v, depth + 1)), 0, 1) for v in values)
        if len(items) < min_i:
            return NEVER
        if not items:
            return lit("[]") if min_i == 0 else NEVER
        body = Members(items, lit(self.layout.sep(depth)), max(min_i, 1), max_i)
        return self.layout.container("[", "]", body, min_i == 0, depth)

    def _finite_values(self, locs: list[_Loc]) -> list | None:
        flat: list[_Loc] = []
        pushed = sum(self._flatten(loc, flat, set()) for loc in locs)
        for _ in range(pushed):
            self.active.pop()
        values = None
        for f in flat:
            s = f.schema
            if s is False:
                return []
            if isinstance(s, dict) and ("enum" in s or "const" in s):
                vals = s["enum"] if "enum" in s else [s["const"]]
                values = (
                    list(vals)
                    if values is None
                    else [v for v in values if _canon(v) in set(map(_canon, vals))]
                )
            elif isinstance(s, dict) and s.get("type") == "boolean" and values is None:
                values = [True, False]
        if values is None:
            return None
        out, seen = [], set()
        for v in values:
            c = _canon(v)
            if c not in seen and _finite(v) and self.is_valid(v, locs):
                seen.add(c)
                out.append(v)
        return out

    def _contains_array(self, schemas, contains, prefixes, rest_locs, min_i, max_i, depth) -> Node:
        """contains with minContains only: that many items drawn from (items ∧ contains), anywhere."""
        loc = contains[0]
        min_c = max([_count(f.schema.get("minContains", 1), "minContains", f) for f in contains])
        max_cs = [f.schema["maxContains"] for f in contains if "maxContains" in f.schema]
        if any(prefixes) or (max_cs and (max_i is None or min(max_cs) < max_i)):
            self.unsupported(
                "contains", loc, "enforced only without prefixItems and without a binding maxContains"
            )
            return self.array(
                [
                    _Loc(
                        {
                            k: v
                            for k, v in f.schema.items()
                            if k not in ("contains", "minContains", "maxContains")
                        },
                        f.ptr,
                        f.base,
                    )
                    for f in schemas
                ],
                depth,
            )
        base = [r for r in rest_locs if r.schema is not True]
        item = self.value(base, depth + 1) if base else self.any_value(depth + 1, loc)
        hit = self.value(base + [f.at("contains") for f in contains], depth + 1)
        if min_c == 0:
            hit = NEVER
        sep = lit(self.layout.sep(depth))
        if hit == NEVER and min_c > 0:
            return NEVER
        if _unval(hit) == _unval(item) and min_c > 0:
            # every item matches contains (contains: true, or implied by items): just a count
            body = Members(((item, max(min_i, min_c), max_i),), sep, max(min_i, min_c, 1), max_i)
            return self.layout.container("[", "]", body, False, depth)
        seq_items: list[tuple[Node, int, int | None]] = []
        for _ in range(min_c):
            seq_items.append((item, 0, None))
            seq_items.append((hit, 1, 1))
        seq_items.append((item, 0, None))
        if max_i is not None and max_i < min_c:
            return NEVER
        body = Members(tuple(seq_items), sep, max(min_i, 1), max_i)
        return self.layout.container("[", "]", body, min_i == 0 and min_c == 0, depth)


def _unval(node: Node) -> Node:
    while isinstance(node, Val):
        node = node.item
    return node


def _meet(a: set[str], b: set[str]) -> set[str]:
    """Types allowed by both sets (integer is a subtype of number)."""
    out = set()
    for t in a:
        if t in b:
            out.add(t)
        elif (t == "integer" and "number" in b) or (t == "number" and "integer" in b):
            out.add("integer")
    return out


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
    "x-fsm-not-enum",
    "x-fsm-not-string",
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


def _quick_valid(v: Any, flat: list[_Loc], draft: int = 2020) -> bool | None:
    """Validity of a literal value against flat schemas for the common keywords; None: ask jsonschema."""
    t = _JSON_TYPE.get(type(v))
    if t is None or t in ("array", "object"):
        return None
    for f in flat:
        s = f.schema
        if s is False:
            return False
        if s is True:
            continue
        for kw, arg in s.items():
            if kw in _ANNOTATIONS or kw in _OBJECT_KW or kw in _ARRAY_KW:
                continue
            if kw == "type":
                ts = [arg] if isinstance(arg, str) else arg
                if s.get("nullable") is True and v is None:
                    continue
                ok = (
                    t in ts
                    or (t == "integer" and "number" in ts)
                    or (t == "number" and "integer" in ts and float(v).is_integer() and draft > 4)
                )
                if not ok:
                    return False
            elif kw in ("enum", "const"):
                vals = arg if kw == "enum" else [arg]
                if not isinstance(vals, list) or _canon(v) not in set(map(_canon, vals)):
                    return False
            elif kw in ("minLength", "maxLength", "pattern"):
                if t != "string":
                    continue
                if kw == "pattern":
                    try:
                        if re.search(arg, v) is None:
                            return False
                    except (re.error, TypeError):
                        return None
                elif not isinstance(arg, int):
                    return None
                elif (len(v) < arg) if kw == "minLength" else (len(v) > arg):
                    return False
            elif kw in _NUMBER_KW:
                if t not in ("integer", "number"):
                    continue
                if isinstance(arg, bool) or not isinstance(arg, (int, float)):
                    continue  # draft 4 boolean exclusives: handled with their bound below
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
            elif kw == "format":
                if t == "string" and isinstance(arg, str) and format_node(arg) is not None:
                    return None
            else:
                return None
    return True


_REF_SIBLINGS_OK = {
    "$ref",
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


_NO_CONSTRAINT = {
    "title",
    "description",
    "$comment",
    "default",
    "examples",
    "example",
    "readOnly",
    "writeOnly",
    "deprecated",
    "$schema",
}


def _type_set(t: Any) -> set[str]:
    return (
        {t} if isinstance(t, str) else {x for x in t if isinstance(x, str)} if isinstance(t, list) else set()
    )


def _trivial(s: Any) -> bool:
    """A schema every value satisfies, by its keys alone (true, {}, annotations only)."""
    return s is True or (isinstance(s, dict) and set(s) <= _NO_CONSTRAINT)


def _pure_ref(s: Any, draft: int) -> str | None:
    """The $ref of a schema that is nothing but a reference (siblings are annotations, or ignored)."""
    if not isinstance(s, dict) or "$ref" not in s:
        return None
    if draft <= 7 or set(s) <= _REF_SIBLINGS_OK:
        return s["$ref"]
    return None


def _canon(v: Any) -> str:
    """A hashable identity for JSON values where 1 == 1.0 but True != 1 (as validators compare)."""
    if isinstance(v, bool) or v is None:
        return json.dumps(v)
    if isinstance(v, (int, float)):
        return "n:" + (str(int(v)) if float(v).is_integer() else repr(float(v)))
    return json.dumps(v, sort_keys=True, ensure_ascii=False, default=str)


def _finite(v: Any) -> bool:
    try:
        json.dumps(v, allow_nan=False)
        return True
    except (ValueError, TypeError):
        return False


def _count(v: Any, kw: str, loc: _Loc) -> int:
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    if not isinstance(v, int) or isinstance(v, bool) or v < 0:
        raise SchemaError(f"{kw} at {loc.ptr or '/'} must be a non-negative integer, got {v!r}")
    return v


def _num(v: Any, kw: str, loc: _Loc):
    if (
        isinstance(v, bool)
        or not isinstance(v, (int, float))
        or (isinstance(v, float) and not math.isfinite(v))
    ):
        raise SchemaError(f"{kw} at {loc.ptr or '/'} must be a finite number, got {v!r}")
    return v


def _search(pattern: str, text: str, loc: _Loc) -> bool:
    try:
        return re.search(pattern, text) is not None
    except re.error as exc:
        raise UnsupportedSchema(
            f"patternProperties key {pattern!r} at {loc.ptr or '/'} is not a valid regex: {exc}",
            "patternProperties",
            loc.ptr,
        ) from None


# ---------------------------------------------------------------------------------------------
# The spec


def _load(schema: Any) -> Any:
    if isinstance(schema, (bool, dict)):
        return schema
    if isinstance(schema, str):
        try:
            return json.loads(schema)
        except json.JSONDecodeError as exc:
            raise SchemaError(f"the schema string is not valid JSON: {exc}") from None
    if isinstance(schema, type) and hasattr(schema, "model_json_schema"):
        try:
            return schema.model_json_schema()
        except Exception as exc:  # noqa: BLE001 - pydantic raises many kinds; all mean "no schema"
            raise SchemaError(
                f"pydantic could not produce a JSON schema for {schema.__name__}: {exc}"
            ) from None
    raise SchemaError(
        f"JsonSchema takes a dict, a JSON string, a bool or a pydantic model class, got {type(schema).__name__}"
    )


class JsonSchema:
    """A JSON Schema (dict, JSON text, bool, or pydantic model class) as a generation constraint.

    >>> JsonSchema({"enum": ["red", "green"]}).to_regex()
    '"green"|"red"'
    """

    def __init__(
        self,
        schema: Any,
        whitespace: str | int = "compact",
        *,
        allow_additional_properties: bool = False,
        lenient: bool = False,
        max_string_length: int | None = None,
        oneof: str = "exact",
        any_value_depth: int | None = None,
    ):
        self.schema = _load(schema)
        if whitespace == "compact":
            self._indent = None
        elif whitespace == "pretty":
            self._indent = 2
        elif isinstance(whitespace, int) and not isinstance(whitespace, bool) and 0 <= whitespace <= 16:
            self._indent = whitespace
        else:
            raise SchemaError(
                f"whitespace must be 'compact', 'pretty' or an indent width 0..16, got {whitespace!r}"
            )
        if oneof not in ("exact", "anyof"):
            raise SchemaError(f"oneof must be 'exact' or 'anyof', got {oneof!r}")
        if max_string_length is not None and (
            not isinstance(max_string_length, int) or max_string_length < 0
        ):
            raise SchemaError(f"max_string_length must be a non-negative int, got {max_string_length!r}")
        if any_value_depth is not None and (not isinstance(any_value_depth, int) or any_value_depth < 0):
            raise SchemaError(f"any_value_depth must be a non-negative int, got {any_value_depth!r}")
        self.whitespace = whitespace
        self.allow_additional_properties = bool(allow_additional_properties)
        self.lenient = bool(lenient)
        self.max_string_length = max_string_length
        self.oneof = oneof
        self.any_value_depth = any_value_depth
        self.ignored: list[str] = []
        self._result: tuple[Node | None, NeedsGrammar | None] | None = None
        self._any_json = False

    @cached_property
    def fingerprint(self) -> str:
        """sha256 over the canonical schema and every option."""
        payload = json.dumps(
            [
                self.schema,
                self._indent,
                self.allow_additional_properties,
                self.lenient,
                self.max_string_length,
                self.oneof,
                self.any_value_depth,
            ],
            sort_keys=True,
            separators=(",", ":"),
            ensure_ascii=False,
            default=str,
        )
        return "json:" + hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()[:32]

    def _translate(self, limits: Limits | None = None) -> tuple[Node | None, NeedsGrammar | None]:
        if self._result is None:
            t = _Translator(self.schema, self, limits or DEFAULT_LIMITS)
            try:
                node = t.value([_Loc(self.schema, "", t.root_base)], 0)
                self._result = (node, None)
                self._any_json = t.any_json
            except NeedsGrammar as ng:
                self._result = (None, ng)
            except SchemaTooComplex:
                raise
            except SpecTooComplex as exc:
                raise SchemaTooComplex(str(exc), budget=exc.budget, limit=exc.limit) from None
            except RecursionError:
                raise SchemaTooComplex(
                    "the schema is nested too deeply to translate", budget="recursion"
                ) from None
            self.ignored = t.ignored
            if t.ignored:
                warnings.warn("JsonSchema(lenient=True) ignored: " + "; ".join(t.ignored), stacklevel=3)
        return self._result

    @property
    def is_recursive(self) -> bool:
        """True when the documents are not a regular language: a recursive ``$ref`` (the grammar engine
        runs it) or an unbounded any-JSON value (a pushdown block of the lazy DFA runs it)."""
        return self._translate()[1] is not None or self._any_json

    def node(self) -> Node:
        """The translated `json_ast` tree (regular schemas only)."""
        node = self._node()
        if self._any_json:
            raise UnsupportedSchema(
                "this schema is not regular (an unconstrained JSON value, {} or true, nests without bound); "
                "compile it (fsm.compile) or pass any_value_depth for a regular, depth-bounded value",
                None,
                "",
            )
        return node

    def _node(self) -> Node:
        """The translated tree, `AnyJson` blocks included (non-recursive schemas)."""
        node, ng = self._translate()
        if ng is not None:
            raise UnsupportedSchema(
                f"this schema is not regular ({ng}); it needs the grammar engine", "$ref", ng.pointer
            )
        if node == NEVER:
            raise SchemaError(
                "the schema admits no JSON document at all (its constraints contradict each other)"
            )
        return node

    def to_regex(self) -> str:
        """Regex text (Python syntax) for the documents this schema generates; non-recursive schemas only."""
        return to_regex(self.node())

    def to_dfa(self, limits: Limits | None = None):
        """The byte DFA of the documents this schema generates (non-recursive schemas)."""
        from ..automata import node_to_dfa

        self._translate(limits)
        return node_to_dfa(self.node(), limits)

    def build_index(self, vocab, limits: Limits | None = None):
        # One seconds budget for the whole compile: every phase gets what the earlier ones left.
        limits = limits or DEFAULT_LIMITS
        started = time.monotonic()

        def left() -> Limits:
            return limits.within(limits.max_seconds - (time.monotonic() - started))

        def via_grammar():
            from ..grammar.spec import Grammar

            text = self.to_grammar(left())
            return Grammar(text).build_index(vocab, limits, seconds=left().max_seconds)

        def via_pushdown():
            # every $ref a rule, run by a lazily determinized pushdown automaton (json_pushdown);
            # the LALR grammar only where that cannot go (left recursion, a vocabulary that cannot
            # spell every byte on its own)
            from ..automata import LeftRecursive, pushdown_dfa

            try:
                lazy = pushdown_dfa(*self._rules(left(), pushdown=True), limits=left())
            except LeftRecursive:
                lazy = None
            if lazy is not None and LazyJsonIndex.usable(lazy, vocab):
                lazy.limits = limits
                return LazyJsonIndex(lazy, vocab, fingerprint=self.fingerprint, limits=limits)
            try:
                return via_grammar()
            except GrammarError as exc:
                raise UnsupportedSchema(
                    f"this schema is not regular ({ng}), and its grammar is not one the engine can enforce "
                    f"exactly (alternatives that only a later token tells apart): {exc}",
                    "anyOf" if "ambiguous" in str(exc) else None,
                    ng.pointer if ng else "",
                ) from None

        from ..automata import LazyByteDFA, node_nfa
        from ..lazy_index import LazyJsonIndex

        _, ng = self._translate(limits)
        if ng is not None:
            return via_pushdown()

        try:
            # A regular schema whose $refs expand past this many NFA states is cheaper as a grammar
            # (each $ref one rule): try that before giving up.
            nfa_limits = replace(left(), max_states=min(limits.max_states, _NFA_STATES_BEFORE_GRAMMAR))
            trans, eps, start, final, _, counters = node_nfa(self._node(), nfa_limits)
            lazy = LazyByteDFA(trans, eps, start, final, limits, counters)
        except SchemaTooComplex as exc:
            if self._indent is not None or exc.budget != "max_states":
                raise
            # lark's LALR construction cannot be interrupted: try the grammar only while there is
            # time left and the grammar is of a size it builds in seconds
            if time.monotonic() - started > limits.max_seconds / 2:
                raise
            try:
                return via_pushdown()
            except SpecError:
                raise exc from None
        if LazyJsonIndex.usable(lazy, vocab):
            return LazyJsonIndex(lazy, vocab, fingerprint=self.fingerprint, limits=limits)
        if self._any_json:  # the pushdown block has no finite table for the eager index to prune
            return via_pushdown()
        from ..index import RegexIndex  # token-level dead ends need the eager index's pruning

        return RegexIndex(lazy.materialize(), vocab, fingerprint=self.fingerprint, limits=limits)

    def to_grammar(self, limits: Limits | None = None) -> str:
        """Lark grammar text (compact JSON, no ``%ignore``): for recursive schemas and ``{}`` values.

        Every ``$ref`` becomes a rule, unconstrained values the ``json_value`` rule; terminals are
        JSON lexemes (punctuation, ``"key":``, one scalar value).

        >>> print(JsonSchema({"type": "array", "items": {"$ref": "#"}, "maxItems": 2}).to_grammar(), end="")
        start: d0
        d0: ("[" "]" | "[" d0 [("," d0)] "]")
        """
        root, rules = self._rules(limits, pushdown=False)
        from .lark_writer import to_lark

        return to_lark(root, rules, self.max_string_length, limits or DEFAULT_LIMITS)

    def _rules(self, limits: Limits | None, pushdown: bool) -> tuple[Node, dict[str, Node]]:
        """The root and one rule per ``$ref`` target (recursion refers back by name)."""
        if self._indent is not None:
            raise UnsupportedSchema("recursive schemas support whitespace='compact' only", "whitespace", "")
        t = _Translator(self.schema, self, limits or DEFAULT_LIMITS)
        t.grammar = True
        t.pushdown = pushdown
        try:
            # the root as a rule, so "#" references share it
            root = Ref(t.rule(t.root_base + "#", _Loc(self.schema, "", t.root_base)))
        except SpecTooComplex as exc:
            if isinstance(exc, SchemaTooComplex):
                raise
            raise SchemaTooComplex(str(exc), budget=exc.budget, limit=exc.limit) from None
        except RecursionError:
            raise SchemaTooComplex(
                "the schema is nested too deeply to translate", budget="recursion"
            ) from None
        return root, t.rules

    def __repr__(self) -> str:
        text = json.dumps(self.schema, ensure_ascii=False)
        return f"JsonSchema({text[:60]}{'...' if len(text) > 60 else ''})"
