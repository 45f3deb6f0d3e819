"""The translator: JSON values valid against a conjunction of subschemas, as a language tree.

`Translator.value` flattens ``$ref``/``allOf``/``not`` into a list of conjuncts, splits on the first
``anyOf``/``oneOf``, and hands the conjunction to the per-type modules (`strings`, `numbers`,
`objects`, `arrays`); finite ``enum``/``const`` values are checked against the whole schema instead
(`values`). Its `Mode`, fixed at construction, says what a ``$ref`` and an unconstrained value become.

>>> from fsm.json.schema import JsonSchema
>>> from fsm.limits import DEFAULT_LIMITS
>>> t = Translator({"type": "integer", "maximum": 3, "minimum": 0}, JsonSchema(True), DEFAULT_LIMITS)
>>> from fsm.automata import to_regex
>>> to_regex(t.value([Loc(t.root, "", t.root_base)], 0))
'[0-3]'
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from enum import Enum
from typing import Any
from urllib.parse import urldefrag, urljoin

from ..automata import NEVER, AnyJson, Budget, Node, Ref, alt, lit
from ..errors import SchemaError, UnsupportedSchema
from ..limits import Limits
from .any_of_unions import any_of_unions
from .arrays import array_language
from .bounded_any import bounded_any
from .combination import combination_language
from .conditionals import apart, dependencies
from .context import Excluded, Loc, short_pointer
from .inference import any_type, inferred_types
from .keywords import (
    TYPES,
    UNSUPPORTED,
    has_unevaluated,
    meet,
    pure_ref,
    types_of,
)
from .layout import Layout
from .leaves import kept_leaf, leaf_key, leaf_settings
from .negation import NO_NEGATION, negate, negation
from .numbers import number_language
from .objects import object_language
from .one_of import exclusive_branches
from .policy import Policy
from .refs import Expansion, NeedsGrammar, Refs, schema_id
from .rules import ConjunctionRules, beside_ref
from .strings import string_language
from .switch import with_conditionals
from .values import LiteralCheck, canon, literal_values


class Mode(Enum):
    """What a translation builds, and so what ``$ref`` and ``{}`` become."""

    REGULAR = "regular"  # one automaton: $refs expanded inline, {} an AnyJson block (or depth-bounded)
    GRAMMAR = "grammar"  # Lark rules: every pure $ref a rule, {} the json_value rule
    PUSHDOWN = "pushdown"  # pushdown-automaton rules: every pure $ref a rule, {} an AnyJson block


class Translator:
    """One translation of a root schema (one compile): refs, memo, deadline, and the rules built."""

    def __init__(
        self, root: Any, opts: Any, limits: Limits, mode: Mode = Mode.REGULAR, policy: Policy | None = None
    ):
        self.root = root
        self.opts = opts
        self.mode = mode
        self.policy = policy if policy is not None else opts.policy
        self.draft = opts.draft
        self.layout = Layout(opts.indent)
        self.ignored: list[str] = []
        self.limits = limits
        self.deadline = limits.deadline()
        self.calls = 0
        resources = getattr(opts, "resources", None)
        said = opts.mentions if root is getattr(opts, "schema", None) else None  # skips empty walks
        self.refs = Refs(root, self.draft, resources, said)
        self.unevaluated = has_unevaluated(root, resources, mentions=said)
        self.root_base = self.refs.root_base
        self.expansion = Expansion()  # refs being expanded on the current path (met again: recursion)
        self.unfolding: set[str] = set()  # refs whose targets are being flattened into a conjunction now
        self.literals = LiteralCheck(root, self.draft, self.policy.assert_format, resources)
        self.any_json = False  # an unbounded any-value (AnyJson) was emitted: lazy DFA only
        self.rules: dict[str, Node] = {}
        self.conjunctions = ConjunctionRules(self)  # rule modes: a conjunction met again is a rule
        self.rule_names: dict[str, str] = {}
        self._canon_memo: dict[int, tuple[Any, str]] = {}
        self._memo: dict[tuple, tuple] = {}
        # each subtree `value` built, with its schema's pointer: names the part an automaton's budget error owes to
        self.parts: dict[int, tuple[Node, str]] = {}
        self.pointer = ""  # the schema entered last: where a too deep recursion stopped
        self.leaf_settings = leaf_settings(self)  # what a leaf's translation depends on (`leaves`)

    @property
    def regex_text(self) -> bool:
        """True when the tree becomes a Lark grammar, whose terminals are regex text: a format
        whose exact automaton has no text of useful size is read as its generation subset."""
        return self.mode is Mode.GRAMMAR

    @property
    def by_rules(self) -> bool:
        """True when every pure ``$ref`` becomes a named rule (grammar and pushdown modes)."""
        return self.mode is not Mode.REGULAR

    def resolve(self, ref: str, loc: Loc) -> tuple[Loc, str]:
        """The subschema ``ref`` points to and a key naming it (for cycle detection)."""
        return self.refs.resolve(ref, loc)

    def is_valid(self, value: Any, locs: list[Loc], flat: list[Loc] | None = None) -> bool:
        """True when the literal ``value`` validates against every schema in ``locs``."""
        return self.literals.is_valid(value, locs, flat)

    def tick(self) -> None:
        """Count a step; every 8th checks the deadline (a step can scan every sibling property)."""
        self.calls += 1
        if self.calls & 7 == 0 and self.deadline.remaining() < 0:
            self.deadline.check(f"translating the JSON schema (at {short_pointer(self.pointer)})")

    def budget(self) -> Budget:
        """An automaton budget on the translation's own deadline (one budget per compile)."""
        return Budget(self.limits, self.deadline)  # (a clock of its own was made and dropped)

    def unsupported(self, keyword: str, loc: Loc, why: str = "") -> None:
        """Raise `UnsupportedSchema` for ``keyword`` at ``loc``, or record it as ignored when lenient.

        On a `not`'s conjunct (``loc.excluded``) the pointer already ends at that ``not``."""
        where = loc.ptr if loc.excluded is not None else f"{loc.ptr}/{keyword}"
        msg = f"keyword {keyword!r} at {where} is not supported{': ' + why if why else ''}"
        if self.opts.lenient:
            self.ignored.append(msg)
            return
        raise UnsupportedSchema(msg + " (pass lenient=True to ignore it)", keyword, where)

    def value(self, locs: list[Loc], depth: int) -> Node:
        """The language of JSON values valid against every schema in ``locs``."""
        # A finished translation never depended on the refs being expanded around it (a cycle would
        # have raised), so the same schemas at the same depth give the same tree: share it.
        key = (tuple((id(loc.schema), loc.base, loc.excluded) for loc in locs), depth)
        hit = self._memo.get(key)
        if hit is not None and all(a.schema is b.schema for a, b in zip(hit[0], locs, strict=True)):
            return hit[1]
        if locs:
            self.pointer = locs[0].ptr
        leaf = leaf_key(locs, depth, self.leaf_settings)  # a scalar subschema: translated once per process
        node = self._value(locs, depth) if leaf is None else kept_leaf(leaf, lambda: self._value(locs, depth))
        self._memo[key] = (tuple(locs), node)
        if locs:
            self.parts.setdefault(id(node), (node, locs[0].ptr))
        return node

    def _value(self, locs: list[Loc], depth: int) -> Node:
        self.tick()
        if len(locs) > 1:
            locs = self._distinct(locs)
        if self.by_rules:
            locs = beside_ref(self, locs)
            if len(locs) == 1:
                ref = pure_ref(locs[0].schema, self.draft)
                if ref is not None:
                    target, key = self.refs.resolve(ref, locs[0])
                    return Ref(self.rule(key, target))
            return self.conjunctions.rule(locs, lambda flat: self._split(flat, locs, depth))
        mark = self.expansion.depth  # `flattened` written out: its generator context cost ~2 us a value
        try:
            return self._split(self._flat(locs), locs, depth)
        finally:
            self.expansion.truncate(mark)

    def _split(self, flat: list[Loc], locs: list[Loc], depth: int) -> Node:
        """The first ``anyOf``/``oneOf`` split into branches; finite values are never split."""
        if any(isinstance(f.schema, dict) and ("enum" in f.schema or "const" in f.schema) for f in flat):
            return self._conjunction(flat, locs, depth)  # finite values: the validator decides
        node = combination_language(self, flat, locs)  # branches over one scalar type's keywords
        if node is not None:
            return node
        for i, loc in enumerate(flat):
            s = loc.schema
            if not isinstance(s, dict):
                continue
            for kw in ("anyOf", "oneOf"):
                if kw in s:
                    return self._branch(flat, i, kw, depth)
        return self._conjunction(flat, locs, depth)

    def _distinct(self, locs: list[Loc]) -> list[Loc]:
        """``locs`` without repeats of an equal schema (A and A is A): e.g. a property matched by
        ``properties`` and a ``patternProperties`` pattern with the same subschema."""
        out: list[Loc] = []
        seen: set = set()
        for loc in locs:
            key = self._canon_memo.get(id(loc.schema))
            if key is None or key[0] is not loc.schema:
                key = self._canon_memo[id(loc.schema)] = (loc.schema, canon(loc.schema))
            k = (loc.base, key[1], None if loc.excluded is None else str(loc.excluded))
            if k not in seen:
                seen.add(k)
                out.append(loc)
        return out

    # -- flattening: $ref, allOf, exact `not`, dependencies ------------------------------------------
    @contextmanager
    def flattened(self, locs: list[Loc]) -> Iterator[list[Loc]]:
        """The conjuncts of ``locs`` (``$ref``, ``allOf`` and exactly negatable ``not`` expanded,
        dependencies as ``anyOf``); the refs expanded stay on the expansion stack inside the block."""
        mark = self.expansion.depth
        try:
            yield self._flat(locs)
        finally:
            self.expansion.truncate(mark)

    def _flat(self, locs: list[Loc]) -> list[Loc]:
        """`flattened`'s conjuncts; the refs it expands are left on the expansion stack."""
        flat: list[Loc] = []
        done: set[str] = set()  # the refs this flattening expanded: met again, already conjoined
        conds: list[tuple[int, Loc]] = []  # if/then/else, read together: several may be one switch
        for loc in locs:
            self._flatten(loc, flat, done, conds)
        return with_conditionals(self, flat, conds) if conds else flat

    def conjuncts(self, locs: list[Loc]) -> list[Loc]:
        """The conjuncts of ``locs`` (their refs off the expansion stack again)."""
        with self.flattened(locs) as flat:
            return flat

    def _flatten(self, loc: Loc, out: list[Loc], done: set, conds: list[tuple[int, Loc]]) -> None:
        self.tick()  # flattening runs per pair of oneOf branches too: quadratic in their number
        self.pointer = loc.ptr
        s = loc.schema
        if s is True:
            return
        if s is False or loc.excluded is not None:
            out.append(loc)
            return
        if isinstance(s, Excluded):
            out.append(Loc(s.positive(), loc.ptr, loc.base, s))
            return
        if not isinstance(s, dict):
            raise SchemaError(
                f"the schema at {loc.ptr or '/'} must be an object or a boolean, got {type(s).__name__}"
            )
        sid = schema_id(s, self.draft)
        if isinstance(sid, str) and not sid.startswith("#") and loc.ptr:
            loc = replace(loc, base=urldefrag(urljoin(loc.base, sid))[0])
        if "$ref" in s:
            self._expand_ref(loc, out, done, conds)
            if self.draft <= 7:
                return  # drafts 4-7: siblings of $ref are ignored
            loc = loc.without("$ref")
        if "allOf" in loc.schema:
            subs = loc.schema["allOf"]
            if not isinstance(subs, list) or not subs:
                raise SchemaError(f"allOf at {loc.ptr or '/'} must be a non-empty array")
            for i in range(len(subs)):
                self._flatten(loc.at("allOf", i), out, done, conds)
            loc = loc.without("allOf")
        if "not" in loc.schema:
            # a `not` with an exact positive form is replaced by it here, before anyOf branches are
            # split (the form may itself be an anyOf); other forms stay for `_conjunction`
            neg = negation(self, loc.schema["not"], loc.at("not"), 0)
            if neg is not NO_NEGATION:
                at = loc.ptr + "/not"
                loc = loc.without("not")
                if neg is not True:
                    self._flatten(Loc(neg, at, loc.base), out, done, conds)
        if "if" in loc.schema or "then" in loc.schema or "else" in loc.schema:
            loc, cond = apart(loc)  # read with the other conditionals when all are known: `switch`
            conds.append((len(out), cond))
        out.append(dependencies(self, loc, out))

    def _expand_ref(self, loc: Loc, out: list[Loc], done: set, conds: list[tuple[int, Loc]]) -> None:
        """The conjuncts of ``loc``'s ``$ref`` target, unfolded in place (its own refs that recur
        below a value stay rule calls in rule modes); a target this flattening expanded already is
        conjoined already (A and A is A: two allOf members sharing a base schema); one met again
        while it is being unfolded, or around this conjunction, is recursion."""
        ref = loc.schema["$ref"]
        target, key = self.refs.resolve(ref, loc)
        if key in self.unfolding:
            if self.by_rules:
                raise UnsupportedSchema(
                    f"$ref {ref!r} at {loc.ptr or '/'} is left-recursive: its target contains it "
                    "again through allOf/$ref before any member or item, so the combination never ends",
                    "$ref",
                    loc.ptr + "/$ref",
                )
            raise NeedsGrammar(f"recursive $ref {ref!r}", loc.ptr + "/$ref")
        if key in done:
            return
        if key in self.expansion and not self.by_rules:  # an enclosing value's ref: recursion
            raise NeedsGrammar(f"recursive $ref {ref!r}", loc.ptr + "/$ref")
        # (rule modes: the stack holds this conjunction's refs only, met again when a oneOf branch
        # is flattened on its own: the same value, not a recursion)
        done.add(key)
        self.expansion.push(key)  # popped when the enclosing flattening's block ends
        self.unfolding.add(key)
        # what the target evaluates is evaluated here, in place: `keywords.sees` follows the hop
        hop = (loc.base, loc.ptr, target.base, target.ptr)
        try:
            there = Loc(
                target.schema, target.ptr, target.base, target.excluded, (*loc.refs, hop), target.branches
            )
            self._flatten(there, out, done, conds)
        finally:
            self.unfolding.discard(key)

    # -- a conjunction of flat schemas (no $ref/allOf/anyOf/oneOf left) ------------------------------
    def _branch(self, flat: list[Loc], i: int, kw: str, depth: int) -> Node:
        loc = flat[i]
        branches = loc.schema[kw]
        if not isinstance(branches, list) or not branches:
            raise SchemaError(f"{kw} at {loc.ptr or '/'} must be a non-empty array")
        rest = {k: v for k, v in loc.schema.items() if k != kw}
        base = [*flat[:i], Loc(rest, loc.ptr, loc.base, refs=loc.refs), *flat[i + 1 :]]
        sets = loc.branches or (any_of_unions(flat, i) if kw == "anyOf" and self.unevaluated else None)
        if sets:  # subschemas placed elsewhere (if/then/else), or anyOf branches that pass together
            return alt(*(self.value([*base, *b], depth) for b in sets))
        nodes = [self.value([*base, loc.at(kw, j)], depth) for j in range(len(branches))]
        if kw == "oneOf" and self.opts.oneof != "anyof":
            nodes = exclusive_branches(self, base, loc, nodes, depth)
        return alt(*nodes)

    def _conjunction(self, flat: list[Loc], locs: list[Loc], depth: int) -> Node:
        if any(f.schema is False for f in flat):
            return NEVER
        schemas = [f for f in flat if isinstance(f.schema, dict)]
        if not any("enum" in f.schema or "const" in f.schema for f in schemas):
            # with finite values the validator enforces every keyword, these included
            schemas = self._unenforced(flat, schemas)
            if schemas is None:
                return NEVER
        values = literal_values(self, schemas, flat, locs, depth)
        if values is not None:
            return values
        types: set[str] | None = None
        for f in schemas:
            ts = types_of(f.schema, f)
            if ts is not None:
                types = ts if types is None else meet(types, ts)
        if types is None:
            fmt = self.policy.assert_format
            types = inferred_types(schemas, fmt) if self.policy.infer_types else any_type(schemas, fmt)
            if types is None:
                return self.any_value(depth, schemas[0] if schemas else Loc(True, "", self.root_base))
        return self._typed(types, schemas, depth)

    def _unenforced(self, flat: list[Loc], schemas: list[Loc]) -> list[Loc] | None:
        """Report the keywords no automaton enforces (``if``, dynamic refs, inexact ``not``); the
        schemas with any exact negation added (None: that made them unsatisfiable)."""
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
        if not extra:
            return schemas
        flat2 = list(flat) + self.conjuncts(extra)
        if any(f.schema is False for f in flat2):
            return None
        return [f for f in flat2 if isinstance(f.schema, dict)]

    def _typed(self, types: set[str], schemas: list[Loc], depth: int) -> Node:
        """The union over ``types`` of each type's language under ``schemas``."""
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
        if self.mode is Mode.GRAMMAR and limit is None:
            return Ref("json_value")
        if limit is None:
            self.any_json = True
            return AnyJson(self.layout.indent, depth, self.opts.max_string_length)
        return bounded_any(self.layout, depth, limit, self.opts.max_string_length)
