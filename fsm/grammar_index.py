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

from .errors import SpecTooComplex
from .grammar_lark import LarkGrammar
from .grammar_lexer import KILL, LexerAutomaton
from .grammar_parser import LRParser
from .index import pack_bitmask
from .limits import DEFAULT_LIMITS, Limits
from .vocabulary import Vocabulary

_MASK_CACHE_ENTRIES = 8192
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
    seq_set: list[int]
    n_tokens: int = 0  # tokens the lexer lets through from here (any group)

    @property
    def nbytes(self) -> int:
        n = sum(m.nbytes for m in self.big_masks.values()) + sum(a.nbytes for a in self.small_ids.values())
        return n + (0 if self.need is None else self.need.nbytes)


class GrammarIndex:
    """Lazy token index of a grammar for one vocabulary; shared by all its matchers.

    >>> from fsm.grammar import Grammar
    >>> v = Vocabulary([b"(", b")", b"()", b"x", None], eos_token_ids=[4])
    >>> idx = Grammar('start: "(" start ")" | "x"')._build(v)
    >>> m = idx.matcher(); m.advance(0); m.allowed_token_ids().tolist()
    [0, 3]
    """

    def __init__(self, grammar: LarkGrammar, lexer: LexerAutomaton, vocab: Vocabulary,
                 fingerprint: str = "", limits: Limits | None = None):
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
        self._lock = threading.RLock()
        self._row_bytes = 0
        self._eos = np.array(vocab.eos_token_ids, dtype=np.int32)
        self._eos_set = frozenset(vocab.eos_token_ids)
        self._words = (vocab.size + 31) // 32
        eos_bits = np.zeros(self._words, dtype=np.int32)
        for e in vocab.eos_token_ids:
            eos_bits[e >> 5] |= np.int32(np.uint32(1 << (e & 31)).view(np.int32))
        self._eos_words = eos_bits
        self._eos_words.setflags(write=False)
        lx = lexer
        self._is_ign = np.zeros(grammar.n_terms + 1, dtype=bool)
        for t in grammar.ignore:
            self._is_ign[t] = True
        after_len = np.array([len(a) for a in lx.after] + [0], dtype=np.int64)
        self._after_start = np.concatenate([[0], np.cumsum(after_len)[:-1]]).astype(np.int64)
        self._after_len = after_len
        self._after_flat = np.array([a for lst in lx.after for a in lst] + [0], dtype=np.int64)
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
        self.initial_state = (int(lx.start[int(lx.state_set[grammar.table.start_state])]), self.parser.root, 0)

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
                            budget="max_index_bytes", limit=self.limits.max_index_bytes)
        return r

    def build_all(self) -> "GrammarIndex":
        """Classify tokens from every lexer state now (ahead-of-time use); returns self."""
        deadline = self.limits.deadline()
        for q in range(self.lexer.n_states):
            self.row(q)
            deadline.check("building grammar index")
        return self

    def _walk(self, q0: int) -> LexRow:
        lx = self.lexer
        trie = self.vocabulary.trie
        trans, emit, restart, aid = lx.trans, lx.emit, lx.restart, lx.aid
        ign_alive, need_q = lx.ign_alive, lx.need.astype(np.int64)
        node_cls = lx.byte_class[trie.node_byte]
        child_start, child_count = trie.child_start.astype(np.int64), trie.child_count.astype(np.int64)
        tok_start, tok_count, tok_ids = trie.tok_start, trie.tok_count, trie.tok_ids
        is_ign = self._is_ign
        limit = self.max_ignore
        n_sets = len(lx.set_terms)
        n_terms = self.grammar.n_terms
        n_psets = len(self._psets)

        seq_parent, seq_term, seq_set = [-1], [-1], [-1]
        seq_index: dict[int, int] = {}

        open0 = bool(ign_alive[q0])
        node = np.zeros(1, dtype=np.int64)
        lq = np.array([q0], dtype=np.int64)
        seq = np.zeros(1, dtype=np.int64)
        r1 = np.zeros(1, dtype=np.int64)
        run = np.zeros(1, dtype=np.int64)
        opn = np.array([open0])
        out_tok, out_key, out_need = [], [], []
        while len(node):
            cnt = child_count[node]
            total = int(cnt.sum())
            if total == 0:
                break
            rep = np.repeat(np.arange(len(node)), cnt)
            offs = np.arange(total) - np.repeat(np.cumsum(cnt) - cnt, cnt)
            child = child_start[node][rep] + offs
            c = node_cls[child]
            q = lq[rep]
            t = trans[q, c]
            # 1. the byte continues the lexeme
            m_cont = t >= 0
            # 2. the lexeme ends before this byte (KILL implies emit >= 0)
            m_b = t == KILL
            term = np.where(m_b, emit[q], n_terms)
            m_bi = m_b & is_ign[term]
            m_bn = m_b & ~is_ign[term]
            parts_idx = [np.nonzero(m_cont)[0], np.nonzero(m_bi)[0]]
            parts_nq = [t[m_cont].astype(np.int64), restart[aid[q[m_bi]], c[m_bi]].astype(np.int64)]
            parts_seq = [seq[rep[m_cont]], seq[rep[m_bi]]]
            parts_kind = [np.zeros(int(m_cont.sum()), bool), np.zeros(int(m_bi.sum()), bool)]
            bn = np.nonzero(m_bn)[0]
            if len(bn):
                bt = term[bn]
                k = self._after_len[bt]
                rep2 = np.repeat(np.arange(len(bn)), k)
                offs2 = np.arange(int(k.sum())) - np.repeat(np.cumsum(k) - k, k)
                a2 = self._after_flat[self._after_start[bt][rep2] + offs2]
                src = bn[rep2]
                keys = (seq[rep[src]] * (n_terms + 1) + bt[rep2]) * n_sets + a2
                uniq, inv = np.unique(keys, return_inverse=True)
                ids = np.empty(len(uniq), dtype=np.int64)
                for i, key in enumerate(uniq.tolist()):
                    sid = seq_index.get(key)
                    if sid is None:
                        sid = len(seq_parent)
                        seq_index[key] = sid
                        rest, a = divmod(key, n_sets)
                        parent, tt = divmod(rest, n_terms + 1)
                        seq_parent.append(parent)
                        seq_term.append(tt)
                        seq_set.append(a)
                    ids[i] = sid
                parts_idx.append(src)
                parts_nq.append(restart[a2, c[src]].astype(np.int64))
                parts_seq.append(ids[inv.reshape(-1)])
                parts_kind.append(np.ones(len(src), bool))
            idx = np.concatenate(parts_idx)
            nq = np.concatenate(parts_nq)
            nseq = np.concatenate(parts_seq)
            new_lexeme = np.concatenate(parts_kind)
            ok = nq >= 0
            idx, nq, nseq, new_lexeme = idx[ok], nq[ok], nseq[ok], new_lexeme[ok]
            par = rep[idx]
            ia = ign_alive[nq]
            o = opn[par] & ~new_lexeme
            run_prev = np.where(new_lexeme, 0, run[par])
            nrun = np.where(ia, run_prev + 1, 0)
            nopen = o & ia
            nr1 = r1[par] + (o & ia)
            bound = np.where(ia, nrun + need_q[nq], 0)
            ok = bound <= limit
            idx, nq, nseq, nrun, nopen, nr1 = idx[ok], nq[ok], nseq[ok], nrun[ok], nopen[ok], nr1[ok]
            node = child[idx]
            lq, seq, run, opn, r1 = nq, nseq, nrun, nopen, nr1
            tc = tok_count[node]
            has = np.nonzero(tc > 0)[0]
            if len(has):
                htc = tc[has]
                r = np.repeat(has, htc)
                o2 = np.arange(int(htc.sum())) - np.repeat(np.cumsum(htc) - htc, htc)
                out_tok.append(tok_ids[tok_start[node[r]] + o2])
                out_key.append(seq[r] * n_psets + self._pset_id[lq[r]])
                out_need.append(r1[r] + np.where(opn[r], need_q[lq[r]], 0))
        V = self.vocabulary.size
        if out_tok:
            toks = np.concatenate(out_tok).astype(np.int64)
            keys = np.concatenate(out_key)
            needs = np.concatenate(out_need)
        else:
            toks = keys = needs = np.zeros(0, dtype=np.int64)
        uniq, inv = np.unique(keys, return_inverse=True)
        inv = inv.reshape(-1)
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
            n_tokens=len(np.unique(toks)),
        )

    # -- masks --------------------------------------------------------------------------------
    def mask(self, config: tuple[int, int, int]) -> tuple[np.ndarray, bool, bool]:
        """(packed bitmask, accepting, has a text token) for a configuration (q, stack, ignore run)."""
        hit = self._masks.get(config)
        if hit is None:
            hit = self._compute_mask(config)
            with self._lock:
                if len(self._masks) >= _MASK_CACHE_ENTRIES:
                    for key in list(self._masks)[: _MASK_CACHE_ENTRIES // 4]:
                        del self._masks[key]
                self._masks[config] = hit
        return hit

    def _verdicts(self, row: LexRow, node: int) -> int:
        """Bit g set when group g's tokens are allowed on stack ``node``."""
        p = self.parser
        ign = self.lexer.ignore_bits
        state_set = self._state_set_l
        stacks = [node]
        for i in range(1, len(row.seq_parent)):
            s = stacks[row.seq_parent[i]]
            if s >= 0:
                s = p.feed(s, row.seq_term[i])
                if s >= 0 and state_set[p.top(s)] != row.seq_set[i]:
                    s = -1
            stacks.append(s)
        accs = [((p.acc_bits(s) | ign) if s >= 0 else 0) for s in stacks]
        ok = 0
        for g, (sq, ps) in enumerate(zip(row.group_seq, row.group_pset)):
            if accs[sq] & ps:
                ok |= 1 << g
        return ok

    def _compute_mask(self, config: tuple[int, int, int]) -> tuple[np.ndarray, bool, bool]:
        q, node, k = config
        row = self.row(q)
        ok = self._verdicts(row, node)
        accepting = self.config_accepting(config)
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
            words |= self._eos_words
        words.setflags(write=False)
        return words, accepting, has_text

    def _drop_over_budget(self, words: np.ndarray, row: LexRow, kthr: int) -> None:
        """Clear tokens whose ignore run would exceed the budget left (few: whitespace-heavy ones)."""
        ids, need = row.need_ids, row.need_vals  # sorted by need, descending
        n = int(np.searchsorted(-need, -kthr, side="left"))  # entries with need > kthr
        if n:
            cut = ids[:n]
            np.bitwise_and.at(words.view(np.uint32), cut >> 5, ~(np.uint32(1) << (cut & 31).astype(np.uint32)))

    def config_accepting(self, config: tuple[int, int, int]) -> bool:
        """True when the text may end in this configuration."""
        q, node, _ = config
        p = self.parser
        t = self._emit_l[q]
        if q == self.initial_state[0] and node == self.parser.root:
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
        for b in data:
            config = self.step_byte(config, b)
            if config is None:
                return None
        return config

    def single_byte(self, config: tuple[int, int, int]) -> int:
        """The only byte allowed next when the text cannot end here, else -1."""
        if self.mask(config)[1]:
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

    def matcher(self):
        """A fresh matcher at the start of the text (cheap: one per sequence)."""
        from .grammar_matcher import GrammarMatcher

        return GrammarMatcher(self)

    def __repr__(self) -> str:
        return (f"GrammarIndex({self.fingerprint[:24]}, lexer_states={self.lexer.n_states}, "
                f"rows={len(self._rows)}, masks={len(self._masks)})")


__all__ = ["GrammarIndex", "LexRow", "pack_bitmask"]
