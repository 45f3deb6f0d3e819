"""The grammar's lexer as one byte automaton that reproduces lark's contextual lexer, conservatively.

lark lexes with a first-match rule: at each position, the terminals allowed in the current parser
state (plus ``%ignore`` ones) are tried in a fixed order and the first one that matches wins, with
Python's match length. This module builds the product of the terminals' byte DFAs, per allowed set,
so that a lexeme ends exactly where lark's would:

* a lexeme ends only when the next byte kills every terminal that could still win (maximal munch,
  no backtracking). Text that lark would split after backtracking is never produced — conservative;
* the terminal emitted is the best-ranked one that matched some prefix, and it must match the whole
  lexeme (else lark would have cut it shorter): any other ending is rejected;
* string terminals that lark removes from the scanner because a regex terminal covers them (keywords
  inside NAME) are tracked as shadows and re-typed at the end, as lark's ``UnlessCallback`` does;
* the allowed set of the next lexeme is the contextual lexer's set of the parser state after the
  emitted terminal: the automaton state of a fresh lexeme depends on the parser, so boundaries are
  left to the caller (``restart[set, byte class]``);
* terminals whose Python regex also matches non-ASCII text (``\\w``, ``\\d``, ``\\s``, case folding) never
  see a non-ASCII byte while they are alive, so the ASCII DFA and lark cannot disagree.

``%ignore`` runs are bounded: at most ``max_ignore`` bytes between two grammar terminals.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .lark import LarkGrammar

KILL = -2  # every terminal that could still win dies on this byte: the lexeme may end here
REJECT = -1
INF = 1 << 30


@dataclass
class LexerAutomaton:
    """Product lexer. States are live lexemes in progress; ``trans[q, byte_class[b]]`` -> next or KILL/REJECT."""

    grammar: LarkGrammar
    byte_class: np.ndarray  # (256,) global byte classes
    trans: np.ndarray  # (n_states, n_classes) int32: state, KILL (lexeme may end before this byte) or REJECT
    emit: np.ndarray  # (n_states,) terminal the lexeme is if it ends here, -1 if it cannot end here
    ign_alive: np.ndarray  # (n_states,) bool: the lexeme may still be an %ignore terminal
    aid: np.ndarray  # (n_states,) allowed-set id the state depends on (-1: set-independent)
    pset: list[int]  # per state: bit set of terminals the lexeme can still become
    need: np.ndarray  # (n_states,) ignore bytes still needed to close the ignore run cleanly (0 if none)
    restart: np.ndarray  # (n_sets, n_classes) int32: state after a fresh lexeme's first byte, or REJECT
    start: np.ndarray  # (n_sets,) the empty-lexeme state of each allowed set
    set_terms: list[frozenset[int]]  # allowed set id -> terminal ids
    state_set: np.ndarray  # (n_lr_states,) allowed set of each LR state
    after: list[list[int]]  # terminal -> allowed set ids possible right after it is shifted
    max_ignore: int
    ignore_bits: int
    examples: list[bytes]  # a text reaching each state (for error messages)
    usable_cls: np.ndarray  # (n_classes,) bool: some byte of the class is a token on its own

    @property
    def n_states(self) -> int:
        return int(self.trans.shape[0])
