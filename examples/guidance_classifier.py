"""Classifier guidance (FUDGE): rescore the top-k tokens the constraint allows with an attribute
classifier. The classifier here is a tiny formality scorer (any callable on a batch of texts works, as
does a Hugging Face sequence-classification model with a label); the regex keeps the output one sentence.

    python examples/guidance_classifier.py
"""

from __future__ import annotations

import math
import re

import fsm
import guide
from guide.guidance import ClassifierGuidance

INFORMAL = {"gonna", "wanna", "hey", "yeah", "cool", "guys", "stuff", "kinda", "lol", "awesome", "super", "ok"}
FORMAL = {"therefore", "furthermore", "regards", "sincerely", "kindly", "please", "however", "accordingly",
          "consequently", "dear", "respectfully", "would", "shall"}


def formal_logprob(texts: list[str]) -> list[float]:
    """log P(formal | text) from word counts: a stand-in for a trained classifier."""
    out = []
    for t in texts:
        words = re.findall(r"[a-z]+", t.lower())
        score = 1.5 * sum(w in FORMAL for w in words) - 1.5 * sum(w in INFORMAL for w in words)
        out.append(-math.log1p(math.exp(-score)))
    return out


def main() -> None:
    model = guide.load()
    sentence = fsm.Regex(r" [A-Z][a-zA-Z ,']{15,90}\.")
    prompt = "A message to my team about the meeting moving to Friday:"
    for name, source in [("plain", model),
                         ("formal-guided", ClassifierGuidance(model, formal_logprob, weight=4.0, top_k=20))]:
        out = guide.generate(source, prompt, constraint=sentence, max_new_tokens=30)[0]
        print(f"{name:<14} log P(formal)={formal_logprob([out.text])[0]:6.2f} {out.text}")


if __name__ == "__main__":
    main()
