"""guide.structured and guide.function on the real default model."""

from __future__ import annotations

from typing import Literal

import pytest
from pydantic import BaseModel, Field

import guide
from guide.decorators import template_fields
from guide.generator import default_model


@pytest.fixture(scope="module")
def model():
    return default_model()


def test_template_fields():
    assert template_fields("a {x} b {y.attr} {x} {z[0]}") == ["x", "y", "z"]
    assert template_fields("literal {{braces}} only") == []
    with pytest.raises(ValueError, match="named"):
        template_fields("positional {}")
    with pytest.raises(ValueError, match="bad prompt template"):
        template_fields("unclosed {")


# -- structured -------------------------------------------------------------------------------------


def test_structured_with_a_template(model):
    @guide.structured(
        model, prompt="Extract the city and its country as JSON.\nText: {text}", max_new_tokens=30
    )
    class City(BaseModel):
        name: str = Field(max_length=20)
        country: str = Field(max_length=20)

    city = City.generate(text="I flew to Paris, the capital of France.")
    assert isinstance(city, City)
    gen = City.guide_generator()
    assert "I flew to Paris" in gen.last.prompt and gen.last.ok
    # One positional value fills a one-field template; other keywords are generation overrides.
    with pytest.raises(guide.Truncated):
        City.generate("Rome is in Italy.", max_new_tokens=2)
    with pytest.raises(TypeError, match="missing template field"):
        City.generate()
    with pytest.raises(TypeError, match="unknown option"):
        City.generate(text="x", colour="red")


def test_structured_generate_batch(model):
    @guide.structured(model, prompt="Give the {animal}'s number of legs as JSON.", max_new_tokens=12)
    class Legs(BaseModel):
        legs: int = Field(ge=0, le=99)

    out = Legs.generate_batch([{"animal": "dog"}, "bird"])
    assert len(out) == 2 and all(isinstance(x, Legs) for x in out)
    assert [r.prompt for r in Legs.guide_generator().last][1].count("bird") == 1


def test_structured_without_a_template_takes_the_prompt(model):
    @guide.structured(model, max_new_tokens=20)
    class Answer(BaseModel):
        ok: bool

    a = Answer.generate("Is the sky blue? Reply as JSON with the field ok.")
    assert isinstance(a, Answer)
    with pytest.raises(TypeError, match="takes one prompt"):
        Answer.generate()


def test_structured_bare_uses_the_default_model(model):
    @guide.structured
    class Flag(BaseModel):
        on: bool

    flag = Flag.generate("Is the light on? Reply as JSON with the field on.", max_new_tokens=12)
    assert isinstance(flag, Flag)
    assert Flag.guide_generator().source is model  # the process-wide default model, loaded once


def test_structured_accepts_a_guidance_source(model):
    from guide.guidance import ClassifierFreeGuidance

    @guide.structured(
        ClassifierFreeGuidance(model, scale=1.5), prompt="Is {thing} hot? Reply as JSON.", max_new_tokens=12
    )
    class Hot(BaseModel):
        hot: bool

    assert isinstance(Hot.generate(thing="the sun"), Hot)


def test_structured_rejects_bad_targets():
    with pytest.raises(TypeError, match="pydantic"):
        guide.structured(None)(dict)

    class Clash(BaseModel):
        generate: int

    with pytest.raises(TypeError, match="method names"):
        guide.structured(None)(Clash)
    with pytest.raises(TypeError, match="unknown option"):
        guide.structured(None, temprature=1)


# -- function ---------------------------------------------------------------------------------------


def test_function_returns_the_parsed_return_type(model):
    @guide.function(model)
    def sentiment(review: str) -> Literal["positive", "negative"]:
        """Classify the sentiment of this review as positive or negative.
        Review: {review}"""

    assert sentiment("I loved every minute of it.") in ("positive", "negative")
    assert sentiment.__name__ == "sentiment" and "Classify" in sentiment.__doc__
    assert sentiment.prompt("great") == (
        "Classify the sentiment of this review as positive or negative.\nReview: great"
    )


def test_function_fills_defaults_and_batches(model):
    @guide.function(model, max_new_tokens=8)
    def add(a: int, b: int = 2) -> int:
        """What is {a} + {b}? Reply with only the number."""

    assert add.prompt(3) == "What is 3 + 2? Reply with only the number."
    assert type(add(2)) is int
    out = add.batch([(1, 1), {"a": 5, "b": 5}, 7])
    assert len(out) == 3 and all(type(x) is int for x in out)
    assert add.generator().last[2].prompt.count("7 + 2") == 1


def test_function_with_a_pydantic_return_type_and_guidance(model):
    from guide.guidance import ClassifierFreeGuidance

    class Person(BaseModel):
        name: str = Field(max_length=20)
        age: int = Field(ge=0, le=130)

    @guide.function(ClassifierFreeGuidance(model, scale=1.5), max_new_tokens=30)
    def extract(text: str) -> Person:
        """Extract the person described in this text as JSON.
        Text: {text}"""

    assert isinstance(extract("Ada Lovelace, age 36."), Person)


def test_function_bare_decorator(model):
    @guide.function
    def yes_no(question: str) -> bool:
        """{question} Answer true or false."""

    assert type(yes_no("Is water wet?")) is bool
    assert yes_no.generator().source is model


def test_function_definition_errors():
    with pytest.raises(TypeError, match="docstring"):

        @guide.function(None)
        def no_doc(x: str) -> int:
            pass

    with pytest.raises(TypeError, match="return annotation"):

        @guide.function(None)
        def no_return(x: str):
            """{x}"""

    with pytest.raises(TypeError, match="not parameters"):

        @guide.function(None)
        def stray(x: str) -> int:
            """{y}"""

    with pytest.raises(guide.OutputTypeError):

        @guide.function(None)
        def bad_type(x: str) -> object():  # type: ignore[valid-type]
            """{x}"""
