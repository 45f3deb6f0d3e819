"""DExperts: steer the default model's reviews positive or negative with a prompted expert and
anti-expert (the same small model behind different prefixes), while a JSON schema keeps every output
a valid `Review`.

    python examples/guidance_dexperts.py
"""

from __future__ import annotations

from pydantic import BaseModel, Field

import guide
from guide.guidance import DExperts, Prompted


class Review(BaseModel):
    product: str = Field(max_length=20)
    stars: int = Field(ge=1, le=5)
    summary: str = Field(max_length=60)


POSITIVE = "The following review is glowing, delighted and enthusiastic:\n"
NEGATIVE = "The following review is furious, disappointed and bitter:\n"


def main() -> None:
    model = guide.load()
    happy, angry = Prompted(model, POSITIVE), Prompted(model, NEGATIVE)
    prompt = "Write a short product review of a coffee machine as JSON with product, stars and summary."
    for name, source in [("base model", model),
                         ("steered positive (alpha=+2)", DExperts(model, happy, angry, alpha=2.0)),
                         ("steered negative (alpha=-2)", DExperts(model, happy, angry, alpha=-2.0))]:
        review = guide.Generator(source, Review, max_new_tokens=60, temperature=0.7, seed=1)(prompt)
        assert isinstance(review, Review)  # the schema holds whatever the steering does
        print(f"{name:<28} {review!r}")


if __name__ == "__main__":
    main()
