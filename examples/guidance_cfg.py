"""Classifier-free guidance: sharpen the model's dependence on the prompt (scale > 1), or push it
away from a negative prompt, under a regex that fixes the output's shape.

    python examples/guidance_cfg.py
"""

from __future__ import annotations

import fsm
import guide
from guide.guidance import ClassifierFreeGuidance

PROMPT = "A tagline for a small bakery that sells sourdough bread and cinnamon rolls:"


def main() -> None:
    model = guide.load()
    tagline = fsm.Regex(r' "[A-Z][A-Za-z ,\'!-]{10,70}[.!]"')
    sources = [
        ("plain (scale 1)", ClassifierFreeGuidance(model, scale=1.0)),
        ("CFG scale 2", ClassifierFreeGuidance(model, scale=2.0)),
        (
            "CFG scale 2, away from 'cheap'",
            ClassifierFreeGuidance(
                model, negative_prompt="A tagline about cheap, discount, low prices:", scale=2.0
            ),
        ),
    ]
    for name, source in sources:
        out = guide.generate(source, PROMPT, constraint=tagline, max_new_tokens=40)[0]
        print(f"{name:<32}{out.text}")


if __name__ == "__main__":
    main()
