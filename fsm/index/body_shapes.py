"""A vocabulary's string-body shapes, each walked over the whole trie once (`fsm.index.body_rows`).

A shape's walk visits every trie node (~1 ms on SmolLM2): the tokens that stay inside the body and
the nodes where a path leaves it. Kept on the vocabulary, it serves every row of that shape in every
schema after — where each row's own walk would emit ~49k (token, end) pairs and sort them.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

import numba
import numpy as np

from .preorder import PreorderTrie, tokens_at
from .row_sort import sorted_packed_row
from .shaped_row import BodyShape

SHAPES_KEPT = 32  # shapes per vocabulary (each ~5 bytes per token inside: 8 MB on a 49k vocabulary)
EXIT = -2  # a shape's cell: a byte that leaves the body


@numba.njit(cache=True, nogil=True)
def _shape_walk(shape, label, depth, size, tok_start, tok_count, tok_ids, max_depth):  # pragma: no cover
    """The walk of a body shape (``shape[x, byte]``: a state, -1 dead, `EXIT`) from state 0:
    (tokens, end states) inside, and (state, node) at each node where a path leaves."""
    n_nodes = len(label)
    out_tok = np.empty(len(tok_ids), np.int32)
    out_end = np.empty(len(tok_ids), np.int16)
    ex_s = np.empty(n_nodes, np.int64)
    ex_n = np.empty(n_nodes, np.int64)
    states = np.zeros(max_depth + 2, np.int64)
    n = 0
    ne = 0
    j = 1
    while j < n_nodes:
        sp = states[depth[j] - 1]
        t = shape[sp, label[j]]
        if t == -1:
            j += size[j]
            continue
        if t == EXIT:
            ex_s[ne] = sp
            ex_n[ne] = j
            ne += 1
            j += size[j]
            continue
        for i in range(tok_start[j], tok_start[j] + tok_count[j]):
            out_tok[n] = tok_ids[i]
            out_end[n] = t
            n += 1
        states[depth[j]] = t
        j += 1
    return out_tok[:n], out_end[:n], ex_s[:ne], ex_n[:ne]


class BodyShapes:
    """A vocabulary's body shapes, most recently used kept (`SHAPES_KEPT`).

    A shape is walked on its second sighting, not its first: its walk visits every trie node (~1 ms
    on SmolLM2, where a row's own walk skips whole subtrees: ~0.3 ms), and a schema can hold many
    shapes seen once (strings under a `not`, each with its own product states)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.by_key: OrderedDict[bytes, BodyShape] = OrderedDict()
        self.sighted: OrderedDict[bytes, None] = OrderedDict()  # keys seen once, not walked

    def get(self, key: bytes, shape: np.ndarray, trie: PreorderTrie, size: int) -> BodyShape | None:
        """The shape of ``key``, walked now if this is its second sighting; None on its first."""
        with self.lock:
            got = self.by_key.get(key)
            if got is not None:
                self.by_key.move_to_end(key)
                return got
            if key not in self.sighted:
                self.sighted[key] = None
                while len(self.sighted) > 4 * SHAPES_KEPT:
                    self.sighted.popitem(last=False)
                return None
        tok, end, ex_s, ex_n = _shape_walk(
            shape,
            trie.label,
            trie.depth,
            trie.size,
            trie.tok_start,
            trie.tok_count,
            trie.tok_ids,
            trie.max_depth,
        )
        tok, end32, words = sorted_packed_row(tok, end.astype(np.int32), size, -1)
        got = BodyShape(
            tok,
            end32.astype(np.int16),
            words.view(np.uint32),
            ex_s,
            ex_n,
            int(trie.size[ex_n].sum()),
            *tokens_at(trie, ex_n),
        )
        with self.lock:
            self.by_key[key] = got
            while len(self.by_key) > SHAPES_KEPT:
                self.by_key.popitem(last=False)
        return got
