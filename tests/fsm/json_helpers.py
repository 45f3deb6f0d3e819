"""Helpers shared by the JSON schema tests: validators and JSON-checked random walks.

The generic checkers (`accepts`, `random_walk`, `valid_walks`, `sample_char_dfa`) are in `fsm.testing`.
"""

from __future__ import annotations

import glob
import json
import os
import random

import jsonschema

import fsm
from fsm.index import Index
from fsm.json.schema import JsonSchema
from fsm.testing import accepts, valid_walks

_VALIDATORS = {
    4: jsonschema.Draft4Validator,
    6: jsonschema.Draft6Validator,
    7: jsonschema.Draft7Validator,
    2019: jsonschema.Draft201909Validator,
    2020: jsonschema.Draft202012Validator,
}


def validator(schema, draft: int | None = None, formats: bool = True):
    """The validator of ``draft`` (default: the one ``$schema`` names, else 2020-12), formats checked
    unless ``formats`` is False."""
    default = _VALIDATORS[draft or 2020]
    cls = jsonschema.validators.validator_for(schema, default=default) if draft is None else default
    return cls(schema, format_checker=cls.FORMAT_CHECKER if formats else None)


def valid_json_walks(index: Index, v, rnd: random.Random, walks: int, **opts) -> list[str]:
    """Texts of the random walks that finished (`fsm.testing.valid_walks`), each asserted to be a
    JSON document valid for the validator ``v``."""
    return valid_walks(index, rnd, walks, lambda text: v.is_valid(json.loads(text)), **opts)


def compact(value) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


_SUITE = os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "json-schema-test-suite"
)


def suite_remotes() -> dict:
    """The suite's ``remotes/`` as the suite's runners serve them: at ``http://localhost:1234/``
    (``bench_json_external.suite_remotes`` reads the shared corpora's copy the same way)."""
    root = os.path.join(_SUITE, "remotes")
    out = {}
    for path in glob.glob(os.path.join(root, "**", "*.json"), recursive=True):
        with open(path) as f:
            out["http://localhost:1234/" + os.path.relpath(path, root).replace(os.sep, "/")] = json.load(f)
    return out


BYTES = fsm.Vocabulary([bytes([i]) for i in range(256)] + [None], eos_token_ids=[256])  # a token per byte


def check_exact_verdicts(schema, docs) -> None:
    """``schema`` in exact mode over `BYTES` against ``jsonschema`` on ``docs``: nothing invalid
    accepted, a valid doc of at most one member accepted (more may come in an order the automaton
    does not read), and a refusal as empty only when no doc validates. `UnsupportedSchema` is
    left to the caller."""
    try:
        index = fsm.compile(JsonSchema(schema, exact=True), BYTES, cache=False)
    except fsm.SchemaError as exc:
        if isinstance(exc, fsm.UnsupportedSchema):
            raise
        assert "admits no JSON document" in str(exc), (schema, exc)
        assert not any(validator(schema, formats=False).is_valid(d) for d in docs), schema
        return
    v = validator(schema, formats=False)
    for doc in docs:
        ok, valid = accepts(index, compact(doc)), v.is_valid(doc)
        assert not ok or valid, ("accepted an invalid value", schema, doc)
        if not isinstance(doc, dict) or len(doc) <= 1:
            assert ok == valid, ("rejected a valid value", schema, doc)
