"""JSON Schema (drafts 4 to 2020-12) and pydantic models as a constraint.

`JsonSchema` translates a schema into a `json_ast` tree — properties in declared order, optional ones
omittable, required ones always present — and compiles that tree to a byte DFA (`json_automaton`) for
the token index. Every document the automaton accepts validates against the schema; where a keyword
cannot be enforced exactly it is never silently dropped: `UnsupportedSchema` names it and its JSON
pointer (or, with ``lenient=True``, it is ignored and listed in `JsonSchema.ignored` with a warning).

Two policies (a `Policy` value fixed at construction; see docs/json-schema.md): the generation policy
(default) below, and ``exact=True``: exactly the instances that validate (no type inferred, extra
properties allowed unless excluded, integers also as ``1.0``, ``enum``/``const`` by JSON equality,
``format`` an annotation; ``assert_format=True`` asserts it as its RFC grammar) except layout and
property order. ``assert_format`` overrides either policy's choice. The generation policy falls back to
extras allowed and no inferred type when it alone would leave a satisfiable schema nothing to generate.
``draft=`` names the draft when ``$schema`` does not (default 2020-12). ``resources`` maps URIs to
the schema documents a ``$ref`` may name outside this one (nothing is fetched; the official
metaschemas are known without it).

The generation policy:

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

import contextlib
import hashlib
import json
import warnings
from collections.abc import Mapping
from dataclasses import replace
from functools import cached_property
from typing import Any
from urllib.parse import urldefrag

from ..automata import NEVER, Node, Ref, node_to_dfa, to_regex
from ..errors import SchemaError, SchemaTooComplex, SpecError, SpecTooComplex, UnsupportedSchema
from ..limits import DEFAULT_LIMITS, Limits
from ..vocabulary import Vocabulary
from .context import Loc, short_pointer
from .dynamic_scope import has_dynamic_refs, static_scope
from .lark_writer import to_lark
from .policy import EXACT, generation
from .refs import DRAFTS, NeedsGrammar, draft_of, static_dynamic_refs
from .strategy import compile_index
from .strings import check_pattern_texts
from .translator import Mode, Translator


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
        except Exception as exc:  # deliberately broad: pydantic raises many kinds; all mean "no schema"
            raise SchemaError(
                f"pydantic could not produce a JSON schema for {schema.__name__}: {exc}"
            ) from None
    raise SchemaError(
        f"JsonSchema takes a dict, a JSON string, a bool or a pydantic model class, got {type(schema).__name__}"
    )


def _resources(resources: Any) -> dict[str, Any]:
    """``resources`` checked: absolute URIs (a fragment dropped) to schemas (dicts or bools).

    >>> _resources({"http://x.test/a.json#": {"type": "integer"}})
    {'http://x.test/a.json': {'type': 'integer'}}
    """
    if resources is None:
        return {}
    if not isinstance(resources, Mapping):
        raise SchemaError(f"resources must map URIs to schemas, got {type(resources).__name__}")
    out = {}
    for uri, doc in resources.items():
        if not isinstance(uri, str) or ":" not in uri:
            raise SchemaError(f"resources: {uri!r} is not an absolute URI (a $ref names a document by one)")
        if not isinstance(doc, (dict, bool)):
            raise SchemaError(
                f"resources[{uri!r}] must be a schema (a dict or a bool), got {type(doc).__name__}"
            )
        out[urldefrag(uri)[0]] = doc
    return out


def _custom_metaschema(schema: Any) -> bool:
    """Whether the root's ``$schema`` names a metaschema other than the official drafts'."""
    uri = schema.get("$schema") if isinstance(schema, dict) else None
    return isinstance(uri, str) and not uri.rstrip("#").startswith(
        ("http://json-schema.org/", "https://json-schema.org/")
    )


class JsonSchema:
    """A JSON Schema (dict, JSON text, bool, or pydantic model class) as a generation constraint.

    >>> JsonSchema({"enum": ["red", "green"]}).to_regex()
    '"green"|"red"'
    >>> JsonSchema({"type": "integer", "maximum": 3, "minimum": 1}).to_regex()
    '[1-3]'
    >>> import re  # exact mode: every JSON spelling of those numbers
    >>> bool(re.fullmatch(JsonSchema({"type": "integer", "maximum": 3, "minimum": 1}, exact=True).to_regex(), "2.0e0"))
    True
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
        draft: int | None = None,
        exact: bool = False,
        assert_format: bool | None = None,
        resources: Mapping[str, Any] | None = None,
    ):
        self.schema = _load(schema)
        self.resources = _resources(resources)
        if draft is not None and draft not in DRAFTS:
            raise SchemaError(f"draft must be one of {', '.join(map(str, DRAFTS))}, got {draft!r}")
        # the draft decides which keywords exist and how $ref treats its siblings
        self.draft = draft if draft is not None else draft_of(self.schema)
        self._text: str | None = None  # the schema's canonical JSON (`mentions`, `fingerprint`)
        with contextlib.suppress(RecursionError):  # too deep: left as written (translation says so)
            # a schema whose text names no dynamic reference has none to rewrite (two walks saved)
            if self.draft >= 2019 and (self.resources or self.mentions("$dynamicRef", "$recursiveRef")):
                if self.draft >= 2020:
                    self.schema = static_dynamic_refs(self.schema)
                if has_dynamic_refs(self.schema) or any(map(has_dynamic_refs, self.resources.values())):
                    self.schema = static_scope(self.schema, self.draft, self.resources)
                self._text = None  # the schema may be a rewritten one
        if whitespace == "compact":
            self.indent = None
        elif whitespace == "pretty":
            self.indent = 2
        elif isinstance(whitespace, int) and not isinstance(whitespace, bool) and 0 <= whitespace <= 16:
            self.indent = whitespace
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
        self.exact = bool(exact)
        self.policy = EXACT if self.exact else generation(self.allow_additional_properties)
        if assert_format is None and self.exact and _custom_metaschema(self.schema):
            # its vocabularies are not read, and one may turn format-assertion on: the stricter reading
            assert_format = True
        if assert_format is not None:  # else the policy's: asserted for generation, annotated when exact
            self.policy = replace(self.policy, assert_format=bool(assert_format))
        self.policy_used = self.policy  # the fallback policy when this one leaves nothing to generate
        self.lenient = bool(lenient)
        self.max_string_length = max_string_length
        self.oneof = oneof
        self.any_value_depth = any_value_depth
        self.ignored: list[str] = []
        self._result: tuple[Node | None, NeedsGrammar | None] | None = None
        self.parts: dict[int, tuple[Node, str]] = {}  # subtrees of the tree and their schemas' pointers
        self.any_json = False

    @cached_property
    def fingerprint(self) -> str:
        """sha256 over the canonical schema and every option."""
        try:
            return self._fingerprint()
        except RecursionError:
            depth, where = _deepest(self.schema)
            raise SchemaTooComplex(
                f"the schema nests {depth:,} levels deep (down to {short_pointer(where)}), deeper than Python's "
                "recursion limit lets it be read; flatten it (a $ref to a definition per level)",
                budget="recursion",
                pointer=where,
            ) from None

    def _schema_text(self) -> str:
        """The schema as canonical JSON text (keys sorted), made once: the fingerprint's first part."""
        if self._text is None:
            self._text = json.dumps(
                self.schema, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
            )
        return self._text

    def mentions(self, *keys: str) -> bool:
        """Whether some key or string of the schema (its resources aside) is one of ``keys``: a
        search of the JSON text the fingerprint needs anyway, so that a walk of the whole schema
        looking for a rare keyword is skipped where the text says it is absent. True when the text
        cannot be made (the walk will tell).

        >>> s = JsonSchema({"properties": {"a": {"pattern": "x"}}})
        >>> s.mentions("pattern"), s.mentions("$ref", "unevaluatedItems")
        (True, False)
        """
        try:
            text = self._schema_text()
        except (TypeError, ValueError, RecursionError):
            return True
        return any(f'"{k}"' in text for k in keys)

    def _fingerprint(self) -> str:
        # the list's text is "[", the schema's text, "," and the rest's list text without its "["
        rest = json.dumps(
            [
                self.indent,
                self.allow_additional_properties,
                self.lenient,
                self.max_string_length,
                self.oneof,
                self.any_value_depth,
                self.draft,
                self.exact,
                self.policy.assert_format,
                self.resources,
            ],
            sort_keys=True,
            separators=(",", ":"),
            ensure_ascii=False,
            default=str,
        )
        payload = "[" + self._schema_text() + "," + rest[1:]
        return "json:" + hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()[:32]

    def translation(self, limits: Limits | None = None) -> tuple[Node | None, NeedsGrammar | None]:
        """The translated tree, or why the schema needs rules (recursion); translated once."""
        if self._result is None:
            if self.mentions("pattern", "patternProperties"):
                check_pattern_texts(self.schema, limits or DEFAULT_LIMITS)
            try:
                t = Translator(self.schema, self, limits or DEFAULT_LIMITS, policy=self.policy)
            except RecursionError:  # indexing the $ids and anchors of a very deep schema
                raise self._too_deep(None) from None
            try:
                node = t.value([Loc(self.schema, "", t.root_base)], 0)
                if node == NEVER and not self.policy.exact:
                    t = self._fallback(limits) or t
                    node = t.value([Loc(self.schema, "", t.root_base)], 0)
                self._result = (node, None)
                self.any_json = t.any_json
                self.parts = t.parts
            except NeedsGrammar as ng:
                self._result = (None, ng)
            except SpecTooComplex as exc:
                raise _located(exc, t) from None
            except RecursionError:
                raise self._too_deep(t) from None
            self.ignored = t.ignored
            if t.ignored:
                warnings.warn("JsonSchema(lenient=True) ignored: " + "; ".join(t.ignored), stacklevel=3)
        return self._result

    def _fallback(self, limits: Limits | None) -> Translator | None:
        """A translator under the fallback policy when that one generates something, else None: the
        generation policy must not make a satisfiable schema unsatisfiable."""
        policy = self.policy.fallback()
        t = Translator(self.schema, self, limits or DEFAULT_LIMITS, policy=policy)
        try:
            if t.value([Loc(self.schema, "", t.root_base)], 0) == NEVER:
                return None
        except SpecError:
            return None  # the schema's own error is the one to report, from the first translation
        self.policy_used = policy
        return t

    @property
    def is_recursive(self) -> bool:
        """True when the documents are not a regular language: a recursive ``$ref`` (the grammar engine
        runs it) or an unbounded any-JSON value (a pushdown block of the lazy DFA runs it)."""
        return self.translation()[1] is not None or self.any_json

    def node(self) -> Node:
        """The translated `json_ast` tree (regular schemas only)."""
        node = self.tree()
        if self.any_json:
            raise UnsupportedSchema(
                "this schema is not regular (an unconstrained JSON value, {} or true, nests without bound); "
                "compile it (fsm.compile) or pass any_value_depth for a regular, depth-bounded value",
                None,
                "",
            )
        return node

    def tree(self) -> Node:
        """The translated tree, `AnyJson` blocks included (non-recursive schemas)."""
        node, ng = self.translation()
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
        self.translation(limits)
        return node_to_dfa(self.node(), limits)

    def build_index(self, vocab: Vocabulary, limits: Limits | None = None) -> Any:
        """The token index over ``vocab``: a lazy DFA, a pushdown automaton or a grammar (`compile_index`)."""
        return compile_index(self, vocab, limits)

    def to_grammar(self, limits: Limits | None = None) -> str:
        """Lark grammar text (compact JSON, no ``%ignore``): for recursive schemas and ``{}`` values.

        Every ``$ref`` becomes a rule, unconstrained values the ``json_value`` rule; terminals are
        JSON lexemes (punctuation, ``"key":``, one scalar value).

        >>> print(JsonSchema({"type": "array", "items": {"$ref": "#"}, "maxItems": 2}).to_grammar(), end="")
        start: d0
        d0: ("[" "]" | "[" d0 [("," d0)] "]")
        """
        root, rules = self.rules(limits, pushdown=False)
        return to_lark(root, rules, self.max_string_length, limits or DEFAULT_LIMITS)

    def rules(self, limits: Limits | None, pushdown: bool) -> tuple[Node, dict[str, Node]]:
        """The root and one rule per ``$ref`` target (recursion refers back by name)."""
        if self.indent is not None:
            raise UnsupportedSchema("recursive schemas support whitespace='compact' only", "whitespace", "")
        mode = Mode.PUSHDOWN if pushdown else Mode.GRAMMAR
        t = None
        try:
            t = Translator(self.schema, self, limits or DEFAULT_LIMITS, mode, self.policy_used)
            # the root as a rule, so "#" references share it
            root = Ref(t.rule(t.root_base + "#", Loc(self.schema, "", t.root_base)))
        except SpecTooComplex as exc:
            raise _located(exc, t) from None
        except RecursionError:
            raise self._too_deep(t) from None
        return root, t.rules

    def _too_deep(self, t: Translator | None) -> SchemaTooComplex:
        """The error for a schema whose translation ran into Python's recursion limit, naming where
        it stopped (the schema's deepest value when the translation had not started)."""
        where = t.pointer if t is not None and t.calls else _deepest(self.schema)[1]
        return SchemaTooComplex(
            f"the schema is nested too deeply to translate: Python's recursion limit stopped it at "
            f"{short_pointer(where)} (deep nesting, or a long chain of $refs)",
            budget="recursion",
            pointer=where,
        )

    def __repr__(self) -> str:
        text = json.dumps(self.schema, ensure_ascii=False)
        return f"JsonSchema({text[:60]}{'...' if len(text) > 60 else ''})"


def _located(exc: SpecTooComplex, t: Translator | None) -> SchemaTooComplex:
    """``exc`` as a `SchemaTooComplex` naming a pointer: its own, else the schema the translation
    was at when the budget ran out."""
    if getattr(exc, "pointer", None) is not None or t is None:
        return exc if isinstance(exc, SchemaTooComplex) else SchemaTooComplex(str(exc), exc.budget, exc.limit)
    return SchemaTooComplex(str(exc), exc.budget, exc.limit, pointer=t.pointer)


def _deepest(schema: Any) -> tuple[int, str]:
    """The nesting depth of ``schema`` (objects and arrays) and the pointer of its deepest value,
    found without recursion (for a schema too deep to serialize).

    >>> _deepest({"items": {"items": [1]}})
    (3, '/items/items')
    """
    best = (0, "")
    stack = [(schema, 0, "")]
    while stack:
        v, d, ptr = stack.pop()
        if isinstance(v, dict):
            kids = [(x, str(k)) for k, x in v.items()]
        elif isinstance(v, list):
            kids = [(x, str(i)) for i, x in enumerate(v)]
        else:
            continue
        if d + 1 > best[0]:
            best = (d + 1, ptr)
        for x, k in kids:
            stack.append((x, d + 1, ptr + "/" + k.replace("~", "~0").replace("/", "~1")))
    return best
