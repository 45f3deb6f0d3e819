"""Jump-forward feeds sized by cost: the width choice, and the same output whatever the width."""

from __future__ import annotations

import re

import pytest

import fsm
import guide
from guide.feed_width import feed_width
from guide.loop import Runner

from .tiny_models import tiny_llama


@pytest.fixture(scope="module")
def model(tokenizer):
    return guide.Model.from_hf(tiny_llama(), tokenizer, pack_weights=False)


def test_width_is_one_when_one_row_jumps_far():
    assert feed_width([1] * 7 + [20], overhead=12) == 1


def test_width_covers_jumps_the_batch_shares():
    assert feed_width([6] * 8, overhead=12) == 6
    assert feed_width([6] * 7 + [1], overhead=12) == 6


def test_large_overhead_feeds_every_jump_whole():
    assert feed_width([1, 1, 30], overhead=1e9) == 30


def test_width_needs_rows():
    with pytest.raises(ValueError):
        feed_width([], overhead=1)


class _Widths:
    """A LogitsSource wrapper recording each decode pass's (rows, width)."""

    def __init__(self, inner):
        self.inner, self.passes, self.prefills = inner, [], []
        self.vocabulary, self.tokenizer = inner.vocabulary, inner.tokenizer

    @property
    def device(self):
        return self.inner.device

    def encode(self, text):
        return self.inner.encode(text)

    def prefill(self, prompts):
        self.prefills.append([len(p) for p in prompts])
        session, logits = self.inner.prefill(prompts)
        return _WidthSession(self, session), logits


class _WidthSession:
    def __init__(self, source, inner):
        self.source, self.inner = source, inner

    @property
    def n_rows(self):
        return self.inner.n_rows

    def decode(self, tokens, lengths=None):
        self.source.passes.append(tuple(tokens.shape))
        return self.inner.decode(tokens, lengths)

    def keep(self, rows):
        self.inner.keep(rows)


def _run(model, overhead):
    long_key = fsm.Regex(r'\{"n": [0-9], "a_rather_long_key_that_the_matcher_forces_whole": [0-9]\}')
    short = fsm.Regex(r"[a-z]{40}")  # rows that outlive the jump
    source = _Widths(model)
    runner = Runner(
        source,
        ["Number:", "Word:", "Word:", "Word:"],
        [short, long_key, short, short],
        60,
        None,
        None,
        True,
        {},
        forward_overhead=overhead,
    )
    for _ in runner.steps():
        pass
    return runner.completions(), source.passes


def test_narrow_feeds_keep_every_token_and_cut_padding(model):
    narrow, narrow_passes = _run(model, overhead=0.0)
    whole, whole_passes = _run(model, overhead=1e9)
    pattern = r'\{"n": [0-9], "a_rather_long_key_that_the_matcher_forces_whole": [0-9]\}'
    assert re.fullmatch(pattern, narrow[1].text) and re.fullmatch(pattern, whole[1].text)
    # the same tokens (greedy), whether the forced ones went in one wide pass or one per pass
    assert [c.token_ids for c in narrow] == [c.token_ids for c in whole]
    assert max(w for r, w in whole_passes if r > 1) > 5  # the long key fed in one padded pass
    # ... or, at no fixed cost, one position a pass while other rows share it (alone, whole)
    assert max(w for r, w in narrow_passes if r > 1) == 1
    padded = sum(r * w for r, w in whole_passes)
    fed = sum(r * w for r, w in narrow_passes)
    assert fed < padded


def test_a_shared_prompt_is_prefilled_once_and_the_starts_fed_after(model):
    specs = [fsm.Regex(r'\{"name": "[a-z]{3,8}"\}'), fsm.Regex(r'\["[0-9]{2}"\]'), None]
    source = _Widths(model)
    together = guide.generate(source, ["Data:"] * 3, constraint=specs, max_new_tokens=30)
    assert len(source.prefills) == 1 and len(source.prefills[0]) == 1  # one row, copied
    alone = [guide.generate(model, "Data:", constraint=c, max_new_tokens=30)[0] for c in specs]
    assert [o.token_ids for o in together] == [o.token_ids for o in alone]
    assert re.fullmatch(specs[0].pattern, together[0].text)
    assert re.fullmatch(specs[1].pattern, together[1].text)


def test_overhead_is_checked(model):
    with pytest.raises(ValueError, match="forward_overhead"):
        Runner(model, ["a"], None, 4, None, None, True, {}, forward_overhead=-1.0)
    assert guide.generate(model, "a", max_new_tokens=2)[0].token_ids  # the default still runs
