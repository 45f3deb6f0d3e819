"""The translator: JSON values valid against a conjunction of subschemas, as a language tree.

`Translator.value` flattens ``$ref``/``allOf``/``not`` into a list of subschemas, splits on the first
``anyOf``/``oneOf``, and hands the conjunction to the per-type modules (`strings`, `numbers`,
`objects`, `arrays`); finite ``enum``/``const`` values are checked against the whole schema instead.
In grammar mode every pure ``$ref`` becomes a named rule (recursion refers back by name).

>>> from fsm.json.schema import JsonSchema
>>> from fsm.limits import DEFAULT_LIMITS
>>> t = Translator({"type": "integer", "maximum": 3, "minimum": 0}, JsonSchema(True), DEFAULT_LIMITS)
>>> from fsm.automata import to_regex
>>> to_regex(t.value([Loc(t.root, "", t.root_base)], 0))
'[0-3]'
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urldefrag, urljoin

from ..automata import (
    ANY_CHAR,
    NEVER,
    AnyJson,
    Bounds,
    Budget,
    Cls,
    Enc,
    Lit,
    Node,
    Ref,
    Val,
    alt,
    lit,
    number_node,
    rep,
    seq,
)
from ..errors import SchemaError, UnsupportedSchema
from ..limits import Limits
from .arrays import array_language
from .context import Loc
from .formats import format_node
from .keywords import (
    ARRAY_KW,
    NO_CONSTRAINT,
    NUMBER_KW,
    OBJECT_KW,
    STRING_KW,
    TYPES,
    UNSUPPORTED,
    meet,
    pure_ref,
    trivial,
    type_set,
    types_of,
)
from .layout import Layout
from .negation import NO_NEGATION, negate, negation
from .numbers import number_language
from .objects import object_language
from .one_of import check_exclusive
from .refs import NeedsGrammar, Refs, draft_of
from .strings import string_language, string_node
from .values import LiteralCheck, canon, excluded_value, finite


class Translator:
    """One translation of a root schema (one compile): refs, memo, deadline, and grammar rules."""

    def __init__(self, root: Any, opts: Any, limits: Limits):
        self.root = root
        self.opts = opts
        self.draft = draft_of(root)
        self.layout = Layout(opts.indent)
        self.ignored: list[str] = []
        self.limits = limits
        self._canon_memo: dict[int, tuple[Any, str]] = {}
        self.deadline = limits.deadline()
        self.calls = 0
        self.active: list[str] = []  # refs being expanded on the current path (cycle = recursion)
        self.refs = Refs(root, self.draft)
        self.root_base = self.refs.root_base
        self.literals = LiteralCheck(root, self.draft)
        self._memo: dict[tuple, tuple] = {}
        self.grammar = False  # grammar mode: every pure $ref is a rule, {} is the json_value rule
        self.any_json = False  # an unbounded any-value (AnyJson) was emitted: lazy DFA only
        self.pushdown = False  # rules for the pushdown automaton: {} stays an AnyJson block
        self.rules: dict[str, Node] = {}
        self.rule_names: dict[str, str] = {}

    def resolve(self, ref: str, loc: Loc) -> tuple[Loc, str]:
        """The subschema ``ref`` points to and a key naming it (for cycle detection)."""
        return self.refs.resolve(ref, loc)

    def is_valid(self, value: Any, locs: list[Loc], flat: list[Loc] | None = None) -> bool:
        """True when the literal ``value`` validates against every schema in ``locs``."""
        return self.literals.is_valid(value, locs, flat)

    def tick(self) -> None:
        self.calls += 1
        if self.calls & 63 == 0:
            self.deadline.check("translating the JSON schema")

    def unsupported(self, keyword: str, loc: Loc, why: str = "") -> None:
        where = f"{loc.ptr}/{keyword}"
        msg = f"keyword {keyword!r} at {where} is not supported{': ' + why if why else ''}"
        if self.opts.lenient:
            self.ignored.append(msg)
            return
        raise UnsupportedSchema(msg + " (pass lenient=True to ignore it)", keyword, where)

    def value(self, locs: list[Loc], depth: int) -> Node:
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

    def _value(self, locs: list[Loc], depth: int) -> Node:
        self.tick()
        if len(locs) > 1:
            locs = self._distinct(locs)
        if self.grammar and len(locs) > 1:
            # what is left of a parent beside an anyOf branch is often empty: a branch that is a
            # pure (recursive) $ref must still become a rule reference
            kept = [loc for loc in locs if not trivial(loc.schema)]
            refs = [loc for loc in kept if pure_ref(loc.schema, self.draft) is not None]
            if len(kept) > 1 and len(refs) == 1:  # e.g. {"type": "object"} beside a ref to an object schema
                kept = [loc for loc in kept if loc is refs[0] or not self._implied_by_ref(loc, refs[0])]
            locs = kept if kept else locs[:1]
        if self.grammar and len(locs) == 1:
            ref = pure_ref(locs[0].schema, self.draft)
            if ref is not None:
                target, key = self.refs.resolve(ref, locs[0])
                return Ref(self.rule(key, target))
        flat: list[Loc] = []
        pushed = 0
        try:
            for loc in locs:
                pushed += self.flatten(loc, flat, set())
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

    def budget(self) -> Budget:
        """An automaton budget on the translation's own deadline (one budget per compile)."""
        budget = Budget(self.limits)
        budget.deadline = self.deadline
        return budget

    def _distinct(self, locs: list[Loc]) -> list[Loc]:
        """``locs`` without repeats of an equal schema (A and A is A): e.g. a property matched by
        ``properties`` and a ``patternProperties`` pattern with the same subschema."""
        out: list[Loc] = []
        seen: set = set()
        for loc in locs:
            key = self._canon_memo.get(id(loc.schema))
            if key is None or key[0] is not loc.schema:
                key = self._canon_memo[id(loc.schema)] = (loc.schema, canon(loc.schema))
            k = (loc.base, key[1])
            if k not in seen:
                seen.add(k)
                out.append(loc)
        return out

    def _implied_by_ref(self, loc: Loc, ref_loc: Loc) -> bool:
        """True when ``loc`` is only a ``type`` that the (pure) ``$ref`` target declares anyway."""
        s = loc.schema
        if not isinstance(s, dict) or set(s) - NO_CONSTRAINT != {"type"}:
            return False
        allowed = type_set(s["type"])
        target = ref_loc
        for _ in range(8):
            ref = pure_ref(target.schema, self.draft)
            if ref is None:
                break
            target, _ = self.refs.resolve(ref, target)
        ts = target.schema
        if not isinstance(ts, dict):
            return False
        if "type" in ts:
            declared = type_set(ts["type"])
        elif not set(ts) & {"anyOf", "oneOf", "allOf", "$ref", "enum", "const", "not", "if"}:
            declared = self._inferred_types([target])  # the types this library generates for it
        else:
            return False
        return bool(allowed and declared) and all(
            x in allowed or (x == "integer" and "number" in allowed) for x in declared
        )

    def flatten(self, loc: Loc, out: list[Loc], seen: set) -> int:
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
            loc = Loc(s, loc.ptr, urldefrag(urljoin(loc.base, sid))[0])
        pushed = 0
        if "$ref" in s:
            target, key = self.refs.resolve(s["$ref"], loc)
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
            pushed += self.flatten(target, out, seen)
            if self.draft <= 7:
                return pushed  # drafts 4-7: siblings of $ref are ignored
            s = {k: v for k, v in s.items() if k != "$ref"}
            loc = Loc(s, loc.ptr, loc.base)
        if "allOf" in s:
            subs = s["allOf"]
            if not isinstance(subs, list) or not subs:
                raise SchemaError(f"allOf at {loc.ptr or '/'} must be a non-empty array")
            for i in range(len(subs)):
                pushed += self.flatten(loc.at("allOf", i), out, seen)
            s = {k: v for k, v in s.items() if k != "allOf"}
            loc = Loc(s, loc.ptr, loc.base)
        if "not" in s:
            # a `not` with an exact positive form is replaced by it here, before anyOf branches are
            # split (the form may itself be an anyOf); other forms stay for `_conjunction`
            neg = negation(self, s["not"], loc.at("not"), 0)
            if neg is not NO_NEGATION:
                at = loc.ptr + "/not"
                s = {k: v for k, v in s.items() if k != "not"}
                loc = Loc(s, loc.ptr, loc.base)
                if neg is not True:
                    pushed += self.flatten(Loc(neg, at, loc.base), out, seen)
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
                out.append(Loc({"anyOf": [absent, present]}, f"{loc.ptr}/{kw}/{name}", loc.base))
        out.append(Loc(s, loc.ptr, loc.base))
        return pushed

    def _branch(self, flat: list[Loc], i: int, kw: str, locs: list[Loc], depth: int) -> Node:
        loc = flat[i]
        branches = loc.schema[kw]
        if not isinstance(branches, list) or not branches:
            raise SchemaError(f"{kw} at {loc.ptr or '/'} must be a non-empty array")
        rest = {k: v for k, v in loc.schema.items() if k != kw}
        base = flat[:i] + [Loc(rest, loc.ptr, loc.base)] + flat[i + 1 :]
        nodes = [self.value(base + [loc.at(kw, j)], depth) for j in range(len(branches))]
        if kw == "oneOf" and self.opts.oneof != "anyof":
            check_exclusive(self, base, loc, nodes)
        return alt(*nodes)

    def _conjunction(self, flat: list[Loc], locs: list[Loc], depth: int) -> Node:
        for f in flat:
            if f.schema is False:
                return NEVER
        schemas = [f for f in flat if isinstance(f.schema, dict)]
        has_values = any("enum" in f.schema or "const" in f.schema for f in schemas)
        if not has_values:  # with finite values the validator enforces every keyword, these included
            extra = []
            for f in schemas:
                for kw in f.schema:
                    if kw in UNSUPPORTED:
                        self.unsupported(kw, f)
                if "if" in f.schema:
                    self.unsupported("if", f, "conditional schemas cannot be enforced exactly")
                if "not" in f.schema:
                    neg = negate(self, f.at("not"))
                    if neg is not None:
                        extra.append(neg)
            if extra:
                flat2 = list(flat)
                for e in extra:
                    self.flatten(e, flat2, set())
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
                    keep = set(map(canon, vals))
                    values = [v for v in values if canon(v) in keep]
        if values is not None:
            out, seen = [], set()
            for v in values:
                c = canon(v)
                if c in seen or not finite(v):
                    continue
                seen.add(c)
                if self.is_valid(v, locs, flat) and not excluded_value(v, schemas):
                    out.append(lit(self.layout.dump(v, depth)))
            # longest text first, so a leftmost-first regex engine never stops at a shorter number
            out.sort(key=lambda n: -len(n.text) if isinstance(n, Lit) else 0)
            return alt(*out) if out else NEVER

        types: set[str] | None = None
        for f in schemas:
            ts = types_of(f.schema, f)
            if ts is not None:
                types = ts if types is None else meet(types, ts)
        if types is None:
            types = self._inferred_types(schemas)
            if types is None:
                return self.any_value(depth, schemas[0] if schemas else Loc(True, "", self.root_base))
        if "number" in types:
            types.discard("integer")
        nodes = []
        for t in TYPES:
            if t not in types:
                continue
            if t == "null":
                nodes.append(lit("null"))
            elif t == "boolean":
                nodes.append(alt(lit("true"), lit("false")))
            elif t == "string":
                nodes.append(string_language(self, schemas))
            elif t in ("number", "integer"):
                nodes.append(number_language(self, schemas, t == "integer"))
            elif t == "object":
                nodes.append(object_language(self, schemas, depth))
            elif t == "array":
                nodes.append(array_language(self, schemas, depth))
        return alt(*nodes) if nodes else NEVER

    def _inferred_types(self, schemas: list[Loc]) -> set[str] | None:
        kws = set()
        for f in schemas:
            kws |= set(f.schema)
        types = set()
        if kws & OBJECT_KW:
            types.add("object")
        if kws & ARRAY_KW:
            types.add("array")
        if kws & STRING_KW:
            types.add("string")
        if kws & NUMBER_KW:
            types.add("number")
        for f in schemas:
            fmt = f.schema.get("format")
            if isinstance(fmt, str) and format_node(fmt) is not None:
                types.add("string")
        if "x-fsm-not-enum" in kws and not types:
            return None
        return types or None

    def rule(self, key: str, target: Loc) -> str:
        """The grammar rule for a $ref target (translated once; recursion refers back by name)."""
        name = self.rule_names.get(key)
        if name is None:
            name = self.rule_names[key] = f"d{len(self.rule_names)}"
            self.rules[name] = NEVER
            self.rules[name] = self.value([target], 0)
        return name

    def any_value(self, depth: int, loc: Loc) -> Node:
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
            string_node(0, None, []),
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
