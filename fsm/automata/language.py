"""A small regular-language AST: what JSON Schema translation produces before it becomes an automaton.

The nodes describe languages over Unicode characters. Two of them are not plain regex syntax:
``Members`` (an ordered list of optional and required items with separators between the present
ones — linear as an automaton, quadratic as regex text) and ``Enc`` (a language of *decoded* string
contents, turned into the language of their JSON encodings). ``And`` and ``Minus`` (intersection and
difference with a finite set of words) act on small decoded-string languages only.

>>> seq(lit("a"), rep(cls((48, 57)), 1, 3))
Seq(items=(Lit(text='a'), Rep(item=Cls(ranges=((48, 57),)), lo=1, hi=3)))
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from .ranges import Ranges, normalize_ranges


class Node:
    """Base class of the AST nodes (all frozen dataclasses, hashable)."""

    __slots__ = ()


@dataclass(frozen=True)
class Lit(Node):
    text: str


@dataclass(frozen=True)
class Cls(Node):
    """One character from a set of code point ranges (sorted, disjoint, no surrogates)."""

    ranges: Ranges


@dataclass(frozen=True)
class Seq(Node):
    items: tuple[Node, ...]


@dataclass(frozen=True)
class Alt(Node):
    items: tuple[Node, ...]


@dataclass(frozen=True)
class Rep(Node):
    item: Node
    lo: int
    hi: int | None  # None: unbounded


@dataclass(frozen=True)
class Members(Node):
    """Items in this order, each present ``lo..hi`` times, ``sep`` between consecutive present ones.

    ``min_count``/``max_count`` bound the total number of present items.
    """

    items: tuple[tuple[Node, int, int | None], ...]
    sep: Node
    min_count: int = 0
    max_count: int | None = None


@dataclass(frozen=True)
class Enc(Node):
    """JSON string content (without quotes) whose decoded text is in ``item``'s language.

    ``full`` marks the unrestricted string: every ``\\uXXXX`` escape is allowed, not only the
    canonical encodings.
    """

    item: Node
    full: bool = False


@dataclass(frozen=True)
class And(Node):
    items: tuple[Node, ...]


@dataclass(frozen=True)
class Minus(Node):
    item: Node
    words: frozenset[str]


@dataclass(frozen=True)
class Auto(Node):
    """A literal character DFA: ``edges[s]`` are (lo, hi, target) triples, state 0 is initial."""

    edges: tuple[tuple[tuple[int, int, int], ...], ...]
    accepting: tuple[bool, ...]


@dataclass(frozen=True)
class Multiples(Node):
    """The words of ``item`` (JSON numbers without exponent) whose value times ``10^scale`` is an
    integer divisible by ``m`` and by none of ``negs``: the multiples of ``m / 10^scale``. For
    divisors whose remainders are too many to build (`remainders.RemainderBlock` runs them in the
    lazy DFA; every other construction refuses it as too complex)."""

    item: Node
    m: int
    scale: int
    negs: tuple[int, ...] = ()


@dataclass(frozen=True)
class Val(Node):
    """Marks one whole JSON value (grammar output keeps it one terminal when it is regular)."""

    item: Node


@dataclass(frozen=True)
class AnyJson(Node):
    """Any JSON value, nested without bound (not regular: the lazy DFA runs it as a pushdown block,
    see `any_value`); layout by ``indent`` (None: compact) at nesting ``depth``."""

    indent: int | None = None
    depth: int = 0
    max_string_length: int | None = None


@dataclass(frozen=True)
class Guard(Node):
    """A zero-width test: the text before this point (all of it, as bytes) must pass ``check``.

    For what no automaton of a useful size can say (an A-label's punycode decodes to a valid
    U-label): the automaton holds a regular superset, and the matcher runs ``check`` where the text
    reaches the point (`fsm.index.guarded`). Only the lazy DFA runs it; every other construction
    (character DFAs, products, regex text) leaves the branch through it out — a subset, never more —
    or, when ``required_by`` names a keyword (reading the check as failed would lose more than a
    documented subset: ``uniqueItems`` arrays of one item at most), refuses with `UnsupportedSchema`.
    """

    check: Callable[[bytes], bool]
    required_by: str | None = None


@dataclass(frozen=True)
class Ref(Node):
    """A named rule (grammar output only)."""

    name: str


def _memo_hash(cls: type) -> None:
    """Give ``cls`` a hash computed once per node: translations share subtrees, and the generated
    hash walks a shared subtree again at every path to it (exponential in a deep recursive schema)."""
    generated = cls.__hash__

    def __hash__(self) -> int:
        try:
            return self.__dict__["_hash"]
        except KeyError:
            h = generated(self)
            object.__setattr__(self, "_hash", h)
            return h

    cls.__hash__ = __hash__  # type: ignore[method-assign]


for _cls in (Seq, Alt, Rep, Members, Enc, And, Minus, Auto, Multiples, Val):
    _memo_hash(_cls)

NEVER = Alt(())
EMPTY = Seq(())


# ---------------------------------------------------------------------------------------------
# Smart constructors: they keep the tree small and fold the empty language away.


def lit(text: str) -> Node:
    """The one string ``text`` (the empty string is `EMPTY`).

    >>> lit("ab"), lit("") == EMPTY
    (Lit(text='ab'), True)
    """
    return Lit(text) if text else EMPTY


def cls(*ranges: tuple[int, int]) -> Node:
    """One character out of ``ranges`` (normalized; no character at all is `NEVER`).

    >>> cls((98, 99), (97, 97))
    Cls(ranges=((97, 99),))
    """
    rs = normalize_ranges(ranges)
    return Cls(rs) if rs else NEVER


def seq(*items: Node) -> Node:
    """The concatenation of ``items``: nested sequences flattened, adjacent literals joined.

    >>> seq(lit("a"), seq(lit("b"), cls((48, 57))))
    Seq(items=(Lit(text='ab'), Cls(ranges=((48, 57),))))
    """
    out: list[Node] = []
    for it in items:
        if it.__class__ is Alt and not it.items:  # it == NEVER, without two generated __eq__ calls
            return NEVER
        if isinstance(it, Seq):
            out.extend(it.items)
        else:
            out.append(it)
    merged: list[Node] = []
    for it in out:  # join adjacent literals
        if merged and isinstance(it, Lit) and isinstance(merged[-1], Lit):
            merged[-1] = Lit(merged[-1].text + it.text)
        else:
            merged.append(it)
    return merged[0] if len(merged) == 1 else Seq(tuple(merged))


def alt(*items: Node) -> Node:
    """The union of ``items``: nested unions flattened, repeats dropped (`NEVER` when empty).

    >>> alt(lit("a"), alt(lit("b"), lit("a")))
    Alt(items=(Lit(text='a'), Lit(text='b')))
    """
    flat: list[Node] = []
    for it in items:
        if isinstance(it, Alt):
            flat.extend(it.items)
        else:
            flat.append(it)
    if len(flat) == 2:
        # Only nodes of one class can be equal: nodes of two classes are kept unhashed (a first
        # hash walks the whole subtree: an object's body beside its "{}")
        if type(flat[0]) is type(flat[1]) and flat[0] == flat[1]:
            del flat[1]
    elif len(flat) > 2:
        kinds = Counter(map(type, flat))
        if len(kinds) < len(flat):
            out: list[Node] = []
            seen = set()
            for p in flat:
                if kinds[type(p)] == 1:
                    out.append(p)
                elif p not in seen:
                    seen.add(p)
                    out.append(p)
            flat = out
    return flat[0] if len(flat) == 1 else Alt(tuple(flat))


def opt(item: Node) -> Node:
    """``item`` or the empty string.

    >>> opt(lit("a"))
    Alt(items=(Seq(items=()), Lit(text='a')))
    """
    return EMPTY if item.__class__ is Alt and not item.items else alt(EMPTY, item)


def rep(item: Node, lo: int, hi: int | None) -> Node:
    """``item`` repeated ``lo..hi`` times (``hi`` None: unbounded), folding trivial cases.

    >>> rep(lit("a"), 1, 1), rep(lit("a"), 2, None)
    (Lit(text='a'), Rep(item=Lit(text='a'), lo=2, hi=None))
    """
    if hi is not None and hi < lo:
        return NEVER
    if item.__class__ is Alt and not item.items:  # NEVER
        return EMPTY if lo == 0 else NEVER
    if (item.__class__ is Seq and not item.items) or hi == 0:  # EMPTY
        return EMPTY
    if lo == 1 and hi == 1:
        return item
    return Rep(item, lo, hi)


def members_to_plain(m: Members) -> Node:
    """Rewrite ``Members`` with plain nodes (quadratic in the number of optional items).

    >>> m = Members(((lit("a"), 0, 1), (lit("b"), 1, 1)), lit(","))
    >>> from fsm.automata import to_regex
    >>> to_regex(members_to_plain(m))
    'b|a,b'
    """
    items = m.items
    n = len(items)
    sat = (m.max_count + 1) if m.max_count is not None else m.min_count
    memo: dict[tuple[int, int, int, bool], Node] = {}

    def state(i: int, k: int, c: int, started: bool) -> Node:
        # At item i with k occurrences of it so far, c items in all (saturated), something emitted.
        key = (i, k, c, started)
        if key in memo:
            return memo[key]
        memo[key] = NEVER  # cycles are handled below, never through recursion
        if i == n:
            ok = c >= m.min_count and (m.max_count is None or c <= m.max_count)
            r = EMPTY if ok else NEVER
        else:
            node, lo, hi = items[i]
            leave = state(i + 1, 0, c, started) if k >= lo else NEVER
            c2 = min(c + 1, sat)
            k2 = min(k + 1, lo) if hi is None else k + 1
            one = seq(m.sep, node) if started else node
            if hi is not None and k >= hi:
                r = leave
            elif hi is None and (k2, c2, True) == (k, c, started):
                r = seq(rep(one, 0, None), leave)  # a self-loop: star it
            else:
                nxt = state(i, k2, c2, True)
                # alt(X, seq(Y, X)) == seq(opt(Y), X): keeps the text from doubling at each item
                r = seq(opt(one), leave) if nxt == leave else alt(leave, seq(one, nxt))
        memo[key] = r
        return r

    return state(0, 0, 0, False)
