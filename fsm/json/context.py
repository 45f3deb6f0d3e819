"""Where a subschema sits (`Loc`) and what the per-keyword modules see of the translator (`Context`).

The per-concern modules (`strings`, `numbers`, `objects`, `arrays`, `negation`, `one_of`...) are
functions over a `Context` rather than methods of one class; `Context` is the translator's face they
use, so they need not import `translator` (which imports them).

>>> Loc({"items": {"type": "string"}}, "", "urn:x").at("items").ptr
'/items'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from ..automata import Budget, Node
from .layout import Layout


@dataclass(frozen=True)
class Loc:
    """A subschema with where it sits (JSON pointer) and the base URI its refs resolve against."""

    schema: Any
    ptr: str
    base: str

    def at(self, *keys) -> Loc:
        sub, ptr = self.schema, self.ptr
        for k in keys:
            sub = sub[k]
            ptr += "/" + str(k).replace("~", "~0").replace("/", "~1")
        return Loc(sub, ptr, self.base)


class Context(Protocol):
    """The translator as the per-keyword translations see it."""

    opts: Any  # the JsonSchema spec's options (lenient, oneof, max_string_length, ...)
    layout: Layout
    draft: int

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

    def flatten(self, loc: Loc, out: list[Loc], seen: set) -> int:
        """Expand ``$ref`` and ``allOf`` of ``loc`` into ``out``."""
        ...

    def budget(self) -> Budget:
        """An automaton budget on the translation's deadline."""
        ...
