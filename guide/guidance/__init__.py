"""Guidance as logits sources: steer one model with others or with a classifier, under any constraint.

Each class here is a `LogitsSource` (see `guide.sources`), so ``guide.generate`` masks, samples and
batches it exactly as it does a plain `Model`:

* `Prompted(model, prefix)` — the model with a fixed prefix (text, or a system turn through the chat
  template) before every prompt, or with every prompt re-rendered through its chat template; one small
  model can so serve as its own expert and anti-expert.
* `DExperts` (Liu et al. 2021): ``top_p_filter(z_base) + alpha * (z_expert - z_antiexpert)``.
* `ProxyTuning` (Liu et al. 2024): ``z_base + alpha * (z_expert - z_antiexpert)``.
* `ClassifierFreeGuidance` (Sanchez et al. 2023): ``scale * (ls(z_cond) - ls(z_uncond)) + ls(z_uncond)``.
* `ClassifierGuidance` (FUDGE, Yang & Klein 2021): top-k candidates rescored by ``log P(attr | prefix+tok)``.
* `Contrastive` (Li et al. 2023): ``ls(z_exp) - beta * ls(z_ama)`` on the plausibility head.

Participants that wrap the same model object (``Prompted(m, ...)``, ``m`` itself, the CFG branches) are
stacked into one batch with one KV cache, so three participants on one model cost one wider forward
pass per step, not three. Participants must share a vocabulary (`VocabularyMismatch` otherwise); a
padded logits width is truncated to the shared part.

Truncations (DExperts' nucleus on the base, the contrastive plausibility head, FUDGE's top-k) must see
the constraint: a nucleus cut before the mask can remove every token the grammar allows. So sessions
return the untruncated combination from ``decode`` and truncate in ``rescore(masked_logits)``, which
the generate loop calls after masking (tokens the mask removed are ``-inf`` there; the combination
itself is always finite). `rescore_masked` is that hook for loops that hold a session.
"""

from __future__ import annotations

from .classifier import ClassifierGuidance
from .combination import nucleus_filter
from .errors import GuidanceError, VocabularyMismatch
from .methods import ClassifierFreeGuidance, Contrastive, DExperts, ProxyTuning
from .session import GuidedSession, rescore_masked, shared_width
from .views import Prompted

__all__ = [
    "ClassifierFreeGuidance",
    "ClassifierGuidance",
    "Contrastive",
    "DExperts",
    "GuidanceError",
    "GuidedSession",
    "Prompted",
    "ProxyTuning",
    "VocabularyMismatch",
    "nucleus_filter",
    "rescore_masked",
    "shared_width",
]
