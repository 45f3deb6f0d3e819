"""Python types -> fsm specs, and generated text -> validated Python values.

`output_type(tp)` turns what a user asks for into an `OutputType`: the fsm spec that constrains
generation (None for free text) and the parser that turns the finished text into the value returned.

- a pydantic model class: constrained by ``fsm.JsonSchema(cls)``, returns a validated instance;
- a JSON-schema dict (or JSON text, or an ``fsm.JsonSchema``): returns the parsed object, validated
  with ``jsonschema``;
- ``guide.Regex`` / ``guide.Choice`` / ``guide.Grammar`` / any fsm spec: returns the text (``str``);
- ``Literal["a", "b"]`` and ``Enum`` classes: a plain-text choice of the values; returns the value
  or the member;
- ``int``, ``float``, ``bool``: JSON integer / number / ``true|false``; returns ``int`` / ``float`` / ``bool``;
- ``str``: no constraint (free text);
- anything else pydantic can describe (``list[...]``, ``dict[str, ...]``, ``Union``, ``Optional``,
  dataclasses, ``TypedDict``…): the JSON schema of ``pydantic.TypeAdapter(tp)``; returns the value
  validated by that adapter.
"""

from __future__ import annotations

import enum
import json
import os
import typing
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import fsm

Regex = fsm.Regex
Choice = fsm.Choice


class OutputTypeError(fsm.SpecError):
    """A Python type (or object) that cannot be turned into a constraint.

    >>> isinstance(OutputTypeError("x"), fsm.SpecError)
    True
    """


@dataclass(frozen=True)
class Grammar:
    """A Lark grammar output type; the result is the generated text.

    Build one from grammar text, a ``.lark`` file (`Grammar.from_file`) or a grammar shipped in
    ``fsm/grammars`` (`Grammar.builtin`, e.g. ``"sql"``).

    >>> Grammar('start: "yes" | "no"').start
    'start'
    """

    text: str
    start: str = "start"

    def __post_init__(self):
        if not isinstance(self.text, str) or not self.text.strip():
            raise OutputTypeError(
                "Grammar needs the text of a Lark grammar (use Grammar.from_file for a path)"
            )

    @classmethod
    def from_file(cls, path: str | os.PathLike, start: str = "start") -> Grammar:
        """Read a Lark grammar from a file.

        >>> Grammar.from_file("my.lark")   # doctest: +SKIP
        """
        p = Path(path)
        if not p.is_file():
            raise OutputTypeError(f"grammar file {str(p)!r} does not exist")
        return cls(p.read_text(encoding="utf-8"), start)

    @classmethod
    def builtin(cls, name: str, start: str = "start") -> Grammar:
        """One of the grammars shipped with the library (`builtin_grammars()` lists them).

        >>> Grammar.builtin("sql")   # doctest: +SKIP
        """
        from fsm import grammars

        if name not in grammars.names():
            raise OutputTypeError(
                f"no built-in grammar named {name!r} (known: {', '.join(grammars.names())})"
            )
        return cls(grammars.load(name), start)

    def to_spec(self) -> Any:
        """The `fsm.Grammar` spec for this grammar."""
        return fsm.Grammar(self.text, start=self.start)


def builtin_grammars() -> list[str]:
    """Names accepted by `Grammar.builtin`.

    >>> "sql" in builtin_grammars()   # doctest: +SKIP
    True
    """
    from fsm import grammars

    return grammars.names()


@dataclass(frozen=True)
class OutputType:
    """A constraint and the parser for its text.

    ``spec`` is an fsm spec (None: free text); ``parse(text)`` returns the value or raises;
    ``name`` is used in messages; ``json`` says the text is JSON (the CLI prints values as JSON);
    ``parse_tokens(token_ids)``, when set, is used instead of ``parse`` where the generated ids are
    known (an output whose special tokens matter, e.g. a tool call's begin token, which text omits).

    >>> t = output_type(int)
    >>> t.parse("-12"), t.name
    (-12, 'int')
    """

    spec: Any
    parse: Callable[[str], Any]
    name: str
    json: bool = False
    parse_tokens: Callable[[list[int]], Any] | None = None


def output_type(tp: Any, whitespace: str | int | None = None, *, exact: bool = False) -> OutputType:
    """Turn a Python type, schema or spec into an `OutputType` (see the module docstring).

    ``whitespace`` is passed to `fsm.JsonSchema` for JSON outputs (None keeps its default policy);
    ``exact=True`` asks for exactly the documents that validate (``fsm.JsonSchema(..., exact=True)``:
    every type the schema allows, extra properties unless excluded, formats as annotations).

    >>> output_type(Literal["positive", "negative"]).spec.options
    ('positive', 'negative')
    >>> output_type(bool).parse("true")
    True
    """
    if isinstance(tp, OutputType):
        return tp
    if tp is str:
        return OutputType(None, str, "str")
    if tp is int:  # numbers as in JSON documents, with the same digit bounds as schema fields
        return OutputType(_json_schema_spec({"type": "integer"}, None), int, "int")
    if tp is float:
        return OutputType(_json_schema_spec({"type": "number"}, None), float, "float")
    if tp is bool:
        return OutputType(fsm.Choice(["true", "false"]), lambda s: s == "true", "bool")
    if isinstance(tp, (fsm.Regex, fsm.Choice)):
        return OutputType(tp, str, type(tp).__name__)
    if isinstance(tp, Grammar):
        return OutputType(tp.to_spec(), str, "Grammar")
    if typing.get_origin(tp) is Literal:
        return _literal(typing.get_args(tp))
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return _enum(tp)
    if isinstance(tp, type) and hasattr(tp, "model_validate_json") and hasattr(tp, "model_json_schema"):
        return _pydantic_model(tp, whitespace, exact)
    if isinstance(tp, (dict, str)) and not isinstance(tp, type):
        return _schema(tp, whitespace, exact)
    if isinstance(tp, fsm.JsonSchema):
        return _json_spec(tp)
    if isinstance(tp, fsm.Spec):
        return OutputType(tp, str, type(tp).__name__)  # any other fsm spec (fsm.Grammar…): its text
    if callable(getattr(tp, "matcher", None)) and hasattr(tp, "vocabulary"):
        return OutputType(tp, str, "compiled index")  # an already compiled fsm index
    return _type_adapter(tp, whitespace, exact)


def describe(tp: Any) -> str:
    """A short readable name for an output type, for messages.

    >>> describe(list[int])
    'list[int]'
    """
    if isinstance(tp, OutputType):
        return tp.name
    if isinstance(tp, type) and not typing.get_args(tp):
        return tp.__name__
    return repr(tp).replace("typing.", "")


# -- the individual cases -----------------------------------------------------------------------------


def _literal(values: tuple) -> OutputType:
    """Plain-text choice of the values: strings as themselves, others as JSON (1, true, null)."""
    texts = [v if isinstance(v, str) else json.dumps(_plain(v)) for v in values]
    if len(set(texts)) < len(texts):  # e.g. Literal["1", 1]: tell them apart by JSON encoding
        texts = [json.dumps(_plain(v)) for v in values]
    by_text = dict(zip(texts, values, strict=True))
    name = f"Literal[{', '.join(repr(v) for v in values)}]"
    return OutputType(fsm.Choice(texts), by_text.__getitem__, name)


def _plain(v: Any) -> Any:
    if isinstance(v, enum.Enum):
        return v.value
    if isinstance(v, (str, int, float, bool)) or v is None:
        return v
    raise OutputTypeError(f"Literal values must be str, int, float, bool, None or Enum members, got {v!r}")


def _enum(cls: type[enum.Enum]) -> OutputType:
    """Plain-text choice of the members' string values, or of their names when values are not strings."""
    members = list(cls)
    if not members:
        raise OutputTypeError(f"Enum {cls.__name__} has no members to choose from")
    use_values = all(isinstance(m.value, str) for m in members) and len({m.value for m in members}) == len(
        members
    )
    texts = [m.value if use_values else m.name for m in members]
    by_text = dict(zip(texts, members, strict=True))
    return OutputType(fsm.Choice(texts), by_text.__getitem__, cls.__name__)


def _json_schema_spec(schema: Any, whitespace: str | int | None, exact: bool = False) -> Any:
    try:
        JsonSchema = fsm.JsonSchema
    except (AttributeError, ImportError) as exc:
        raise OutputTypeError(f"JSON outputs need fsm.JsonSchema, which is not available: {exc}") from None
    options: dict[str, Any] = {"exact": True} if exact else {}
    if whitespace is not None:
        options["whitespace"] = whitespace
    return JsonSchema(schema, **options)


def _pydantic_model(cls: type, whitespace: str | int | None, exact: bool) -> OutputType:
    spec = _json_schema_spec(cls, whitespace, exact)
    return OutputType(spec, cls.model_validate_json, cls.__name__, json=True)


def _schema(schema: dict | str, whitespace: str | int | None, exact: bool) -> OutputType:
    if isinstance(schema, str):
        try:
            schema = json.loads(schema)
        except json.JSONDecodeError as exc:
            raise OutputTypeError(
                f"a str output type is read as a JSON schema, but it is not JSON ({exc}); "
                "for a pattern use guide.Regex(...), for a grammar guide.Grammar(...)"
            ) from None
    if not isinstance(schema, (dict, bool)):
        raise OutputTypeError(f"a JSON schema must be an object, got {type(schema).__name__}")
    spec = _json_schema_spec(schema, whitespace, exact)
    parse = _schema_parser(schema, formats=not exact)  # exact mode: format is an annotation
    return OutputType(spec, parse, str(schema.get("title", "JSON schema")), json=True)


def _json_spec(spec: Any) -> OutputType:
    schema = getattr(spec, "schema", None)
    parse = _schema_parser(schema) if isinstance(schema, dict) else json.loads
    return OutputType(spec, parse, "JSON schema", json=True)


def _schema_parser(schema: dict, formats: bool = True) -> Callable[[str], Any]:
    import jsonschema

    cls = jsonschema.validators.validator_for(schema)
    validator = cls(schema, format_checker=cls.FORMAT_CHECKER if formats else None)

    def parse(text: str) -> Any:
        value = json.loads(text)
        validator.validate(value)
        return value

    return parse


def _type_adapter(tp: Any, whitespace: str | int | None, exact: bool) -> OutputType:
    """Any other type pydantic can describe (list[...], dict[str, ...], Union, dataclass, TypedDict…)."""
    try:
        from pydantic import TypeAdapter

        adapter = TypeAdapter(tp)
        schema = adapter.json_schema()
    except (
        Exception
    ) as exc:  # deliberately broad: pydantic raises several unrelated classes for unsupported types
        raise OutputTypeError(
            f"cannot use {describe(tp)} as an output type: {exc}. Use a pydantic model, a JSON-schema dict, "
            "guide.Regex, guide.Grammar, Literal[...], an Enum, int, float, bool, str, or a typed "
            "container of those"
        ) from None
    spec = _json_schema_spec(schema, whitespace, exact)
    return OutputType(spec, adapter.validate_json, describe(tp), json=True)


def to_jsonable(value: Any) -> Any:
    """A JSON-serializable form of a parsed value (pydantic models and dataclasses dumped, Enums as values).

    >>> to_jsonable(Color.RED)   # doctest: +SKIP
    'red'
    """
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    from pydantic import TypeAdapter

    return TypeAdapter(type(value)).dump_python(value, mode="json")
