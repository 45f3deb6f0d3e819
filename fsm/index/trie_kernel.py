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

import numba
import numpy as np

from ..automata import ByteDFA, LazyByteDFA, cls, node_nfa, rep
from ..limits import Deadline
from ..vocabulary import TokenTrie, Vocabulary
from .contract import OnDemand
from .preorder import PreorderTrie, preorder
from .row_sort import merge_renamed, replaced_row, small_sorted_row
from .steps import Steps, _chain_to_expand, _uniform_chain
from .walk_arrays import guard_arrays_of, step_arrays, walk_view

# Past this share of trie nodes inside multi-byte characters, a walk expands the states inside
# the characters of a whole chain up front (Gemma's 262k vocabulary: 49 %; SmolLM2's: 1 %).
MULTIBYTE_SHARE = 0.1
# Subtrees of at most this many nodes are walked, not tried as chains: a chain tried (passed or
# not) costs ~150 ns, visiting a node ~10. Trying every subtree of 3 nodes or more made a row of a
# pattern inside a string (a UUID), where nearly every try fails, 5-9 ms instead of 1 ms.
CHAIN_MIN_NODES = 32


@numba.njit(cache=True, nogil=True)
def _walk(
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
    a trie of class labels), else in bytes. Returns (pairs written in all, pending pairs,
    deferred nodes)."""
    n_pend = 0
    n_def = 0
    states = np.empty(max_depth + 2, np.int64)
    chain = np.empty(max_depth + 2, np.int64)
    for i in range(len(start_states)):
        root = start_nodes[i]
        states[depth[root]] = start_states[i]
        j = root + 1
        end = root + size[root]
        while j < end:
            sp = states[depth[j] - 1]
            c = byte_class[label[j]]
            s2 = table[rows[sp], c]
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
                n_pend += 1
                j += size[j]
                continue
            states[depth[j]] = s2
            j += 1
    return n_out, n_pend, n_def


@numba.njit(cache=True, nogil=True)
def _ends_guarded(chain, h, gdead):  # pragma: no cover - compiled
    """Whether a token along ``chain[1..h]`` could end in a state `_walk` must defer (`gdead`)."""
    for r in range(1, h + 1):  # noqa: SIM110  (numba compiles no generator expression)
        if gdead[chain[r]]:
            return True
    return False


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
) -> tuple[np.ndarray, np.ndarray]:
    """(tokens, end states) of ``state``: every token whose bytes stay live from it, unsorted.

    ``on_demand``: the automaton when it makes its rows on first read (then ``dfa`` is its view);
    the states the walk meets are expanded between rounds, ``deadline`` checked. ``steps``: the
    states' uniform steps found so far (kept by the caller across rows of one automaton).
    ``chain_chars``: expand the states inside the characters of every chain state up front (None:
    when the vocabulary has over `MULTIBYTE_SHARE` of its nodes inside multi-byte characters).
    ``deferred``: where the nodes a guarded state defers go, as (states, nodes, kinds) arrays (see
    `_walk`; None: left out, a subset of the row).

    >>> from fsm.vocabulary import Vocabulary
    >>> from fsm.regex import regex_to_dfa
    >>> v = Vocabulary([b"a", b"b", b"ab", None], eos_token_ids=[3])
    >>> walk_row(regex_to_dfa("a|ab"), 0, preorder(v.trie))[0].tolist()
    [0, 2]
    """
    steps = steps or Steps()
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
    starts = (np.array([state], dtype=np.int64), np.zeros(1, dtype=np.int64))
    # `walk_below` less its expansion of the start, made above
    with _scratch(len(trie.tok_ids), trie.n_nodes) as bufs:
        return _rounds(dfa, trie, labels_are_classes, starts, steps, on_demand, deadline, bufs, deferred)


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
    steps = steps or Steps()
    if on_demand is not None and len(starts[0]):
        on_demand.ensure(starts[0])  # the kernel reads its start states' rows: made first
    with _scratch(len(trie.tok_ids), trie.n_nodes) as bufs:
        return _rounds(dfa, trie, labels_are_classes, starts, steps, on_demand, deadline, bufs, deferred)


def _rounds(dfa, trie, labels_are_classes, starts, steps, on_demand, deadline, bufs, deferred):
    """`_walk` from ``starts``, then from the pairs it left pending once their states are expanded,
    until none is left; the (token, end state) pairs, copied out of the scratch buffers."""
    out_tok, out_end, pend_s, pend_n, def_s, def_n, def_k = bufs
    whole = trie.whole if not labels_are_classes else np.zeros(trie.n_nodes, np.bool_)
    starts_s, starts_n = starts
    n_out = 0
    tbl, rows, bc, n_labels, flags = walk_view(dfa, on_demand, labels_are_classes)
    while True:
        galt, gdead = guard_arrays_of(on_demand, flags)
        st, masks, known, chars = step_arrays(steps, flags, on_demand)
        n_out, n_pend, n_def = _walk(
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
        )
        if n_def and deferred is not None:
            deferred.append((def_s[:n_def].copy(), def_n[:n_def].copy(), def_k[:n_def].copy()))
        if not n_pend:
            break
        assert on_demand is not None  # pending pairs only arise at unexpanded states
        starts_s, starts_n = pend_s[:n_pend].copy(), pend_n[:n_pend].copy()
        if deadline is not None:
            deadline.check("the token walk of a row")
        on_demand.ensure(starts_s)  # ensure drops repeats
        tbl, rows, _, _, flags = walk_view(dfa, on_demand, labels_are_classes)
        chars[chars == 3] = 0  # states whose characters waited on an expansion: try again
    return out_tok[:n_out].copy(), out_end[:n_out].copy()


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
    small_sorted_row(tok, end)
    merge_renamed(tok, np.zeros(len(tok), np.int16), end[:1], tok[:0], end[:0])  # a shape's ends
    dense = np.full(v.size, -3, np.int32)  # a sibling row (`fsm.index.sibling_rows`)
    replaced_row(dense, np.zeros(1, np.int64), np.ones(1, np.int64), tok, tok[:1], end[:1], -3)


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
