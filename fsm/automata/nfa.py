"""Compile a language tree (`language`) straight to a byte DFA, without going through regex text.

Regex text for a big schema is large (optional properties are quadratic as text) and a generic
regex parser is slow on it; the tree itself compiles linearly. Steps: a character-level NFA with
code point range edges (Thompson construction; ``Members`` gets one copy of each item), pruned to
states that can still accept; subset construction over range partitions into a character DFA;
every character edge expanded into its UTF-8 byte paths (shared trie nodes); byte columns folded
into classes. ``And`` and ``Minus`` are built on small determinized sub-automata and spliced in.

>>> from fsm.automata import alt, lit, node_to_dfa
>>> node_to_dfa(alt(lit("yes"), lit("no"))).accepts(b"no")
True
"""

from __future__ import annotations

from collections import defaultdict

from ..limits import DEFAULT_LIMITS
from .any_value import AnyValueBlock, scalar_nodes
from .blocks import COUNTER_MIN, CounterBlock, Counters, ProductBlock, counted_block
from .budget import NFA_STATE_BYTES, Budget
from .char_dfa import EMPTY_DFA, MEMO, CharDFA, Edge, auto_dfa, determinize, minus_words, product, trim_dfa
from .class_repeats import class_copies
from .escapes import MUST_ESCAPE_IN, add_any_escape, encoded_char, escape_split, splice_escapes
from .language import Alt, And, AnyJson, Auto, Cls, Enc, Guard, Lit, Members, Minus, Node, Ref, Rep, Seq, Val
from .lengths import min_length
from .literal_trie import literal_trie
from .liveness import trim_nfa
from .members import build_members
from .ranges import ANY_CHAR, clipped_rows, intersect, normalize_ranges
from .remainders import Multiples, NeedsLazyDfa, RemainderBlock, Remainders, refuse_plain
from .universal import merge_universal

_UNIT_MAX = 64  # ... when its item is a DFA of at most this many states
_PRODUCT_MAX = 4_000_000  # states of a lazy length product (its liveness table is this many int32)


class NotRegular(Exception):
    """Internal: a node (`AnyJson`) needs the lazy DFA's virtual states; a plain automaton cannot hold it."""


class NFA:
    """Character NFA under construction: range edges and epsilon edges."""

    def __init__(self, budget: Budget, counters: bool = False, calls=None):
        self.trans: list[list[Edge]] = []
        self.eps: list[list[int]] = []
        self.budget = budget
        self._charged = 0  # states counted against max_memory so far (counted 256 at a time)
        self._enc_cache: dict[tuple, Node] = {}
        self._small: dict[Node, CharDFA] = {}
        self._esc_entry: dict[tuple, int] = {}
        # Long counted repeats become `CounterBlock`s (virtual states, see there) when the consumer
        # supports them: the lazy DFA does, `determinize` does not.
        self.counters = Counters() if counters else None
        # `Ref`s become call sites of rules (a pushdown automaton, see `pushdown`) when given
        self.calls = calls
        # the state ranges of a counted repeat's optional copies, after its entry (plain NFAs only):
        # `determinize` drops a state from a subset beside its counterpart in an earlier copy
        self.copies: list[tuple[list[tuple[int, int, int]], bool]] = []  # (copies, a loop's)
        # Set where a construction may leave a state that cannot reach its end (an empty language
        # somewhere, counts that cannot be met); otherwise every state can reach the end of what
        # it was built for, so every state is live and `trim` has no liveness pass to run.
        self.maybe_dead = False

    def new(self) -> int:
        """A fresh state (no edges yet); its id."""
        self.trans.append([])
        self.eps.append([])
        n = len(self.trans)
        if n - self._charged >= 256:
            self._count(n)
        return n - 1

    def made(self, n: int) -> None:
        """Count the states up to ``n`` made at once (a template's, see `new`)."""
        if n - self._charged >= 256:
            self._count(n)

    def _count(self, n: int) -> None:
        """Count the states made since the last count (time, ``max_states``, ``max_memory``)."""
        self.budget.tick(n, "the automaton")
        self.budget.charge((n - self._charged) * NFA_STATE_BYTES, "the automaton")
        self._charged = n

    # -- Thompson construction ------------------------------------------------------------------
    def build(self, node: Node, s: int, enc: bool = False, full: bool = False) -> int:
        """Add ``node`` starting at state ``s``; return its end state."""
        if isinstance(node, Lit):
            return self._lit(node.text, s, enc)
        if isinstance(node, Cls):
            e = self.new()
            self._cls_to(node.ranges, enc, full, s, e)
            return e
        if isinstance(node, Seq):
            for it in node.items:
                s = self.build(it, s, enc, full)
            return s
        if isinstance(node, Alt):
            e = self.new()
            if not node.items:
                self.maybe_dead = True
            for it in literal_trie(self, node.items, s, e, enc):  # (an enum's values share prefixes)
                self.eps[self.build(it, s, enc, full)].append(e)
            return e
        if isinstance(node, Rep):
            return self._rep(node, s, enc, full)
        if isinstance(node, Members):
            return build_members(self, node, s, enc, full)
        if isinstance(node, Val):
            return self.build(node.item, s, enc, full)
        if isinstance(node, Enc):
            return self.build(node.item, s, True, node.full)
        if isinstance(node, Auto):
            d = trim_dfa(CharDFA([list(r) for r in node.edges], list(node.accepting)))
            return self.embed(d or EMPTY_DFA, s, enc)
        if isinstance(node, (And, Minus)):
            if self.counters is not None and isinstance(node, And):
                e = self._length_product(node, s, enc)
                if e is not None:
                    return e
            d = self._small.get(node)
            if d is None:
                d = self._small[node] = small_dfa(node, self.budget)
            return self.embed(d, s, enc)
        if isinstance(node, AnyJson):
            return self._any_json(node, s)
        if isinstance(node, Multiples):  # a big multipleOf: the lazy DFA only (see `remainders`)
            refuse_plain(node, self.counters)
            rem = self.counters.units.get(node)
            if rem is None:
                unit = small_dfa(node.item, self.budget)
                rem = self.counters.units[node] = Remainders(unit, node.m, node.scale, node.negs)
            if not rem.live(rem.key(0)):
                self.maybe_dead = True
                return self.new()
            if not rem.expandable:
                self.counters.lazy_only.add("multipleOf")
            return self._enter(RemainderBlock(rem, self.new()), s)
        if isinstance(node, Guard):
            if self.counters is None and node.required_by:
                raise NotRegular(f"{node.required_by} needs a text check, which only the lazy DFA runs")
            e = self.new()  # a plain NFA leaves the branch out: nothing leads to ``e`` (see `Guard`)
            if self.counters is None:
                self.maybe_dead = True
            else:
                p = self.new()
                self.eps[s].append(p)
                self.counters.guard(p, node.check, e, node.required_by)
            return e
        if isinstance(node, Ref):
            if self.calls is None:
                raise NotRegular(
                    f"rule reference {node.name!r} needs a pushdown automaton or the grammar engine"
                )
            c, r = self.new(), self.new()
            self.eps[s].append(c)
            self.calls.site[c] = (node.name, r)
            return r
        raise TypeError(f"unknown node {node!r}")

    def _lit(self, text: str, s: int, enc: bool) -> int:
        """``text`` from ``s`` (characters JSON must escape as their escapes when ``enc``)."""
        if not text:
            return s
        if enc and MUST_ESCAPE_IN.search(text):
            for ch in text:
                c = ord(ch)
                if c < 0x20 or ch in '"\\':
                    s = self.build(self._encoded(((c, c),), False), s)
                else:
                    e = self.new()
                    self.trans[s].append((c, c, e))
                    s = e
            return s
        # a chain of fresh states, allocated at once
        trans = self.trans
        n0 = len(trans)
        k = len(text)
        c = ord(text[0])
        trans[s].append((c, c, n0))
        if k == 1:  # most literals of a schema: a brace, a comma, a colon
            trans.append([])
            self.eps.append([])
        else:
            # the chain's inner states are finished: tuples (lists: GC work per state, for the NFA's life)
            trans.extend(
                [((c, c, t),) for c, t in zip(map(ord, text[1:]), range(n0 + 1, n0 + k), strict=True)]
            )
            trans.append([])
            eps = self.eps
            eps.extend([()] * (k - 1))
            eps.append([])
        if n0 + k - self._charged >= 256:
            self._count(n0 + k)
        return n0 + k - 1

    def _rep(self, node: Rep, s: int, enc: bool, full: bool) -> int:
        """``node.item`` repeated ``lo..hi`` times from ``s``: a counter block when long, else copies."""
        if self.counters is not None and counted_block(node):
            e = self._counter(node, s, enc, full)
            if e is not None:
                return e
        plain = not enc and self.counters is None and self.calls is None and min_length(node.item) > 0
        item = node.item
        if (
            node.hi is not None
            and isinstance(item, Cls)
            and item.ranges
            and not (enc and escape_split(item.ranges)[1])
        ):
            return class_copies(self, item.ranges, s, node.lo, node.hi, plain)
        copies = [(s, s, s)]  # (first state, last + 1, end) of the last required copy and the others
        for _ in range(node.lo):
            n0, s = len(self.trans), self.build(node.item, s, enc, full)
            copies = [(n0, len(self.trans), s)]
        if node.hi is None and isinstance(node.item, Cls):
            m = self.new()
            self.eps[s].append(m)
            self._cls_to(node.item.ranges, enc, full, m, m)
            return m
        # (plain: a nullable item's copies pass into each other by epsilon: an earlier copy's state
        # in a subset then stands for nothing of its own, and dropping a later one lost words
        # ((?:a*){0,3} rejected "a"); copies of items that read a character are recorded only)
        if node.hi is None:
            m = self.new()  # a fresh loop head, so no loop runs back into a shared state
            self.eps[s].append(m)
            n0, end = len(self.trans), self.build(node.item, m, enc, full)
            self.eps[end].append(m)
            if plain and node.lo:  # the loop's copy has the words of the last required one
                self.copies.append(([*copies, (n0, len(self.trans), end)], True))
            return m
        e = self.new()
        self.eps[s].append(e)
        for _ in range(node.hi - node.lo):
            n0, s = len(self.trans), self.build(node.item, s, enc, full)
            self.eps[s].append(e)
            copies.append((n0, len(self.trans), s))
        if plain and len(copies) > 2:
            self.copies.append((copies, False))
        return e

    def _counter(self, node: Rep, s: int, enc: bool, full: bool) -> int | None:
        """``node`` as a counter block from ``s``; None when its item is too big to be a unit."""
        key = (node.item, enc, full)
        unit = self.counters.units.get(key, False)
        if unit is False:
            sub = NFA(self.budget)
            st = sub.new()
            try:
                en = sub.build(node.item, st, enc, full)
            except (NotRegular, NeedsLazyDfa):  # a block or rule call inside: copies in this NFA instead
                self.counters.units[key] = None
                return None
            unit = None
            if sub.trim(en)[st] and len(sub.trans) <= 4 * _UNIT_MAX:
                d = trim_dfa(determinize(sub, st, en, self.budget))
                # state 0 must mean "between items": not re-entered, not accepting (item non-empty)
                if (
                    d is not None
                    and len(d) <= _UNIT_MAX
                    and not d.accepting[0]
                    and not any(t == 0 for row in d.edges for _, _, t in row)
                ):
                    unit = d
            self.counters.units[key] = unit
        if unit is None:
            return None
        return self._enter(CounterBlock(unit, node.lo, node.hi, self.new()), s)

    def _enter(self, block, s: int) -> int:
        """Virtual ``block`` entered from ``s``: its end state."""
        self.eps[s].append(self.counters.add(block))
        self.counters.entries.append((s, block.end))
        return block.end

    def _any_json(self, node: AnyJson, s: int) -> int:
        """An unbounded JSON value as a pushdown block (lazy consumers only, see `any_value`)."""
        if self.counters is None:
            raise NotRegular("an unconstrained JSON value nests without bound")
        dfas = _ANY_DFAS.get(node.max_string_length)
        if dfas is None:
            # the scalar and key DFAs of any value, per process: their trees rebuilt and looked up
            # in the DFA memo cost ~80 µs of a small schema's ~0.5 ms compile
            dfas = tuple(node_to_char_dfa(part, self.budget) for part in scalar_nodes(node.max_string_length))
            if len(_ANY_DFAS) < 64:  # (a few string bounds recur: a dozen are plenty)
                _ANY_DFAS[node.max_string_length] = dfas
        return self._enter(AnyValueBlock(dfas[0], dfas[1], self.new(), node.indent, node.depth), s)

    def _length_product(self, node: And, s: int, enc: bool) -> int | None:
        """``And(L, Rep(Cls, lo, hi))`` with a long count as a lazy product block, or None.

        The product of a format's DFA (hundreds of states) with ``maxLength: 255`` has ~10^5 states;
        `ProductBlock` makes only those a token walk reaches.
        """
        counts = [
            it for it in node.items if isinstance(it, Rep) and isinstance(it.item, Cls) and it.hi is not None
        ]
        rest = [it for it in node.items if it not in counts]
        if not counts or not rest:
            return None
        lo = max(c.lo for c in counts)
        hi = min(c.hi for c in counts)
        ranges = counts[0].item.ranges
        for c in counts[1:]:
            ranges = intersect(ranges, c.item.ranges)
        if hi - lo < COUNTER_MIN or hi < lo:
            return None
        key = ("product", tuple(rest), ranges, lo, hi, enc)
        shared = self.counters.units.get(key, False)
        if shared is False:
            shared = None
            d = merge_universal(small_dfa(rest[0] if len(rest) == 1 else And(tuple(rest)), self.budget))
            n = len(d)
            edges = clipped_rows(d.edges, ranges)
            if n * (hi + 1) <= _PRODUCT_MAX and n >= 2:
                unit = CharDFA(edges, d.accepting)
                shared = (unit, ProductBlock.lengths(unit, hi, self.budget))
            self.counters.units[key] = shared
        if shared is None:
            return None
        block = ProductBlock(shared[0], lo, hi, self.new(), shared[1], enc)
        if block.live(0, 0):
            return self._enter(block, s)
        self.maybe_dead = True
        return block.end

    def _cls_to(self, ranges, enc: bool, full: bool, s: int, e: int) -> None:
        """Edges from ``s`` to ``e`` for one character of ``ranges`` (JSON-encoded when ``enc``)."""
        if not ranges:
            self.maybe_dead = True
        if not enc:
            self.trans[s].extend((a, b, e) for a, b in ranges)
            return
        raw, special = escape_split(ranges)
        self.trans[s].extend((a, b, e) for a, b in raw)
        if full and ranges == ANY_CHAR:
            add_any_escape(self, s, e)
            return
        if special:
            # the escapes (a few states) are shared by every edge into ``e`` that needs them
            key = (special, e)
            x = self._esc_entry.get(key)
            if x is None:
                x = self._esc_entry[key] = splice_escapes(self, special, e)
            self.eps[s].append(x)

    def _encoded(self, ranges, full: bool) -> Node:
        key = (ranges, full)
        n = self._enc_cache.get(key)
        if n is None:
            n = self._enc_cache[key] = encoded_char(ranges, full)
        return n

    def embed(self, dfa: CharDFA, s: int, enc: bool) -> int:
        """Splice a trimmed character DFA (every state live, or `EMPTY_DFA`) in at ``s``; return the end state."""
        if not any(dfa.accepting):
            self.maybe_dead = True
        end = self.new()
        ids = [s] + [self.new() for _ in range(len(dfa) - 1)]
        for q, edges in enumerate(dfa.edges):
            if dfa.accepting[q]:
                self.eps[ids[q]].append(end)
            if not enc:
                self.trans[ids[q]].extend((lo, hi, ids[t]) for lo, hi, t in edges)
                continue
            by_target: dict[int, list] = defaultdict(list)
            for lo, hi, t in edges:
                by_target[t].append((lo, hi))
            for t, rs in by_target.items():
                self._cls_to(normalize_ranges(rs), True, False, ids[q], ids[t])
        return end

    # -- analysis -------------------------------------------------------------------------------
    def trim(self, final: int, calls=None) -> list[bool]:
        """Which states can reach ``final``; edges into the others are dropped (`trim_nfa`)."""
        if calls is None and not self.maybe_dead:
            # every state reaches the end of what it was built for (`maybe_dead`): all are live;
            # the rows become tuples all the same (see `trim_nfa`)
            self.trans[:] = map(tuple, self.trans)
            self.eps[:] = map(tuple, self.eps)
            return [True] * len(self.trans)
        entries = self.counters.entries if self.counters is not None else ()
        return trim_nfa(self.trans, self.eps, final, entries, calls, self.budget.deadline)


# any value's (scalar, key) DFAs by their strings' length bound (`NFA._any_json`); DFAs are never
# modified in place
_ANY_DFAS: dict[int | None, tuple] = {}


def node_to_char_dfa(node: Node, budget: Budget | None = None) -> CharDFA | None:
    """The trimmed character DFA of ``node`` (None when its language is empty).

    Key languages and patterns recur within and across schemas (42 JSONSchemaBench schemas asked for
    91 distinct ones 818 times): an `Auto` is read as the DFA it is (`auto_dfa`), the others are
    kept in a small per-process memo (`CharDFAMemo`; DFAs are never modified in place).

    >>> from fsm.automata import lit, rep
    >>> node_to_char_dfa(rep(lit("ab"), 1, None)).accepts("abab")
    True
    """
    budget = budget or Budget(DEFAULT_LIMITS)
    d = auto_dfa(node.edges, node.accepting, budget) if isinstance(node, Auto) else None
    if d is not None:
        return d
    found, hit = MEMO.get(node)
    if found:
        return hit
    nfa = NFA(budget)
    start = nfa.new()
    final = nfa.build(node, start)
    live = nfa.trim(final)
    d = trim_dfa(determinize(nfa, start, final, budget)) if live[start] else None
    MEMO.put(node, d)
    return d


def small_dfa(node: Node, budget: Budget) -> CharDFA:
    """Trimmed character DFA for ``And``/``Minus`` (and anything else); empty language allowed.

    >>> from fsm.automata import Minus, cls, rep
    >>> from fsm.limits import DEFAULT_LIMITS
    >>> d = small_dfa(Minus(rep(cls((97, 98)), 1, 1), frozenset({"a"})), Budget(DEFAULT_LIMITS))
    >>> d.accepts("a"), d.accepts("b")
    (False, True)
    """
    if not isinstance(node, (And, Minus)):
        return node_to_char_dfa(node, budget) or EMPTY_DFA
    found, d = MEMO.get(("small", node))  # a product recurs across schemas (a uuid under maxLength)
    if found:
        return d
    if isinstance(node, And):
        # a factor's states after a search's match merged first: under a length they stay apart
        dfas = [d and merge_universal(d) for d in (node_to_char_dfa(it, budget) for it in node.items)]
        acc = None if any(d is None for d in dfas) else dfas[0]
        for d in dfas[1:]:
            if acc is not None:
                acc = trim_dfa(product(acc, d, budget), budget)
        d = EMPTY_DFA if acc is None else merge_universal(acc)  # a search's states after its match: one
    else:
        d = node_to_char_dfa(node.item, budget)
        d = EMPTY_DFA if d is None else trim_dfa(minus_words(d, node.words, budget)) or EMPTY_DFA
    MEMO.put(("small", node), d)
    return d


# ---------------------------------------------------------------------------------------------
# Byte DFA tables: merging equal rows (memory only)
