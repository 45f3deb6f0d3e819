"""Building the product lexer (`LexerAutomaton`, see `fsm.grammar.lexer` for what its states mean).

The product of the terminals' byte DFAs is explored once per contextual allowed set, state by state,
then trimmed to the states from which some token sequence completes a lexeme, with the ignore-run
budget of each state; `check_adjacency` then proves every grammar neighbour pair can be split.
"""

from __future__ import annotations

import re
from collections import deque

import numpy as np

from ..automata import ByteDFA
from ..errors import GrammarError
from ..limits import DEFAULT_LIMITS, Limits
from .lark import LarkGrammar, Terminal
from .lexer import INF, KILL, REJECT, LexerAutomaton
from .lexer_check import check_adjacency
from .terminals import SENSITIVE, terminal_dfa


class _Roles:
    """How each terminal of one allowed set takes part in lexing (lark's _create_unless)."""

    def __init__(self, terms: frozenset[int], grammar: LarkGrammar):
        ts = grammar.terminals
        self.unless: dict[int, tuple[int, ...]] = {}
        embedded: set[int] = set()
        for r in sorted(terms):
            rt = ts[r]
            if rt.is_string:
                continue
            lst = []
            for s in sorted(terms):
                st = ts[s]
                if not st.is_string or st.priority != rt.priority:
                    continue
                m = re.match(rt.regexp, _literal_value(st))
                if m and m.group(0) == _literal_value(st):
                    lst.append(s)
                    if st.flags <= rt.flags:
                        embedded.add(s)
            if lst:
                self.unless[r] = tuple(lst)
        self.ranked = frozenset(terms - embedded)
        self.shadow_only = frozenset(embedded)
        owners: dict[int, set[int]] = {}
        for r, lst in self.unless.items():
            for s in lst:
                owners.setdefault(s, set()).add(r)
        self.owners = {s: frozenset(v) for s, v in owners.items()}
        self.dependent = frozenset(grammar.ignore & terms) | frozenset(self.owners) | frozenset(self.unless)


def _literal_value(term: Terminal) -> str:
    return term.value


def build_lexer(
    grammar: LarkGrammar,
    token_bytes: np.ndarray,
    max_ignore: int = 32,
    limits: Limits | None = None,
) -> LexerAutomaton:
    """Build the product lexer. ``token_bytes[b]`` says byte ``b`` is a token on its own (liveness).

    >>> from fsm.grammar.lark import load_lark
    >>> lx = build_lexer(load_lark('start: "a" "b"'), np.ones(256, bool))
    >>> lx.n_states > 0
    True
    """
    limits = limits or DEFAULT_LIMITS
    deadline = limits.deadline()
    terms = grammar.terminals
    n_terms = len(terms)
    table = grammar.table
    dfas: list[ByteDFA] = []
    for t in terms:
        dfas.append(terminal_dfa(t, limits))
    deadline.check("grammar terminals")

    # Global byte classes: bytes no terminal (nor the sensitivity rule) tells apart share a column.
    keys = np.stack([d.byte_class for d in dfas] + [SENSITIVE.astype(np.int32)], axis=1)
    _, rep_idx, byte_class = np.unique(keys, axis=0, return_index=True, return_inverse=True)
    byte_class = byte_class.reshape(-1).astype(np.int32)
    n_cls = len(rep_idx)
    rep_byte = np.zeros(n_cls, dtype=np.int64)
    rep_byte[byte_class] = np.arange(256)
    tables = [d.table[:, d.byte_class[rep_byte]] for d in dfas]  # per terminal: (states, global classes)
    tables_l = [t.tolist() for t in tables]
    accepting = [d.accepting.tolist() for d in dfas]
    sens_cls = SENSITIVE[rep_byte]
    usable_cls = np.zeros(n_cls, dtype=bool)
    np.logical_or.at(usable_cls, byte_class, np.asarray(token_bytes, dtype=bool))
    sensitive_term = [t.unicode_sensitive for t in terms]
    ignore = grammar.ignore
    ignore_bits = sum(1 << i for i in ignore)

    # Contextual allowed sets, as lark's ContextualLexer builds them.
    set_of: dict[frozenset, int] = {}
    set_terms: list[frozenset[int]] = []
    state_set = np.zeros(len(table.action), dtype=np.int32)
    for s, row in enumerate(table.action):
        key = frozenset(t for t in row if t != table.end_term) | ignore
        if key not in set_of:
            set_of[key] = len(set_terms)
            set_terms.append(key)
        state_set[s] = set_of[key]
    after: list[set[int]] = [set() for _ in range(n_terms)]
    for s, row in enumerate(table.action):
        for t, a in row.items():
            if t != table.end_term and a >= 0:
                after[t].add(int(state_set[a]))
    roles = [_Roles(ts, grammar) for ts in set_terms]
    plain = None  # roles when the state does not depend on its set: all ranked, no shadows

    # Product states: (slots, best, aid); slots = ((terminal, dfa state), ...) sorted by terminal.
    index: dict[tuple, int] = {}
    keys_l: list[tuple] = []
    parents: list[tuple[int, int]] = []

    def intern(key: tuple, parent: int, cls: int) -> int:
        q = index.get(key)
        if q is None:
            q = len(keys_l)
            index[key] = q
            keys_l.append(key)
            parents.append((parent, cls))
            if len(keys_l) > limits.max_states:
                limits.check_states(len(keys_l), "grammar lexer")
        return q

    def step(key: tuple, c: int) -> tuple | None:
        slots, best, aid = key
        rl = roles[aid] if aid >= 0 else plain
        if sens_cls[c] and any(sensitive_term[t] for t, _ in slots):
            return None  # REJECT: lark's Unicode-aware regex might treat this byte differently
        new = []
        for t, s in slots:
            s2 = tables_l[t][s][c]
            if s2 >= 0:
                new.append((t, s2))
        if not new:
            return ()  # KILL
        ranked = rl.ranked if rl is not None else None
        for t, s2 in new:
            if (ranked is None or t in ranked) and accepting[t][s2] and (best < 0 or t < best):
                best = t
        # A slot matters while it can still win (ranked, not worse than best) or re-type a live owner.
        if rl is not None and rl.owners:
            alive = {t for t, _ in new}
            new = [
                (t, s2)
                for t, s2 in new
                if (t in ranked and (best < 0 or t <= best)) or rl.owners.get(t, frozenset()) & alive
            ]
        elif best >= 0:
            new = [(t, s2) for t, s2 in new if t <= best]
        if not new:
            return ()
        keep_aid = aid
        if aid >= 0:
            dep = rl.dependent
            if not any(t in dep for t, _ in new) and best not in dep:
                keep_aid = -1
        return (tuple(new), best, keep_aid)

    starts = []
    for a, ts in enumerate(set_terms):
        key = (tuple((t, dfas[t].initial) for t in sorted(ts)), -1, a)
        starts.append(intern(key, -1, -1))
    raw_next: list[list] = []  # per state, per class: next state id, KILL or REJECT
    i = 0
    while i < len(keys_l):
        key = keys_l[i]
        row = []
        for c in range(n_cls):
            nk = step(key, c)
            if nk is None:
                row.append(REJECT)
            elif nk == ():
                row.append(KILL)
            else:
                row.append(intern(nk, i, c))
        raw_next.append(row)
        i += 1
        if i % 256 == 0:
            deadline.check("grammar lexer")
    n = len(keys_l)
    nxt = np.array(raw_next, dtype=np.int64).reshape(n, n_cls)

    def emit_of(key: tuple) -> int:
        slots, best, aid = key
        if best < 0:
            return -1
        d = dict(slots)
        if best not in d or not accepting[best][d[best]]:
            return -1
        if aid >= 0:
            for k in roles[aid].unless.get(best, ()):
                if k in d and accepting[k][d[k]]:
                    return k
        return best

    emit = np.array([emit_of(k) for k in keys_l], dtype=np.int32)
    is_start = np.zeros(n, dtype=bool)
    is_start[starts] = True
    ign_alive = np.array([any(t in ignore for t, _ in k[0]) for k in keys_l], dtype=bool)
    non_ign_alive = np.array([any(t not in ignore for t, _ in k[0]) for k in keys_l], dtype=bool)
    examples = _examples(parents, _show_bytes(byte_class, n_cls))
    overlap = np.nonzero(ign_alive & non_ign_alive & ~is_start)[0]
    if len(overlap):
        q = int(overlap[0])
        names = sorted({terms[t].name for t, _ in keys_l[q][0]})
        raise GrammarError(
            f"an %ignore'd terminal and a grammar terminal can both match {examples[q]!r} ({', '.join(names)}); "
            "ignored terminals must not share a prefix with other terminals"
        )

    # Liveness over bytes that are tokens by themselves: from a live state some token sequence completes
    # the lexeme, so no matcher state is ever left without a next token.
    ok_edge = (nxt >= 0) & usable_cls[None, :]
    live = emit >= 0
    src, cls_ = np.nonzero(ok_edge)
    dst = nxt[src, cls_]
    live = _backward_closure(live, src, dst, n)
    pset = _psets(emit, src, dst, live, n)
    emittable = [pset[starts[a]] & ~ignore_bits for a in range(len(set_terms))]
    # restart table (state after a fresh lexeme's first byte), before pruning by need
    restart = np.full((len(set_terms), n_cls), REJECT, dtype=np.int64)
    for a in range(len(set_terms)):
        r = nxt[starts[a]]
        ok = (r >= 0) & live[np.maximum(r, 0)]
        restart[a] = np.where(ok, r, REJECT)
    need = _ignore_need(nxt, emit, ign_alive, live, usable_cls, restart, keys_l, ignore, pset, emittable, n)
    live &= ~(ign_alive & (need >= INF) & ~is_start)
    live[starts] = True
    need[starts] = 0
    for a in range(len(set_terms)):
        r = restart[a]
        restart[a] = np.where((r >= 0) & live[np.maximum(r, 0)], r, REJECT)

    # Final tables over live states only.
    keep = np.nonzero(live)[0]
    remap = np.full(n + 1, REJECT, dtype=np.int64)
    remap[keep] = np.arange(len(keep))
    trans = np.where(nxt >= 0, remap[np.where(nxt >= 0, nxt, n)], nxt)[keep]
    emit_k = emit[keep]
    trans = np.where((trans == KILL) & (emit_k[:, None] < 0), REJECT, trans).astype(np.int32)
    restart_k = np.where(restart >= 0, remap[np.where(restart >= 0, restart, n)], REJECT).astype(np.int32)
    lx = LexerAutomaton(
        grammar=grammar,
        byte_class=byte_class,
        trans=trans,
        emit=emit_k.astype(np.int32),
        ign_alive=ign_alive[keep],
        aid=np.array([keys_l[q][2] for q in keep], dtype=np.int32),
        pset=[pset[q] for q in keep],
        need=np.where(ign_alive[keep], need[keep], 0).astype(np.int32),
        restart=restart_k,
        start=remap[np.array(starts)].astype(np.int32),
        set_terms=set_terms,
        state_set=state_set,
        after=[sorted(x) for x in after],
        max_ignore=max_ignore,
        ignore_bits=ignore_bits,
        examples=[examples[q] for q in keep],
        usable_cls=usable_cls,
    )
    check_adjacency(lx, emittable)
    return lx


def _examples(parents: list[tuple[int, int]], show: np.ndarray) -> list[bytes]:
    out: list[bytes] = []
    for p, c in parents:
        out.append(b"" if p < 0 else out[p] + bytes([int(show[c])]))
    return out


def _show_bytes(byte_class: np.ndarray, n_cls: int) -> np.ndarray:
    """A representative byte per class, printable ASCII when the class has one (for messages)."""
    show = np.zeros(n_cls, dtype=np.int64)
    for b in list(range(256))[::-1]:
        show[byte_class[b]] = b
    for b in sorted(range(0x20, 0x7F), reverse=True):
        show[byte_class[b]] = b
    return show


def _backward_closure(mark: np.ndarray, src: np.ndarray, dst: np.ndarray, n: int) -> np.ndarray:
    mark = mark.copy()
    frontier = mark.copy()
    while frontier.any():
        hit = frontier[dst] & ~mark[src]
        new = np.zeros(n, dtype=bool)
        new[src[hit]] = True
        new &= ~mark
        mark |= new
        frontier = new
    return mark


def _psets(emit: np.ndarray, src: np.ndarray, dst: np.ndarray, live: np.ndarray, n: int) -> list[int]:
    """Bit set of terminals reachable as lexeme ends from each state (fixed point over edges)."""
    p = [(1 << int(e)) if e >= 0 else 0 for e in emit]
    preds: list[list[int]] = [[] for _ in range(n)]
    for s, d in zip(src.tolist(), dst.tolist()):
        if live[d]:
            preds[d].append(s)
    work = deque(q for q in range(n) if p[q])
    while work:
        d = work.popleft()
        for s in preds[d]:
            merged = p[s] | p[d]
            if merged != p[s]:
                p[s] = merged
                work.append(s)
    return p


def _ignore_need(nxt, emit, ign_alive, live, usable_cls, restart, keys_l, ignore, pset, emittable, n):
    """Min ignore bytes from each ignore state to an ignore lexeme end after which any terminal can start."""
    need = np.full(n, INF, dtype=np.int64)
    if not ignore:
        return need
    good = []
    for q in np.nonzero(ign_alive & live)[0].tolist():
        e = int(emit[q])
        if e < 0 or e not in ignore:
            continue
        a = keys_l[q][2]
        if a < 0:
            continue
        reach = 0
        for c in np.nonzero((nxt[q] == KILL) & usable_cls)[0].tolist():
            r = int(restart[a, c])
            if r >= 0 and not ign_alive[r]:
                reach |= pset[r]
        if emittable[a] & ~reach == 0:
            good.append(q)
    for q in good:
        need[q] = 0
    # reverse BFS over ignore edges: within-lexeme steps and ignore-to-ignore lexeme boundaries
    preds: list[list[int]] = [[] for _ in range(n)]
    for q in np.nonzero(ign_alive & live)[0].tolist():
        row = nxt[q]
        for c in np.nonzero(usable_cls)[0].tolist():
            d = int(row[c])
            if d >= 0 and ign_alive[d] and live[d]:
                preds[d].append(q)
            elif d == KILL and emit[q] >= 0 and int(emit[q]) in ignore:
                a = keys_l[q][2]
                r = int(restart[a, c]) if a >= 0 else -1
                if r >= 0 and ign_alive[r]:
                    preds[r].append(q)
    work = deque(good)
    while work:
        d = work.popleft()
        for s in preds[d]:
            if need[s] > need[d] + 1:
                need[s] = need[d] + 1
                work.append(s)
    return need
