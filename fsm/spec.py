"""The `Spec` protocol: what `fsm.compile` accepts.

A spec is a description of a language (a regex, a JSON Schema, a Lark grammar, a choice of strings)
that can build its token index for a vocabulary. `fsm.compile` adds the caches around
`build_index`; users call `fsm.compile`, not `build_index`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from .limits import Limits
    from .vocabulary import Vocabulary


@runtime_checkable
class Spec(Protocol):
    """A constraint that compiles to a token index.

    >>> import fsm
    >>> isinstance(fsm.Regex(r"\\d+"), fsm.Spec), isinstance("\\\\d+", fsm.Spec)
    (True, False)
    """

    @property
    def fingerprint(self) -> str:
        """A stable digest of everything that changes the language (the cache key)."""
        ...

    def build_index(self, vocab: Vocabulary, limits: Limits | None = None) -> Any:
        """The token index of this spec over ``vocab`` (uncached: `fsm.compile` caches)."""
        ...
