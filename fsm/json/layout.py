"""Where whitespace goes in generated JSON: compact (none), or exactly ``json.dumps(indent=k)``'s layout.

>>> Layout(2).sep(0)
',\\n  '
"""

from __future__ import annotations

import json
from json.encoder import encode_basestring
from typing import Any

from ..automata import NEVER, Node, alt, lit, seq


class Layout:
    """Where whitespace goes: compact, or json.dumps(indent=k) layout."""

    def __init__(self, indent: int | None):
        self.indent = indent

    @property
    def colon(self) -> str:
        """What follows a key: ``:`` or ``: ``."""
        return ":" if self.indent is None else ": "

    def sep(self, depth: int) -> str:
        """What separates members at ``depth``: ``,`` or ``,`` and the next line's indent."""
        return "," if self.indent is None else ",\n" + " " * (self.indent * (depth + 1))

    def container(self, open_: str, close: str, body: Node, body_if_empty_allowed: bool, depth: int) -> Node:
        """``open body close``; ``body`` must be non-empty; the empty container is allowed if asked."""
        empty = lit(open_ + close) if body_if_empty_allowed else NEVER
        if self.indent is None:
            return alt(empty, seq(lit(open_), body, lit(close)))
        pad = " " * (self.indent * (depth + 1))
        end = " " * (self.indent * depth)
        return alt(empty, seq(lit(open_ + "\n" + pad), body, lit("\n" + end + close)))

    def dump(self, value: Any, depth: int) -> str:
        """``value`` as JSON text laid out at ``depth``."""
        if self.indent is None:
            if isinstance(value, str):  # (an enum's values: no encoder made per value)
                return encode_basestring(value)
            return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
        text = json.dumps(value, indent=self.indent, ensure_ascii=False, allow_nan=False)
        return text.replace("\n", "\n" + " " * (self.indent * depth))
