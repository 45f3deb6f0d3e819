"""Warming a vocabulary up: what the first request on it would otherwise build, built ahead.

The first compile and mask on a vocabulary build tables shared by every later one (the token trie
and its depth-first numbering), load the compiled row walk (numba's disk cache, or a compile of a
few seconds on a new install) and import the front ends' lazy parts — among them ``jsonschema``,
which the first schema with an object ``enum``/``const`` or an overlapping ``oneOf`` needs and
whose import builds Lark parsers for its format checkers (3-4 s of CPU). Paid by whichever request
comes first. `warm_up` pays it at a moment of the caller's choosing (``guide.load`` does it on a
background thread), by serving one small request itself, so whatever a real request needs first
is covered without naming it here, and by importing ``jsonschema``.

It then freezes the garbage collector's heap (``gc.freeze``, as vLLM's engine does after start-up).
Compiling a schema and expanding its automaton allocate Python objects by the hundred thousand, so
the first requests trigger full collections, and each walks every tracked object in the process:
with torch and transformers imported that is half a million objects, ~0.3 s per collection, three
of them over 41 JSONSchemaBench requests — a fifth of those requests' constraint time. Frozen, the
start-up heap is never walked again (objects still die by reference counting; only cycles alive at
the freeze are kept for good).
"""

from __future__ import annotations

import contextlib
import gc
import time

import numpy as np

from .compiler import compile
from .errors import SpecError
from .json import JsonSchema
from .vocabulary import Vocabulary

_FORMATS = ("date-time", "date", "time", "email", "uri", "uuid", "ipv4", "hostname")
# Keys, a free string, a bounded string, a number, an enum, an array: the lexemes most requests hit.
_SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "code": {"type": "string", "maxLength": 8},
        # a long bounded string: its first row is kept for every later one (`index.counted_rows`)
        "note": {"type": "string", "maxLength": 1000},
        "n": {"type": "number"},
        "kind": {"enum": ["a", "b"]},
        "tags": {"type": "array", "items": {"type": "integer"}},
        # the formats most schemas use, their automata built once per process (`node_to_char_dfa`'s
        # memo): a first date-time, time or uri cost a request ~5 ms more than later ones
        **{f: {"type": "string", "format": f} for f in _FORMATS},
        "meta": {},  # any value: its scalars' automata, built once per process too
        # a pattern's negated classes: the JSON escapes of what they hold (`escapes.escape_dfa`'s
        # memo; ~1-2 ms each to build) for a class with or without the solidus, and without space
        "path": {"type": "string", "pattern": "^[^/]*/[^ ]*/[^\\s]*$"},
    },
    "required": ["name", "code", "note", "n", "kind", "tags", "meta"],
    "additionalProperties": False,
}
_INSTANCE = b'{"name":"Ada Lovelace","code":"x1","note":"Hi there","n":-1.5,"kind":"a","tags":[1,20],"meta":{"k":[true,null]}}'


def warm_up(vocab: Vocabulary, *, freeze_gc: bool = True) -> float:
    """Build ``vocab``'s shared tables by serving one small JSON request; return the seconds it took.

    ``freeze_gc``: collect, then freeze the garbage collector's heap at the end (see the module), so
    the first requests do not pay full collections of the start-up heap.

    Nothing is cached that a real request would not have cached: the request's own index is not
    kept. Safe to run on a background thread (the vocabulary's tables are built under its lock).

    A vocabulary that cannot spell the small request is warmed as far as it goes (the trie at least);
    nothing is raised.

    >>> v = Vocabulary([bytes([b]) for b in range(32, 127)] + [None], eos_token_ids=[95])
    >>> warm_up(v, freeze_gc=False) > 0
    True
    """
    t = time.perf_counter()
    import jsonschema  # noqa: F401  # lazy in fsm.json (most schemas never need it): imported here, ahead

    _ = vocab.trie  # needed by every index; built even if the request below cannot be served
    with contextlib.suppress(SpecError):  # a vocabulary that cannot write this schema: nothing more to warm
        # twice, on two indexes: a string's shape is walked on its second sighting (`index.body_rows`)
        for _ in range(2):
            _serve(vocab)
    if freeze_gc:
        gc.collect()
        gc.freeze()
    return time.perf_counter() - t


def _serve(vocab: Vocabulary) -> None:
    """One small request on ``vocab``, mask by mask, as far as single-byte tokens spell it."""
    matcher = compile(JsonSchema(_SCHEMA), vocab, cache=False).matcher()
    words = np.zeros((vocab.size + 31) // 32, dtype=np.int32)
    matcher.fill_bitmask(words)
    # walk the instance byte by byte through single-byte tokens where the vocabulary has them,
    # so string, number and array rows are computed too
    singles = {t[0]: i for i, t in enumerate(vocab.tokens) if t is not None and len(t) == 1}
    for byte in _INSTANCE:
        tid = singles.get(byte)
        if tid is None or not matcher.is_allowed(tid):
            break
        matcher.advance(tid)
        matcher.fill_bitmask(words)
