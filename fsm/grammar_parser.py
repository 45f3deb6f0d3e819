"""An incremental LALR(1) stack machine over lark's parse table, with hash-consed stacks.

A parser configuration is a stack of LR states. Stacks are persistent linked lists whose nodes are
interned: equal stacks have the same integer id, so a configuration is one int — cheap to copy, to
roll back, and to use as a cache key — and every feed result is memoized per (stack, terminal).
"""

from __future__ import annotations

import threading

from .grammar_lark import ParseTable


class LRParser:
    """Feeds terminals to stacks. Stack ids are shared by every matcher of one grammar index.

    >>> from fsm.grammar_lark import load_lark
    >>> g = load_lark('start: "(" start ")" | "x"')
    >>> p = LRParser(g.table)
    >>> lp, rp, x = (g.term_id(n) for n in ("LPAR", "RPAR", "X"))
    >>> s = p.feed(p.feed(p.feed(p.root, lp), x), rp)
    >>> p.accepts_end(s), p.feed(s, rp)
    (True, -1)
    """

    def __init__(self, table: ParseTable):
        self.table = table
        self._parent: list[int] = [-1]
        self._state: list[int] = [table.start_state]
        self._intern: dict[tuple[int, int], int] = {}
        self._feed: dict[int, int] = {}
        self._end: dict[int, bool] = {}
        self._acc: dict[int, int] = {}
        self._lock = threading.Lock()
        self.n_terms = table.end_term
        self._stride = table.end_term + 1
        self.root = 0

    # -- stacks -------------------------------------------------------------------------------
    def _push(self, node: int, state: int) -> int:
        key = (node, state)
        nid = self._intern.get(key)
        if nid is None:
            with self._lock:
                nid = self._intern.get(key)
                if nid is None:
                    nid = len(self._state)
                    self._parent.append(node)
                    self._state.append(state)
                    self._intern[key] = nid
        return nid

    def top(self, node: int) -> int:
        """LR state on top of stack ``node``."""
        return self._state[node]

    def states(self, node: int) -> list[int]:
        """The whole stack, bottom first (for debugging and tests)."""
        out = []
        while node >= 0:
            out.append(self._state[node])
            node = self._parent[node]
        return out[::-1]

    @property
    def n_nodes(self) -> int:
        return len(self._state)

    # -- feeding ------------------------------------------------------------------------------
    def feed(self, node: int, term: int) -> int:
        """Stack after shifting terminal ``term`` (reductions included), or -1 if it is a syntax error."""
        key = node * self._stride + term
        out = self._feed.get(key)
        if out is None:
            out = self._run(node, term)
            self._feed[key] = out
        return out

    def _run(self, node: int, term: int) -> int:
        t = self.table
        action, goto, rlen, rlhs = t.action, t.goto, t.rule_len, t.rule_lhs
        parent, state = self._parent, self._state
        while True:
            act = action[state[node]].get(term)
            if act is None:
                return -1
            if act >= 0:
                return self._push(node, act)
            r = ~act
            for _ in range(rlen[r]):
                node = parent[node]
            node = self._push(node, goto[state[node]][rlhs[r]])

    def accepts_end(self, node: int) -> bool:
        """True when the input may end here (lark's parser would accept on $END)."""
        out = self._end.get(node)
        if out is None:
            out = self._run_end(node)
            self._end[node] = out
        return out

    def _run_end(self, node: int) -> bool:
        t = self.table
        end = t.end_term
        parent, state = self._parent, self._state
        while True:
            if state[node] == t.end_state:
                return True
            act = t.action[state[node]].get(end)
            if act is None or act >= 0:
                return False
            r = ~act
            for _ in range(t.rule_len[r]):
                node = parent[node]
            node = self._push(node, t.goto[state[node]][t.rule_lhs[r]])

    def acc_bits(self, node: int) -> int:
        """Bit set of the terminals the parser accepts next (exact: reductions simulated)."""
        out = self._acc.get(node)
        if out is None:
            out = 0
            for term in self.table.action[self._state[node]]:
                if term != self.table.end_term and self.feed(node, term) >= 0:
                    out |= 1 << term
            self._acc[node] = out
        return out
