"""A walked row sorted by token with one scatter over the vocabulary (`sorted_packed_row`), compiled.

A wide row (a string's inside: most of the vocabulary) comes out of the trie walk in trie order; an
argsort of 45k tokens (and the gathers) costs ~2.6 ms, a scatter into a vocabulary-sized array and one pass ~0.07 ms.
The same pass packs the row's bitmask (`sorted_packed_row`): `bitmask.pack_bitmask` of 49k tokens
(a boolean scatter and ``np.packbits``) took ~0.15 ms, as long as the walk that found them.
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, nogil=True)
def _dense_row(tok, end, n, size, absent, words):  # pragma: no cover - compiled
    """The pairs ``tok[:n]``, ``end[:n]`` sorted by token, by a scatter over the vocabulary; the
    tokens' bits set in ``words`` (uint32, zeroed; empty: no mask wanted)."""
    full = np.full(size, absent, np.int32)
    for i in range(n):
        full[tok[i]] = end[i]
    m = 0
    for t in range(size):
        if full[t] != absent:
            m += 1
    out_t = np.empty(m, np.int32)
    out_e = np.empty(m, np.int32)
    pack = len(words) > 0
    m = 0
    for t in range(size):
        if full[t] != absent:
            out_t[m] = t
            out_e[m] = full[t]
            m += 1
            if pack:
                words[t >> 5] |= np.uint32(1) << np.uint32(t & 31)
    return out_t, out_e


def _sort(tok: np.ndarray, end: np.ndarray, size: int, absent: int, words: np.ndarray):
    """`_dense_row` of the pairs, bits set in ``words`` (empty: none)."""
    return _dense_row(
        np.ascontiguousarray(tok, dtype=np.int32),
        np.ascontiguousarray(end, dtype=np.int32),
        len(tok),
        size,
        absent,
        words,
    )


def sorted_packed_row(
    tok: np.ndarray, end: np.ndarray, size: int, absent: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``tok``, ``end`` sorted by token (no token twice) by one scatter over the vocabulary, and
    the tokens' packed bitmask (`fsm.index.bitmask.pack_bitmask`'s layout).

    >>> t, e, w = sorted_packed_row(np.array([33, 0], np.int32), np.array([7, 8], np.int32), 64, -9)
    >>> t.tolist(), w.tolist()
    ([0, 33], [1, 2])
    """
    words = np.zeros((size + 31) // 32, np.uint32)
    t, e = _sort(tok, end, size, absent, words)
    return t, e, words.view(np.int32)


@numba.njit(cache=True, nogil=True)
def sort_pairs(tok, end, n):  # pragma: no cover - compiled
    """The first ``n`` (token, end) pairs of ``tok``, ``end`` sorted by token in place, by
    insertion: a narrow row holds a few tokens.

    >>> t, e = np.array([5, 2, 9], np.int32), np.array([1, 2, 3], np.int32)
    >>> sort_pairs(t, e, 3); t.tolist(), e.tolist()
    ([2, 5, 9], [2, 1, 3])
    """
    for i in range(1, n):
        t = tok[i]
        e = end[i]
        j = i
        while j > 0 and tok[j - 1] > t:
            tok[j] = tok[j - 1]
            end[j] = end[j - 1]
            j -= 1
        tok[j] = t
        end[j] = e


@numba.njit(cache=True, nogil=True)
def small_sorted_row(tok, end):  # pragma: no cover - compiled
    """A narrow row's pairs sorted by token (int32 copies), by insertion: one call where a
    sortedness test, an argsort and two gathers cost ~5 µs of numpy calls for a few tokens.

    >>> t, e = small_sorted_row(np.array([5, 2, 9], np.int32), np.array([1, 2, 3], np.int32))
    >>> t.tolist(), e.tolist()
    ([2, 5, 9], [2, 1, 3])
    """
    out_t = tok.astype(np.int32)
    out_e = end.astype(np.int32)
    sort_pairs(out_t, out_e, len(out_t))
    return out_t, out_e


@numba.njit(cache=True, nogil=True)
def replaced_dense(dense, lo, hi, tok_ids, x_tok, x_end, absent):  # pragma: no cover - compiled
    """``dense`` (ends over the vocabulary, ``absent`` where no token) copied, with the tokens
    ``tok_ids[lo[r]:hi[r]]`` dropped and ``x_tok`` set to ``x_end``: another state's row from one
    that agrees with it on most first bytes (`fsm.index.sibling_rows`), in one pass over the changes.

    >>> d = np.array([5, -3, 7, -3], np.int32)
    >>> replaced_dense(d, np.array([0]), np.array([1]), np.array([2, 0], np.int32), np.array([1], np.int32), np.array([9], np.int32), -3).tolist()
    [5, 9, -3, -3]
    """
    full = dense.copy()
    for r in range(len(lo)):
        for i in range(lo[r], hi[r]):
            full[tok_ids[i]] = absent
    for i in range(len(x_tok)):
        full[x_tok[i]] = x_end[i]
    return full


@numba.njit(cache=True, nogil=True)
def dense_pairs(full, absent):  # pragma: no cover - compiled
    """The (tokens, ends) of ends over the vocabulary ``full``, sorted by token (two passes).

    >>> t, e = dense_pairs(np.array([5, -3, 7], np.int32), -3); t.tolist(), e.tolist()
    ([0, 2], [5, 7])
    """
    m = 0
    for t in range(len(full)):
        if full[t] != absent:
            m += 1
    out_t = np.empty(m, np.int32)
    out_e = np.empty(m, np.int32)
    m = 0
    for t in range(len(full)):
        if full[t] != absent:
            out_t[m] = t
            out_e[m] = full[t]
            m += 1
    return out_t, out_e


@numba.njit(cache=True, nogil=True)
def dense_packed(full, absent, words):  # pragma: no cover - compiled
    """Set in ``words`` (uint32, zeroed) the bits of the tokens ``full`` gives an end; how many.

    >>> w = np.zeros(1, np.uint32); int(dense_packed(np.array([5, -3, 7], np.int32), -3, w)), w.tolist()
    (2, [5])
    """
    m = 0
    for t in range(len(full)):
        if full[t] != absent:
            words[t >> 5] |= np.uint32(1) << np.uint32(t & 31)
            m += 1
    return m


@numba.njit(cache=True, nogil=True)
def _merge(in_tok, in_end, names, x_tok, x_end):  # pragma: no cover - compiled
    n = len(in_tok) + len(x_tok)
    tok = np.empty(n, np.int32)
    end = np.empty(n, np.int32)
    i = 0
    k = 0
    for m in range(n):
        if k < len(x_tok) and (i >= len(in_tok) or x_tok[k] < in_tok[i]):
            tok[m] = x_tok[k]
            end[m] = x_end[k]
            k += 1
        else:
            tok[m] = in_tok[i]
            end[m] = names[in_end[i]]
            i += 1
    return tok, end


def merge_renamed(
    in_tok: np.ndarray, in_end: np.ndarray, names: np.ndarray, x_tok: np.ndarray, x_end: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Sorted tokens ``in_tok`` whose ends are ``names[in_end]``, merged in token order with sorted
    pairs ``x_tok``, ``x_end`` (no token in both): a row kept in a shared numbering (a body's shape,
    a counter class's first row) with its ends renamed, plus the tokens walked apart. One pass, no
    sort, no renamed copy of the kept ends.

    >>> t, e = merge_renamed(np.array([1, 5]), np.array([0, 1]), np.array([7, 8]), np.array([0, 3]), np.array([6, 9]))
    >>> t.tolist(), e.tolist()
    ([0, 1, 3, 5], [6, 7, 9, 8])
    """
    return _merge(in_tok, in_end, names, x_tok, x_end)


@numba.njit(cache=True, nogil=True)
def set_bits(tok, words):  # pragma: no cover - compiled
    """Set the bits of tokens ``tok`` in the packed mask ``words`` (uint32), in place.

    >>> w = np.zeros(2, np.uint32); set_bits(np.array([1, 32], np.int32), w); w.tolist()
    [2, 1]
    """
    for i in range(len(tok)):
        t = tok[i]
        words[t >> 5] |= np.uint32(1) << np.uint32(t & 31)


def pack_tokens(tok: np.ndarray, size: int) -> np.ndarray:
    """`fsm.index.bitmask.pack_bitmask`, compiled: one pass over the tokens (~0.15 ms in numpy for
    a row of 49k tokens, a few µs here).

    >>> pack_tokens(np.array([0, 33], np.int32), 64).tolist()
    [1, 2]
    """
    words = np.zeros((size + 31) // 32, np.uint32)
    set_bits(np.ascontiguousarray(tok, dtype=np.int32), words)
    return words.view(np.int32)


def leaving_pairs(
    at: tuple[np.ndarray, np.ndarray],
    below: tuple[np.ndarray, np.ndarray],
    eos: tuple[np.ndarray, int] | None,
) -> tuple[np.ndarray, np.ndarray, bool]:
    """The tokens a row walks apart from its table or shape — those ending at the exit nodes
    (``at``), those walked below them (``below``), EOS ids ``eos[0]`` leading to ``eos[1]`` —
    as (tokens sorted, their ends, int32; whether any is text, not EOS).

    >>> t, e, text = leaving_pairs((np.array([5]), np.array([1])), (np.array([2]), np.array([3])), (np.array([9]), -2))
    >>> t.tolist(), e.tolist(), text
    ([2, 5, 9], [3, 1, -2], True)
    """
    parts_tok, parts_end = [at[0], below[0]], [at[1], below[1]]
    if eos is not None:
        parts_tok.append(eos[0])
        parts_end.append(np.full(len(eos[0]), eos[1]))
    text = len(at[0]) + len(below[0]) > 0
    # (no token twice: an exit node is never below another)
    return (*sorted_pairs(np.concatenate(parts_tok), np.concatenate(parts_end)), text)


def sorted_pairs(tok: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(token, end) pairs, no token twice, sorted by token as int32: by a scatter over the
    vocabulary past `_SCATTER_FROM` of them (most of a string's tokens: an argsort of ~40k took
    ~1.7 ms, the scatter ~70 µs), else by an argsort.

    >>> t, e = sorted_pairs(np.array([5, 2]), np.array([1, 0])); t.tolist(), e.tolist()
    ([2, 5], [0, 1])
    """
    if len(tok) > _SCATTER_FROM:
        return _sort(tok, end, int(tok.max()) + 1, _NO_END, _NO_WORDS)
    order = np.argsort(tok, kind="stable")
    return tok[order].astype(np.int32), end[order].astype(np.int32)


# Past this many tokens a scatter over the vocabulary (~70 µs on 49k) beats an argsort.
_SCATTER_FROM = 2048
_NO_END = np.iinfo(np.int32).min  # ends are states (>= 0) or EOS's and other marks (small negatives)
_NO_WORDS = np.zeros(0, np.uint32)
