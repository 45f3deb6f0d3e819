"""Jump-forward feeds sized by cost: the width choice, and the same output whatever the width (tiny
model and the default one), and the LM head run only where a ragged feed needs logits."""

from __future__ import annotations

import json
import re

import jsonschema
import pytest
import torch

import fsm
import guide
from guide.feed_width import feed_width, makespan_width
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
        makespan_feeds=False,  # the rate widths: a large overhead feeds every jump whole
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


def test_makespan_width_feeds_wide_only_for_the_row_the_batch_waits_for():
    assert makespan_width([1] * 7 + [20], [40] * 7 + [21], overhead=12) == 1  # level after its jump
    assert makespan_width([1] * 7 + [20], [40] * 8, overhead=12) == 20  # behind: the batch waits
    assert makespan_width([3] * 8, [30] * 8, overhead=12) == 3  # every row jumps: one wide pass
    assert makespan_width([4, 1], [0, 0], overhead=0) == 1  # no fixed cost: padding never pays
    with pytest.raises(ValueError):
        makespan_width([1, 2], [3], overhead=12)


# Schemas with long forced keys of different lengths, so rows jump different distances at different
# steps, and budgets that cut some rows mid-object.
JUMPY = [
    {
        "type": "object",
        "properties": {
            "customer_full_name": {"type": "string", "maxLength": 10},
            "number_of_items_in_the_order": {"type": "integer"},
        },
        "required": ["customer_full_name", "number_of_items_in_the_order"],
        "additionalProperties": False,
    },
    {
        "type": "object",
        "properties": {"ok": {"type": "boolean"}, "color": {"enum": ["red", "green", "blue"]}},
        "required": ["ok", "color"],
        "additionalProperties": False,
    },
    {"type": "array", "items": {"type": "integer"}, "minItems": 1, "maxItems": 3},
    {
        "type": "object",
        "properties": {
            "shipping_address_of_the_customer": {
                "type": "object",
                "properties": {"postal_code_of_the_city": {"type": "string", "pattern": "^[0-9]{5}$"}},
                "required": ["postal_code_of_the_city"],
                "additionalProperties": False,
            }
        },
        "required": ["shipping_address_of_the_customer"],
        "additionalProperties": False,
    },
]


@pytest.fixture(scope="module")
def real_model():
    return guide.load()


@pytest.mark.parametrize("budget", [48, 20])
def test_greedy_tokens_are_the_same_whatever_the_feed_widths(real_model, budget):
    """The default model, a batch of different schemas (and a free row): the makespan widths, the
    rate widths and whole jumps give the same greedy tokens; only the passes' shapes differ."""
    schemas = [*JUMPY, None]
    prompts = [real_model.chat("Write one JSON object with realistic values.")] * len(schemas)
    runs, shapes = {}, {}
    for name, kw in {
        "makespan": {"makespan_feeds": True},
        "rate": {"makespan_feeds": False},
        "whole": {"makespan_feeds": False, "forward_overhead": 1e9},
        "no padding": {"makespan_feeds": False, "forward_overhead": 0.0},
    }.items():
        fsm.clear_memory_cache()
        specs = [None if s is None else fsm.JsonSchema(s) for s in schemas]
        source = _Widths(real_model)
        runner = Runner(source, prompts, specs, budget, None, None, True, {}, **kw)
        for _ in runner.steps():
            pass
        runs[name], shapes[name] = runner.completions(), source.passes
        assert runner.positions == sum(r * w for r, w in source.passes)
    for name, outs in runs.items():
        assert [o.token_ids for o in outs] == [o.token_ids for o in runs["makespan"]], name
        assert [o.finish_reason for o in outs] == [o.finish_reason for o in runs["makespan"]], name
    for schema, o in zip(schemas, runs["makespan"], strict=True):
        if schema is not None and o.finish_reason == "constraint":
            jsonschema.validate(json.loads(o.text), schema)
    assert max(w for _, w in shapes["whole"]) > 1  # some row jumped: the widths had a choice
    assert sum(r * w for r, w in shapes["makespan"]) <= sum(r * w for r, w in shapes["whole"])


def test_a_ragged_feed_runs_the_lm_head_on_each_rows_last_position_only(real_model):
    """`decode` keeps only each row's last fed position for the LM head; its logits are those
    `extend` computes at that position over the whole rectangle."""
    prompt = real_model.encode("Data:")
    fed = torch.tensor([[11, 12, 13, 14], [21, 0, 0, 0], [31, 32, 0, 0]])
    lengths = torch.tensor([4, 1, 2])
    narrow, _ = real_model.prefill([prompt] * 3)
    wide, _ = real_model.prefill([prompt] * 3)
    got = narrow.decode(fed, lengths)
    every = wide.extend(fed, lengths)
    want = every[torch.arange(3), lengths - 1]
    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)
    assert got.argmax(-1).tolist() == want.argmax(-1).tolist()
    full = torch.tensor([[5, 6], [7, 8], [9, 10]])  # equal lengths: the last column only
    assert narrow.decode(full, torch.tensor([2, 2, 2])).shape == (3, real_model.vocabulary.size)
