"""Values a tree holds in several places, made rules of their own for the pushdown automaton.

A translation shares equal subtrees by reference (the same conjunction met at two places is one
node), so the tree is a DAG; the NFA builder expands it as a tree, one copy per path. Where the
paths multiply (a chain of levels, each referring to the next from two places: a declared
property and ``additionalProperties``), the copies grow exponentially with the depth even though
the DAG is small. In rule modes a JSON value (`Val`) can be called instead: every `Val` with
several parents and some size becomes a rule, built once. The cost avoided is the copies.

Equal subtrees are not always one object: a schema whose ``$ref``s were inlined before it reached
us (a ``.min`` bundle) writes the same subschema out at each use, and each is translated on its
own. `intern_nodes` makes equal subtrees one node first (bottom up, so comparing two nodes compares
children that are already the same objects), and `shared_size` estimates the positions of a tree
whose repeated subtrees are built once: what decides whether rules are worth trying.

>>> from fsm.automata import Ref, Val, alt, lit, seq
>>> v = Val(alt(*[lit(f"{i:03}") for i in range(30)]))
>>> root, rules = share_values(seq(v, lit(","), v), {})
>>> root, sorted(rules)
(Seq(items=(Ref(name='s0'), Lit(text=','), Ref(name='s0'))), ['s0'])
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from .language import Alt, Lit, Members, Node, Ref, Rep, Seq, Val

MIN_SHARED_SIZE = 64  # nodes (as the tree expands them) of a value worth a rule


def _kids(n: Node) -> tuple[Node, ...]:
    """The children the NFA builder expands in place (what ``And``, ``Minus``, ``Enc`` hold is a
    character language built as one small DFA: never a rule)."""
    if isinstance(n, (Seq, Alt)):
        return n.items
    if isinstance(n, (Rep, Val)):
        return (n.item,)
    if isinstance(n, Members):
        return (*(it for it, _, _ in n.items), n.sep)
    return ()


def with_children(n: Node, f: Callable[[Node], Node]) -> Node:
    """``n`` with each child ``c`` of a sequence, alternative, repeat, value or members node
    replaced by ``f(c)``; any other node as it is.

    >>> from fsm.automata import lit, seq
    >>> with_children(seq(lit("a"), Rep(lit("b"), 0, 2)), lambda c: lit("x"))
    Seq(items=(Lit(text='x'), Lit(text='x')))
    """
    if isinstance(n, (Seq, Alt)):
        return type(n)(tuple(f(k) for k in n.items))
    if isinstance(n, Rep):
        return Rep(f(n.item), n.lo, n.hi)
    if isinstance(n, Val):
        return Val(f(n.item))
    if isinstance(n, Members):
        return Members(tuple((f(it), lo, hi) for it, lo, hi in n.items), f(n.sep), n.min_count, n.max_count)
    return n


def intern_nodes(root: Node, rules: dict[str, Node]) -> tuple[Node, dict[str, Node]]:
    """``root`` and ``rules`` with equal subtrees made one object (the same trees).

    >>> from fsm.automata import alt, cls, lit, seq
    >>> a, b = seq(lit("x"), cls((48, 57))), seq(lit("x"), cls((48, 57)))
    >>> root, _ = intern_nodes(alt(seq(a, lit("1")), seq(b, lit("2"))), {})
    >>> root.items[0].items[0] is root.items[1].items[0]
    True
    """
    memo: dict[int, Node] = {}
    table: dict[Node, Node] = {}

    def canon(n: Node) -> Node:
        r = memo.get(id(n))
        if r is None:
            r = with_children(n, canon)
            r = memo[id(n)] = table.setdefault(r, r)
        return r

    return canon(root), {name: canon(body) for name, body in rules.items()}


def repeated(roots: list[Node], kinds: tuple[type, ...], min_size: int = MIN_SHARED_SIZE) -> dict[int, Node]:
    """The nodes of ``kinds`` reached from two parents or more under ``roots`` and of at least
    ``min_size`` nodes as the tree expands them, by id (equal subtrees count as one only when they
    are one object: see `intern_nodes`).

    >>> from fsm.automata import alt, lit, seq
    >>> v = Val(alt(*[lit(f"{i:03}") for i in range(30)]))
    >>> list(repeated([seq(v, lit(","), v)], (Val,)).values()) == [v]
    True
    """
    parents: Counter[int] = Counter()
    nodes: dict[int, Node] = {}
    stack = list(roots)
    while stack:
        n = stack.pop()
        if id(n) in nodes:
            continue
        nodes[id(n)] = n
        for k in _kids(n):
            parents[id(k)] += 1
            stack.append(k)
    sizes: dict[int, int] = {}

    def size(n: Node) -> int:  # nodes as the tree expands them, each shared subtree counted once here
        s = sizes.get(id(n))
        if s is None:
            s = sizes[id(n)] = len(n.text) if isinstance(n, Lit) else 1 + sum(size(k) for k in _kids(n))
        return s

    return {
        i: n for i, n in nodes.items() if isinstance(n, kinds) and parents[i] >= 2 and size(n) >= min_size
    }


def share_values(root: Node, rules: dict[str, Node], min_size: int = MIN_SHARED_SIZE):
    """``root`` and ``rules`` with every `Val` reached from two parents or more (and of at least
    ``min_size`` nodes) replaced by a `Ref` to a new rule holding it; the same language. Equal
    values are one value here, whether or not they were one object."""
    root, rules = intern_nodes(root, rules)
    nodes = repeated([root, *rules.values()], (Val,), min_size)
    names: dict[int, str] = {}
    for i in nodes:
        name = f"s{len(names)}"
        while name in rules:
            name += "_"
        names[i] = name
    if not names:
        return root, rules
    memo: dict[int, Node] = {}

    def rebuild(n: Node, top: bool = False) -> Node:
        if not top and id(n) in names:
            return Ref(names[id(n)])
        r = memo.get(id(n))
        if r is None:
            r = memo[id(n)] = with_children(n, rebuild)
        return r

    out = {name: rebuild(body, True) for name, body in rules.items()}
    for i, name in names.items():
        out[name] = rebuild(nodes[i], True)
    return rebuild(root, True), out
