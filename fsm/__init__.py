"""fsm: specs (regex, JSON Schema, Lark grammar, choice) -> automata -> token indexes -> matchers.

Never imports torch or transformers: it only needs a `Vocabulary`. Layers, bottom up (an import only
points down; tests/fsm/test_layers.py checks it): the foundation (`errors`, `limits`, `vocabulary`,
`cache`, `spec`), `fsm.automata` (languages and automata, no spec), `fsm.index` (token indexes and
matchers), the spec front ends (`fsm.regex`, `fsm.grammar`, `fsm.json`), then `compiler` and `testing`.

>>> import fsm
>>> v = fsm.Vocabulary([b"1", b"2", b"12", None], eos_token_ids=[3])
>>> m = fsm.compile(fsm.Regex(r"\\d+"), v).matcher()
>>> m.advance(2); m.is_accepting()
True
"""

from .automata import ByteDFA
from .compiler import VERSION as __version__
from .compiler import clear_memory_cache, compile, save
from .compose import (
    Alternatives,
    CompositionError,
    Literal,
    Repeat,
    Sequence,
    Tag,
    Text,
    Token,
    Triggered,
)
from .errors import (
    GrammarError,
    RegexError,
    SchemaError,
    SchemaTooComplex,
    SpecError,
    SpecTooComplex,
    TokenRejected,
    UnsupportedSchema,
    VocabularyError,
)
from .grammar import Grammar
from .grammar import builtin as grammars  # the shipped grammars' old home: `from fsm import grammars`
from .index import Index, Matcher, RegexIndex, pack_bitmask, unpack_bitmask
from .json import JsonSchema
from .limits import Limits
from .mask_pool import MaskPool, MaskPoolError
from .regex import Choice, Regex, regex_to_dfa
from .spec import Spec
from .vocabulary import Vocabulary
from .warm import warm_up

__all__ = [
    "Alternatives",
    "ByteDFA",
    "Choice",
    "CompositionError",
    "Grammar",
    "GrammarError",
    "Index",
    "JsonSchema",
    "Limits",
    "Literal",
    "MaskPool",
    "MaskPoolError",
    "Matcher",
    "Regex",
    "RegexError",
    "RegexIndex",
    "Repeat",
    "SchemaError",
    "SchemaTooComplex",
    "Sequence",
    "Spec",
    "SpecError",
    "SpecTooComplex",
    "Tag",
    "Text",
    "Token",
    "TokenRejected",
    "Triggered",
    "UnsupportedSchema",
    "Vocabulary",
    "VocabularyError",
    "__version__",
    "clear_memory_cache",
    "compile",
    "grammars",
    "pack_bitmask",
    "regex_to_dfa",
    "save",
    "unpack_bitmask",
    "warm_up",
]
