"""Hypothesis strategies that build random (sometimes invalid) regexes, shared by CI tests and long runs."""

from __future__ import annotations

import re

from hypothesis import strategies as st

_LITERALS = st.sampled_from(
    [*list('abcxyz019 -_.é日🎉"\\\n'), "\\d", "\\w", "\\s", "\\.", "\\(", "\\)", "\\\\", "\\u00e9"]
)
_CLASSES = st.sampled_from(["[a-c]", "[^a-c]", "[0-9]", '[^"\\\\]', "[\\w.]", "[^\\n]", "[é-ë]", "."])
_BROKEN = st.sampled_from(
    [
        "(",
        ")",
        "[",
        "a{2,1}",
        "(?=a)",
        "(?!a)",
        "(?<=a)",
        "\\1",
        "(?P<n>a)(?P=n)",
        "*",
        "^",
        "$",
        "\\b",
        "(?i)",
        "\\p{L}",
    ]
)


def _quantified(inner):
    return st.tuples(inner, st.sampled_from(["", "*", "+", "?", "{2}", "{0,3}", "{1,}", "*?"])).map(
        lambda t: t[0] + t[1]
    )


def _group(inner):
    return st.one_of(
        st.lists(inner, min_size=1, max_size=3).map(lambda xs: "(" + "".join(xs) + ")"),
        st.lists(inner, min_size=2, max_size=3).map(lambda xs: "(?:" + "|".join(xs) + ")"),
    )


atoms = st.one_of(_LITERALS, _CLASSES)
regex_bodies = st.recursive(atoms, lambda inner: _quantified(st.one_of(inner, _group(inner))), max_leaves=8)
valid_regexes = st.lists(regex_bodies, min_size=1, max_size=4).map("".join)
maybe_broken_regexes = st.one_of(
    valid_regexes,
    st.tuples(valid_regexes, _BROKEN, valid_regexes).map("".join),
)


def python_accepts(pattern: str) -> re.Pattern | None:
    try:
        return re.compile(pattern, re.ASCII)
    except re.error:
        return None
