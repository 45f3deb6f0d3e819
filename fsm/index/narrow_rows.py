"""Narrow rows in one lean compiled walk: most rows a new schema's request makes.

Most rows of a JSON request are narrow: a key's letters, the ``":`` after it, a number's digits,
the ``,"`` or ``}`` after a value — a few to a few hundred tokens, on a few paths of the trie. The
general walk (`trie_kernel.walk_row`) finds them too, but around a few µs of node work it pays
~50 µs of set-up on each: a literal tried first, a chain looked for and expanded ahead, a walk
dispatched with 46 arguments (chains, guards, cuts, steps: what wide rows need), sibling and
shape checks. `narrow_row` walks with nothing but the table and the trie, and gives up — leaving
the row to those paths — as soon as the row turns out not to be narrow: more than `MAX_TOKENS`
tokens, more than `MAX_PENDING` unexpanded states met in one round, or more than `MAX_NODES`
trie nodes visited. So it never expands what a wide row's own path would not: a round expands
only the few states a narrow walk met.

An index makes its narrow rows through a `NarrowWalk` of its own: its buffers made once, each round
one compiled call that also, on the last round, adds the EOS pairs and sorts the pairs by token —
a row's pairs come out ready to keep, where a walk, then a sort, then the arrays' allocations and
copies around them cost ~8 µs of a ~20 µs row on their own.

A lazily determinized DFA's unexpanded states stop the walk where they are met; the walk resumes
below them once the caller has expanded them (`trie_kernel`'s rounds, in miniature).

>>> import fsm
>>> from fsm.index.kernels import kernels
>>> v = fsm.Vocabulary([b"a", b"ab", b"abc", b"b", b"c", b"cd", None], eos_token_ids=[6])
>>> d = fsm.compile(fsm.Regex("abcd|x"), v).dfa
>>> tok, end = narrow_row(d, d.initial, kernels().vocabulary_preorder(v), None, None)
>>> sorted(tok.tolist())  # "a", "ab", "abc"
[0, 1, 2]
"""

from __future__ import annotations

import numba
import numpy as np

from ..automata import ByteDFA
from ..limits import Deadline
from .contract import OnDemand
from .preorder import PreorderTrie
from .row_sort import sort_pairs
from .walk_arrays import walk_view

MAX_TOKENS = 256  # a row past this many tokens is no narrow row: its own path makes it
MAX_PENDING = 32  # unexpanded states met in one round (a string's first state meets ~100)
MAX_NODES = 4096  # trie nodes visited in all rounds (a narrow row: tens to hundreds)
_GAVE_UP = -1


@numba.njit(cache=True, nogil=True)
def narrow_walk(
    table,
    rows,
    byte_class,
    expanded,
    label,
    depth,
    size,
    tok_start,
    tok_count,
    tok_ids,
    max_depth,
    start_states,
    start_nodes,
    n_starts,
    out_tok,
    out_end,
    n_out,
    pend_state,
    pend_node,
    visited,
    max_nodes,
):  # pragma: no cover - compiled
    """Walk the subtrees below ``start_nodes[:n_starts]`` from ``start_states`` (the tokens at a
    start node itself emitted already), appending (token, end) pairs from ``n_out`` on; a pair at
    an unexpanded state with children goes to ``pend_*``. Returns (pairs in all, pending pairs,
    nodes visited in all) — pairs `_GAVE_UP` when any buffer or ``max_nodes`` is exceeded."""
    states = np.empty(max_depth + 2, np.int64)
    n_pend = 0
    for i in range(n_starts):
        root = start_nodes[i]
        states[depth[root]] = start_states[i]
        j = root + 1
        end = root + size[root]
        while j < end:
            visited += 1
            if visited > max_nodes:
                return _GAVE_UP, 0, visited
            s2 = table[rows[states[depth[j] - 1]], byte_class[label[j]]]
            if s2 < 0:
                j += size[j]
                continue
            k = tok_count[j]
            if k:
                if n_out + k > len(out_tok):
                    return _GAVE_UP, 0, visited
                a = tok_start[j]
                for t in range(k):
                    out_tok[n_out + t] = tok_ids[a + t]
                    out_end[n_out + t] = s2
                n_out += k
            if size[j] > 1:
                if not expanded[s2]:
                    if n_pend == len(pend_state):
                        return _GAVE_UP, 0, visited
                    pend_state[n_pend] = s2
                    pend_node[n_pend] = j
                    n_pend += 1
                    j += size[j]
                    continue
                states[depth[j]] = s2
            j += 1
    return n_out, n_pend, visited


@numba.njit(cache=True, nogil=True)
def narrow_round(
    table,
    rows,
    byte_class,
    expanded,
    label,
    depth,
    size,
    tok_start,
    tok_count,
    tok_ids,
    max_depth,
    starts,
    n_starts,
    out,
    n_out,
    visited,
    eos,
    finished,
):  # pragma: no cover - compiled
    """One round of `NarrowWalk.row`: `narrow_walk` from ``starts[0:2, :n_starts]`` (states, trie
    nodes), its pending pairs moved there for the next round (``starts[2:4]`` its scratch), its
    pairs appended to ``out[0:2]`` (tokens, ends). The last round (none pending) appends ``eos``
    ending in ``finished`` and sorts the pairs by token. Returns (pairs, pending, visited)."""
    n_out, n_pend, visited = narrow_walk(
        table,
        rows,
        byte_class,
        expanded,
        label,
        depth,
        size,
        tok_start,
        tok_count,
        tok_ids,
        max_depth,
        starts[0],
        starts[1],
        n_starts,
        out[0, :MAX_TOKENS],
        out[1, :MAX_TOKENS],
        n_out,
        starts[2],
        starts[3],
        visited,
        MAX_NODES,
    )
    if n_out == _GAVE_UP:
        return n_out, 0, visited
    if n_pend:
        starts[0, :n_pend] = starts[2, :n_pend]
        starts[1, :n_pend] = starts[3, :n_pend]
        return n_out, n_pend, visited
    for e in eos:
        out[0, n_out] = e
        out[1, n_out] = finished
        n_out += 1
    sort_pairs(out[0], out[1], n_out)
    return n_out, 0, visited


class NarrowWalk:
    """Narrow rows over one vocabulary's trie, ready to keep (see the module); one per index, whose
    lock its rows are made under (the buffers are reused).

    >>> import fsm
    >>> from fsm.automata import LazyByteDFA, alt, lit, node_nfa
    >>> from fsm.index.kernels import kernels
    >>> v = fsm.Vocabulary([b"a", b"ab", b"abc", b"b", b"c", b"cd", None], eos_token_ids=[6])
    >>> lazy = LazyByteDFA(*node_nfa(alt(lit("abcd"), lit("x"))))
    >>> walk = NarrowWalk(kernels().vocabulary_preorder(v), n_eos=1)
    >>> tok, end, has_text = walk.row(lazy.as_byte_dfa(), lazy.initial, lazy, None, None)
    >>> tok.tolist(), has_text
    ([0, 1, 2], True)
    """

    def __init__(self, trie: PreorderTrie, n_eos: int):
        self.trie = trie
        self._starts = np.empty((4, MAX_PENDING), np.int64)
        self._out = np.empty((2, MAX_TOKENS + n_eos), np.int32)
        self._no_eos = np.empty(0, np.int32)

    def row(
        self,
        dfa: ByteDFA,
        state: int,
        lazy,
        deadline: Deadline | None,
        eos: tuple[np.ndarray, int] | None,
    ) -> tuple[np.ndarray, np.ndarray, bool] | None:
        """(tokens sorted, their ends, whether any token is text) of ``state``'s row when it is
        narrow, else None (given up). ``lazy``: the automaton as it expands on demand (`dfa` its
        view), the states a round meets expanded within ``deadline`` before the next; ``eos``: (EOS
        ids, the end they lead to) when ``state`` accepts."""
        starts, out, trie = self._starts, self._out, self.trie
        eos_ids, finished = eos if eos is not None else (self._no_eos, 0)
        if not lazy.expanded_flags[state]:
            with lazy.within(deadline):
                lazy.ensure(state)
        starts[0, 0] = state
        starts[1, 0] = 0
        n_starts = 1
        n_out = visited = 0
        while True:
            tbl, rows, bc, _, flags = walk_view(dfa, lazy, False)
            n_out, n_starts, visited = narrow_round(
                tbl, rows, bc, flags, trie.label, trie.depth, trie.size, trie.tok_start,
                trie.tok_count, trie.tok_ids, trie.max_depth, starts, n_starts, out, n_out,
                visited, eos_ids, finished,
            )  # fmt: skip
            if n_out == _GAVE_UP:
                return None
            if not n_starts:
                return out[0, :n_out].copy(), out[1, :n_out].copy(), n_out > len(eos_ids)
            if deadline is not None:
                deadline.check("the token walk of a row")
            with lazy.within(deadline):
                lazy.ensure(starts[0, :n_starts])  # ensure drops repeats


def narrow_row(
    dfa: ByteDFA,
    state: int,
    trie: PreorderTrie,
    on_demand: OnDemand | None,
    deadline: Deadline | None,
) -> tuple[np.ndarray, np.ndarray] | None:
    """(tokens, end states) of ``state`` — `trie_kernel.walk_row`'s pairs, unsorted — when its row
    is narrow, else None (given up: see the module). ``on_demand``: the automaton when it expands
    on first read (``dfa`` its view); the states a round meets are expanded before the next."""
    return narrow_below(dfa, (np.array([state], np.int64), np.zeros(1, np.int64)), trie, on_demand, deadline)


def narrow_below(
    dfa: ByteDFA,
    starts: tuple[np.ndarray, np.ndarray],
    trie: PreorderTrie,
    on_demand: OnDemand | None,
    deadline: Deadline | None,
) -> tuple[np.ndarray, np.ndarray] | None:
    """`trie_kernel.walk_below`'s pairs (below trie nodes ``starts[1]`` from states ``starts[0]``,
    the tokens at those nodes left to the caller) when they are few, else None (given up)."""
    starts_s = np.ascontiguousarray(starts[0], np.int64)
    starts_n = np.ascontiguousarray(starts[1], np.int64)
    if on_demand is not None and len(starts_s):
        on_demand.ensure(int(starts_s[0]) if len(starts_s) == 1 else starts_s)
    out_tok = np.empty(MAX_TOKENS, np.int32)
    out_end = np.empty(MAX_TOKENS, np.int32)
    pend_s = np.empty(MAX_PENDING, np.int64)
    pend_n = np.empty(MAX_PENDING, np.int64)
    n_out = visited = 0
    while True:
        tbl, rows, bc, _, flags = walk_view(dfa, on_demand, False)
        n_out, n_pend, visited = narrow_walk(
            tbl,
            rows,
            bc,
            flags,
            trie.label,
            trie.depth,
            trie.size,
            trie.tok_start,
            trie.tok_count,
            trie.tok_ids,
            trie.max_depth,
            starts_s,
            starts_n,
            len(starts_s),
            out_tok,
            out_end,
            n_out,
            pend_s,
            pend_n,
            visited,
            MAX_NODES,
        )
        if n_out == _GAVE_UP:
            return None
        if not n_pend:
            return out_tok[:n_out].copy(), out_end[:n_out].copy()
        assert on_demand is not None  # pending pairs only arise at unexpanded states
        if deadline is not None:
            deadline.check("the token walk of a row")
        starts_s, starts_n = pend_s[:n_pend].copy(), pend_n[:n_pend].copy()
        on_demand.ensure(starts_s)  # ensure drops repeats
