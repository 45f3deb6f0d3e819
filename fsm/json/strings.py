"""String languages: length bounds, ``pattern``, ``format``, negated string schemas, and the key
language of ``propertyNames``.

>>> from fsm.automata import to_regex
>>> to_regex(string_node(0, 0, []))
'""'
"""

from __future__ import annotations

import json
from typing import Any

from ..automata import (
    ANY_CHAR,
    NEVER,
    Alt,
    And,
    Auto,
    Cls,
    Enc,
    Guard,
    Lit,
    Minus,
    Node,
    Seq,
    Val,
    alt,
    check_expansion,
    complement_dfa,
    lit,
    rep,
    seq,
    small_dfa,
)
from ..errors import SchemaTooComplex, SpecTooComplex, UnsupportedSchema
from ..limits import Limits
from .context import Context, Loc
from .formats import checked_format, format_node
from .keywords import count, type_set
from .patterns import pattern_node

# the keywords a propertyNames schema may use
_KEY_KEYWORDS = {
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
}


def string_language(t: Context, schemas: list[Loc]) -> Node:
    """The strings valid against every schema in ``schemas`` (lengths, patterns, formats, `not`)."""
    lo, hi = 0, None
    langs: list[Node] = []
    checked: list[tuple[int, tuple]] = []  # formats with more strings under a text check
    for f in schemas:
        s = f.schema
        if "minLength" in s:
            lo = max(lo, count(s["minLength"], "minLength", f))
        if "maxLength" in s:
            m = count(s["maxLength"], "maxLength", f)
            hi = m if hi is None else min(hi, m)
        if "pattern" in s:
            try:
                langs.append(_pattern(t, s["pattern"], f))
            except UnsupportedSchema as exc:
                t.unsupported("pattern", f, str(exc))
        fmt = s.get("format") if t.policy.assert_format else None
        if isinstance(fmt, str):
            node = format_node(fmt, t.policy.rfc_formats, t.regex_text)
            if node is not None:
                more = checked_format(fmt, t.policy.rfc_formats, t.regex_text)
                if more is not None:
                    checked.append((len(langs), more))
                langs.append(node)
        if f.excluded is not None and f.excluded.strings is not None:
            langs.append(_string_complement(t, f.excluded.strings, f))
    if hi is None:
        hi = t.opts.max_string_length
    plain = string_node(lo, hi, langs, schemas)
    if len(checked) != 1:  # two checked formats at once: their plain languages only (a subset)
        return plain
    ((i, (names, check)),) = checked
    more = string_node(lo, hi, [*langs[:i], names, *langs[i + 1 :]], schemas)
    if not isinstance(more, Seq) or len(more.items) != 3:
        return plain
    # the check reads the string's text where it ends: just before the closing quote
    return alt(plain, Seq((*more.items[:2], Guard(check), more.items[2])))


def _string_complement(t: Context, s: dict, loc: Loc) -> Node:
    """The decoded strings that ``s``'s pattern/minLength/maxLength (or RFC format) reject (a
    complemented DFA)."""
    parts: list[Node] = []
    lo = count(s["minLength"], "minLength", loc) if "minLength" in s else 0
    hi = count(s["maxLength"], "maxLength", loc) if "maxLength" in s else None
    if lo > 0 or hi is not None:
        parts.append(rep(Cls(ANY_CHAR), lo, hi))
    if "pattern" in s:
        try:
            parts.append(_pattern(t, s["pattern"], loc, "/not"))
        except UnsupportedSchema as exc:
            raise UnsupportedSchema(f"not: {exc}", "not", loc.ptr + "/not") from None
    if isinstance(s.get("format"), str):
        fmt = format_node(s["format"], rfc=True)  # negation.COMPLEMENTED_FORMATS only
        if fmt is not None:
            parts.append(fmt)
    if not parts:
        return NEVER  # s accepts every string
    body = parts[0] if len(parts) == 1 else And(tuple(parts))
    d = complement_dfa(small_dfa(body, t.budget()))
    return Auto(tuple(tuple(row) for row in d.edges), tuple(d.accepting))


def _pattern(t: Context, pattern: Any, loc: Loc, under: str = "") -> Node:
    """``pattern`` at ``loc`` as a tree, its counted repeats estimated before any automaton is
    built (`check_expansion`): nested counts multiply, as in a regex."""
    node = pattern_node(pattern)
    where = f"{loc.ptr}{under}/pattern"
    try:
        check_expansion(node, t.limits, f"the pattern at {where}")
    except SpecTooComplex as exc:
        raise SchemaTooComplex(str(exc), exc.budget, exc.limit, pointer=where) from None
    return node


def check_pattern_texts(schema: Any, limits: Limits) -> None:
    """Raise `SchemaTooComplex` (budget ``max_regex_positions``, naming the pointer) for a
    ``pattern`` or ``patternProperties`` regex over twice ``max_regex_positions`` characters:
    Python's regex parser cannot be interrupted, so its input is bounded before it starts (as
    `fsm.Regex` is). Literal values (``enum``, ``const``, ``default``, ``examples``) are data, not read.

    >>> check_pattern_texts({"properties": {"a": {"pattern": "x" * 9}}}, Limits(max_regex_positions=4))
    Traceback (most recent call last):
    ...
    fsm.errors.SchemaTooComplex: the pattern at /properties/a/pattern has 9 characters, over twice the budget max_regex_positions=4 (Python's regex parser reads it before anything can stop it); shorten it or raise Limits.max_regex_positions
    """
    cap = 2 * limits.max_regex_positions
    # the path to a value as (parent's path, key) links: a pointer is spelled only for the error
    stack: list[tuple[Any, tuple | None]] = [(schema, None)]
    while stack:
        v, path = stack.pop()
        if isinstance(v, list):
            stack.extend((x, (path, i)) for i, x in enumerate(v) if isinstance(x, (dict, list)))
            continue
        if not isinstance(v, dict):
            continue
        texts = [("pattern", v.get("pattern"))]
        if isinstance(v.get("patternProperties"), dict):
            texts += [("patternProperties", k) for k in v["patternProperties"]]
        for kw, text in texts:
            if isinstance(text, str) and len(text) > cap:
                where = f"{_pointer(path)}/{kw}"
                raise SchemaTooComplex(
                    f"the pattern at {where} has {len(text):,} characters, over twice the budget "
                    f"max_regex_positions={limits.max_regex_positions:,} (Python's regex parser reads it "
                    "before anything can stop it); shorten it or raise Limits.max_regex_positions",
                    budget="max_regex_positions",
                    limit=limits.max_regex_positions,
                    pointer=where,
                )
        stack.extend((x, (path, k)) for k, x in v.items() if k not in _DATA and isinstance(x, (dict, list)))


_DATA = frozenset(("enum", "const", "default", "examples", "example"))


def _pointer(path: tuple | None) -> str:
    """The JSON pointer of a `check_pattern_texts` path."""
    parts = []
    while path is not None:
        path, key = path
        parts.append(_escape(key))
    return "".join("/" + p for p in reversed(parts))


def _escape(key: Any) -> str:
    return str(key).replace("~", "~0").replace("/", "~1")


def string_node(lo: int, hi: int | None, langs: list[Node], schemas=()) -> Node:
    """A JSON string of ``lo`` to ``hi`` characters whose decoded text is in every ``langs``
    language and not a value a conjunct of ``schemas`` excludes."""
    if hi is not None and hi < lo:
        return NEVER
    excluded = set()
    for f in schemas:
        if f.excluded is not None and f.excluded.values is not None:
            excluded |= {v for v in f.excluded.values if isinstance(v, str)}
    if not langs and not excluded:
        return seq(lit('"'), Enc(rep(Cls(ANY_CHAR), lo, hi), True), lit('"'))
    parts = list(langs)
    if lo > 0 or hi is not None or not parts:
        parts.append(rep(Cls(ANY_CHAR), lo, hi))
    body = parts[0] if len(parts) == 1 else And(tuple(parts))
    if excluded:
        body = Minus(body, frozenset(excluded))
    return seq(lit('"'), Enc(body), lit('"'))


def key_language(t: Context, name_locs: list[Loc]) -> Node | None:
    """The decoded language ``propertyNames`` allows (None: unconstrained)."""
    if not name_locs:
        return None
    langs = []
    for loc in name_locs:
        node = _string_schema_language(t, loc)
        if node is not None:
            langs.append(node)
    if not langs:
        return None
    return langs[0] if len(langs) == 1 else And(tuple(langs))


def _decoded(node: Node) -> Node | None:
    """The decoded texts of a language of JSON strings (quoted `Enc` bodies, string literals), None
    when it holds anything else.

    >>> _decoded(alt(lit('"ab"'), seq(lit('"'), Enc(lit("x")), lit('"'))))
    Alt(items=(Lit(text='ab'), Lit(text='x')))
    """
    if isinstance(node, Val):
        return _decoded(node.item)
    if isinstance(node, Alt):
        parts = [_decoded(it) for it in node.items]
        return None if any(p is None for p in parts) else alt(*parts)  # type: ignore[arg-type]
    if isinstance(node, Lit):
        try:
            text = json.loads(node.text)
        except ValueError:
            return None
        return lit(text) if isinstance(text, str) else None
    quote = Lit('"')
    if isinstance(node, Seq) and len(node.items) == 3 and node.items[0] == quote == node.items[2]:
        body = node.items[1]
        return body.item if isinstance(body, Enc) else None
    return None


def _string_schema_language(t: Context, loc: Loc) -> Node | None:
    s = loc.schema
    if s is True:
        return None
    if s is False:
        return NEVER
    flat = t.conjuncts([loc])
    if any(isinstance(f.schema, dict) and {"anyOf", "oneOf"} & set(f.schema) for f in flat):
        # branches of string schemas: the strings the translator makes of them, read back decoded
        node = _decoded(t.value([loc, Loc({"type": "string"}, loc.ptr, loc.base)], 0))
        if node is not None:
            return node
    langs: list[Node] = []
    lo, hi = 0, None
    for f in flat:
        sch = f.schema
        if sch is False:
            return NEVER
        for kw in sch:
            if kw not in _KEY_KEYWORDS:
                # a `not` rewritten as a positive schema: the user's keyword is the `not`
                negated = f.ptr.endswith("/not")
                at = Loc(None, f.ptr[:-4], f.base) if negated else f
                t.unsupported("not" if negated else kw, at, "propertyNames supports string keywords only")
        if f.excluded is not None and f.excluded.strings is not None:
            langs.append(_string_complement(t, f.excluded.strings, f))
        elif f.excluded is not None:
            t.unsupported("not", f, "propertyNames supports string keywords only")
        if "type" in sch and "string" not in type_set(sch["type"]):
            return NEVER  # a property name is a string: no name is valid, the object has none
        if "enum" in sch or "const" in sch:
            vals = sch["enum"] if "enum" in sch else [sch["const"]]
            strs = [v for v in vals if isinstance(v, str)]
            langs.append(alt(*[lit(v) for v in strs]) if strs else NEVER)
        if "pattern" in sch:
            langs.append(_pattern(t, sch["pattern"], f))
        if (
            t.policy.assert_format
            and isinstance(sch.get("format"), str)
            and format_node(sch["format"]) is not None
        ):
            langs.append(format_node(sch["format"], t.policy.rfc_formats, t.regex_text))
        if "minLength" in sch:
            lo = max(lo, count(sch["minLength"], "minLength", f))
        if "maxLength" in sch:
            hi = count(sch["maxLength"], "maxLength", f) if hi is None else min(hi, sch["maxLength"])
    if lo or hi is not None:
        langs.append(rep(Cls(ANY_CHAR), lo, hi))
    if not langs:
        return None
    return langs[0] if len(langs) == 1 else And(tuple(langs))
