"""Rows of states inside a JSON string, from token classes computed once per vocabulary.

Inside a JSON string most of the vocabulary is allowed, so a trie walk from such a state visits
nearly every trie node (5-15 ms on a 49k vocabulary). But how a token reads as string characters
does not depend on the schema: it is decided once per vocabulary by running every token through the
*body automaton* (raw characters of a JSON string: no quote, backslash or control character),
counting the whole characters it reads.

A DFA state ``q`` reads one body character like the body automaton when a map ``h`` from body
states to DFA states exists with ``h(start) = q`` and every body transition ``x -b-> y`` matched
by ``h(x) -b-> h(y)``, except that a transition completing a character lands in ``next(q)`` (the
state after any ASCII body character) instead of ``q``: one *level*. A free string is one level
repeated (``next(q) = q``); a string with ``maxLength`` is a chain of levels (a counter per
character). With the levels of ``q`` checked (a few table lookups each, memoized per state), every
token the body automaton reads whole ends at the level of its character count, and every other
token is a body prefix followed by bytes simulated in the DFA from there — a few hundred tokens (a
quote, a backslash, a control character), most dead at that byte. Tokens reaching a level that
does not check out (past ``maxLength``, a ``pattern``) are simulated from ``q`` whole, or, when
they are many, the caller walks the trie. The row is exactly the trie walk's
(``tests/fsm/test_string_body.py`` checks that over many schemas).

>>> from fsm.vocabulary import Vocabulary
>>> from fsm.automata import LazyByteDFA, node_nfa, rep, cls
>>> v = Vocabulary([b"ab", b'b"', b'"', b"\\n", None], eos_token_ids=[4])
>>> d = LazyByteDFA(*node_nfa(rep(cls((0x20, 0x21), (0x23, 0x5B), (0x5D, 0x10FFFF)), 0, None))).as_byte_dfa()
>>> tok, end = body_row(d, d.initial, body_classes(v), {})
>>> tok.tolist()
[0]
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..automata import MAX_CODEPOINT, ByteDFA, LazyByteDFA, cls, node_nfa, rep
from ..vocabulary import Vocabulary

# JSON string characters written raw: everything but '"', '\\' and the control characters
_BODY = cls((0x20, 0x21), (0x23, 0x5B), (0x5D, MAX_CODEPOINT))
_BODY_ASCII = np.array([b for b in range(0x20, 0x80) if b not in (0x22, 0x5C)], dtype=np.int64)
# Past this share of the vocabulary to simulate whole, the trie walk (shared prefixes) is cheaper.
_MAX_SIMULATED = 0.2
_LEVELS = 31  # at most this many levels are checked (`BodyClasses.check_levels`)


@dataclass(frozen=True)
class BodyClasses:
    """The vocabulary's tokens as the body automaton reads them (a per-vocabulary fact)."""

    table: np.ndarray  # body automaton: (states, 256) int32, -1 = dead
    start: int
    tree: tuple  # spanning tree of one character from start: per depth (child, parent, byte)
    edges: tuple  # every live body transition: (source, byte, target) arrays
    tok: np.ndarray  # int32: the text tokens
    mat: np.ndarray  # uint8 (tokens, width): their bytes, zero-padded
    lens: np.ndarray  # int64: their lengths
    inside: np.ndarray  # int64: positions (in ``tok``) of the tokens read whole
    inside_level: np.ndarray  # int64: whole characters each reads
    inside_end: np.ndarray  # int64: the body state after it
    cross: np.ndarray  # int64: positions of the other tokens
    cross_level: np.ndarray  # int64: whole characters read before the first rejected byte
    cross_pair: np.ndarray  # int64: per cross token, an index into pair_state / pair_byte
    pair_state: np.ndarray  # int64: body state before the rejected byte
    pair_byte: np.ndarray  # int64: that byte
    cross_rest: np.ndarray  # uint8 (cross tokens, width): the bytes after it, zero-padded
    cross_len: np.ndarray  # int64: how many of them
    cross_group: np.ndarray  # int64: tokens with one pair and one level form a group
    char_byte: np.ndarray  # uint8 (tokens, _LEVELS + 1): the first byte of each character
    max_level: int  # the most whole characters any token reads
    check_levels: int  # levels worth checking: tokens reading more characters are few (simulated)


@dataclass(frozen=True)
class Level:
    """One character read from a DFA state: the image of each body state, and the state after it."""

    image: np.ndarray  # int64 per body state (``image[start]`` = the state itself)
    after: int  # the state every whole character leads to


def body_classes(vocab: Vocabulary) -> BodyClasses:
    """`BodyClasses` of ``vocab``, computed once per vocabulary (tens of ms) and kept on it."""
    return vocab.derived("string_body", lambda: _build(vocab))


def _body_dfa() -> tuple[np.ndarray, int]:
    """The body automaton, built as the JSON front end builds strings: (table, start), where start
    is the state a whole character leads to (the subset construction's initial state reads alike
    but is another state; it is left unreachable)."""
    lazy = LazyByteDFA(*node_nfa(rep(_BODY, 0, None)))
    lazy.expand_all()
    table = lazy.table_buffer[: lazy.n_states].copy()
    loop = int(table[lazy.initial, ord("a")])
    assert (table[loop] == table[lazy.initial]).all(), "the body automaton's start reads like its loop"
    return table, loop


def _build(vocab: Vocabulary) -> BodyClasses:
    table, start = _body_dfa()
    ids = np.array([i for i, t in enumerate(vocab.tokens) if t], dtype=np.int32)
    toks = [vocab.tokens[i] for i in ids.tolist()]
    lens = np.array([len(t) for t in toks], dtype=np.int64)
    width = int(lens.max()) if len(lens) else 0
    flat = np.frombuffer(b"".join(toks), dtype=np.uint8)
    mat = np.zeros((len(toks), width + 1), dtype=np.uint8)
    mat[
        np.repeat(np.arange(len(toks)), lens), np.arange(len(flat)) - np.repeat(np.cumsum(lens) - lens, lens)
    ] = flat
    st = np.full(len(toks), start, dtype=np.int64)
    level = np.zeros(len(toks), dtype=np.int64)
    stop = np.full(len(toks), -1, dtype=np.int64)  # where the body automaton died
    char_byte = np.zeros((len(toks), _LEVELS + 1), dtype=np.uint8)
    for j in range(width):
        act = np.flatnonzero((stop < 0) & (j < lens))
        if not len(act):
            break
        at = act[(st[act] == start) & (level[act] <= _LEVELS)]
        char_byte[at, level[at]] = mat[at, j]
        nxt = table[st[act], mat[act, j]].astype(np.int64)
        dead = nxt < 0
        stop[act[dead]] = j
        ok = act[~dead]
        st[ok] = nxt[~dead]
        level[ok] += nxt[~dead] == start
    inside = np.flatnonzero(stop < 0)
    cross = np.flatnonzero(stop >= 0)
    p = stop[cross]
    uniq, pair_of = np.unique(st[cross] * 256 + mat[cross, p], return_inverse=True)
    rest_len = lens[cross] - p - 1
    rest = np.zeros((len(cross), max(int(rest_len.max()) if len(cross) else 0, 1)), dtype=np.uint8)
    for j in range(rest.shape[1]):
        rest[:, j] = mat[cross, np.minimum(p + 1 + j, width)]
    tree, edges = _shape(table, start)
    return BodyClasses(
        table=table,
        start=start,
        tree=tree,
        edges=edges,
        tok=ids,
        mat=mat,
        lens=lens,
        inside=inside,
        inside_level=level[inside],
        inside_end=st[inside],
        cross=cross,
        cross_level=level[cross],
        cross_pair=pair_of.astype(np.int64),
        pair_state=uniq // 256,
        pair_byte=uniq % 256,
        cross_rest=rest,
        cross_len=rest_len,
        cross_group=np.unique(pair_of * (width + 2) + level[cross], return_inverse=True)[1].astype(np.int64),
        char_byte=char_byte,
        max_level=int(level.max()) if len(level) else 0,
        check_levels=_levels_worth_checking(level),
    )


def _levels_worth_checking(level: np.ndarray) -> int:
    """The fewest levels past which at most 2% of the tokens read more characters."""
    counts = np.bincount(level)
    beyond = len(level) - np.cumsum(counts)  # tokens reading more than k characters, per k
    return min(int(np.argmax(beyond <= 0.02 * len(level))) + 2, _LEVELS)


def _shape(table: np.ndarray, start: int) -> tuple[tuple, tuple]:
    """The states inside one character as a breadth-first spanning tree from start (levels of
    (child, parent, byte)), and every live transition (source, byte, target)."""
    seen = {start}
    levels: list[list[tuple[int, int, int]]] = []
    frontier = [start]
    while frontier:
        nxt, level = [], []
        for x in frontier:
            for b in np.flatnonzero(table[x] >= 0).tolist():
                y = int(table[x, b])
                if y not in seen:
                    seen.add(y)
                    nxt.append(y)
                    level.append((y, x, b))
        if level:
            levels.append(level)
        frontier = nxt
    tree = tuple(tuple(np.array(col, dtype=np.int64) for col in zip(*lv, strict=True)) for lv in levels)
    reachable = np.zeros(len(table), dtype=bool)
    reachable[list(seen)] = True
    src, byte = np.nonzero((table >= 0) & reachable[:, None])
    return tree, (src.astype(np.int64), byte.astype(np.int64), table[src, byte].astype(np.int64))


def level_of(dfa: ByteDFA, state: int, body: BodyClasses) -> Level | None:
    """How ``state`` reads one body character (`Level`), or None when it does not read the body
    like a string does. Vectorized: the first check (every ASCII body byte leads to one state)
    rejects most states; then the images follow the spanning tree one depth at a time, and every
    body transition is checked in one table lookup."""
    table, bc = dfa.table, dfa.byte_class
    own = table[np.full(len(_BODY_ASCII), state), bc[_BODY_ASCII]]
    after = int(own[0])
    if after < 0 or not (own == after).all():
        return None
    image = np.full(len(body.table), -1, dtype=np.int64)
    image[body.start] = state
    for child, parent, byte in body.tree:
        got = table[image[parent], bc[byte]]
        if (got < 0).any():
            return None
        image[child] = got
    src, byte, dst = body.edges
    want = np.where(dst == body.start, after, image[dst])
    if not (table[image[src], bc[byte]] == want).all():
        return None
    return Level(image, after)


def body_row(dfa: ByteDFA, state: int, body: BodyClasses, memo: dict) -> tuple[np.ndarray, np.ndarray] | None:
    """(tokens, end states) of ``state`` — the trie walk's pairs, unsorted — when ``state`` reads
    string characters (`level_of`), else None. ``memo``: what this DFA was found to do so far (levels of states, cross-token ends)."""
    levels: list[Level] = []
    q, loops = state, False
    while len(levels) < body.check_levels:
        lv = memo[q] if q in memo else memo.setdefault(q, level_of(dfa, q, body))
        if lv is None:
            break
        levels.append(lv)
        if lv.after == q:  # a loop: every further level is this one
            loops = True
            break
        q = lv.after
    if not levels:
        return None
    n_ok = len(levels)
    images = np.stack([lv.image for lv in levels])
    afters = np.array([lv.image[body.start] for lv in levels] + [levels[-1].after], dtype=np.int64)
    # A token ending at a character boundary after c characters used levels 0..c-1 and ends at
    # afters[c]; one ending inside a character also used level c. Levels past a loop repeat it.
    lim = body.max_level + 1 if loops else n_ok
    at_start = body.inside_end == body.start
    known = np.where(at_start, body.inside_level <= lim, body.inside_level < lim)
    c_at_start = body.pair_state[body.cross_pair] == body.start
    c_known = np.where(c_at_start, body.cross_level <= lim, body.cross_level < lim)
    whole = np.concatenate([body.inside[~known], body.cross[~c_known]])
    table, bc = dfa.table, dfa.byte_class
    if len(whole) and not loops:
        # they all start a character at the first unchecked level: most die at its first byte
        # (past maxLength every character does)
        first = body.char_byte[whole, n_ok]
        whole = whole[table[np.full(len(whole), afters[n_ok]), bc[first]] >= 0]
    if len(whole) > _MAX_SIMULATED * len(body.tok):
        return None
    # tokens read whole by the body automaton
    c = body.inside_level[known]
    end_in = np.where(
        at_start[known], afters[np.minimum(c, n_ok)], images[np.minimum(c, n_ok - 1), body.inside_end[known]]
    )
    # the others: the byte the body automaton rejected, from the state its prefix ends at, then the rest
    c = body.cross_level[c_known]
    pair = body.cross_pair[c_known]
    from_state = np.where(
        c_at_start[c_known],
        afters[np.minimum(c, n_ok)],
        images[np.minimum(c, n_ok - 1), body.pair_state[pair]],
    )
    st = table[from_state, bc[body.pair_byte[pair]]].astype(np.int64)
    cross_pos = body.cross[c_known]
    st = _rests(table, bc, st, np.flatnonzero(c_known), body, memo)
    # tokens past the checked levels: simulated from the state, whole
    wst = _simulate(table, bc, np.full(len(whole), state, dtype=np.int64), body.mat[whole], body.lens[whole])
    tok = np.concatenate(
        [body.tok[body.inside[known]], body.tok[cross_pos[st >= 0]], body.tok[whole[wst >= 0]]]
    )
    end = np.concatenate([end_in, st[st >= 0], wst[wst >= 0]]).astype(np.int32)
    return tok, end


def _rests(table, bc, st: np.ndarray, which: np.ndarray, body: BodyClasses, memo: dict) -> np.ndarray:
    """The end states of the cross tokens ``which`` whose rest is read from ``st`` (-1: dead).
    A group's rests read from one state always end alike: memoized per (group, state), so the
    tokens crossing a closing quote are simulated once per index, not once per row."""
    out = np.full(len(st), -1, dtype=np.int64)
    live = np.flatnonzero(st >= 0)
    if not len(live):
        return out
    key = body.cross_group[which[live]] * (1 << 32) + st[live]
    order = np.argsort(key, kind="stable")
    keys, starts = np.unique(key[order], return_index=True)
    bounds = np.append(starts, len(order))
    todo = []
    for i, k in enumerate(keys.tolist()):
        sel = live[order[bounds[i] : bounds[i + 1]]]
        hit = memo.get(("rest", k))
        if hit is None:
            todo.append((k, sel))
        else:
            out[sel] = hit
    if todo:
        sel = np.concatenate([t[1] for t in todo])
        w = which[sel]
        ends = _simulate(table, bc, st[sel].copy(), body.cross_rest[w], body.cross_len[w])
        out[sel] = ends
        at = 0
        for k, s_ in todo:
            memo[("rest", k)] = ends[at : at + len(s_)]
            at += len(s_)
    return out


def _simulate(table, bc, st: np.ndarray, mat: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Run each token's bytes ``mat[i, :n[i]]`` from ``st[i]`` (-1 = dead, kept dead)."""
    for j in range(mat.shape[1]):
        act = np.flatnonzero((st >= 0) & (j < n))
        if not len(act):
            break
        st[act] = table[st[act], bc[mat[act, j]]]
    return st
