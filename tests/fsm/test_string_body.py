"""Rows from the vocabulary's string-body classes (`fsm.index.string_body`) equal the trie walk's.

Every state a valid instance visits is checked: the index's row (computed by the shortcut where the
state reads string characters, with the index's memo shared across rows) against a fresh walk of the
vocabulary trie from that state.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import fsm
from fsm.index import FINISHED, RowIndex, walk_tokens
from fsm.index.string_body import body_classes, body_row

from .schema_cases import schema_instances, visited_row_states

# strings in the shapes the shortcut must get right: free, counted (maxLength chains), bounded
# below, patterned, formatted, as keys, inside any value, with escapes in the instance
HANDMADE = [
    ({"type": "string"}, 'héllo "wörld" \\ 😀 ok'),
    ({"type": "string", "maxLength": 5}, "ab€d"),
    ({"type": "string", "minLength": 3, "maxLength": 40}, "a fairly long value with words in it"),
    ({"type": "string", "minLength": 2}, "xyz"),
    ({"type": "string", "pattern": "^[a-z ]+$"}, "only letters here"),
    ({"type": "string", "format": "date"}, "2024-02-29"),
    ({"type": "object", "additionalProperties": {"type": "integer"}}, {"some key": 1, "k\u00e9y": 2}),
    ({"type": "object", "properties": {"a": {}}, "required": ["a"]}, {"a": {"x": ["y z", "w\n"]}}),
    ({"type": "array", "items": {"type": "string", "maxLength": 3}}, ["abc", "", 'd"e']),
    ({"enum": ["alpha", "beta"]}, "beta"),
    (
        {
            "type": "object",
            "properties": {"s": {"type": "string", "maxLength": 200}, "n": {"type": "number"}},
        },
        {"s": "    indented text with     runs of spaces and punctuation!?", "n": 1.5},
    ),
]


def _cases():
    yield from ((json.dumps(s)[:40], s, json.dumps(v, ensure_ascii=False)) for s, v in HANDMADE)
    yield from schema_instances()


def _walk_pairs(index: RowIndex, state: int) -> list[tuple[int, int]]:
    _, tok, end = walk_tokens(index.dfa, np.array([state]), index.vocabulary.trie)
    return sorted(zip(tok.tolist(), end.tolist(), strict=True))


def test_shortcut_rows_equal_trie_walks(vocab, tokenizer):
    shortcut = checked = 0
    for name, index, states in visited_row_states(_cases(), vocab, tokenizer):
        for q in states:
            row = index.row(q)
            got = sorted(
                (t, e)
                for t, e in zip(row.tokens.tolist(), row.next_states.tolist(), strict=True)
                if e != FINISHED
            )
            assert got == _walk_pairs(index, q), (name, q)
            checked += 1
            if body_row(index.dfa, q, body_classes(vocab), {}) is not None:
                shortcut += 1
    assert checked > 500 and shortcut > 100, (checked, shortcut)


@pytest.mark.parametrize("max_length", [1, 2, 7])
def test_counted_strings_every_level(vocab, max_length):
    # every state of a short counted string, including the last ones (past maxLength every
    # character dies): rows equal the walk's
    index = fsm.compile(fsm.JsonSchema({"type": "string", "maxLength": max_length}), vocab, cache=False)
    index.build_all()
    for q in range(index.n_states):
        fast = body_row(index.dfa, q, body_classes(vocab), {})
        if fast is not None:
            assert sorted(zip(fast[0].tolist(), fast[1].tolist(), strict=True)) == _walk_pairs(index, q)
