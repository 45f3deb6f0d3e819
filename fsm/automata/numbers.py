"""Exact automata for JSON numbers: digit-range trees for bounds (``multipleOf``: `multiples`).

Bounds are honoured exactly, never by sampling. Integers get canonical JSON syntax (no leading
zeros, no exponent); a ``number`` with bounds is written without exponent, as an integer or as a
decimal with 1..`MAX_FRACTION_DIGITS` fraction digits. A decimal is compared the way validators
compare it: as the double it parses to, so the decimal bounds are the nearest doubles inside the
bound (``exclusiveMaximum: 1`` admits ``0.99999999999999994`` only if its double is below 1).

Unbounded sides stop at `MAX_INTEGER_DIGITS` integer digits, so a model cannot run on forever
emitting digits; an unconstrained ``number`` also allows a fraction and an exponent of up to
`MAX_EXPONENT_DIGITS` digits.

>>> import re
>>> from fsm.automata import to_regex
>>> rx = to_regex(integer_range(-5, 12))
>>> [bool(re.fullmatch(rx, s)) for s in ["-5", "-6", "0", "12", "13", "007"]]
[True, False, True, True, False, False]
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

from .language import EMPTY, NEVER, Auto, Node, alt, cls, lit, opt, rep, seq
from .ranges import merge_adjacent

MAX_INTEGER_DIGITS = 20
MAX_FRACTION_DIGITS = 20
MAX_EXPONENT_DIGITS = 3

DIGIT = cls((48, 57))
NONZERO = cls((49, 57))


def _digits(a: int, b: int) -> Node:
    return cls((48 + a, 48 + b))


# Past this many digits a range is one flat automaton (`_range_automaton`), not a tree: the tree
# nests a node per digit, and a bound such as ``maximum: 1e200`` (a 201-digit integer that is not
# round) nested it deeper than the translation's recursive passes and the nodes' hashes can go.
_TREE_DIGITS = 32


def _same_length(lo: str, hi: str) -> Node:
    """Digit strings of equal length between ``lo`` and ``hi`` (leading zeros are the caller's business)."""
    if lo == hi:
        return lit(lo)
    if len(lo) > _TREE_DIGITS:
        return _range_automaton(lo, hi)
    i = 0
    while lo[i] == hi[i]:
        i += 1
    prefix, a, b, ra, rb = lo[:i], int(lo[i]), int(hi[i]), lo[i + 1 :], hi[i + 1 :]
    n = len(ra)
    zeros, nines = "0" * n, "9" * n
    parts = []
    start, end = a, b
    if ra != zeros:
        parts.append(seq(lit(str(a)), _same_length(ra, nines)))
        start = a + 1
    tail = None
    if rb != nines:
        tail = seq(lit(str(b)), _same_length(zeros, rb))
        end = b - 1
    if start <= end:
        parts.append(seq(_digits(start, end), rep(DIGIT, n, n)))
    if tail is not None:
        parts.append(tail)
    return seq(lit(prefix), alt(*parts))


def _range_automaton(lo: str, hi: str) -> Auto:
    """`_same_length` as a character DFA: at each position the text so far is equal to ``lo``'s
    prefix, to ``hi``'s, to both, or strictly between (then any digit follows) — at most four states
    a digit, however long the bound.

    >>> from fsm.automata import node_to_char_dfa
    >>> d = node_to_char_dfa(_range_automaton("0" * 40 + "17", "0" * 40 + "42"))
    >>> [d.accepts("0" * 40 + x) for x in ("16", "17", "30", "42", "43")]
    [False, True, True, True, False]
    """
    n = len(lo)
    ids: dict[tuple[int, bool, bool], int] = {}
    edges: list[list[tuple[int, int, int]]] = []

    def state(i: int, at_lo: bool, at_hi: bool) -> int:
        key = (n, False, False) if i == n else (i, at_lo, at_hi)  # one accepting state
        q = ids.get(key)
        if q is None:
            q = ids[key] = len(edges)
            edges.append([])
        return q

    todo = [(0, True, True)]
    state(0, True, True)
    while todo:
        i, at_lo, at_hi = todo.pop()
        a, b = int(lo[i]) if at_lo else 0, int(hi[i]) if at_hi else 9
        row = edges[ids[i, at_lo, at_hi]]
        for d in range(a, b + 1):  # a digit equal to a tight bound's keeps the text on that bound
            key = (i + 1, at_lo and d == a, at_hi and d == b)
            if i + 1 < n and key not in ids:
                todo.append(key)
            row.append((48 + d, 48 + d, state(*key)))
    accepting = [False] * len(edges)
    accepting[ids[n, False, False]] = True
    return Auto(tuple(tuple(merge_adjacent(sorted(r))) for r in edges), tuple(accepting))


# exact mode's unbounded integers have 400 digits, a loop over each length: a bundled schema asks
# for the same few ranges (every "type": "integer") thousands of times
@functools.lru_cache(maxsize=1024)
def natural_range(lo: int, hi: int | None, max_digits: int = MAX_INTEGER_DIGITS) -> Node:
    """Canonical decimal naturals in ``lo..hi`` (``hi=None``: up to ``max_digits`` digits).

    >>> from fsm.automata import to_regex
    >>> to_regex(natural_range(0, 255))
    '1[0-9]{2}|2(?:[0-4][0-9]|5[0-5])|[1-9][0-9]|[0-9]'
    """
    lo = max(lo, 0)
    if hi is None:
        hi = 10 ** max(max_digits, len(str(lo))) - 1
    if lo > hi:
        return NEVER
    parts = []
    full_from = full_to = None  # lengths whose whole range is inside lo..hi: one node for all
    for length in range(len(str(lo)), len(str(hi)) + 1):
        first = 0 if length == 1 else 10 ** (length - 1)
        a, b = max(lo, first), min(hi, 10**length - 1)
        if a > b:
            continue
        if a == first and b == 10**length - 1 and length > 1:
            if full_from is None:
                full_from = length
            full_to = length
            continue
        parts.append((length, _same_length(str(a), str(b))))
    if full_from is not None:
        parts.append((full_from, seq(NONZERO, rep(DIGIT, full_from - 1, full_to - 1))))
    # longer numbers first: a leftmost-first regex engine (Python's, lark's lexer) then takes the whole number
    return alt(*(p for _, p in sorted(parts, key=lambda p: -p[0])))


def integer_range(lo: int | None, hi: int | None, max_digits: int = MAX_INTEGER_DIGITS) -> Node:
    """Canonical JSON integers in ``lo..hi`` (None: unbounded, up to ``max_digits`` digits).

    >>> from fsm.automata import node_to_char_dfa
    >>> d = node_to_char_dfa(integer_range(-5, 12))
    >>> [d.accepts(s) for s in ("-5", "12", "13", "-0", "007")]
    [True, True, False, False, False]
    """
    if lo is None and hi is None and max_digits >= 1:
        # the common unbounded case, its two signs one digit chain: half the NFA states of the union
        return alt(seq(opt(lit("-")), NONZERO, rep(DIGIT, 0, max_digits - 1)), lit("0"))
    parts = []
    if lo is None or lo < 0:
        neg_lo = 1 if hi is None or hi >= 0 else -hi
        neg_hi = None if lo is None else -lo
        parts.append(seq(lit("-"), natural_range(neg_lo, neg_hi, max_digits)))
    if hi is None or hi >= 0:
        parts.append(natural_range(0 if lo is None else max(lo, 0), hi, max_digits))
    return alt(*parts)


def _fraction(lo: str, hi: str, need_one: bool) -> Node:
    """Fraction digits (at most len(lo)) whose zero-padded value lies in ``lo..hi``."""
    n = len(lo)
    if n == 0:
        return NEVER if need_one else EMPTY
    zeros, nines = "0" * n, "9" * n
    if lo == zeros and hi == nines:
        return rep(DIGIT, 1 if need_one else 0, n)
    opts = []
    if not need_one and lo == zeros:
        opts.append(EMPTY)  # stopping here pads with zeros, which is >= lo
    a, b = int(lo[0]), int(hi[0])
    if a == b:
        opts.append(seq(lit(lo[0]), _fraction(lo[1:], hi[1:], False)))
    else:
        opts.append(seq(lit(lo[0]), _fraction(lo[1:], "9" * (n - 1), False)))
        if a + 1 <= b - 1:
            opts.append(seq(_digits(a + 1, b - 1), rep(DIGIT, 0, n - 1)))
        opts.append(seq(lit(hi[0]), _fraction("0" * (n - 1), hi[1:], False)))
    return alt(*opts)


def _nonneg_decimal(
    lo: Fraction, hi: Fraction | None, lo_strict: bool, hi_strict: bool, frac_digits: int, max_digits: int
) -> Node:
    """Decimals ``I.f`` (1..frac_digits fraction digits) with lo <(=) value <(=) hi, lo >= 0."""
    scale = 10**frac_digits
    a = math.floor(lo * scale) + 1 if lo_strict else math.ceil(lo * scale)
    b = None
    if hi is not None:
        b = math.ceil(hi * scale) - 1 if hi_strict else math.floor(hi * scale)
    if b is not None and a > b:
        return NEVER
    ia, fa = divmod(a, scale)
    fa_s = str(fa).zfill(frac_digits)
    any_frac = rep(DIGIT, 1, frac_digits)
    if b is None:
        return alt(
            seq(lit(str(ia)), lit("."), _fraction(fa_s, "9" * frac_digits, True)),
            seq(natural_range(ia + 1, None, max_digits), lit("."), any_frac),
        )
    ib, fb = divmod(b, scale)
    fb_s = str(fb).zfill(frac_digits)
    if ia == ib:
        return seq(lit(str(ia)), lit("."), _fraction(fa_s, fb_s, True))
    parts = [seq(lit(str(ia)), lit("."), _fraction(fa_s, "9" * frac_digits, True))]
    if ia + 1 <= ib - 1:
        parts.append(seq(natural_range(ia + 1, ib - 1, max_digits), lit("."), any_frac))
    parts.append(seq(lit(str(ib)), lit("."), _fraction("0" * frac_digits, fb_s, True)))
    return alt(*parts)


def decimal_range(
    lo: Fraction | None,
    hi: Fraction | None,
    lo_strict: bool = False,
    hi_strict: bool = False,
    frac_digits: int = MAX_FRACTION_DIGITS,
    max_digits: int = MAX_INTEGER_DIGITS,
) -> Node:
    """Exponent-free decimals (with a fraction part) whose exact value lies between ``lo`` and ``hi``."""
    parts = []
    if hi is None or hi >= 0:
        if lo is None or lo < 0:
            parts.append(_nonneg_decimal(Fraction(0), hi, False, hi_strict, frac_digits, max_digits))
        else:
            parts.append(_nonneg_decimal(lo, hi, lo_strict, hi_strict, frac_digits, max_digits))
    if lo is None or lo < 0:
        if hi is None or hi >= 0:
            neg_lo, neg_lo_strict = Fraction(0), False  # "-0.0" is zero, inside the range
        else:
            neg_lo, neg_lo_strict = -hi, hi_strict
        neg_hi = None if lo is None else -lo
        parts.append(
            seq(lit("-"), _nonneg_decimal(neg_lo, neg_hi, neg_lo_strict, lo_strict, frac_digits, max_digits))
        )
    return alt(*parts)


# ---------------------------------------------------------------------------------------------
# Bounds as validators apply them


def _exact(x) -> Fraction:
    if isinstance(x, float) and not math.isfinite(x):
        raise ValueError(f"bound {x!r} is not a finite number")
    return Fraction(x)


_MAX_DOUBLE = 1.7976931348623157e308


def _decimal_floor(x: Fraction, strict: bool) -> tuple[Fraction, bool] | None:
    """A decimal threshold t such that every decimal d > t parses to a double >= x (> x if strict).

    It is the midpoint below the smallest qualifying double: decimals above it round to that
    double or higher. None: no double qualifies.
    """
    if x > _MAX_DOUBLE or (strict and x == _MAX_DOUBLE):
        return None
    if x < -_MAX_DOUBLE:
        return (Fraction(-_MAX_DOUBLE), False)
    f = float(x)
    while Fraction(f) < x or (strict and Fraction(f) == x):
        f = math.nextafter(f, math.inf)
    while True:  # the smallest qualifying double
        p = math.nextafter(f, -math.inf)
        if Fraction(p) > x or (not strict and Fraction(p) == x):
            f = p
        else:
            break
    p = math.nextafter(f, -math.inf)
    if math.isinf(p):
        return (Fraction(f), False)
    return ((Fraction(p) + Fraction(f)) / 2, True)


class Bounds:
    """Lower/upper numeric bounds, each ``(value, exclusive)`` or None, from any draft's keywords."""

    def __init__(self, lower=None, upper=None):
        self.lower = lower
        self.upper = upper

    def tighten_lower(self, value, exclusive: bool) -> None:
        v = _exact(value)
        if self.lower is None or v > self.lower[0] or (v == self.lower[0] and exclusive):
            self.lower = (v, exclusive)

    def tighten_upper(self, value, exclusive: bool) -> None:
        v = _exact(value)
        if self.upper is None or v < self.upper[0] or (v == self.upper[0] and exclusive):
            self.upper = (v, exclusive)

    def integer_bounds(self) -> tuple[int | None, int | None]:
        lo = hi = None
        if self.lower is not None:
            v, ex = self.lower
            lo = math.floor(v) + 1 if ex and v == math.floor(v) else math.ceil(v)
        if self.upper is not None:
            v, ex = self.upper
            hi = math.ceil(v) - 1 if ex and v == math.ceil(v) else math.floor(v)
        return lo, hi

    def double_bounds(self):
        """Exact decimal thresholds ``(lo, lo_strict, hi, hi_strict)`` whose decimals parse to doubles
        satisfying the bounds; None when no double does."""
        lo = hi = None
        lo_strict = hi_strict = False
        if self.lower is not None:
            r = _decimal_floor(*self.lower)
            if r is None:
                return None
            lo, lo_strict = r
        if self.upper is not None:
            r = _decimal_floor(-self.upper[0], self.upper[1])
            if r is None:
                return None
            hi, hi_strict = -r[0], r[1]
        return lo, lo_strict, hi, hi_strict

    @property
    def bounded(self) -> bool:
        return self.lower is not None or self.upper is not None


def integer_node(bounds: Bounds, max_digits: int = MAX_INTEGER_DIGITS) -> Node:
    """Canonical JSON integers within ``bounds``.

    >>> from fsm.automata import node_to_char_dfa
    >>> d = node_to_char_dfa(integer_node(Bounds()))
    >>> d.accepts("-12"), d.accepts("1.0")
    (True, False)
    """
    lo, hi = bounds.integer_bounds()
    if lo is not None and hi is not None and lo > hi:
        return NEVER
    return integer_range(lo, hi, max_digits)


def number_node(
    bounds: Bounds, max_digits: int = MAX_INTEGER_DIGITS, frac_digits: int = MAX_FRACTION_DIGITS
) -> Node:
    """JSON numbers within ``bounds``; with no bounds, the full compact syntax (digit counts capped).

    >>> import re
    >>> from fsm.automata import to_regex
    >>> b = Bounds(); b.tighten_lower(0, True); b.tighten_upper(1, False)
    >>> rx = to_regex(number_node(b, frac_digits=3))
    >>> [bool(re.fullmatch(rx, s)) for s in ["0", "0.0", "0.001", "1", "1.0", "1.001", "0.5"]]
    [False, False, True, True, True, False, True]
    """
    if not bounds.bounded:
        integer = seq(opt(lit("-")), alt(lit("0"), seq(NONZERO, rep(DIGIT, 0, max_digits - 1))))
        fraction = opt(seq(lit("."), rep(DIGIT, 1, frac_digits)))
        exponent = opt(
            seq(cls((69, 69), (101, 101)), opt(cls((43, 43), (45, 45))), rep(DIGIT, 1, MAX_EXPONENT_DIGITS))
        )
        return seq(integer, fraction, exponent)
    ints = integer_node(bounds, max_digits)
    db = bounds.double_bounds()
    if db is None:
        return ints
    lo, lo_strict, hi, hi_strict = db
    if lo is not None and hi is not None and lo > hi:
        return ints
    return alt(decimal_range(lo, hi, lo_strict, hi_strict, frac_digits, max_digits), ints)
