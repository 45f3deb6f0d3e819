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
    dfas: list[ByteDFA] = []
    for t in grammar.terminals:
        dfas.append(terminal_dfa(t, limits, deadline))
        deadline.check(f"grammar terminal {t.name}")
    product = _Product(grammar, dfas, token_bytes, limits)
    product.explore(deadline)
    product.check_ignore_overlap()
    lx = product.trimmed(max_ignore)
    check_adjacency(lx, product.emittable)
    return lx


class _Product:
    """The product of the terminals' DFAs, per contextual allowed set, explored state by state.

    Product states are ``(slots, best, aid)``: slots = ((terminal, dfa state), ...) sorted by
    terminal, ``best`` the best-ranked terminal matched so far, ``aid`` the allowed set the state
    depends on (-1 when it does not).
    """

    def __init__(self, grammar: LarkGrammar, dfas: list[ByteDFA], token_bytes: np.ndarray, limits: Limits):
        self.grammar = grammar
        self.limits = limits
        terms = grammar.terminals
        self.terms = terms
        self.dfas = dfas
        # Global byte classes: bytes no terminal (nor the sensitivity rule) tells apart share a column.
        keys = np.stack([d.byte_class for d in dfas] + [SENSITIVE.astype(np.int32)], axis=1)
        _, rep_idx, byte_class = np.unique(keys, axis=0, return_index=True, return_inverse=True)
        self.byte_class = byte_class = byte_class.reshape(-1).astype(np.int32)
        self.n_cls = n_cls = len(rep_idx)
        rep_byte = np.zeros(n_cls, dtype=np.int64)
        rep_byte[byte_class] = np.arange(256)
        # per terminal: (states, global classes)
        self.tables_l = [d.table[:, d.byte_class[rep_byte]].tolist() for d in dfas]
        self.accepting = [d.accepting.tolist() for d in dfas]
        self.sens_cls = SENSITIVE[rep_byte]
        self.usable_cls = np.zeros(n_cls, dtype=bool)
        np.logical_or.at(self.usable_cls, byte_class, np.asarray(token_bytes, dtype=bool))
        self.sensitive_term = [t.unicode_sensitive for t in terms]
        self.ignore = grammar.ignore
        self.ignore_bits = sum(1 << i for i in grammar.ignore)
        self._contextual_sets()
        self.roles = [_Roles(ts, grammar) for ts in self.set_terms]
        self.plain = None  # roles when the state does not depend on its set: all ranked, no shadows
        self.index: dict[tuple, int] = {}
        self.keys_l: list[tuple] = []
        self.parents: list[tuple[int, int]] = []

    def _contextual_sets(self) -> None:
        """Contextual allowed sets, as lark's ContextualLexer builds them."""
        table, ignore = self.grammar.table, self.ignore
        set_of: dict[frozenset, int] = {}
        self.set_terms: list[frozenset[int]] = []
        self.state_set = np.zeros(len(table.action), dtype=np.int32)
        for s, row in enumerate(table.action):
            key = frozenset(t for t in row if t != table.end_term) | ignore
            if key not in set_of:
                set_of[key] = len(self.set_terms)
                self.set_terms.append(key)
            self.state_set[s] = set_of[key]
        self.after: list[set[int]] = [set() for _ in range(len(self.terms))]
        for row in table.action:
            for t, a in row.items():
                if t != table.end_term and a >= 0:
                    self.after[t].add(int(self.state_set[a]))

    def intern(self, key: tuple, parent: int, cls: int) -> int:
        q = self.index.get(key)
        if q is None:
            q = len(self.keys_l)
            self.index[key] = q
            self.keys_l.append(key)
            self.parents.append((parent, cls))
            if len(self.keys_l) > self.limits.max_states:
                self.limits.check_states(len(self.keys_l), "grammar lexer")
        return q

    def step(self, key: tuple, c: int) -> tuple | None:
        """The product state after a byte of class ``c``: None to reject, () when every slot dies."""
        slots, best, aid = key
        rl = self.roles[aid] if aid >= 0 else self.plain
        if self.sens_cls[c] and any(self.sensitive_term[t] for t, _ in slots):
            return None  # REJECT: lark's Unicode-aware regex might treat this byte differently
        tables_l, accepting = self.tables_l, self.accepting
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

    def explore(self, deadline) -> None:
        """Every product state reachable from the allowed sets' starts; ``nxt[q, c]`` its moves."""
        self.starts = []
        for a, ts in enumerate(self.set_terms):
            key = (tuple((t, self.dfas[t].initial) for t in sorted(ts)), -1, a)
            self.starts.append(self.intern(key, -1, -1))
        raw_next: list[list] = []  # per state, per class: next state id, KILL or REJECT
        keys_l, n_cls = self.keys_l, self.n_cls
        i = 0
        while i < len(keys_l):
            key = keys_l[i]
            row = []
            for c in range(n_cls):
                nk = self.step(key, c)
                if nk is None:
                    row.append(REJECT)
                elif nk == ():
                    row.append(KILL)
                else:
                    row.append(self.intern(nk, i, c))
            raw_next.append(row)
            i += 1
            if i % 256 == 0:
                deadline.check("grammar lexer")
        self.n = n = len(keys_l)
        self.nxt = np.array(raw_next, dtype=np.int64).reshape(n, n_cls)
        self.emit = np.array([self.emit_of(k) for k in keys_l], dtype=np.int32)
        self.is_start = np.zeros(n, dtype=bool)
        self.is_start[self.starts] = True
        ignore = self.ignore
        self.ign_alive = np.array([any(t in ignore for t, _ in k[0]) for k in keys_l], dtype=bool)
        self.examples = _examples(self.parents, _show_bytes(self.byte_class, n_cls))

    def emit_of(self, key: tuple) -> int:
        """The terminal a lexeme ending in this state is (after lark's re-typing), or -1."""
        slots, best, aid = key
        if best < 0:
            return -1
        d = dict(slots)
        accepting = self.accepting
        if best not in d or not accepting[best][d[best]]:
            return -1
        if aid >= 0:
            for k in self.roles[aid].unless.get(best, ()):
                if k in d and accepting[k][d[k]]:
                    return k
        return best

    def check_ignore_overlap(self) -> None:
        """An %ignore'd terminal must not share a prefix with a grammar terminal."""
        ignore, keys_l = self.ignore, self.keys_l
        non_ign_alive = np.array([any(t not in ignore for t, _ in k[0]) for k in keys_l], dtype=bool)
        overlap = np.nonzero(self.ign_alive & non_ign_alive & ~self.is_start)[0]
        if len(overlap):
            q = int(overlap[0])
            names = sorted({self.terms[t].name for t, _ in keys_l[q][0]})
            raise GrammarError(
                f"an %ignore'd terminal and a grammar terminal can both match {self.examples[q]!r} "
                f"({', '.join(names)}); ignored terminals must not share a prefix with other terminals"
            )

    def trimmed(self, max_ignore: int) -> LexerAutomaton:
        """The automaton over the live states: from each, some token sequence completes the lexeme
        (so no matcher state is ever left without a next token) within the ignore budget."""
        nxt, emit, n, ign_alive = self.nxt, self.emit, self.n, self.ign_alive
        n_sets, starts, usable_cls = len(self.set_terms), self.starts, self.usable_cls
        ok_edge = (nxt >= 0) & usable_cls[None, :]
        src, cls_ = np.nonzero(ok_edge)
        dst = nxt[src, cls_]
        live = _backward_closure(emit >= 0, src, dst, n)
        pset = _psets(emit, src, dst, live, n)
        self.emittable = [pset[starts[a]] & ~self.ignore_bits for a in range(n_sets)]
        # restart table (state after a fresh lexeme's first byte), before pruning by need
        restart = np.full((n_sets, self.n_cls), REJECT, dtype=np.int64)
        for a in range(n_sets):
            r = nxt[starts[a]]
            restart[a] = np.where((r >= 0) & live[np.maximum(r, 0)], r, REJECT)
        need = _ignore_need(
            nxt, emit, ign_alive, live, usable_cls, restart, self.keys_l, self.ignore, pset, self.emittable, n
        )
        live &= ~(ign_alive & (need >= INF) & ~self.is_start)
        live[starts] = True
        need[starts] = 0
        for a in range(n_sets):
            r = restart[a]
            restart[a] = np.where((r >= 0) & live[np.maximum(r, 0)], r, REJECT)
        keep = np.nonzero(live)[0]
        remap = np.full(n + 1, REJECT, dtype=np.int64)
        remap[keep] = np.arange(len(keep))
        trans = np.where(nxt >= 0, remap[np.where(nxt >= 0, nxt, n)], nxt)[keep]
        emit_k = emit[keep]
        trans = np.where((trans == KILL) & (emit_k[:, None] < 0), REJECT, trans).astype(np.int32)
        return LexerAutomaton(
            grammar=self.grammar,
            byte_class=self.byte_class,
            trans=trans,
            emit=emit_k.astype(np.int32),
            ign_alive=ign_alive[keep],
            aid=np.array([self.keys_l[q][2] for q in keep], dtype=np.int32),
            pset=[pset[q] for q in keep],
            need=np.where(ign_alive[keep], need[keep], 0).astype(np.int32),
            restart=np.where(restart >= 0, remap[np.where(restart >= 0, restart, n)], REJECT).astype(
                np.int32
            ),
            start=remap[np.array(starts)].astype(np.int32),
            set_terms=self.set_terms,
            state_set=self.state_set,
            after=[sorted(x) for x in self.after],
            max_ignore=max_ignore,
            ignore_bits=self.ignore_bits,
            examples=[self.examples[q] for q in keep],
            usable_cls=usable_cls,
        )


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
    for s, d in zip(src.tolist(), dst.tolist(), strict=True):
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
