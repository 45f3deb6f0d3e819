"""fsm.automata: languages and automata, knowing nothing of JSON Schema, regex specs or grammars.

Owns the language tree and its algebra (`language`), number languages (`numbers`), the any-JSON-value
pushdown block (`any_value`), the translation of Python's ``re`` parse tree into the language tree
(`re_tree`), Thompson NFAs with counter and product blocks (`nfa`), byte DFAs (`byte_dfa`), the lazily
determinized DFA (`lazy_dfa`) and the pushdown automaton for recursive rules (`pushdown`).

May import only `fsm.errors`, `fsm.limits` and itself: the spec front ends (`fsm.regex`, `fsm.json`,
`fsm.grammar`) build on this package, never the other way round (tests/fsm/test_layers.py checks it).
"""

from .any_value import AnyValueBlock
from .budget import Budget
from .byte_dfa import MAX_CODEPOINT, SURROGATES, ByteDFA, codepoint_ranges_between, finish_dfa, utf8_sequences
from .char_dfa import CharDFA, complement_dfa
from .language import (
    ANY_CHAR,
    EMPTY,
    NEVER,
    Alt,
    And,
    AnyJson,
    Auto,
    Cls,
    Enc,
    Lit,
    Members,
    Minus,
    Node,
    Ranges,
    Ref,
    Rep,
    Seq,
    Val,
    alt,
    cls,
    complement,
    lit,
    normalize_ranges,
    opt,
    rep,
    seq,
    to_regex,
)
from .lazy_dfa import LazyByteDFA
from .nfa import node_nfa, node_to_char_dfa, node_to_dfa, small_dfa
from .numbers import (
    Bounds,
    decimal_range,
    divisible_integers,
    integer_node,
    integer_range,
    natural_range,
    number_node,
)
from .pushdown import LeftRecursive, pushdown_dfa
from .re_tree import Untranslatable, regex_node

__all__ = [
    "ANY_CHAR",
    "EMPTY",
    "MAX_CODEPOINT",
    "NEVER",
    "SURROGATES",
    "Alt",
    "And",
    "AnyJson",
    "AnyValueBlock",
    "Auto",
    "Bounds",
    "Budget",
    "ByteDFA",
    "CharDFA",
    "Cls",
    "Enc",
    "LazyByteDFA",
    "LeftRecursive",
    "Lit",
    "Members",
    "Minus",
    "Node",
    "Ranges",
    "Ref",
    "Rep",
    "Seq",
    "Untranslatable",
    "Val",
    "alt",
    "cls",
    "codepoint_ranges_between",
    "complement",
    "complement_dfa",
    "decimal_range",
    "divisible_integers",
    "finish_dfa",
    "integer_node",
    "integer_range",
    "lit",
    "natural_range",
    "node_nfa",
    "node_to_char_dfa",
    "node_to_dfa",
    "normalize_ranges",
    "number_node",
    "opt",
    "pushdown_dfa",
    "regex_node",
    "rep",
    "seq",
    "small_dfa",
    "to_regex",
    "utf8_sequences",
]
