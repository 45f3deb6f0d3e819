"""Regex specs and their minimized byte-level DFA.

A pattern (Python ``re`` syntax, full match) becomes a deterministic automaton over bytes: working
on bytes is what lets a token end in the middle of a multi-byte character. Modules:

- `spec`: the specs `Regex` and `Choice`;
- `validate`: rejects what no finite automaton can honour (with the position) and bounds size;
- `compile`: `regex_to_dfa`, by the linear-time tree path (`fsm.automata.regex_node`, Thompson NFA,
  subset construction), else by the fallback;
- `fallback`: interegular's character automaton expanded into UTF-8 byte sequences, minimized
  (Moore partition refinement, vectorized), pruned to live states, byte columns folded into classes.

Semantics: ``\\w``, ``\\d``, ``\\s`` are ASCII classes (as with ``re.ASCII`` and in ECMA-262 /
JSON Schema); ``.`` is any character but ``\\n``; everything else follows Python's ``re``.

May import `fsm.automata`, the index layer (`fsm.index`) and the foundation; `fsm.grammar` imports
it for its terminals, nothing below it does.
"""

from .compile import regex_to_dfa
from .fallback import expand_unicode_escapes
from .spec import Choice, Regex

__all__ = ["Choice", "Regex", "expand_unicode_escapes", "regex_to_dfa"]
