"""``$id``/``$anchor`` indexing and ``$ref`` resolution: within one schema document, in the documents
given as ``resources`` (by the URI a ``$ref`` names them with), and in the official metaschemas
(``jsonschema_specifications``, installed with ``jsonschema``). Nothing is fetched over the network: a
server compiling a user's schema must not be made to open URLs, and a fetch could hang a compile.

>>> refs = Refs({"$defs": {"a": {"type": "string"}}}, 2020)
>>> refs.resolve("#/$defs/a", Loc({}, "", refs.root_base))[0].schema
{'type': 'string'}
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any
from urllib.parse import unquote, urldefrag, urljoin

from ..errors import SchemaError, UnsupportedSchema
from .context import Loc

ROOT_URI = "urn:fsm-json-schema:root"


class NeedsGrammar(Exception):
    """Internal: the schema needs a grammar (recursive ``$ref`` or an unbounded any-JSON value)."""

    def __init__(self, reason: str, pointer: str):
        super().__init__(f"{reason} at {pointer or '/'}")
        self.reason = reason
        self.pointer = pointer


DRAFTS = (3, 4, 6, 7, 2019, 2020)


def draft_of(schema: Any) -> int:
    """The draft ``$schema`` names (3, 4, 6, 7, 2019, 2020), 2020 when it names none."""
    uri = schema.get("$schema", "") if isinstance(schema, dict) else ""
    if not isinstance(uri, str):
        return 2020
    for tag, d in (("draft-03", 3), ("draft-04", 4), ("draft-06", 6), ("draft-07", 7), ("2019-09", 2019)):
        if tag in uri:
            return d
    return 2020


def schema_id(s: dict, draft: int) -> Any:
    """The identifier of ``s`` in ``draft`` (``id`` up to draft 4, ``$id`` after), None when it has none;
    in drafts up to 7 a ``$ref`` makes its siblings be ignored, an identifier included.

    >>> schema_id({"$id": "http://x/", "$ref": "#/a"}, 7) is None, schema_id({"$id": "http://x/"}, 7)
    (True, 'http://x/')
    >>> schema_id({"id": "http://x/"}, 4), schema_id({"id": "http://x/"}, 2020)
    ('http://x/', None)
    """
    if draft <= 7 and "$ref" in s:
        return None
    return s.get("id") if draft <= 4 else s.get("$id")


def _ptr_unescape(part: str) -> str:
    return unquote(part).replace("~1", "/").replace("~0", "~")


# keywords whose value is a schema or a list of schemas, and those whose value maps names to schemas
SCHEMA_HOLDERS = frozenset(
    [
        "not",
        "if",
        "then",
        "else",
        "items",
        "prefixItems",
        "additionalItems",
        "additionalProperties",
        "contains",
        "propertyNames",
        "unevaluatedItems",
        "unevaluatedProperties",
        "contentSchema",
        "allOf",
        "anyOf",
        "oneOf",
    ]
)
# what `Refs._index` reads: a schema's identifier (``id`` up to draft 4) and its anchors
_NAMING = ("$id", "id", "$anchor", "$dynamicAnchor", "$recursiveAnchor")
SCHEMA_MAPS = frozenset(
    ["properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies"]
)


class Refs:
    """The resources (``$id``) and anchors of a root schema, and ``$ref`` resolution against them."""

    def __init__(
        self,
        root: Any,
        draft: int,
        remote: Mapping[str, Any] | None = None,
        mentions: Callable[..., bool] | None = None,
    ):
        """``remote``: documents by retrieval URI (checked by `JsonSchema`), indexed on first use;
        ``mentions``: whether ``root``'s text names any of some keywords (`JsonSchema.mentions`):
        without an identifier or anchor named, its walk is skipped (it would index nothing)."""
        self.draft = draft
        self.resources: dict[str, Any] = {}
        self._remote = {urldefrag(uri)[0]: doc for uri, doc in (remote or {}).items()}
        self.anchors: dict[str, tuple[Any, str, str]] = {}
        self.dynamic: dict[str, set[str]] = {}  # resource base URI -> names of its $dynamicAnchors
        root_base = ROOT_URI
        if isinstance(root, dict):
            rid = schema_id(root, draft)
            if isinstance(rid, str) and not rid.startswith("#"):
                root_base = urljoin(ROOT_URI, rid) if ":" not in rid else rid
                root_base = urldefrag(root_base)[0]
        self.root_base = root_base
        # by URI: (schema, pointer, the base its Loc gets, the base inside it). A Loc's base is the
        # one its schema's own $id resolves against (the translator applies that $id on entry, except
        # at a document's root, whose $id is in its base already).
        self.resources[root_base] = (root, "", root_base, root_base)
        self.resources[ROOT_URI] = (root, "", root_base, root_base)
        if mentions is None or mentions(*_NAMING):
            self._index(root, "", root_base)

    def _index(self, s: Any, ptr: str, base: str) -> None:
        if isinstance(s, list):
            for i, x in enumerate(s):
                self._index(x, f"{ptr}/{i}", base)
            return
        if not isinstance(s, dict):
            return
        sid = schema_id(s, self.draft)
        if isinstance(sid, str):
            if sid.startswith("#") and self.draft <= 7:
                self.anchors[urljoin(base, sid)] = (s, ptr, base)
            else:
                outer, base = base, urldefrag(urljoin(base, sid))[0]
                self.resources.setdefault(base, (s, ptr, outer if ptr else base, base))
        for key in ("$anchor", "$dynamicAnchor") if self.draft >= 2019 else ():
            a = s.get(key)
            if isinstance(a, str):
                self.anchors.setdefault(base + "#" + a, (s, ptr, base))
                if key == "$dynamicAnchor":
                    self.dynamic.setdefault(base, set()).add(a)
        if self.draft == 2019 and s.get("$recursiveAnchor") is True:
            self.dynamic.setdefault(base, set()).add("")  # 2019-09's one nameless dynamic anchor
        for k, v in s.items():
            # only where a keyword holds schemas: an $id inside an unknown keyword (or a value) is
            # not an identifier, and must not take the name of the real one
            if k in SCHEMA_MAPS and isinstance(v, dict):
                esc = k.replace("~", "~0").replace("/", "~1")
                for name, sub in v.items():
                    self._index(sub, f"{ptr}/{esc}/{name.replace('~', '~0').replace('/', '~1')}", base)
            elif k in SCHEMA_HOLDERS and isinstance(v, (dict, list)):
                self._index(v, f"{ptr}/{k.replace('~', '~0').replace('/', '~1')}", base)

    def resolve(self, ref: str, loc: Loc) -> tuple[Loc, str]:
        """The subschema ``ref`` points to and a key naming it (for cycle detection)."""
        if not isinstance(ref, str):
            raise SchemaError(f"$ref at {loc.ptr or '/'} must be a string")
        full = urljoin(loc.base, ref) if not ref.startswith("#") else loc.base + ref
        url, frag = urldefrag(full)
        if full in self.anchors and not frag.startswith("/"):
            s, ptr, base = self.anchors[full]
            return Loc(s, ptr, base), full
        doc = self.resources.get(url) or self._load(url, ref, loc)
        schema, ptr, base, inner = doc
        named = inner + "#" + frag  # an anchor is the resource's: under the URI its own $id gives it
        if frag and not frag.startswith("/") and named in self.anchors:
            s, ptr, base = self.anchors[named]
            return Loc(s, ptr, base), named
        if frag and not frag.startswith("/"):
            raise SchemaError(f"$ref {ref!r} at {loc.ptr or '/'}: no $anchor {frag!r} in this schema")
        if not frag:
            return Loc(schema, ptr, base), url + "#"
        node, base = schema, inner
        for part in frag.split("/")[1:]:
            if node is not schema and isinstance(node, dict):  # a resource passed on the way
                sid = schema_id(node, self.draft)
                if isinstance(sid, str) and not sid.startswith("#"):
                    base = urldefrag(urljoin(base, sid))[0]
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
        return Loc(node, ptr, base), url + "#" + frag

    def _load(self, url: str, ref: str, loc: Loc) -> tuple[Any, str, str, str]:
        """The document at ``url`` (a given resource or an official metaschema), indexed now."""
        doc = self._remote.get(url)
        if doc is None:
            doc = metaschema(url)
        if doc is None:
            raise UnsupportedSchema(
                f"$ref {ref!r} at {loc.ptr or '/'} points outside this schema to {url!r}, which is "
                "not among the resources given (JsonSchema(..., resources={uri: schema}); nothing is fetched)",
                "$ref",
                loc.ptr,
            )
        draft = draft_of(doc) if isinstance(doc, dict) and "$schema" in doc else self.draft
        if draft != self.draft:
            raise UnsupportedSchema(
                f"$ref {ref!r} at {loc.ptr or '/'} points to {url!r}, a draft {draft} document, from a "
                f"draft {self.draft} schema: a document is read in one draft only",
                "$ref",
                loc.ptr,
            )
        sid = schema_id(doc, self.draft) if isinstance(doc, dict) else None
        # a root $id names the document for its own refs, relative to where it was retrieved from
        base = urldefrag(urljoin(url, sid))[0] if isinstance(sid, str) and not sid.startswith("#") else url
        self.resources[url] = (doc, "", base, base)
        self._index(doc, "", url)
        return self.resources[url]


def metaschema(uri: str) -> Any:
    """The official metaschema (or vocabulary schema) at ``uri``, None if ``uri`` names none.

    >>> metaschema("http://json-schema.org/draft-07/schema#")["title"]
    'Core schema meta-schema'
    """
    try:
        import jsonschema_specifications  # a dependency of jsonschema: the metaschemas, offline
    except ImportError:  # pragma: no cover - installed with jsonschema
        return None
    try:
        return jsonschema_specifications.REGISTRY[urldefrag(uri)[0]].contents
    except LookupError:
        return None


def registry(resources: dict, draft: int) -> Any:
    """``resources`` as the ``referencing`` registry ``jsonschema`` resolves remote refs with; a
    document without ``$schema`` is read in ``draft``.

    >>> registry({"urn:x": {"type": "integer"}}, 2020)["urn:x"].contents
    {'type': 'integer'}
    """
    import referencing
    import referencing.jsonschema as rj

    spec = {3: rj.DRAFT3, 4: rj.DRAFT4, 6: rj.DRAFT6, 7: rj.DRAFT7, 2019: rj.DRAFT201909}.get(
        draft, rj.DRAFT202012
    )
    return referencing.Registry().with_resources(
        (uri, referencing.Resource.from_contents(doc, default_specification=spec))
        for uri, doc in resources.items()
    )


class Expansion:
    """The ``$ref`` targets being expanded on the current path: one met again inside its own
    expansion is recursion.

    >>> stack = Expansion()
    >>> with stack.expanding("urn:x#/a"):
    ...     "urn:x#/a" in stack
    True
    >>> "urn:x#/a" in stack
    False
    """

    def __init__(self) -> None:
        self._keys: list[str] = []

    def __contains__(self, key: str) -> bool:
        return key in self._keys

    @contextmanager
    def expanding(self, key: str) -> Iterator[None]:
        """``key`` on the stack for the duration of the block."""
        self._keys.append(key)
        try:
            yield
        finally:
            self._keys.pop()

    @property
    def depth(self) -> int:
        """How many keys the stack holds (for `truncate`)."""
        return len(self._keys)

    def push(self, key: str) -> None:
        """``key`` on the stack until the stack is truncated below it.

        >>> stack = Expansion(); mark = stack.depth; stack.push("urn:x#/a"); "urn:x#/a" in stack
        True
        >>> stack.truncate(mark); "urn:x#/a" in stack
        False
        """
        self._keys.append(key)

    def truncate(self, depth: int) -> None:
        """Drop the keys pushed since the stack held ``depth``."""
        del self._keys[depth:]


VALUE_KEYWORDS = frozenset(("enum", "const", "default", "examples"))  # values, not schemas: never rewritten


def static_dynamic_refs(schema: Any) -> Any:
    """``schema`` with each ``$dynamicRef`` that resolves as a ``$ref`` would written as one.

    A ``$dynamicRef`` looks for the outermost schema in the dynamic scope with the same-named
    ``$dynamicAnchor`` only when its static target has one: with at most one ``$dynamicAnchor`` of
    that name in the whole document (and a plain-name fragment), the outermost is the static target,
    so the reference is static (draft 2020-12, section 8.2.3.2). Others stay, and stay unsupported.

    >>> s = {"$dynamicAnchor": "n", "items": {"$dynamicRef": "#n"}}
    >>> static_dynamic_refs(s)["items"]
    {'$ref': '#n'}
    """
    counts: dict[str, int] = {}
    refs = [0]  # $dynamicRefs met: none, and the schema is returned as it is (not copied)

    def count(x: Any) -> None:
        if isinstance(x, dict):
            name = x.get("$dynamicAnchor")
            if isinstance(name, str):
                counts[name] = counts.get(name, 0) + 1
            if "$dynamicRef" in x:
                refs[0] += 1
            for k, v in x.items():
                if k not in VALUE_KEYWORDS:
                    count(v)
        elif isinstance(x, list):
            for v in x:
                count(v)

    def rewrite(x: Any) -> Any:
        if isinstance(x, list):
            return [rewrite(v) for v in x]
        if not isinstance(x, dict):
            return x
        out = {k: (v if k in VALUE_KEYWORDS else rewrite(v)) for k, v in x.items()}
        ref = out.get("$dynamicRef")
        if isinstance(ref, str) and "$ref" not in out and "#" in ref:
            name = ref.split("#", 1)[1]
            if name and not name.startswith("/") and counts.get(name, 0) <= 1:
                out = {("$ref" if k == "$dynamicRef" else k): v for k, v in out.items()}
        return out

    count(schema)
    return rewrite(schema) if refs[0] else schema
