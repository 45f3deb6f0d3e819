"""``fsm.Grammar``: a context-free constraint written in Lark's grammar language.

The output must be a sentence of the grammar, lexed exactly as lark's LALR(1) parser lexes it:
every text a matcher lets through is accepted by ``lark.Lark(text, parser="lalr")``. See
docs/grammars.md for the lexing rules, the ``%ignore`` policy and what is rejected.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass

from ..errors import GrammarError
from ..limits import DEFAULT_LIMITS, Limits
from ..vocabulary import Vocabulary
from .builtin import load
from .index import GrammarIndex
from .lark_fork import load_lark_bounded
from .lexer_build import build_lexer


@dataclass(frozen=True)
class Grammar:
    """A Lark grammar spec. ``max_ignore`` bounds the bytes of ``%ignore`` text between two terminals.

    >>> Grammar('start: "a"+').start
    'start'
    """

    lark_text: str
    start: str = "start"
    max_ignore: int = 32

    def __post_init__(self):
        if not isinstance(self.lark_text, str):
            raise GrammarError(f"a grammar must be lark text (str), got {type(self.lark_text).__name__}")
        if not isinstance(self.start, str) or not self.start:
            raise GrammarError("start must be the name of a rule, e.g. start='start'")
        if not isinstance(self.max_ignore, int) or self.max_ignore < 1:
            raise GrammarError(f"max_ignore must be a positive int, got {self.max_ignore!r}")

    @property
    def fingerprint(self) -> str:
        h = hashlib.sha256(
            f"{self.start}\x00{self.max_ignore}\x00{self.lark_text}".encode("utf-8", "surrogatepass")
        )
        return "grammar:" + h.hexdigest()[:32]

    def build_index(
        self, vocab: Vocabulary, limits: Limits | None = None, seconds: float | None = None
    ) -> GrammarIndex:
        """The token index; ``seconds`` bounds lark's table construction (default: the limits' budget)."""
        limits = limits or DEFAULT_LIMITS
        started = time.monotonic()
        seconds = seconds or limits.max_seconds
        g = load_lark_bounded(self.lark_text, self.start, seconds, limits.max_memory)
        # one budget for the whole build: the lexer gets what lark left of it
        lexer = build_lexer(
            g,
            vocab.single_bytes,
            max_ignore=self.max_ignore,
            limits=limits.within(seconds - (time.monotonic() - started)),
        )
        return GrammarIndex(g, lexer, vocab, fingerprint=self.fingerprint, limits=limits)

    @classmethod
    def builtin(cls, name: str, **options) -> Grammar:
        """One of the grammars shipped in ``fsm/grammars`` (json, arithmetic, sql).

        >>> Grammar.builtin("json").start
        'start'
        """
        return cls(load(name), **options)
