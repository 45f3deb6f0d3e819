"""What a translation generates where the schema leaves a choice: the generation policy or the exact one.

A `Policy` is a value fixed when a `JsonSchema` is made (``exact=True`` picks `EXACT`); the translator
and the per-keyword modules only read it.

>>> EXACT.infer_types, generation(allow_additional_properties=True).additional_properties
(False, True)
>>> GENERATION.fallback() == replace(GENERATION, infer_types=False, additional_properties=True)
True
"""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class Policy:
    """The choices a schema leaves open, as the translation makes them.

    - ``infer_types``: a schema without ``type`` generates only the types its keywords are about
      (``properties`` → object); off, every type the schema allows.
    - ``additional_properties``: ``additionalProperties`` left unspecified allows extra properties
      (any value, after the declared ones); off, none are generated.
    - ``number_spellings``: integers also in the spellings with a zero fraction (``1.0``, ``1.00``),
      and ``enum``/``const`` by JSON equality (``0.0`` for ``0``, ``-2`` for ``-2.0``, objects in any
      member order up to `PERMUTED_MEMBERS` members); off, one spelling per number.
    - ``assert_format``: ``format`` is asserted; off, an annotation (as drafts 2019-09 and 2020-12 say).
    - ``rfc_formats``: an asserted ``format`` is its RFC grammar (`formats.RFC_FORMATS`); off, the
      stricter subset every validator accepts, for generation (`formats.FORMATS`).
    """

    infer_types: bool = True
    additional_properties: bool = False
    number_spellings: bool = False
    assert_format: bool = True
    rfc_formats: bool = False

    @property
    def exact(self) -> bool:
        """True for the language of exactly the instances that validate (`EXACT`, formats asserted or not)."""
        return {**vars(self), "assert_format": False} == vars(EXACT)  # (no copy made, as replace did)

    def fallback(self) -> Policy:
        """The policy to translate with when this one leaves a satisfiable schema nothing to generate
        (``{"minProperties": 1}`` generates no object when extra properties are off): extras allowed
        and no type inferred."""
        return replace(self, infer_types=False, additional_properties=True)


GENERATION = Policy()
EXACT = Policy(
    infer_types=False,
    additional_properties=True,
    number_spellings=True,
    assert_format=False,
    rfc_formats=True,
)

# const/enum objects with at most this many members are generated in every member order
PERMUTED_MEMBERS = 4


def generation(allow_additional_properties: bool = False) -> Policy:
    """The generation policy, extra properties on or off.

    >>> generation() == GENERATION
    True
    """
    if allow_additional_properties == GENERATION.additional_properties:
        return GENERATION  # (policies are values: every schema made a copy of the same one)
    return replace(GENERATION, additional_properties=allow_additional_properties)
