"""Any JSON value nested at most a given number of levels: a regular language (``any_value_depth``).

Unbounded nesting is not regular; it is `fsm.automata`'s ``AnyJson`` block (or the grammar's
``json_value`` rule) instead.

>>> from fsm.automata import to_regex
>>> to_regex(bounded_any(Layout(None), 0, 0, None)).startswith("null|true|false|")
True
"""

from __future__ import annotations

from ..automata import ANY_CHAR, Bounds, Cls, Enc, Node, alt, lit, number_node, rep, seq
from .layout import Layout
from .strings import string_node


def bounded_any(layout: Layout, depth: int, remaining: int, max_string_length: int | None) -> Node:
    """Any JSON value at ``depth`` with at most ``remaining`` more levels of arrays and objects."""
    scalars = [
        lit("null"),
        lit("true"),
        lit("false"),
        number_node(Bounds()),
        string_node(0, None, []),
    ]
    if remaining <= 0:
        return alt(*scalars)
    inner = bounded_any(layout, depth + 1, remaining - 1, max_string_length)
    sep = lit(layout.sep(depth))
    arr = layout.container("[", "]", seq(inner, rep(seq(sep, inner), 0, None)), True, depth)
    key = seq(
        lit('"'),
        Enc(rep(Cls(ANY_CHAR), 0, max_string_length), True),
        lit('"' + layout.colon),
    )
    member = seq(key, inner)
    obj = layout.container("{", "}", seq(member, rep(seq(sep, member), 0, None)), True, depth)
    return alt(*scalars, arr, obj)
