"""``$dynamicRef`` (and draft 2019-09's ``$recursiveRef``) by its dynamic scope: a schema whose references depend on the path that reached
them, rewritten as one whose references are all static and local.

A ``$dynamicRef`` whose static target is a ``$dynamicAnchor`` resolves to the *outermost* resource of
the dynamic scope — the schema resources entered on the way from the root — that has a same-named
``$dynamicAnchor`` (draft 2020-12, section 8.2.3.2). Outermost wins, so what every reference below a
point means is fixed by a context: each anchor name bound to the first resource on the path that
defines it. The rewrite copies each subschema a reference reaches once per context it is reached in
(memoized, so a recursion reaches the same copy again and stays a recursion for the pushdown), with
each copy's references pointing at copies, into ``$defs`` of one document. The translator then needs
no notion of scope: carrying the scope through every keyword would cost every schema, this costs only
the schemas that use ``$dynamicRef`` (and the copies, at most `MAX_COPIES`).

>>> tree = {"$dynamicAnchor": "node", "type": "array", "items": {"$dynamicRef": "#node"}}
>>> ints = {"$id": "urn:ints", "$dynamicAnchor": "node", "$ref": "urn:tree",
...         "items": {"anyOf": [{"type": "integer"}, {"$dynamicRef": "#node"}]}}
>>> s = static_scope(ints, 2020, {"urn:tree": tree})
>>> sorted(s["$defs"]), s["$ref"]
(['dyn0', 'dyn1'], '#/$defs/dyn0')
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urldefrag, urljoin

from ..errors import SchemaTooComplex
from .context import Loc
from .refs import SCHEMA_HOLDERS, SCHEMA_MAPS, VALUE_KEYWORDS, Refs, schema_id

MAX_COPIES = 2000  # subschema copies (target, context) one rewrite may make
_DROPPED = frozenset(
    ("$id", "$anchor", "$dynamicAnchor", "$recursiveAnchor", "$defs", "definitions", "$schema")
)
_DYNAMIC = ("$dynamicRef", "$recursiveRef")

Context = tuple[tuple[str, str], ...]  # (anchor name, URI of the outermost resource defining it), sorted


def has_dynamic_refs(schema: Any) -> bool:
    """Whether ``schema`` holds a ``$dynamicRef`` (outside values such as ``enum``).

    >>> has_dynamic_refs({"items": {"$dynamicRef": "#a"}}), has_dynamic_refs({"const": {"$dynamicRef": 1}})
    (True, False)
    """
    if isinstance(schema, list):
        return any(has_dynamic_refs(x) for x in schema)
    if not isinstance(schema, dict):
        return False
    return any(k in schema for k in _DYNAMIC) or any(
        has_dynamic_refs(v) for k, v in schema.items() if k not in VALUE_KEYWORDS
    )


def static_scope(schema: Any, draft: int, resources: Mapping[str, Any] | None = None) -> Any:
    """``schema`` (and the ``resources`` it reaches) as one document with static local references
    only: every ``$ref``/``$dynamicRef`` target a copy in ``$defs`` for the context it is reached in.
    Raises what `Refs.resolve` raises for a reference that does not resolve, and `SchemaTooComplex`
    past `MAX_COPIES`."""
    return _Rewrite(Refs(schema, draft, resources), draft).document(schema)


class _Rewrite:
    def __init__(self, refs: Refs, draft: int):
        self.refs = refs
        self.draft = draft
        self.defs: dict[str, Any] = {}
        self.names: dict[tuple[str, Context], str] = {}

    def document(self, schema: Any) -> Any:
        out = self.copy(Loc(schema, "", self.refs.root_base), ())
        if not isinstance(out, dict):
            return out
        if isinstance(schema, dict) and "$schema" in schema:
            out["$schema"] = schema["$schema"]
        out["$defs"] = self.defs
        return out

    def bind(self, ctx: Context, base: str) -> Context:
        """``ctx`` after entering resource ``base``: its dynamic anchors bound unless bound already."""
        names = self.refs.dynamic.get(base)
        if not names:
            return ctx
        have = dict(ctx)
        for name in names:
            have.setdefault(name, base)
        return tuple(sorted(have.items()))

    def copy(self, loc: Loc, ctx: Context) -> Any:
        s = loc.schema
        if not isinstance(s, dict):
            return s
        base = loc.base
        sid = schema_id(s, self.draft)
        if loc.ptr and isinstance(sid, str) and not sid.startswith("#"):
            base = urldefrag(urljoin(base, sid))[0]  # an embedded resource: entered here
        ctx = self.bind(ctx, base)
        here = Loc(s, loc.ptr, base)
        out: dict[str, Any] = {}
        targets = []
        for k, v in s.items():
            if k in _DROPPED:
                continue
            if k in ("$ref", *_DYNAMIC) and isinstance(v, str):
                targets.append("#/$defs/" + self.reference(k, v, here, ctx))
            elif k in SCHEMA_MAPS and isinstance(v, dict):
                out[k] = {
                    n: self.copy(here.at(k, n), ctx) if isinstance(x, (dict, bool)) else x
                    for n, x in v.items()
                }
            elif k in SCHEMA_HOLDERS and isinstance(v, list):
                out[k] = [self.copy(here.at(k, i), ctx) for i in range(len(v))]
            elif k in SCHEMA_HOLDERS and isinstance(v, (dict, bool)):
                out[k] = self.copy(here.at(k), ctx)
            else:
                out[k] = v
        if len(targets) == 1:
            out["$ref"] = targets[0]
        elif targets:  # $ref and $dynamicRef side by side: both apply
            out["allOf"] = [*out.get("allOf", []), *({"$ref": t} for t in targets)]
        return out

    def reference(self, kind: str, ref: str, here: Loc, ctx: Context) -> str:
        """The ``$defs`` name of the copy ``ref`` reaches from ``here`` in context ``ctx``."""
        target, key = self.refs.resolve(ref, here)
        frag = ref.split("#", 1)[1] if "#" in ref else ""
        anchor = target.schema.get("$dynamicAnchor") if isinstance(target.schema, dict) else None
        if kind == "$recursiveRef":  # 2019-09: a nameless anchor, $recursiveAnchor at a resource root
            frag, anchor = (
                "",
                ""
                if isinstance(target.schema, dict) and target.schema.get("$recursiveAnchor") is True
                else None,
            )
        if kind != "$ref" and not frag.startswith("/") and anchor == frag:
            outer = dict(ctx).get(frag)  # the outermost resource in scope with that dynamic anchor
            if outer is not None:
                target, key = self.refs.resolve(outer + "#" + frag, here)
        name = self.names.get((key, ctx))
        if name is None:
            if len(self.names) >= MAX_COPIES:
                raise SchemaTooComplex(
                    f"$dynamicRef: the schema's references need over {MAX_COPIES:,} copies of their targets, "
                    "one per dynamic scope they are reached in",
                    budget="dynamic_scope",
                    limit=MAX_COPIES,
                    pointer=here.ptr,
                )
            name = self.names[(key, ctx)] = f"dyn{len(self.names)}"
            self.defs[name] = True  # reserved: a recursion reaches this name before the copy is done
            self.defs[name] = self.copy(target, ctx)
        return name
