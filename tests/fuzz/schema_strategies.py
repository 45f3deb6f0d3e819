"""Random JSON schemas built from the keyword table (valid, unsupported and invalid ones mixed)."""

from __future__ import annotations

from hypothesis import strategies as st

_scalars = st.one_of(
    st.just({"type": "string"}),
    st.just({"type": "integer"}),
    st.just({"type": "number"}),
    st.just({"type": "boolean"}),
    st.just({"type": "null"}),
    st.builds(
        lambda lo, n: {"type": "integer", "minimum": lo, "maximum": lo + n},
        st.integers(-50, 50),
        st.integers(0, 200),
    ),
    st.builds(lambda lo: {"type": "number", "exclusiveMinimum": lo}, st.integers(-5, 5)),
    st.builds(
        lambda a, b: {"type": "string", "minLength": a, "maxLength": a + b},
        st.integers(0, 4),
        st.integers(0, 6),
    ),
    st.sampled_from(
        [
            {"type": "string", "pattern": "^[a-z]+$"},
            {"type": "string", "format": "date"},
            {"type": "string", "format": "email"},
            {"type": "string", "format": "uuid"},
            {"enum": ["a", 1, None, True]},
            {"const": "x"},
            {"type": ["string", "null"]},
            {"type": "integer", "multipleOf": 3},
            {},
            True,
        ]
    ),
    # unsupported or invalid on purpose: must give a SpecError, never a crash
    st.sampled_from(
        [
            {"not": {"type": "string"}},
            {"type": "strin"},
            {"minimum": "zero"},
            {"$ref": "#/nope"},
            {"uniqueItems": True, "type": "array"},
            {"pattern": "(a)\\1"},
            {"type": "integer", "minimum": 5, "maximum": 1},
            {"if": {"type": "string"}, "then": {"minLength": 1}},
            {"items": 3},
        ]
    ),
)


def _objects(inner):
    return st.builds(
        lambda props, req, addl: {
            "type": "object",
            "properties": props,
            "required": [k for k in props if k in req],
            **({"additionalProperties": addl} if addl is not None else {}),
        },
        st.dictionaries(st.sampled_from(["a", "b", "name", "x y", "é"]), inner, max_size=3),
        st.sets(st.sampled_from(["a", "b", "name", "x y", "é"])),
        st.sampled_from([None, False, True]),
    )


def _arrays(inner):
    return st.builds(
        lambda items, lo, n: {"type": "array", "items": items, "minItems": lo, "maxItems": lo + n},
        inner,
        st.integers(0, 2),
        st.integers(0, 3),
    )


def _combos(inner):
    return st.one_of(
        st.lists(inner, min_size=1, max_size=3).map(lambda xs: {"anyOf": xs}),
        st.lists(inner, min_size=1, max_size=2).map(lambda xs: {"allOf": xs}),
        st.lists(inner, min_size=1, max_size=2).map(lambda xs: {"oneOf": xs}),
    )


schemas = st.recursive(
    _scalars, lambda inner: st.one_of(_objects(inner), _arrays(inner), _combos(inner)), max_leaves=6
)
