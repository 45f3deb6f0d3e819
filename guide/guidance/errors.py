"""The errors of guidance sources."""

from __future__ import annotations

import fsm


class GuidanceError(ValueError):
    """A guidance source built with bad arguments, or driven by a loop that skips its rescoring.

    >>> isinstance(GuidanceError("x"), ValueError)
    True
    """


class VocabularyMismatch(GuidanceError, fsm.VocabularyError):
    """Participants of a guidance combination whose vocabularies differ on the ids they share."""
