"""The character NFA (`fsm.automata.nfa`): what a JSON-encoded string costs in states."""

from __future__ import annotations

import json
import random

import pytest

import fsm
from fsm.automata import Alt, Cls, Enc, Lit, Members, Rep, Seq, node_nfa
from fsm.automata.budget import Budget
from fsm.automata.liveness import live_states
from fsm.automata.nfa import NFA
from fsm.testing import accepts

# a word-count pattern: its DFA has a state per word and gap, and the string's JSON escapes
# (``"``, ``\\`` and control characters in ``\S``, ``\t\n\r`` in ``\s``) lead to each of them
WORDS = {"type": "string", "pattern": "^(?:\\S+\\s+){0,59}\\S+$"}


def _bytes_vocab() -> fsm.Vocabulary:
    return fsm.Vocabulary([bytes([i]) for i in range(128)] + [None], eos_token_ids=[128])


def test_escapes_into_each_state_of_an_embedded_dfa_are_a_few_states():
    trans, *_ = node_nfa(fsm.JsonSchema(WORDS, exact=True).tree())
    # 120 pattern states: a Thompson tree of the escapes per state was ~100 states each (12,000+)
    assert len(trans) < 120 * 20, len(trans)


def test_escapes_of_an_embedded_dfa_decode_exactly():
    index = fsm.compile(fsm.JsonSchema(WORDS, exact=True), _bytes_vocab(), cache=False)
    good = ['a"b c', "a\\b\tc", "x\x01y", "one\ntwo\r\nthree", "a/b"]
    for s in good:
        assert accepts(index, json.dumps(s)), s
    assert accepts(index, '"a\\/b\\u0009c"')
    assert accepts(index, '"a\\u001fb"')  # U+001F, not whitespace: inside a word
    bad = ['"a\x01b"', '"a\\qb"', '"a\\u00zzb"', '"a\\u0020b"', '"a b "', '"a\\tb\\t"', '"a\\"']
    for s in bad:
        assert not accepts(index, s), s
    # 61 words: one too many, escaped gaps counted like raw ones
    assert not accepts(index, json.dumps("\t".join(["w"] * 61)))
    assert accepts(index, json.dumps("\t".join(["w"] * 60)))


def _random_tree(rng: random.Random, depth: int):
    """A tree of the plain constructions, with empty languages and unmeetable counts now and then."""
    kind = rng.randrange(7 if depth > 0 else 2)
    if kind == 0:
        return Lit(rng.choice(["a", "bc", '"', "\x01"]))
    if kind == 1:
        return Cls(rng.choice([((97, 99),), ((0, 0x10FFFF),), ()]))
    kids = [_random_tree(rng, depth - 1) for _ in range(rng.randrange(0, 3))]
    if kind == 2:
        return Seq(tuple(kids))
    if kind == 3:
        return Alt(tuple(kids))
    if kind == 4:
        lo = rng.randrange(3)
        return Rep(_random_tree(rng, depth - 1), lo, rng.choice([None, lo, lo + 2, lo + 30]))
    if kind == 5:
        items = tuple((k, rng.randrange(2), rng.choice([None, 1, 2])) for k in kids)
        return Members(items, Lit(","), rng.randrange(3), rng.choice([None, 0, 1, 2]))
    return Enc(_random_tree(rng, depth - 1), rng.random() < 0.5)


def test_an_nfa_said_to_have_no_dead_state_has_none():
    # `NFA.trim` skips its liveness pass when no construction flagged `maybe_dead`
    rng = random.Random(5)
    skipped = 0
    for _ in range(400):
        for counters in (False, True):
            nfa = NFA(Budget(fsm.Limits()), counters=counters)
            start = nfa.new()
            final = nfa.build(_random_tree(rng, 4), start)
            entries = nfa.counters.entries if nfa.counters is not None else ()
            live = live_states(nfa.trans, nfa.eps, final, entries)
            if not nfa.maybe_dead:
                skipped += 1
                assert all(live)
                assert nfa.trim(final) == live
    assert skipped > 100  # the check ran


def test_unmeetable_member_counts_are_flagged_and_trimmed():
    # three optional members, at least four present: no way out of the members at all
    tree = Seq((Lit("{"), Members(tuple((Lit(c), 0, 1) for c in "abc"), Lit(","), 4, None), Lit("}")))
    nfa = NFA(Budget(fsm.Limits()), counters=True)
    start = nfa.new()
    final = nfa.build(tree, start)
    assert nfa.maybe_dead
    assert not nfa.trim(final)[start]


def test_class_repeats_made_at_once_are_the_copy_by_copy_states():
    # a one-item sequence takes `_rep`'s copy-by-copy path; a bare class takes `class_copies`
    for counters in (False, True):
        for lo in range(4):
            for hi in (lo, lo + 1, lo + 2, lo + 5, lo + 23):
                for prefix in ((), (Lit("ab"),)):
                    built = []
                    for item in (Cls(((48, 57), (97, 97))), Seq((Cls(((48, 57), (97, 97))),))):
                        nfa = NFA(Budget(fsm.Limits()), counters=counters)
                        start = nfa.new()
                        end = nfa.build(Seq((*prefix, Rep(item, lo, hi), Lit("z"))), start)
                        # (finished rows are tuples where made at once: the same rows)
                        rows = [list(r) for r in nfa.trans], [list(r) for r in nfa.eps]
                        built.append((*rows, end, nfa.copies))
                    assert built[0] == built[1], (counters, lo, hi, prefix)


def test_a_huge_class_repeat_is_refused_before_its_states_are_made():
    # a plain NFA (no counter blocks) of [ab]{0,10**9}: refused by max_states up front
    nfa = NFA(Budget(fsm.Limits(max_states=10_000)))
    start = nfa.new()
    with pytest.raises(fsm.SpecTooComplex):
        nfa.build(Rep(Cls(((97, 98),)), 0, 10**9), start)
    assert len(nfa.trans) < 10_000


def test_products_are_made_once_per_process():
    # a pattern under a length (a uuid's, maxLength 36) recurs across schemas: its product is kept
    from fsm.automata import And, Minus
    from fsm.automata.nfa import small_dfa

    def hexes():
        return Rep(Cls(((48, 57), (97, 102))), 1, None)

    def is_hex(w):
        return w != "" and all(c in "0123456789abcdef" for c in w)

    cases = [
        (lambda: And((hexes(), Rep(Cls(((0, 0x10FFFF),)), 4, 4))), lambda w: is_hex(w) and len(w) == 4),
        (lambda: Minus(hexes(), frozenset({"a", "0f"})), lambda w: is_hex(w) and w not in ("a", "0f")),
        (lambda: And((hexes(), Lit("x"))), lambda w: False),
    ]
    for make, expect in cases:
        first = small_dfa(make(), Budget(fsm.Limits()))
        assert small_dfa(make(), Budget(fsm.Limits())) is first  # an equal node: the kept DFA
        for word in ("", "a", "0f", "beef", "bee", "be3f1", "x"):
            assert first.accepts(word) == expect(word), (make(), word)


def test_a_length_product_past_a_search_match_reads_every_character_alike():
    """``minLength = maxLength = 12`` with ``pattern: [0-9a-fA-F]+`` (a search): past the first hex
    digit every character leads to the next count. The pattern's states after its match are merged
    before the product (`universal.merge_universal`), so the product is the minimal one — 12 counts
    before a match and 12 after — and a row past the match reads one uniform step; unmerged, a hex
    digit and another character led to two states at each count (35 states)."""
    from fsm.automata import And
    from fsm.automata.nfa import small_dfa
    from fsm.json.patterns import pattern_node

    node = And((Rep(Cls(((0x20, 0x10FFFF),)), 12, 12), pattern_node("[0-9a-fA-F]+")))
    d = small_dfa(node, Budget(fsm.Limits()))
    assert len(d) == 24
    rng = random.Random(7)
    for _ in range(300):
        word = "".join(rng.choice("0aFgz -é") for _ in range(rng.choice([11, 12, 12, 13])))
        expect = len(word) == 12 and any(c in "0123456789abcdefABCDEF" for c in word)
        assert d.accepts(word) == expect, word
