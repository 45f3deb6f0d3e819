"""Walks of the vocabulary's byte trie against an automaton, shared by every token index.

Walking the trie (not the token list) visits each shared prefix once, and walking it with numpy
arrays of live (state, trie node) pairs keeps every Python loop off the ~100k tokens: one vectorized
step per depth, pruning a pair as soon as the automaton rejects it.
"""

from __future__ import annotations

import numpy as np

from ..automata import ByteDFA
from ..limits import Deadline
from ..vocabulary import TokenTrie


def walk_tokens(
    dfa: ByteDFA,
    states: np.ndarray,
    trie: TokenTrie,
    labels_are_classes: bool = False,
    deadline: Deadline | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """All (source, token, end state) triples: token's bytes read from ``states[source]`` stay live.

    ``deadline`` is checked once per trie level (`SpecTooComplex` past it).

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
        if deadline is not None:
            deadline.check("the token walk of a row")
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

    >>> from fsm.vocabulary import Vocabulary
    >>> from fsm.regex import regex_to_dfa
    >>> v = Vocabulary([b"a", b"b", b"c", b"ab", None], eos_token_ids=[4])
    >>> class_trie(v.trie, regex_to_dfa("[ab]+")).n_nodes < v.trie.n_nodes
    True
    """
    cnode, parent, label, depth = _class_levels(trie, dfa)
    m = len(parent)
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


def _class_levels(trie: TokenTrie, dfa: ByteDFA) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The class-trie nodes, level by level: (byte-trie node -> class node or -1, and per class node
    its parent, class label and depth); ids are assigned per depth in (parent, label) order."""
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
    return cnode, np.concatenate(c_parent), np.concatenate(c_label), np.concatenate(c_depth)


def tokenize_longest(trie: TokenTrie, data: bytes) -> list[int]:
    """Greedy longest-match tokenization of ``data`` over the trie; stops where no token fits whole.

    >>> from fsm.vocabulary import Vocabulary
    >>> tokenize_longest(Vocabulary([b"a", b"ab", b"b", None], eos_token_ids=[3]).trie, b"abbc")
    [1, 2]
    """
    out: list[int] = []
    pos = 0
    nb, cs, cc, ts, tc, ti = (
        trie.node_byte,
        trie.child_start,
        trie.child_count,
        trie.tok_start,
        trie.tok_count,
        trie.tok_ids,
    )
    while pos < len(data):
        node, best, best_len = 0, -1, 0
        k = pos
        while k < len(data):
            a, n = int(cs[node]), int(cc[node])
            if n == 0:
                break
            j = a + int(np.searchsorted(nb[a : a + n], data[k]))
            if j >= a + n or nb[j] != data[k]:
                break
            node = j
            k += 1
            if tc[node]:
                best, best_len = int(ti[ts[node]]), k - pos
        if best < 0:
            break
        out.append(best)
        pos += best_len
    return out
