"""Classification: the output type is a ``Literal``, so the answer is always one of the labels."""

from __future__ import annotations

from typing import Literal

import guide

Sentiment = Literal["positive", "negative", "neutral"]

REVIEWS = [
    "The food was delicious and the staff were lovely.",
    "Terrible service, cold soup, never again.",
    "It was fine I guess, nothing special.",
]


def main() -> None:
    classify = guide.Generator(guide.load(), Sentiment)
    prompts = [
        f"Classify the sentiment of this review as positive, negative or neutral.\nReview: {r}"
        for r in REVIEWS
    ]
    labels = classify.batch(prompts)  # one batched run for all reviews
    for review, label in zip(REVIEWS, labels, strict=True):
        assert label in ("positive", "negative", "neutral")
        print(f"{label:>8}  {review}")


if __name__ == "__main__":
    main()
