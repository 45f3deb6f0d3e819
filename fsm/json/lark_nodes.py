"""Analyses of a language tree that the Lark writer needs: references, nullability, JSON lexemes,
first sets, and which rules are productive.

>>> from fsm.automata import Ref, lit, opt, seq
>>> nullable(opt(lit("a"))), has_ref(seq(lit("["), Ref("d0")), {})
(True, True)
"""

from __future__ import annotations

from typing import Any

from ..automata import (
    EMPTY,
    NEVER,
    Alt,
    And,
    Auto,
    Cls,
    Enc,
    Lit,
    Members,
    Minus,
    Node,
    Ref,
    Rep,
    Seq,
    Val,
    alt,
    rep,
    seq,
    to_regex,
)


def has_ref(node: Node, memo: dict) -> bool:
    """Whether ``node`` refers to a grammar rule anywhere (memoized in ``memo``)."""
    r = memo.get(node)
    if r is None:
        if isinstance(node, Ref):
            r = True
        elif isinstance(node, (Seq, Alt)):
            r = any(has_ref(i, memo) for i in node.items)
        elif isinstance(node, (Rep, Val)):
            r = has_ref(node.item, memo)
        elif isinstance(node, Members):
            r = any(has_ref(i[0], memo) for i in node.items) or has_ref(node.sep, memo)
        else:
            r = False
        memo[node] = r
    return r


def nullable(node: Node) -> bool:
    """True when the empty string is in the (reference-free) language."""
    if isinstance(node, (Lit, Cls)):
        return isinstance(node, Lit) and node.text == ""
    if isinstance(node, Seq):
        return all(nullable(i) for i in node.items)
    if isinstance(node, Alt):
        return any(nullable(i) for i in node.items)
    if isinstance(node, Rep):
        return node.lo == 0 or nullable(node.item)
    if isinstance(node, Members):
        return node.min_count == 0 and all(lo == 0 or nullable(n) for n, lo, _ in node.items)
    if isinstance(node, (Enc, Val)):
        return nullable(node.item)
    if isinstance(node, And):
        return all(nullable(i) for i in node.items)
    if isinstance(node, Minus):
        return nullable(node.item) and "" not in node.words
    if isinstance(node, Auto):
        return bool(node.accepting[0])
    return False


def nonempty(node: Node) -> Node:
    """The language without the empty string (reference-free nodes)."""
    if not nullable(node):
        return node
    if node == EMPTY:
        return NEVER
    if isinstance(node, Alt):
        return alt(*[nonempty(i) for i in node.items if i != EMPTY])
    if isinstance(node, Rep) and not nullable(node.item):
        return rep(node.item, max(node.lo, 1), node.hi)
    if isinstance(node, Seq) and len(node.items) >= 2:
        head, tail = node.items[0], seq(*node.items[1:])
        return alt(seq(nonempty(head), tail), nonempty(tail))
    if isinstance(node, Members) and all(not nullable(n) for n, _, _ in node.items):
        return Members(node.items, node.sep, max(node.min_count, 1), node.max_count)
    return Minus(node, frozenset({""}))


def is_lexeme(node: Node, memo: dict) -> bool:
    """Whether the (reference-free) language stays inside one JSON lexeme: no value, member list or
    punctuation in it (a string whose text has punctuation is conservatively not one)."""
    r = memo.get(node)
    if r is None:
        if isinstance(node, (Val, Members, Ref)):
            r = False
        elif isinstance(node, Lit):
            r = not any(c in node.text for c in "{}[],:")
        elif isinstance(node, (Seq, Alt)):
            r = all(is_lexeme(i, memo) for i in node.items)
        elif isinstance(node, Rep):
            r = is_lexeme(node.item, memo)
        else:  # Cls, Enc, And, Minus, Auto: characters of a string or number
            r = True
        memo[node] = r
    return r


def firsts(node: Node) -> frozenset[str]:
    """How the text can start: ``{ [ ,`` for punctuation, ``s`` for a scalar or key lexeme, ``r`` for a
    grammar rule, ``""`` when it can be empty."""
    if isinstance(node, Lit):
        return frozenset(node.text[0] if node.text[0] in "{[," else "s")
    if isinstance(node, Seq):
        out: set[str] = set()
        for i in node.items:
            f = firsts(i)
            out |= f - {""}
            if "" not in f:
                return frozenset(out)
        return frozenset(out | {""})
    if isinstance(node, Alt):
        return frozenset().union(*[firsts(i) for i in node.items])
    if isinstance(node, Rep):
        return firsts(node.item) | ({""} if node.lo == 0 else set())
    if isinstance(node, Val):
        return firsts(node.item)
    if isinstance(node, Members):
        out = set().union(*[firsts(n) - {""} for n, _, _ in node.items])
        return frozenset(out | ({""} if node.min_count == 0 else set()))
    if isinstance(node, Ref):
        return frozenset("r")
    return frozenset("s")


def longest_first(node: Node, deadline: Any = None) -> tuple:
    """Order of a union terminal's alternatives: lark's regex takes the first one that matches, so
    numbers with a fraction go before integers (``0.5`` must not lex as ``0``), literals last and
    longest first. ``deadline``: the grammar's (`to_regex`)."""
    if isinstance(node, Lit):
        return (2, -len(node.text))
    try:
        text = to_regex(node, deadline)
    except ValueError:
        return (1, 0)
    return (0 if "\\." in text else 1, 0)


def unval(node: Node) -> Node:
    """``node`` without its `Val` wrappers."""
    while isinstance(node, Val):
        node = node.item
    return node


def productive(node: Node, prod: set[str]) -> bool:
    """Whether the language is non-empty when exactly the rules in ``prod`` are."""
    if isinstance(node, Ref):
        return node.name in prod or node.name == "json_value"
    if isinstance(node, Seq):
        return all(productive(i, prod) for i in node.items)
    if isinstance(node, Alt):
        return any(productive(i, prod) for i in node.items)
    if isinstance(node, Rep):
        return node.lo == 0 or productive(node.item, prod)
    if isinstance(node, Val):
        return productive(node.item, prod)
    if isinstance(node, Members):
        ok = [productive(n, prod) for n, _, _ in node.items]
        if any(lo > 0 and not good for (_, lo, _), good in zip(node.items, ok, strict=True)):
            return False
        return sum(ok) >= min(node.min_count, 1)
    return node != NEVER


def drop_unproductive(node: Node, prod: set[str]) -> Node:
    """``node`` with references to empty rules removed (alternatives dropped, sequences emptied)."""
    if isinstance(node, Ref):
        return node if node.name in prod or node.name == "json_value" else NEVER
    if isinstance(node, Seq):
        return seq(*[drop_unproductive(i, prod) for i in node.items])
    if isinstance(node, Alt):
        return alt(*[d for d in (drop_unproductive(i, prod) for i in node.items) if d != NEVER]) or NEVER
    if isinstance(node, Rep):
        return rep(drop_unproductive(node.item, prod), node.lo, node.hi)
    if isinstance(node, Val):
        inner = drop_unproductive(node.item, prod)
        return NEVER if inner == NEVER else Val(inner)
    if isinstance(node, Members):
        items = []
        for n, lo, hi in node.items:
            d = drop_unproductive(n, prod)
            if d == NEVER:
                if lo > 0:
                    return NEVER
                continue
            items.append((d, lo, hi))
        return Members(tuple(items), node.sep, node.min_count, node.max_count) if items else NEVER
    return node
