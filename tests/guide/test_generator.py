"""guide.Generator on the real default model: every output type returns a value of the right type that
validates; incomplete runs raise `Truncated`; batch, stream, chat template and guidance sources work.

Prompts are short and token budgets small: the model runs at ~15-30 tokens/s on CPU. The 135M model
is often wrong about facts; these tests check types and validity, which the constraint guarantees.
"""

from __future__ import annotations

import dataclasses
import enum
import re
from typing import Literal, Optional, Union

import jsonschema
import lark
import pytest
from pydantic import BaseModel, Field, field_validator
from typing_extensions import TypedDict

import fsm
import guide
from guide.generate import Completion
from guide.generator import default_model


@pytest.fixture(scope="module")
def model():
    return default_model()


class Person(BaseModel):
    name: str = Field(max_length=20)
    age: int = Field(ge=0, le=130)


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"
    BLUE = "blue"


@dataclasses.dataclass
class Point:
    x: int
    y: int


class Movie(TypedDict):
    title: str
    year: int


CITY = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "maxLength": 20},
        "population": {"type": "integer", "minimum": 0},
    },
    "required": ["city", "population"],
}


# -- every output type ------------------------------------------------------------------------------


def test_pydantic_model(model):
    gen = guide.Generator(model, Person, max_new_tokens=40)
    person = gen("Extract the person described in this text as JSON.\nText: Ada Lovelace, age 36.")
    assert isinstance(person, Person)
    assert Person.model_validate_json(gen.last.text) == person
    assert gen.last.finish_reason in ("eos", "constraint") and gen.last.ok


def test_json_schema_dict(model):
    gen = guide.Generator(model, CITY, max_new_tokens=40)
    value = gen("Paris has 2100000 inhabitants. Give the city and its population as JSON.")
    assert isinstance(value, dict)
    jsonschema.validate(value, CITY)


def test_regex(model):
    pattern = r"(19|20)\d{2}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])"
    gen = guide.Generator(model, guide.Regex(pattern), max_new_tokens=15)
    date = gen("The meeting is on March 3rd, 2024. Write that date in YYYY-MM-DD format.")
    assert isinstance(date, str) and re.fullmatch(pattern, date)


def test_grammar(model):
    grammar = guide.Grammar.builtin("sql")
    gen = guide.Generator(model, grammar, max_new_tokens=40, stop="\n")
    sql = gen(
        "Table users(id, name, age, city).\nWrite one SQL query. List the names of users older than 30."
    )
    assert isinstance(sql, str)
    lark.Lark(grammar.text, parser="lalr").parse(sql)


def test_literal(model):
    gen = guide.Generator(model, Literal["positive", "negative", "neutral"], max_new_tokens=5)
    label = gen(
        "Classify the sentiment of this review as positive, negative or neutral.\nReview: Lovely food!"
    )
    assert label in ("positive", "negative", "neutral")


def test_enum_returns_the_member(model):
    color = guide.Generator(model, Color, max_new_tokens=5)("What color is the sky on a clear day?")
    assert isinstance(color, Color)


def test_int(model):
    gen = guide.Generator(model, int, max_new_tokens=12)
    n = gen("What is 2+2? Reply with only the number.")
    assert type(n) is int and str(n) == gen.last.text


def test_float(model):
    x = guide.Generator(model, float, max_new_tokens=12)("What is 2.5 + 1? Reply with only the number.")
    assert type(x) is float


def test_bool(model):
    b = guide.Generator(model, bool, max_new_tokens=3)("Is Paris in France? Answer true or false.")
    assert type(b) is bool


def test_str_is_free_text(model):
    gen = guide.Generator(model, str, max_new_tokens=6)
    text = gen("Say hello.")
    assert isinstance(text, str) and text == gen.last.text
    assert gen.last.finish_reason in ("eos", "length")  # free text may stop at the budget


def test_list_of_int(model):
    xs = guide.Generator(model, list[int], max_new_tokens=30)(
        "The numbers are 4, 8 and 15. Write them as a JSON array."
    )
    assert isinstance(xs, list) and all(type(x) is int for x in xs)


def test_dict_of_str_to_int(model):
    d = guide.Generator(model, dict[str, int], max_new_tokens=30)(
        "Give the ages of Ann (30) and Bob (25) as a JSON object mapping name to age."
    )
    assert isinstance(d, dict) and all(isinstance(k, str) and type(v) is int for k, v in d.items())


def test_union(model):
    tp = Union[int, str]  # noqa: UP007 - typing.Union itself
    v = guide.Generator(model, tp, max_new_tokens=25)("What is 3 times 3?")
    assert isinstance(v, (int, str))


def test_optional(model):
    tp = Optional[bool]  # noqa: UP045 - typing.Optional itself
    v = guide.Generator(model, tp, max_new_tokens=5)("Is the sea salty? JSON true, false or null.")
    assert v is None or type(v) is bool


def test_dataclass(model):
    p = guide.Generator(model, Point, max_new_tokens=20)("Give a 2D point with x=1 and y=2 as JSON.")
    assert isinstance(p, Point) and type(p.x) is int and type(p.y) is int


def test_typed_dict(model):
    m = guide.Generator(model, Movie, max_new_tokens=30)(
        "Give the title and release year of the movie Titanic as JSON."
    )
    assert isinstance(m, dict) and isinstance(m["title"], str) and type(m["year"]) is int


# -- incomplete and invalid output ------------------------------------------------------------------


def test_truncated_carries_the_partial_text(model):
    gen = guide.Generator(model, Person, max_new_tokens=4)
    with pytest.raises(guide.Truncated) as info:
        gen("Extract the person as JSON: Ada Lovelace, age 36.")
    err = info.value
    assert err.finish_reason == "length" and len(err.token_ids) == 4 and err.max_new_tokens == 4
    assert err.text.startswith("{") and err.text == gen.last.text
    assert gen.last.error is err and gen.last.value is None and not gen.last.ok
    assert "max_new_tokens=4" in str(err)


def test_a_matching_text_cut_by_the_budget_is_still_truncated(model):
    # "1" matches \d+ but the model had not finished: only EOS or "nothing more allowed" completes a run.
    gen = guide.Generator(model, guide.Regex(r"\d+"), max_new_tokens=1)
    with pytest.raises(guide.Truncated):
        gen("Count from 1 to 20 without spaces:", raw=True)


def test_text_cut_at_a_stop_string_is_checked_against_the_constraint(model):
    gen = guide.Generator(model, guide.Regex(r"\d{4}(-\d{2})?"))
    ids = model.encode("1945-05")
    done = gen._result(Completion("1945", ids, "stop"), "p", 10)
    assert done.ok and done.value == "1945"
    cut = gen._result(Completion("19", ids, "stop"), "p", 10)
    assert isinstance(cut.error, guide.Truncated) and cut.error.finish_reason == "stop"


def test_validation_beyond_the_schema_raises_invalid_output(model):
    class Odd(BaseModel):
        n: int = Field(ge=0, le=9)

        @field_validator("n")
        @classmethod
        def never(cls, v: int) -> int:
            raise ValueError("this validator refuses every value")

    gen = guide.Generator(model, Odd, max_new_tokens=12)
    with pytest.raises(guide.InvalidOutput) as info:
        gen("Give a JSON object with a digit n.")
    assert "refuses every value" in str(info.value.cause)
    assert Odd.model_json_schema()  # the schema alone could not express the validator


# -- calls, prompts, options ------------------------------------------------------------------------


def test_batch_returns_one_value_per_prompt_and_keeps_every_result(model):
    gen = guide.Generator(model, Literal["yes", "no"], max_new_tokens=3)
    prompts = ["Is water wet? yes or no.", "Is fire cold? yes or no.", "Is the sun hot? yes or no."]
    out = gen.batch(prompts, batch_size=2)
    assert len(out) == 3 and all(v in ("yes", "no") for v in out)
    assert [r.value for r in gen.last] == out
    assert gen.batch([]) == [] and gen.last == []


def test_batch_errors_return_puts_the_exception_in_place(model):
    gen = guide.Generator(model, Person)
    prompts = ["Extract as JSON: Ada Lovelace, age 36.", "Extract as JSON: Alan Turing, age 41."]
    out = gen.batch(prompts, errors="return", max_new_tokens=[40, 3])
    assert isinstance(out[1], guide.Truncated)
    assert isinstance(out[0], (Person, guide.GenerationError))
    with pytest.raises(guide.Truncated):
        gen.batch(prompts, max_new_tokens=[40, 3])
    with pytest.raises(ValueError, match="errors"):
        gen.batch(prompts, errors="ignore")


def test_stream_yields_the_text_then_sets_the_value(model):
    gen = guide.Generator(model, Person, max_new_tokens=40)
    pieces = list(gen.stream("Extract the person as JSON.\nText: Ada Lovelace, age 36."))
    assert len(pieces) > 1
    assert "".join(pieces) == gen.last.text
    assert isinstance(gen.last.value, Person)


def test_stream_raises_truncated_after_the_last_piece(model):
    gen = guide.Generator(model, Person, max_new_tokens=3)
    pieces: list[str] = []
    with pytest.raises(guide.Truncated):
        pieces.extend(gen.stream("Extract the person as JSON: Ada, 36."))
    assert "".join(pieces) == gen.last.text


def test_chat_template_is_applied_unless_raw(model):
    gen = guide.Generator(model, Literal["yes", "no"], max_new_tokens=2)
    gen("Is snow white?")
    assert gen.last.prompt.startswith("<|im_start|>") and "Is snow white?" in gen.last.prompt
    gen("Is snow white? Answer:", raw=True)
    assert gen.last.prompt == "Is snow white? Answer:"
    gen("Is snow white?", system="Answer yes or no.")
    assert "Answer yes or no." in gen.last.prompt
    gen([{"role": "user", "content": "Is snow white?"}])
    assert gen.last.prompt.startswith("<|im_start|>")
    with pytest.raises(ValueError, match="raw=True"):
        gen([{"role": "user", "content": "x"}], raw=True)


def test_unknown_options_are_rejected_early(model):
    with pytest.raises(TypeError, match="temprature"):
        guide.Generator(model, int, temprature=0.5)
    gen = guide.Generator(model, int)
    with pytest.raises(TypeError, match="max_tokens"):
        gen("x", max_tokens=3)


def test_sampling_options_and_seed_are_reproducible(model):
    gen = guide.Generator(model, Literal["red", "green", "blue"], temperature=1.0, max_new_tokens=3)
    a = gen.batch(["Pick a color."] * 3, seed=7)
    b = gen.batch(["Pick a color."] * 3, seed=7)
    assert a == b and all(v in ("red", "green", "blue") for v in a)


def test_the_constraint_is_compiled_once(model):
    gen = guide.Generator(model, Person)
    assert gen.index is not None and gen.index.vocabulary.fingerprint == model.vocabulary.fingerprint
    assert guide.Generator(model, str).index is None


def test_a_guidance_source_works_as_the_model(model):
    from guide.guidance import ClassifierFreeGuidance

    cfg = ClassifierFreeGuidance(model, scale=1.5)
    label = guide.Generator(cfg, Literal["positive", "negative"], max_new_tokens=3)(
        "Classify the sentiment as positive or negative.\nReview: Wonderful!"
    )
    assert label in ("positive", "negative")


def test_a_model_path_loads_the_model(model_dir):
    gen = guide.Generator(str(model_dir), Literal["a", "b"], max_new_tokens=2)
    assert gen("Pick a or b.") in ("a", "b")


def test_bad_model_argument(model):
    with pytest.raises(TypeError, match=r"expected a guide\.Model"):
        guide.Generator(42, int)
    with pytest.raises(fsm.SpecError):
        guide.Generator(model, guide.Regex("(unclosed"))
