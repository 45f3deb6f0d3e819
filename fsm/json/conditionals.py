"""The conditional keywords as disjunctions: object dependencies ("absent, or present with ...") and
``if``/``then``/``else`` ("(if and then) or (not if and else)", where ``not if`` is exact).

`Translator.flattened` calls both on each schema it flattens; what they return is plain JSON Schema
(``anyOf``/``allOf``/``not``), so validators read it as they read the original.

>>> from fsm.json.context import Loc
>>> rest, cond = conditional(None, Loc({"type": "object", "if": {"required": ["a"]}, "then": {"minProperties": 2}}, "", "u"))
>>> rest.schema, cond.schema["anyOf"][1]
({'type': 'object'}, {'not': {'required': ['a']}})
"""

from __future__ import annotations

from typing import Any

from .context import Context, Loc
from .keywords import DEPENDENCY_KW, dependency_keywords, trivial
from .negation import NO_NEGATION, negation

_CONDITIONAL = ("if", "then", "else")


def dependencies(t: Context, loc: Loc, out: list[Loc]) -> Loc:
    """``loc`` without its object dependencies, which go to ``out`` as disjunctions: "a absent"
    or "a present and ..."."""
    s = loc.schema
    deps = [
        (kw, name, dep)
        for kw in dependency_keywords(t.draft)
        if kw in s and isinstance(s[kw], dict)
        for name, dep in s[kw].items()
    ]
    if not deps:
        return loc
    for kw, name, dep in deps:
        absent = {"properties": {name: False}}
        if isinstance(dep, list):
            present: Any = {"required": [name, *dep]}
        else:
            present = {"allOf": [{"required": [name]}, dep]}
        out.append(Loc({"anyOf": [absent, present]}, f"{loc.ptr}/{kw}/{name}", loc.base))
    return Loc({k: v for k, v in s.items() if k not in DEPENDENCY_KW}, loc.ptr, loc.base)


def conditional(t: Context, loc: Loc) -> tuple[Loc, Loc | None]:
    """``loc`` without ``if``/``then``/``else``, and the disjunction they mean (None: no constraint).

    ``loc`` comes back unchanged when ``not if`` has no exact form and ``then`` needs it: the
    translator then reports ``if`` as unsupported. Before draft 7 the three are unknown keywords.
    Where the schema has unevaluated* keywords, what each branch evaluates matters too
    (`_evaluating`).
    """
    s = loc.schema
    rest = loc.without(*_CONDITIONAL)
    cond, then, other = s.get("if", True), s.get("then", True), s.get("else", True)
    if (t is not None and t.draft < 7) or "if" not in s:
        return rest, None
    if t is not None and t.unevaluated:
        return _evaluating(t, loc, rest)
    if trivial(then) and trivial(other):
        return rest, None
    at = f"{loc.ptr}/if"
    if trivial(then):  # (if) or (not if and else) is (if or else)
        return rest, Loc({"anyOf": [cond, other]}, at, loc.base)
    if t is not None and negation(t, cond, loc.at("if"), 0) is NO_NEGATION:
        return loc, None
    branches = [
        {"allOf": [cond, then]},
        {"not": cond} if trivial(other) else {"allOf": [{"not": cond}, other]},
    ]
    return rest, Loc({"anyOf": branches}, at, loc.base)


def _evaluating(t: Context, loc: Loc, rest: Loc) -> tuple[Loc, Loc | None]:
    """The conditional as branches that keep what they evaluate for the unevaluated* keywords that
    see them (annotations of ``if`` where it passes, with ``then``'s; else only ``else``'s): ``if``
    and ``then`` where they sit, ``else`` beside ``not if`` (under ``if/not``: unseen). Without then
    or else, ``if`` still evaluates where it passes (so "if, or anything evaluating nothing"). When
    ``not if`` has no exact form, ``else`` goes alone and unseen (the ``if`` may pass beside it):
    sound, only less complete; unless ``then`` needs it (``loc`` back unchanged, as above)."""
    s = loc.schema
    cond, then, other = s.get("if", True), s.get("then", True), s.get("else", True)
    at = f"{loc.ptr}/if"
    passes = (loc.at("if"), *([loc.at("then")] if not trivial(then) else []))
    if trivial(other) and trivial(then):
        fails: tuple[Loc, ...] = ()
    elif negation(t, cond, loc.at("if"), 0) is not NO_NEGATION:
        fails = (
            Loc({"not": cond}, at, loc.base, refs=loc.refs),
            *([loc.at("else")] if not trivial(other) else []),
        )
    elif trivial(then):
        # reached as if through the negation: `keywords.sees` counts nothing under a `not`
        hop = (loc.base, f"{at}/not", loc.base, f"{loc.ptr}/else")
        fails = (Loc(other, f"{loc.ptr}/else", loc.base, refs=(*loc.refs, hop)),)
    else:
        return loc, None
    schema = {
        "anyOf": [{"allOf": [b.schema for b in branch]} if branch else True for branch in (passes, fails)]
    }
    return rest, Loc(schema, at, loc.base, refs=loc.refs, branches=(passes, fails))
