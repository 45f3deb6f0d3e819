"""Which automaton runs a JSON schema: `compile_index`, the fallback table of `JsonSchema.build_index`.

One `Budget` covers the whole compile: its deadline (``max_seconds``) and the bytes its automata
hold (``max_memory``) are shared by the translation, the NFA, the DFA rows expanded while the index
is built and, on the eager path, the materialized DFA; each step gets what the earlier ones left.
A budget error raised by an automaton names the part of the schema its size is owed to (the
smallest subschema holding more than half of the tree's positions, `largest_part`).

=====================================  ==============================================================
the schema, the vocabulary             the index
=====================================  ==============================================================
regular (no recursive ``$ref``)        the NFA (at most 100,000 states) run as a lazily determinized
                                       byte DFA: `LazyDfaIndex`
... its tree over 20 x the estimate    the pushdown path below when it has ``$ref``s or its repeated
budget (`expansion_size`)              subtrees, each built once, fit (`shared_expansion_size`: a
                                       bundled schema's inlined ``$ref``s); else refused unbuilt
... its NFA passes 100,000 states      the pushdown path below (each ``$ref`` one rule), if compact,
                                       the state budget was the one hit and under half the seconds
                                       are spent; if that path fails too, the original error
... with text checks (A-labels)       `GuardedDfaIndex`: the lazy index, its matchers run the checks
... a vocabulary the lazy index        `DfaIndex` over the materialized DFA: its eager pass prunes
cannot serve (token-level dead ends)   token-level dead ends (text checks read as failed: a subset)
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

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from ..automata import (
    Budget,
    LazyByteDFA,
    LeftRecursive,
    Node,
    expansion_size,
    largest_part,
    node_nfa,
    pushdown_dfa,
    shared_expansion_size,
)
from ..errors import GrammarError, SchemaTooComplex, SpecError, SpecTooComplex, UnsupportedSchema
from ..grammar import Grammar
from ..index import DfaIndex, LazyDfaIndex
from ..index.for_automaton import lazy_index
from ..limits import DEFAULT_LIMITS, Deadline, Limits
from ..vocabulary import Vocabulary
from .context import short_pointer
from .refs import NeedsGrammar

NFA_STATES_BEFORE_GRAMMAR = 100_000
# a schema's tree may expand to this many times max_regex_positions before it is refused unbuilt
EXPANSION_FACTOR = 20


def compile_index(spec: Any, vocab: Vocabulary, limits: Limits | None = None) -> Any:
    """The token index for the `JsonSchema` ``spec`` over ``vocab`` (see the table above)."""
    limits = limits or DEFAULT_LIMITS
    deadline = limits.deadline()

    def left() -> Limits:
        return limits.within(deadline.remaining())

    _, ng = spec.translation(limits)
    if ng is not None:
        return _via_pushdown(spec, vocab, limits, deadline, left, ng)
    tree = spec.tree()
    too_big = _estimate(tree, spec.parts, limits)
    if too_big is not None:
        # refused before the NFA: as rules ($refs not expanded, a subschema written out at each of
        # its uses built once) it may still be small
        if spec.indent is not None or not (_has_refs(spec) or _small_as_rules(tree, limits)):
            raise too_big
        try:
            return _via_pushdown(spec, vocab, limits, deadline, left, ng)
        except SpecError:
            raise too_big from None
    try:
        # A regular schema whose $refs expand past this many NFA states is cheaper as a grammar
        # (each $ref one rule): try that before giving up. Without $refs the rules would be the
        # same automaton: the NFA gets the whole state budget at once.
        cap = NFA_STATES_BEFORE_GRAMMAR if _has_refs(spec) else limits.max_states
        nfa_limits = replace(limits, max_states=min(limits.max_states, cap))
        budget = Budget(nfa_limits, deadline)
        trans, eps, start, final, _, counters = node_nfa(tree, nfa_limits, budget)
        lazy = LazyByteDFA(trans, eps, start, final, limits, counters, budget=budget.under(limits))
    except SpecTooComplex as exc:
        if spec.indent is not None or exc.budget != "max_states":
            raise _blamed(exc, tree, spec.parts) from None
        # lark's LALR construction cannot be interrupted: try the grammar only while there is
        # time left and the grammar is of a size it builds in seconds
        if deadline.remaining() < limits.max_seconds / 2:
            raise _blamed(exc, tree, spec.parts) from None
        try:
            return _via_pushdown(spec, vocab, limits, deadline, left, ng)
        except SpecError:
            raise _blamed(exc, tree, spec.parts) from None
    try:
        if LazyDfaIndex.usable(lazy, vocab):
            return lazy_index(lazy, vocab, spec.fingerprint, limits)
        if spec.any_json:  # the pushdown block has no finite table for the eager index to prune
            return _via_pushdown(spec, vocab, limits, deadline, left, ng)
        # token-level dead ends need the eager index's pruning
        return DfaIndex(
            lazy.materialize(), vocab, fingerprint=spec.fingerprint, limits=limits, deadline=deadline
        )
    except SpecTooComplex as exc:
        raise _blamed(exc, tree, spec.parts) from None


def _has_refs(spec: Any) -> bool:
    """Whether the schema uses ``$ref`` (without, its one rule is its tree: no smaller as rules)."""
    return spec.mentions("$ref")


def _small_as_rules(tree: Node, limits: Limits) -> bool:
    """Whether ``tree`` with each subtree it repeats built once is within the estimate's budget: a
    bundled schema (its ``$ref``s inlined before it reached us) is the same subschema many times."""
    return shared_expansion_size(tree) <= EXPANSION_FACTOR * limits.max_regex_positions


def _estimate(tree: Node, parts: dict[int, tuple[Node, str]], limits: Limits) -> SchemaTooComplex | None:
    """The error for a tree whose counts expand past `EXPANSION_FACTOR` x ``max_regex_positions``
    positions (``minItems`` of arrays of ``minItems`` ...: products), naming the part responsible;
    None when it is smaller. The factor leaves room for the counter blocks that run long counts
    of small items in a few states (the estimate counts them as their item only when they stand
    alone); the biggest of 1,557 regular JSONSchemaBench schemas is 666,067 positions."""
    budget = EXPANSION_FACTOR * limits.max_regex_positions
    size = expansion_size(tree, nfa=True)
    if size <= budget:
        return None
    part = largest_part(tree, parts)
    where = part[0] if part is not None else ""
    return SchemaTooComplex(
        f"the schema at {short_pointer(where)} expands to about {size:,} positions once its counts "
        f"(minItems, maxItems, maxLength, a pattern's repeats, enum values, $refs) are multiplied out, "
        f"over {EXPANSION_FACTOR} x the budget max_regex_positions={limits.max_regex_positions:,}; "
        "lower the nested counts or raise Limits.max_regex_positions",
        budget="max_regex_positions",
        limit=limits.max_regex_positions,
        pointer=where,
    )


def _blamed(exc: SpecTooComplex, tree: Node, parts: dict[int, tuple[Node, str]]) -> SchemaTooComplex:
    """``exc`` naming the subschema the automaton owes most of its size to (when it names none)."""
    if isinstance(exc, SchemaTooComplex) and exc.pointer is not None:
        return exc
    part = largest_part(tree, parts)
    if part is None:
        return SchemaTooComplex(str(exc), exc.budget, exc.limit)
    where, size = part
    sized = f", about {size:,} positions once its counts are expanded" if size >= 1000 else ""
    return SchemaTooComplex(
        f"{exc} (most of the automaton comes from the schema at {short_pointer(where)}{sized})",
        budget=exc.budget,
        limit=exc.limit,
        pointer=where,
    )


def _via_pushdown(
    spec: Any,
    vocab: Vocabulary,
    limits: Limits,
    deadline: Deadline,
    left: Callable[[], Limits],
    ng: NeedsGrammar | None,
) -> Any:
    # every $ref a rule, run by a lazily determinized pushdown automaton (json_pushdown);
    # the LALR grammar only where that cannot go (left recursion, a vocabulary that cannot
    # spell every byte on its own)
    try:
        lazy = pushdown_dfa(
            *spec.rules(left(), pushdown=True), limits=limits, budget=Budget(limits, deadline)
        )
    except LeftRecursive:
        lazy = None
    if lazy is not None and LazyDfaIndex.usable(lazy, vocab):
        return lazy_index(lazy, vocab, spec.fingerprint, limits)
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
