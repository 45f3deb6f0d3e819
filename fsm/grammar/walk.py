"""One row of the grammar index: what every token does from one lexer state, by one trie walk.

For a lexer state ``q`` one vectorized walk of the vocabulary trie classifies every token by what it
does from there, independent of the parser:

* the terminals it completes on the way, each with the contextual-lexer set the next lexeme must be
  lexed in (a path in a small per-row trie of terminal sequences), and
* the set of terminals its unfinished last lexeme can still become.

Tokens with the same (sequence, set) form a group; most tokens fall in a handful of groups (e.g. all
tokens that stay inside a JSON string), so a mask needs one parser check per group, not per token.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..index import pack_bitmask
from ..limits import Deadline
from ..vocabulary import TokenTrie
from .lexer import KILL
from .tables import LexerTables

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
        for g, (sq, ps) in enumerate(zip(self.group_seq, self.group_pset, strict=True)):
            self.seq_groups[sq].append((1 << g, ps))

    @property
    def nbytes(self) -> int:
        n = sum(m.nbytes for m in self.big_masks.values()) + sum(a.nbytes for a in self.small_ids.values())
        return n + (0 if self.need is None else self.need.nbytes)


def walk_row(
    tables: LexerTables, trie: TokenTrie, vocab_size: int, q0: int, deadline: Deadline | None = None
) -> LexRow:
    """Classify every token from lexer state ``q0`` in one vectorized walk of the vocabulary trie
    (``deadline`` checked once per trie level).

    >>> from fsm import Grammar, Vocabulary
    >>> v = Vocabulary([b"(", b")", b"()", b"x", None], eos_token_ids=[4])
    >>> idx = Grammar('start: "(" start ")" | "x"').build_index(v)
    >>> row = walk_row(idx.tables, v.trie, v.size, idx.initial_state[0])
    >>> row.n_tokens  # "(" and "x": "()" and ")" cannot start the text
    2
    """
    ws = WalkStates(tables, q0)
    toks, wids = _walk_trie(tables, trie, ws, deadline)
    ws_key, ws_need = ws.keys_and_needs()
    keys, needs = ws_key[wids], ws_need[wids]
    return _group(tables, ws, toks, keys, needs if tables.ign_alive[q0] else None, vocab_size)


def _walk_trie(
    tables: LexerTables, trie: TokenTrie, ws: WalkStates, deadline: Deadline | None
) -> tuple[np.ndarray, np.ndarray]:
    """(token, walk state) for every token the lexer lets through (several per token on branches).

    Entries are (trie node, walk state); a walk state interns everything the rest of the walk
    depends on — lexer state, completed-terminal sequence, ignore-run counters — so one step of
    all entries is a gather in a small table that grows as new walk states appear.
    """
    node_cls = tables.node_cls
    child_start, child_count = tables.child_start, tables.child_count
    tok_start, tok_count, tok_ids = trie.tok_start, trie.tok_count, trie.tok_ids
    n_cls = tables.n_cls
    node = np.zeros(1, dtype=np.int64)
    wid = np.zeros(1, dtype=np.int64)
    out_tok, out_ws = [], []
    while len(node):
        if deadline is not None:
            deadline.check("the grammar row's token walk")
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
    if not out_tok:
        e = np.zeros(0, dtype=np.int64)
        return e, e
    return np.concatenate(out_tok).astype(np.int64), np.concatenate(out_ws)


def _group(
    tables: LexerTables,
    ws: WalkStates,
    toks: np.ndarray,
    keys: np.ndarray,
    needs: np.ndarray | None,
    vocab_size: int,
) -> LexRow:
    """The row: tokens grouped by key (small groups as ids, big ones as packed masks); with
    ``needs`` (the row starts inside an open ignore run), each token's ignore bytes."""
    n_psets = len(tables.psets)
    uniq, inv = dense_unique(keys)
    group_seq = (uniq // n_psets).tolist()
    group_pset = [tables.psets[int(p)] for p in (uniq % n_psets).tolist()]
    order = np.argsort(inv, kind="stable")
    counts = np.bincount(inv, minlength=len(uniq))
    bounds = np.concatenate([[0], np.cumsum(counts)])
    big: dict[int, np.ndarray] = {}
    small: dict[int, np.ndarray] = {}
    for g in range(len(uniq)):
        ids = toks[order[bounds[g] : bounds[g + 1]]]
        if len(ids) >= _BIG_GROUP:
            m = pack_bitmask(ids, vocab_size)
            m.setflags(write=False)
            big[g] = m
        else:
            small[g] = ids.astype(np.int64)
    need = need_ids = need_vals = None
    if needs is not None:
        # a token reached along several branches has the same bytes, hence the same ignore run
        need = np.zeros(vocab_size, dtype=np.int16)
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
        seq_parent=ws.seq_parent,
        seq_term=ws.seq_term,
        seq_set=ws.seq_set,
        n_tokens=int(np.count_nonzero(np.bincount(toks, minlength=1))),
    )


class WalkStates:
    """Interned walk states of one row walk and their transitions per byte class.

    A walk state is (lexer state, sequence-trie node, ignore-run length, bytes of the run that was
    open when the token started, whether that run is still open).
    """

    def __init__(self, tables: LexerTables, q0: int):
        self.ix = tables
        self.ids: dict[tuple, int] = {}
        self.states: list[tuple] = []
        self.table = np.full((16, tables.n_cls), _UNKNOWN, dtype=np.int32)
        self.branches: dict[int, list[int]] = {}
        self.seq_parent, self.seq_term, self.seq_set = [-1], [-1], [-1]
        self.seq_index: dict[tuple, int] = {}
        self.intern((q0, 0, 0, 0, bool(tables.ign[q0])))

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
            self.seq_set.append(self.ix.amasks[amask])
        return sid

    def _continue(self, nq: int, seq: int, run: int, r1: int, opn: bool) -> int:
        ix = self.ix
        if nq < 0:
            return -1
        if ix.ign[nq]:
            run += 1
            if opn:
                r1 += 1
            if run + ix.need[nq] > ix.max_ignore:
                return -1
        else:
            run, opn = 0, False
        return self.intern((nq, seq, run, r1, opn))

    def fill(self, w: int, c: int) -> None:
        ix = self.ix
        q, seq, run, r1, opn = self.states[w]
        t = ix.trans[q][c]
        if t >= 0:
            self.table[w, c] = self._continue(t, seq, run, r1, opn)
            return
        if t != KILL:
            self.table[w, c] = -1
            return
        term = ix.emit[q]
        if ix.is_ignore[term]:
            self.table[w, c] = self._continue(ix.restart[ix.aid[q]][c], seq, run, r1, opn)
            return
        succ = []
        start, stop = ix.bo_start[term * ix.n_cls + c], ix.bo_start[term * ix.n_cls + c + 1]
        for o in range(int(start), int(stop)):
            nq, am = int(ix.bo_nq[o]), int(ix.bo_am[o])
            s2 = self._continue(nq, self._seq(seq, term, am), 0, r1, False)
            if s2 >= 0:
                succ.append(s2)
        if len(succ) == 1:
            self.table[w, c] = succ[0]
        elif not succ:
            self.table[w, c] = -1
        else:
            self.table[w, c] = _BRANCH
            self.branches[w * ix.n_cls + c] = succ

    def keys_and_needs(self) -> tuple[np.ndarray, np.ndarray]:
        """Per walk state: the group key (sequence node, terminal set) and the ignore budget it needs."""
        ix = self.ix
        n_psets = len(ix.psets)
        keys = np.empty(len(self.states), dtype=np.int64)
        needs = np.empty(len(self.states), dtype=np.int64)
        for i, (q, seq, _run, r1, opn) in enumerate(self.states):
            keys[i] = seq * n_psets + int(ix.pset_id[q])
            needs[i] = r1 + (ix.need[q] if opn else 0)
        return keys, needs


def dense_unique(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
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
