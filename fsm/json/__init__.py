"""fsm.json: JSON Schema semantics, translated into the language tree of `fsm.automata`.

One module per concern: `schema` (the `JsonSchema` spec), `strategy` (which automaton runs a
schema: its docstring is the fallback table), `translator` (the core: mode, conjunctions, dispatch),
`context` (`Loc`, `Excluded`, what the per-keyword modules see of the translator), `refs` (``$id``,
``$ref``, the expansion stack), `keywords`, `values` (enum/const), `negation` (``not`` by keyword
groups), `value_negation` (``not`` of enum/const), `conditionals` (dependencies, ``if``/``then``/``else``), `switch` (the ``if``s testing one member's value, together), `one_of`, `strings`,
`numbers`, `objects`, `arrays`, `layout`, `bounded_any`, `formats`, `patterns`, and the Lark writer
(`lark_writer`, `lark_nodes`) used for recursive schemas.

May import `fsm.automata`, the index layer (`fsm.index`), the foundation (`errors`, `limits`,
`vocabulary`) and `fsm.grammar` (the Lark fallback for left-recursive schemas, in `strategy`); nothing
below it imports `fsm.json`.
"""

from .schema import JsonSchema

__all__ = ["JsonSchema"]
