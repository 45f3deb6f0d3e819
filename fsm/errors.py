"""Every error the fsm layer raises on purpose. All bad-spec errors derive from `SpecError`."""

from __future__ import annotations


class SpecError(ValueError):
    """Base of every error caused by a bad or unsupported spec (regex, schema, grammar, choice).

    >>> isinstance(RegexError("x"), SpecError)
    True
    """


class RegexError(SpecError):
    """A regex that cannot be parsed or uses syntax no automaton can honour (backreferences, lookarounds)."""


class SchemaError(SpecError):
    """A JSON schema that is invalid (wrong keyword types, dangling ``$ref``, unsatisfiable constraints)."""


class UnsupportedSchema(SchemaError):
    """A valid JSON schema that uses a keyword this library cannot enforce exactly; names keyword and pointer."""

    def __init__(self, message: str, keyword: str | None = None, pointer: str | None = None):
        super().__init__(message)
        self.keyword = keyword
        self.pointer = pointer


class GrammarError(SpecError):
    """A Lark grammar that cannot be parsed or honoured; names the rule and line where known."""


class SpecTooComplex(SpecError):
    """A spec whose automaton exceeds a budget (states, compile time, memory); names the budget."""

    def __init__(self, message: str, budget: str | None = None, limit: float | None = None):
        super().__init__(message)
        self.budget = budget
        self.limit = limit

    def named(self, what: str) -> SpecTooComplex:
        """This overrun as a `SpecTooComplex` whose message starts with ``what`` (the spec or the part
        of one it happened in), the same budget and limit.

        >>> SpecTooComplex("over 5 states", budget="max_states", limit=5).named("regex 'a'").args[0]
        "regex 'a': over 5 states"
        """
        return SpecTooComplex(f"{what}: {self}", budget=self.budget, limit=self.limit)


class SchemaTooComplex(SpecTooComplex, SchemaError):
    """A JSON schema whose automaton exceeds a budget; ``.pointer``: the part of the schema
    responsible, where known (a JSON pointer, ``""`` for the root)."""

    def __init__(
        self, message: str, budget: str | None = None, limit: float | None = None, pointer: str | None = None
    ):
        super().__init__(message, budget, limit)
        self.pointer = pointer


class TokenRejected(ValueError):
    """A token id outside the matcher's current mask was passed to ``Matcher.advance``."""

    def __init__(self, token_id: int, message: str | None = None):
        super().__init__(message or f"token {token_id} is not allowed in the matcher's current state")
        self.token_id = token_id

    def __reduce__(self):
        # pickled with its id (a `fsm.MaskPool` worker sends it back): ``args`` holds the message only
        return (type(self), (self.token_id, str(self)), self.__dict__)


class VocabularyError(ValueError):
    """A tokenizer that cannot be turned into a byte-exact vocabulary."""
