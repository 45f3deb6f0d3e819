"""fsm.json: JSON Schema semantics, translated into the language tree of `fsm.automata`.

Owns `$ref` resolution, per-keyword translation, formats, patterns, the Lark writer used for
left-recursive schemas, and the compile strategy that picks an automaton for a schema.

May import `fsm.automata`, the index layer and the foundation (`errors`, `limits`, `vocabulary`);
`fsm.automata` never imports it.
"""

from .schema import JsonSchema

__all__ = ["JsonSchema"]
