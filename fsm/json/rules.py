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
from .context import Loc
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
