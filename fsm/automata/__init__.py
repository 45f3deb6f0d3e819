"""fsm.automata: languages and automata, knowing nothing of JSON Schema, regex specs or grammars.

Modules, bottom layer first (each imports only modules listed above it):

- `ranges`: code point sets as sorted disjoint ranges, and their algebra.
- `language`: the language tree (`Node` types) and its smart constructors.
- `lengths`: word lengths of a tree (shortest word; repeats a length cap makes open-ended, `conjoin`).
- `escapes`: JSON string escapes, written once (tree, trie and NFA fragment).
- `numbers`: number languages, `multiples`: ``multipleOf``, `exponents`: numbers spelled with an
  exponent, by value; `any_value`: the any-JSON-value pushdown block.
- `regex_dialect`: PCRE/ECMA regex syntax Python lacks (``(?<name>``, ``\\p{L}``...) in Python's.
- `re_tree`: Python's ``re`` parse tree -> language tree, in the ASCII or the ECMA flavour.
- `budget`: the time/size budget of one construction; `byte_dfa`: `ByteDFA`, UTF-8 byte
  sequences, table finishing and equal-row merging; `copies`: the states of a counted repeat's
  copies a subset can drop; `char_dfa`: `CharDFA` and subset
  construction, complement, trim, product, difference with words; `boolean_dfa`: and, or, not and
  exactly-one of character DFAs, each result minimized.
- `blocks`: virtual NFA states (counter and product blocks); `remainders`: the lazy remainder block
  of a big ``multipleOf``; `liveness`: which NFA states can
  still finish; `spelling`: whether single-byte tokens finish from every state; `byte_classes`:
  the lazy DFA's columns; `utf8_chains`: the states inside a UTF-8 character (made when read);
  `state_sets`: the lazy DFA's states as closed NFA state sets; `lazy_dfa`: the lazily
  determinized byte DFA.
- `class_repeats`: counted copies of a character class, made at once;
  `members`: the NFA of a `Members` node (an object's properties, any subset in order, counted);
  `nfa`: the Thompson NFA of a tree, and small character DFAs through it (`small_dfa`).
- `build`: a tree's automaton under limits (`node_nfa`, `trimmed_nfa`, `node_lazy_dfa`, `node_to_dfa`).
- `eliminate`: character DFA -> plain tree (state elimination); `regex_text`: tree -> regex text.
- `shared`: values a tree holds in several places as rules (equal subtrees made one first).
- `estimate`: a tree's expanded size before anything is built (`expansion_size`, `check_expansion`,
  `largest_part`, `shared_expansion_size`: with repeated subtrees built once).
- `pushdown`: the pushdown automaton for recursive rules.

May import only `fsm.errors`, `fsm.limits` and itself: the spec front ends (`fsm.regex`, `fsm.json`,
`fsm.grammar`) build on this package, never the other way round.
"""

from .any_value import AnyValueBlock
from .boolean_dfa import dfa_and, dfa_not, dfa_or, exactly_one
from .budget import Budget
from .build import materialized, node_lazy_dfa, node_nfa, node_to_dfa
from .byte_dfa import ByteDFA, codepoint_ranges_between, finish_dfa, utf8_sequences
from .char_dfa import CharDFA, complement_dfa, minimize_dfa, trim_dfa
from .estimate import Expansion, check_expansion, expansion_size, largest_part, shared_expansion_size
from .language import (
    EMPTY,
    NEVER,
    Alt,
    And,
    AnyJson,
    Auto,
    Cls,
    Enc,
    Guard,
    Lit,
    Members,
    Minus,
    Multiples,
    Node,
    Ref,
    Rep,
    Seq,
    Val,
    alt,
    cls,
    lit,
    opt,
    rep,
    seq,
)
from .lazy_dfa import LazyByteDFA
from .multiples import (
    TooManyRemainders,
    divisible_decimals,
    divisible_integers,
    integer_residues,
    non_multiples,
)
from .nfa import node_to_char_dfa, small_dfa
from .numbers import (
    MAX_INTEGER_DIGITS,
    Bounds,
    decimal_range,
    integer_node,
    integer_range,
    natural_range,
    number_node,
)
from .pushdown import LeftRecursive, pushdown_dfa
from .ranges import ANY_CHAR, MAX_CODEPOINT, SURROGATES, Ranges, complement, normalize_ranges
from .re_tree import Flavor, InnerAnchor, Translator, UnknownCategory, Untranslatable, fold, regex_node
from .re_tree import parse as parse_regex
from .regex_dialect import to_python_syntax, unicode_property
from .regex_text import to_regex

__all__ = [
    "ANY_CHAR",
    "EMPTY",
    "MAX_CODEPOINT",
    "MAX_INTEGER_DIGITS",
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
    "Expansion",
    "Flavor",
    "Guard",
    "InnerAnchor",
    "LazyByteDFA",
    "LeftRecursive",
    "Lit",
    "Members",
    "Minus",
    "Multiples",
    "Node",
    "Ranges",
    "Ref",
    "Rep",
    "Seq",
    "TooManyRemainders",
    "Translator",
    "UnknownCategory",
    "Untranslatable",
    "Val",
    "alt",
    "check_expansion",
    "cls",
    "codepoint_ranges_between",
    "complement",
    "complement_dfa",
    "decimal_range",
    "dfa_and",
    "dfa_not",
    "dfa_or",
    "divisible_decimals",
    "divisible_integers",
    "exactly_one",
    "expansion_size",
    "finish_dfa",
    "fold",
    "integer_node",
    "integer_range",
    "integer_residues",
    "largest_part",
    "lit",
    "materialized",
    "minimize_dfa",
    "natural_range",
    "node_lazy_dfa",
    "node_nfa",
    "node_to_char_dfa",
    "node_to_dfa",
    "non_multiples",
    "normalize_ranges",
    "number_node",
    "opt",
    "parse_regex",
    "pushdown_dfa",
    "regex_node",
    "rep",
    "seq",
    "shared_expansion_size",
    "small_dfa",
    "to_python_syntax",
    "to_regex",
    "trim_dfa",
    "unicode_property",
    "utf8_sequences",
]
