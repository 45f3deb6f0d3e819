"""Which index an automaton gets: lazy rows over its on-demand DFA when they are exact, else the
eager index over its materialized DFA.

A regex's DFA made whole before its first mask costs every state's expansion (~20 µs each: an
e-mail pattern's 171 states, 3.5 ms, where its first mask needs ~40 of them): on demand, a first
request pays only the states its rows reach, as a JSON schema's does. The eager index stays for the
automata whose lazy rows would not be exact (a state needing a byte the vocabulary spells only
inside longer tokens: `LazyDfaIndex.usable`) and for DFAs made whole elsewhere (the interegular
fallback, a disk cache entry).

>>> import fsm
>>> from fsm.automata import LazyByteDFA, alt, lit, node_nfa
>>> def kind(missing):  # every byte a token but ``missing``, and "yes"
...     tokens = [bytes([b]) for b in range(256) if b != missing] + [b"yes", None]
...     v = fsm.Vocabulary(tokens, eos_token_ids=[len(tokens) - 1])
...     return type(index_for(LazyByteDFA(*node_nfa(alt(lit("yes"), lit("no")))), v, "yes|no")).__name__
>>> kind(None), kind(ord("o"))  # after "n", no token spells "o": a lazy row would lead to a dead end
('LazyDfaIndex', 'DfaIndex')
"""

from __future__ import annotations

from ..automata import ByteDFA, LazyByteDFA
from ..errors import SpecTooComplex
from ..limits import DEFAULT_LIMITS, Deadline, Limits
from ..vocabulary import Vocabulary
from .dfa import DfaIndex
from .guarded import GuardedDfaIndex
from .lazy import LazyDfaIndex


def lazy_index(
    lazy: LazyByteDFA, vocab: Vocabulary, fingerprint: str, limits: Limits, name: str = ""
) -> LazyDfaIndex:
    """The lazy index of ``lazy``: a `GuardedDfaIndex` when its automaton holds text checks; rows
    computed later get a deadline of their own (the compile's is let go). ``name``: what a budget
    overrun while a row is made names (`fsm.index.rows.RowIndex`)."""
    kind = GuardedDfaIndex if lazy.has_guards else LazyDfaIndex
    index = kind(lazy, vocab, fingerprint=fingerprint, limits=limits, name=name)
    lazy.use_deadline(None)
    return index


def index_for(
    automaton: LazyByteDFA | ByteDFA,
    vocab: Vocabulary,
    fingerprint: str,
    limits: Limits | None = None,
    deadline: Deadline | None = None,
    name: str = "",
) -> LazyDfaIndex | DfaIndex:
    """The token index of ``automaton`` over ``vocab``: lazy when exact, else eager (``deadline``:
    the compile's, for a DFA made whole here; ``name``: what a budget overrun names, here or while
    a row is made later, e.g. ``"regex 'a+'"``)."""
    limits = limits or DEFAULT_LIMITS
    try:
        if isinstance(automaton, LazyByteDFA):
            if LazyDfaIndex.usable(automaton, vocab):
                return lazy_index(automaton, vocab, fingerprint, limits, name)
            automaton = automaton.materialize()
        return DfaIndex(
            automaton, vocab, fingerprint=fingerprint, limits=limits, deadline=deadline, name=name
        )
    except SpecTooComplex as exc:
        if not name:
            raise
        raise exc.named(name) from None
