"""JSON numbers spelled with an exponent (``1e2``, ``-2.50E-1``), by the value they parse to: one
character DFA built state by state, never a union over spellings.

A mantissa ``-?I(.F)?`` is read once, keeping what decides the value against the bounds: ``k``, the
place of its first significant digit (``12.5`` is 0.125 x 10^2: k = 2; ``0.003`` is 0.3 x 10^-2),
how its significant digits compare with each bound's (less, equal so far, greater), and, for
integers, ``g``, the exponent from which the value is whole (``1.25``: 2; ``1500``: -2). The
exponent ``E`` is then checked against a set of intervals: the value 0.D x 10^(k+E) lies above a
bound 0.T x 10^Q when k + E > Q, or k + E = Q and D > T. So an exponent never multiplies states
with the mantissa's digits; exponent digits past the last interval end fall into one tail state
(``1e999999`` costs what ``1e9`` does). The cost avoided: enumerating mantissa/exponent pairs, and
a counter per exponent value.

Bounds are exact decimals (the caller passes the thresholds a double comparison implies, see
`numbers.Bounds.double_bounds`, midpoints of up to hundreds of digits), rounded inwards to the
fewest digits within a few units in the last place: an exponent spelling a hair inside such a
midpoint is rejected, never one outside it accepted.

What is left out, so the states stay a few hundred: mantissas of over `MAX_MANTISSA_DIGITS` integer
or fraction digits. For whole numbers, whose states pair a digit count with ``g``: mantissas of over
`MAX_WHOLE_MANTISSA_DIGITS`; any but an integer (``150e-1``), ``d.ddd`` (``1.5e1``) or zero
(``0.5e1`` is left out); exponents beyond `SMALL_EXPONENT` after two or more integer digits
(``15e300``); a fraction only whole once rounded (``1.00000000000000001e0``). Each is rejected,
never accepted wrongly.

>>> from fractions import Fraction
>>> from fsm.automata import node_to_char_dfa
>>> d = node_to_char_dfa(exponent_numbers((Fraction(0), False), (Fraction(3), False), integral=False))
>>> [d.accepts(s) for s in ("2e0", "0.25E1", "3e-5", "3.1e0", "-1e-9", "0e99")]
[True, True, True, False, False, True]
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache

from .language import NEVER, Auto, Node
from .ranges import merge_adjacent

MAX_MANTISSA_DIGITS = 20  # integer digits, and fraction digits, of a mantissa
# of a whole number's mantissa: its states pair digit counts with trailing zeros (or the last
# nonzero fraction digit), quadratic in this cap
MAX_WHOLE_MANTISSA_DIGITS = 12
THRESHOLD_DIGITS = 20  # a bound's significant digits compared (more: rounded inwards)
# a nonzero value below 10^UNDERFLOW parses to 0.0 (the least subnormal double is 4.9e-324, and
# anything under half of it rounds to zero): a whole number
UNDERFLOW = -324
INF = math.inf
# whole numbers written with more than one mantissa digit take exponents up to this magnitude (never
# near overflow or underflow: the exponent set then depends on trailing zeros, not on k)
SMALL_EXPONENT = 99

Bound = tuple[Fraction, bool] | None  # (value, strict) or none


def _digits(x: Fraction, up: bool) -> tuple[str, int, bool]:
    """``x > 0`` as ``0.T x 10^Q`` (T without trailing zeros), rounded upwards (``up``) or downwards
    to the fewest digits that move it by at most a few units in the last place of a double (a
    subnormal's: any), so the digit comparison is short; the flag says whether it was rounded."""
    q = 0
    while x >= 1:
        x /= 10
        q += 1
    while x < Fraction(1, 10):
        x *= 10
        q -= 1
    for digits in range(1, THRESHOLD_DIGITS + 1):
        scaled = x * 10**digits
        n = math.ceil(scaled) if up else math.floor(scaled)
        if abs(n - scaled) <= scaled / 2**50 or q < -300 or digits == THRESHOLD_DIGITS:
            break
    rounded = n != scaled
    if n == 10**digits:  # rounded up to 1.0 x 10^q
        return "1", q + 1, rounded
    return str(n).rjust(digits, "0").rstrip("0"), q, rounded


class _Threshold:
    """One bound on a magnitude: ``0.T x 10^Q`` and whether the magnitude may equal it."""

    def __init__(self, x: Fraction, strict: bool, lower: bool):
        self.t, self.q, rounded = _digits(x, up=lower)
        self.strict = strict and not rounded  # rounded inwards: equality is already inside

    def step(self, c: object, d: int) -> object:
        """The comparison of the significant digits read so far after one more, ``d``."""
        if not isinstance(c, int):
            return c
        if c >= len(self.t):
            return "gt" if d else c
        t = int(self.t[c])
        return c + 1 if d == t else ("gt" if d > t else "lt")

    def order(self, c: object) -> int:
        """-1, 0 or 1: the digits read against T at the end of the mantissa."""
        if isinstance(c, int):
            return 0 if c >= len(self.t) else -1
        return 1 if c == "gt" else -1


def _magnitude(lower: Bound, upper: Bound) -> tuple[_Threshold | None, _Threshold | None] | None:
    """Thresholds for a nonzero magnitude between ``lower`` and ``upper``; None when none is."""
    lo = hi = None
    if lower is not None and lower[0] > 0:  # else any nonzero magnitude is above it
        lo = _Threshold(lower[0], lower[1], lower=True)
    if upper is not None:
        if upper[0] <= 0:
            return None
        hi = _Threshold(upper[0], upper[1], lower=False)
    return lo, hi


def _zero_ok(lower: Bound, upper: Bound) -> bool:
    if lower is not None and (lower[0] > 0 or (lower[0] == 0 and lower[1])):
        return False
    return upper is None or upper[0] > 0 or (upper[0] == 0 and not upper[1])


def _neg(b: Bound) -> Bound:
    return None if b is None else (-b[0], b[1])


def _clip(s: list[tuple[float, float]], lo: float, hi: float) -> list[tuple[float, float]]:
    out = [(max(a, lo), min(b, hi)) for a, b in s]
    return [(a, b) for a, b in out if a <= b]


class _Builder:
    def __init__(self, integral: bool):
        self.integral = integral
        self.cap = MAX_WHOLE_MANTISSA_DIGITS if integral else MAX_MANTISSA_DIGITS
        self.ids: dict[object, int] = {}
        self.todo: list[tuple[object, object]] = []
        self.edges: list[list[tuple[int, int, int]]] = []
        self.accepting: list[bool] = []

    def state(self, key: object, rep: object, accept: bool) -> int:
        """The id of the state ``key`` (``rep`` is what its transitions are computed from)."""
        i = self.ids.get(key)
        if i is None:
            i = self.ids[key] = len(self.edges)
            self.edges.append([])
            self.accepting.append(accept)
            self.todo.append((i, rep))
        return i


@lru_cache(maxsize=256)  # the same bounds recur across a schema's properties and across schemas
def exponent_numbers(lower: Bound, upper: Bound, integral: bool) -> Node:
    """JSON numbers with an exponent whose exact value lies within ``lower``/``upper`` (each
    ``(Fraction, strict)`` or None) and, if ``integral``, is whole or underflows to 0.0.

    >>> from fractions import Fraction
    >>> from fsm.automata import node_to_char_dfa
    >>> d = node_to_char_dfa(exponent_numbers(None, (Fraction(10**308), False), integral=True))
    >>> [d.accepts(s) for s in ("1e2", "1E+2", "1.5e1", "150e-1", "1e+308", "1.5e0", "2e308", "1e-400")]
    [True, True, True, True, True, False, False, True]
    """
    pos = _magnitude(lower, upper)
    neg = _magnitude(_neg(upper), _neg(lower))
    zero = _zero_ok(lower, upper)
    if pos is None and neg is None and not zero:
        return NEVER
    b = _Builder(integral)
    b.state("start", ("start",), False)
    while b.todo:
        i, rep = b.todo.pop()
        row = b.edges[i]
        for lo_c, hi_c in ((45, 45), (46, 46), (48, 57), (69, 69), (101, 101), (43, 43)):
            for ch in range(lo_c, hi_c + 1):
                nxt = _step(b, rep, chr(ch), pos, neg, zero)
                if nxt is not None:
                    row.append((ch, ch, nxt))
    edges = tuple(tuple(merge_adjacent(sorted(r))) for r in b.edges)
    return Auto(edges, tuple(b.accepting))


def _step(b: _Builder, rep: tuple, ch: str, pos, neg, zero: bool) -> int | None:
    """The state after ``ch`` from the state ``rep`` (None: no number continues so)."""
    kind = rep[0]
    if kind == "start":
        if ch == "-":
            return b.state(("sign", "-"), ("sign", "-"), False)
        rep, kind = ("sign", "+"), "sign"
    if kind == "sign":
        th = neg if rep[1] == "-" else pos
        if ch == "0":
            return b.state(("z", rep[1], None), ("z", rep[1], th, None), False)
        return _mantissa(b, rep[1], th, int(ch), None) if ch.isdigit() else None
    if kind == "z":  # only zeros so far: z None after "0", -1 after "0.", else fraction zeros read
        _, s, th, z = rep
        if ch in "eE" and z != -1:
            return _exponent_start(b, _zero_set(zero))
        if ch == "." and z is None:
            return b.state(("z", s, -1), ("z", s, th, -1), False)
        if ch.isdigit() and z is not None:
            z = max(z, 0)
            if ch != "0":  # whole numbers are not written 0.5e1 here (see `exponent_numbers`)
                return None if b.integral else _mantissa(b, s, th, int(ch), -z)
            if z + 1 > MAX_MANTISSA_DIGITS:
                return None
            return b.state(("z", s, z + 1), ("z", s, th, z + 1), False)
        return None
    if kind == "m":
        return _mantissa_step(b, rep, ch)
    if kind == "dotm":
        if ch.isdigit():
            _, s, th, _, k, _, g, cl, chh = rep[1]
            return _mantissa_step(b, ("m", s, th, True, k, 0, g, cl, chh), ch)
        return None
    return _exponent_step(b, rep, ch)


def _zero_set(zero: bool) -> tuple:
    return ((-INF, INF),) if zero else ()


def _mantissa(b: _Builder, s: str, th, d: int, k: int | None) -> int | None:
    """The state after the first significant digit ``d``; ``k`` None: an integer digit."""
    if th is None:
        return None
    lo, hi = th
    cl = None if lo is None else lo.step(0, d)
    chh = None if hi is None else hi.step(0, d)
    if k is None:  # ("m", sign, th, in fraction, k, fraction digits, g, cmp lower, cmp upper)
        return _m(b, ("m", s, th, False, 1, 0, 0, cl, chh))
    return _m(b, ("m", s, th, True, k, 1 - k, 1 - k, cl, chh))


def _m(b: _Builder, rep: tuple) -> int:
    _, s, th, frac, k, j, g, cl, chh = rep
    if b.integral and not frac and k > 1:  # exponents within +-SMALL_EXPONENT only: a comparison
        # no such exponent can reach (k + E = Q) is dropped, or it would double the states
        lo, hi = th
        cl = cl if lo is None or _reachable(lo.q, k, b.cap) else "lt"
        chh = chh if hi is None or _reachable(hi.q, k, b.cap) else "lt"
        rep = ("m", s, th, frac, k, j, g, cl, chh)
    key = ("m", s, frac, k, j if b.integral else min(j, 1), g if b.integral else 0, cl, chh)
    return b.state(key, rep, False)


def _reachable(q: int, k: int, cap: int) -> bool:
    """Whether a mantissa of ``k`` to ``cap`` integer digits meets ``k + E = q`` with a small ``E``."""
    return q - cap <= SMALL_EXPONENT and q - k >= -SMALL_EXPONENT


def _mantissa_step(b: _Builder, rep: tuple, ch: str) -> int | None:
    _, s, th, frac, k, j, g, cl, chh = rep
    lo, hi = th
    if ch.isdigit():
        d = int(ch)
        cl = None if lo is None else lo.step(cl, d)
        chh = None if hi is None else hi.step(chh, d)
        if frac:
            if b.integral and j >= b.cap:  # j decides g; else it is not kept
                return None
            j += 1
            if d and g < j:
                g = j
        else:
            if k >= b.cap:
                return None
            k += 1
            g = 0 if d else g - 1
        return _m(b, ("m", s, th, frac, k, j, g, cl, chh))
    if ch == "." and not frac and (k == 1 or not b.integral):
        return b.state(("dot", s, k, g, cl, chh), ("dotm", rep), False)
    if ch in "eE" and (not frac or j > 0):
        return _exponent_start(b, _exponent_set(b, rep))
    return None


def _exponent_set(b: _Builder, rep: tuple) -> tuple:
    """The exponents that put this mantissa's value within its thresholds (and whole)."""
    _, _, th, frac, k, _, g, cl, chh = rep
    lo, hi = th
    e_lo, e_hi = -INF, INF
    if lo is not None:
        o = lo.order(cl)
        e_lo = lo.q - k + (0 if o > 0 or (o == 0 and not lo.strict) else 1)
    if hi is not None:
        o = hi.order(chh)
        e_hi = hi.q - k - (0 if o < 0 or (o == 0 and not hi.strict) else 1)
    s_ = [(e_lo, e_hi)]
    if b.integral:  # whole from g on, or a value under 10^UNDERFLOW (0.0)
        s_ = _clip(s_, g, INF) + _clip(s_, -INF, UNDERFLOW - k)
        if k > 1 and not frac:  # 150e-1: the exponent in -99..99 need not be paired with k
            s_ = _clip(s_, -SMALL_EXPONENT, SMALL_EXPONENT)
    return tuple(sorted(s_))


def _exponent_start(b: _Builder, sset: tuple) -> int:
    return b.state(("e", sset), ("e", sset), False)


def _side(sset: tuple, sign: int) -> tuple:
    """``sset`` (exponent intervals) seen as magnitudes of one sign: intervals over x >= 0."""
    if sign > 0:
        return tuple(_clip(list(sset), 0, INF))
    return tuple(sorted((-b_, -a) for a, b_ in _clip(list(sset), -INF, 0)))


def _residual(side: tuple, p: int) -> tuple:
    """What decides the exponent digits after a prefix of value ``p`` >= 1: for each further digit
    count, the part of ``side`` in reach, shifted; past the last finite end, one flag."""
    ends = [v for iv in side for v in iv if v != INF]
    top = max(ends, default=-1)
    key = []
    r = 0
    while True:
        base = p * 10**r
        if base > top:
            key.append(("tail", any(b_ == INF and a <= base for a, b_ in side)))
            return tuple(key)
        span = 10**r
        key.append(tuple((a - base, b_ - base) for a, b_ in _clip(list(side), base, base + span - 1)))
        r += 1


def _exponent_step(b: _Builder, rep: tuple, ch: str) -> int | None:
    kind = rep[0]
    if kind == "e":
        sset = rep[1]
        if ch in "+-":
            side = _side(sset, 1 if ch == "+" else -1)
            return b.state(("es", side), ("x", side, 0, False), False)
        rep = ("x", _side(sset, 1), 0, False)
        kind = "x"
    if kind == "x" and ch.isdigit():
        _, side, p, _read = rep
        p = p * 10 + int(ch)
        accept = any(a <= p <= b_ for a, b_ in side)
        if p == 0:
            return b.state(("x0", side), ("x", side, 0, True), accept)
        return b.state(("x", _residual(side, p), accept), ("x", side, p, True), accept)
    return None
