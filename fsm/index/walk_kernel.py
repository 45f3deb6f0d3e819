"""The compiled depth-first loop of a row walk (`fsm.index.trie_kernel` drives it round by round).

One pass over the preorder-numbered trie below each start node: a node's byte steps the state of
the node above it, a dead step skips the whole subtree (``size``), and a subtree whose bytes all
take one uniform step is emitted without visiting its nodes. Compiled by numba (``cache=True``,
``nogil``): a few ns a node, where the numpy walk it replaced paid ~25 array calls per trie depth.
"""

from __future__ import annotations

import numba
import numpy as np

from .steps import _uniform_chain

# Subtrees of at most this many nodes are walked, not tried as chains: a chain tried (passed or
# not) costs ~150 ns, visiting a node ~10. Trying every subtree of 3 nodes or more made a row of a
# pattern inside a string (a UUID), where nearly every try fails, 5-9 ms instead of 1 ms.
CHAIN_MIN_NODES = 32


@numba.njit(cache=True, nogil=True)
def walk_subtrees(
    table,
    rows,
    expanded,
    byte_class,
    n_labels,
    label,
    depth,
    size,
    tok_start,
    tok_count,
    tok_ids,
    sub_bytes,
    height,
    whole,
    before,
    char_height,
    tok_chars,
    tok_len,
    max_depth,
    steps,
    masks,
    known,
    chars,
    start_states,
    start_nodes,
    out_tok,
    out_end,
    n_out,
    pend_state,
    pend_node,
    galt,
    gdead,
    def_state,
    def_node,
    def_kind,
    cut_state,
    loop_class,
    start_flags,
    pend_flag,
    cut_node,
    n_cut,
    chain_states,
    chain_m0,
    chain_m1,
    chain_len,
    chain_kills,
):  # pragma: no cover - compiled
    """Walk the subtrees below ``start_nodes[i]`` from ``start_states[i]`` (tokens at a start node
    itself are not emitted: the caller did); append (token, end state) pairs from ``n_out`` on;
    pairs at an unexpanded state with children are written to ``pend_*`` instead of walked.

    Guarded states (`LazyByteDFA.guard_arrays`: ``galt`` >= 0) decide nothing here: a node whose
    byte leads elsewhere once the state's checks pass is deferred whole (``def_kind`` 0: the
    subtree, from the state above it), and the tokens at a node that end in a guarded state with
    nothing left when its checks fail (``gdead``) are deferred (kind 1) — `fsm.index.guarded`
    decides both with the matcher's text.

    A subtree all of whose labels take the state above it along one chain of uniform steps (the
    inside of a free string loops on one state; a ``maxLength`` string counts characters along a
    chain) is emitted whole without visiting its nodes: a token's end is the chain's state at its
    length, in characters where the subtree reads whole UTF-8 characters (``whole``; all False for
    a trie of class labels), else in bytes.

    ``cut_state`` >= 0 (a sibling row's anchor, `fsm.index.sibling_rows`): a node reached in that
    state along bytes that all take it to itself (``loop_class``; ``start_flags``: whether the path
    to each start node did) is written to ``cut_node`` from ``n_cut`` on, not walked: its subtree
    ends where it does from the anchor at the root. A pending pair's flag goes to ``pend_flag``.
    ``chain_len`` > 0: ``chain_states[k]`` is the state ``k`` bytes below the trie's root along a
    chain whose every state reads the labels of ``chain_m0``/``chain_m1`` (below 128) to the next
    (`steps.label_chain`; none guarded): a subtree below a node in ``chain_states[depth]`` whose
    labels all lie in that set and whose tokens are no longer than ``chain_len`` is emitted whole,
    each token ending at ``chain_states[its length]`` — tested at every node, in O(1), where a
    general chain is tried on big subtrees only (every position of a fixed-length string is a new
    state whose row reads most of the vocabulary). ``chain_kills``: no label of the set is live
    from the chain's last state (a fixed-length string's end), so a deeper subtree of the set is
    emitted too, its tokens past ``chain_len`` left out, without visiting its nodes.
    Returns (pairs written in all, pending pairs, deferred nodes, cut nodes in all)."""
    n_pend = 0
    n_def = 0
    states = np.empty(max_depth + 2, np.int64)
    flags = np.zeros(max_depth + 2, np.bool_)
    chain = np.empty(max_depth + 2, np.int64)
    for i in range(len(start_states)):
        root = start_nodes[i]
        states[depth[root]] = start_states[i]
        if cut_state >= 0:
            flags[depth[root]] = start_flags[i]
        j = root + 1
        end = root + size[root]
        while j < end:
            sp = states[depth[j] - 1]
            if (
                chain_len > 0
                and sp == chain_states[depth[j] - 1]
                and (chain_kills or depth[j] - 1 + height[j] <= chain_len)
                and (sub_bytes[j, 0] & ~chain_m0) == 0
                and (sub_bytes[j, 1] & ~chain_m1) == 0
                and sub_bytes[j, 2] == 0
                and sub_bytes[j, 3] == 0
            ):
                for t in range(tok_start[j], tok_start[j + size[j]]):
                    if tok_len[t] <= chain_len:
                        out_tok[n_out] = tok_ids[t]
                        out_end[n_out] = chain_states[tok_len[t]]
                        n_out += 1
                j += size[j]
                continue
            c = byte_class[label[j]]
            s2 = table[rows[sp], c]
            f = False
            if cut_state >= 0:
                f = flags[depth[j] - 1] and loop_class[c]
                if f and s2 == cut_state:
                    cut_node[n_cut] = j
                    n_cut += 1
                    j += size[j]
                    continue
            if galt[sp] >= 0 and table[rows[galt[sp]], c] != s2:
                def_state[n_def] = sp
                def_node[n_def] = j
                def_kind[n_def] = 0
                n_def += 1
                j += size[j]
                continue
            if s2 < 0:
                j += size[j]
                continue
            # a chain can only pass when this node's own byte takes the uniform step (or starts a
            # multi-byte character of a subtree of whole characters): the rest skip the check
            if size[j] > CHAIN_MIN_NODES and (
                not known[sp] or s2 == steps[sp] or (whole[j] and label[j] >= 0x80)
            ):
                by_chars = whole[j]
                h = char_height[j] if by_chars else height[j]
                # the chain's first step (`_uniform_chain`'s first round) checked before the call:
                # a pattern inside a string fails it at nearly every subtree; the call per failure
                # cost ~10 % of such a row even past CHAIN_MIN_NODES (40.6 -> 36.6 ms, 39 UUID rows)
                off = (sub_bytes[j, 0] & ~masks[sp, 0]) | (sub_bytes[j, 1] & ~masks[sp, 1])
                if not by_chars:
                    off |= (sub_bytes[j, 2] & ~masks[sp, 2]) | (sub_bytes[j, 3] & ~masks[sp, 3])
                if (
                    (not known[sp] or off == 0)
                    and _uniform_chain(
                        table,
                        rows,
                        byte_class,
                        n_labels,
                        sp,
                        sub_bytes[j],
                        h,
                        by_chars,
                        chain,
                        steps,
                        masks,
                        known,
                        chars,
                        expanded,
                    )
                    and not _ends_guarded(chain, h, gdead)
                ):
                    if by_chars:
                        base = before[j]
                        for t in range(tok_start[j], tok_start[j + size[j]]):
                            out_tok[n_out] = tok_ids[t]
                            out_end[n_out] = chain[tok_chars[t] - base]
                            n_out += 1
                    else:
                        base = depth[j] - 1
                        for t in range(tok_start[j], tok_start[j + size[j]]):
                            out_tok[n_out] = tok_ids[t]
                            out_end[n_out] = chain[tok_len[t] - base]
                            n_out += 1
                    j += size[j]
                    continue
            k = tok_count[j]
            if k and gdead[s2]:
                def_state[n_def] = s2
                def_node[n_def] = j
                def_kind[n_def] = 1
                n_def += 1
            elif k:
                a = tok_start[j]
                for t in range(k):
                    out_tok[n_out] = tok_ids[a + t]
                    out_end[n_out] = s2
                    n_out += 1
            if size[j] > 1 and not expanded[s2]:
                pend_state[n_pend] = s2
                pend_node[n_pend] = j
                pend_flag[n_pend] = f
                n_pend += 1
                j += size[j]
                continue
            states[depth[j]] = s2
            flags[depth[j]] = f
            j += 1
    return n_out, n_pend, n_def, n_cut


@numba.njit(cache=True, nogil=True)
def _ends_guarded(chain, h, gdead):  # pragma: no cover - compiled
    """Whether a token along ``chain[1..h]`` could end in a state `_walk` must defer (`gdead`)."""
    for r in range(1, h + 1):  # noqa: SIM110  (numba compiles no generator expression)
        if gdead[chain[r]]:
            return True
    return False
