"""Scalar subschemas translated once per process, whatever schema or property they are met in.

Most values of a schema are leaves — ``{"type": "string"}``, ``{"type": ["string", "null"],
"maxLength": 1024}``, ``{"type": "integer", "minimum": 0}`` — written again at every property and in
every schema a server is sent (806 leaves of 64 kinds in 42 JSONSchemaBench schemas: a quarter of
their translation time, an integer's number language alone tens of microseconds). A leaf's language
depends on its assertion keywords and the translation's settings only, never on where it sits: no
``$ref`` to resolve, no subschema, no annotation read. Keyed by those, it is translated once.

What a leaf is, strictly: one subschema (no exclusion from a ``not``) whose keywords are scalar
assertions (`STRING_KW`, `NUMBER_KW`, ``type``, ``nullable``, ``enum``, ``const``, ``format``) and
annotations, with ``enum``/``const`` or a ``type`` of scalar types only (an object or an unconstrained
value could hold any JSON value, which the translation records on the translator). Lenient
translations are not kept (what they ignore is recorded with its pointer); a translation that raises
is not kept either.

>>> from fsm.json.schema import JsonSchema
>>> from fsm.json.context import Loc
>>> from fsm.json.translator import Translator
>>> from fsm.limits import DEFAULT_LIMITS
>>> on = leaf_settings(Translator({}, JsonSchema({}), DEFAULT_LIMITS))
>>> key = leaf_key([Loc({"type": "integer", "description": "a count"}, "/properties/n", "")], 1, on)
>>> key == leaf_key([Loc({"type": "integer"}, "/items", "")], 1, on), leaf_key([Loc({"type": "object"}, "", "")], 1, on)
(True, None)
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from ..automata import Node
from .context import Context, Loc
from .keywords import ANNOTATIONS, NUMBER_KW, STRING_KW

_ASSERTIONS = frozenset(STRING_KW | NUMBER_KW | {"type", "nullable", "enum", "const", "format"})
_SKIPPED = frozenset(ANNOTATIONS)
_SCALAR_TYPES = frozenset(("string", "number", "integer", "boolean", "null"))
_PLAIN = (str, int, float, bool, type(None))
_MAX_KEPT = 4096  # leaves kept per process: past it the table starts afresh
_MAX_TEXT = 2048  # a longer pattern or enum is no common leaf, and its tree is big: not kept

_kept: dict[tuple, Node] = {}


def leaf_settings(t: Context) -> tuple | None:
    """What a leaf's language depends on besides its keywords: the translation's settings, made
    once per translator (a key per subschema hashed them each time); None when lenient."""
    opts = t.opts
    if opts.lenient:
        return None
    mode = getattr(t, "mode", None)
    # plain values (a dataclass's or an enum's hash is Python code, run at every lookup; astuple
    # copies deeply): the budgets but the clock (a time-out raises, and nothing raised is kept)
    budgets = tuple(v for k, v in vars(t.limits).items() if k != "max_seconds")
    return (
        getattr(mode, "value", mode),
        tuple(vars(t.policy).values()),
        t.draft,
        budgets,
        opts.indent,
        opts.max_string_length,
        opts.oneof,
        opts.any_value_depth,
        t.unevaluated,
    )


def leaf_key(locs: list[Loc], depth: int, settings: tuple | None) -> tuple | None:
    """The key of the conjunction ``locs`` at ``depth`` under `leaf_settings` when it is one leaf,
    else None."""
    if len(locs) != 1 or settings is None:
        return None
    loc = locs[0]
    s = loc.schema
    if type(s) is not dict or loc.excluded is not None or loc.branches:
        return None
    words: list[tuple] = []
    for k, v in s.items():
        if k in _ASSERTIONS:
            # a value's class is part of it: 1, 1.0 and True are one key of a dict, not one bound
            if type(v) in _PLAIN:
                if type(v) is str and len(v) > _MAX_TEXT:
                    return None
                words.append((k, type(v), v))
            else:
                text = _text(v)
                if text is None or len(text) > _MAX_TEXT:
                    return None
                words.append((k, list, text))
        elif k not in _SKIPPED:
            return None
    if not words:
        return None
    if "enum" not in s and "const" not in s:
        ts = s.get("type")
        if isinstance(ts, str):
            ts = [ts]
        if not isinstance(ts, list) or not ts or not _SCALAR_TYPES.issuperset(ts):
            return None
    return (tuple(words), depth, settings)


def _text(v: Any) -> str | None:
    """A list's or object's JSON text, in its own order (None: not JSON)."""
    try:
        return json.dumps(v, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError):
        return None


def kept_leaf(key: tuple, translate: Callable[[], Node]) -> Node:
    """The leaf's language kept under ``key``, translated by ``translate`` the first time."""
    node = _kept.get(key)
    if node is None:
        node = translate()
        if len(_kept) >= _MAX_KEPT:
            _kept.clear()
        _kept[key] = node
    return node
