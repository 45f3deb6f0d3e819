"""Proxy-tuning: a base model steered by the difference between a tuned expert and its untuned twin.
Each participant formats the prompt its own way: the expert gets the chat template, the base and the
anti-expert get the raw text; only the generated tokens are shared.

With one small model available, the "tuned expert" here is the instruct model behind its chat template
and the "untuned" ones are the same weights on raw text, so the shift is from text continuation toward
answering. With real checkpoints pass a large base and a small tuned / untuned pair of one tokenizer:
``ProxyTuning(guide.load("big-base"), Prompted(guide.load("small-chat"), chat=True),
guide.load("small-base"))``.

    python examples/guidance_proxy_tuning.py
"""

from __future__ import annotations

import fsm
import guide
from guide.guidance import Prompted, ProxyTuning

QUESTIONS = ["Give three tips for sleeping better.", "List three uses of a paperclip."]


def main() -> None:
    model = guide.load()
    source = ProxyTuning(model, Prompted(model, chat=True), model, alpha=1.0)
    numbered = fsm.Regex(
        r"\n1\. [A-Z][^\n]{5,80}\n2\. [A-Z][^\n]{5,80}\n3\. [A-Z][^\n]{5,80}"
    )  # the format, enforced
    for name, src in [("raw base", model), ("proxy-tuned", source)]:
        for q, o in zip(
            QUESTIONS, guide.generate(src, QUESTIONS, constraint=numbered, max_new_tokens=75), strict=True
        ):
            print(f"-- {name}: {q}{o.text}")


if __name__ == "__main__":
    main()
