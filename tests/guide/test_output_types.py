"""guide.output_types: Python types -> fsm specs, and text -> validated values (no model needed)."""

from __future__ import annotations

import dataclasses
import enum
from typing import Literal, Optional, Union

import pytest
from pydantic import BaseModel, Field, ValidationError
from typing_extensions import TypedDict

import fsm
from guide.output_types import Grammar, OutputTypeError, builtin_grammars, describe, output_type, to_jsonable


class Person(BaseModel):
    name: str = Field(max_length=20)
    age: int = Field(ge=0, le=130)


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Level(enum.Enum):
    LOW = 1
    HIGH = 2


@dataclasses.dataclass
class Point:
    x: int
    y: int


class Movie(TypedDict):
    title: str
    year: int


def accepts(kind, text: str) -> bool:
    """Whether the spec of an output type accepts ``text`` (through its byte DFA)."""
    spec = kind.spec
    dfa = spec.to_dfa() if hasattr(spec, "to_dfa") else fsm.regex_to_dfa(spec.to_regex())
    return dfa.accepts(text.encode())


def test_literal_strings_are_a_plain_text_choice():
    kind = output_type(Literal["positive", "negative"])
    assert isinstance(kind.spec, fsm.Choice)
    assert kind.spec.options == ("positive", "negative")
    assert kind.parse("negative") == "negative"
    with pytest.raises(KeyError):
        kind.parse("neutral")


def test_literal_mixed_values_parse_back_to_their_types():
    kind = output_type(Literal["a", 1, True, None])
    assert kind.spec.options == ("a", "1", "true", "null")
    assert kind.parse("1") == 1 and type(kind.parse("1")) is int
    assert kind.parse("true") is True
    assert kind.parse("null") is None


def test_literal_values_with_equal_text_are_told_apart_by_json():
    kind = output_type(Literal["1", 1])
    assert kind.spec.options == ('"1"', "1")
    assert kind.parse('"1"') == "1" and kind.parse("1") == 1


def test_enum_uses_string_values_and_returns_members():
    kind = output_type(Color)
    assert kind.spec.options == ("red", "green")
    assert kind.parse("green") is Color.GREEN


def test_enum_with_non_string_values_uses_names():
    kind = output_type(Level)
    assert kind.spec.options == ("LOW", "HIGH")
    assert kind.parse("HIGH") is Level.HIGH


def test_scalars():
    assert output_type(str).spec is None
    b = output_type(bool)
    assert b.parse("true") is True and b.parse("false") is False
    i = output_type(int)
    assert accepts(i, "-12") and accepts(i, "0") and not accepts(i, "012") and not accepts(i, "1.5")
    assert i.parse("-12") == -12
    f = output_type(float)
    assert accepts(f, "3.25") and accepts(f, "-1e5") and not accepts(f, "1.") and not accepts(f, ".5")
    assert f.parse("3.25") == 3.25 and isinstance(f.parse("2"), float)


def test_regex_choice_and_grammar_specs_return_text():
    r = fsm.Regex(r"\d{3}")
    assert output_type(r).spec is r and output_type(r).parse("123") == "123"
    g = output_type(Grammar('start: "yes" | "no"'))
    assert isinstance(g.spec, fsm.Grammar) and g.parse("yes") == "yes"


def test_pydantic_model_parses_to_a_validated_instance():
    kind = output_type(Person)
    assert isinstance(kind.spec, fsm.JsonSchema) and kind.json
    assert accepts(kind, '{"name":"Ada","age":36}')
    assert not accepts(kind, '{"name":"Ada","age":-1}')
    assert kind.parse('{"name":"Ada","age":36}') == Person(name="Ada", age=36)
    with pytest.raises(ValidationError):
        kind.parse('{"name":"Ada","age":200}')


def test_schema_dict_is_validated_with_jsonschema():
    import jsonschema

    schema = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 3}}, "required": ["n"]}
    kind = output_type(schema)
    assert kind.parse('{"n": 5}') == {"n": 5}
    with pytest.raises(jsonschema.ValidationError):
        kind.parse('{"n": 1}')


def test_schema_as_json_text_and_bad_text():
    kind = output_type('{"type": "array", "items": {"type": "boolean"}, "maxItems": 2}')
    assert kind.parse("[true,false]") == [True, False]
    with pytest.raises(OutputTypeError, match="not JSON"):
        output_type("\\d+")


def test_fsm_json_schema_spec_is_validated_too():
    import jsonschema

    spec = fsm.JsonSchema({"type": "integer", "maximum": 10})
    kind = output_type(spec)
    assert kind.spec is spec and kind.parse("7") == 7
    with pytest.raises(jsonschema.ValidationError):
        kind.parse("11")


@pytest.mark.parametrize(
    "tp, text, value",
    [
        (list[int], "[1,2]", [1, 2]),
        (dict[str, int], '{"a":1}', {"a": 1}),
        (Union[int, str], '"x"', "x"),  # noqa: UP007 - typing.Union itself
        (Optional[int], "null", None),  # noqa: UP045 - typing.Optional itself
        (Point, '{"x":1,"y":2}', Point(1, 2)),
        (Movie, '{"title":"Up","year":2009}', {"title": "Up", "year": 2009}),
    ],
)
def test_other_types_go_through_pydantic_type_adapter(tp, text, value):
    kind = output_type(tp)
    assert isinstance(kind.spec, fsm.JsonSchema) and kind.json
    assert accepts(kind, text)
    assert kind.parse(text) == value


def test_json_whitespace_policy_is_passed_on():
    kind = output_type(Person, whitespace="pretty")
    assert accepts(kind, '{\n  "name": "Ada",\n  "age": 36\n}')
    assert not accepts(kind, '{"name":"Ada","age":36}')


def test_unsupported_types_raise_a_spec_error():
    with pytest.raises(OutputTypeError, match="cannot use"):
        output_type(object())
    with pytest.raises(fsm.SpecError):
        output_type(Literal[1.5j])  # type: ignore[valid-type]


def test_grammars_builtin_and_files(tmp_path):
    assert "sql" in builtin_grammars()
    assert "SELECT" in Grammar.builtin("sql").text
    with pytest.raises(OutputTypeError, match="no built-in grammar"):
        Grammar.builtin("cobol")
    path = tmp_path / "yn.lark"
    path.write_text('start: "yes" | "no"\n')
    assert Grammar.from_file(path, start="start").text.startswith("start")
    with pytest.raises(OutputTypeError, match="does not exist"):
        Grammar.from_file(tmp_path / "missing.lark")
    with pytest.raises(OutputTypeError):
        Grammar("  ")


def test_describe_and_to_jsonable():
    assert describe(list[int]) == "list[int]" and describe(Person) == "Person"
    assert to_jsonable(Person(name="Ada", age=36)) == {"name": "Ada", "age": 36}
    assert to_jsonable(Color.RED) == "red"
    assert to_jsonable(Point(1, 2)) == {"x": 1, "y": 2}
    assert to_jsonable([Color.GREEN, {"k": (1, 2)}]) == ["green", {"k": [1, 2]}]
