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
