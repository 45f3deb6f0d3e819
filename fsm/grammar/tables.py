"""The lexer automaton in the forms the grammar index's loops read fastest.

The scalar loops (advancing a token byte by byte, forced bytes, growing a walk's state table) index
Python lists, several times faster than numpy scalars; the vectorized trie walk reads numpy arrays.
Both are built once per (grammar, vocabulary) here, so the index and the walk share one copy.
"""

from __future__ import annotations

import numpy as np

from ..vocabulary import TokenTrie
from .lark import LarkGrammar
from .lexer import LexerAutomaton


class LexerTables:
    """Read-only views of a `LexerAutomaton` (per state, per byte class) and of its grammar."""

    def __init__(self, grammar: LarkGrammar, lexer: LexerAutomaton, trie: TokenTrie):
        lx = lexer
        self.max_ignore = lexer.max_ignore
        self.ignore_bits = lexer.ignore_bits
        self.pset = lexer.pset
        self.ign_alive = lexer.ign_alive
        self.is_ignore = np.zeros(grammar.n_terms + 1, dtype=bool)  # terminal -> is an %ignore one
        for t in grammar.ignore:
            self.is_ignore[t] = True
        self.n_cls = lx.trans.shape[1]
        # the vocabulary trie's bytes as this lexer's classes (for the vectorized walk)
        self.node_cls = lx.byte_class[trie.node_byte].astype(np.int64)
        self.child_start = trie.child_start.astype(np.int64)
        self.child_count = trie.child_count.astype(np.int64)
        pset_ids: dict[int, int] = {}
        self.pset_id = np.array([pset_ids.setdefault(p, len(pset_ids)) for p in lx.pset], dtype=np.int64)
        self.psets = list(pset_ids)  # distinct "terminals the lexeme can still become" sets
        self.class_size = np.bincount(lx.byte_class, minlength=self.n_cls)
        self.rep_byte = np.zeros(self.n_cls, dtype=np.int64)  # class -> its smallest byte
        self.rep_byte[lx.byte_class[::-1]] = np.arange(255, -1, -1)
        self.trans = lx.trans.tolist()
        self.restart = lx.restart.tolist()
        self.cls = lx.byte_class.tolist()
        self.emit = lx.emit.tolist()
        self.aid = lx.aid.tolist()
        self.ign = lx.ign_alive.tolist()
        self.need = lx.need.tolist()
        self.state_set = lx.state_set.tolist()
        self.start = lx.start.tolist()
        is_start = np.zeros(lx.n_states, dtype=bool)
        is_start[lx.start] = True
        self.is_start = is_start.tolist()
        # A lexeme no byte can extend ends right away: such configurations are normalized to a fresh
        # lexeme after the terminal, so their rows are never needed and equal futures share masks.
        self.final = (((lx.trans < 0).all(axis=1)) & (lx.emit >= 0)).tolist()
        self._boundary_outcomes(grammar, lexer)

    def _boundary_outcomes(self, grammar: LarkGrammar, lx: LexerAutomaton) -> None:
        """For terminal T ending before a byte of class c: the distinct lexer states the next lexeme
        starts in, each with the bit set of contextual lexer sets that lead there (CSR by T*C + c)."""
        n_terms, n_cls = grammar.n_terms, self.n_cls
        amask_ids: dict[int, int] = {}
        starts = np.zeros(n_terms * n_cls + 1, dtype=np.int64)
        out_nq: list[int] = []
        out_am: list[int] = []
        restart = lx.restart
        for t in range(n_terms):
            for c in range(n_cls):
                by_state: dict[int, int] = {}
                for a in lx.after[t]:
                    nq = int(restart[a, c])
                    if nq >= 0:
                        by_state[nq] = by_state.get(nq, 0) | (1 << a)
                for nq, am in sorted(by_state.items()):
                    out_nq.append(nq)
                    out_am.append(amask_ids.setdefault(am, len(amask_ids)))
                starts[t * n_cls + c + 1] = len(out_nq)
        self.bo_start = starts
        self.bo_nq = np.array([*out_nq, 0], dtype=np.int64)
        self.bo_am = np.array([*out_am, 0], dtype=np.int64)
        self.amasks = list(amask_ids)  # id -> bit set of contextual lexer sets
