"""How big a language tree's automaton gets, estimated from the tree before anything is built.

Counted repeats multiply: ``(a{1,100}){1,100}`` is 10,000 positions and its subset construction
holds sets of up to that many NFA states, ``((a{1,100}){1,100}){1,100}`` a million. A long repeat of
a small item that stands alone becomes a counter block (virtual states, see `blocks`) and costs
its item only; inside another counted repeat it is counted in full, because then the subsets hold
one counter per copy. Every front end can check its tree here before expanding it: regexes and
grammar terminals do, and a JSON ``pattern`` or a ``minItems``/``maxLength`` product is a tree too.

>>> from fsm.automata import lit, rep
>>> expansion_size(rep(rep(lit("a"), 1, 100), 1, 100))
10000
>>> expansion_size(rep(lit("a"), 0, 100000))  # one counter block
1
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..errors import SpecTooComplex
from ..limits import Limits
from .blocks import counted_block
from .language import Alt, And, AnyJson, Auto, Cls, Enc, Lit, Members, Minus, Node, Ref, Rep, Seq, Val
from .regex_text import to_regex
from .shared import intern_nodes, repeated

_UNIT_MAX = 64  # ... when its item is this small


@dataclass(frozen=True)
class Expansion:
    """The estimated positions of a tree and its biggest counted repeat (None: no counted repeat)."""

    size: int
    largest: Node | None
    largest_size: int

    def describe(self) -> str:
        """The biggest counted repeat for an error message (empty when there is none).

        >>> from fsm.automata import lit, rep
        >>> from fsm.limits import Limits
        >>> check_expansion(rep(rep(lit("a"), 1, 30), 1, 30), Limits(), "x").describe()
        "the counted repeat '(?:a{1,30}){1,30}' (about 900 positions)"
        """
        if self.largest is None:
            return ""
        return f"the counted repeat {_text(self.largest)} (about {self.largest_size:,} positions)"


def expansion_size(node: Node, nfa: bool = False) -> int:
    """Estimated positions of ``node``'s automaton once counted repeats are expanded; with ``nfa``,
    of its NFA alone: a long repeat of a small item is a counter block wherever it stands (each
    copy of an enclosing repeat holds one), which is the size to compare with an NFA's budget when
    the copies cannot overlap (a JSON array's items, separated by commas).

    >>> from fsm.automata import alt, cls, lit, rep, seq
    >>> expansion_size(rep(alt(lit("ab"), lit("c")), 3, 3))
    9
    >>> items = rep(seq(lit(","), rep(cls((97, 122)), 0, 1000)), 10, 10)
    >>> expansion_size(items), expansion_size(items, nfa=True)
    (10010, 20)
    """
    est = _Estimator(None)
    est.counters_anywhere = nfa
    return est.size(node, False)


def shared_expansion_size(node: Node) -> int:
    """`expansion_size` (``nfa=True``) of ``node`` with every subtree it holds in several places
    built once (each place a call of it, one position): the size of the tree as the rules of a
    pushdown automaton (`shared.share_values`), where equal subschemas written out at each use (a
    bundled schema, its ``$ref``s inlined) are one rule.

    >>> from fsm.automata import alt, lit, rep, seq
    >>> word = lambda: alt(*[lit(f"w{i:03}") for i in range(100)])
    >>> tree = seq(*[rep(seq(word(), lit(str(i))), 0, 3) for i in range(50)])
    >>> expansion_size(tree, nfa=True), shared_expansion_size(tree)
    (60270, 820)
    """
    root, _ = intern_nodes(node, {})
    once = repeated([root], (Seq, Alt, Members, Rep, Val))
    est = _Estimator(None)
    est.counters_anywhere = True
    est.once = set(once)
    return est.size(root, False) + sum(est._size(n, False) for n in once.values())


def check_expansion(node: Node, limits: Limits, what: str) -> Expansion:
    """Raise `SpecTooComplex` (budget ``max_regex_positions``) naming the subtree responsible when
    ``node`` expands past ``limits.max_regex_positions``; else its `Expansion`.

    >>> from fsm.automata import lit, rep
    >>> from fsm.limits import Limits
    >>> check_expansion(rep(lit("a"), 5, 5), Limits(), "regex 'a{5}'").size
    5
    """
    budget = limits.max_regex_positions
    est = _Estimator(budget)
    size = est.size(node, False)
    if size <= budget:
        return Expansion(size, est.largest, est.sizes.get(id(est.largest), 0))
    culprit = est.culprit or node
    raise SpecTooComplex(
        f"{what}: the counted repeat {_text(culprit)} expands to about {est.sizes[id(culprit)]:,} "
        f"positions (the whole spec to about {size:,}), over the budget max_regex_positions={budget:,}; "
        "nested counted repeats multiply: write the count once (a{1,10000} rather than (a{1,100}){1,100})",
        budget="max_regex_positions",
        limit=budget,
    )


def largest_part(node: Node, parts: Mapping[int, tuple[Node, str]]) -> tuple[str, int] | None:
    """The name and estimated positions of the smallest named subtree of ``node`` holding more
    than half of its positions (those subtrees nest, so this is the deepest one): the part of a
    spec an automaton that outgrew its budget owes its size to. ``parts`` maps ``id(subtree)`` to
    ``(subtree, name)``; None when no named subtree is that big.

    >>> from fsm.automata import lit, rep, seq
    >>> big = rep(lit("ab"), 50, 50)
    >>> largest_part(seq(lit("x"), big), {id(big): (big, "/items")})
    ('/items', 100)
    """
    est = _Estimator(None)
    half = est.size(node, False) / 2
    best: tuple[str, int] | None = None
    for sub, name in parts.values():
        n = est.sizes.get(id(sub))
        if n is not None and n > half and (best is None or n < best[1]):
            best = (name, n)
    return best


class _Estimator:
    """One pass over a tree; remembers the smallest subtree over ``budget`` (ids: trees share nodes)."""

    def __init__(self, budget: int | None):
        self.budget = budget
        self.sizes: dict[int, int] = {}
        self._memo: dict[object, int] = {}  # by id, or (id, nested)
        self.culprit: Node | None = None
        self.largest: Node | None = None
        self.counters_anywhere = False  # a nested long repeat of a small item is a counter block too
        self.once: set[int] = set()  # subtrees built once, elsewhere: a call here

    def size(self, node: Node, nested: bool) -> int:
        i = id(node)
        if i in self.once:
            return 1
        # with counters anywhere, a node's size does not depend on ``nested`` (see `_rep`): one
        # entry per node
        key = i if self.counters_anywhere else (i, nested)
        n = self._memo.get(key)
        if n is not None:
            return n
        # dispatch on the node's class: a chain of isinstance tests per node was most of the pass
        kind = _KIND.get(type(node))
        if kind is _LIT:
            n = len(node.text)
        elif kind is _ONE:
            n = 1
        elif kind is _ALL:
            n = self._all(node.items, nested) or 1
        elif kind is _INNER:
            n = self.size(node.item, nested)
        elif kind is _REP:
            n = self._rep(node, nested)
        else:
            n = self._size(node, nested)
        self._memo[key] = n
        self.sizes[i] = n
        if kind is _REP and (self.largest is None or n >= self.sizes[id(self.largest)]):
            self.largest = node  # children finish first: on a tie the outer repeat is named
        if self.budget is not None and n > self.budget and self.culprit is None:
            self.culprit = node  # children finish first: the first one over is the smallest
        return n

    def _all(self, items: tuple[Node, ...], nested: bool) -> int:
        """The sizes of ``items`` summed; a literal's (half of a tree's nodes) without a call."""
        size, sizes, budget = self.size, self.sizes, self.budget
        n = 0
        for it in items:
            if it.__class__ is Lit:
                m = sizes[id(it)] = len(it.text)
                if budget is not None and m > budget and self.culprit is None:
                    self.culprit = it
            else:
                m = size(it, nested)
            n += m
        return n

    def _size(self, node: Node, nested: bool) -> int:
        """The size of a node of the rarer kinds (or a subclass of any kind)."""
        if isinstance(node, Lit):
            return len(node.text)
        if isinstance(node, (Cls, AnyJson, Ref)):
            return 1
        if isinstance(node, (Seq, Alt, And)):
            return sum(self.size(it, nested) for it in node.items) or 1
        if isinstance(node, (Val, Enc, Minus)):
            return self.size(node.item, nested)
        if isinstance(node, Auto):
            return max(1, len(node.edges))
        if isinstance(node, Members):
            total = self.size(node.sep, nested)
            for item, lo, hi in node.items:
                total += self.size(item, nested) * max(1, lo if hi is None else min(hi, max(lo, 1)))
            return total
        if isinstance(node, Rep):
            return self._rep(node, nested)
        return 1

    def _rep(self, node: Rep, nested: bool) -> int:
        times = max(1, node.lo + 1 if node.hi is None else node.hi)
        counter = not nested or self.counters_anywhere
        if counter and counted_block(node) and _flat(node.item):
            item = self.size(node.item, True)
            if item <= _UNIT_MAX:
                return item  # a counter block: its item's states, whatever the count
        return self.size(node.item, nested or times > 1) * times


_LIT, _ONE, _ALL, _INNER, _REP = "lit", "one", "all", "inner", "rep"
_KIND = {
    Lit: _LIT,
    Cls: _ONE,
    AnyJson: _ONE,
    Ref: _ONE,
    Seq: _ALL,
    Alt: _ALL,
    And: _ALL,
    Val: _INNER,
    Enc: _INNER,
    Minus: _INNER,
    Rep: _REP,
}


def _flat(node: Node) -> bool:
    """No counted repeat inside (a counter block's unit must be a small plain automaton)."""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, Rep):
            return False
        if isinstance(n, (Seq, Alt, And)):
            stack.extend(n.items)
        elif isinstance(n, (Val, Enc, Minus)):
            stack.append(n.item)
        elif isinstance(n, Members):
            return False
    return True


def _text(node: Node) -> str:
    """Short regex text of ``node`` for an error message (plain trees only; else its kind)."""
    if not _plain(node):
        return f"({type(node).__name__.lower()} node)"
    text = to_regex(node)
    return repr(text if len(text) <= 60 else text[:57] + "...")


def _plain(node: Node) -> bool:
    stack, seen = [node], 0
    while stack:
        n = stack.pop()
        seen += 1
        if seen > 10_000:
            return False
        if isinstance(n, (Seq, Alt)):
            stack.extend(n.items)
        elif isinstance(n, Rep):
            stack.append(n.item)
        elif not isinstance(n, (Lit, Cls)):
            return False
    return True
