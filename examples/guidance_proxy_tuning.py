"""Proxy-tuning: a base model steered by the difference between a tuned expert and its untuned twin.
Each participant formats the prompt its own way: the expert gets the chat template, the base and the
anti-expert get the raw text; only the generated tokens are shared.

With one small model available, the "tuned expert" here is the instruct model behind its chat template
and the "untuned" ones are the same weights on raw text. With real checkpoints pass a large base and a
small tuned / untuned pair of the same tokenizer:
``ProxyTuning(guide.load("big-base"), Prompted(guide.load("small-chat"), chat=True), guide.load("small-base"))``.

    python examples/guidance_proxy_tuning.py
"""

from __future__ import annotations

import fsm
import guide
from guide.guidance import Prompted, ProxyTuning

QUESTIONS = ["Q: Is the Pacific larger than the Atlantic ocean?\nA:",
             "Q: Can penguins fly?\nA:",
             "Q: Is water made of hydrogen and oxygen?\nA:"]


def main() -> None:
    model = guide.load()
    source = ProxyTuning(model, Prompted(model, chat=True), model, alpha=1.0)
    answer = fsm.Regex(r" (Yes|No)\. [A-Z][a-z ,']{10,60}\.")  # the answer format, enforced
    for name, src in [("raw base", model), ("proxy-tuned", source)]:
        outs = guide.generate(src, QUESTIONS, constraint=answer, max_new_tokens=30)
        for q, o in zip(QUESTIONS, outs):
            print(f"{name:<12} {q.splitlines()[0]!r:<52} ->{o.text}")


if __name__ == "__main__":
    main()
