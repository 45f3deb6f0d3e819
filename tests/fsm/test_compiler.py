"""fsm.compile: spec dispatch, clear errors for wrong inputs, choices."""

from __future__ import annotations

import pytest

import fsm


def test_plain_string_is_rejected_with_advice(vocab):
    with pytest.raises(fsm.SpecError, match=r"fsm\.Regex"):
        fsm.compile("abc", vocab)


def test_unknown_object_rejected(vocab):
    with pytest.raises(fsm.SpecError, match="cannot compile"):
        fsm.compile(42, vocab)


def test_vocabulary_type_checked():
    with pytest.raises(TypeError, match="Vocabulary"):
        fsm.compile(fsm.Regex("a"), object())


def test_choice(vocab, tokenizer):
    m = fsm.compile(fsm.Choice(["red", "green", "a.b"]), vocab, cache=False).matcher()
    for t in tokenizer.encode("a.b", add_special_tokens=False):
        m.advance(t)
    assert m.is_finished()
    with pytest.raises(fsm.RegexError):
        fsm.Choice("red")
    with pytest.raises(fsm.RegexError):
        fsm.Choice([])
    with pytest.raises(fsm.RegexError):
        fsm.Choice(["a", 3])


def test_regex_type_checked():
    with pytest.raises(fsm.RegexError, match="str"):
        fsm.Regex(b"abc")


def test_fsm_never_imports_torch():
    import subprocess
    import sys

    code = "import fsm, sys; fsm.Regex('a'); assert 'torch' not in sys.modules and 'transformers' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_memory_cache_keeps_to_its_budget(vocab, monkeypatch):
    """Past the byte budget the least recently used indexes are dropped at once (the running
    byte count passes the budget), the newest always kept; under it every index stays."""
    import fsm.compiler as compiler

    compiler.clear_memory_cache()
    for i in range(5):
        fsm.compile(fsm.Regex(f"a{i}b"), vocab)
    assert compiler.memory_cache_info().entries == 5
    one = compiler.memory_cache_info().nbytes // 5
    monkeypatch.setattr(compiler, "_MEMORY_BUDGET", 2 * one + one // 2)
    fsm.compile(fsm.Regex("a9b"), vocab)
    info = compiler.memory_cache_info()
    assert 1 <= info.entries <= 3 and info.nbytes <= 3 * one
    newest = fsm.compile(fsm.Regex("a9b"), vocab)  # kept: a hit, the same object
    assert fsm.compile(fsm.Regex("a9b"), vocab) is newest
    compiler.clear_memory_cache()
    assert compiler.memory_cache_info().entries == 0
