"""What the generate loop asks of a constraint: a compiled index that hands out matchers.

`fsm.compile` returns one of several index classes (regex, lazy JSON, grammar) whose matchers share
no base class; these protocols name the part of them guide relies on, so loops, masks and the
logits processor can be typed without importing fsm's concrete classes.

>>> import fsm
>>> v = fsm.Vocabulary([b"a", b"b", None], eos_token_ids=[2])
>>> isinstance(fsm.compile(fsm.Regex("ab"), v), CompiledConstraint)
True
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, TypeAlias, runtime_checkable

import fsm

if TYPE_CHECKING:
    import numpy as np


@runtime_checkable
class TokenMatcher(Protocol):
    """One sequence's position in a constraint (an ``fsm.Matcher`` or a grammar matcher)."""

    def advance(self, token_id: int) -> None: ...

    def rollback(self, n: int = 1) -> None: ...

    def is_finished(self) -> bool: ...

    def forced_bytes(self) -> bytes: ...

    def forced_tokens(self) -> list[int]: ...

    def fill_bitmask(self, out: np.ndarray) -> None: ...

    def copy(self) -> TokenMatcher: ...


@runtime_checkable
class CompiledConstraint(Protocol):
    """An immutable compiled constraint (what `fsm.compile` returns): a matcher per sequence."""

    @property
    def vocabulary(self) -> fsm.Vocabulary: ...

    def matcher(self) -> TokenMatcher: ...


# An fsm spec (``fsm.Regex``, ``fsm.JsonSchema``…, compiled by the loop) or an already compiled index.
Constraint: TypeAlias = fsm.Spec | CompiledConstraint | None
