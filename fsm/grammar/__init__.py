"""fsm.grammar: Lark grammars as constraints.

Modules, bottom up: `lark` (load a grammar with lark: terminals, LALR table, FIRST/FOLLOW) and
`lark_fork` (the same under a deadline, in a forked child); `terminals` (each terminal's byte DFA,
checked against Python's ``re``); `lexer` (the product lexer automaton), `lexer_build` (building it)
and `lexer_check` (adjacent terminals can be split); `parser` (the LR parser over interned stacks);
`tables` (the lexer as the index's loops read it), `walk` (one lexer state's row by a trie walk),
`index` (`GrammarIndex`: masks per configuration, and its `GrammarMatcher`); `spec`
(`fsm.Grammar`) and `builtin` (the grammars shipped with the package).

May import `fsm.automata`, the index layer (`fsm.index`), the foundation and `fsm.regex` (terminal
patterns, in `terminals`); `fsm.json` imports it for its fallback, nothing below it does.
"""

from .spec import Grammar

__all__ = ["Grammar"]
