"""Rows inside a lexeme's loop (a JSON string's characters), walked once per vocabulary and shape.

Inside a free JSON string nearly every token stays inside the string, so its row holds most of the
vocabulary: a walk emits ~49k (token, end state) pairs on SmolLM2 and a scatter sorts them, ~0.25 ms
per state, and every string field of every schema is a state of its own (what follows its closing
quote differs). What differs between those rows is only the few hundred tokens that leave the
string; the tokens that stay inside, and the state each ends in (the loop, a state inside a
multi-byte character or an escape), are the same up to renaming the states.

So a state whose row is wide (`WIDE` labels or more loop back to it) is cut at its *body*: the states
from which every way on returns to it within `RETURN_BYTES` bytes (a UTF-8 character's continuation
bytes, an escape's ``\\uXXXX``), numbered in breadth-first order from it. The body's transitions in
that numbering, with every way out of the body marked as an *exit*, are the shape's key. The tokens
that never leave the body and the trie nodes where a path leaves it are walked once per vocabulary
and key (`BodyShape`, kept on the vocabulary); a row of that shape is then the shape's tokens with
their ends renamed, merged with a walk below the exit nodes from where each exit leads in this
automaton (`shaped_row`). The split is exact for any body: a token either stays inside or leaves it
at one first byte.

>>> import fsm
>>> from fsm.index.kernels import kernels
>>> v = fsm.Vocabulary([bytes([b]) for b in range(32, 127)] + [b'ab"', None], eos_token_ids=[96])
>>> idx = fsm.compile(fsm.Regex('"[^"]*"x'), v)
>>> s = idx.dfa.step(idx.initial_state, ord('"'))
>>> shaped_row(idx.dfa, s, kernels().vocabulary_preorder(v), None, None, None, v) is None  # first sighting
True
>>> row = shaped_row(idx.dfa, s, kernels().vocabulary_preorder(v), None, None, None, v)
>>> row.tokens.tolist() == sorted(kernels().walk_row(idx.dfa, s, kernels().vocabulary_preorder(v))[0].tolist())
True
"""

from __future__ import annotations

import threading

import numba
import numpy as np

from ..automata import ByteDFA, LazyByteDFA, cls, lit, node_nfa, rep, seq
from ..limits import Deadline
from ..vocabulary import Vocabulary
from .body_shapes import EXIT, BodyShapes
from .body_twins import body_or_twin
from .contract import OnDemand
from .literal_rows import literal_row
from .narrow_rows import narrow_below
from .preorder import PreorderTrie, preorder
from .row_sort import leaving_pairs, pack_tokens
from .shaped_row import ShapedRow
from .steps import FEW, Steps, target_counts
from .trie_kernel import walk_below
from .walk_arrays import walk_view

WIDE = 32  # labels looping back: below this a row is narrow and its walk cheap
RETURN_BYTES = 3  # a UTF-8 character's continuation bytes; an escape leaves (few tokens hold one)
MAX_BODY = 64  # states in a body: past this the key costs more than a walk
MAX_BELOW_SHARE = 8  # a shape whose exits lead to over 1/8 of the trie's nodes: rows walked
_BELOW_KEPT = 8  # walks below exits kept per automaton: a string's first state and loop share one


@numba.njit(cache=True, nogil=True)
def _wide_target(table, rows, bc, s):  # pragma: no cover - compiled
    """The state `WIDE` or more of ``s``'s 256 bytes lead to, or -1 (``table[rows[s]]``: its row)."""
    # counted among the row's few distinct targets (~3x faster than a sort of its 256 bytes);
    # a row of many is sorted
    cand = np.empty(FEW, np.int64)
    cnt = np.zeros(FEW, np.int64)
    n = target_counts(table, rows, bc, 256, s, cand, cnt)
    if n >= 0:
        best = -1
        for i in range(n):
            if cnt[i] >= WIDE and (best < 0 or cand[i] < best):
                best = cand[i]
        return best
    row = np.empty(256, np.int64)
    for b in range(256):
        row[b] = table[rows[s], bc[b]]
    row.sort()
    run = 0
    for i in range(256):
        run = run + 1 if i and row[i] == row[i - 1] else 1
        if row[i] >= 0 and run >= WIDE:
            return row[i]
    return -1


@numba.njit(cache=True, nogil=True)
def _known(y, left, anchor, expanded, ok_at, fail_at):  # pragma: no cover - compiled
    """`_returns` of ``y`` when its verdict needs no search: 1, 0, -2 - ``y`` (expand it), or 2."""
    if y == anchor or (ok_at[y] > 0 and ok_at[y] <= left):
        return 1
    if fail_at[y] >= left:
        return 0
    if left <= 0:
        fail_at[y] = max(fail_at[y], left)
        return 0
    if not expanded[y]:
        return -2 - y
    return 2


@numba.njit(cache=True, nogil=True)
def _returns(
    table, rows, classes, y0, left0, anchor, expanded, ok_at, fail_at
):  # pragma: no cover - compiled
    """Whether every way on from ``y0`` reaches ``anchor`` within ``left0`` bytes: 1, 0, or
    -2 - (a state to expand first). ``ok_at``/``fail_at``: the least budget a state was proven
    with (0: none) and the most it was refuted with (-1: none). ``classes``: the byte classes
    some byte has (a verdict depends on the targets only: one look per class, not per byte).
    Depth first with its own stack (numba's disk cache does not keep recursive functions)."""
    r = _known(y0, left0, anchor, expanded, ok_at, fail_at)
    if r != 2:
        return r
    st_y = np.empty(left0 + 2, np.int64)
    st_l = np.empty(left0 + 2, np.int64)
    st_b = np.zeros(left0 + 2, np.int64)
    st_live = np.zeros(left0 + 2, np.bool_)
    st_y[0] = y0
    st_l[0] = left0
    top = 1
    while top:
        y = st_y[top - 1]
        left = st_l[top - 1]
        b = st_b[top - 1]
        pushed = False
        while b < len(classes):
            z = table[rows[y], classes[b]]
            b += 1
            if z < 0:
                continue
            st_live[top - 1] = True
            q = _known(z, left - 1, anchor, expanded, ok_at, fail_at)
            if q == 1:
                continue
            if q == 2:
                st_b[top - 1] = b
                st_y[top] = z
                st_l[top] = left - 1
                st_b[top] = 0
                st_live[top] = False
                top += 1
                pushed = True
                break
            if q == 0:  # every way must return: one that does not refutes every frame
                for f in range(top):
                    fail_at[st_y[f]] = max(fail_at[st_y[f]], st_l[f])
            return q
        if pushed:
            continue
        if not st_live[top - 1]:
            for f in range(top):
                fail_at[st_y[f]] = max(fail_at[st_y[f]], st_l[f])
            return 0
        ok_at[y] = left if ok_at[y] == 0 else min(ok_at[y], left)
        top -= 1
    return 1


@numba.njit(cache=True, nogil=True)
def _body(table, rows, bc, root, expanded, ok_at, fail_at):  # pragma: no cover - compiled
    """`body_of`'s work: (states found, or -1: none, or -2: expand the states in ``need`` first;
    the states in breadth-first order; the shape; ``need``). Every state the search meets
    unexpanded is collected in one pass (a string's body needs ~10, three bytes deep), so the
    caller expands them in a few batches rather than rerunning the search once per state."""
    order = np.empty(MAX_BODY, np.int64)
    shape = np.empty((0, 256), np.int16)
    need = np.empty(256, np.int64)
    if not expanded[root]:
        need[0] = root
        return -2, order, shape, need[:1]
    anchor = _wide_target(table, rows, bc, root)
    if anchor < 0:
        return -1, order, shape, need[:0]
    if anchor != root:  # the first state inside a string: its wide step leads to the loop
        if not expanded[anchor]:
            need[0] = anchor
            return -2, order, shape, need[:1]
        if _wide_target(table, rows, bc, anchor) != anchor:
            return -1, order, shape, need[:0]
    # one look per byte class (~30 of JSON's 256 bytes), in the order of their first bytes (the
    # states' order, the shape's key, as byte by byte): a class's bytes all lead to one target,
    # searched unless all of them are ASCII (an exit, below)
    n_cls = 0
    for b in range(256):
        n_cls = max(n_cls, bc[b] + 1)
    high = np.zeros(n_cls, np.bool_)
    seen = np.zeros(n_cls, np.bool_)
    classes = np.empty(n_cls, np.int64)
    k = 0
    for b in range(256):
        c = bc[b]
        if not seen[c]:
            seen[c] = True
            classes[k] = c
            k += 1
        if b >= 0x80:
            high[c] = True
    classes = classes[:k]
    pos = np.full(len(expanded), -1, np.int64)
    wanted = np.zeros(len(expanded), np.bool_)
    n_need = 0
    order[0] = root
    pos[root] = 0
    n = 1
    i = 0
    while i < n:
        x = order[i]
        i += 1
        if not expanded[x]:  # cannot happen (a state is proven from its row), kept for safety
            if not wanted[x] and n_need < len(need):
                wanted[x] = True
                need[n_need] = x
                n_need += 1
            continue
        for c in classes:
            z = table[rows[x], c]
            if z < 0 or pos[z] >= 0:
                continue
            if not high[c] and z != anchor:
                # a body returns within a character: an ASCII byte that leaves the loop is an exit,
                # never searched (a key's declared names, a quote: searching them expanded ~10 states)
                continue
            r = _returns(table, rows, classes, z, RETURN_BYTES, anchor, expanded, ok_at, fail_at)
            if r < 0:
                q = -2 - r
                if not wanted[q] and n_need < len(need):
                    wanted[q] = True
                    need[n_need] = q
                    n_need += 1
                continue
            if r == 1:
                if n == MAX_BODY:
                    return -1, order, shape, need[:0]
                pos[z] = n
                order[n] = z
                n += 1
    if n_need:
        return -2, order, shape, need[:n_need]
    shape = np.empty((n, 256), np.int16)
    for k in range(n):
        for b in range(256):
            z = table[rows[order[k]], bc[b]]
            shape[k, b] = -1 if z < 0 else pos[z] if pos[z] >= 0 else EXIT
    return n, order, shape, need[:0]


def body_of(
    dfa: ByteDFA, state: int, on_demand: OnDemand | None, anchor: int | None = None
) -> tuple[np.ndarray, np.ndarray] | None:
    """(the body's states in breadth-first order from ``state``, its shape: ``shape[x, byte]`` = a
    body state, -1 dead or `EXIT`) — or None unless `WIDE` bytes or more lead from ``state`` to a
    state that loops on `WIDE` bytes (the *anchor*; the body is what returns to it), or when the body
    is over `MAX_BODY` states. Expands the states it reads. ``anchor``: `wide_anchor`'s, when known.

    >>> from fsm.regex import regex_to_dfa
    >>> d = regex_to_dfa('"[^"]*"')
    >>> states, shape = body_of(d, d.step(d.initial, ord('"')), None)
    >>> len(states), int(shape[0, ord('a')]), int(shape[0, ord('"')])  # the loop, 7 inside a character
    (8, 0, -2)
    """
    bc = np.asarray(dfa.byte_class, dtype=np.int64)
    if (wide_anchor(dfa, state, on_demand) if anchor is None else anchor) < 0:
        return None
    tbl, rows, flags = _view(dfa, on_demand)
    ok_at = fail_at = np.zeros(0, np.int64)
    while True:
        if len(ok_at) < len(flags):  # the verdicts so far hold: an expansion adds a row, changes none
            ok_at = np.concatenate([ok_at, np.zeros(len(flags) - len(ok_at), np.int64)])
            fail_at = np.concatenate([fail_at, np.full(len(flags) - len(fail_at), -1, np.int64)])
        n, order, shape, need = _body(tbl, rows, bc, int(state), flags, ok_at, fail_at)
        if n == -1:
            return None
        if n >= 0:
            return order[:n], shape
        assert on_demand is not None  # only states not expanded yet are asked for
        tbl, rows, flags = _view(dfa, on_demand, need)


def wide_anchor(dfa: ByteDFA, state: int, on_demand: OnDemand | None) -> int:
    """The state `WIDE` or more of ``state``'s bytes lead to when `WIDE` or more of its own lead
    back to it (a loop: free text), else -1; expands the two. Most rows are narrow: told by one
    look at the state's row (and its wide step's), before anything is allocated.

    >>> from fsm.regex import regex_to_dfa
    >>> d = regex_to_dfa('"[^"]*"')
    >>> s = d.step(d.initial, ord('"')); wide_anchor(d, s, None) == s, wide_anchor(d, d.initial, None)
    (True, -1)
    """
    bc = np.asarray(dfa.byte_class, dtype=np.int64)
    tbl, rows, _ = _view(dfa, on_demand, state)
    anchor = int(_wide_target(tbl, rows, bc, int(state)))
    if anchor < 0 or anchor == state:
        return anchor
    tbl, rows, _ = _view(dfa, on_demand, anchor)
    return anchor if int(_wide_target(tbl, rows, bc, anchor)) == anchor else -1


def _view(dfa: ByteDFA, on_demand: OnDemand | None, expand: int | np.ndarray | None = None):
    """(table, state -> its row in the table, expanded flags) with ``expand`` (a state or an
    array of them) expanded first: a lazy DFA keeps rows for its expanded states only
    (`LazyByteDFA.row_index`)."""
    if on_demand is not None and expand is not None:
        on_demand.ensure(expand)
    tbl, rows, _, _, flags = walk_view(dfa, on_demand, False)
    return tbl, rows, flags


def shaped_row(
    dfa: ByteDFA,
    state: int,
    trie: PreorderTrie,
    on_demand: OnDemand | None,
    deadline: Deadline | None,
    steps: Steps | None,
    vocab: Vocabulary,
    eos: tuple[np.ndarray, int] | None = None,
    anchor: int | None = None,
    lock=None,
    below_memo: dict | None = None,
) -> ShapedRow | None:
    """``state``'s row from its body's shape and a walk of what leaves it (EOS ids ``eos[0]``
    leading to ``eos[1]`` added), or None (not a wide loop, or its shape's first sighting: walk the
    row). Its tokens and ends are
    `trie_kernel.walk_row`'s pairs, sorted. ``anchor``: `wide_anchor`'s, when known. ``lock``: held
    while a twin's body state is named later (it expands the automaton: the index's lock).
    ``below_memo``: the automaton's last walks below exits, by their (states, nodes)."""
    if getattr(on_demand, "has_guards", False):
        return None  # a guarded state's row defers nodes (`fsm.index.guarded`): walked whole
    states, shape, name = body_or_twin(dfa, state, on_demand, anchor, lock, body_of)
    if shape is None:
        return None
    shapes = vocab.derived("body_shapes", BodyShapes)
    got = shapes.get(shape.tobytes() + bytes([len(states)]), shape, trie, vocab.size)
    if got is None:
        return None  # a shape's first sighting: the row is walked
    if got.below > trie.n_nodes // MAX_BELOW_SHARE:
        # most tokens leave the body (free text that may hold a match of an unanchored pattern:
        # every hex digit leaves the loop of `[0-9a-f]{8}-...`): the walk below the exits is the
        # whole row's walk and more (4 ms against 1)
        return None
    for x in np.unique(got.exit_from).tolist():  # the loop (a twin's other states read no ASCII)
        if states[x] < 0:
            states[x] = name(x)  # type: ignore[misc]
    tbl, rows, _ = _view(dfa, on_demand)
    bc = np.asarray(dfa.byte_class)
    exit_state = tbl[rows[states[got.exit_from]], bc[trie.label[got.exit_node]]].astype(np.int64)
    # the tokens at each exit node end where its byte leads; those below it are walked from there
    at_tok, at_end = got.exit_tokens, exit_state[got.exit_which]
    key = (exit_state.tobytes(), got.exit_node.tobytes())
    below = below_memo.get(key) if below_memo is not None else None
    if below is None:  # a string's first state and its loop leave by the same exits: walked once
        # most exits lead to a few tokens (a quote, then a comma or a brace): walked lean
        below = narrow_below(dfa, (exit_state, got.exit_node), trie, on_demand, deadline)
        if below is None:
            below = walk_below(
                dfa, (exit_state, got.exit_node), trie, on_demand=on_demand, deadline=deadline, steps=steps
            )
        if below_memo is not None:
            below_memo[key] = below
            while len(below_memo) > _BELOW_KEPT:
                del below_memo[next(iter(below_memo))]
    x_tok, x_end, text = leaving_pairs((at_tok, at_end), below, eos)
    return ShapedRow(got, states.astype(np.int32), x_tok, x_end, text, name)


_warm = threading.Event()


def ensure_shapes_compiled() -> None:
    """Load (or compile) the kernels a string's rows and a literal's run from Python — the body
    search, a shape's walk, a literal's follow, a mask's packing — once per process, as
    `trie_kernel.ensure_compiled` does the walk's: a first row pays no compile inside its deadline
    (seconds each on a fresh install, more on a busy machine: past a 10-s budget once in CI).

    >>> ensure_shapes_compiled()
    """
    if _warm.is_set():
        return
    singles = [bytes([b]) for b in range(0x20, 0x7F)]
    v = Vocabulary([*singles, "\u00e9".encode(), b'ab"', None], eos_token_ids=[len(singles) + 2])
    body = rep(cls((0x20, 0x21), (0x23, 0x10FFFF)), 0, None)
    lazy = LazyByteDFA(*node_nfa(seq(lit('"'), body, lit('"xy'))))
    d, trie = lazy.as_byte_dfa(), preorder(v.trie)
    s = lazy.step(lazy.initial, ord('"'))
    for _ in range(2):  # a shape's first sighting searches its body, its second walks the shape
        shaped_row(d, s, trie, lazy, None, None, v, anchor=wide_anchor(d, s, lazy))
    literal_row(d, lazy.step(lazy.step(s, ord('"')), ord("x")), trie, lazy, None, None)
    pack_tokens(np.zeros(1, np.int32), v.size)
    _warm.set()
