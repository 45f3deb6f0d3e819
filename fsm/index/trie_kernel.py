"""The trie walk of a row as one compiled loop (numba), resumable where a lazy DFA must expand.

A row is every token whose bytes stay live from a state, with the state each one ends in: a walk of
the vocabulary's byte trie, pruned where the automaton dies. In numpy (`token_walk.walk_tokens`)
that walk pays ~25 array calls per trie depth whatever its width — 0.3 ms for a key state that
allows one byte, 5-15 ms for a string state that allows nearly all 100k+ trie nodes — and the
depth-first walk in plain Python (which it replaces) only suited rows of a few paths. Compiled, the same
depth-first walk costs a few ns per trie node visited: µs for narrow rows, well under a millisecond
for the widest on a 49k vocabulary, and it releases the GIL (``nogil``), so rows of a batch can be
walked on several threads.

A lazily determinized DFA (`fsm.automata.LazyByteDFA`) knows a state's transitions only once it
is expanded, which is Python work. The kernel therefore stops at every (state, trie node) pair
whose state is not expanded yet, hands those pairs back, and resumes from them once the caller has
expanded their states (`walk_row`): as many rounds as the deepest new state, each expanding all the
states that round met together. The compiled code is cached on disk by numba (``cache=True``), so
a new process loads it instead of compiling it (`warm_kernel` does that ahead of the first row).

>>> from fsm.vocabulary import Vocabulary
>>> from fsm.regex import regex_to_dfa
>>> v = Vocabulary([b"a", b"ab", b"b", None], eos_token_ids=[3])
>>> tok, end = walk_row(regex_to_dfa("ab"), 0, preorder(v.trie))
>>> sorted(tok.tolist())
[0, 1]
"""

from __future__ import annotations

import dataclasses
import threading

import numpy as np

from ..automata import ByteDFA, LazyByteDFA, cls, node_nfa, rep
from ..limits import Deadline
from ..vocabulary import TokenTrie, Vocabulary
from .contract import OnDemand
from .narrow_rows import NarrowWalk, narrow_row
from .preorder import PreorderTrie, preorder
from .row_sort import dense_packed, dense_pairs, merge_renamed, replaced_dense, small_sorted_row
from .steps import Steps, _chain_to_expand, label_chain
from .walk_arrays import guard_arrays_of, step_arrays, walk_view
from .walk_kernel import walk_subtrees

# Past this share of trie nodes inside multi-byte characters, a walk expands the states inside
# the characters of a whole chain up front (Gemma's 262k vocabulary: 49 %; SmolLM2's: 1 %).
MULTIBYTE_SHARE = 0.1
UNKNOWN = object()  # `walk_row`'s chain: not found by the caller


def walk_row(
    dfa: ByteDFA,
    state: int,
    trie: PreorderTrie,
    labels_are_classes: bool = False,
    on_demand: OnDemand | None = None,
    deadline: Deadline | None = None,
    steps: Steps | None = None,
    chain_chars: bool | None = None,
    deferred: list | None = None,
    chain: object = UNKNOWN,
) -> tuple[np.ndarray, np.ndarray]:
    """(tokens, end states) of ``state``: every token whose bytes stay live from it, unsorted.

    ``on_demand``: the automaton when it makes its rows on first read (then ``dfa`` is its view);
    the states the walk meets are expanded between rounds, ``deadline`` checked. ``steps``: the
    states' uniform steps found so far (kept by the caller across rows of one automaton).
    ``chain_chars``: expand the states inside the characters of every chain state up front (None:
    when the vocabulary has over `MULTIBYTE_SHARE` of its nodes inside multi-byte characters).
    ``deferred``: where the nodes a guarded state defers go, as (states, nodes, kinds) arrays (see
    `_walk`; None: left out, a subset of the row). ``chain``: `label_chain_of` of ``state``, when the
    caller found it after `expand_chain` (default: found here).

    >>> from fsm.vocabulary import Vocabulary
    >>> from fsm.regex import regex_to_dfa
    >>> v = Vocabulary([b"a", b"b", b"ab", None], eos_token_ids=[3])
    >>> walk_row(regex_to_dfa("a|ab"), 0, preorder(v.trie))[0].tolist()
    [0, 2]
    """
    steps = steps or Steps()
    if chain is UNKNOWN:  # (else the caller expanded the chain and found it)
        expand_chain(dfa, state, trie, labels_are_classes, on_demand, steps, chain_chars)
        chain = label_chain_of(dfa, int(state), trie, labels_are_classes, on_demand, steps)
    starts = (np.array([state], dtype=np.int64), np.zeros(1, dtype=np.int64))
    # `walk_below` less its expansion of the start, made above
    with _scratch(len(trie.tok_ids), trie.n_nodes) as bufs:
        tok, end, _ = _rounds(
            dfa,
            trie,
            labels_are_classes,
            starts,
            steps,
            on_demand,
            deadline,
            bufs,
            deferred,
            chain=chain,
        )
    return tok, end


def expand_chain(
    dfa, state: int, trie: PreorderTrie, labels_are_classes: bool, on_demand, steps: Steps, chain_chars
) -> None:
    """Expand ``state`` and, from it, a string's chain of counter states at once (not a walk's round
    each); ``chain_chars``: the states inside their characters too (None: when the vocabulary has
    over `MULTIBYTE_SHARE` of its nodes inside multi-byte characters)."""
    if on_demand is not None:
        on_demand.ensure(int(state))
    if on_demand is not None:  # a string's chain of counter states: expanded now, not a round each
        tbl, rows, bc, n_labels, flags = walk_view(dfa, on_demand, labels_are_classes)
        if chain_chars is None:
            chain_chars = trie.multibyte_share > MULTIBYTE_SHARE
        utf8 = 0 if labels_are_classes else 2 if chain_chars else 1
        at, done, node, depth = int(state), 0, 0, trie.max_depth
        while True:
            st, masks, known, chars = step_arrays(steps, flags, on_demand)
            q, at, done, node, depth = _chain_to_expand(
                tbl,
                rows,
                bc,
                n_labels,
                state,
                at,
                done,
                node,
                st,
                masks,
                known,
                chars,
                utf8,
                flags,
                depth,
                trie.label,
                trie.size,
                trie.height,
            )
            if q < 0:
                break
            on_demand.ensure(int(q))  # an int: no array round trip per step of a long chain
            tbl, rows, _, _, flags = walk_view(dfa, on_demand, labels_are_classes)


def label_chain_of(dfa, state: int, trie, labels_are_classes: bool, on_demand, steps: Steps):
    """`steps.label_chain` from ``state`` as `walk_subtrees` reads it: (the chain's states, the
    class's bit sets over bytes 0-63 and 64-127, its length r, whether its end reads none of the
    class), or None (shorter than 2; or a guarded automaton: its checks decide what a chain skips)."""
    if getattr(on_demand, "has_guards", False):
        return None
    tbl, rows, bc, n_labels, flags = walk_view(dfa, on_demand, labels_are_classes)
    st, masks, known, _ = step_arrays(steps, flags, on_demand)
    out = np.empty(trie.max_depth + 2, np.int64)
    r = label_chain(tbl, rows, bc, n_labels, state, st, masks, known, flags, out)
    if r < 2:
        return None
    m0, m1 = masks[state, 0], masks[state, 1]
    # whether the chain's end reads none of its labels (a fixed-length string's end: only a quote)
    if on_demand is not None:
        on_demand.ensure(int(out[r]))
        tbl, rows, bc, n_labels, flags = walk_view(dfa, on_demand, labels_are_classes)
    labels = np.flatnonzero(np.unpackbits(np.array([m0, m1], "<u8").view(np.uint8), bitorder="little"))
    kills = bool((tbl[rows[out[r]], bc[labels]] < 0).all())
    return out, m0, m1, r, kills


def walk_below(
    dfa: ByteDFA,
    starts: tuple[np.ndarray, np.ndarray],
    trie: PreorderTrie,
    labels_are_classes: bool = False,
    on_demand: OnDemand | None = None,
    deadline: Deadline | None = None,
    steps: Steps | None = None,
    deferred: list | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """`walk_row` of the subtrees below trie nodes ``starts[1]`` from states ``starts[0]`` (the
    tokens at those nodes themselves left to the caller): what a deferred node resumes with.

    >>> from fsm.vocabulary import Vocabulary
    >>> from fsm.regex import regex_to_dfa
    >>> v = Vocabulary([b"a", b"ab", None], eos_token_ids=[2])
    >>> t = preorder(v.trie); a = int(np.flatnonzero(t.depth == 1)[0])
    >>> walk_below(regex_to_dfa("ab"), (np.array([1]), np.array([a])), t)[0].tolist()
    [1]
    """
    tok, end, _ = _below(dfa, starts, trie, labels_are_classes, on_demand, deadline, steps, deferred, None)
    return tok, end


def walk_below_to(
    dfa: ByteDFA,
    starts: tuple[np.ndarray, np.ndarray],
    trie: PreorderTrie,
    anchor: int,
    on_demand: OnDemand | None = None,
    deadline: Deadline | None = None,
    steps: Steps | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`walk_below` over the byte trie that stops where it meets ``anchor`` along bytes that all
    take ``anchor`` to itself (from the root: a start node's own byte counts): (tokens, ends, the
    nodes it stopped at). Below such a node every token ends where it does from ``anchor`` at the
    root (the path reads back into it), so a row made from ``anchor``'s keeps those tokens'
    ends unwalked (`fsm.index.sibling_rows`: a key's first letter returns to the free key's loop
    after a byte or two, and its subtree is thousands of tokens). ``anchor`` must be expanded.

    >>> from fsm.vocabulary import Vocabulary
    >>> from fsm.regex import regex_to_dfa
    >>> v = Vocabulary([b"x", b"xa", b"xab", b"xb", None], eos_token_ids=[4])
    >>> d, t = regex_to_dfa("[a-z]*|xb1"), preorder(v.trie)
    >>> loop = d.step(d.initial, ord("q")); x = int(np.flatnonzero(t.depth == 1)[0])
    >>> tok, end, cut = walk_below_to(d, (np.array([d.step(d.initial, ord("x"))]), np.array([x])), t, loop)
    >>> sorted(tok.tolist()), [bytes(t.label[c : c + 1]) for c in cut.tolist()]
    ([3], [b'a'])
    """
    return _below(dfa, starts, trie, False, on_demand, deadline, steps, None, anchor)


def _below(dfa, starts, trie, labels_are_classes, on_demand, deadline, steps, deferred, anchor):
    steps = steps or Steps()
    if on_demand is not None and len(starts[0]):
        on_demand.ensure(starts[0])  # the kernel reads its start states' rows: made first
    with _scratch(len(trie.tok_ids), trie.n_nodes) as bufs:
        return _rounds(
            dfa, trie, labels_are_classes, starts, steps, on_demand, deadline, bufs, deferred, anchor
        )


def _rounds(
    dfa, trie, labels_are_classes, starts, steps, on_demand, deadline, bufs, deferred, anchor=None, chain=None
):
    """`walk_subtrees` from ``starts``, then from the pairs it left pending once their states are expanded,
    until none is left; the (token, end state) pairs and the nodes cut at ``anchor`` (None or
    negative: no cut, `walk_below_to`), copied out of the scratch buffers."""
    out_tok, out_end, pend_s, pend_n, def_s, def_n, def_k, pend_f, cut_n = bufs
    whole = trie.whole if not labels_are_classes else np.zeros(trie.n_nodes, np.bool_)
    starts_s, starts_n = starts
    n_out = n_cut = 0
    tbl, rows, bc, n_labels, flags = walk_view(dfa, on_demand, labels_are_classes)
    chain = chain or _NO_CHAIN
    if anchor is None or anchor < 0:  # (a sibling row with no anchor named: -1)
        cut_state, loops, starts_f = -1, _NO_LOOPS, _NO_LOOPS
    else:  # the classes that take the anchor to itself; whether each start's own byte is one
        cut_state = int(anchor)
        loops = tbl[rows[cut_state]] == cut_state
        starts_f = loops[bc[trie.label[starts_n]]]
    while True:
        galt, gdead = guard_arrays_of(on_demand, flags)
        st, masks, known, chars = step_arrays(steps, flags, on_demand)
        n_out, n_pend, n_def, n_cut = walk_subtrees(
            tbl,
            rows,
            flags,
            bc,
            n_labels,
            trie.label,
            trie.depth,
            trie.size,
            trie.tok_start,
            trie.tok_count,
            trie.tok_ids,
            trie.sub_bytes,
            trie.height,
            whole,
            trie.before,
            trie.char_height,
            trie.tok_chars,
            trie.tok_len,
            trie.max_depth,
            st,
            masks,
            known,
            chars,
            starts_s,
            starts_n,
            out_tok,
            out_end,
            n_out,
            pend_s,
            pend_n,
            galt,
            gdead,
            def_s,
            def_n,
            def_k,
            cut_state,
            loops,
            starts_f,
            pend_f,
            cut_n,
            n_cut,
            chain[0],
            chain[1],
            chain[2],
            chain[3],
            chain[4],
        )
        if n_def and deferred is not None:
            deferred.append((def_s[:n_def].copy(), def_n[:n_def].copy(), def_k[:n_def].copy()))
        if not n_pend:
            break
        assert on_demand is not None  # pending pairs only arise at unexpanded states
        starts_s, starts_n = pend_s[:n_pend].copy(), pend_n[:n_pend].copy()
        starts_f = pend_f[:n_pend].copy()
        if deadline is not None:
            deadline.check("the token walk of a row")
        on_demand.ensure(starts_s)  # ensure drops repeats
        tbl, rows, _, _, flags = walk_view(dfa, on_demand, labels_are_classes)
        chars[chars == 3] = 0  # states whose characters waited on an expansion: try again
    return out_tok[:n_out].copy(), out_end[:n_out].copy(), cut_n[:n_cut].copy()


_NO_LOOPS = np.zeros(1, np.bool_)  # no anchor to cut at: never read
_NO_CHAIN = (np.full(1, -1, np.int64), np.uint64(0), np.uint64(0), 0, False)  # `label_chain`'s, none
_local = threading.local()


class _scratch:  # a function to its callers: ``with _scratch(...) as bufs``
    """This thread's output, pending and deferred buffers for a walk, reused across rows:
    allocating them per row (2 x 196 KB and 4 x 800 KB on a 49k vocabulary: ~20 µs) cost more than
    a narrow row's walk. A walk already using them on this thread (none today) gets fresh ones.
    A class, not a `contextlib` generator: ~3 µs less a row."""

    __slots__ = ("bufs", "owner")

    def __init__(self, n_tok: int, n_nodes: int):
        bufs = getattr(_local, "bufs", None)
        busy = getattr(_local, "busy", False)
        self.owner = not busy
        if busy or bufs is None or len(bufs[0]) < n_tok or len(bufs[2]) < n_nodes:
            bufs = (
                np.empty(n_tok, np.int32),
                np.empty(n_tok, np.int32),
                np.empty(n_nodes, np.int64),
                np.empty(n_nodes, np.int64),
                np.empty(n_nodes, np.int64),
                np.empty(n_nodes, np.int64),
                np.empty(n_nodes, np.int8),
                np.empty(n_nodes, np.bool_),
                np.empty(n_nodes, np.int64),
            )
            if not busy:
                _local.bufs = bufs
        self.bufs = bufs

    def __enter__(self) -> tuple[np.ndarray, ...]:
        if self.owner:
            _local.busy = True
        return self.bufs

    def __exit__(self, *exc: object) -> None:
        if self.owner:
            _local.busy = False


def warm_kernel() -> None:
    """Compile (or load from numba's disk cache) every kernel of a row, once per process: the
    compile (seconds, once per install) or the load (~0.1 s) is never a row's time — a row's
    deadline starts after it (`ensure_compiled`).

    >>> warm_kernel()
    """
    v = Vocabulary([b"a", b"ab", "é".encode(), None], eos_token_ids=[3])
    table = np.array([[1, -1], [-1, 2], [-1, -1]], dtype=np.int32)  # "ab?"
    byte_class = np.ones(256, dtype=np.int32)
    byte_class[ord("a")] = 0
    dfa = ByteDFA(table, byte_class, 0, np.array([False, True, True]))
    for labels_are_classes in (False, True):  # the byte trie's labels are uint8, a class trie's int32
        trie = v.trie if not labels_are_classes else _class_labels(v.trie, byte_class)
        tok, end = walk_row(dfa, 0, preorder(trie), labels_are_classes=labels_are_classes)
    lazy = LazyByteDFA(*node_nfa(rep(cls((0x61, 0x61), (0xE9, 0xE9)), 0, 3)))  # an on-demand DFA
    walk_row(lazy.as_byte_dfa(), lazy.initial, preorder(v.trie), on_demand=lazy)
    narrow_row(lazy.as_byte_dfa(), lazy.initial, preorder(v.trie), lazy, None)
    NarrowWalk(preorder(v.trie), 1).row(lazy.as_byte_dfa(), lazy.initial, lazy, None, (tok[:1], -2))
    small_sorted_row(tok, end)
    merge_renamed(tok, np.zeros(len(tok), np.int16), end[:1], tok[:0], end[:0])  # a shape's ends
    dense = np.full(v.size, -3, np.int32)  # a sibling row (`fsm.index.sibling_rows`)
    full = replaced_dense(dense, np.zeros(1, np.int64), np.ones(1, np.int64), tok, tok[:1], end[:1], -3)
    dense_pairs(full, -3)
    dense_packed(full, -3, np.zeros((v.size + 31) // 32, np.uint32))


_compiled = threading.Event()
_compiling = threading.Lock()


def ensure_compiled() -> None:
    """`warm_kernel` unless this process did it already (cheap then).

    >>> ensure_compiled()
    """
    if not _compiled.is_set():
        with _compiling:
            if not _compiled.is_set():
                warm_kernel()
                _compiled.set()


def _class_labels(trie: TokenTrie, byte_class: np.ndarray) -> TokenTrie:
    """``trie`` with its labels mapped through ``byte_class`` (int32, as a class trie's are)."""
    return dataclasses.replace(trie, node_byte=byte_class[trie.node_byte].astype(np.int32))
