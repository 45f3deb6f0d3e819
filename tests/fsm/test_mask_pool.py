"""`fsm.MaskPool`: a batch's matchers in worker processes give the masks the same matchers give in
process, on the real SmolLM2 vocabulary, and their errors are the in-process ones."""

from __future__ import annotations

import os
import signal

import numpy as np
import pytest

import fsm
from fsm.testing import tokens_of

SPECS = {
    0: (
        fsm.JsonSchema({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}),
        '{"name":"Ada Lovelace"}',
    ),
    1: (fsm.Regex(r"[0-9]{3}-[a-z]+"), "123-abc"),
    2: (
        fsm.JsonSchema({"type": "array", "items": {"type": "integer", "minimum": 3}, "maxItems": 4}),
        "[3,40,512]",
    ),
    3: (fsm.JsonSchema({"enum": ["red", "green", {"rgb": [1, 2, 3]}]}), '{"rgb":[1,2,3]}'),
    4: (fsm.Choice(["yes", "no", "maybe later"]), "maybe later"),
}


@pytest.fixture(scope="module")
def pool(vocab):
    with fsm.MaskPool(vocab, rows=8, workers=2) as p:
        yield p


def _mask(matcher, vocab) -> np.ndarray:
    out = np.zeros((vocab.size + 31) // 32, np.int32)
    matcher.fill_bitmask(out)
    return out


def test_pool_masks_are_the_in_process_masks_along_each_walk(pool, vocab, tokenizer):
    pool.open({row: spec for row, (spec, _) in SPECS.items()})
    assert pool.open_rows == sorted(SPECS)
    local = {row: fsm.compile(spec, vocab).matcher() for row, (spec, _) in SPECS.items()}
    walks = {row: tokens_of(local[row].index, text, tokenizer) for row, (_, text) in SPECS.items()}
    for step in range(max(len(w) for w in walks.values()) + 1):
        masks = pool.masks()
        for row, m in local.items():
            np.testing.assert_array_equal(masks[row], _mask(m, vocab), err_msg=f"row {row} step {step}")
        tokens = {row: w[step] for row, w in walks.items() if step < len(w)}
        for row, token in tokens.items():
            local[row].advance(token)
        if tokens:
            pool.advance(tokens)
    status = pool.status(sorted(SPECS))
    assert all(accepting for accepting, _ in status.values()), status
    assert not masks[5:].any()  # rows never opened stay zeros
    pool.reset([1])
    np.testing.assert_array_equal(pool.masks()[1], _mask(fsm.compile(SPECS[1][0], vocab).matcher(), vocab))
    pool.close(sorted(SPECS))
    assert pool.open_rows == []
    assert not pool.masks().any()


def test_a_bad_spec_raises_its_in_process_error_naming_the_row(pool):
    with pytest.raises(fsm.RegexError) as info:
        pool.open({6: fsm.Regex("(ab"), 7: fsm.Regex("ok")})
    assert any("row 6" in note for note in info.value.__notes__)
    assert pool.open_rows == [7]  # the other spec of the same call compiled
    bad = {"type": "string", "pattern": "^((ab|c){1,300}x){1,300}$"}
    with pytest.raises(fsm.SchemaTooComplex) as info:
        pool.open({6: fsm.JsonSchema(bad)})
    assert info.value.budget == "max_regex_positions"
    assert info.value.pointer == "/pattern"
    pool.close([7])


def test_a_rejected_token_closes_its_row_only(pool, vocab, tokenizer):
    pool.open({0: fsm.Regex("[0-9]+"), 1: fsm.Regex("[a-z]+")})
    digit, letter = (
        tokenizer.encode("7", add_special_tokens=False)[0],
        tokenizer.encode("q", add_special_tokens=False)[0],
    )
    pool.advance({0: letter, 1: letter})
    with pytest.raises(fsm.TokenRejected) as info:
        pool.masks()
    assert info.value.token_id == letter
    assert any("row 0" in note for note in info.value.__notes__)
    assert pool.open_rows == [1]
    masks = pool.masks()
    assert not masks[0].any()
    m = fsm.compile(fsm.Regex("[a-z]+"), vocab).matcher()
    m.advance(letter)
    np.testing.assert_array_equal(masks[1], _mask(m, vocab))
    with pytest.raises(KeyError):
        pool.advance({0: digit})
    with pytest.raises(IndexError):
        pool.open({8: fsm.Regex("a")})
    pool.close([1])


def test_a_worker_that_dies_is_a_pool_error_not_a_hang(vocab):
    with fsm.MaskPool(vocab, rows=2, workers=1, reply_timeout=60) as pool:
        pool.open({0: fsm.Regex("a+")})
        os.kill(pool.pids[0], signal.SIGKILL)
        with pytest.raises(fsm.MaskPoolError, match=r"exited|gone"):
            pool.status([0])
    with pytest.raises(fsm.MaskPoolError, match="shut down"):
        pool.open({0: fsm.Regex("a")})
