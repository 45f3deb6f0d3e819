"""Where a subschema sits (`Loc`) and what the per-keyword modules see of the translator (`Context`).

The per-concern modules (`strings`, `numbers`, `objects`, `arrays`, `negation`, `one_of`...) are
functions over a `Context` rather than methods of one class; `Context` is the translator's face they
use, so they need not import `translator` (which imports them).

>>> Loc({"items": {"type": "string"}}, "", "urn:x").at("items").ptr
'/items'
"""

from __future__ import annotations

import json
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol

from ..automata import Budget, Node
from ..limits import Deadline, Limits
from .layout import Layout
from .policy import Policy


@dataclass(frozen=True)
class Witness:
    """A member an object must have (what a negated ``patternProperties``, ``additionalProperties``
    or ``propertyNames`` leaves): its key matches every ``patterns``, none of ``not_patterns``, is
    none of ``names`` and, with ``breaks``, fails that ``propertyNames`` schema; its value
    satisfies ``value``. ``source`` is the negated keywords, for validators."""

    value: Any
    patterns: tuple[str, ...] = ()
    not_patterns: tuple[str, ...] = ()
    names: tuple[str, ...] = ()
    breaks: Any = None
    source: Any = None


@dataclass(frozen=True, eq=False)
class Excluded:
    """What a ``not`` excludes where no positive JSON Schema keyword says it: the strings a string
    schema accepts, a list of values, the integers, the multiples of an integer, or the objects
    without some member (`Witness`).

    `negation` puts it where a subschema goes (alone, or inside the ``anyOf``/``allOf`` it builds);
    `Translator.flattened` turns it into a conjunct ``Loc(positive(), ..., excluded=self)``, and the
    string and value translations read the field. Validators checking literal values see `exact`.
    """

    strings: dict | None = None  # a string schema (pattern/minLength/maxLength): its strings excluded
    values: list | None = None  # these values excluded
    integers: bool = False  # the numbers with a zero fraction excluded (a negated integer type)
    multiple: int | float | None = None  # the multiples of this integer (maybe as a float) excluded
    member: Witness | None = None  # the objects without such a member excluded

    def positive(self) -> dict:
        """The keywords a validator checks for this conjunct (a fresh dict: memo keys are its id)."""
        if self.member is not None:
            return {"type": "object"}
        if self.integers or self.multiple is not None:
            return {"type": "number"}
        return {"type": "string"} if self.strings is not None else {}

    def exact(self) -> dict:
        """The same exclusion as plain JSON Schema, for a validator checking literal values (which the
        automaton does not see): the strings the string schema rejects, the other values, the
        non-integral numbers."""
        if self.integers:
            return {"type": "number", "not": {"type": "integer"}}
        if self.multiple is not None:
            return {"type": "number", "not": {"multipleOf": self.multiple}}
        if self.member is not None:
            return {"type": "object", "not": self.member.source}
        if self.strings is not None:
            return {"type": "string", "not": self.strings}
        return {"not": {"enum": self.values}} if self.values is not None else {}

    def __str__(self) -> str:
        # its canonical text: equal exclusions are one conjunct (`Translator` dedups by it)
        return json.dumps(
            [self.strings, self.values, self.integers, self.multiple, str(self.member)],
            sort_keys=True,
            ensure_ascii=False,
            default=str,
        )


@dataclass(frozen=True)
class Loc:
    """A subschema with where it sits (JSON pointer) and the base URI its refs resolve against;
    ``excluded``, on a conjunct of a flattened schema only, is what a ``not`` there excludes;
    ``refs``, the ``$ref`` hops that led here in place, each (its base, its pointer, the target's
    base, the target's pointer): what `keywords.sees` follows; ``branches``, on an ``anyOf`` the
    translator made of other subschemas (an ``if``/``then``/``else``), each branch as the subschemas
    it applies, where they sit: the translator splits on these, so what they evaluate is seen."""

    schema: Any
    ptr: str
    base: str
    excluded: Excluded | None = None
    refs: tuple[tuple[str, str, str, str], ...] = ()
    branches: tuple[tuple[Loc, ...], ...] = ()

    def at(self, *keys) -> Loc:
        """The subschema under ``keys`` (e.g. ``"properties", "a"``), its pointer extended."""
        sub, ptr = self.schema, self.ptr
        for k in keys:
            sub = sub[k]
            ptr += "/" + str(k).replace("~", "~0").replace("/", "~1")
        return Loc(sub, ptr, self.base, refs=self.refs)

    def without(self, *keys: str) -> Loc:
        """This subschema without the keywords ``keys``, where it sits and how it was reached kept.

        >>> Loc({"a": 1, "b": 2}, "/x", "u").without("a").schema
        {'b': 2}
        """
        # the constructor, not dataclasses.replace (a field walk per call: every $ref and allOf met)
        schema = {k: v for k, v in self.schema.items() if k not in keys}
        return Loc(schema, self.ptr, self.base, self.excluded, self.refs, self.branches)


def short_pointer(ptr: str, width: int = 100) -> str:
    """A JSON pointer cut to about ``width`` characters for a message (``/`` for the root).

    >>> short_pointer("/properties/a" * 20, 60)
    '/properties/a/prop…ies/a/properties/a (40 keys deep)'
    """
    if not ptr:
        return "/"
    if len(ptr) <= width:
        return ptr
    half = width // 2 - 12
    return f"{ptr[:half]}…{ptr[-half:]} ({ptr.count('/')} keys deep)"


class Context(Protocol):
    """The translator as the per-keyword translations see it."""

    opts: Any  # the JsonSchema spec's options (lenient, oneof, max_string_length, ...)
    policy: Policy  # what is generated where the schema leaves a choice
    layout: Layout
    draft: int
    limits: Limits  # the compile's budgets (estimates before expansion check against them)
    deadline: Deadline  # the translation's clock (a part may run on a share of it)
    regex_text: bool  # the tree becomes grammar terminals (regex text): no big automata inside
    unevaluated: bool  # the schema has unevaluated* keywords: what a branch evaluates matters

    def value(self, locs: list[Loc], depth: int) -> Node:
        """The language of JSON values valid against every schema in ``locs``."""
        ...

    def any_value(self, depth: int, loc: Loc) -> Node:
        """Any JSON value at ``depth``."""
        ...

    def unsupported(self, keyword: str, loc: Loc, why: str = "") -> None:
        """Raise `UnsupportedSchema` for ``keyword`` (or, when lenient, record it as ignored)."""
        ...

    def is_valid(self, value: Any, locs: list[Loc], flat: list[Loc] | None = None) -> bool:
        """True when the literal ``value`` validates against every schema in ``locs``."""
        ...

    def resolve(self, ref: str, loc: Loc) -> tuple[Loc, str]:
        """The subschema ``ref`` points to and a key naming it."""
        ...

    def flattened(self, locs: list[Loc]) -> AbstractContextManager[list[Loc]]:
        """A context manager: the conjuncts of ``locs``, their $refs on the expansion stack inside."""
        ...

    def conjuncts(self, locs: list[Loc]) -> list[Loc]:
        """The conjuncts of ``locs`` (their $refs off the expansion stack again)."""
        ...

    def budget(self) -> Budget:
        """An automaton budget on the translation's deadline."""
        ...

    def tick(self) -> None:
        """Count a step of the translation (its deadline is checked every few)."""
        ...
