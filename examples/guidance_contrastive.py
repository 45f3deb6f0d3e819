"""Contrastive decoding: prefer what a strong expert predicts and a weak amateur does not, among the
expert's plausible tokens. With real checkpoints use a large expert and a small amateur of the same
tokenizer; with the one small default model, the amateur is the same model deprived of the question
(it only sees a generic prefix), so the contrast favours question-specific words over generic ones.
On a 135M model the effect is small and mixed; the script shows the API and that a regex still keeps
the answer to one sentence.

    python examples/guidance_contrastive.py
"""

from __future__ import annotations

import fsm
import guide
from guide.guidance import Contrastive, Prompted

QUESTIONS = ["Describe the planet Mars in one sentence:", "Describe a violin in one sentence:"]


def main() -> None:
    model = guide.load()
    amateur = Prompted(model, "Write some generic text.\n")
    sentence = fsm.Regex(r" [A-Z][a-zA-Z0-9 ,'-]{20,140}\.")
    for name, source in [
        ("expert alone", model),
        ("contrastive", Contrastive(model, amateur, alpha=0.1, beta=0.5)),
    ]:
        for q, o in zip(
            QUESTIONS, guide.generate(source, QUESTIONS, constraint=sentence, max_new_tokens=36), strict=True
        ):
            print(f"{name:<13} {q:<44}{o.text}")


if __name__ == "__main__":
    main()
