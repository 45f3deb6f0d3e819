"""An incremental LALR(1) stack machine over lark's parse table, with hash-consed stacks.

A parser configuration is a stack of LR states. Stacks are persistent linked lists whose nodes are
interned: equal stacks have the same integer id, so a configuration is one int — cheap to copy, to
roll back, and to use as a cache key — and every feed result is memoized per (stack, terminal).
"""

from __future__ import annotations

import threading

from .lark import ParseTable

_MAX_MEMO = 1 << 21  # interned stacks before the memo tables are dropped


class Truncated(Exception):
    """A computation on a truncated stack needed a state below the cut."""


class LRParser:
    """Feeds terminals to stacks. Stack ids are shared by every matcher of one grammar index.

    >>> from fsm.grammar.lark import load_lark
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
        # Per LR state: terminals shifted at once, and per reduction the lookaheads that trigger it.
        self._shift_bits: list[int] = []
        self._reductions: list[list[tuple[int, int]]] = []
        for row in table.action:
            shift, by_rule = 0, {}
            for term, act in row.items():
                if term == table.end_term:
                    continue
                if act >= 0:
                    shift |= 1 << term
                else:
                    by_rule[~act] = by_rule.get(~act, 0) | (1 << term)
            self._shift_bits.append(shift)
            self._reductions.append(sorted(by_rule.items()))
        self._reduced: dict[tuple[int, int], int] = {}
        self._truncs: dict[tuple[int, int], int] = {}
        # Truncated stacks hang off this sentinel; reading it means the cut was too shallow.
        self.cut = self._push(-1, -1)

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
                    if len(self._intern) > _MAX_MEMO:
                        self._forget()
        return nid

    def _forget(self) -> None:
        """Drop the memo tables (not the nodes: live matchers hold their ids). Equal stacks may then
        get new ids, which only costs cache misses; it bounds memory on long-running servers."""
        self._intern = {(-1, -1): self.cut} if hasattr(self, "cut") else {}
        self._feed.clear()
        self._end.clear()
        self._acc.clear()
        self._reduced.clear()
        self._truncs.clear()

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

    def truncate(self, node: int, depth: int) -> int:
        """The top ``depth`` states of stack ``node`` on the cut sentinel (``node`` itself if shallower).

        Results computed on a truncated stack without raising `Truncated` hold for every stack with
        the same top, so they can be cached by the truncated id.
        """
        key = (node, depth)
        out = self._truncs.get(key)
        if out is None:
            states = []
            n = node
            while len(states) < depth and n >= 0 and n != self.cut:
                states.append(self._state[n])
                n = self._parent[n]
            if n < 0 or n == self.cut:
                out = node
            else:
                out = self.cut
                for st in reversed(states):
                    out = self._push(out, st)
            self._truncs[key] = out
        return out

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
            cut = self.cut
            for _ in range(rlen[r]):
                node = parent[node]
                if node == cut:
                    raise Truncated
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
                if node == self.cut:
                    raise Truncated
            node = self._push(node, t.goto[state[node]][t.rule_lhs[r]])

    def _reduce(self, node: int, rule: int) -> int:
        key = (node, rule)
        out = self._reduced.get(key)
        if out is None:
            t = self.table
            n = node
            for _ in range(t.rule_len[rule]):
                n = self._parent[n]
                if n == self.cut:
                    raise Truncated
            out = self._push(n, t.goto[self._state[n]][t.rule_lhs[rule]])
            self._reduced[key] = out
        return out

    def acc_bits(self, node: int) -> int:
        """Bit set of the terminals the parser accepts next (exact: reductions simulated).

        Lookaheads that trigger the same reduction share it: acc(s) = shifts(top) | for each
        reduction r, acc(reduce(s, r)) & lookaheads(top, r) — one reduction chain, not one per terminal.
        """
        out = self._acc.get(node)
        if out is None:
            top = self._state[node]
            out = self._shift_bits[top]
            for rule, la in self._reductions[top]:
                out |= self.acc_bits(self._reduce(node, rule)) & la
            self._acc[node] = out
        return out
