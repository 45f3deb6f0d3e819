"""Decorators: `structured` gives a pydantic model a ``generate`` classmethod; `function` turns a typed
function whose docstring is a prompt template into a call that generates its return value.

Both take a model (a `guide.Model`, a guidance source, a path, or None for the default model, loaded
on first use), a ``whitespace`` policy for JSON, and generation defaults (``max_new_tokens``,
``temperature``, ``system``…). The constraint is built once, on the first call.

>>> @guide.function(model, temperature=0)                                      # doctest: +SKIP
... def sentiment(review: str) -> Literal["positive", "negative"]:
...     '''Is this review positive or negative? {review}'''
>>> sentiment("Loved every minute.")                                         # doctest: +SKIP
'positive'
"""

from __future__ import annotations

import functools
import inspect
import string
import sys
import typing
from collections.abc import Callable, Sequence
from typing import Any

from .generator import Generator, ModelArg, check_options
from .output_types import OutputType, output_type

_STRUCTURED_NAMES = ("generate", "generate_batch", "guide_generator")


class _Lazy:
    """A `Generator` created on first use, so decorating never loads a model."""

    def __init__(self, model: ModelArg, kind: OutputType, defaults: dict[str, Any]):
        self.model, self.kind, self.defaults = model, kind, defaults
        self._gen: Generator | None = None

    def get(self) -> Generator:
        if self._gen is None:
            self._gen = Generator(self.model, self.kind, **self.defaults)
        return self._gen


def template_fields(template: str) -> list[str]:
    """The ``{name}`` fields of a prompt template, in order, without repeats.

    >>> template_fields("Extract the person from: {text} ({lang})")
    ['text', 'lang']
    """
    try:
        names = [f for _, f, _, _ in string.Formatter().parse(template) if f is not None]
    except ValueError as exc:
        raise ValueError(
            f"bad prompt template {template!r}: {exc} (write literal braces as {{{{ and }}}})"
        ) from None
    out: list[str] = []
    for f in names:
        base = f.split(".")[0].split("[")[0]
        if not base or base.isdigit():
            raise ValueError(
                f"prompt template fields must be named, e.g. {{text}}; got {{{f}}} in {template!r}"
            )
        if base not in out:
            out.append(base)
    return out


def structured(
    model: ModelArg | type = None,
    prompt: str | None = None,
    *,
    whitespace: str | int | None = None,
    **defaults: Any,
) -> Any:
    """Class decorator for a pydantic model: adds ``Model.generate(...)`` and ``Model.generate_batch(...)``.

    With a ``prompt`` template, ``generate`` takes its fields as keywords (or one positional value when
    the template has a single field); without one, it takes the prompt itself. Other keywords are
    generation overrides. ``Model.guide_generator()`` returns the underlying `Generator` (``.last``…).
    Usable bare (``@guide.structured``: the default model, no template).

    >>> @guide.structured(model, prompt="Extract the city: {text}")   # doctest: +SKIP
    ... class City(BaseModel):
    ...     name: str
    ...     country: str
    >>> City.generate(text="I flew to Paris, France.")               # doctest: +SKIP
    City(name='Paris', country='France')
    """
    if isinstance(model, type):  # bare @structured
        return structured()(model)
    check_options(defaults, "guide.structured")
    fields = template_fields(prompt) if prompt is not None else []

    def decorate(cls: type) -> type:
        if not (isinstance(cls, type) and hasattr(cls, "model_validate_json")):
            raise TypeError(f"@guide.structured decorates pydantic models, not {cls!r}")
        taken = [n for n in _STRUCTURED_NAMES if n in getattr(cls, "model_fields", {})]
        if taken:
            raise TypeError(
                f"{cls.__name__} has field(s) {taken}, which @guide.structured needs as method names"
            )
        lazy = _Lazy(model, output_type(cls, whitespace=whitespace), dict(defaults))

        def to_prompt(args: tuple, kwargs: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
            if prompt is None:
                if len(args) != 1:
                    raise TypeError(f"{cls.__name__}.generate(prompt, **options) takes one prompt")
                return args[0], kwargs
            values = {k: kwargs.pop(k) for k in fields if k in kwargs}
            if args:
                if len(args) != 1 or len(fields) != 1 or values:
                    raise TypeError(f"{cls.__name__}.generate takes the template fields {fields} as keywords")
                values[fields[0]] = args[0]
            missing = [f for f in fields if f not in values]
            if missing:
                raise TypeError(f"{cls.__name__}.generate is missing template field(s) {missing}")
            return prompt.format(**values), kwargs

        def generate(*args: Any, **kwargs: Any) -> Any:
            text, overrides = to_prompt(args, kwargs)
            return lazy.get()(text, **overrides)

        def generate_batch(items: Sequence[Any], **overrides: Any) -> list[Any]:
            prompts = []
            for item in items:
                if isinstance(item, dict) and prompt is not None:
                    prompts.append(to_prompt((), dict(item))[0])
                else:
                    prompts.append(to_prompt((item,), {})[0])
            return lazy.get().batch(prompts, **overrides)

        generate.__doc__ = f"Generate a validated {cls.__name__}" + (
            f" from the prompt {prompt!r}." if prompt else "."
        )
        generate_batch.__doc__ = (
            f"Generate one {cls.__name__} per item (a dict of template fields, or a prompt)."
        )
        cls.generate = staticmethod(generate)
        cls.generate_batch = staticmethod(generate_batch)
        cls.guide_generator = staticmethod(lazy.get)
        return cls

    return decorate


def function(
    model: ModelArg | Callable[..., Any] = None, *, whitespace: str | int | None = None, **defaults: Any
) -> Any:
    """Function decorator: the docstring is the prompt template (``{arg}`` fields filled from the call's
    arguments), the return annotation is the output type, and calling returns the parsed value.

    The wrapper also has ``.batch(calls)`` (each call a dict of keyword arguments or a tuple of positional
    ones), ``.prompt(*args, **kwargs)`` (the filled-in prompt) and ``.generator()``. Usable bare
    (``@guide.function``: the default model).

    >>> @guide.function(model)                                        # doctest: +SKIP
    ... def age_of(text: str) -> int:
    ...     '''How old is the person? {text}'''
    >>> age_of("Ada is 36.")                                          # doctest: +SKIP
    36
    """
    # Annotations may name classes local to the caller (e.g. a model defined inside a function).
    caller_locals = dict(sys._getframe(1).f_locals)
    if inspect.isfunction(model):  # bare @function
        return _function_decorator(None, None, {}, caller_locals)(model)
    check_options(defaults, "guide.function")
    return _function_decorator(model, whitespace, defaults, caller_locals)


def _function_decorator(
    model: ModelArg,
    whitespace: str | int | None,
    defaults: dict[str, Any],
    caller_locals: dict[str, Any],
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        name = getattr(fn, "__qualname__", repr(fn))
        doc = inspect.getdoc(fn)
        if not doc:
            raise TypeError(f"@guide.function: {name} needs a docstring: it is the prompt template")
        try:
            hints = typing.get_type_hints(fn, localns=caller_locals, include_extras=True)
        except Exception as exc:  # deliberately broad: an annotation naming something that does not exist
            raise TypeError(f"@guide.function: cannot read the annotations of {name}: {exc}") from None
        if "return" not in hints:
            raise TypeError(f"@guide.function: {name} needs a return annotation: it is the output type")
        sig = inspect.signature(fn)
        unknown = [f for f in template_fields(doc) if f not in sig.parameters]
        if unknown:
            raise TypeError(
                f"@guide.function: the docstring of {name} uses {unknown}, which are not parameters"
            )
        lazy = _Lazy(model, output_type(hints["return"], whitespace=whitespace), dict(defaults))

        def to_prompt(*args: Any, **kwargs: Any) -> str:
            bound = sig.bind(*args, **kwargs)
            bound.apply_defaults()
            return doc.format(**bound.arguments)

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            return lazy.get()(to_prompt(*args, **kwargs))

        def batch(calls: Sequence[Any], **overrides: Any) -> list[Any]:
            prompts = [to_prompt(**c) if isinstance(c, dict) else to_prompt(*_as_tuple(c)) for c in calls]
            return lazy.get().batch(prompts, **overrides)

        wrapper.batch = batch
        wrapper.prompt = to_prompt
        wrapper.generator = lazy.get
        return wrapper

    return decorate


def _as_tuple(call: Any) -> tuple:
    return tuple(call) if isinstance(call, (tuple, list)) else (call,)
