"""Which automaton runs a JSON schema: `compile_index`, the fallback table of `JsonSchema.build_index`.

One seconds budget covers the whole compile; each step gets what the earlier ones left.

=====================================  ==============================================================
the schema, the vocabulary             the index
=====================================  ==============================================================
regular (no recursive ``$ref``)        the NFA (at most 100,000 states) run as a lazily determinized
                                       byte DFA: `LazyDfaIndex`
... its NFA passes 100,000 states      the pushdown path below (each ``$ref`` one rule), if compact,
                                       the state budget was the one hit and under half the seconds
                                       are spent; if that path fails too, the original error
... a vocabulary the lazy index        `DfaIndex` over the materialized DFA: its eager pass prunes
cannot serve (token-level dead ends)   token-level dead ends
... with an unbounded any-value        the pushdown path (an ``AnyJson`` block has no finite table
(``{}``) and such a vocabulary         to prune)
recursive ``$ref``                     the pushdown path
pushdown path                          every ``$ref`` a rule, run by a lazily determinized pushdown
                                       automaton: `LazyDfaIndex`
... left-recursive rules, or a         the Lark grammar (`to_grammar`) and its LALR `GrammarIndex`;
vocabulary it cannot serve             a grammar the engine cannot enforce exactly (alternatives that
                                       only a later token tells apart) is `UnsupportedSchema`
=====================================  ==============================================================

>>> from fsm.json.schema import JsonSchema
>>> from fsm.vocabulary import Vocabulary
>>> vocab = Vocabulary([b"1", b"2", b"12", b"</s>"], eos_token_ids=[3])
>>> type(compile_index(JsonSchema({"enum": [1, 12]}), vocab)).__name__  # cannot spell every byte
'DfaIndex'
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from ..automata import LazyByteDFA, LeftRecursive, node_nfa, pushdown_dfa
from ..errors import GrammarError, SchemaTooComplex, SpecError, UnsupportedSchema
from ..grammar import Grammar
from ..index import DfaIndex, LazyDfaIndex
from ..limits import DEFAULT_LIMITS, Limits
from ..vocabulary import Vocabulary
from .refs import NeedsGrammar

NFA_STATES_BEFORE_GRAMMAR = 100_000


def compile_index(spec: Any, vocab: Vocabulary, limits: Limits | None = None) -> Any:
    """The token index for the `JsonSchema` ``spec`` over ``vocab`` (see the table above)."""
    limits = limits or DEFAULT_LIMITS
    started = time.monotonic()

    def left() -> Limits:
        return limits.within(limits.max_seconds - (time.monotonic() - started))

    _, ng = spec.translation(limits)
    if ng is not None:
        return _via_pushdown(spec, vocab, limits, left, ng)
    try:
        # A regular schema whose $refs expand past this many NFA states is cheaper as a grammar
        # (each $ref one rule): try that before giving up.
        nfa_limits = replace(left(), max_states=min(limits.max_states, NFA_STATES_BEFORE_GRAMMAR))
        trans, eps, start, final, _, counters = node_nfa(spec.tree(), nfa_limits)
        lazy = LazyByteDFA(trans, eps, start, final, limits, counters)
    except SchemaTooComplex as exc:
        if spec.indent is not None or exc.budget != "max_states":
            raise
        # lark's LALR construction cannot be interrupted: try the grammar only while there is
        # time left and the grammar is of a size it builds in seconds
        if time.monotonic() - started > limits.max_seconds / 2:
            raise
        try:
            return _via_pushdown(spec, vocab, limits, left, ng)
        except SpecError:
            raise exc from None
    if LazyDfaIndex.usable(lazy, vocab):
        return LazyDfaIndex(lazy, vocab, fingerprint=spec.fingerprint, limits=limits)
    if spec.any_json:  # the pushdown block has no finite table for the eager index to prune
        return _via_pushdown(spec, vocab, limits, left, ng)
    # token-level dead ends need the eager index's pruning
    return DfaIndex(lazy.materialize(), vocab, fingerprint=spec.fingerprint, limits=limits)


def _via_pushdown(
    spec: Any, vocab: Vocabulary, limits: Limits, left: Callable[[], Limits], ng: NeedsGrammar | None
) -> Any:
    # every $ref a rule, run by a lazily determinized pushdown automaton (json_pushdown);
    # the LALR grammar only where that cannot go (left recursion, a vocabulary that cannot
    # spell every byte on its own)
    try:
        lazy = pushdown_dfa(*spec.rules(left(), pushdown=True), limits=left())
    except LeftRecursive:
        lazy = None
    if lazy is not None and LazyDfaIndex.usable(lazy, vocab):
        lazy.limits = limits
        return LazyDfaIndex(lazy, vocab, fingerprint=spec.fingerprint, limits=limits)
    try:
        text = spec.to_grammar(left())
        return Grammar(text).build_index(vocab, limits, seconds=left().max_seconds)
    except GrammarError as exc:
        raise UnsupportedSchema(
            f"this schema is not regular ({ng}), and its grammar is not one the engine can enforce "
            f"exactly (alternatives that only a later token tells apart): {exc}",
            "anyOf" if "ambiguous" in str(exc) else None,
            ng.pointer if ng else "",
        ) from None
