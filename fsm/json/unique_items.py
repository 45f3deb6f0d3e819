r"""``uniqueItems`` over items of any schema in exact mode: a text check where each item ends
(`fsm.automata.Guard`) that the item differs from the array's earlier ones.

Distinct items are no regular language once items are unbounded (the automaton would remember
every item so far); with a finite item set they are (`arrays`: each value at most once). Here the
array's automaton is the plain one, and after each item a guard point compares the item's value
with the earlier items' — JSON Schema's equality: numbers by value (``1`` equals ``1.0``), ``true``
not ``1``, objects whatever their member order. The check reads the text from the start to find
the array (one C-level scan of the structural characters, strings skipped whole), so an array of
n items costs O(n x length) over a document; only rows where an item can end run it (the tokens
that close an item, or that end right where one could).

A check that fails cannot always be left by writing more (after ``true``, after a string at its
``maxLength``): a generation can then run out of tokens. Exact mode only, where the constraint
is the schema's validation, not a generation policy.

>>> unique_check(b'{"a":[1,"x",2.0'), unique_check(b'[[1,2],{"k":1},[1,2.0]')
(True, False)
"""

from __future__ import annotations

import json
import re
from decimal import Decimal
from typing import Any

# a JSON string (skipped whole) or a structural character
_STRUCTURE = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{},]', re.DOTALL)


def _items(text: bytes) -> list[bytes] | None:
    """The texts of the items of the array ``text`` ends inside, the last one ending at the end;
    None when the innermost open container is no array."""
    stack: list[list[int] | None] = []  # per open container: where its items start (arrays only)
    for m in _STRUCTURE.finditer(text):
        c = text[m.start()]
        if c == 0x22:  # a string
            continue
        if c == 0x5B:
            stack.append([m.end()])
        elif c == 0x7B:
            stack.append(None)
        elif c in (0x5D, 0x7D):
            if stack:
                stack.pop()
        elif stack and stack[-1] is not None:  # a comma between array items
            stack[-1].append(m.end())
    if not stack or stack[-1] is None:
        return None
    starts = stack[-1]
    ends = [s - 1 for s in starts[1:]] + [len(text)]
    return [text[a:b] for a, b in zip(starts, ends, strict=True)]


def _value(text: bytes) -> Any:
    return json.loads(text, parse_float=Decimal, parse_int=Decimal)


def same(a: Any, b: Any) -> bool:
    """JSON Schema's equality of two decoded values (numbers as `Decimal`).

    >>> one = Decimal("1")
    >>> same(one, Decimal("1.0")), same(True, one), same({"a": [one], "b": None}, {"b": None, "a": [one]})
    (True, False, True)
    """
    if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None:
        return type(a) is type(b) and a == b
    if isinstance(a, Decimal) and isinstance(b, Decimal):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return isinstance(a, str) and isinstance(b, str) and a == b


def unique_check(text: bytes) -> bool:
    """The check where an item of a ``uniqueItems`` array ends: it differs from every earlier
    item of the array ``text`` ends inside."""
    items = _items(text)
    if not items:
        return False
    try:
        values = [_value(x) for x in items]
    except ValueError:
        return False
    last = values[-1]
    return not any(same(last, v) for v in values[:-1])
