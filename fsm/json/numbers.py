"""Number and integer languages: bounds (draft-4 boolean exclusives included) and ``multipleOf``, integral
or decimal (the decimal the schema wrote: ``0.01`` is 1/100), by its arithmetic (`fsm.automata.multiples`).

>>> from fsm.automata import to_regex
>>> to_regex(number_language(None, [Loc({"minimum": 0, "maximum": 3}, "", "")], True))
'[0-3]'
"""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

from ..automata import (
    NEVER,
    And,
    Bounds,
    Node,
    TooManyRemainders,
    alt,
    cls,
    divisible_decimals,
    divisible_integers,
    integer_node,
    lit,
    number_node,
    opt,
    rep,
    seq,
)
from ..errors import SchemaError, SchemaTooComplex
from .context import Context, Loc
from .keywords import num

# a multipleOf's remainder automaton (the divisor's part prime to 10) may have this many states
MAX_REMAINDER_STATES = 100_000
ZERO_FRACTION_DIGITS = 20  # as many as any other fraction gets (automata.numbers.MAX_FRACTION_DIGITS)
_DIGIT, _NONZERO = cls((48, 57)), cls((49, 57))
# significant digits a decimal may have and still parse to a non-integral double: with m < 10^15
# (its digits) and a last digit worth 10^k < 1, the nearest integer is at least 10^k away and the
# double at most |d| * 2^-53 < 10^k / 9 (17 digits would let 15512195914255733.7 parse to an integer)
SIGNIFICANT_DIGITS = 15
# leading fraction zeros: 1e-300 is still a nonzero double (1e-400 parses to 0.0, an integer)
_LEADING_ZEROS = 300


def _with_nonzero(lo: int, hi: int) -> Node:
    """``lo`` to ``hi`` digits, one of them nonzero."""
    return And((rep(_DIGIT, lo, hi), seq(rep(_DIGIT, 0, None), _NONZERO, rep(_DIGIT, 0, None))))


# numbers with a nonzero fraction digit whose double is not an integer (no exponent spelling): what a
# negated integer type leaves; a decimal of more than `SIGNIFICANT_DIGITS` digits is left out, as
# its double may be integral
NON_INTEGRAL = seq(
    opt(lit("-")),
    alt(
        seq(lit("0."), rep(lit("0"), 0, _LEADING_ZEROS), _NONZERO, rep(_DIGIT, 0, SIGNIFICANT_DIGITS - 1)),
        *[
            seq(_NONZERO, rep(_DIGIT, i - 1, i - 1), lit("."), _with_nonzero(1, SIGNIFICANT_DIGITS - i))
            for i in range(1, SIGNIFICANT_DIGITS)
        ],
    ),
)


def number_language(t: Context, schemas: list[Loc], integer: bool) -> Node:
    """The numbers (or integers) valid against every schema in ``schemas``."""
    b = Bounds()
    divisors: list[tuple[Fraction, Loc]] = []
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
            # the decimal the schema wrote (0.01 is 1/100, not the double nearest to it)
            divisors.append((Fraction(Decimal(repr(m))) if isinstance(m, float) else Fraction(m), f))
            if isinstance(m, float) and m.is_integer():
                # validators divide as doubles: stay where that is exact
                b.tighten_lower(-(2**53), False)
                b.tighten_upper(2**53, False)
    non_integral = any(f.excluded is not None and f.excluded.integers for f in schemas)
    integral = integer or (divisors and all(q.denominator == 1 for q, _ in divisors))
    if non_integral and integral:
        return NEVER
    if integral:
        # an integer is a multiple of p/q (lowest terms) when it is one of p
        node = integer_node(b)
        ms = {q.numerator: f for q, f in divisors if q.numerator != 1}
        extra = [_multiples(t, m, 0, f) for m, f in sorted(ms.items())]
        node = And((node, *extra)) if extra and node != NEVER else node
        # draft 4's integer type is the numbers written without a fraction (1.0 is not one)
        draft4 = integer and t is not None and t.draft <= 4
        return zero_fraction(node) if t is not None and t.policy.number_spellings and not draft4 else node
    node = number_node(b)
    if node == NEVER:
        return node
    extra = [NON_INTEGRAL] if non_integral else []
    for q, f in divisors:
        scale = _decimal_places(q.denominator)
        extra.append(_multiples(t, q.numerator * 10**scale // q.denominator, scale, f))
    return And((node, *extra)) if extra else node


def _decimal_places(den: int) -> int:
    """The fraction digits of ``1/den`` for ``den`` a product of 2s and 5s (a written decimal's)."""
    scale = 0
    while 10**scale % den:
        scale += 1
    return scale


def _multiples(t: Context, m: int, scale: int, loc: Loc) -> Node:
    """The multiples of ``m / 10^scale``; `SchemaTooComplex` when its remainder automaton is too big."""
    cap = MAX_REMAINDER_STATES if t is None else min(MAX_REMAINDER_STATES, t.budget().limits.max_states)
    try:
        return divisible_integers(m, cap) if scale == 0 else divisible_decimals(m, scale, cap)
    except TooManyRemainders as exc:
        raise SchemaTooComplex(
            f"multipleOf at {loc.ptr or '/'} needs {exc} (remainders of {m:,} read digit by digit), "
            f"over the {cap:,} states a multipleOf may take",
            budget="max_states",
            limit=cap,
        ) from None


def zero_fraction(integers: Node) -> Node:
    """``integers`` also spelled with a zero fraction (``1.0``, ``-3.00``): the same values.

    >>> from fsm.automata import to_regex, lit
    >>> to_regex(zero_fraction(lit("12")))
    '12(?:\\\\.0{1,20})?'
    """
    if integers == NEVER:
        return NEVER
    return seq(integers, opt(seq(lit("."), rep(lit("0"), 1, ZERO_FRACTION_DIGITS))))
