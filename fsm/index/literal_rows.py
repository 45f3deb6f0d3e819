"""Rows of states inside a literal (a key's name, ``":"``, an enum value): the trie followed along it.

A state that reads one byte to one state (and the states after it, until the literal ends) allows
only the tokens that spell a prefix of the literal's bytes — a handful, on one path of the trie.
The general row walk (`trie_kernel.walk_row`) finds them too, but a row of it costs ~14 µs of set-up
around a few nodes' work (the chain expanded ahead, the walk's views and scratch buffers, two calls
with ~35 arguments each), and on a new schema most rows are such: every key is a literal.
`literal_row` follows the literal down the trie in one compiled call, and hands the general walk
only the subtree below where the literal stops being one (``"name":`` then a value: the tokens
``":"``, ``":{"`` go on), which few literals reach within a token.

>>> import fsm
>>> from fsm.index.kernels import kernels
>>> v = fsm.Vocabulary([b"a", b"ab", b"abc", b"b", b"c", b"cd", None], eos_token_ids=[6])
>>> d = fsm.compile(fsm.Regex("abcd|x"), v).dfa
>>> trie = kernels().vocabulary_preorder(v)
>>> literal_row(d, d.initial, trie, None, None, None) is None  # "a" or "x": no literal
True
>>> tok, end = literal_row(d, d.step(d.initial, ord("a")), trie, None, None, None)
>>> tok.tolist()  # "b"; "bc" and "bcd" are no tokens
[3]
"""

from __future__ import annotations

import numba
import numpy as np

from ..automata import ByteDFA
from ..limits import Deadline
from .contract import OnDemand
from .preorder import PreorderTrie
from .steps import Steps, _child, _sole_label
from .trie_kernel import walk_below
from .walk_arrays import walk_view

_DONE = 0  # no token goes further along the literal
_EXPAND = 1  # a state along it is not expanded yet
_NOT_LITERAL = 2  # the literal ends (several bytes live): the rest is walked


@numba.njit(cache=True, nogil=True)
def _follow(
    table, rows, bc, expanded, label, size, tok_start, tok_count, tok_ids, s, max_depth
):  # pragma: no cover
    """Tokens along the literal from state ``s``: (tokens, end states, how it stopped, the state and
    trie node where it stopped; node 0: the root). A state with another number of live bytes
    than one stops it (`_NOT_LITERAL`; at the start: not a literal state at all)."""
    out_tok = np.empty(64, np.int32)
    out_end = np.empty(64, np.int32)
    n = 0
    c = s
    node = 0
    for _ in range(max_depth):
        if not expanded[c]:
            return out_tok[:n], out_end[:n], _EXPAND, c, node
        b = _sole_label(table, rows, bc, 256, c)
        if b == -2:
            return out_tok[:n], out_end[:n], _NOT_LITERAL, c, node
        if b < 0:
            return out_tok[:n], out_end[:n], _DONE, c, node
        child = _child(label, size, node, b)
        if child < 0:
            return out_tok[:n], out_end[:n], _DONE, c, node
        u = table[rows[c], bc[b]]
        k = tok_count[child]
        if n + k > len(out_tok):
            grown = max(2 * len(out_tok), n + k)
            t2 = np.empty(grown, np.int32)
            e2 = np.empty(grown, np.int32)
            t2[:n] = out_tok[:n]
            e2[:n] = out_end[:n]
            out_tok, out_end = t2, e2
        for i in range(tok_start[child], tok_start[child] + k):
            out_tok[n] = tok_ids[i]
            out_end[n] = u
            n += 1
        c = u
        node = child
    return out_tok[:n], out_end[:n], _DONE, c, node


def literal_row(
    dfa: ByteDFA,
    state: int,
    trie: PreorderTrie,
    on_demand: OnDemand | None,
    deadline: Deadline | None,
    steps: Steps | None,
) -> tuple[np.ndarray, np.ndarray] | None:
    """(tokens, end states) of ``state`` when it reads one byte only (`trie_kernel.walk_row`'s
    pairs, unsorted), else None: walk it. ``trie``: the byte trie (`preorder.PreorderTrie`)."""
    if on_demand is not None:
        on_demand.ensure(int(state))
    while True:
        tbl, rows, bc, _, flags = walk_view(dfa, on_demand, False)
        tok, end, how, at, node = _follow(
            tbl,
            rows,
            bc,
            flags,
            trie.label,
            trie.size,
            trie.tok_start,
            trie.tok_count,
            trie.tok_ids,
            int(state),
            trie.max_depth,
        )
        if how != _EXPAND:
            break
        assert on_demand is not None  # only a state made on demand is unexpanded
        on_demand.ensure(int(at))  # the literal's states: expanded a run at a time
    if how == _NOT_LITERAL and node == 0:
        return None  # not a literal state: several bytes (or none) live from it
    if how == _NOT_LITERAL and trie.size[node] > 1:
        # the literal ended inside a token's reach (``"name":`` then its value): walked from there
        below_tok, below_end = walk_below(
            dfa,
            (np.array([at], np.int64), np.array([node], np.int64)),
            trie,
            on_demand=on_demand,
            deadline=deadline,
            steps=steps,
        )
        tok = np.concatenate([tok, below_tok.astype(np.int32)])
        end = np.concatenate([end, below_end.astype(np.int32)])
    return tok, end
