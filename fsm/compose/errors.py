"""`CompositionError`: a composed spec that is malformed, naming the part at fault."""

from __future__ import annotations

from typing import Any

from ..errors import SpecError


class CompositionError(SpecError):
    """A bad part of a composed spec (empty `Alternatives`, ``min > max``, a trigger that is a
    prefix of another, a `Token` that is no single special token, a part that cannot be composed);
    ``part`` names it.

    >>> str(CompositionError("no alternatives", part="Alternatives()"))
    'Alternatives(): no alternatives'
    """

    def __init__(self, message: str, part: str = ""):
        super().__init__(f"{part}: {message}" if part else message)
        self.part = part


def describe(part: Any) -> str:
    """A short name of ``part`` for error messages (its repr, cut at 80 characters).

    >>> describe("x" * 100)[-5:]
    'xx...'
    """
    text = repr(part)
    return text if len(text) <= 80 else text[:77] + "..."
