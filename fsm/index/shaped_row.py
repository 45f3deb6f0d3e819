"""`ShapedRow`: a row made from a string body's shape (`fsm.index.body_rows`), and the shape it reads.

A string's row holds most of the vocabulary; a shaped row keeps only what differs from its shape's
— the states the shape's ends are renamed to, and the few hundred tokens that leave the body — and
makes the merged (token, end state) arrays, ~0.1 ms for 49k tokens, only if something reads them.
Its packed mask is the shape's with the leaving tokens' bits set.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .lazy_row import LazyRow
from .row_lookup import find_token
from .row_sort import merge_renamed, set_bits


@dataclass(frozen=True)
class BodyShape:
    """What a body's shape lets every row of that shape reuse: the tokens that stay inside (sorted),
    the body state (in the shape's numbering) each ends in, and the trie nodes where a path leaves
    the body, with the body state it leaves from."""

    tokens: np.ndarray  # int32, sorted
    ends: np.ndarray  # int16: body state (shape numbering)
    words: np.ndarray  # uint32: ``tokens``' packed bitmask
    exit_from: np.ndarray  # int64: body state (shape numbering) before the exit byte
    exit_node: np.ndarray  # int64: trie node whose byte leaves the body
    below: int  # trie nodes at and below the exit nodes: what a row of this shape still walks
    # the tokens that end at the exit nodes, and the index of each one's node in ``exit_node``
    # (`preorder.tokens_at`: ~40 µs a row when asked per row)
    exit_tokens: np.ndarray
    exit_which: np.ndarray


# A shaped row's leaving tokens go in a dict up to this many: most rows have a few hundred, but the
# loop of a word-count pattern's ``\S+`` is left by every token holding a space (~30k of SmolLM2's),
# and those dicts took 400 MB over 84 rows of one schema's two instances (o21072).
_DICT_MAX = 1024


class ShapedRow(LazyRow):
    """A row made from a body's shape (`fsm.index.rows.Row`'s interface): the shape's tokens with
    their ends renamed, and the tokens that leave the body (EOS among them when the state
    accepts). Its packed mask is the shape's with the leaving tokens' bits set (a few µs); the
    merged arrays (~0.1 ms for a string's 49k tokens) are made only if something reads them."""

    __slots__ = (
        "_dense",
        "_leaving",
        "_name",
        "has_text",
        "names",
        "packed",
        "shape",
        "x_end",
        "x_tok",
    )

    def __init__(
        self,
        shape: BodyShape,
        names: np.ndarray,
        x_tok: np.ndarray,
        x_end: np.ndarray,
        text: bool,
        name: Callable[[int], int] | None = None,
    ):
        """``names``: each body state's state in the automaton, -1 where ``name`` (a body state's
        number -> its state, found when first read: `fsm.index.body_twins`) tells it."""
        self.shape, self.names, self.x_tok, self.x_end = shape, names, x_tok, x_end
        self._name = name
        self.has_text = bool(len(shape.tokens)) or text
        words = shape.words.copy()
        set_bits(x_tok, words)
        self.packed = words.view(np.int32)
        self.packed.setflags(write=False)
        self._dense: tuple[np.ndarray, np.ndarray] | None = None
        self._leaving: dict[int, int] | None = None

    def _named(self, x: int) -> int:
        """The state of body state ``x``, named now if it was not yet."""
        n = int(self.names[x])
        if n < 0:
            assert self._name is not None
            n = self.names[x] = self._name(x)
        return n

    def _merged(self) -> tuple[np.ndarray, np.ndarray]:
        if self._dense is None:
            for x in np.flatnonzero(self.names < 0).tolist():
                self._named(x)
            self._dense = merge_renamed(
                self.shape.tokens, self.shape.ends, self.names, self.x_tok, self.x_end
            )
        return self._dense

    def next_state(self, token_id: int) -> int | None:
        """The state ``token_id`` leads to, or None when it is not allowed."""
        x = self.x_tok
        if len(x) > _DICT_MAX:  # a word-count string's body is left by every token with a space
            i = find_token(x, token_id)
            if i >= 0:
                return int(self.x_end[i])
        else:
            leaving = self._leaving
            if leaving is None:  # a dict answers in ~50 ns
                leaving = self._leaving = dict(zip(x.tolist(), self.x_end.tolist(), strict=True))
            got = leaving.get(token_id)
            if got is not None:
                return got
        inside = self.shape.tokens
        i = find_token(inside, token_id)
        if i >= 0:
            return self._named(int(self.shape.ends[i]))
        return None

    @property
    def nbytes(self) -> int:
        return self.names.nbytes + self.x_tok.nbytes + self.x_end.nbytes + self.packed.nbytes
