"""The generate loop's arguments checked and made per-row: prompts to ids, budgets, stop strings, matchers."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

import torch

import fsm

from .constraints import CompiledConstraint, Constraint, TokenMatcher
from .sources import LogitsSource

# One prompt (text, or token ids) or a list of those.
Prompts = str | Sequence[int] | Sequence[str | Sequence[int]]

_T = TypeVar("_T")


def is_batch(prompts: object) -> bool:
    """Whether ``prompts`` is a list of prompts rather than one prompt.

    >>> is_batch("hi"), is_batch([1, 2]), is_batch(["a", [1, 2]])
    (False, False, True)
    """
    if isinstance(prompts, str):
        return False
    if isinstance(prompts, (list, tuple)):
        if not prompts:
            return True
        return not isinstance(prompts[0], int)
    raise TypeError(
        f"prompts must be a string, a list of token ids, or a list of those; got {type(prompts).__name__}"
    )


def prompt_ids(source: LogitsSource, prompt: str | Sequence[int] | torch.Tensor, i: int) -> list[int]:
    """One prompt's token ids (text is encoded as given), checked against the vocabulary.

    >>> prompt_ids(model, [5, 6], 0)   # doctest: +SKIP
    [5, 6]
    """
    if isinstance(prompt, str):
        ids = source.encode(prompt)
    elif isinstance(prompt, (list, tuple)) and all(isinstance(t, int) for t in prompt):
        ids = list(prompt)
    elif isinstance(prompt, torch.Tensor) and prompt.dim() == 1:
        ids = prompt.tolist()
    else:
        raise TypeError(f"prompt {i} must be a string or a list of token ids, got {type(prompt).__name__}")
    if not ids:
        raise ValueError(f"prompt {i} is empty: the model needs at least one token to condition on")
    size = source.vocabulary.size
    bad = [t for t in ids if not 0 <= t < size]
    if bad:
        raise ValueError(f"prompt {i} has token ids outside the vocabulary [0, {size}): {bad[:5]}")
    return ids


def per_row(name: str, value: _T | Sequence[_T], n: int) -> list[_T]:
    """``value`` once per prompt: a scalar repeated, or a list checked to have ``n`` entries.

    >>> per_row("seed", 3, 2)
    [3, 3]
    """
    if isinstance(value, (list, tuple)):
        if len(value) != n:
            raise ValueError(f"{name} has {len(value)} values for {n} prompts")
        return list(value)
    return [value] * n


def budgets(max_new_tokens: int | Sequence[int], n: int) -> list[int]:
    """``max_new_tokens`` per prompt, each checked to be an int >= 0.

    >>> budgets([4, 0], 2)
    [4, 0]
    """
    max_new = per_row("max_new_tokens", max_new_tokens, n)
    for r, m in enumerate(max_new):
        if not isinstance(m, int) or m < 0:
            raise ValueError(f"max_new_tokens must be an int >= 0, got {m!r} for prompt {r}")
    return max_new


def stop_bytes(stop: str | Sequence[str] | None) -> list[bytes]:
    """Stop strings as UTF-8 bytes, checked non-empty.

    >>> stop_bytes(["\\n", "END"])
    [b'\\n', b'END']
    """
    if stop is None:
        return []
    items = [stop] if isinstance(stop, str) else list(stop)
    for s in items:
        if not isinstance(s, str) or not s:
            raise ValueError(f"stop strings must be non-empty strings, got {s!r}")
    return [s.encode("utf-8") for s in items]


def matchers(
    constraint: Constraint | list[Constraint], n: int, vocab: fsm.Vocabulary
) -> list[TokenMatcher | None]:
    """One fresh matcher per prompt (None for a free row); each distinct constraint compiled once.

    >>> matchers(fsm.Regex(r"\\d+"), 2, model.vocabulary)   # doctest: +SKIP
    """
    each = list(constraint) if isinstance(constraint, list) else [constraint] * n
    if len(each) != n:
        raise ValueError(f"constraint list has {len(each)} entries for {n} prompts")
    compiled: dict[int, CompiledConstraint] = {}
    out: list[TokenMatcher | None] = []
    for c in each:
        if c is None:
            out.append(None)
            continue
        index = compiled.get(id(c))
        if index is None:
            index = as_index(c, vocab)
            compiled[id(c)] = index
        out.append(index.matcher())
    return out


def as_index(c: Constraint, vocab: fsm.Vocabulary) -> CompiledConstraint:
    """A compiled index for ``c`` on ``vocab``: compiled here from a spec, or checked to be for ``vocab``.

    >>> as_index(fsm.Regex(r"\\d+"), model.vocabulary)   # doctest: +SKIP
    """
    if callable(getattr(c, "matcher", None)):
        iv = getattr(c, "vocabulary", None)
        if iv is not None and getattr(iv, "fingerprint", None) != vocab.fingerprint:
            raise fsm.VocabularyError(
                "the constraint was compiled for a different vocabulary than the model's; "
                "compile it with fsm.compile(spec, model.vocabulary)"
            )
        return c
    return fsm.compile(c, vocab)
