"""Token index of a grammar: per configuration (lexer state, parser stack, ignore run), the mask.

Each lexer state's row (`fsm.grammar.walk`: every token grouped by the terminals it completes and the
terminals its last lexeme can still become) is computed the first time a matcher reaches the state.
A mask for a configuration then needs one parser check per sequence-trie node and per group, not
per token; masks are cached by configuration (and by verdict, since different stacks mostly give the
same verdicts), and parser stacks are interned ints (see `fsm.grammar.parser`).

`GrammarMatcher` is `fsm.Matcher` over configurations instead of DFA states: a configuration is a
small tuple, so copies and rollbacks are O(1) per token and equal configurations share one cached mask.
"""

from __future__ import annotations

import threading

import numpy as np

from ..errors import SpecTooComplex, TokenRejected
from ..index import Matcher, frozen_bitmask, unpack_bitmask
from ..limits import DEFAULT_LIMITS, Limits
from ..vocabulary import Vocabulary
from .lark import LarkGrammar
from .lexer import KILL, LexerAutomaton
from .parser import LRParser, Truncated
from .tables import LexerTables
from .walk import LexRow, walk_row

Config = tuple[int, int, int]  # (lexer state, parser stack id, ignore bytes in the current run)

_MASK_CACHE_ENTRIES = 1 << 15


class GrammarIndex:
    """Lazy token index of a grammar for one vocabulary; shared by all its matchers.

    >>> from fsm.grammar import Grammar
    >>> v = Vocabulary([b"(", b")", b"()", b"x", None], eos_token_ids=[4])
    >>> idx = Grammar('start: "(" start ")" | "x"').build_index(v)
    >>> m = idx.matcher(); m.advance(0); m.allowed_token_ids().tolist()
    [0, 3]
    """

    def __init__(
        self,
        grammar: LarkGrammar,
        lexer: LexerAutomaton,
        vocab: Vocabulary,
        fingerprint: str = "",
        limits: Limits | None = None,
    ):
        self.grammar = grammar
        self.lexer = lexer
        self.parser = LRParser(grammar.table)
        self.vocabulary = vocab
        self.fingerprint = fingerprint
        self.limits = limits or DEFAULT_LIMITS
        self.max_ignore = lexer.max_ignore
        self.tables = LexerTables(grammar, lexer, vocab.trie)
        self._rows: dict[int, LexRow] = {}
        self._masks: dict[tuple[int, int, int], tuple[np.ndarray, bool, bool]] = {}
        self._by_verdict: dict[tuple, tuple[np.ndarray, bool, bool]] = {}
        self._cut_depth: dict[int, int] = {}
        self._lock = threading.RLock()
        self._row_bytes = 0
        self.eos_ids = np.array(vocab.eos_token_ids, dtype=np.int32)
        self.eos_set = frozenset(vocab.eos_token_ids)
        self.eos_bitmask = frozen_bitmask(vocab.eos_token_ids, vocab.size)
        self._words = (vocab.size + 31) // 32
        self._single: dict[tuple[int, int, int], int] = {}
        self._one_byte_ids = np.array(
            sorted({t[0]: i for i, t in enumerate(vocab.tokens) if t is not None and len(t) == 1}.values()),
            dtype=np.int64,
        )
        self.initial_state = (
            int(lexer.start[int(lexer.state_set[grammar.table.start_state])]),
            self.parser.root,
            0,
        )

    # -- rows ---------------------------------------------------------------------------------
    def row(self, q: int) -> LexRow:
        """Token classification from lexer state ``q``, computed on first use."""
        r = self._rows.get(q)
        if r is None:
            with self._lock:
                r = self._rows.get(q)
                if r is None:
                    r = walk_row(
                        self.tables, self.vocabulary.trie, self.vocabulary.size, q, self.limits.deadline()
                    )
                    self._rows[q] = r
                    self._row_bytes += r.nbytes
                    if self._row_bytes > self.limits.max_index_bytes:
                        raise SpecTooComplex(
                            f"grammar index grew past max_index_bytes={self.limits.max_index_bytes:,}",
                            budget="max_index_bytes",
                            limit=self.limits.max_index_bytes,
                        )
        return r

    def build_all(self) -> GrammarIndex:
        """Classify tokens from every lexer state a matcher can rest in now (ahead-of-time use)."""
        deadline = self.limits.deadline()
        for q in range(self.lexer.n_states):
            if self.tables.final[q]:
                continue
            self.row(q)
            deadline.check("building grammar index")
        return self

    # -- masks --------------------------------------------------------------------------------
    def mask(self, config: tuple[int, int, int]) -> tuple[np.ndarray, bool, bool]:
        """(packed bitmask, accepting, has a text token) for a configuration (q, stack, ignore run)."""
        hit = self._masks.get(config)
        if hit is None:
            hit = self._mask_via_cut(config)
            self._remember(config, hit)
        return hit

    def _mask_via_cut(self, config: tuple[int, int, int]) -> tuple[np.ndarray, bool, bool]:
        """Masks mostly depend on the top few stack states: compute (and cache) them on the stack cut
        to its top ``depth`` states, deepening the cut when a reduction reaches below it. Whether the
        text may end here needs the whole stack, so it is computed on the whole stack."""
        q, node, k = config
        accepting = self.config_accepting(config)
        depth = self._cut_depth.get(q, 4)
        while True:
            cut = self.parser.truncate(node, depth)
            key = (q, cut, k, accepting)
            hit = self._masks.get(key)
            if hit is None:
                try:
                    hit = self._compute_mask(key)
                except Truncated:
                    depth *= 2
                    continue
                self._remember(key, hit)
            self._cut_depth[q] = depth
            return hit

    def _remember(self, key: tuple, hit: tuple) -> None:
        with self._lock:
            if len(self._masks) >= _MASK_CACHE_ENTRIES:
                for old in list(self._masks)[: _MASK_CACHE_ENTRIES // 4]:
                    del self._masks[old]
            self._masks[key] = hit

    def _verdicts(self, row: LexRow, node: int) -> int:
        """Bit g set when group g's tokens are allowed on stack ``node`` (DFS over the sequence trie,
        skipping everything below a terminal the parser rejects)."""
        tb = self.tables
        p = self.parser
        ign = self.lexer.ignore_bits
        state_set = tb.state_set
        children, terms, sets, groups = row.seq_children, row.seq_term, row.seq_set, row.seq_groups
        ok = 0
        todo = [(0, node)]
        while todo:
            i, s = todo.pop()
            gs = groups[i]
            if gs:
                acc = p.acc_bits(s) | ign
                for bit, ps in gs:
                    if acc & ps:
                        ok |= bit
            for j in children[i]:
                s2 = p.feed(s, terms[j])
                if s2 >= 0 and sets[j] >> state_set[p.top(s2)] & 1:
                    todo.append((j, s2))
        return ok

    def _compute_mask(self, key: tuple[int, int, int, bool]) -> tuple[np.ndarray, bool, bool]:
        q, node, k, accepting = key
        row = self.row(q)
        ok = self._verdicts(row, node)
        kthr = self.max_ignore - k if row.need is not None else -1
        # Different stacks mostly give the same verdicts (e.g. any string at any depth): share masks.
        key = (q, ok, accepting, kthr)
        hit = self._by_verdict.get(key)
        if hit is None:
            hit = self._assemble(row, ok, accepting, kthr)
            with self._lock:
                if len(self._by_verdict) >= _MASK_CACHE_ENTRIES:
                    for old in list(self._by_verdict)[: _MASK_CACHE_ENTRIES // 4]:
                        del self._by_verdict[old]
                self._by_verdict[key] = hit
        return hit

    def _assemble(self, row: LexRow, ok: int, accepting: bool, kthr: int) -> tuple[np.ndarray, bool, bool]:
        words = np.zeros(self._words, dtype=np.int32)
        ids = []
        g = 0
        while ok:
            if ok & 1:
                m = row.big_masks.get(g)
                if m is not None:
                    words |= m
                else:
                    ids.append(row.small_ids[g])
            ok >>= 1
            g += 1
        if ids:
            cat = np.concatenate(ids)
            u = words.view(np.uint32)
            np.bitwise_or.at(u, cat >> 5, (np.uint32(1) << (cat & 31).astype(np.uint32)))
        if row.need is not None:
            self._drop_over_budget(words, row, kthr)
        has_text = bool(words.any())
        if accepting:
            words |= self.eos_bitmask
        words.setflags(write=False)
        return words, accepting, has_text

    def _drop_over_budget(self, words: np.ndarray, row: LexRow, kthr: int) -> None:
        """Clear tokens whose ignore run would exceed the budget left (few: whitespace-heavy ones)."""
        ids, need = row.need_ids, row.need_vals  # sorted by need, descending
        n = int(np.searchsorted(-need, -kthr, side="left"))  # entries with need > kthr
        if n:
            cut = ids[:n]
            np.bitwise_and.at(
                words.view(np.uint32), cut >> 5, ~(np.uint32(1) << (cut & 31).astype(np.uint32))
            )

    def normalize(self, config: tuple[int, int, int]) -> tuple[int, int, int]:
        """End a lexeme that no byte can extend: feed its terminal, start a fresh lexeme."""
        tb = self.tables
        q, node, k = config
        if not tb.final[q]:
            return config
        t = tb.emit[q]
        if tb.is_ignore[t]:
            return (tb.start[tb.aid[q]], node, k)
        node = self.parser.feed(node, t)
        return (tb.start[tb.state_set[self.parser.top(node)]], node, 0)

    def config_accepting(self, config: tuple[int, int, int]) -> bool:
        """True when the text may end in this configuration."""
        tb = self.tables
        q, node, _ = config
        p = self.parser
        t = tb.emit[q]
        if tb.is_start[q]:
            return p.accepts_end(node)
        if t < 0:
            return False
        if tb.is_ignore[t]:
            return p.accepts_end(node)
        n2 = p.feed(node, t)
        return n2 >= 0 and p.accepts_end(n2)

    # -- scalar stepping (advance, forced bytes) ----------------------------------------------
    def step_byte(self, config: tuple[int, int, int], b: int) -> tuple[int, int, int] | None:
        """Configuration after one byte, or None when the byte is rejected (no viability check)."""
        tb = self.tables
        q, node, k = config
        c = tb.cls[b]
        t = tb.trans[q][c]
        if t >= 0:
            return (t, node, k + 1 if tb.ign[t] else 0)
        if t != KILL:
            return None
        term = tb.emit[q]
        if tb.is_ignore[term]:
            nq = tb.restart[tb.aid[q]][c]
            if nq < 0:
                return None
            return (nq, node, k + 1 if tb.ign[nq] else 0)
        node = self.parser.feed(node, term)
        if node < 0:
            return None
        nq = tb.restart[tb.state_set[self.parser.top(node)]][c]
        if nq < 0:
            return None
        return (nq, node, 1 if tb.ign[nq] else 0)

    def viable(self, config: tuple[int, int, int]) -> bool:
        """The configuration can still be completed (same test the masks use)."""
        tb = self.tables
        q, node, k = config
        if tb.ign[q] and k + tb.need[q] > self.max_ignore:
            return False
        return bool((self.parser.acc_bits(node) | self.lexer.ignore_bits) & self.lexer.pset[q])

    def step_token(self, config: tuple[int, int, int], data: bytes) -> tuple[int, int, int] | None:
        """Configuration after a token's bytes (normalized), or None when a byte is rejected."""
        for b in data:
            config = self.step_byte(config, b)
            if config is None:
                return None
        return self.normalize(config)

    def single_byte(self, config: tuple[int, int, int]) -> int:
        """The only byte allowed next when the text cannot end here, else -1."""
        b = self._single.get(config)
        if b is None:
            b = self._single_byte(config)
            if len(self._single) > _MASK_CACHE_ENTRIES:
                self._single.clear()
            self._single[config] = b
        return b

    def _single_byte(self, config: tuple[int, int, int]) -> int:
        tb = self.tables
        words, accepting, _ = self.mask(config)
        if accepting:
            return -1
        ids = self._one_byte_ids
        if len(ids):  # two allowed one-byte tokens: two possible next bytes
            allowed = (words[ids >> 5].view(np.uint32) >> (ids & 31).astype(np.uint32)) & 1
            if int(allowed.sum()) >= 2:
                return -1
        q = config[0]
        found = -1
        row = tb.trans[q]
        for c, t in enumerate(row):
            if t == -1:
                continue
            byte = int(tb.rep_byte[c])
            nxt = self.step_byte(config, byte)
            if nxt is None or not self.viable(nxt):
                continue
            if found >= 0 or tb.class_size[c] != 1:
                return -1
            found = byte
        return found

    # -- misc ---------------------------------------------------------------------------------
    @property
    def n_rows(self) -> int:
        return len(self._rows)

    @property
    def nbytes(self) -> int:
        return self._row_bytes + len(self._by_verdict) * self._words * 4 + self.lexer.trans.nbytes

    def matcher(self) -> GrammarMatcher:
        """A fresh matcher at the start of the text (cheap: one per sequence)."""
        return GrammarMatcher(self)

    def __repr__(self) -> str:
        return (
            f"GrammarIndex({self.fingerprint[:24]}, lexer_states={self.lexer.n_states}, "
            f"rows={len(self._rows)}, masks={len(self._masks)})"
        )


class GrammarMatcher(Matcher):
    """Tracks one sequence through a compiled grammar.

    >>> from fsm import Grammar, Vocabulary, compile
    >>> v = Vocabulary([b"1", b"+", b"1+", None], eos_token_ids=[3])
    >>> m = compile(Grammar('start: NUM ("+" NUM)*\\nNUM: /[0-9]/'), v).matcher()
    >>> m.advance(2); m.allowed_token_ids().tolist(), m.is_accepting()
    ([0, 2], False)
    """

    __slots__ = ("_ids",)

    FINISHED = None  # the configuration after EOS

    def __init__(self, index: GrammarIndex, state: Config | None = None):
        super().__init__(index, state)
        self._ids: np.ndarray | None = None  # allowed ids of the current state, unpacked once

    @property
    def index(self) -> GrammarIndex:
        return self._index

    @property
    def state(self) -> Config | None:
        """(lexer state, parser stack id, ignore bytes in the current run), or None after EOS."""
        return self._state

    def _mask(self) -> tuple[np.ndarray, bool, bool]:
        return self._index.mask(self._state)

    def _allowed_ids(self) -> np.ndarray:
        if self._ids is None:
            self._ids = unpack_bitmask(self._mask()[0], self._index.vocabulary.size)
        return self._ids

    def _bitmask(self) -> np.ndarray:
        return self._mask()[0]

    def is_allowed(self, token_id: int) -> bool:
        """True when ``advance(token_id)`` would succeed (one bit test, no unpacking)."""
        token_id = int(token_id)
        if self._state is None:
            return token_id in self._index.eos_set
        if not 0 <= token_id < self._index.vocabulary.size:
            return False
        word = int(self._mask()[0][token_id >> 5])
        return bool((word >> (token_id & 31)) & 1)

    def _next_state(self, token_id: int) -> Config | None:
        if not self.is_allowed(token_id):
            raise TokenRejected(token_id)
        idx = self._index
        if token_id in idx.eos_set:
            return None
        nxt = idx.step_token(self._state, idx.vocabulary.token_bytes(token_id))
        if nxt is None:  # the mask said yes: the two must agree
            raise AssertionError(f"grammar index inconsistency on token {token_id}")
        return nxt

    def _accepting(self) -> bool:
        return self._mask()[1]

    def _has_text(self) -> bool:
        return self._mask()[2]

    def _after_byte(self, state: Config, byte: int, before: bytearray) -> Config:
        idx = self._index
        return idx.normalize(idx.step_byte(state, byte))

    def _moved(self) -> None:
        self._ids = None

    def copy(self) -> GrammarMatcher:
        m = super().copy()
        m._ids = self._ids
        return m
