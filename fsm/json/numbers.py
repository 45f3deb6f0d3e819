"""Number and integer languages: bounds (draft-4 boolean exclusives included) and integral ``multipleOf``.

>>> from fsm.automata import to_regex
>>> to_regex(number_language(None, [Loc({"minimum": 0, "maximum": 3}, "", "")], True))
'[0-3]'
"""

from __future__ import annotations

from ..automata import (
    NEVER,
    And,
    Bounds,
    Node,
    divisible_integers,
    integer_node,
    lit,
    number_node,
    opt,
    rep,
    seq,
)
from ..errors import SchemaError
from .context import Context, Loc
from .keywords import num

ZERO_FRACTION_DIGITS = 20  # as many as any other fraction gets (automata.numbers.MAX_FRACTION_DIGITS)


def number_language(t: Context, schemas: list[Loc], integer: bool) -> Node:
    """The numbers (or integers) valid against every schema in ``schemas``."""
    b = Bounds()
    multiples: list[int] = []
    for f in schemas:
        s = f.schema
        for kw, lower in (("minimum", True), ("maximum", False)):
            if kw in s:
                v = num(s[kw], kw, f)
                excl_kw = "exclusiveMinimum" if lower else "exclusiveMaximum"
                excl = s.get(excl_kw) is True
                (b.tighten_lower if lower else b.tighten_upper)(v, excl)
        for kw, lower in (("exclusiveMinimum", True), ("exclusiveMaximum", False)):
            v = s.get(kw)
            if isinstance(v, bool) or v is None:
                continue
            (b.tighten_lower if lower else b.tighten_upper)(num(v, kw, f), True)
        if "multipleOf" in s:
            m = num(s["multipleOf"], "multipleOf", f)
            if m <= 0:
                raise SchemaError(f"multipleOf at {f.ptr or '/'} must be > 0")
            if isinstance(m, float) and not m.is_integer():
                t.unsupported("multipleOf", f, "non-integral multipleOf is not enforced")
                continue
            multiples.append(int(m))
            if isinstance(m, float):  # validators divide as doubles: stay where that is exact
                b.tighten_lower(-(2**53), False)
                b.tighten_upper(2**53, False)
    extra = [divisible_integers(m) for m in sorted(set(multiples)) if m != 1]
    if multiples or integer:
        node = integer_node(b)
        node = And((node, *extra)) if extra and node != NEVER else node
        return zero_fraction(node) if t is not None and t.policy.number_spellings else node
    return number_node(b)


def zero_fraction(integers: Node) -> Node:
    """``integers`` also spelled with a zero fraction (``1.0``, ``-3.00``): the same values.

    >>> from fsm.automata import to_regex, lit
    >>> to_regex(zero_fraction(lit("12")))
    '12(?:\\\\.0{1,20})?'
    """
    if integers == NEVER:
        return NEVER
    return seq(integers, opt(seq(lit("."), rep(lit("0"), 1, ZERO_FRACTION_DIGITS))))
