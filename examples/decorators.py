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
def year_of(event: str) -> int:
    """In which year did this happen: {event}? Reply with only the year."""


def main() -> None:
    city = City.generate(text="Last summer I flew to Paris, the capital of France.")
    assert isinstance(city, City)
    print("City.generate   ->", repr(city))
    label = sentiment("I loved every minute of it.")
    assert label in ("positive", "negative")
    print("sentiment(...)  ->", label)
    year = year_of("the first Moon landing")
    assert isinstance(year, int)
    print("year_of(...)    ->", year)
    print("its prompt:      ", repr(year_of.prompt("the first Moon landing")))


if __name__ == "__main__":
    main()
