"""fsm.index: token indexes and matchers — where an automaton meets a vocabulary.

An index is the immutable, shareable part of a compiled constraint (per state: the allowed tokens
and where each leads); a matcher is the cheap per-sequence cursor over it. Modules, bottom first:

- `bitmask`: packed token masks (ceil(V/32) int32 words), the form samplers consume.
- `token_walk`: vectorized walks of the vocabulary's byte trie against a byte DFA.
- `contract`: `Index`, the runtime-checkable protocol every index kind meets, and `Matcher`, the one
  base class of every matcher (the whole per-sequence contract lives there).
- `rows`: `RowIndex` and `RowMatcher` — per-state rows computed on first visit, shared masks.
- `dfa`: `DfaIndex` over an eager `ByteDFA` (big regexes, schemas with token-level dead ends).
- `lazy`: `LazyDfaIndex` over a lazily determinized DFA (JSON schemas, regexes, recursive rules).
- `guarded`: `GuardedDfaIndex`, a lazy index whose automaton holds text checks (`fsm.automata.Guard`).
- `for_automaton`: which of them an automaton gets (lazy rows when exact, else eager).

The grammar index (`fsm.grammar.index.GrammarIndex`) meets the same protocol and extends the same
`Matcher` from the grammar front end.

May import `fsm.automata` and the foundation (`errors`, `limits`, `vocabulary`); the spec front
ends (`fsm.regex`, `fsm.json`, `fsm.grammar`) build their indexes from it, never the other way round.
"""

from .bitmask import frozen_bitmask, pack_bitmask, unpack_bitmask
from .contract import Index, Matcher
from .dfa import DfaIndex, RegexIndex
from .guarded import GuardedDfaIndex, GuardedMatcher
from .lazy import LazyDfaIndex
from .rows import FINISHED, Row, RowIndex, RowMatcher
from .token_walk import class_trie, tokenize_longest, walk_tokens

__all__ = [
    "FINISHED",
    "DfaIndex",
    "GuardedDfaIndex",
    "GuardedMatcher",
    "Index",
    "LazyDfaIndex",
    "Matcher",
    "RegexIndex",
    "Row",
    "RowIndex",
    "RowMatcher",
    "class_trie",
    "frozen_bitmask",
    "pack_bitmask",
    "tokenize_longest",
    "unpack_bitmask",
    "walk_tokens",
]
