"""The adjacency check of a built lexer: terminals the grammar puts side by side can be split.

Together with the exact per-token checks of the index, this is what makes a matcher state without a
next token impossible: it is checked once per grammar, so a bad grammar fails at compile time with
an example text instead of leaving a generation stuck.
"""

from __future__ import annotations

import numpy as np

from ..errors import GrammarError
from .lexer import KILL, LexerAutomaton


def check_adjacency(lx: LexerAutomaton, emittable: list[int]) -> None:
    """Every terminal that may follow another in the grammar must be lexable right after any end of it.

    Together with exact per-token checks this is what makes a state without a next token impossible.
    """
    g = lx.grammar
    terms = g.terminals
    ign = lx.ignore_bits
    usable = lx.usable_cls
    end = g.table.end_term

    def reach_after(q: int, a: int) -> int:
        out = 0
        for c in np.nonzero((lx.trans[q] == KILL) & usable)[0].tolist():
            r = int(lx.restart[a, c])
            if r < 0:
                continue
            if lx.ign_alive[r]:
                if lx.need[r] + 1 <= lx.max_ignore:
                    out |= emittable[a]
            else:
                out |= lx.pset[r] & ~ign
        return out

    # The first terminal of a sentence.
    a0 = int(lx.state_set[g.table.start_state])
    first = (g.first - {end}) & lx.set_terms[a0]
    direct = lx.pset[int(lx.start[a0])] & ~ign
    for u in sorted(first):
        if not direct >> u & 1:
            raise _adjacency_error(lx, emittable, "the start of the text", u, b"", a0)
    cache: dict[tuple[int, int], int] = {}
    for q in range(lx.n_states):
        t = int(lx.emit[q])
        if t < 0 or t in g.ignore:
            continue
        for a in lx.after[t]:
            needed = (g.follow.get(t, frozenset()) - {end}) & lx.set_terms[a] - g.ignore
            if not needed:
                continue
            key = (q, a)
            if key not in cache:
                cache[key] = reach_after(q, a)
            got = cache[key]
            for u in sorted(needed):
                if not got >> u & 1:
                    raise _adjacency_error(lx, emittable, terms[t].name, u, lx.examples[q], a)


def _adjacency_error(
    lx: LexerAutomaton, emittable: list[int], t_name: str, u: int, text: bytes, a: int
) -> GrammarError:
    """Why terminal ``u`` cannot be lexed after ``text`` (which ends ``t_name``) in allowed set ``a``."""
    g = lx.grammar
    terms = g.terminals
    where = f" (line {terms[u].line})" if terms[u].line else ""
    if not emittable[a] >> u & 1:
        winners = sorted(
            terms[t].name + (" (%ignore)" if t in g.ignore else "") for t in lx.set_terms[a] if t < u
        )
        return GrammarError(
            f"terminal {terms[u].name}{where} can never be lexed where the grammar expects it (after "
            f"{t_name}): lark tries {', '.join(winners) or 'other terminals'} first and they match every "
            f"text {terms[u].name} matches; give {terms[u].name} a higher priority ({terms[u].name}.2: ...) "
            "or make the patterns disjoint"
        )
    return GrammarError(
        f"terminal {terms[u].name}{where} can follow {t_name} in the grammar, but lark's lexer could never "
        f"split them after {text!r}: no byte ends {t_name} there and starts {terms[u].name}"
        f"{'' if g.ignore else ' (there is no %ignore separator)'}; add a separator to the grammar"
    )
