"""The two decorators: ``@guide.structured`` on a pydantic model and ``@guide.function`` on a typed function."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

import guide

model = guide.load()


@guide.structured(model, prompt="Extract the city and its country as JSON.\nText: {text}", max_new_tokens=40)
class City(BaseModel):
    name: str = Field(max_length=30)
    country: str = Field(max_length=30)


@guide.function(model)
def sentiment(review: str) -> Literal["positive", "negative"]:
    """Classify the sentiment of this review as positive or negative.
    Review: {review}"""


@guide.function(model, max_new_tokens=8)
def add(a: int, b: int) -> int:
    """What is {a} + {b}? Reply with only the number."""


def main() -> None:
    city = City.generate(text="Last summer I flew to Paris, the capital of France.")
    assert isinstance(city, City)
    print("City.generate   ->", repr(city))
    print("sentiment(...)  ->", sentiment("I loved every minute of it."))
    print("add(2, 2)       ->", add(2, 2))
    print("prompt was:      ", repr(add.prompt(2, 2)))


if __name__ == "__main__":
    main()
