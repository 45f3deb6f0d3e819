"""The first request in a fresh process: no import stall on the compile path of common schemas."""

from __future__ import annotations

import subprocess
import sys

from fsm.json.schema import JsonSchema

from .json_helpers import compact

_PROBE = """
import sys, fsm
schema = {"type": "string", "enum": ["a", "bb", "ccc"], "maxLength": 2, "mergeStrategy": "x", "weight": 1}
dfa = fsm.JsonSchema(schema).to_dfa()
print(sorted(d for d in ("a", "bb", "ccc") if dfa.accepts(('"' + d + '"').encode())), "jsonschema" in sys.modules)
"""


def test_enum_with_unknown_keywords_needs_no_jsonschema_import():
    # jsonschema's import builds rfc3987_syntax's Lark parsers (seconds): a keyword of no vocabulary
    # is ignored by validators, so the literal check must not load it.
    out = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["['a',", "'bb']", "False"]


def test_literals_against_unknown_and_deferred_keywords():
    schema = {"enum": ["x", "yy", 3], "info": {"k": 1}, "then": {"type": "integer"}, "type": "string"}
    dfa = JsonSchema(schema).to_dfa()
    assert [dfa.accepts(compact(v).encode()) for v in ("x", "yy", 3)] == [True, True, False]
    # a combinator still goes to the validator: the branch decides
    schema = {"enum": ["x", "yy"], "anyOf": [{"maxLength": 1}, {"const": 7}]}
    dfa = JsonSchema(schema).to_dfa()
    assert [dfa.accepts(compact(v).encode()) for v in ("x", "yy")] == [True, False]


_PROBE_COMBINED = """
import sys, fsm
schema = {"enum": ["a", "bb", "ccc", 4], "anyOf": [{"maxLength": 1}, {"type": "integer"}],
          "not": {"const": "a"}, "allOf": [{"oneOf": [{"type": "string"}, {"minimum": 3}]}]}
dfa = fsm.JsonSchema(schema).to_dfa()
print([d for d in ('"a"', '"bb"', '"ccc"', "4") if dfa.accepts(d.encode())], "jsonschema" in sys.modules)
"""


def test_enum_under_combinators_needs_no_jsonschema_import():
    out = subprocess.run(
        [sys.executable, "-c", _PROBE_COMBINED], capture_output=True, text=True, check=True
    ).stdout
    assert out.split() == ["['4']", "False"]
