"""Budgets that hold: nested counted repeats are estimated before expansion, every long loop checks
the deadline, and the automata under construction count against ``Limits.max_memory``."""

from __future__ import annotations

import time

import numpy as np
import pytest

import fsm
from fsm.automata import LazyByteDFA, check_expansion, expansion_size, lit, node_nfa, regex_node, rep
from fsm.index import LazyDfaIndex
from fsm.testing import accepts


def within_budget(limits: fsm.Limits, elapsed: float) -> bool:
    """The promise of docs/limits.md: max_seconds + 10 % + 0.5 s."""
    return elapsed <= limits.max_seconds * 1.1 + 0.5


def test_nested_counted_repeats_are_refused_before_any_automaton(vocab, monkeypatch):
    import fsm.regex.compile as regex_compile

    def no_automaton(*args, **kwargs):
        raise AssertionError("an automaton was built")

    monkeypatch.setattr(regex_compile, "node_to_dfa", no_automaton)
    monkeypatch.setattr(regex_compile, "interegular_dfa", no_automaton)
    with pytest.raises(fsm.SpecTooComplex) as info:
        fsm.compile(fsm.Regex("((a{1,100}){1,100}){1,100}"), vocab, cache=False)
    assert info.value.budget == "max_regex_positions"
    assert "(?:(?:a{1,100}){1,100}){1,100}" in str(info.value)
    assert "1,000,000" in str(info.value)


def test_nested_repeats_within_the_estimate_still_end_within_max_seconds(vocab):
    limits = fsm.Limits(max_seconds=1.0)
    started = time.monotonic()
    with pytest.raises(fsm.SpecTooComplex) as info:
        fsm.compile(fsm.Regex("(a{1,100}){1,100}"), vocab, limits=limits, cache=False)
    assert within_budget(limits, time.monotonic() - started)
    assert info.value.budget in ("max_seconds", "max_memory")
    assert "(?:a{1,100}){1,100}" in str(info.value)  # the part responsible


def test_memory_budget_counts_the_automaton_under_construction(vocab):
    limits = fsm.Limits(max_memory=8 << 20, max_seconds=60)
    started = time.monotonic()
    with pytest.raises(fsm.SpecTooComplex) as info:
        fsm.compile(fsm.Regex("(a{1,100}){1,100}"), vocab, limits=limits, cache=False)
    assert info.value.budget == "max_memory"
    assert info.value.limit == 8 << 20
    assert time.monotonic() - started < 30  # raised by the count, long before the deadline


def test_the_whole_range_class_compiles(vocab):
    index = fsm.compile(fsm.Regex("[\\x00-\\U0010ffff]{2}x"), vocab, cache=False)
    assert accepts(index, "éax")
    assert not accepts(index, "éx")


def test_expansion_estimate_multiplies_nested_counts():
    assert expansion_size(regex_node("(a{1,100}){1,100}")) == 10_000
    assert expansion_size(regex_node("[a-z]{0,100000}")) == 1  # one counter block
    assert expansion_size(regex_node("(ab|c){3}")) == 9
    small = check_expansion(regex_node("x(ab){2,30}y"), fsm.Limits(), "regex")
    assert small.size < 100 and "(?:ab){2,30}" in small.describe()
    with pytest.raises(fsm.SpecTooComplex, match="max_regex_positions=500"):
        check_expansion(regex_node("(a{1,30}){1,30}"), fsm.Limits(max_regex_positions=500), "regex")


def test_lazy_rows_on_first_visit_are_bounded(vocab):
    """A lazy DFA's expansions made by a row's walk count against that row's deadline."""
    limits = fsm.Limits(max_seconds=2.0)
    lazy = LazyByteDFA(*node_nfa(rep(rep(lit("a"), 1, 100), 1, 100), limits))
    index = LazyDfaIndex(lazy, vocab, limits=limits)
    started = time.monotonic()
    with pytest.raises(fsm.SpecTooComplex) as info:
        index.build_all()
    elapsed = time.monotonic() - started
    assert within_budget(limits, elapsed), (elapsed, str(info.value))
    assert info.value.budget in ("max_seconds", "max_memory")


def test_first_mask_of_a_lazy_index_keeps_the_limits(vocab):
    limits = fsm.Limits(max_seconds=2.0)
    lazy = LazyByteDFA(*node_nfa(rep(lit("ab"), 0, 5000), limits))
    index = LazyDfaIndex(lazy, vocab, limits=limits)
    row = np.zeros((vocab.size + 31) // 32, dtype=np.int32)
    index.matcher().fill_bitmask(row)
    assert row.any()


def test_a_grammar_of_few_lines_but_many_rules_builds_under_the_deadline():
    """Lines do not measure a grammar: one long line is built in the forked child, under the deadline."""
    from fsm.grammar.lark_fork import load_lark_bounded

    text = "start: " + " | ".join(f'"w{i}"' for i in range(800))
    assert text.count("\n") < 300 and len(text) > 4000
    started = time.monotonic()
    with pytest.raises(fsm.SpecTooComplex) as info:
        load_lark_bounded(text, seconds=0.01)
    assert info.value.budget == "max_seconds"
    assert time.monotonic() - started < 2
    assert load_lark_bounded(text, seconds=60).table.start_state >= 0
