"""Values a tree holds in several places, made rules of their own for the pushdown automaton.

A translation shares equal subtrees by reference (the same conjunction met at two places is one
node), so the tree is a DAG; the NFA builder expands it as a tree, one copy per path. Where the
paths multiply (a chain of levels, each referring to the next from two places: a declared
property and ``additionalProperties``), the copies grow exponentially with the depth even though
the DAG is small. In rule modes a JSON value (`Val`) can be called instead: every `Val` with
several parents and some size becomes a rule, built once. The cost avoided is the copies.

>>> from fsm.automata import Ref, Val, alt, lit, seq
>>> v = Val(alt(*[lit(f"{i:03}") for i in range(30)]))
>>> root, rules = share_values(seq(v, lit(","), v), {})
>>> root, sorted(rules)
(Seq(items=(Ref(name='s0'), Lit(text=','), Ref(name='s0'))), ['s0'])
"""

from __future__ import annotations

from collections import Counter

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


def share_values(root: Node, rules: dict[str, Node], min_size: int = MIN_SHARED_SIZE):
    """``root`` and ``rules`` with every `Val` reached from two parents or more (and of at least
    ``min_size`` nodes) replaced by a `Ref` to a new rule holding it; the same language."""
    parents: Counter[int] = Counter()
    nodes: dict[int, Node] = {}
    stack = [root, *rules.values()]
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

    names: dict[int, str] = {}
    for i, n in nodes.items():
        if isinstance(n, Val) and parents[i] >= 2 and size(n) >= min_size:
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
            if isinstance(n, (Seq, Alt)):
                r = type(n)(tuple(rebuild(k) for k in n.items))
            elif isinstance(n, Rep):
                r = Rep(rebuild(n.item), n.lo, n.hi)
            elif isinstance(n, Val):
                r = Val(rebuild(n.item))
            elif isinstance(n, Members):
                items = tuple((rebuild(it), lo, hi) for it, lo, hi in n.items)
                r = Members(items, rebuild(n.sep), n.min_count, n.max_count)
            else:
                r = n
            memo[id(n)] = r
        return r

    out = {name: rebuild(body, True) for name, body in rules.items()}
    for i, name in names.items():
        out[name] = rebuild(nodes[i], True)
    return rebuild(root, True), out
