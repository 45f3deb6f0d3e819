"""Regex specs and their minimized byte-level DFA.

A pattern (Python ``re`` syntax, full match) is parsed by interegular into a character automaton,
then every character transition is expanded into its UTF-8 byte sequences, giving a deterministic
automaton over bytes. Working on bytes is what lets a token end in the middle of a multi-byte
character. The result is minimized (Moore partition refinement, vectorized) and pruned to live
states, and its 256 byte columns are folded into equivalence classes.

Semantics: ``\\w``, ``\\d``, ``\\s`` are ASCII classes (as with ``re.ASCII`` and in ECMA-262 /
JSON Schema); ``.`` is any character but ``\\n``; everything else follows Python's ``re``.
"""

from __future__ import annotations

import hashlib
import re

try:  # Python >= 3.11
    from re import _constants as sre_constants  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover
    import sre_constants  # type: ignore[no-redef]
from dataclasses import dataclass, field
from typing import Sequence

import interegular
import numpy as np
from interegular.fsm import anything_else

from .automata import MAX_CODEPOINT, SURROGATES, ByteDFA, codepoint_ranges_between, finish_dfa, utf8_sequences
from .errors import RegexError, SpecTooComplex
from .limits import DEFAULT_LIMITS, Limits

# ---------------------------------------------------------------------------------------------
# Specs


@dataclass(frozen=True)
class Regex:
    """A regular-expression spec: the output must fully match ``pattern``.

    >>> Regex(r"\\d{4}-\\d{2}-\\d{2}").pattern
    '\\\\d{4}-\\\\d{2}-\\\\d{2}'
    """

    pattern: str

    def __post_init__(self):
        if not isinstance(self.pattern, str):
            raise RegexError(f"a regex pattern must be a str, got {type(self.pattern).__name__}")

    @property
    def fingerprint(self) -> str:
        return "regex:" + hashlib.sha256(self.pattern.encode("utf-8", "surrogatepass")).hexdigest()[:32]

    def to_regex(self) -> str:
        return self.pattern

    def build_index(self, vocab, limits: Limits | None = None):
        from .index import RegexIndex

        return RegexIndex(
            regex_to_dfa(self.pattern, limits), vocab, fingerprint=self.fingerprint, limits=limits
        )


@dataclass(frozen=True)
class Choice:
    """The output is exactly one of ``options`` (literal strings).

    >>> Choice(["yes", "no"]).to_regex()
    '(?:yes|no)'
    """

    options: tuple[str, ...] = field()

    def __init__(self, options: Sequence[str]):
        if isinstance(options, str) or not isinstance(options, (list, tuple)):
            raise RegexError("Choice takes a list of strings, e.g. Choice(['yes', 'no'])")
        if not options:
            raise RegexError("Choice needs at least one option")
        for i, o in enumerate(options):
            if not isinstance(o, str):
                raise RegexError(f"Choice option {i} is {type(o).__name__}, not a str")
        object.__setattr__(self, "options", tuple(options))

    def to_regex(self) -> str:
        return "(?:" + "|".join(re.escape(o) for o in self.options) + ")"

    @property
    def fingerprint(self) -> str:
        return "choice:" + hashlib.sha256(self.to_regex().encode("utf-8", "surrogatepass")).hexdigest()[:32]

    def build_index(self, vocab, limits: Limits | None = None):
        from .index import RegexIndex

        return RegexIndex(
            regex_to_dfa(self.to_regex(), limits), vocab, fingerprint=self.fingerprint, limits=limits
        )


# ---------------------------------------------------------------------------------------------
# Validation: reject what no finite automaton can honour, with the position.

_UNSUPPORTED = {
    sre_constants.GROUPREF: "a backreference",
    sre_constants.GROUPREF_EXISTS: "a conditional group (?(...)...)",
    sre_constants.ASSERT: "a lookaround assertion",
    sre_constants.ASSERT_NOT: "a negative lookaround assertion",
}
for _name, _what in (
    ("POSSESSIVE_REPEAT", "a possessive quantifier (*+, ++, ?+, {m,n}+)"),
    ("ATOMIC_GROUP", "an atomic group (?>...)"),
):
    if hasattr(sre_constants, _name):  # Python >= 3.11; they change which strings match
        _UNSUPPORTED[getattr(sre_constants, _name)] = _what
_ANCHORS = {sre_constants.AT}


def _find_construct(pattern: str, kind: str) -> int:
    probes = {
        "a backreference": r"\\[1-9]|\(\?P=",
        "a conditional group (?(...)...)": r"\(\?\(",
        "a lookaround assertion": r"\(\?<?=",
        "a negative lookaround assertion": r"\(\?<?!",
        "a possessive quantifier (*+, ++, ?+, {m,n}+)": r"[*+?}]\+",
        "an atomic group (?>...)": r"\(\?>",
        "an anchor": r"\\[bBAZ]|\^|\$",
    }
    m = re.search(probes.get(kind, "$^"), pattern)
    return m.start() if m else -1


_MAX_CLASS_CODEPOINTS = 300_000


def _estimate(items, pattern: str) -> int:
    """Upper estimate of automaton states: counted repeats multiply, alternatives add."""
    total = 0
    for op, av in items:
        if op is sre_constants.SUBPATTERN:
            total += _estimate(av[-1], pattern)
        elif op is sre_constants.BRANCH:
            total += sum(_estimate(b, pattern) for b in av[1])
        elif op in (
            sre_constants.MAX_REPEAT,
            sre_constants.MIN_REPEAT,
            getattr(sre_constants, "POSSESSIVE_REPEAT", None),
        ):
            lo, hi = av[0], av[1]
            times = lo + 1 if hi == sre_constants.MAXREPEAT else max(hi, 1)
            total += _estimate(av[2], pattern) * times
        elif op is sre_constants.IN:
            size = sum(b - a + 1 for kind, (a, b) in ((k, v) for k, v in av if k is sre_constants.RANGE))
            negated = any(k is sre_constants.NEGATE for k, _ in av)
            if size > _MAX_CLASS_CODEPOINTS and not negated:
                raise SpecTooComplex(
                    f"regex {pattern[:80]!r}: a character class spans {size:,} code points; write it as a "
                    "negated class (e.g. [^\\x00-\\x7f]) which compiles in constant time",
                    budget="class_size",
                    limit=_MAX_CLASS_CODEPOINTS,
                )
            total += 1
        else:
            total += 1
    return total


def _validate(pattern: str, limits: Limits = DEFAULT_LIMITS, estimate_size: bool = False) -> None:
    try:
        import re._parser as sre_parse  # type: ignore[import-not-found]
    except ImportError:  # Python 3.10
        import sre_parse  # type: ignore[no-redef]
    try:
        parsed = sre_parse.parse(pattern)
    except re.error as exc:
        pos = f" at position {exc.pos}" if exc.pos is not None else ""
        raise RegexError(f"invalid regex {pattern!r}: {exc.msg}{pos}") from None
    except (RecursionError, OverflowError) as exc:
        raise RegexError(f"regex {pattern[:80]!r} is too deeply nested or too large: {exc}") from None
    if parsed.state.flags & (re.MULTILINE | re.VERBOSE):
        raise RegexError(f"regex {pattern[:80]!r}: the (?m) and (?x) flags are not supported")

    def visit(items) -> None:
        for op, av in items:
            if op in _UNSUPPORTED:
                what = _UNSUPPORTED[op]
                pos = _find_construct(pattern, what)
                where = f" at position {pos}" if pos >= 0 else ""
                raise RegexError(
                    f"regex {pattern[:80]!r} uses {what}{where}, which is not supported (it needs backtracking semantics)"
                )
            if op in _ANCHORS:
                pos = _find_construct(pattern, "an anchor")
                where = f" at position {pos}" if pos >= 0 else ""
                raise RegexError(
                    f"regex {pattern[:80]!r} uses an anchor or word boundary{where}; patterns are always "
                    "matched in full, so drop ^ and $ (and \\b is not supported)"
                )
            if op is sre_constants.SUBPATTERN:
                visit(av[-1])
            elif op is sre_constants.BRANCH:
                for b in av[1]:
                    visit(b)
            elif op in (
                sre_constants.MAX_REPEAT,
                sre_constants.MIN_REPEAT,
                getattr(sre_constants, "POSSESSIVE_REPEAT", None),
            ):
                visit(av[2])
            elif op is getattr(sre_constants, "ATOMIC_GROUP", None):
                visit(av)

    visit(parsed)
    if not estimate_size:
        return
    estimate = _estimate(parsed, pattern)
    budget = min(limits.max_states, limits.max_regex_positions)
    if estimate > budget:
        name = "max_states" if limits.max_states <= limits.max_regex_positions else "max_regex_positions"
        raise SpecTooComplex(
            f"regex {pattern[:80]!r}: its counted repeats and alternatives expand to about {estimate:,} "
            f"positions, over the budget {name}={budget:,} (nested counted repeats multiply)",
            budget=name,
            limit=budget,
        )


# ---------------------------------------------------------------------------------------------
# Character sets -> UTF-8 byte-range sequences


def _codepoint_ranges(chars: set[str], complement: bool) -> list[tuple[int, int]]:
    """Sorted disjoint code point ranges of ``chars`` (or of its complement), surrogates removed."""
    cps = sorted(ord(c) for c in chars if len(c) == 1)
    ranges: list[tuple[int, int]] = []
    for c in cps:
        if ranges and ranges[-1][1] + 1 == c:
            ranges[-1] = (ranges[-1][0], c)
        else:
            ranges.append((c, c))
    if complement:
        comp, lo = [], 0
        for a, b in ranges:
            if a > lo:
                comp.append((lo, a - 1))
            lo = b + 1
        if lo <= MAX_CODEPOINT:
            comp.append((lo, MAX_CODEPOINT))
        ranges = comp
    out = []
    for a, b in ranges:  # surrogates cannot be encoded in UTF-8
        if b < SURROGATES[0] or a > SURROGATES[1]:
            out.append((a, b))
        else:
            if a < SURROGATES[0]:
                out.append((a, SURROGATES[0] - 1))
            if b > SURROGATES[1]:
                out.append((SURROGATES[1] + 1, b))
    return out


# ---------------------------------------------------------------------------------------------
# interegular char FSM -> byte DFA


def _literal(ch: str) -> str:
    if ch.isascii():
        return ch if ch.isalnum() else "\\x%02x" % ord(ch)
    return ch


def expand_unicode_escapes(pattern: str) -> str:
    """Rewrite ``\\uXXXX``, ``\\UXXXXXXXX`` and ``\\N{name}`` as literal characters (interegular lacks them).

    Surrogate pairs written as two ``\\u`` escapes become the one character they encode.

    >>> expand_unicode_escapes(r"caf\\u00e9\\u002e")
    'café\\\\x2e'
    """
    import unicodedata

    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c != "\\" or i + 1 >= n:
            out.append(c)
            i += 1
            continue
        nxt = pattern[i + 1]
        cp = None
        if nxt == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", pattern[i + 2 : i + 6]):
            cp, i = int(pattern[i + 2 : i + 6], 16), i + 6
            if 0xD800 <= cp <= 0xDBFF and re.fullmatch(r"\\u[dD][c-fC-F][0-9a-fA-F]{2}", pattern[i : i + 6]):
                low = int(pattern[i + 2 : i + 6], 16)
                cp, i = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00), i + 6
        elif nxt == "U" and re.fullmatch(r"[0-9a-fA-F]{8}", pattern[i + 2 : i + 10]):
            cp, i = int(pattern[i + 2 : i + 10], 16), i + 10
        elif nxt == "N" and pattern[i + 2 : i + 3] == "{" and "}" in pattern[i + 3 :]:
            end = pattern.index("}", i + 3)
            try:
                cp = ord(unicodedata.lookup(pattern[i + 3 : end]))
            except KeyError:
                raise RegexError(f"regex {pattern[:80]!r}: unknown character name at position {i}") from None
            i = end + 1
        else:
            out.append(pattern[i : i + 2])
            i += 2
            continue
        if 0xD800 <= cp <= 0xDFFF:
            raise RegexError(f"regex {pattern[:80]!r}: a lone surrogate escape at position {i - 6}")
        if cp > MAX_CODEPOINT:
            raise RegexError(f"regex {pattern[:80]!r}: code point {cp:#x} is beyond Unicode")
        out.append(_literal(chr(cp)))
    return "".join(out)


def _char_fsm(pattern: str, limits: Limits):
    try:
        return interegular.parse_pattern(expand_unicode_escapes(pattern)).to_fsm()
    except RecursionError:
        raise SpecTooComplex(f"regex {pattern[:80]!r} is nested too deeply", budget="recursion") from None
    except MemoryError:
        raise SpecTooComplex(
            f"regex {pattern[:80]!r} needs too much memory", budget="max_index_bytes"
        ) from None
    except RegexError:
        raise
    except Exception as exc:  # interegular raises its own parse errors and `Unsupported`
        raise RegexError(f"regex {pattern[:80]!r} is not supported: {exc}") from None


def regex_to_dfa(pattern: str, limits: Limits | None = None) -> ByteDFA:
    """Compile a pattern to a minimized, live-pruned byte DFA.

    >>> regex_to_dfa("caf\\u00e9").accepts("café".encode())
    True
    """
    limits = limits or DEFAULT_LIMITS
    _validate(pattern, limits)
    fast = _tree_dfa(pattern, limits)
    if fast is not None:
        return fast
    # interegular cannot be interrupted and grows quadratically: bound its input first.
    _validate(pattern, limits, estimate_size=True)
    return _interegular_dfa(pattern, limits)


def _tree_dfa(pattern: str, limits: Limits) -> ByteDFA | None:
    """The linear-time path: Python's parser -> range tree -> Thompson NFA -> subset construction."""
    from .automata import Untranslatable, node_to_dfa, regex_node
    from .errors import SchemaError

    try:
        node = regex_node(pattern)
    except (Untranslatable, RecursionError):
        return None
    try:
        return node_to_dfa(node, limits)
    except SpecTooComplex as exc:
        raise SpecTooComplex(f"regex {pattern[:80]!r}: {exc}", budget=exc.budget, limit=exc.limit) from None
    except SchemaError:
        raise RegexError(f"regex {pattern[:80]!r} matches no string at all") from None


def _interegular_dfa(pattern: str, limits: Limits) -> ByteDFA:
    """The fallback path through interegular's character automaton."""
    deadline = limits.deadline()
    cfsm = _char_fsm(pattern, limits)
    deadline.check(f"regex {pattern[:60]!r}")
    limits.check_states(len(cfsm.states), f"regex {pattern[:60]!r}")

    # Character classes of the alphabet -> code point ranges.
    mapping = cfsm.alphabet._symbol_mapping
    explicit = {c for c in mapping if c is not anything_else}
    class_chars: dict[int, set[str]] = {}
    other_class = mapping.get(anything_else)
    for c, k in mapping.items():
        if c is not anything_else:
            class_chars.setdefault(k, set()).add(c)
    class_ranges: dict[int, list[tuple[int, int]]] = {}
    for k in set(mapping.values()):
        rs = _codepoint_ranges(class_chars.get(k, set()), complement=False)
        if k == other_class:
            rs = sorted(rs + _codepoint_ranges(explicit, complement=True))
        class_ranges[k] = rs
    class_seqs = {k: [seq for a, b in rs for seq in utf8_sequences(a, b)] for k, rs in class_ranges.items()}

    states = sorted(cfsm.states, key=lambda s: (s != cfsm.initial, str(s)))
    sid = {s: i for i, s in enumerate(states)}
    n_char = len(states)
    rows: list[np.ndarray] = [np.full(256, -1, dtype=np.int32) for _ in range(n_char)]
    memo: dict[frozenset, int] = {}

    def build(items: frozenset) -> int:
        node = memo.get(items)
        if node is not None:
            return node
        node = len(rows)
        rows.append(np.full(256, -1, dtype=np.int32))
        memo[items] = node
        fill(rows[node], items)
        return node

    all_cuts: set[int] = {0, 256}

    def fill(row: np.ndarray, items) -> None:
        cuts = set()
        for seq, _ in items:
            cuts.add(seq[0][0])
            cuts.add(seq[0][1] + 1)
        all_cuts.update(cuts)
        cuts = sorted(cuts)
        for x, y in zip(cuts, cuts[1:]):
            children = [(seq[1:], t) for seq, t in items if seq[0][0] <= x and y - 1 <= seq[0][1]]
            if not children:
                continue
            if len(children[0][0]) == 0:
                row[x:y] = children[0][1]
            else:
                row[x:y] = build(frozenset(children))

    for s in states:
        items = []
        for k, t in cfsm.map.get(s, {}).items():
            tid = sid[t]
            items.extend((seq, tid) for seq in class_seqs.get(k, ()))
        if items:
            fill(rows[sid[s]], items)
        if len(rows) > limits.max_states:
            limits.check_states(len(rows), f"regex {pattern[:60]!r}")
        deadline.check(f"regex {pattern[:60]!r}")

    # Bytes between two consecutive range boundaries behave alike everywhere: fold them into classes
    # before any sorting work (a refinement of the exact classes, merged again in `finish_dfa`).
    cuts = np.array(sorted(all_cuts))
    byte_class = np.searchsorted(cuts, np.arange(256), side="right") - 1
    table = np.stack(rows)[:, cuts[:-1]]
    accepting = np.zeros(len(rows), dtype=bool)
    for s in cfsm.finals:
        accepting[sid[s]] = True
    dfa = finish_dfa(table, 0, accepting, deadline, f"regex {pattern[:60]!r}", byte_class)
    if dfa is None:
        raise RegexError(f"regex {pattern[:80]!r} matches no string at all")
    return dfa
