"""Number and integer languages: bounds (draft-4 boolean exclusives included) and ``multipleOf``, integral
or decimal (the decimal the schema wrote: ``0.01`` is 1/100), by its arithmetic (`fsm.automata.multiples`).

>>> from fsm.automata import to_regex
>>> to_regex(number_language(None, [Loc({"minimum": 0, "maximum": 3}, "", "")], True))
'[0-3]'
"""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction

from ..automata import (
    MAX_INTEGER_DIGITS,
    NEVER,
    And,
    Bounds,
    Multiples,
    Node,
    TooManyRemainders,
    alt,
    cls,
    divisible_decimals,
    divisible_integers,
    integer_node,
    integer_range,
    integer_residues,
    lit,
    non_multiples,
    number_node,
    opt,
    rep,
    seq,
)
from ..automata.exponents import exponent_numbers
from ..errors import SchemaError, SchemaTooComplex
from .context import Context, Loc
from .keywords import num

# a multipleOf's remainder automaton (the divisor's part prime to 10) may have this many states
MAX_REMAINDER_STATES = 100_000
# ... and is built whole up to this many, past it run lazily (`automata.remainders`) where the lazy
# DFA runs the schema: its product with the bounds' automaton grows with both (multipleOf 997 in
# exact mode: 4.9 s to the first mask built whole, 0.01 s lazily; 97: 0.7 s and 0.01 s)
EAGER_REMAINDER_STATES = 1_000
ZERO_FRACTION_DIGITS = 20  # as many as any other fraction gets (automata.numbers.MAX_FRACTION_DIGITS)
_DIGIT, _NONZERO = cls((48, 57)), cls((49, 57))
# significant digits a decimal may have and still parse to a non-integral double: with m < 10^15
# (its digits) and a last digit worth 10^k < 1, the nearest integer is at least 10^k away and the
# double at most |d| * 2^-53 < 10^k / 9 (17 digits would let 15512195914255733.7 parse to an integer)
SIGNIFICANT_DIGITS = 15
# leading fraction zeros: 1e-300 is still a nonzero double (1e-400 parses to 0.0, an integer)
_LEADING_ZEROS = 300
# negated divisors one remainder block takes (its liveness counts 2^n congruences per progression)
_MAX_NEGATED = 10
_ANY_INTEGER = seq(opt(lit("-")), alt(lit("0"), seq(_NONZERO, rep(_DIGIT, 0, None))))
# an integer of at most SIGNIFICANT_DIGITS digits: its double is itself
_SHORT_INTEGER = seq(opt(lit("-")), rep(_DIGIT, 1, SIGNIFICANT_DIGITS))
_ZEROS = seq(lit("."), rep(lit("0"), 1, ZERO_FRACTION_DIGITS))  # a zero fraction: .0 to .000...


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
    b = number_bounds(schemas)
    divisors: list[tuple[Fraction, Loc]] = []
    for f in schemas:
        s = f.schema
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
    # a negated multipleOf: the integers that are not multiples
    negated = {
        (f.excluded.multiple, type(f.excluded.multiple)): f
        for f in schemas
        if f.excluded is not None and f.excluded.multiple
    }
    integral = integer or (divisors and all(q.denominator == 1 for q, _ in divisors))
    if non_integral and integral:
        return NEVER
    if integral:
        # an integer is a multiple of p/q (lowest terms) when it is one of p
        ms = {q.numerator: f for q, f in divisors if q.numerator != 1}
        if negated:
            # no digit count to pair with the remainders: every length past the bounds' own; no
            # zero-fraction spelling: a long one may parse to a multiple's double
            return _integers_outside(t, ms, negated, uncapped_integers(b) if b.bounded else _ANY_INTEGER)
        node = integer_node(b, number_digits(t, divisors))
        extra = [_multiples(t, m, 0, f) for m, f in sorted(ms.items())]
        # divisors with too many remainders to build: one lazy remainder block for their lcm
        big = math.lcm(*[m for m, e in zip(sorted(ms), extra, strict=True) if e is None])
        extra = [e for e in extra if e is not None]
        node = And((node, *extra)) if extra and node != NEVER else node
        # draft 4's integer type is the numbers written without a fraction (1.0 is not one)
        draft4 = integer and t is not None and t.draft <= 4
        if t is None or not t.policy.number_spellings or draft4:
            return _lazy_multiples(node, big, 0)
        # a fraction makes the validator read a double: past 15 digits it may round to a value the
        # bounds or the divisors judge otherwise (9007199254740993.0 is 2^53, no multiple of 3)
        node = exact_zero_fraction(node) if ms or b.bounded else zero_fraction(node)
        if t.regex_text or ms:  # as regex text the exponent automaton's few hundred states take megabytes
            return _lazy_multiples(node, big, 0)
        # exponent spellings (1e2, 1.5E+1) of a multiple of every divisor: all integers when each is 1/n
        return alt(node, _exponents(b, True))
    node = number_node(b, number_digits(t, divisors or negated))
    plain = b.bounded and not divisors and not negated and not non_integral
    if t is not None and not t.regex_text and plain and (t.policy.number_spellings or node == NEVER):
        # exact mode's exponent spellings (unbounded, `number_node` spells them itself); in the
        # default one, those of a range no decimal of the fraction digits written reaches
        # ([1e-60, 1e-57]): refused as empty before
        node = alt(node, _exponents(b, False))
    if node == NEVER:
        return node
    scales = [_decimal_places(q.denominator) for q, _ in divisors]
    mults = [
        _multiples(t, q.numerator * 10**s // q.denominator, s, f)
        for (q, f), s in zip(divisors, scales, strict=True)
    ]

    def multiples(*more: Node) -> Node:
        """``node`` and ``more``, the multiples of every divisor; a divisor with too many remainders
        to build puts all of them in one lazy remainder block (the lcm at the finest scale)."""
        if None not in mults:
            return And((node, *more, *mults)) if more or mults else node
        top = max(scales)
        big = math.lcm(*[int(q * 10**top) for q, _ in divisors])
        return _lazy_multiples(And((node, *more)) if more else node, big, top)

    if negated:
        # a non-integral number is no multiple of an integer; an integral one is one the integers'
        # language keeps. Two products, not one over their union: a fraction's digit count never
        # meets the remainders. A negated integer type beside it leaves no integer at all
        fractions = multiples(NON_INTEGRAL)
        if non_integral:
            return fractions
        whole = {q.numerator: f for q, f in divisors if q.numerator != 1}
        ints = _integers_outside(t, whole, negated, uncapped_integers(b) if b.bounded else _ANY_INTEGER)
        return alt(ints, fractions)
    return multiples(NON_INTEGRAL) if non_integral else multiples()


# whole exponent spellings stay below 1e308 (as the integers written out do, `EXACT_INTEGER_DIGITS`):
# 1.5e308 is a finite double, but a cap of 1.797...e308 would double the mantissa's states
_MAX_WHOLE = Fraction(10**308)


def _exponents(b: Bounds, integral: bool) -> Node:
    """The exponent spellings within ``b`` (and whole, finite if ``integral``: ``1e400`` parses to
    infinity, no integer), compared as the double they parse to (`Bounds.double_bounds`)."""
    db = b.double_bounds()
    if db is None:
        return NEVER
    lo, lo_strict, hi, hi_strict = db
    lower = None if lo is None else (lo, lo_strict)
    upper = None if hi is None else (hi, hi_strict)
    if integral:
        if upper is None or upper[0] > _MAX_WHOLE:
            upper = (_MAX_WHOLE, False)
        if lower is None or lower[0] < -_MAX_WHOLE:
            lower = (-_MAX_WHOLE, False)
    return exponent_numbers(lower, upper, integral)


def number_bounds(schemas: list[Loc]) -> Bounds:
    """The bounds every schema in ``schemas`` sets (draft 4's boolean exclusives included).

    >>> number_bounds([Loc({"minimum": 2, "exclusiveMaximum": 5}, "", "")]).integer_bounds()
    (2, 4)
    """
    b = Bounds()
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
    return b


# integer digits of an unbounded side in exact mode, where a validator takes any length (a bignum):
# as many as a finite double holds, since a longer one with a fraction (zero-fraction spellings of
# integers included) parses to infinity, no integer (a long repeat is one counter block of the lazy DFA)
EXACT_INTEGER_DIGITS = 308


def number_digits(t: Context | None, multiples: object = None) -> int:
    """How many integer digits an open side allows: any a double holds in exact mode, else (and
    beside a multipleOf, whose remainder automaton multiplies with each digit position) the cap
    generation keeps (`automata.numbers.MAX_INTEGER_DIGITS`)."""
    exact = t is not None and t.policy.exact and not multiples
    return EXACT_INTEGER_DIGITS if exact else MAX_INTEGER_DIGITS


def uncapped_integers(b: Bounds) -> Node:
    """The integers within ``b``, of any length where a side is open: `integer_node` caps digits,
    and a digit count paired with a remainder automaton multiplies its states.

    >>> from fsm.automata import node_to_char_dfa
    >>> b = Bounds(); b.tighten_lower(-12, False)
    >>> d = node_to_char_dfa(uncapped_integers(b))
    >>> [d.accepts(s) for s in ("-12", "-13", "0", "1" + "0" * 30)]
    [True, False, True, True]
    """
    lo, hi = b.integer_bounds()
    if lo is not None and hi is not None:
        return integer_node(b)
    positive = seq(cls((49, 57)), rep(_DIGIT, 0, None))
    if hi is None and lo is not None:
        if lo > 0:
            k = len(str(lo))
            return alt(integer_range(lo, 10**k - 1), seq(_NONZERO, rep(_DIGIT, k, None)))
        return alt(seq(lit("-"), integer_range(1, -lo)) if lo < 0 else NEVER, lit("0"), positive)
    assert hi is not None  # b is bounded
    if hi < 0:
        k = len(str(-hi))
        return seq(lit("-"), alt(integer_range(-hi, 10**k - 1), seq(_NONZERO, rep(_DIGIT, k, None))))
    return alt(seq(lit("-"), positive), integer_range(0, hi))


def _integers_outside(t: Context, ms: dict[int, Loc], negated: dict, integers: Node) -> Node:
    """The ``integers`` that are multiples of every ``ms`` and of no ``negated`` divisor: one
    remainder automaton modulo their least common multiple when it is small, else a lazy remainder
    block (as regex text: one complement automaton per negated divisor)."""
    if integers == NEVER:
        return NEVER
    cap = MAX_REMAINDER_STATES if t is None else min(MAX_REMAINDER_STATES, t.budget().limits.max_states)
    pos = sorted(ms)
    negs = sorted({int(m) for m, _ in negated})
    lcm = math.lcm(*pos, *negs)
    if any(isinstance(m, float) for m, _ in negated):  # validators divide a float divisor's double
        integers = And((integers, _SHORT_INTEGER))
    lazy = t is None or not t.regex_text
    if lcm + 3 <= (EAGER_REMAINDER_STATES if lazy else cap // 4):
        residues = integer_residues(lcm, lambda r: all(r % p == 0 for p in pos) and all(r % n for n in negs))
        return And((integers, residues))
    if lazy and len(negs) <= _MAX_NEGATED:
        return Multiples(integers, math.lcm(*pos), 0, tuple(negs))
    parts = [_multiples(t, m, 0, f, lazy=False) for m, f in ms.items()]
    return And((integers, *parts, *[_non_multiples(t, m, f) for (m, _), f in negated.items()]))


def _non_multiples(t: Context, m: int | float, loc: Loc) -> Node:
    """The integers (no fraction spelled) that are not multiples of ``m``, within budget: of any
    length for an integer ``m`` (validators divide integers exactly), of at most
    `SIGNIFICANT_DIGITS` digits for a float one like ``7.0`` (they divide its double)."""
    cap = MAX_REMAINDER_STATES if t is None else min(MAX_REMAINDER_STATES, t.budget().limits.max_states)
    try:
        return non_multiples(int(m), cap, SIGNIFICANT_DIGITS if isinstance(m, float) else None)
    except TooManyRemainders as exc:
        raise SchemaTooComplex(
            f"not multipleOf at {loc.ptr or '/'} needs {exc} (remainders of {m:,} read digit by digit), "
            f"over the {cap:,} states a multipleOf may take",
            budget="max_states",
            limit=cap,
        ) from None


def _decimal_places(den: int) -> int:
    """The fraction digits of ``1/den`` for ``den`` a product of 2s and 5s (a written decimal's)."""
    scale = 0
    while 10**scale % den:
        scale += 1
    return scale


def _multiples(t: Context, m: int, scale: int, loc: Loc, lazy: bool = True) -> Node | None:
    """The multiples of ``m / 10^scale``, or None when a lazy remainder block should run them
    (``lazy`` and not regex text: over `EAGER_REMAINDER_STATES`, see `_lazy_multiples`);
    `SchemaTooComplex` when its remainder automaton is too big otherwise."""
    lazy = lazy and (t is None or not t.regex_text)
    cap = MAX_REMAINDER_STATES if t is None else min(MAX_REMAINDER_STATES, t.budget().limits.max_states)
    if lazy:
        cap = min(cap, EAGER_REMAINDER_STATES)
    try:
        return divisible_integers(m, cap) if scale == 0 else divisible_decimals(m, scale, cap)
    except TooManyRemainders as exc:
        if lazy:
            return None
        raise SchemaTooComplex(
            f"multipleOf at {loc.ptr or '/'} needs {exc} (remainders of {m:,} read digit by digit), "
            f"over the {cap:,} states a multipleOf may take",
            budget="max_states",
            limit=cap,
        ) from None


def _lazy_multiples(numbers: Node, m: int, scale: int) -> Node:
    """The words of ``numbers`` that are multiples of ``m / 10^scale`` (all of them for 1), by
    remainders the lazy DFA makes as the text reaches them (`automata.remainders`): the divisors
    whose remainder automaton is too big to build."""
    return numbers if (m == 1 and not scale) or numbers == NEVER else Multiples(numbers, m, scale)


def exact_zero_fraction(integers: Node) -> Node:
    """``integers`` also spelled with a zero fraction where that spelling parses to the same double:
    those of at most `SIGNIFICANT_DIGITS` digits (what bounds and divisors may then read exactly).

    >>> from fsm.automata import lit, to_regex
    >>> to_regex(exact_zero_fraction(lit("12"))).startswith("12")
    True
    """
    if integers == NEVER:
        return NEVER
    return alt(integers, seq(And((integers, _SHORT_INTEGER)), _ZEROS))


def zero_fraction(integers: Node) -> Node:
    """``integers`` also spelled with a zero fraction (``1.0``, ``-3.00``): the same values.

    >>> from fsm.automata import to_regex, lit
    >>> to_regex(zero_fraction(lit("12")))
    '12(?:\\\\.0{1,20})?'
    """
    if integers == NEVER:
        return NEVER
    return seq(integers, opt(_ZEROS))
