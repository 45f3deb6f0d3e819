"""Deterministic automata over code points, and the operations JSON Schema needs on small ones.

A `CharDFA` is what ``And`` (intersection), ``Minus`` (difference with a finite set of words) and
``not`` (complement) are computed on: subset construction (`determinize`) over code point range
partitions, then products and complements of those small automata, never of the whole schema.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from .budget import EDGE_BYTES, SET_MEMBER_BYTES, Budget
from .copies import copy_reducer
from .ranges import ANY_CHAR, normalize_ranges, overlay, subtract

Edge = tuple[int, int, int]  # (lo, hi, target)


class CharDFA:
    """A deterministic automaton over code points: ``edges[s]`` are sorted disjoint (lo, hi, target)."""

    def __init__(self, edges: list[list[Edge]], accepting: list[bool]):
        self.edges = edges
        self.accepting = accepting

    def __len__(self) -> int:
        return len(self.edges)

    def step(self, s: int, c: int) -> int:
        """The state after code point ``c`` from ``s`` (-1: no edge)."""
        for lo, hi, t in self.edges[s]:
            if lo <= c <= hi:
                return t
        return -1

    def accepts(self, text: str) -> bool:
        """Whether the whole of ``text`` is in the language."""
        s = 0
        for ch in text:
            s = self.step(s, ord(ch))
            if s < 0:
                return False
        return self.accepting[s]


EMPTY_DFA = CharDFA([[]], [False])


def determinize(nfa, start: int, final: int, budget: Budget) -> CharDFA:
    """Subset construction over code point range partitions (call ``nfa.trim`` first).

    One long function on purpose: it is the hot loop of every ``And``/``Minus``/``not`` and of each
    counter block's unit, and its closure memo and state numbering stay local to one frame.

    >>> from fsm.automata.budget import Budget
    >>> from fsm.automata.nfa import NFA
    >>> from fsm.automata import alt, lit
    >>> from fsm.limits import DEFAULT_LIMITS
    >>> nfa = NFA(Budget(DEFAULT_LIMITS))
    >>> start = nfa.new()
    >>> final = nfa.build(alt(lit("ab"), lit("ac")), start)
    >>> _ = nfa.trim(final)
    >>> d = determinize(nfa, start, final, Budget(DEFAULT_LIMITS))
    >>> d.accepts("ac"), d.accepts("a")
    (True, False)
    """
    trans, eps = nfa.trans, nfa.eps
    cl_memo: dict[int, frozenset] = {}

    def closure(q: int) -> frozenset:
        r = cl_memo.get(q)
        if r is not None:
            return r
        if not eps[q]:
            r = frozenset((q,))
        else:
            seen = {q}
            stack = [q]
            while stack:
                x = stack.pop()
                for y in eps[x]:
                    if y not in seen:
                        seen.add(y)
                        stack.append(y)
            r = frozenset(seen)
        cl_memo[q] = r
        return r

    ids: dict[frozenset, int] = {}
    sets: list[frozenset] = []
    raw_ids: dict[frozenset, int] = {}
    reduce = copy_reducer(nfa)

    def dfa_id(raw: frozenset) -> int:
        d = raw_ids.get(raw)
        if d is not None:
            return d
        if len(raw) == 1:
            (q,) = raw
            S = closure(q)
        else:
            S = frozenset().union(*(closure(q) for q in raw))
        if reduce is not None:  # a state beside its counterpart in an earlier copy adds no word
            S = reduce(S)
        d = ids.get(S)
        if d is None:
            d = ids[S] = len(sets)
            sets.append(S)
            budget.charge((len(S) + len(raw)) * SET_MEMBER_BYTES, "the automaton")
        raw_ids[raw] = d
        return d

    dfa_id(frozenset((start,)))
    out_edges: list[list[Edge]] = []
    accepting: list[bool] = []
    i = 0
    while i < len(sets):
        S = sets[i]
        i += 1
        accepting.append(final in S)
        ev: list[Edge] = []
        for q in S:
            if trans[q]:
                ev.extend(trans[q])
        if not ev:
            out_edges.append([])
            continue
        if len(ev) == 1:
            lo, hi, t = ev[0]
            out_edges.append([(lo, hi, dfa_id(frozenset((t,))))])
            continue
        row: list[Edge] = []
        for x, y, targets in overlay(ev):
            d = dfa_id(targets)
            if row and row[-1][2] == d and row[-1][1] + 1 == x:
                row[-1] = (row[-1][0], y, d)
            else:
                row.append((x, y, d))
        out_edges.append(row)
        budget.tick(len(sets), "the automaton")
    return CharDFA(out_edges, accepting)


def complement_dfa(dfa: CharDFA) -> CharDFA:
    """The DFA of every character string ``dfa`` (deterministic, missing edges = reject) rejects.

    >>> from fsm.automata import lit, node_to_char_dfa
    >>> d = complement_dfa(node_to_char_dfa(lit("a")))
    >>> d.accepts("a"), d.accepts(""), d.accepts("ab")
    (False, True, True)
    """
    n = len(dfa)
    sink = n
    edges = []
    for q in range(n):
        row = list(dfa.edges[q])
        covered = normalize_ranges([(lo, hi) for lo, hi, _ in row])
        row.extend((lo, hi, sink) for lo, hi in subtract(ANY_CHAR, covered))
        edges.append(sorted(row))
    edges.append([(lo, hi, sink) for lo, hi in ANY_CHAR])
    return CharDFA(edges, [not a for a in dfa.accepting] + [True])


def minimize_dfa(dfa: CharDFA) -> CharDFA:
    """The minimal DFA of a trimmed ``dfa`` (Moore's partition refinement over range edges); its
    state 0 is never re-entered, so it can be spliced in at a state with edges of its own.

    >>> from fsm.automata import alt, lit, node_to_char_dfa, rep
    >>> d = node_to_char_dfa(alt(lit("ab"), lit("cb"), rep(lit("x"), 1, 3)))
    >>> m = minimize_dfa(d)
    >>> len(d), len(m), [m.accepts(s) for s in ("ab", "cb", "xxx", "a", "xxxx")]
    (8, 5, [True, True, True, False, False])
    """
    n = len(dfa)
    part = [int(a) for a in dfa.accepting]
    count = len(set(part))

    def row(q: int, part: list[int]) -> tuple:
        out: list[list[int]] = []
        for lo, hi, t in dfa.edges[q]:
            if out and out[-1][1] + 1 == lo and out[-1][2] == part[t]:
                out[-1][1] = hi
            else:
                out.append([lo, hi, part[t]])
        return tuple(map(tuple, out))

    while True:
        ids: dict[tuple, int] = {}
        new = [ids.setdefault((part[q], row(q, part)), len(ids)) for q in range(n)]
        part = new
        if len(ids) == count:
            break
        count = len(ids)
    # number the blocks from state 0's, then give the start a copy of its own if it is re-entered
    order = {part[0]: 0}
    for q in range(n):
        order.setdefault(part[q], len(order))
    rep_of = {}
    for q in range(n):
        rep_of.setdefault(order[part[q]], q)
    re_entered = any(order[part[t]] == 0 for q in range(n) for _, _, t in dfa.edges[q])
    shift = 1 if re_entered else 0
    edges = [[(lo, hi, order[b] + shift) for lo, hi, b in row(rep_of[i], part)] for i in range(len(order))]
    accepting = [dfa.accepting[rep_of[i]] for i in range(len(order))]
    if re_entered:
        edges, accepting = [edges[0], *edges], [accepting[0], *accepting]
    return CharDFA([list(e) for e in edges], accepting)


def trim_dfa(dfa: CharDFA, budget: Budget | None = None) -> CharDFA | None:
    """Keep states reachable from 0 that can reach acceptance; None if the language is empty.
    ``budget``: the construction's deadline, checked as it goes (a product to trim can be big).

    >>> trim_dfa(CharDFA([[(97, 97, 1)], []], [False, False])) is None
    True
    """
    n = len(dfa)
    rev: list[list[int]] = [[] for _ in range(n)]
    for q, edges in enumerate(dfa.edges):
        if budget is not None and q & 4095 == 0:
            budget.deadline.check("trimming an automaton")
        for _, _, t in edges:
            rev[t].append(q)
    live = list(dfa.accepting)
    stack = [q for q in range(n) if live[q]]
    while stack:
        if budget is not None and len(stack) & 4095 == 0:
            budget.deadline.check("trimming an automaton")
        t = stack.pop()
        for q in rev[t]:
            if not live[q]:
                live[q] = True
                stack.append(q)
    if not live[0]:
        return None
    order, seen, stack = [], {0}, [0]
    while stack:
        q = stack.pop()
        order.append(q)
        if budget is not None and len(order) & 4095 == 0:
            budget.deadline.check("trimming an automaton")
        for _, _, t in dfa.edges[q]:
            if live[t] and t not in seen:
                seen.add(t)
                stack.append(t)
    order.sort()
    new = {q: i for i, q in enumerate(order)}
    edges = []
    for q in order:
        if budget is not None and len(edges) & 4095 == 0:
            budget.deadline.check("trimming an automaton")
        edges.append([(lo, hi, new[t]) for lo, hi, t in dfa.edges[q] if t in new])
    return CharDFA(edges, [dfa.accepting[q] for q in order])


def pair_row(
    ea: list[Edge], eb: list[Edge], ids: dict[tuple[int, int], int], pairs: list, merge: bool = False
) -> list[Edge]:
    """The row of a product state whose two states have rows ``ea`` and ``eb`` (sorted, disjoint):
    their common refinement, each part to its pair of targets, numbered in ``ids`` (new pairs
    appended to ``pairs``); ``merge`` joins touching parts that go to the same pair.

    >>> ids, pairs = {}, []
    >>> pair_row([(97, 99, 1)], [(98, 100, 2)], ids, pairs), pairs
    ([(98, 99, 0)], [(1, 2)])
    """
    row: list[Edge] = []
    x = y = 0
    while x < len(ea) and y < len(eb):
        lo, hi = max(ea[x][0], eb[y][0]), min(ea[x][1], eb[y][1])
        if lo <= hi:
            key = (ea[x][2], eb[y][2])
            t = ids.get(key)
            if t is None:
                t = ids[key] = len(pairs)
                pairs.append(key)
            if merge and row and row[-1][2] == t and row[-1][1] + 1 == lo:
                row[-1] = (row[-1][0], hi, t)
            else:
                row.append((lo, hi, t))
        if ea[x][1] < eb[y][1]:
            x += 1
        else:
            y += 1
    return row


def product(a: CharDFA, b: CharDFA, budget: Budget) -> CharDFA:
    """The DFA of the strings both ``a`` and ``b`` accept (reachable pairs only; not trimmed).

    >>> from fsm.automata import cls, lit, node_to_char_dfa, rep
    >>> from fsm.automata.budget import Budget
    >>> from fsm.limits import DEFAULT_LIMITS
    >>> b = Budget(DEFAULT_LIMITS)
    >>> d = product(node_to_char_dfa(rep(cls((97, 98)), 0, None)), node_to_char_dfa(rep(lit("a"), 0, 2)), b)
    >>> d.accepts("aa"), d.accepts("ab"), d.accepts("aaa")
    (True, False, False)
    """
    ids = {(0, 0): 0}
    pairs = [(0, 0)]
    edges: list[list[Edge]] = []
    acc: list[bool] = []
    i = 0
    while i < len(pairs):
        p, q = pairs[i]
        i += 1
        acc.append(a.accepting[p] and b.accepting[q])
        row = pair_row(a.edges[p], b.edges[q], ids, pairs)
        edges.append(row)
        budget.tick(len(pairs), "intersection of string constraints")
        # the row's edges, and the pair with its id entry (about two edges' worth)
        budget.charge((len(row) + 2) * EDGE_BYTES, "intersection of string constraints")
    return CharDFA(edges, acc)


def minus_words(a: CharDFA, words: frozenset[str], budget: Budget) -> CharDFA:
    """The DFA of the strings ``a`` accepts except ``words`` (a trie of the words run beside ``a``).

    >>> from fsm.automata import cls, node_to_char_dfa, rep
    >>> from fsm.automata.budget import Budget
    >>> from fsm.limits import DEFAULT_LIMITS
    >>> d = minus_words(node_to_char_dfa(rep(cls((97, 98)), 1, 2)), frozenset({"ab"}), Budget(DEFAULT_LIMITS))
    >>> d.accepts("ab"), d.accepts("ba")
    (False, True)
    """
    # A trie of the words, run in parallel with ``a``; states where a word ends are not accepting.
    trie: list[dict[int, int]] = [{}]
    ends = {0: False}
    for w in words:
        t = 0
        for ch in w:
            nxt = trie[t].get(ord(ch))
            if nxt is None:
                nxt = len(trie)
                trie.append({})
                ends[nxt] = False
                trie[t][ord(ch)] = nxt
            t = nxt
        ends[t] = True
    ids = {(0, 0): 0}
    pairs = [(0, 0)]
    edges: list[list[Edge]] = []
    acc: list[bool] = []
    i = 0
    while i < len(pairs):
        p, t = pairs[i]
        i += 1
        acc.append(a.accepting[p] and not (t >= 0 and ends[t]))
        row = []
        kids = trie[t] if t >= 0 else {}
        for lo, hi, nq in a.edges[p]:
            cuts = sorted(c for c in kids if lo <= c <= hi)
            x = lo
            for c in [*cuts, hi + 1]:
                if x <= c - 1:
                    key = (nq, -1)
                    d = ids.get(key)
                    if d is None:
                        d = ids[key] = len(pairs)
                        pairs.append(key)
                    row.append((x, c - 1, d))
                if c <= hi:
                    key = (nq, kids[c])
                    d = ids.get(key)
                    if d is None:
                        d = ids[key] = len(pairs)
                        pairs.append(key)
                    row.append((c, c, d))
                x = c + 1
        edges.append(row)
        budget.tick(len(pairs), "property names")
    return CharDFA(edges, acc)


def auto_dfa(edges, accepting, budget: Budget | None = None) -> CharDFA | None:
    """The trimmed `CharDFA` of an automaton given as rows of (lo, hi, target) triples (an `Auto`
    node's), or None when a row is not sorted and disjoint (then it is no DFA: determinize it).

    >>> auto_dfa((((97, 97, 1),), ()), (False, True)).accepts("a")
    True
    """
    if not deterministic(edges):
        return None
    return trim_dfa(CharDFA([list(row) for row in edges], list(accepting)), budget)


def deterministic(edges) -> bool:
    """Whether every row of ``edges`` ((lo, hi, target) triples) is sorted and disjoint, as a
    `CharDFA`'s must be.

    >>> deterministic([[(97, 98, 1), (100, 100, 0)], []]), deterministic([[(97, 98, 1), (98, 99, 0)]])
    (True, False)
    """
    for row in edges:
        prev = -1
        for lo, hi, _ in row:
            if lo <= prev or hi < lo:
                return False
            prev = hi
    return True


class CharDFAMemo:
    """Character DFAs by the node they were made of: at most ``size`` of them, each of at most
    ``max_states`` states (a small memory bound), least recently used dropped first; thread-safe.

    >>> from fsm.automata import lit
    >>> m = CharDFAMemo(2)
    >>> m.put(lit("a"), EMPTY_DFA); m.get(lit("a"))[0], m.get(lit("b"))[0]
    (True, False)
    """

    def __init__(self, size: int = 512, max_states: int = 2048):
        """``size`` DFAs at most, each of ``max_states`` states at most."""
        self.size = size
        self.max_states = max_states
        self._items: OrderedDict = OrderedDict()
        self._lock = threading.Lock()

    def get(self, node) -> tuple[bool, CharDFA | None]:
        """(found, the DFA or None for an empty language)."""
        try:
            with self._lock:
                d = self._items[node]
                self._items.move_to_end(node)
                return True, d
        except (KeyError, TypeError):  # TypeError: a node holding something unhashable
            return False, None

    def put(self, node, dfa: CharDFA | None) -> None:
        if dfa is not None and len(dfa) > self.max_states:
            return
        if isinstance(dfa, CharDFA):  # finished: tuples, out of the garbage collector's view (`state_rows`)
            dfa.edges, dfa.accepting = tuple(map(tuple, dfa.edges)), tuple(dfa.accepting)
        try:
            with self._lock:
                self._items[node] = dfa
                self._items.move_to_end(node)
                while len(self._items) > self.size:
                    self._items.popitem(last=False)
        except TypeError:
            pass


MEMO = CharDFAMemo()  # the process's memo of `nfa.node_to_char_dfa`
