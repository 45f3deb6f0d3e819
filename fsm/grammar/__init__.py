"""fsm.grammar: Lark grammars as constraints — the grammar loader, its lexer automaton, the LR parser,
the grammar index and matcher, and the grammars shipped with the package (`builtin`).

May import `fsm.automata`, the index layer and the foundation; `fsm.automata` never imports it.
"""

from .spec import Grammar

__all__ = ["Grammar"]
