"""``multipleOf`` with a big divisor: a number language run beside the remainder of its value, as
virtual NFA states the lazy DFA makes only when a token walk reaches them.

The multiples of ``m / 10^scale`` are read by a remainder automaton of about ``m * (scale + 2)``
states (`multiples.divisible_decimals`); past ``10^5`` of them, intersected with the bounds' automaton,
that product is too big to build (``multipleOf: 0.123456789`` is 123,456,789 remainders). A
`Remainders` keeps the bounds' small DFA (the *unit*) and computes ``(unit state, phase,
remainder)`` states on demand. The cost it avoids is every remainder a text never reaches.

What keeps generation from a dead end is liveness by arithmetic: the block only leads to states from
which some completion is a multiple. For each unit state it gathers the values its completions add
(per count of integer digits still to come, as arithmetic progressions: a digit range over a full
block of lower digits is one progression) and counts the multiples in each by a linear congruence
(negated divisors, ``not: {multipleOf}``, by inclusion and exclusion over their multiples). A set of
more than `_MAX_PIECES` progressions keeps its largest ones: a state whose only multiples were in the
dropped ones is left out (fewer words, never a non-multiple, and never a state without a way on).

>>> from fsm.automata import node_to_char_dfa, number_node, Bounds
>>> unit = node_to_char_dfa(number_node(Bounds()))
>>> r = Remainders(unit, 123456789, 9)  # multipleOf 0.123456789
>>> r.live(r.key(0)), r.accepts_text("0.246913578"), r.accepts_text("0.2469135")
(True, True, False)
"""

from __future__ import annotations

from collections.abc import Iterator
from math import gcd, lcm

from ..errors import SpecTooComplex
from .blocks import LocalStates
from .char_dfa import CharDFA, Edge
from .language import Multiples

# remainder states up to which a plain DFA may expand the block (`divisible_decimals`' cap)
_EXPANDABLE = 100_000
# progressions kept per completion set: bound-shaped units need a handful, the cap bounds the rest
_MAX_PIECES = 48
# integer digits still to come that liveness looks at: a unit that loops on digits never runs out
_MAX_DIGITS = 400
_MINUS, _DOT, _ZERO, _NINE = 45, 46, 48, 57

# phases: before the sign, after it, integer digits, then fraction digit j at 3 + j (j <= scale),
# then the zeros past the scale (`zeros`)
_START, _SIGN, _INT = 0, 1, 2

Piece = tuple[int, int, int]  # (first, step, count): first + i * step for i < count


class NeedsLazyDfa(SpecTooComplex):
    """A remainder block outside the lazy DFA (a counter block's unit is built as a plain automaton:
    it then repeats its item in the lazy NFA instead)."""


def refuse_plain(node: Multiples, counters: object) -> None:
    """`NeedsLazyDfa` when no lazy DFA (``counters``) will run ``node``: a plain automaton would
    hold every remainder.

    >>> from fsm.automata import lit
    >>> refuse_plain(Multiples(lit("7"), 7, 0), object())
    """
    if counters is None:
        raise NeedsLazyDfa(
            f"multipleOf: the remainders of {node.m:,} read digit by digit are too many states for a plain "
            "automaton; only the lazy DFA of an index (fsm.compile) runs them",
            budget="max_states",
        )


def _merged(pieces: list[Piece]) -> tuple[Piece, ...]:
    """``pieces`` with abutting progressions of one step joined, duplicates dropped, at most
    `_MAX_PIECES` (the longest)."""
    out: list[Piece] = []
    for a, st, n in sorted(
        set((a, 1 if n == 1 else st, n) for a, st, n in pieces), key=lambda p: (p[1], p[0])
    ):
        if out:
            a0, s0, n0 = out[-1]
            if s0 == st and a == a0 + n0 * st:
                out[-1] = (a0, st, n0 + n)
                continue
            if n0 == 1 and n == 1 and s0 == st == 1 and a == a0:
                continue
        out.append((a, st, n))
    if len(out) > _MAX_PIECES:
        out = sorted(out, key=lambda p: -p[2])[:_MAX_PIECES]
    return tuple(out)


def _lead(pieces: tuple[Piece, ...], lo: int, hi: int, k: int) -> list[Piece]:
    """``{d * k + v : lo <= d <= hi, v in pieces}`` (each ``v < k``) as progressions."""
    cnt = hi - lo + 1
    out: list[Piece] = []
    for a, st, n in pieces:
        if n == 1:
            out.append((lo * k + a, k, cnt))
        elif st * n == k:  # the next digit's block continues the progression
            out.append((lo * k + a, st, n * cnt))
        else:
            out.extend((d * k + a, st, n) for d in range(lo, hi + 1))
    return out


def _count(a: int, st: int, n: int, mod: int) -> int:
    """How many ``i < n`` make ``a + i * st`` a multiple of ``mod``."""
    g = gcd(st, mod)
    if a % g:
        return 0
    period = mod // g
    i = (-a // g) * pow(st // g, -1, period) % period if period > 1 else 0
    return 0 if i >= n else (n - 1 - i) // period + 1


def _hits(pieces: tuple[Piece, ...], target: int, m: int, negs: tuple[int, ...]) -> bool:
    """Whether some value ``v`` of ``pieces`` makes ``v - target`` a multiple of ``m`` and of no
    ``negs``: the count of those, by inclusion and exclusion over the ``negs``, is not 0."""
    subsets = [(1, m)]
    for n in negs:
        subsets += [(-sign, lcm(mod, n)) for sign, mod in subsets]
    for a, st, n in pieces:
        if sum(sign * _count(a - target, st if n > 1 else 1, n, mod) for sign, mod in subsets) > 0:
            return True
    return False


class Remainders:
    """The words of ``unit`` (a JSON number language without exponent) whose value times
    ``10^scale`` is an integer divisible by ``m`` and by none of ``negs``, as states ``(q, phase,
    r)``: ``q`` a unit state, ``r`` the remainder (mod the lcm of the divisors) of the integer digits
    and the first ``scale`` fraction digits read so far (later fraction digits must be zeros).
    Shared by the `RemainderBlock`s of one language (the copies of an array's item): its arithmetic
    is done once. Liveness costs ``2^len(negs)`` congruences per progression.
    """

    def __init__(self, unit: CharDFA, m: int, scale: int, negs: tuple[int, ...] = ()):
        self.unit, self.m, self.scale, self.negs = unit, m, scale, negs
        self.mod = lcm(m, *negs)  # the remainders kept: what each divisor needs
        self.zeros = 4 + scale  # the phase past the scale: only zeros
        # whether a plain DFA may expand every state (as many as the eager product would have)
        self.expandable = self.mod * (scale + 2) <= _EXPANDABLE
        self._states = LocalStates()
        self._live: dict[tuple[int, int, int], bool] = {}
        n = len(unit)
        # unit states that accept after zeros only (the fraction digits past the scale)
        zacc = list(unit.accepting)
        changed = True
        while changed:
            changed = False
            for q in range(n):
                if not zacc[q] and any(lo <= _ZERO <= hi and zacc[t] for lo, hi, t in unit.edges[q]):
                    zacc[q] = changed = True
        self._zacc = zacc
        self._frac = self._fraction_sets()
        # per count of integer digits to come: (start, after the sign, integer) completion sets
        self._levels: list[tuple[dict, dict, dict]] = []
        self._exhausted = False
        self.local((0, _START, 0))

    # -- completion values ------------------------------------------------------------------------
    def _digit_edges(self, q: int) -> Iterator[tuple[int, int, int]]:
        for lo, hi, t in self.unit.edges[q]:
            a, b = max(lo, _ZERO), min(hi, _NINE)
            if a <= b:
                yield a - _ZERO, b - _ZERO, t

    def _fraction_sets(self) -> list[dict[int, tuple[Piece, ...]]]:
        """``sets[j][q]``: what the fraction digits from ``j`` on add to the scaled value (``r``
        times ``10^(scale - j)`` plus it must be a multiple), from unit state ``q``."""
        n, s, acc = len(self.unit), self.scale, self.unit.accepting
        sets: list[dict[int, tuple[Piece, ...]]] = [{} for _ in range(s + 1)]
        for q in range(n):
            ends = (s >= 1 and acc[q]) or any(
                lo <= _ZERO <= hi and self._zacc[t] for lo, hi, t in self.unit.edges[q]
            )
            if ends:
                sets[s][q] = ((0, 1, 1),)
        for j in range(s - 1, -1, -1):
            k = 10 ** (s - j - 1)
            for q in range(n):
                pieces: list[Piece] = [(0, 1, 1)] if j >= 1 and acc[q] else []
                for lo, hi, t in self._digit_edges(q):
                    if t in sets[j + 1]:
                        pieces += _lead(sets[j + 1][t], lo, hi, k)
                if pieces:
                    sets[j][q] = _merged(pieces)
        return sets

    def _level(self, digits: int) -> tuple[dict, dict, dict] | None:
        """Completion sets with ``digits`` integer digits still to come (None past the last)."""
        while len(self._levels) <= digits and not self._exhausted:
            self._levels.append(self._next_level(len(self._levels)))
            if len(self._levels) > 1 and not any(self._levels[-1]):
                self._exhausted = True  # no unit state reads this many more digits: nor more
        return self._levels[digits] if digits < len(self._levels) else None

    def _next_level(self, digits: int) -> tuple[dict, dict, dict]:
        unit, acc = self.unit, self.unit.accepting
        reads: dict[int, tuple[Piece, ...]] = {}  # a digit now, ``digits - 1`` after it
        if digits:
            below = self._levels[digits - 1][2]
            k = 10 ** (digits - 1 + self.scale)
            for q in range(len(unit)):
                pieces = [
                    p for lo, hi, t in self._digit_edges(q) if t in below for p in _lead(below[t], lo, hi, k)
                ]
                if pieces:
                    reads[q] = _merged(pieces)
            whole = reads
        else:
            whole = {}
            for q in range(len(unit)):
                pieces = [(0, 1, 1)] if acc[q] else []
                for lo, hi, t in unit.edges[q]:
                    if lo <= _DOT <= hi and t in self._frac[0]:
                        pieces += self._frac[0][t]
                if pieces:
                    whole[q] = _merged(pieces)
        start = dict(reads)
        for q in range(len(unit)):
            for lo, hi, t in unit.edges[q]:
                if lo <= _MINUS <= hi and t in reads:
                    start[q] = _merged([*start.get(q, ()), *reads[t]])
        return start, reads, whole

    # -- states ------------------------------------------------------------------------------------
    def local(self, key) -> int:
        """The small int of local state ``key`` ``(q, phase, r)``; made on first use."""
        return self._states.local(key)

    @property
    def states_made(self) -> int:
        """How many states a text has reached so far."""
        return len(self._states.keys)

    def key(self, local: int) -> tuple[int, int, int]:
        """The ``(q, phase, r)`` of local state ``local``."""
        return self._states.keys[local]

    def live(self, key: tuple[int, int, int]) -> bool:
        """Whether some completion from ``key`` is a multiple the unit accepts."""
        hit = self._live.get(key)
        if hit is None:
            hit = self._live[key] = self._find(*key)
        return hit

    def _find(self, q: int, phase: int, r: int) -> bool:
        mod, s = self.mod, self.scale
        if phase == self.zeros:
            return self._zacc[q] and self._passes(r)
        if phase > _INT:
            j = phase - 3
            pieces = self._frac[j].get(q)
            return pieces is not None and _hits(pieces, -r * pow(10, s - j, mod) % mod, self.m, self.negs)
        for digits in range(_MAX_DIGITS + 1):
            level = self._level(digits)
            if level is None:
                return False
            pieces = level[phase].get(q)
            if pieces is not None and _hits(pieces, -r * pow(10, digits + s, mod) % mod, self.m, self.negs):
                return True
        return False

    def _passes(self, scaled: int) -> bool:
        """Whether a scaled value with remainder ``scaled`` is a multiple of ``m`` and of no ``negs``."""
        return scaled % self.m == 0 and all(scaled % n for n in self.negs)

    def _step(self, phase: int, r: int, c: int) -> tuple[int, int] | None:
        """(phase, remainder) after character ``c``, None where no multiple is spelled so."""
        if _ZERO <= c <= _NINE:
            d = c - _ZERO
            if phase <= _INT:
                return _INT, (r * 10 + d) % self.mod
            if phase < 3 + self.scale:
                return phase + 1, (r * 10 + d) % self.mod
            return (self.zeros, r) if d == 0 else None  # past the scale: the value must be whole
        if c == _MINUS and phase == _START:
            return _SIGN, 0
        if c == _DOT and phase == _INT:
            return 3, r
        return None

    def _accepts(self, phase: int, r: int) -> bool:
        if phase == self.zeros:
            return self._passes(r)
        if phase == _INT:
            return self._passes(r * pow(10, self.scale, self.mod) % self.mod)
        j = phase - 3
        return 1 <= j <= self.scale and self._passes(r * pow(10, self.scale - j, self.mod) % self.mod)

    def edges(self, local: int) -> list[Edge]:
        """Character edges of local state ``local`` to live states; targets are local keys."""
        q, phase, r = self._states.keys[local]
        out = []
        for lo, hi, t in self.unit.edges[q]:
            for c in range(max(lo, _MINUS), min(hi, _NINE) + 1):
                nxt = self._step(phase, r, c)
                if nxt is not None and self.live((t, *nxt)):
                    out.append((c, c, (t, *nxt)))
        return out  # type: ignore[return-value]

    def accepting(self, local: int) -> bool:
        """Whether local state ``local`` holds a multiple the unit accepts."""
        q, phase, r = self._states.keys[local]
        return self.unit.accepting[q] and self._accepts(phase, r)

    def accepts_text(self, text: str) -> bool:
        """Whether ``text`` is read to an accepting state through live states only (tests, docs).

        >>> from fsm.automata import node_to_char_dfa, number_node, Bounds
        >>> Remainders(node_to_char_dfa(number_node(Bounds())), 7, 0).accepts_text("-14")
        True
        """
        local = 0
        for ch in text:
            hit = [t for lo, hi, t in self.edges(local) if lo <= ord(ch) <= hi]
            if not hit:
                return False
            local = self.local(hit[0])
        return self.accepting(local)


class RemainderBlock:
    """One place a `Remainders` language is entered, ``end`` the real NFA state after it (the
    virtual-state protocol of `blocks.Counters`: local ids, edges, epsilon moves)."""

    def __init__(self, remainders: Remainders, end: int):
        self.remainders, self.end = remainders, end
        self.local = remainders.local
        self.edges = remainders.edges

    def eps(self, local: int) -> list:
        """``end`` when local state ``local`` holds a multiple the unit accepts."""
        return [self.end] if self.remainders.accepting(local) else []

    def all_edges(self) -> Iterator[Edge]:
        """Every edge the block can take: one character each (digits lead to different remainders)."""
        for c in (_MINUS, _DOT, *range(_ZERO, _NINE + 1)):
            yield (c, c, 0)
