"""Word lengths of a tree: the shortest word's length, and counted repeats a length cap makes
open-ended.

Beside a length cap (``(?=.{1,255}$)``, ``maxLength``), a repeat's upper bound that no word short
enough can reach only multiplies the automaton: ``(.{1,63}\\.){1,127}`` is 127 copies of its item,
each remembered apart by the subset construction, while under 255 characters at most 127
iterations of two characters fit anyway. The cost avoided is those copies and their subsets.

>>> from fsm.automata import cls, lit, rep, seq
>>> item = seq(rep(cls((97, 122)), 1, 63), lit("."))
>>> uncap_repeats(rep(item, 1, 127), 255) == rep(item, 1, None), uncap_repeats(rep(item, 1, 100), 255) == rep(item, 1, 100)
(True, True)
"""

from __future__ import annotations

from .language import NEVER, Alt, And, Cls, Enc, Lit, Minus, Node, Rep, Seq, Val
from .ranges import ANY_CHAR

_ANYTHING = Rep(Cls(ANY_CHAR), 0, None)


def min_length(node: Node) -> int:
    """A lower bound of the length of ``node``'s words (exact for plain trees; 0 where unknown).

    >>> from fsm.automata import alt, lit, rep
    >>> min_length(alt(lit("ab"), rep(lit("xyz"), 2, 5)))
    2
    """
    if isinstance(node, Lit):
        return len(node.text)
    if isinstance(node, Cls):
        return 1
    if isinstance(node, Seq):
        return sum(min_length(it) for it in node.items)
    if isinstance(node, Alt):
        return min((min_length(it) for it in node.items), default=0)
    if isinstance(node, Rep):
        return node.lo * min_length(node.item) if node.lo else 0
    if isinstance(node, And):
        return max((min_length(it) for it in node.items), default=0)
    if isinstance(node, (Minus, Val, Enc)):
        return min_length(node.item)
    return 0  # Auto, Members, blocks: no bound read


def uncap_repeats(node: Node, max_len: int) -> Node:
    """``node`` among words of at most ``max_len`` characters: every repeat whose bound ``hi`` is
    implied (``hi + 1`` iterations are longer than ``max_len``) made open-ended, so the same words
    of that length (``node`` is meant to be intersected with the cap)."""
    if isinstance(node, Rep):
        item = uncap_repeats(node.item, max_len)
        hi = node.hi
        if hi is not None and (hi + 1) * min_length(item) > max_len:
            hi = None
        return node if item is node.item and hi == node.hi else Rep(item, node.lo, hi)
    if isinstance(node, (Seq, Alt, And)):
        items = tuple(uncap_repeats(it, max_len) for it in node.items)
        return node if all(a is b for a, b in zip(items, node.items, strict=True)) else type(node)(items)
    if isinstance(node, (Val, Enc)):
        item = uncap_repeats(node.item, max_len)
        if item is node.item:
            return node
        return Val(item) if isinstance(node, Val) else Enc(item, node.full)
    return node


def length_cap(items: tuple[Node, ...]) -> int | None:
    """The smallest upper bound among ``items`` that are a count of single characters
    (``Rep(Cls, lo, hi)``): every word of their intersection is that short; None without one.

    >>> from fsm.automata import cls, rep
    >>> length_cap((rep(cls((97, 98)), 0, 9), rep(cls((97, 97)), 1, 4)))
    4
    """
    caps = [it.hi for it in items if isinstance(it, Rep) and isinstance(it.item, Cls) and it.hi is not None]
    return min(caps) if caps else None


def conjoin(items: tuple[Node, ...] | list[Node]) -> Node:
    """The intersection of ``items``: nested ones flattened, any-string items dropped, and repeats a
    count among them makes redundant open-ended (`uncap_repeats`), so a length lookahead or
    ``maxLength`` stays one count the lazy DFA can run as a product block.

    >>> from fsm.automata import ANY_CHAR, EMPTY, Cls, cls, lit, rep, seq
    >>> anything = rep(Cls(ANY_CHAR), 0, None)
    >>> conjoin((anything, EMPTY)) == EMPTY
    True
    >>> conjoin((And((rep(seq(cls((97, 98)), lit(".")), 1, 9), anything)), rep(cls((97, 98)), 0, 8)))
    And(items=(Rep(item=Seq(items=(Cls(ranges=((97, 98),)), Lit(text='.'))), lo=1, hi=None), Rep(item=Cls(ranges=((97, 98),)), lo=0, hi=8)))
    """
    flat: list[Node] = []
    for it in items:
        for x in it.items if isinstance(it, And) else (it,):
            if x == NEVER:
                return NEVER
            if x != _ANYTHING and x not in flat:
                flat.append(x)
    if not flat:
        return _ANYTHING
    cap = length_cap(tuple(flat))
    if cap is not None:
        counts = [isinstance(x, Rep) and isinstance(x.item, Cls) and x.hi is not None for x in flat]
        flat = [x if c else uncap_repeats(x, cap) for x, c in zip(flat, counts, strict=True)]
    return flat[0] if len(flat) == 1 else And(tuple(flat))
