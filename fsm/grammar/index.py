"""Token index of a grammar: per lexer state, what each token does; per configuration, the mask.

For a lexer state ``q`` one vectorized walk of the vocabulary trie (computed the first time a matcher
reaches ``q``) classifies every token by what it does from there, independent of the parser:

* the terminals it completes on the way, each with the contextual-lexer set the next lexeme must be
  lexed in (a path in a small per-row trie of terminal sequences), and
* the set of terminals its unfinished last lexeme can still become.

Tokens with the same (sequence, set) form a group; most tokens fall in a handful of groups (e.g. all
tokens that stay inside a JSON string). A mask for a configuration (lexer state, parser stack, ignore
run) then needs one parser check per sequence-trie node and per group, not per token; masks are
cached by configuration, and parser stacks are interned ints (see `grammar_parser`).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np

from ..bitmask import frozen_bitmask, pack_bitmask
from ..errors import SpecTooComplex
from ..limits import DEFAULT_LIMITS, Limits
from ..vocabulary import Vocabulary
from .lark import LarkGrammar
from .lexer import KILL, LexerAutomaton
from .matcher import GrammarMatcher
from .parser import LRParser, Truncated

_MASK_CACHE_ENTRIES = 1 << 15
_UNKNOWN = -5  # walk-state transition not computed yet
_BRANCH = -3  # several successors (the next lexeme's set depends on the parser): see branches
_BIG_GROUP = 256  # groups with at least this many tokens keep a packed bitmask


@dataclass(eq=False)
class LexRow:
    """What every token does from one lexer state (parser-independent), grouped."""

    big_masks: dict[int, np.ndarray]  # group -> packed bitmask of its tokens (large groups)
    small_ids: dict[int, np.ndarray]  # group -> token ids (small groups)
    need: np.ndarray | None  # (V,) ignore bytes a token adds to the open run (None: no open run here)
    need_ids: np.ndarray | None  # tokens with need > 0, by need descending
    need_vals: np.ndarray | None
    group_seq: list[int]  # group -> node of the sequence trie
    group_pset: list[int]  # group -> bit set of terminals the last lexeme can still become
    seq_parent: list[int]  # sequence trie (node 0 = nothing completed yet)
    seq_term: list[int]
    seq_set: list[int]  # bit set of contextual lexer sets the parser must be in after the terminal
    seq_children: list[list[int]] = None  # type: ignore[assignment]
    seq_groups: list[list[tuple[int, int]]] = None  # type: ignore[assignment]  # (1 << group, terminal set)
    n_tokens: int = 0  # tokens the lexer lets through from here (any group)

    def __post_init__(self):
        n = len(self.seq_parent)
        self.seq_children = [[] for _ in range(n)]
        for i in range(1, n):
            self.seq_children[self.seq_parent[i]].append(i)
        self.seq_groups = [[] for _ in range(n)]
        for g, (sq, ps) in enumerate(zip(self.group_seq, self.group_pset)):
            self.seq_groups[sq].append((1 << g, ps))

    @property
    def nbytes(self) -> int:
        n = sum(m.nbytes for m in self.big_masks.values()) + sum(a.nbytes for a in self.small_ids.values())
        return n + (0 if self.need is None else self.need.nbytes)


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
        lx = lexer
        self._is_ign = np.zeros(grammar.n_terms + 1, dtype=bool)
        for t in grammar.ignore:
            self._is_ign[t] = True
        self._build_boundary_outcomes()
        self._single: dict[tuple[int, int, int], int] = {}
        self._one_byte_ids = np.array(
            sorted({t[0]: i for i, t in enumerate(vocab.tokens) if t is not None and len(t) == 1}.values()),
            dtype=np.int64,
        )
        trie = vocab.trie
        self._node_cls = lx.byte_class[trie.node_byte].astype(np.int64)
        self._child_start = trie.child_start.astype(np.int64)
        self._child_count = trie.child_count.astype(np.int64)
        pset_ids: dict[int, int] = {}
        self._pset_id = np.array([pset_ids.setdefault(p, len(pset_ids)) for p in lx.pset], dtype=np.int64)
        self._psets = list(pset_ids)
        self._class_size = np.bincount(lx.byte_class, minlength=lx.trans.shape[1])
        self._rep_byte = np.zeros(lx.trans.shape[1], dtype=np.int64)
        self._rep_byte[lx.byte_class[::-1]] = np.arange(255, -1, -1)
        self._trans_l = lx.trans.tolist()
        self._restart_l = lx.restart.tolist()
        self._cls_l = lx.byte_class.tolist()
        self._emit_l = lx.emit.tolist()
        self._aid_l = lx.aid.tolist()
        self._ign_l = lx.ign_alive.tolist()
        self._need_l = lx.need.tolist()
        self._state_set_l = lx.state_set.tolist()
        self._start_l = lx.start.tolist()
        self._is_start = np.zeros(lx.n_states, dtype=bool)
        self._is_start[lx.start] = True
        self._is_start_l = self._is_start.tolist()
        # A lexeme no byte can extend ends right away: such configurations are normalized to a fresh
        # lexeme after the terminal, so their rows are never needed and equal futures share masks.
        self._final_l = (((lx.trans < 0).all(axis=1)) & (lx.emit >= 0)).tolist()
        self.initial_state = (
            int(lx.start[int(lx.state_set[grammar.table.start_state])]),
            self.parser.root,
            0,
        )

    def _build_boundary_outcomes(self) -> None:
        """For terminal T ending before a byte of class c: the distinct lexer states the next lexeme
        starts in, each with the bit set of contextual lexer sets that lead there (CSR by T*C + c)."""
        lx = self.lexer
        n_terms, n_cls = self.grammar.n_terms, lx.trans.shape[1]
        amask_ids: dict[int, int] = {}
        starts = np.zeros(n_terms * n_cls + 1, dtype=np.int64)
        out_nq: list[int] = []
        out_am: list[int] = []
        restart = lx.restart
        for t in range(n_terms):
            for c in range(n_cls):
                by_state: dict[int, int] = {}
                for a in lx.after[t]:
                    nq = int(restart[a, c])
                    if nq >= 0:
                        by_state[nq] = by_state.get(nq, 0) | (1 << a)
                for nq, am in sorted(by_state.items()):
                    out_nq.append(nq)
                    out_am.append(amask_ids.setdefault(am, len(amask_ids)))
                starts[t * n_cls + c + 1] = len(out_nq)
        self._bo_start = starts
        self._bo_len = np.diff(starts)
        self._bo_nq = np.array(out_nq + [0], dtype=np.int64)
        self._bo_am = np.array(out_am + [0], dtype=np.int64)
        self._amasks = list(amask_ids)
        self._n_cls = n_cls

    # -- rows ---------------------------------------------------------------------------------
    def row(self, q: int) -> LexRow:
        """Token classification from lexer state ``q``, computed on first use."""
        r = self._rows.get(q)
        if r is None:
            with self._lock:
                r = self._rows.get(q)
                if r is None:
                    r = self._walk(q)
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
            if self._final_l[q]:
                continue
            self.row(q)
            deadline.check("building grammar index")
        return self

    def _walk(self, q0: int) -> LexRow:
        """Classify every token from lexer state ``q0`` in one vectorized walk of the vocabulary trie.

        Entries are (trie node, walk state); a walk state interns everything the rest of the walk
        depends on — lexer state, completed-terminal sequence, ignore-run counters — so one step of
        all entries is a gather in a small table that grows as new walk states appear.
        """
        lx = self.lexer
        trie = self.vocabulary.trie
        node_cls = self._node_cls
        child_start, child_count = self._child_start, self._child_count
        tok_start, tok_count, tok_ids = trie.tok_start, trie.tok_count, trie.tok_ids
        n_cls = self._n_cls
        ws = _WalkStates(self, q0)
        node = np.zeros(1, dtype=np.int64)
        wid = np.zeros(1, dtype=np.int64)
        out_tok, out_ws = [], []
        while len(node):
            cnt = child_count[node]
            total = int(cnt.sum())
            if total == 0:
                break
            rep = np.repeat(np.arange(len(node)), cnt)
            offs = np.arange(total) - np.repeat(np.cumsum(cnt) - cnt, cnt)
            child = child_start[node][rep] + offs
            c = node_cls[child]
            w = wid[rep]
            nw = ws.table[w, c]
            unknown = nw == _UNKNOWN
            if unknown.any():
                for key in np.unique(w[unknown] * n_cls + c[unknown]).tolist():
                    ws.fill(*divmod(key, n_cls))
                nw = ws.table[w, c]
            keep = nw >= 0
            nodes_next = [child[keep]]
            wids_next = [nw[keep].astype(np.int64)]
            branch = np.nonzero(nw == _BRANCH)[0]
            if len(branch):
                keys = w[branch] * n_cls + c[branch]
                for key in np.unique(keys).tolist():
                    sel = branch[keys == key]
                    for succ in ws.branches[key]:
                        nodes_next.append(child[sel])
                        wids_next.append(np.full(len(sel), succ, dtype=np.int64))
            node = np.concatenate(nodes_next) if len(nodes_next) > 1 else nodes_next[0]
            wid = np.concatenate(wids_next) if len(wids_next) > 1 else wids_next[0]
            tc = tok_count[node]
            has = np.nonzero(tc > 0)[0]
            if len(has):
                htc = tc[has]
                r = np.repeat(has, htc)
                o2 = np.arange(int(htc.sum())) - np.repeat(np.cumsum(htc) - htc, htc)
                out_tok.append(tok_ids[tok_start[node[r]] + o2])
                out_ws.append(wid[r])
        ws_key, ws_need = ws.keys_and_needs()
        seq_parent, seq_term, seq_set = ws.seq_parent, ws.seq_term, ws.seq_set
        n_psets = len(self._psets)
        open0 = bool(lx.ign_alive[q0])
        if out_tok:
            wids = np.concatenate(out_ws)
            out_key = [ws_key[wids]]
            out_need = [ws_need[wids]]
        else:
            out_key = out_need = []
        V = self.vocabulary.size
        if out_tok:
            toks = np.concatenate(out_tok).astype(np.int64)
            keys = np.concatenate(out_key)
            needs = np.concatenate(out_need)
        else:
            toks = keys = needs = np.zeros(0, dtype=np.int64)
        uniq, inv = _dense_unique(keys)
        group_seq = (uniq // n_psets).tolist()
        group_pset = [self._psets[int(p)] for p in (uniq % n_psets).tolist()]
        order = np.argsort(inv, kind="stable")
        counts = np.bincount(inv, minlength=len(uniq))
        bounds = np.concatenate([[0], np.cumsum(counts)])
        big: dict[int, np.ndarray] = {}
        small: dict[int, np.ndarray] = {}
        for g in range(len(uniq)):
            ids = toks[order[bounds[g] : bounds[g + 1]]]
            if len(ids) >= _BIG_GROUP:
                m = pack_bitmask(ids, V)
                m.setflags(write=False)
                big[g] = m
            else:
                small[g] = ids.astype(np.int64)
        need = need_ids = need_vals = None
        if open0:
            # a token reached along several branches has the same bytes, hence the same ignore run
            need = np.zeros(V, dtype=np.int16)
            need[toks] = needs
            need_ids = np.nonzero(need > 0)[0]
            o = np.argsort(-need[need_ids], kind="stable")
            need_ids = need_ids[o].astype(np.int64)
            need_vals = need[need_ids].astype(np.int64)
        return LexRow(
            big_masks=big,
            small_ids=small,
            need=need,
            need_ids=need_ids,
            need_vals=need_vals,
            group_seq=group_seq,
            group_pset=group_pset,
            seq_parent=seq_parent,
            seq_term=seq_term,
            seq_set=seq_set,
            n_tokens=int(np.count_nonzero(np.bincount(toks, minlength=1))),
        )

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
        p = self.parser
        ign = self.lexer.ignore_bits
        state_set = self._state_set_l
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
        q, node, k = config
        if not self._final_l[q]:
            return config
        t = self._emit_l[q]
        if self._is_ign[t]:
            return (self._start_l[self._aid_l[q]], node, k)
        node = self.parser.feed(node, t)
        return (self._start_l[self._state_set_l[self.parser.top(node)]], node, 0)

    def config_accepting(self, config: tuple[int, int, int]) -> bool:
        """True when the text may end in this configuration."""
        q, node, _ = config
        p = self.parser
        t = self._emit_l[q]
        if self._is_start_l[q]:
            return p.accepts_end(node)
        if t < 0:
            return False
        if self._is_ign[t]:
            return p.accepts_end(node)
        n2 = p.feed(node, t)
        return n2 >= 0 and p.accepts_end(n2)

    # -- scalar stepping (advance, forced bytes) ----------------------------------------------
    def step_byte(self, config: tuple[int, int, int], b: int) -> tuple[int, int, int] | None:
        """Configuration after one byte, or None when the byte is rejected (no viability check)."""
        q, node, k = config
        c = self._cls_l[b]
        t = self._trans_l[q][c]
        if t >= 0:
            return (t, node, k + 1 if self._ign_l[t] else 0)
        if t != KILL:
            return None
        term = self._emit_l[q]
        if self._is_ign[term]:
            nq = self._restart_l[self._aid_l[q]][c]
            if nq < 0:
                return None
            return (nq, node, k + 1 if self._ign_l[nq] else 0)
        node = self.parser.feed(node, term)
        if node < 0:
            return None
        nq = self._restart_l[self._state_set_l[self.parser.top(node)]][c]
        if nq < 0:
            return None
        return (nq, node, 1 if self._ign_l[nq] else 0)

    def viable(self, config: tuple[int, int, int]) -> bool:
        """The configuration can still be completed (same test the masks use)."""
        q, node, k = config
        if self._ign_l[q] and k + self._need_l[q] > self.max_ignore:
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
        row = self._trans_l[q]
        for c, t in enumerate(row):
            if t == -1:
                continue
            byte = int(self._rep_byte[c])
            nxt = self.step_byte(config, byte)
            if nxt is None or not self.viable(nxt):
                continue
            if found >= 0 or self._class_size[c] != 1:
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


class _WalkStates:
    """Interned walk states of one row walk and their transitions per byte class.

    A walk state is (lexer state, sequence-trie node, ignore-run length, bytes of the run that was
    open when the token started, whether that run is still open).
    """

    def __init__(self, index: GrammarIndex, q0: int):
        self.ix = index
        self.ids: dict[tuple, int] = {}
        self.states: list[tuple] = []
        self.table = np.full((16, index._n_cls), _UNKNOWN, dtype=np.int32)
        self.branches: dict[int, list[int]] = {}
        self.seq_parent, self.seq_term, self.seq_set = [-1], [-1], [-1]
        self.seq_index: dict[tuple, int] = {}
        self.intern((q0, 0, 0, 0, bool(index._ign_l[q0])))

    def intern(self, st: tuple) -> int:
        i = self.ids.get(st)
        if i is None:
            i = len(self.states)
            self.ids[st] = i
            self.states.append(st)
            if i >= len(self.table):
                grown = np.full((2 * len(self.table), self.table.shape[1]), _UNKNOWN, dtype=np.int32)
                grown[: len(self.table)] = self.table
                self.table = grown
        return i

    def _seq(self, parent: int, term: int, amask: int) -> int:
        key = (parent, term, amask)
        sid = self.seq_index.get(key)
        if sid is None:
            sid = len(self.seq_parent)
            self.seq_index[key] = sid
            self.seq_parent.append(parent)
            self.seq_term.append(term)
            self.seq_set.append(self.ix._amasks[amask])
        return sid

    def _continue(self, nq: int, seq: int, run: int, r1: int, opn: bool) -> int:
        ix = self.ix
        if nq < 0:
            return -1
        if ix._ign_l[nq]:
            run += 1
            if opn:
                r1 += 1
            if run + ix._need_l[nq] > ix.max_ignore:
                return -1
        else:
            run, opn = 0, False
        return self.intern((nq, seq, run, r1, opn))

    def fill(self, w: int, c: int) -> None:
        ix = self.ix
        q, seq, run, r1, opn = self.states[w]
        t = ix._trans_l[q][c]
        if t >= 0:
            self.table[w, c] = self._continue(t, seq, run, r1, opn)
            return
        if t != KILL:
            self.table[w, c] = -1
            return
        term = ix._emit_l[q]
        if ix._is_ign[term]:
            self.table[w, c] = self._continue(ix._restart_l[ix._aid_l[q]][c], seq, run, r1, opn)
            return
        succ = []
        start, stop = ix._bo_start[term * ix._n_cls + c], ix._bo_start[term * ix._n_cls + c + 1]
        for o in range(int(start), int(stop)):
            nq, am = int(ix._bo_nq[o]), int(ix._bo_am[o])
            s2 = self._continue(nq, self._seq(seq, term, am), 0, r1, False)
            if s2 >= 0:
                succ.append(s2)
        if len(succ) == 1:
            self.table[w, c] = succ[0]
        elif not succ:
            self.table[w, c] = -1
        else:
            self.table[w, c] = _BRANCH
            self.branches[w * ix._n_cls + c] = succ

    def keys_and_needs(self) -> tuple[np.ndarray, np.ndarray]:
        """Per walk state: the group key (sequence node, terminal set) and the ignore budget it needs."""
        ix = self.ix
        n_psets = len(ix._psets)
        keys = np.empty(len(self.states), dtype=np.int64)
        needs = np.empty(len(self.states), dtype=np.int64)
        for i, (q, seq, run, r1, opn) in enumerate(self.states):
            keys[i] = seq * n_psets + int(ix._pset_id[q])
            needs[i] = r1 + (ix._need_l[q] if opn else 0)
        return keys, needs


def _dense_unique(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(keys, return_inverse=True)`` for non-negative keys of modest range, in O(n)."""
    if len(keys) == 0:
        return keys, keys
    top = int(keys.max()) + 1
    if top > 8 * len(keys) + (1 << 16):
        uniq, inv = np.unique(keys, return_inverse=True)
        return uniq, inv.reshape(-1)
    present = np.zeros(top, dtype=bool)
    present[keys] = True
    uniq = np.nonzero(present)[0]
    remap = np.zeros(top, dtype=np.int64)
    remap[uniq] = np.arange(len(uniq))
    return uniq, remap[keys]


__all__ = ["GrammarIndex", "LexRow"]
