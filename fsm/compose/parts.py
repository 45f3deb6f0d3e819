"""The parts of the spec algebra: `Text`, `Literal`, `Token`, `Sequence`, `Alternatives`, `Repeat`,
`Tag` and `Triggered`. Every other `fsm.Spec` (`Regex`, `Choice`, `JsonSchema`) is a part too.

Each part is an `fsm.Spec` (``fingerprint``, ``build_index``), so `fsm.compile` caches it; its
index is a `fsm.compose.ComposedIndex`. Parts check their arguments at construction and raise
`CompositionError` naming the part.

>>> import fsm
>>> spec = fsm.Sequence(fsm.Literal("n="), fsm.Regex(r"\\d+"))
>>> spec.fingerprint == fsm.Sequence("n=", fsm.Regex(r"\\d+")).fingerprint
True
"""

from __future__ import annotations

import hashlib
import json
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any

from ..spec import Spec
from .errors import CompositionError, describe
from .index import ComposedIndex
from .leaves import LiteralLeaf, TextLeaf

if TYPE_CHECKING:
    from ..limits import Limits
    from ..vocabulary import Vocabulary
    from .program import Builder


class Part(ABC):
    """A composition part: an `fsm.Spec` whose index is built by `fsm.compose.ComposedIndex`."""

    @abstractmethod
    def emit(self, builder: Builder, cont: list[int]) -> list[int]:
        """Add this part's slots to ``builder``; returns the slots that start it (then ``cont``)."""

    @abstractmethod
    def key(self) -> Any:
        """A JSON-able description of the language (sub-specs by their fingerprints)."""

    @property
    def fingerprint(self) -> str:
        """A stable digest of the part tree (the cache key; parts are not changed once made)."""
        fp = self.__dict__.get("_fingerprint")
        if fp is None:
            text = json.dumps(["compose", self.key()], separators=(",", ":"))
            fp = self.__dict__["_fingerprint"] = "compose:" + hashlib.sha256(text.encode()).hexdigest()[:40]
        return fp

    def build_index(self, vocab: Vocabulary, limits: Limits | None = None) -> Any:
        """The composed token index over ``vocab`` (uncached: `fsm.compile` caches)."""
        return ComposedIndex(self, vocab, limits)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(map(describe, self.children()))})"

    def children(self) -> tuple:
        """The sub-parts (for naming a part in errors)."""
        return ()


def as_part(part: Any, where: str) -> Any:
    """``part`` as a composition part: a string is a `Literal`; anything else must be an `fsm.Spec`."""
    if isinstance(part, Part):  # before the Spec protocol check, which reads (hashes) fingerprints
        return part
    if isinstance(part, (str, bytes)):
        return Literal(part)
    if hasattr(type(part), "fingerprint") and callable(getattr(part, "build_index", None)):
        return part  # a spec, told without the protocol check, which would compute its fingerprint
    if isinstance(part, Spec):
        return part
    raise CompositionError(f"{type(part).__name__} is not a spec (fsm.Regex, fsm.Literal, ...)", part=where)


def key_of(part: Any) -> Any:
    """The fingerprint key of any part (a plain spec by its own fingerprint)."""
    return part.key() if isinstance(part, Part) else [type(part).__name__, part.fingerprint]


def _bytes(text: str | bytes) -> bytes:
    return text.encode("utf-8") if isinstance(text, str) else bytes(text)


class Literal(Part):
    """Exactly ``text``. Where the vocabulary has a special token spelled as a piece of it (e.g.
    ``<tool_call>`` in a chat model's vocabulary), that special id is accepted for the piece too,
    so the same spec works in a vocabulary where the piece is text and one where it is one token.

    >>> Literal("hi").data
    b'hi'
    """

    def __init__(self, text: str | bytes):
        if not isinstance(text, (str, bytes)):
            raise CompositionError(f"needs str or bytes, got {type(text).__name__}", part="Literal")
        self.data = _bytes(text)

    def pieces(self, special: dict[bytes, int]) -> list[tuple[bytes, int]]:
        """The text cut at special tokens' texts (leftmost, longest): (bytes, special id or -1).

        >>> Literal("a<s>b<s>").pieces({b"<s>": 7})
        [(b'a', -1), (b'<s>', 7), (b'b', -1), (b'<s>', 7)]
        """
        out: list[tuple[bytes, int]] = []
        data, start, i = self.data, 0, 0
        found = [k for k in special if k in data]  # most literals hold none: one search per token
        while found and i < len(data):
            hit = max((k for k in found if data.startswith(k, i)), key=len, default=None)
            if hit is None:
                i += 1
                continue
            if start < i:
                out.append((data[start:i], -1))
            out.append((hit, special[hit]))
            i = start = i + len(hit)
        if start < len(data):
            out.append((data[start:], -1))
        return out

    def emit(self, builder: Builder, cont: list[int]) -> list[int]:
        if not self.data:
            return cont
        pieces = self.pieces(builder.special_texts()) if builder.vocab is not None else [(self.data, -1)]
        for i in range(len(pieces) - 1, -1, -1):
            data, special = pieces[i]
            entry = builder.leaf_slot(self, lambda data=data: LiteralLeaf(data), cont, key=(id(self), i))
            if special >= 0:
                entry = entry + builder.token_slot(special, repr(self), cont)
            cont = entry
        return cont

    def key(self) -> Any:
        return ["Literal", self.data.hex()]

    def __repr__(self) -> str:
        try:
            return f"Literal({self.data.decode('utf-8')!r})"
        except UnicodeDecodeError:
            return f"Literal({self.data!r})"


class Text(Part):
    """Free UTF-8 text that never contains any string of ``exclude``, at most ``max_bytes`` long.

    >>> Text(exclude=["<tool_call>"], max_bytes=100).max_bytes
    100
    """

    def __init__(self, exclude: Any = (), max_bytes: int | None = None):
        if isinstance(exclude, (str, bytes)):
            exclude = (exclude,)
        self.exclude = tuple(_bytes(e) for e in exclude)
        if any(not e for e in self.exclude):
            raise CompositionError("an excluded string is empty (it would exclude everything)", part="Text")
        if max_bytes is not None and max_bytes < 0:
            raise CompositionError(f"max_bytes={max_bytes} is negative", part="Text")
        self.max_bytes = max_bytes

    def emit(self, builder: Builder, cont: list[int]) -> list[int]:
        return builder.leaf_slot(self, lambda: TextLeaf(self.exclude, self.max_bytes), cont)

    def key(self) -> Any:
        return ["Text", sorted(e.hex() for e in self.exclude), self.max_bytes]

    def __repr__(self) -> str:
        shown = tuple(e.decode("utf-8", "replace") for e in self.exclude)
        extra = "" if self.max_bytes is None else f", max_bytes={self.max_bytes}"
        return f"Text(exclude={shown}{extra})"


class Token(Part):
    """One token id, never matched by text bytes: an int id, or the text of a single special token
    — resolved with ``tokenizer`` (a Hugging Face tokenizer) when given, else through the special
    tokens of the vocabulary the spec is compiled for (`fsm.Vocabulary.special_tokens`).

    >>> Token(5).token_id, Token("<|im_end|>").text
    (5, '<|im_end|>')
    """

    def __init__(self, id_or_text: int | str, tokenizer: Any = None):
        if isinstance(id_or_text, bool) or not isinstance(id_or_text, (int, str)):
            raise CompositionError(f"needs a token id or text, got {id_or_text!r}", part="Token")
        self.text = id_or_text if isinstance(id_or_text, str) else None
        self.token_id: int | None = None  # a text without a tokenizer: resolved at compile
        if isinstance(id_or_text, int):
            if id_or_text < 0:
                raise CompositionError(f"token id {id_or_text} is negative", part="Token")
            self.token_id = id_or_text
            return
        where = f"Token({id_or_text!r})"
        if not id_or_text:
            raise CompositionError("the text is empty", part=where)
        if tokenizer is None:
            return
        ids = tokenizer.encode(id_or_text, add_special_tokens=False)
        special = set(getattr(tokenizer, "all_special_ids", []) or [])
        added = getattr(tokenizer, "added_tokens_decoder", {}) or {}
        if len(ids) != 1 or (ids[0] not in special and ids[0] not in added):
            raise CompositionError(f"is not a single special token (it encodes to {ids})", part=where)
        self.token_id = int(ids[0])

    def emit(self, builder: Builder, cont: list[int]) -> list[int]:
        token_id = self.token_id
        if token_id is None:
            special = builder.vocab.special_tokens if builder.vocab is not None else {}
            if self.text not in special:
                shown = ", ".join(sorted(special)[:8]) or "none"
                raise CompositionError(
                    f"is no special token of the vocabulary (its special tokens: {shown})", part=repr(self)
                )
            token_id = special[self.text]
        return builder.token_slot(token_id, repr(self), cont)

    def key(self) -> Any:
        return ["Token", self.token_id] if self.token_id is not None else ["Token", "text", self.text]

    def __repr__(self) -> str:
        return f"Token({self.text!r})" if self.text is not None else f"Token({self.token_id})"


class Sequence(Part):
    """The parts one after the other (a string is a `Literal`).

    >>> len(Sequence("a", Text()).parts)
    2
    """

    def __init__(self, *parts: Any):
        self.parts = tuple(as_part(p, f"Sequence part {i}") for i, p in enumerate(parts))

    def emit(self, builder: Builder, cont: list[int]) -> list[int]:
        for p in reversed(self.parts):
            cont = builder.emit(p, cont)
        return cont

    def key(self) -> Any:
        return ["Sequence", [key_of(p) for p in self.parts]]

    def children(self) -> tuple:
        return self.parts


class Alternatives(Part):
    """Any one of the parts.

    >>> Alternatives()
    Traceback (most recent call last):
    fsm.compose.errors.CompositionError: Alternatives(): needs at least one part
    """

    def __init__(self, *parts: Any):
        if not parts:
            raise CompositionError("needs at least one part", part="Alternatives()")
        self.parts = tuple(as_part(p, f"Alternatives part {i}") for i, p in enumerate(parts))

    def emit(self, builder: Builder, cont: list[int]) -> list[int]:
        out: list[int] = []
        for p in self.parts:
            out.extend(s for s in builder.emit(p, cont) if s not in out)
        return out

    def key(self) -> Any:
        return ["Alternatives", [key_of(p) for p in self.parts]]

    def children(self) -> tuple:
        return self.parts


class Repeat(Part):
    """``part`` between ``min`` and ``max`` times (no upper bound when None), ``separator`` between.

    >>> Repeat("a", min=3, max=2)
    Traceback (most recent call last):
    fsm.compose.errors.CompositionError: Repeat(Literal('a')): min=3 is greater than max=2
    """

    def __init__(self, part: Any, min: int = 0, max: int | None = None, separator: Any = None):
        self.part = as_part(part, "Repeat part")
        self.separator = None if separator is None else as_part(separator, "Repeat separator")
        where = f"Repeat({describe(self.part)})"
        if min < 0:
            raise CompositionError(f"min={min} is negative", part=where)
        if max is not None and min > max:
            raise CompositionError(f"min={min} is greater than max={max}", part=where)
        self.min, self.max = min, max

    def emit(self, builder: Builder, cont: list[int]) -> list[int]:
        return builder.repeat(self.part, self.separator, self.min, self.max, cont)

    def key(self) -> Any:
        sep = None if self.separator is None else key_of(self.separator)
        return ["Repeat", key_of(self.part), self.min, self.max, sep]

    def children(self) -> tuple:
        return (self.part,)


class Tag(Part):
    """``begin``, then ``body``, then ``end`` (strings are `Literal`s; a `Token` works as either end).

    >>> Tag("<a>", Text(), "</a>").begin
    Literal('<a>')
    """

    def __init__(self, begin: Any, body: Any, end: Any):
        self.begin = as_part(begin, "Tag begin")
        self.body = as_part(body, "Tag body")
        self.end = as_part(end, "Tag end")

    def emit(self, builder: Builder, cont: list[int]) -> list[int]:
        return builder.emit(self.begin, builder.emit(self.body, builder.emit(self.end, cont)))

    def key(self) -> Any:
        return ["Tag", key_of(self.begin), key_of(self.body), key_of(self.end)]

    def children(self) -> tuple:
        return (self.begin, self.body, self.end)


class Triggered(Part):
    """Free text in which reaching a trigger (by default each tag's ``begin``) starts the tag whose
    begin matches; its body is followed exactly, it is closed, and free text resumes.

    ``min_calls``/``max_calls`` bound the tags; with ``stop_after_calls`` the output ends after
    the tags (no free text after the first one, tags back to back).

    >>> t = Triggered([Tag("<a>", Text(max_bytes=3), "</a>"), Tag("<a>!", Text(), "</a>")])
    >>> t.triggers
    (b'<a>',)
    >>> Triggered([Tag("<a>", Text(), "</a>")], triggers=["<", "<a"])
    Traceback (most recent call last):
    fsm.compose.errors.CompositionError: Triggered: trigger '<' is a prefix of trigger '<a'
    """

    def __init__(
        self,
        tags: Any,
        triggers: Any = None,
        min_calls: int = 0,
        max_calls: int | None = None,
        stop_after_calls: bool = False,
    ):
        self.tags = tuple(tags)
        if not self.tags:
            raise CompositionError("needs at least one tag", part="Triggered")
        for i, t in enumerate(self.tags):
            if not isinstance(t, Tag) or not isinstance(t.begin, Literal) or not t.begin.data:
                raise CompositionError(f"tag {i} is not an fsm.Tag with a text begin", part="Triggered")
        if triggers is None:
            triggers = sorted({t.begin.data for t in self.tags})
            triggers = [a for a in triggers if not any(b != a and a.startswith(b) for b in triggers)]
        elif isinstance(triggers, (str, bytes)):
            triggers = [triggers]
        self.triggers = tuple(_bytes(t) for t in triggers)
        for a in self.triggers:
            if not a:
                raise CompositionError("a trigger is empty", part="Triggered")
            for b in self.triggers:
                if a != b and b.startswith(a):
                    raise CompositionError(
                        f"trigger {a.decode()!r} is a prefix of trigger {b.decode()!r}", part="Triggered"
                    )
        for i, t in enumerate(self.tags):
            if not any(t.begin.data.startswith(g) for g in self.triggers):
                raise CompositionError(
                    f"tag {i} ({describe(t.begin)}) starts with no trigger", part="Triggered"
                )
        if min_calls < 0 or (max_calls is not None and min_calls > max_calls):
            raise CompositionError(f"min_calls={min_calls}, max_calls={max_calls}", part="Triggered")
        self.min_calls, self.max_calls, self.stop_after_calls = min_calls, max_calls, bool(stop_after_calls)

    def expanded(self) -> Part:
        """The same language in the other parts: text, then the calls (each followed by text)."""
        text = Text(exclude=self.triggers)
        call = self.dispatch()
        if self.stop_after_calls:
            return Sequence(text, Repeat(call, self.min_calls, self.max_calls))
        return Sequence(text, Repeat(Sequence(call, text), self.min_calls, self.max_calls))

    def dispatch(self) -> Part:
        """One call: a trigger, then the rest of the begin of a tag it starts, the body, the end.

        Free text runs beside one literal per trigger rather than one per tag, so with 500 tools
        a free-text state holds a few threads and the 500 begins are only read after a trigger.

        >>> t = Triggered([Tag("<a>x", Text(), "</a>"), Tag("<a>y", Text(), "</a>")], triggers=["<a>"])
        >>> t.dispatch()
        Alternatives(Sequence(Literal('<a>'), Alternatives(Sequence(Literal('x'), Text(exclude=())...)
        """
        calls = []
        for g in self.triggers:
            rests = [
                Sequence(Literal(t.begin.data[len(g) :]), t.body, t.end)
                for t in self.tags
                if t.begin.data.startswith(g)
            ]
            if rests:
                calls.append(Sequence(Literal(g), Alternatives(*rests)))
        return Alternatives(*calls)

    def emit(self, builder: Builder, cont: list[int]) -> list[int]:
        return builder.emit(self.expanded(), cont)

    def key(self) -> Any:
        return [
            "Triggered",
            [key_of(t) for t in self.tags],
            sorted(t.hex() for t in self.triggers),
            self.min_calls,
            self.max_calls,
            self.stop_after_calls,
        ]

    def children(self) -> tuple:
        return self.tags
