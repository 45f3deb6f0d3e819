"""Grammars shipped with the package, as Lark text: ``fsm.grammar.builtin.load("json")``.

>>> sorted(names())
['arithmetic', 'json', 'sql']
"""

from __future__ import annotations

from importlib import resources

from ...errors import GrammarError


def names() -> list[str]:
    """Names of the shipped grammars."""
    return sorted(
        p.name[: -len(".lark")] for p in resources.files(__name__).iterdir() if p.name.endswith(".lark")
    )


def load(name: str) -> str:
    """The Lark text of a shipped grammar.

    >>> load("json").splitlines()[0]
    '// JSON (RFC 8259): any JSON value.'
    """
    path = resources.files(__name__) / f"{name}.lark"
    if not path.is_file():
        raise GrammarError(f"no shipped grammar named {name!r}; choose one of {names()}")
    return path.read_text(encoding="utf-8")


__all__ = ["load", "names"]
