"""fsm: specs (regex, JSON Schema, Lark grammar, choice) -> automata -> token indexes -> matchers.

Never imports torch or transformers: it only needs a `Vocabulary`.

>>> import fsm
>>> v = fsm.Vocabulary([b"1", b"2", b"12", None], eos_token_ids=[3])
>>> m = fsm.compile(fsm.Regex(r"\\d+"), v).matcher()
>>> m.advance(2); m.is_accepting()
True
"""

from .automata import ByteDFA
from .bitmask import pack_bitmask, unpack_bitmask
from .compiler import VERSION as __version__
from .compiler import clear_memory_cache, compile, save
from .dfa_index import RegexIndex
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
from .index import Index
from .limits import Limits
from .matcher import Matcher
from .regex import Choice, Regex, regex_to_dfa
from .spec import Spec
from .vocabulary import Vocabulary


def __getattr__(name):
    # Specs built by sibling modules load lazily so a missing optional piece never breaks `import fsm`.
    if name == "JsonSchema":
        from .json.schema import JsonSchema

        return JsonSchema
    if name == "Grammar":
        from .grammar.spec import Grammar

        return Grammar
    if name == "grammars":  # the shipped grammars' old home, kept for `from fsm import grammars`
        from .grammar import builtin

        return builtin
    raise AttributeError(f"module 'fsm' has no attribute {name!r}")


__all__ = [
    "ByteDFA",
    "Choice",
    "GrammarError",
    "Index",
    "Limits",
    "Matcher",
    "RegexError",
    "RegexIndex",
    "Regex",
    "SchemaError",
    "SchemaTooComplex",
    "Spec",
    "SpecError",
    "SpecTooComplex",
    "TokenRejected",
    "UnsupportedSchema",
    "Vocabulary",
    "VocabularyError",
    "clear_memory_cache",
    "compile",
    "pack_bitmask",
    "regex_to_dfa",
    "save",
    "unpack_bitmask",
    "JsonSchema",
    "Grammar",
]
