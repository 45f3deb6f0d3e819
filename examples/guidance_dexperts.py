"""DExperts: steer the default model positive or negative with a prompted expert and anti-expert (the
same small model behind two different prefixes, stacked in one batch), while a regex keeps every output
a single plain sentence.

    python examples/guidance_dexperts.py
"""

from __future__ import annotations

import fsm
import guide
from guide.guidance import DExperts, Prompted

POSITIVE = "The following text is extremely positive, happy, cheerful and enthusiastic:\n"
NEGATIVE = "The following text is extremely negative, angry, sad and pessimistic:\n"
PROMPTS = ["The new coffee machine in our office", "The train ride home", "My first week at the new job"]


def main() -> None:
    model = guide.load()
    happy, gloomy = Prompted(model, POSITIVE), Prompted(model, NEGATIVE)
    sentence = fsm.Regex(r" [a-zA-Z ,']{20,80}\.")
    for name, source in [
        ("base model", model),
        ("steered positive (alpha=+2)", DExperts(model, happy, gloomy, alpha=2.0)),
        ("steered negative (alpha=-2)", DExperts(model, happy, gloomy, alpha=-2.0)),
    ]:
        print(f"-- {name}")
        for prompt, out in zip(
            PROMPTS, guide.generate(source, PROMPTS, constraint=sentence, max_new_tokens=25), strict=True
        ):
            print(f"   {prompt}{out.text}")


if __name__ == "__main__":
    main()
