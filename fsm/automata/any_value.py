"""Any JSON value (``{}``, ``true``, ``additionalProperties: true``) as a lazy pushdown block.

Arbitrary JSON nests without bound, so it is not a regular language; a depth cut would silently
reject valid documents. The lazy DFA (`lazy_dfa`) only ever makes the states a token walk reaches,
so the block keeps its bracket stack *in the state*: virtual NFA states ``(mode, stack, ...)``
with the stack a string of ``[``/``{``. Each depth reached costs a few DFA states, made on demand;
no grammar engine (and no LALR table) is needed. Scalars (``null``, booleans, numbers, strings)
and object keys run small character DFAs inside the block. Whitespace follows the schema's policy:
compact, or exactly ``json.dumps(indent=k)`` layout at the block's depth.

Every state can finish (close its open brackets), so the block never leads into a dead end.

>>> from fsm.automata import AnyJson, lit, seq
>>> from fsm.automata import node_nfa
>>> from fsm.automata import LazyByteDFA
>>> d = LazyByteDFA(*node_nfa(seq(lit("["), AnyJson(), lit("]")))).as_byte_dfa()
>>> [d.accepts(t) for t in (b'[{"a":[1,{"b":null}]}]', b'[{"a":]', b'[[[[[[[[[]]]]]]]]]')]
[True, False, True]
"""

from __future__ import annotations

from .blocks import LocalStates, dfa_ranges
from .language import Cls, Enc, Node, alt, lit, rep, seq
from .numbers import Bounds, number_node
from .ranges import ANY_CHAR

_CLOSE = {"[": "]", "{": "}"}


def scalar_nodes(max_string_length: int | None = None) -> tuple[Node, Node]:
    """``(scalar, key)``: any JSON scalar, and any JSON string (an object key).

    >>> from fsm.automata import node_to_char_dfa
    >>> scalar, key = scalar_nodes()
    >>> node_to_char_dfa(scalar).accepts("-1.5e3"), node_to_char_dfa(key).accepts('"k"')
    (True, True)
    """
    string = seq(lit('"'), Enc(rep(Cls(ANY_CHAR), 0, max_string_length), True), lit('"'))
    return alt(lit("null"), lit("true"), lit("false"), number_node(Bounds()), string), string


class AnyValueBlock:
    """One any-JSON-value slot; ``end`` is the real NFA state it leads to when the value is complete.

    Local state keys (interned to small ints, see `Counters`):

    - ``("V", s)`` a value is expected (stack ``s``), ``("O", s)`` just after ``[``: a value or ``]``,
      ``("OK", s)`` just after ``{``: a key or ``}``, ``("K", s)`` a key is expected;
    - ``("S", s, g)`` inside a scalar at state ``g`` of ``scalar``; ``("KS", s, g)`` inside a key;
    - ``("A", s)`` a value just ended, ``("C", s)`` a key just ended (the colon is next);
    - ``("W", s, text, i, then)`` layout text being written, then state ``then``.
    """

    def __init__(self, scalar, key, end: int, indent: int | None = None, depth: int = 0):
        self.scalar, self.key, self.end = scalar, key, end
        self.indent, self.depth = indent, depth
        self._states = LocalStates()
        self.start = self.local(("V", ""))

    def local(self, key) -> int:
        """The small int of local state ``key`` (a tuple); made on first use."""
        return self._states.local(key)

    # -- layout -----------------------------------------------------------------------------------
    def _pad(self, level: int) -> str:
        return "\n" + " " * (self.indent * (self.depth + level))

    def _text(self, s: str, text: str, then: tuple) -> list:
        """Edges that write ``text`` then go to ``then``."""
        if len(text) == 1:
            return [(ord(text), ord(text), then)]
        return [(ord(text[0]), ord(text[0]), ("W", s, text, 1, then))]

    def _closer(self, s: str) -> list:
        close = _CLOSE[s[-1]]
        text = close if self.indent is None else self._pad(len(s) - 1) + close
        return self._text(s, text, ("A", s[:-1]))

    def _open(self, s: str, ch: str) -> list:
        return [(ord(ch), ord(ch), ("O" if ch == "[" else "OK", s + ch))]

    # -- NFA view ---------------------------------------------------------------------------------
    def edges(self, local: int) -> list:
        """Character edges of local state ``local`` (targets are local keys or ``end``)."""
        key = self._states.keys[local]
        mode, s = key[0], key[1]
        if mode == "V":
            out = [(lo, hi, ("S", s, t)) for lo, hi, t in self.scalar.edges[0]]
            return out + self._open(s, "[") + self._open(s, "{")
        if mode == "S":
            return [(lo, hi, ("S", s, t)) for lo, hi, t in self.scalar.edges[key[2]]]
        if mode == "K":
            return [(lo, hi, ("KS", s, t)) for lo, hi, t in self.key.edges[0]]
        if mode == "KS":
            return [(lo, hi, ("KS", s, t)) for lo, hi, t in self.key.edges[key[2]]]
        if mode in ("O", "OK"):  # the empty container: no layout inside, whatever the indent
            c = ord(_CLOSE[s[-1]])
            return [(c, c, ("A", s[:-1]))]
        if mode == "A":
            if not s:
                return []
            nxt = ("V", s) if s[-1] == "[" else ("K", s)
            sep = "," if self.indent is None else "," + self._pad(len(s))
            return self._text(s, sep, nxt) + self._closer(s)
        if mode == "C":
            return self._text(s, ":" if self.indent is None else ": ", ("V", s))
        if mode == "W":
            text, i, then = key[2], key[3], key[4]
            c = ord(text[i])
            return [(c, c, then if i + 1 == len(text) else ("W", s, text, i + 1, then))]
        raise AssertionError(key)

    def eps(self, local: int) -> list:
        """Epsilon targets of local state ``local`` (local keys, or ``end`` when the value is complete)."""
        key = self._states.keys[local]
        mode, s = key[0], key[1]
        if mode == "S":
            return [("A", s)] if self.scalar.accepting[key[2]] else []
        if mode == "KS":
            return [("C", s)] if self.key.accepting[key[2]] else []
        if mode == "A" and not s:
            return [self.end]
        if mode in ("O", "OK"):
            first = ("V", s) if mode == "O" else ("K", s)
            if self.indent is None:
                return [first]
            return [("W", s, self._pad(len(s)), 0, first)]
        return []

    def all_edges(self):
        """Every edge range the block can take (for spellability checks)."""
        yield from dfa_ranges(self.scalar)
        yield from dfa_ranges(self.key)
        for ch in "[]{},:" + ("" if self.indent is None else " \n"):
            yield (ord(ch), ord(ch), 0)
