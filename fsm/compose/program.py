"""`Program`: a part tree as a graph of slots (a Thompson construction whose leaves are automata).

A slot is a leaf automaton (a literal, free text, a spec's DFA), a token (one special id), an
empty junction, or the final slot. Each slot lists the slots that may follow it once it is done.
Leaves are shared between the copies a bounded `Repeat` unrolls, so a spec inside a repeat is
compiled once; specs are compiled only when a generation first enters them (`SpecLeaf`). Each composition part
emits its own slots through a `Builder` (`fsm.compose.parts`); any other spec is a `SpecLeaf`.

>>> import fsm
>>> p = build_program(fsm.Repeat("ab", min=1, max=2), vocab=None, limits=None)
>>> len(p.slots), len(p.start)
(3, 1)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..limits import DEFAULT_LIMITS, Limits
from ..vocabulary import Vocabulary
from .errors import CompositionError, describe
from .leaves import Leaf, SpecLeaf

LEAF, TOKEN, JUNCTION, FINAL = range(4)
_MAX_SLOTS = 200_000  # unrolled bounded repeats: past this the spec is too big to compose


@dataclass
class Slot:
    """One node of the program: its kind, its leaf or token id, and the slots after it."""

    kind: int
    leaf: Leaf | None = None
    token_id: int = -1
    next: list[int] = field(default_factory=list)


@dataclass
class Program:
    """The slots of a part tree, its entry slots and its final slot."""

    slots: list[Slot]
    start: list[int]
    final: int


class Builder:
    """Makes the slots of a part tree; each part emits itself through it (`Part.emit`)."""

    def __init__(self, vocab: Vocabulary | None, limits: Limits):
        self.vocab = vocab
        self.limits = limits
        self.slots: list[Slot] = [Slot(FINAL)]
        self.leaves: dict[Any, Leaf] = {}  # id(part) -> its leaf, shared by unrolled copies
        self._special: dict[bytes, int] | None = None
        self.keep: list[Any] = []  # the parts keyed by id above stay alive while building

    def add(self, slot: Slot) -> int:
        if len(self.slots) >= _MAX_SLOTS:
            raise CompositionError(
                f"unrolls to over {_MAX_SLOTS:,} slots; lower the Repeat/max_calls bounds", part="composition"
            )
        self.slots.append(slot)
        return len(self.slots) - 1

    def leaf_slot(self, part: Any, make: Callable[[], Leaf], cont: list[int], key: Any = None) -> list[int]:
        """A slot running ``part``'s leaf (made once per part, or per ``key`` of it, by ``make``),
        then ``cont``."""
        key = id(part) if key is None else key
        leaf = self.leaves.get(key)
        if leaf is None:
            leaf = self.leaves[key] = make()
            self.keep.append(part)
        return [self.add(Slot(LEAF, leaf=leaf, next=cont))]

    def special_texts(self) -> dict[bytes, int]:
        """The vocabulary's special tokens that a `Literal` may stand for: text bytes -> id (EOS ids
        and ids that also spell text left out)."""
        if self._special is None:
            v = self.vocab
            self._special = (
                {}
                if v is None
                else {
                    t.encode(): i
                    for t, i in v.special_tokens.items()
                    if t and i not in v.eos_token_ids and i < v.size and v.token_bytes(i) is None
                }
            )
        return self._special

    def token_slot(self, token_id: int, where: str, cont: list[int]) -> list[int]:
        """A slot waiting for special token ``token_id``, then ``cont``."""
        if self.vocab is not None:
            if token_id >= self.vocab.size:
                raise CompositionError(f"id outside the vocabulary (size {self.vocab.size})", part=where)
            if token_id in self.vocab.eos_token_ids:
                raise CompositionError("is an EOS id: end the spec there instead", part=where)
            if self.vocab.token_bytes(token_id) is not None:
                raise CompositionError(
                    "is a text token: a Token part matches one special token (use fsm.Literal for text)",
                    part=where,
                )
        return [self.add(Slot(TOKEN, token_id=token_id, next=cont))]

    def emit(self, part: Any, cont: list[int]) -> list[int]:
        """Slots that start ``part`` and continue to ``cont`` when it is done."""
        emit = getattr(part, "emit", None)
        if emit is not None:  # a composition part emits its own slots
            return emit(self, cont)
        if self.vocab is None:
            raise CompositionError("a spec part needs a vocabulary", part=describe(part))
        vocab, limits = self.vocab, self.limits
        return self.leaf_slot(part, lambda: SpecLeaf(part, vocab, limits, describe(part)), cont)

    def item(self, part: Any, separator: Any, after: list[int], first: bool) -> list[int]:
        """One more ``part`` (after ``separator`` unless it is the first), then ``after``."""
        entry = self.emit(part, after)
        return entry if first or separator is None else self.emit(separator, entry)

    def repeat(self, part: Any, separator: Any, lo: int, hi: int | None, cont: list[int]) -> list[int]:
        """``part`` ``lo`` to ``hi`` times; ``done`` is where to go once k items are read, from
        k = ``hi`` (or the loop) down to 0."""
        if hi is None:  # the loop after the required items: junction -> cont | separator item
            loop = self.add(Slot(JUNCTION))
            self.slots[loop].next = [*cont, *self.item(part, separator, [loop], first=False)]
            if lo == 0:
                return [*cont, *self.item(part, separator, [loop], first=True)]
            done, top = [loop], lo
        else:
            done, top = cont, hi
        for k in range(top - 1, -1, -1):
            nxt = self.item(part, separator, done, first=k == 0)
            done = [*cont, *nxt] if k >= lo else nxt
        return done


def build_program(part: Any, vocab: Vocabulary | None, limits: Limits | None) -> Program:
    """The slot graph of ``part`` (specs inside stay uncompiled until first entered)."""
    b = Builder(vocab, limits or DEFAULT_LIMITS)
    start = b.emit(part, [0])
    return Program(b.slots, start, 0)
