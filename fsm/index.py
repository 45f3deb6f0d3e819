"""The token index: for each automaton state, which tokens are allowed and where each one leads.

Rows are computed lazily — the first time a matcher reaches a state — by walking the vocabulary's
byte trie from that state with numpy arrays of live (state, trie node) pairs, pruning a pair as soon
as the automaton rejects it. No Python loop runs over tokens. ``build_all()`` computes every
reachable row ahead of time (all states walked together in one vectorized pass per depth).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np

from .automata import ByteDFA
from .errors import SpecError, SpecTooComplex
from .limits import DEFAULT_LIMITS, Limits
from .vocabulary import TokenTrie, Vocabulary

FINISHED = -2  # the "state" after EOS


def walk_tokens(
    dfa: ByteDFA, states: np.ndarray, trie: TokenTrie, labels_are_classes: bool = False
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """All (source, token, end state) triples: token's bytes read from ``states[source]`` stay live.

    >>> from fsm.vocabulary import Vocabulary
    >>> from fsm.regex import regex_to_dfa
    >>> v = Vocabulary([b"a", b"ab", b"b", None], eos_token_ids=[3])
    >>> src, tok, end = walk_tokens(regex_to_dfa("ab"), np.array([0]), v.trie)
    >>> sorted(tok.tolist())
    [0, 1]
    """
    table, cls = dfa.table, dfa.byte_class
    node_cls = trie.node_byte if labels_are_classes else cls[trie.node_byte]
    src = np.arange(len(states), dtype=np.int64)
    st = np.asarray(states, dtype=np.int64)
    nodes = np.zeros(len(states), dtype=np.int64)
    out_src, out_tok, out_end = [], [], []
    child_start, child_count = trie.child_start, trie.child_count
    tok_start, tok_count, tok_ids = trie.tok_start, trie.tok_count, trie.tok_ids
    while len(nodes):
        cnt = child_count[nodes]
        total = int(cnt.sum())
        if total == 0:
            break
        rep = np.repeat(np.arange(len(nodes)), cnt)
        offs = np.arange(total) - np.repeat(np.cumsum(cnt) - cnt, cnt)
        children = child_start[nodes][rep] + offs
        nxt = table[st[rep], node_cls[children]]
        keep = nxt >= 0
        nodes, st, src = children[keep], nxt[keep].astype(np.int64), src[rep][keep]
        tc = tok_count[nodes]
        has = tc > 0
        if has.any():
            hn, hs, hsrc, htc = nodes[has], st[has], src[has], tc[has]
            if (htc == 1).all():
                out_tok.append(tok_ids[tok_start[hn]])
                out_end.append(hs)
                out_src.append(hsrc)
            else:
                r = np.repeat(np.arange(len(hn)), htc)
                o = np.arange(int(htc.sum())) - np.repeat(np.cumsum(htc) - htc, htc)
                out_tok.append(tok_ids[tok_start[hn][r] + o])
                out_end.append(hs[r])
                out_src.append(hsrc[r])
    if not out_tok:
        e = np.zeros(0, dtype=np.int64)
        return e, e.astype(np.int32), e.astype(np.int32)
    return (
        np.concatenate(out_src),
        np.concatenate(out_tok).astype(np.int32),
        np.concatenate(out_end).astype(np.int32),
    )


def class_trie(trie: TokenTrie, dfa: ByteDFA) -> TokenTrie:
    """The vocabulary trie with bytes replaced by the DFA's byte classes and equal paths merged.

    Tokens whose bytes fall in the same class sequence behave identically in every state of this
    DFA, so the walk visits each class path once instead of each token (a few hundred nodes instead
    of ~100k for a JSON string state). Paths through a class that no state accepts are dropped.
    Node labels of the result are class ids (walk it with ``labels_are_classes=True``).
    """
    k = dfa.table.shape[1]
    cls = dfa.byte_class[trie.node_byte].astype(np.int64)
    dead_cls = (dfa.table < 0).all(axis=0)
    n = trie.n_nodes
    cnode = np.full(n, -1, dtype=np.int64)
    cnode[0] = 0
    c_parent = [np.zeros(1, np.int64)]
    c_label = [np.zeros(1, np.int64)]
    c_depth = [np.zeros(1, np.int64)]
    next_id = 1
    frontier = np.zeros(1, dtype=np.int64)  # byte-trie nodes whose class path is live
    d = 0
    while len(frontier):
        d += 1
        cnt = trie.child_count[frontier]
        total = int(cnt.sum())
        if total == 0:
            break
        rep = np.repeat(np.arange(len(frontier)), cnt)
        offs = np.arange(total) - np.repeat(np.cumsum(cnt) - cnt, cnt)
        kids = trie.child_start[frontier][rep] + offs
        c = cls[kids]
        alive = ~dead_cls[c]
        kids, c, par = kids[alive], c[alive], cnode[frontier[rep[alive]]]
        if not len(kids):
            break
        # Parents are the previous level's contiguous ids, so (parent, class) pairs index a small
        # dense table: a bincount-style compaction instead of a sort.
        base = int(par.min())
        local = (par - base) * k + c
        present = np.zeros(int(local.max()) + 1, dtype=bool)
        present[local] = True
        uniq = np.flatnonzero(present)
        rank = np.cumsum(present) - 1
        cnode[kids] = next_id + rank[local]
        c_parent.append(uniq // k + base)
        c_label.append(uniq % k)
        c_depth.append(np.full(len(uniq), d, dtype=np.int64))
        next_id += len(uniq)
        frontier = kids
    parent = np.concatenate(c_parent)
    label = np.concatenate(c_label)
    depth = np.concatenate(c_depth)
    m = next_id
    # Children are contiguous: ids were assigned per depth in (parent, label) order.
    child_count = np.bincount(parent[1:], minlength=m).astype(np.int32)
    first = np.full(m, m, dtype=np.int64)
    np.minimum.at(first, parent[1:], np.arange(1, m))
    child_start = np.where(child_count > 0, first, 0).astype(np.int32)
    tok_node = trie.token_nodes
    tok_order = trie.tok_ids
    ctn = cnode[tok_node]
    keep = ctn >= 0
    ctn, toks = ctn[keep], tok_order[keep]
    order = np.argsort(ctn, kind="stable")
    ctn, toks = ctn[order], toks[order]
    tok_count = np.bincount(ctn, minlength=m).astype(np.int32)
    tok_start = (np.cumsum(tok_count) - tok_count).astype(np.int32)
    return TokenTrie(
        label.astype(np.int32),
        child_start,
        child_count,
        tok_start,
        tok_count,
        toks.astype(np.int32),
        depth.astype(np.int32),
        parent,
    )


def pack_bitmask(token_ids: np.ndarray, size: int) -> np.ndarray:
    """Packed allowed-set: ceil(size/32) int32 words, bit ``i % 32`` of word ``i // 32`` = token ``i``.

    >>> pack_bitmask(np.array([0, 33]), 64).tolist()
    [1, 2]
    """
    words = (size + 31) // 32
    bits = np.zeros(words * 32, dtype=bool)
    bits[token_ids] = True
    return np.packbits(bits, bitorder="little").view("<i4").astype(np.int32, copy=False)


def unpack_bitmask(words: np.ndarray, size: int) -> np.ndarray:
    """Inverse of `pack_bitmask`: sorted token ids whose bit is set."""
    bits = np.unpackbits(np.ascontiguousarray(words, dtype="<i4").view(np.uint8), bitorder="little")
    return np.nonzero(bits[:size])[0].astype(np.int32)


@dataclass(eq=False)
class Row:
    """One state's allowed tokens (sorted, EOS included when accepting) and the state each leads to."""

    tokens: np.ndarray  # int32, sorted
    next_states: np.ndarray  # int32, FINISHED for EOS
    has_text: bool  # any non-EOS token
    _bitmask: np.ndarray | None = None

    @property
    def nbytes(self) -> int:
        return (
            self.tokens.nbytes
            + self.next_states.nbytes
            + (0 if self._bitmask is None else self._bitmask.nbytes)
        )


class RegexIndex:
    """Lazy token index over a byte DFA; immutable from the outside and safe to share across threads.

    >>> from fsm.vocabulary import Vocabulary
    >>> from fsm.regex import regex_to_dfa
    >>> v = Vocabulary([b"a", b"b", b"ab", None], eos_token_ids=[3])
    >>> m = RegexIndex(regex_to_dfa("ab"), v).matcher()
    >>> m.allowed_token_ids().tolist()
    [0, 2]
    """

    def __init__(self, dfa: ByteDFA, vocab: Vocabulary, fingerprint: str = "", limits: Limits | None = None):
        self.dfa = dfa
        self.vocabulary = vocab
        self.fingerprint = fingerprint
        self.limits = limits or DEFAULT_LIMITS
        self._rows: dict[int, Row] = {}
        self._shared: dict[bytes, tuple[np.ndarray, list]] = {}
        self._lock = threading.RLock()
        self._eos = np.array(vocab.eos_token_ids, dtype=np.int32)
        self._eos_set = frozenset(vocab.eos_token_ids)
        self._single: dict[int, int] = {}
        self._class_sizes = np.bincount(dfa.byte_class, minlength=dfa.table.shape[1])
        self._nbytes = 0
        self._class_trie: TokenTrie | None = None
        if not self._all_states_reach_accept_by_single_bytes():
            # Some state needs a byte that is no token on its own: prune by token-level liveness.
            self.build_all()
            self._prune_token_dead()

    # -- rows -------------------------------------------------------------------------------
    def row(self, state: int) -> Row:
        """The row of ``state``, computed on first use."""
        r = self._rows.get(state)
        if r is None:
            with self._lock:
                r = self._rows.get(state)
                if r is None:
                    src, tok, end = walk_tokens(
                        self.dfa, np.array([state]), self.trie, labels_are_classes=True
                    )
                    r = self._make_row(state, tok, end)
                    self._rows[state] = r
        return r

    def _make_row(self, state: int, tok: np.ndarray, end: np.ndarray) -> Row:
        has_text = len(tok) > 0
        if self.dfa.accepting[state]:
            tok = np.concatenate([tok, self._eos])
            end = np.concatenate([end, np.full(len(self._eos), FINISHED, dtype=np.int32)])
        if len(tok) * 32 > self.vocabulary.size:  # big rows: a scatter is cheaper than a sort
            full = np.full(self.vocabulary.size, FINISHED - 1, dtype=np.int32)
            full[tok] = end
            tok = np.flatnonzero(full != FINISHED - 1).astype(np.int32)
            end = full[tok]
        else:
            order = np.argsort(tok, kind="stable")
            tok, end = tok[order].astype(np.int32), end[order].astype(np.int32)
        # Many states allow the same token set (e.g. the inside of every free JSON string): share it.
        key = tok.tobytes()
        shared = self._shared.get(key)
        if shared is not None and np.array_equal(shared[0], tok):
            tok = shared[0]
            row = Row(tok, end, has_text, None)
            row._bitmask = shared[1][0]
        else:
            row = Row(tok, end, has_text)
            self._shared[key] = (tok, [None])
            self._nbytes += tok.nbytes
        self._nbytes += end.nbytes
        if self._nbytes > self.limits.max_index_bytes:
            raise SpecTooComplex(
                f"token index {self.fingerprint[:40]} grew past max_index_bytes={self.limits.max_index_bytes:,}",
                budget="max_index_bytes",
                limit=self.limits.max_index_bytes,
            )
        return row

    def bitmask(self, state: int) -> np.ndarray:
        """Packed allowed-token bitmask of ``state`` (ceil(V/32) int32 words), cached."""
        r = self.row(state)
        bm = r._bitmask
        if bm is None:
            with self._lock:
                shared = self._shared.get(r.tokens.tobytes())
                if shared is not None and shared[1][0] is not None:
                    bm = shared[1][0]
                else:
                    bm = pack_bitmask(r.tokens, self.vocabulary.size)
                    bm.setflags(write=False)
                    if shared is not None:
                        shared[1][0] = bm
                    self._nbytes += bm.nbytes
                r._bitmask = bm
        return bm

    def build_all(self) -> "RegexIndex":
        """Compute every row now (ahead-of-time use); returns self."""
        with self._lock:
            todo = np.array(sorted(set(range(self.dfa.n_states)) - set(self._rows)), dtype=np.int64)
            if len(todo):
                deadline = self.limits.deadline()
                # Walk in chunks so memory stays bounded on big automata.
                for lo in range(0, len(todo), 256):
                    chunk = todo[lo : lo + 256]
                    src, tok, end = walk_tokens(self.dfa, chunk, self.trie, labels_are_classes=True)
                    order = np.argsort(src, kind="stable")
                    src, tok, end = src[order], tok[order], end[order]
                    bounds = np.searchsorted(src, np.arange(len(chunk) + 1))
                    for i, s in enumerate(chunk.tolist()):
                        a, b = bounds[i], bounds[i + 1]
                        self._rows[s] = self._make_row(s, tok[a:b], end[a:b])
                    deadline.check(f"building index {self.fingerprint[:40]}")
        return self

    def _all_states_reach_accept_by_single_bytes(self) -> bool:
        singles = self.vocabulary.single_bytes
        # Only the classes the DFA distinguishes matter: a class is usable if one of its bytes is a token.
        usable = np.zeros(self.dfa.table.shape[1], dtype=bool)
        usable[self.dfa.byte_class[singles]] = True
        full = self.dfa.table[:, usable]
        live = self.dfa.accepting.copy()
        while True:
            nxt = full >= 0
            reach = (nxt & live[np.maximum(full, 0)]).any(axis=1) | live
            if (reach == live).all():
                break
            live = reach
        return bool(live.all())

    def _prune_token_dead(self) -> None:
        """Drop transitions into states from which no token sequence reaches acceptance."""
        n = self.dfa.n_states
        alive = np.ones(n, dtype=bool)
        while True:
            changed = False
            for s, r in self._rows.items():
                if not alive[s]:
                    continue
                ok = (r.next_states == FINISHED) | alive[np.maximum(r.next_states, 0)]
                if not ok.any():
                    alive[s] = False
                    changed = True
            if not changed:
                break
        if not alive[self.dfa.initial]:
            raise SpecError(
                "no sequence of this vocabulary's tokens can produce a string the spec accepts "
                "(the spec needs bytes that are not tokens)"
            )
        for s, r in list(self._rows.items()):
            ok = (r.next_states == FINISHED) | alive[np.maximum(r.next_states, 0)]
            if not ok.all():
                tok, end = r.tokens[ok], r.next_states[ok]
                self._rows[s] = Row(tok.copy(), end.copy(), bool((end != FINISHED).any()))

    @property
    def trie(self) -> TokenTrie:
        """The vocabulary trie folded onto this DFA's byte classes (built once per index)."""
        if self._class_trie is None:
            with self._lock:
                if self._class_trie is None:
                    self._class_trie = class_trie(self.vocabulary.trie, self.dfa)
        return self._class_trie

    # -- automaton helpers used by matchers ---------------------------------------------------
    def single_byte(self, state: int) -> int:
        """The only byte the DFA accepts from ``state`` when it is not accepting, else -1."""
        b = self._single.get(state)
        if b is None:
            b = -1
            if not self.dfa.accepting[state]:
                live = self.dfa.table[state] >= 0
                if int(self._class_sizes[live].sum()) == 1:
                    cls = int(np.nonzero(live)[0][0])
                    b = int(np.nonzero(self.dfa.byte_class == cls)[0][0])
            self._single[state] = b
        return b

    @property
    def initial_state(self) -> int:
        return self.dfa.initial

    def is_accepting_state(self, state: int) -> bool:
        return state == FINISHED or bool(self.dfa.accepting[state])

    @property
    def n_rows(self) -> int:
        return len(self._rows)

    @property
    def nbytes(self) -> int:
        return self._nbytes + self.dfa.nbytes

    def matcher(self):
        """A fresh matcher at the start state (cheap: one per sequence)."""
        from .matcher import Matcher

        return Matcher(self)

    def __repr__(self) -> str:
        return f"RegexIndex({self.fingerprint[:24]}, states={self.dfa.n_states}, rows={len(self._rows)})"
