"""``multipleOf`` as automata: the 10-power part of a divisor is trailing zeros, only the rest read by a
remainder automaton; a decimal divisor ``m / 10^scale`` reads the first ``scale`` fraction digits
as more digits of one integer.

>>> from fsm.automata import node_to_char_dfa
>>> d = node_to_char_dfa(divisible_decimals(1, 2))  # multipleOf 0.01
>>> [d.accepts(s) for s in ("3", "0.25", "1.500", "0.125")]
[True, True, True, False]
"""

from __future__ import annotations

from collections.abc import Callable

from .char_dfa import CharDFA, complement_dfa
from .language import And, Auto, Node, alt, lit, opt, rep, seq
from .nfa import node_to_char_dfa
from .numbers import DIGIT, NONZERO
from .ranges import merge_adjacent


class TooManyRemainders(ValueError):
    """A remainder automaton over its state budget; ``states`` is what it would have needed."""

    def __init__(self, states: int):
        super().__init__(f"a remainder automaton of {states:,} states")
        self.states = states


def _split_divisor(m: int) -> tuple[int, int, int]:
    """``m`` as ``2^a 5^b k`` with ``k`` prime to 10: returns (a, b, k)."""
    a = b = 0
    while m % 2 == 0:
        m //= 2
        a += 1
    while m % 5 == 0:
        m //= 5
        b += 1
    return a, b, m


def divisible_integers(m: int, max_states: int = 100_000) -> Node:
    """Canonical JSON integers divisible by ``m`` (> 0), to intersect with a range.

    ``m = 2^a 5^b k`` (``k`` prime to 10): with ``c = min(a, b)``, a multiple of ``m`` ends in ``c``
    zeros and what comes before them is a multiple of ``m / 10^c``, read by a remainder automaton of
    that many states (over ``max_states``: `TooManyRemainders`); a power of ten needs none.

    >>> from fsm.automata import node_to_char_dfa
    >>> d = node_to_char_dfa(divisible_integers(10**6))
    >>> d.accepts("-3000000"), d.accepts("1000"), d.accepts("0"), len(d) < 20
    (True, False, True, True)
    """
    a, b, k = _split_divisor(m)
    c = min(a, b)
    rest = 2 ** (a - c) * 5 ** (b - c) * k  # one remainder automaton for both parts (they are coprime)
    if rest > 1:
        head: Node = divisible_decimals(rest, 0, max_states)
    else:
        head = seq(opt(lit("-")), DIGIT, rep(DIGIT, 0, None))
    return alt(lit("0"), seq(head, lit("0" * c))) if c else head


def divisible_decimals(m: int, scale: int, max_states: int = 100_000) -> Auto:
    """Numbers ``-?I(.F)?`` (no exponent; canonical form left to the caller) whose value times
    ``10^scale`` is an integer divisible by ``m``: the multiples of ``m / 10^scale``.

    Reads ``I`` and the first ``scale`` fraction digits as one integer, its remainder mod ``m`` in
    the state; fraction digits beyond ``scale`` must be zeros. Raises `TooManyRemainders` when the
    automaton would pass ``max_states`` states.

    >>> from fsm.automata import node_to_char_dfa
    >>> d = node_to_char_dfa(divisible_decimals(25, 1))  # multipleOf 2.5
    >>> [d.accepts(s) for s in ("7.5", "-5", "10.00", "2.6", "1.25")]
    [True, True, True, False, False]
    """
    n_states = 3 + m * (scale + 2)
    if n_states > max_states:
        raise TooManyRemainders(n_states)
    zeros = n_states - 1  # past `scale` fraction digits, only zeros: accepting

    def whole(r: int) -> int:
        return 2 + r

    def frac(j: int, r: int) -> int:
        return 2 + m + j * m + r

    edges: list[list[tuple[int, int, int]]] = [[] for _ in range(n_states)]
    accepting = [False] * n_states
    edges[0].append((45, 45, 1))
    for start in (0, 1):
        edges[start] += [(48 + dg, 48 + dg, whole(dg % m)) for dg in range(10)]
    for r in range(m):
        edges[whole(r)] = [(48 + dg, 48 + dg, whole((r * 10 + dg) % m)) for dg in range(10)]
        edges[whole(r)].append((46, 46, frac(0, r)))
        accepting[whole(r)] = r * 10**scale % m == 0
        for j in range(scale):
            edges[frac(j, r)] = [(48 + dg, 48 + dg, frac(j + 1, (r * 10 + dg) % m)) for dg in range(10)]
            accepting[frac(j + 1, r)] = r * 10 ** (scale - j - 1) % m == 0
    edges[frac(scale, 0)].append((48, 48, zeros))
    edges[zeros].append((48, 48, zeros))
    accepting[zeros] = True
    return Auto(tuple(tuple(merge_adjacent(sorted(row))) for row in edges), tuple(accepting))


def non_multiples(m: int, max_states: int = 100_000, max_digits: int | None = None) -> Node:
    """Canonical JSON integers (of at most ``max_digits`` digits) that are not multiples of ``m``:
    `divisible_integers`' DFA complemented, so only its factored remainder automaton is paid.

    >>> from fsm.automata import node_to_char_dfa
    >>> d = node_to_char_dfa(non_multiples(5))
    >>> [d.accepts(s) for s in ("7", "-7", "10", "-15", "0", "-0", "7.5")]
    [True, True, False, False, False, False, False]
    """
    multiples = node_to_char_dfa(alt(divisible_integers(m, max_states), lit("-0")))
    digits = rep(DIGIT, 0, None if max_digits is None else max_digits - 1)
    integer = seq(opt(lit("-")), alt(lit("0"), seq(NONZERO, digits)))
    return integer if multiples is None else And((integer, _auto(complement_dfa(multiples))))


def integer_residues(m: int, accept: Callable[[int], bool], max_states: int = 100_000) -> Auto:
    """Canonical JSON integers whose remainder mod ``m`` passes ``accept``: one remainder automaton
    for several divisors and negated divisors at once (``m`` their least common multiple), where a
    product of one automaton per divisor would pair up states that only their remainders tell apart.

    >>> from fsm.automata import node_to_char_dfa
    >>> d = node_to_char_dfa(integer_residues(6, lambda r: r % 2 == 0 and r % 3 != 0))
    >>> [d.accepts(s) for s in ("4", "-8", "6", "0", "-0", "3")]
    [True, True, False, False, False, False]
    """
    n_states = 3 + m
    if n_states > max_states:
        raise TooManyRemainders(n_states)
    edges: list[list[tuple[int, int, int]]] = [[] for _ in range(n_states)]
    edges[0].append((45, 45, 1))
    for start in (0, 1):
        edges[start] += [(48, 48, 2)] + [(48 + dg, 48 + dg, 3 + dg % m) for dg in range(1, 10)]
    for r in range(m):
        edges[3 + r] = [(48 + dg, 48 + dg, 3 + (r * 10 + dg) % m) for dg in range(10)]
    accepting = [False, False, accept(0)] + [accept(r) for r in range(m)]
    return Auto(tuple(tuple(merge_adjacent(sorted(row))) for row in edges), tuple(accepting))


def _auto(d: CharDFA) -> Auto:
    return Auto(tuple(tuple(row) for row in d.edges), tuple(d.accepting))
