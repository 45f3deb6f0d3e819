"""What a row walk learns about a DFA state that lets it emit a whole trie subtree at once.

Inside a free JSON string every byte but a quote, a backslash or a control character leads back to
the same state; inside a ``maxLength`` string each character leads one state further along a
chain of counters. A trie subtree all of whose bytes take the state along such a chain of
*uniform steps* needs no walk: the end of each token below is the chain's state at the token's
length (`fsm.index.trie_kernel`). Multi-byte characters pass through intermediate states, so a
chain where every valid multi-byte UTF-8 character steps like an ASCII one (`char_step`) lets a
subtree of whole characters go at once, counted in characters. Each fact is computed once per state, by compiled loops, and kept
by the index (`Steps`).

>>> s, m, k, c = Steps().arrays(2); s.tolist(), c.tolist()
([0, 0], [0, 0])
"""

from __future__ import annotations

import numba
import numpy as np

FEW = 16  # distinct targets a row's labels are counted among (`target_counts`) before it is sorted instead


@numba.njit(cache=True, nogil=True)
def target_counts(table, rows, byte_class, n_labels, s, cand, cnt):  # pragma: no cover - compiled
    """The labels of expanded state ``s`` counted per live target: ``cand[i]`` led to by ``cnt[i]``
    labels (``cnt`` zeroed), the number of targets — or -1 past ``len(cand)`` of them."""
    n = 0
    for b in range(n_labels):
        t = table[rows[s], byte_class[b]]
        if t < 0:
            continue
        i = 0
        while i < n and cand[i] != t:
            i += 1
        if i == n:
            if n == len(cand):
                return -1
            cand[i] = t
            n += 1
        cnt[i] += 1
    return n


@numba.njit(cache=True, nogil=True)
def _step_of(table, rows, byte_class, n_labels, s, steps, masks, known, expanded):  # pragma: no cover
    """State ``s``'s uniform step: the state most labels lead to (-1: none; -2: ``s`` is not
    expanded yet), with the set of those labels in ``masks[s]``; computed once per state.
    ``table[rows[s]]`` is the row of an expanded state ``s`` (the others have none)."""
    if known[s]:
        return steps[s]
    if not expanded[s]:
        return -2
    row = np.empty(n_labels, np.int64)
    for b in range(n_labels):
        row[b] = table[rows[s], byte_class[b]]
    # a row has a few distinct targets (dead, a loop, an exit or two): counted in a short list,
    # not by a sort of its 256 labels (~3x the time); a row of many is sorted
    cand = np.empty(FEW, np.int64)
    cnt = np.zeros(FEW, np.int64)
    n_cand = target_counts(table, rows, byte_class, n_labels, s, cand, cnt)
    best, best_n = -1, 0
    if n_cand >= 0:
        for i in range(n_cand):
            if cnt[i] > best_n or (cnt[i] == best_n and cand[i] < best):
                best, best_n = cand[i], cnt[i]
    else:
        srt = np.sort(row)
        run = 0
        for i in range(n_labels):
            run = run + 1 if i and srt[i] == srt[i - 1] else 1
            if srt[i] >= 0 and run > best_n:
                best, best_n = srt[i], run
    for w in range(4):
        masks[s, w] = 0
    for b in range(n_labels):
        if row[b] == best and best >= 0:
            masks[s, b >> 6] |= np.uint64(1) << np.uint64(b & 63)
    steps[s] = best
    known[s] = True
    return best


@numba.njit(cache=True, nogil=True)
def _n_labels(masks, c):  # pragma: no cover - compiled
    """How many labels lead to state ``c``'s uniform step (the bits of ``masks[c]``)."""
    n = 0
    for w in range(4):
        x = masks[c, w]
        while x:
            x &= x - np.uint64(1)
            n += 1
    return n


@numba.njit(cache=True, nogil=True)
def label_chain(table, rows, byte_class, n_labels, s, steps, masks, known, expanded, out):  # pragma: no cover
    """Fill ``out[0..r]`` with the chain of uniform steps from ``s`` along which every state has
    the same label set as ``s``, of 32 labels or more, all below 128 (ASCII bytes, or classes),
    and return ``r`` (0: no such chain; ``out`` past ``r`` is -1). Every token whose labels lie in
    that set and that is no longer than ``r`` ends at ``out[its length]`` (every position of a
    fixed-length string of one class: `walk_kernel.walk_subtrees` emits such subtrees at once)."""
    out[:] = -1
    out[0] = s
    u = _step_of(table, rows, byte_class, n_labels, s, steps, masks, known, expanded)
    if u < 0 or u == s or masks[s, 2] != 0 or masks[s, 3] != 0:
        return 0
    if _n_labels(masks, s) < 32:
        return 0
    m0, m1 = masks[s, 0], masks[s, 1]
    c, r = s, 0
    while r + 1 < len(out):
        u = _step_of(table, rows, byte_class, n_labels, c, steps, masks, known, expanded)
        if u < 0 or u == c or masks[c, 0] != m0 or masks[c, 1] != m1 or masks[c, 2] != 0 or masks[c, 3] != 0:
            break
        r += 1
        out[r] = u
        c = u
    return r


@numba.njit(cache=True, nogil=True)
def _sole_label(table, rows, byte_class, n_labels, s):  # pragma: no cover - compiled
    """State ``s``'s only live label, or -1 (none live) or -2 (several)."""
    out = -1
    for b in range(n_labels):
        if table[rows[s], byte_class[b]] >= 0:
            if out >= 0:
                return -2
            out = b
    return out


@numba.njit(cache=True, nogil=True)
def _child(label, size, node, b):  # pragma: no cover - compiled
    """The child of preorder trie ``node`` labelled ``b``, or -1."""
    j = node + 1
    end = node + size[node]
    while j < end:
        if label[j] == b:
            return j
        j += size[j]
    return -1


@numba.njit(cache=True, nogil=True)
def _back1(table, rows, bc, m, s, expanded, memo):  # pragma: no cover - compiled
    """From ``m``, does every continuation byte lead to ``s``? 1 / 0, or -2 - (a state to expand)."""
    if m < 0:
        return 0
    if memo[0, m]:
        return 1 if memo[0, m] == 1 else 0
    if not expanded[m]:
        return -2 - m
    ok = 1
    for c in range(0x80, 0xC0):
        if table[rows[m], bc[c]] != s:
            ok = 0
            break
    memo[0, m] = 1 if ok else 2
    return ok


@numba.njit(cache=True, nogil=True)
def _back2(table, rows, bc, m, s, expanded, memo):  # pragma: no cover - compiled
    """From ``m``, do any two continuation bytes lead to ``s``? 1 / 0, or -2 - (a state to expand)."""
    if m < 0:
        return 0
    if memo[1, m]:
        return 1 if memo[1, m] == 1 else 0
    if not expanded[m]:
        return -2 - m
    for c in range(0x80, 0xC0):
        got = _back1(table, rows, bc, table[rows[m], bc[c]], s, expanded, memo)
        if got != 1:
            if got == 0:
                memo[1, m] = 2
            return got
    memo[1, m] = 1
    return 1


@numba.njit(cache=True, nogil=True)
def char_step(table, rows, bc, s, target, expanded):  # pragma: no cover - compiled
    """Whether every valid multi-byte UTF-8 character read from ``s`` leads to ``target``: 1, 0,
    or -2 - (a state on the way that must be expanded first)."""
    memo = np.zeros((2, len(expanded)), np.int8)
    for b0 in range(0xC2, 0xF5):
        if b0 <= 0xDF:
            r, lo, hi = 1, 0x80, 0xBF
        elif b0 <= 0xEF:
            r = 2
            lo, hi = (0xA0, 0xBF) if b0 == 0xE0 else (0x80, 0x9F) if b0 == 0xED else (0x80, 0xBF)
        else:
            r = 3
            lo, hi = (0x90, 0xBF) if b0 == 0xF0 else (0x80, 0x8F) if b0 == 0xF4 else (0x80, 0xBF)
        m = table[rows[s], bc[b0]]
        if m < 0:
            return 0
        if not expanded[m]:
            return -2 - m
        for c in range(lo, hi + 1):
            t = table[rows[m], bc[c]]
            if r == 1:
                got = 1 if t == target else 0
            elif r == 2:
                got = _back1(table, rows, bc, t, target, expanded, memo)
            else:
                got = _back2(table, rows, bc, t, target, expanded, memo)
            if got != 1:
                return got
    return 1


@numba.njit(cache=True, nogil=True)
def _uniform_chain(
    table, rows, byte_class, n_labels, sp, bits, h, by_chars, chain, steps, masks, known, chars, expanded
):  # pragma: no cover - compiled
    """Whether every label in ``bits`` (a subtree's) takes each of the ``h`` states from ``sp`` on
    along one chain of uniform steps; fills ``chain[0..h]`` with those states when it does.
    ``by_chars``: the steps are characters, not bytes (the subtree reads whole UTF-8 characters):
    a multi-byte character must lead where the state's uniform step does, its bytes need not."""
    chain[0] = sp
    c = sp
    wide = (bits[2] | bits[3]) != 0  # bytes of multi-byte characters below
    for k in range(h):
        u = _step_of(table, rows, byte_class, n_labels, c, steps, masks, known, expanded)
        if u < 0:
            return False
        if by_chars:
            if (bits[0] & ~masks[c, 0]) or (bits[1] & ~masks[c, 1]):
                return False
            if wide:
                if chars[c] == 0:
                    got = char_step(table, rows, byte_class, c, u, expanded)
                    chars[c] = 1 if got == 1 else 2 if got == 0 else 3  # 3: not this round
                if chars[c] != 1:
                    return False
        else:
            for w in range(4):
                if bits[w] & ~masks[c, w]:
                    return False
        chain[k + 1] = u
        if u == c:  # a loop: the rest of the chain stays here
            for r in range(k + 2, h + 1):
                chain[r] = c
            return True
        c = u
    return True


@numba.njit(cache=True, nogil=True)
def _chain_to_expand(
    table,
    rows,
    byte_class,
    n_labels,
    s,
    start,
    done,
    node,
    steps,
    masks,
    known,
    chars,
    utf8,
    expanded,
    max_depth,
    label,
    size,
    height,
):  # pragma: no cover - compiled
    """The first state along ``s``'s chain of wide uniform steps (32 labels or more) or of
    literal steps (one live label) that is not expanded yet — a chain state, or a state inside a multi-byte character read from ``s``
    (``utf8`` 1) or from any chain state (``utf8`` 2; 0: class labels, no characters) — or -1:
    what a walk from ``s`` would otherwise expand one round at a time, or never (characters no
    token spells). Expanding the characters of every chain state pays on a vocabulary of many
    multi-byte tokens and costs more than it saves on one of mostly ASCII tokens (the walk checks
    them when their states happen to be expanded).

    Only as deep as some token reaches: the trie ``node`` (``label``, ``size``, ``height``: the
    trie's arrays) the literal steps spell so far, until a wide step, from which every byte is
    possible and the depth is bounded by the subtree's height (a key's last bytes, ``":"`` and a
    counted string held by no token expanded 75 counts of that string, ~2 ms, on every key).

    Returns (that state, the chain state to resume from once it is expanded, the steps taken to
    it, the trie node at it — -1 past a wide step —, the depth bound): a caller resumes at
    ``start`` after ``done`` steps from ``node`` within ``max_depth``, so a literal of n bytes
    costs n steps in all, not n each time."""
    c = start
    for i in range(done, max_depth):
        if node >= 0 and height[node] <= 1:
            return -1, c, i, node, max_depth  # no token spells a byte more
        u = _step_of(table, rows, byte_class, n_labels, c, steps, masks, known, expanded)
        if u == -2:
            return c, c, i, node, max_depth
        if u < 0:
            return -1, c, i, node, max_depth
        if _n_labels(masks, c) < 32:
            # a literal (one live label: a key, a ``": "``): its next state, expanded here now
            # rather than by a round of the walk per byte (a round's Python costs ~10 µs)
            b = _sole_label(table, rows, byte_class, n_labels, c)
            if b < 0:
                return -1, c, i, node, max_depth
            u = table[rows[c], byte_class[b]]
            if u == c:
                return -1, c, i, node, max_depth
            if node >= 0:
                node = _child(label, size, node, b)
                if node < 0:
                    return -1, c, i, node, max_depth  # no token spells this byte here
            c = u
            continue
        if node >= 0:  # any byte from here on: as deep as the deepest token below this node
            max_depth = min(max_depth, i + height[node] - 1)
            node = -1
            if i >= max_depth:
                return -1, c, i, node, max_depth
        if (utf8 == 2 or (utf8 == 1 and c == s)) and (chars[c] == 0 or chars[c] == 3):
            got = char_step(table, rows, byte_class, c, u, expanded)
            if got < 0:
                return -2 - got, c, i, node, max_depth
            chars[c] = 1 if got == 1 else 2
        if u == c:
            return -1, c, i, node, max_depth
        c = u
    return -1, c, max_depth, node, max_depth


class Steps:
    """Per DFA state: its uniform step (the state most labels lead to, ``steps``), the set of those
    labels (``masks``), whether both are known, and whether every multi-byte UTF-8 character leads
    to its uniform step (``chars``: 0 unknown, 1 yes, 2 no, 3 not known until a state inside a
    character is expanded). Computed by the walks as they meet expanded states and kept for the
    index's later rows; grows with a lazy DFA."""

    def __init__(self) -> None:
        self._arrays = self._empty(0)

    @staticmethod
    def _empty(cap: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        return (
            np.zeros(cap, np.int64),
            np.zeros((cap, 4), np.uint64),
            np.zeros(cap, np.bool_),
            np.zeros(cap, np.int8),
        )

    def arrays(self, n_states: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(steps, label masks, known flags, character loops) with room for ``n_states`` states.

        >>> s, m, k, c = Steps().arrays(3); m.shape, k.tolist()
        ((3, 4), [False, False, False])
        """
        old = self._arrays
        if len(old[0]) < n_states:
            new = self._empty(max(n_states, 2 * len(old[0])))
            for a, b in zip(new, old, strict=True):
                a[: len(b)] = b
            self._arrays = new
        return self._arrays
