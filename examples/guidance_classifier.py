"""Classifier guidance (FUDGE): rescore the top-k tokens the constraint allows with an attribute
classifier. The attribute here is "plain language" and the classifier a toy one that penalises long
words (any callable on a batch of texts works, as does a Hugging Face sequence-classification model
with a label); the regex keeps the output to one sentence.

    python examples/guidance_classifier.py
"""

from __future__ import annotations

import re

import fsm
import guide
from guide.guidance import ClassifierGuidance

PROMPTS = ["Explain in one sentence what photosynthesis is:", "Explain in one sentence why the sky is blue:"]


def plain_language(texts: list[str]) -> list[float]:
    """log P(plain | text): minus one per letter beyond six in each word (stands in for a trained model)."""
    return [-1.0 * sum(max(0, len(w) - 6) for w in re.findall(r"[a-zA-Z]+", t)) for t in texts]


def main() -> None:
    model = guide.load()
    sentence = fsm.Regex(r" [A-Z][a-zA-Z0-9 ,'-]{20,140}\.")
    for name, source in [
        ("plain model", model),
        ("plain-language guided", ClassifierGuidance(model, plain_language, weight=2.0, top_k=20)),
    ]:
        print(f"-- {name}")
        for prompt, out in zip(
            PROMPTS, guide.generate(source, PROMPTS, constraint=sentence, max_new_tokens=40), strict=True
        ):
            print(f"   [{plain_language([out.text])[0]:5.1f}] {prompt}{out.text}")


if __name__ == "__main__":
    main()
