"""Rule modes (pushdown, grammar): a conjunction met again while it is being translated is a rule of
its own, called where it recurs.

A pure ``$ref`` is a rule already (`Translator.rule`); a recursive ``$ref`` beside other keywords
(``allOf: [{"$ref": "#/definitions/item"}, {...}]`` inside ``item``) is expanded in place, and
without this each level would expand it again until the recursion check refused the schema. Here
the expansion stack starts afresh inside each conjunction, and meeting the same subschemas again
(same objects, same base, same exclusions) is the recursion: a rule call instead of a refusal.

>>> import fsm
>>> item = {"type": "object", "properties": {"k": {"allOf": [{"$ref": "#"}, {"required": ["v"]}]}, "v": {}}}
>>> vocab = fsm.Vocabulary([bytes([i]) for i in range(256)] + [None], eos_token_ids=[256])
>>> index = fsm.compile(fsm.JsonSchema(item, exact=True), vocab, cache=False)
>>> from fsm.testing import accepts
>>> accepts(index, '{"k":{"k":{"v":1},"v":2}}'), accepts(index, '{"k":{"k":{}}}')
(True, False)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..automata import NEVER, Node, Ref, Val
from ..errors import UnsupportedSchema
from .context import Context, Loc
from .inference import inferred_types
from .keywords import NO_CONSTRAINT, pure_ref, trivial, type_set
from .refs import Expansion

MAX_OPEN = 100  # conjunctions nested in rule modes before a recursion is refused (Python's stack)


class ConjunctionRules:
    """The conjunctions a translation has open, and the rule names of those that recurred."""

    def __init__(self, t: Any):
        self.t = t
        self.open: dict[tuple, str | None] = {}

    def rule(self, locs: list[Loc], translate: Callable[[list[Loc]], Node]) -> Node:
        """``translate`` of the conjuncts of ``locs``; a call of the rule it becomes when met inside."""
        t = self.t
        key = tuple((id(loc.schema), loc.base, str(loc.excluded)) for loc in locs)
        if key in self.open:
            name = self.open[key] or f"c{len(t.rule_names) + len(t.rules)}"
            self.open[key] = name
            t.rules.setdefault(name, NEVER)
            return Ref(name)
        if len(self.open) > MAX_OPEN:
            ptr = locs[0].ptr
            raise UnsupportedSchema(
                f"$ref at {ptr or '/'}: recursion through {MAX_OPEN} combined schemas", "$ref", ptr
            )
        self.open[key] = None
        # the refs expanded around it do not recur inside: recursion is this conjunction met again
        outer, t.expansion = t.expansion, Expansion()
        try:
            with t.flattened(locs) as flat:
                node = translate(flat)
        finally:
            name = self.open.pop(key)
            t.expansion = outer
        node = Val(node) if node != NEVER else node
        if name is None:
            return node
        t.rules[name] = node
        return Ref(name)


def beside_ref(t: Context, locs: list[Loc]) -> list[Loc]:
    """Rule modes: what is left of a parent beside an anyOf branch is often empty, and a branch
    that is a pure (recursive) $ref must still become a rule reference.

    >>> from fsm.json.schema import JsonSchema
    >>> from fsm.json.translator import Mode, Translator
    >>> from fsm.limits import DEFAULT_LIMITS
    >>> root = {"type": "object"}
    >>> t = Translator(root, JsonSchema(root), DEFAULT_LIMITS, Mode.PUSHDOWN)
    >>> here = [Loc({"type": "object"}, "", t.root_base), Loc({"$ref": "#"}, "", t.root_base)]
    >>> [f.schema for f in beside_ref(t, here)]
    [{'$ref': '#'}]
    """
    if len(locs) <= 1:
        return locs
    kept = [loc for loc in locs if loc.excluded is not None or not trivial(loc.schema)]
    refs = [loc for loc in kept if pure_ref(loc.schema, t.draft) is not None]
    if len(kept) > 1 and len(refs) == 1:  # e.g. {"type": "object"} beside a ref to an object schema
        kept = [loc for loc in kept if loc is refs[0] or not _implied_by_ref(t, loc, refs[0])]
    return kept if kept else locs[:1]


# keywords whose subschemas decide the types: no type is inferred where one of these is present
_COMBINATORS = frozenset(("anyOf", "oneOf", "allOf", "$ref", "enum", "const", "not", "if"))


def _implied_by_ref(t: Context, loc: Loc, ref_loc: Loc) -> bool:
    """True when ``loc`` is only a ``type`` that the (pure) ``$ref`` target declares anyway."""
    s = loc.schema
    if not isinstance(s, dict) or loc.excluded is not None or set(s) - NO_CONSTRAINT != {"type"}:
        return False
    allowed = type_set(s["type"])
    target = ref_loc
    for _ in range(8):
        ref = pure_ref(target.schema, t.draft)
        if ref is None:
            break
        target, _ = t.resolve(ref, target)
    ts = target.schema
    if not isinstance(ts, dict):
        return False
    if "type" in ts:
        declared = type_set(ts["type"])
    elif t.policy.infer_types and not set(ts) & _COMBINATORS:
        declared = inferred_types([target], t.policy.assert_format)  # what this library generates
    else:
        return False
    return bool(allowed and declared) and all(
        x in allowed or (x == "integer" and "number" in allowed) for x in declared
    )
