"""The fallback path for patterns the tree translator does not map: interegular's character
automaton, every character transition expanded into its UTF-8 byte sequences.

interegular cannot be interrupted and grows quadratically with the pattern: callers bound the
pattern first (`validate.validate` with ``estimate_size``).
"""

from __future__ import annotations

import itertools
import re
import unicodedata

import interegular
import numpy as np
from interegular.fsm import anything_else

from ..automata import MAX_CODEPOINT, ByteDFA, complement, finish_dfa, normalize_ranges, utf8_sequences
from ..errors import RegexError, SpecTooComplex
from ..limits import Limits


def _codepoint_ranges(chars: set[str], negate: bool) -> list[tuple[int, int]]:
    """Sorted disjoint code point ranges of ``chars`` (or of its complement), surrogates removed."""
    ranges = normalize_ranges((ord(c), ord(c)) for c in chars if len(c) == 1)
    return list(complement(ranges) if negate else ranges)


def _literal(ch: str) -> str:
    if ch.isascii():
        return ch if ch.isalnum() else f"\\x{ord(ch):02x}"
    return ch


def expand_unicode_escapes(pattern: str) -> str:
    """Rewrite ``\\uXXXX``, ``\\UXXXXXXXX`` and ``\\N{name}`` as literal characters (interegular lacks them).

    Surrogate pairs written as two ``\\u`` escapes become the one character they encode.

    >>> expand_unicode_escapes(r"caf\\u00e9\\u002e")
    'café\\\\x2e'
    """
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


def _class_sequences(cfsm) -> dict:
    """The UTF-8 byte-range sequences of each character class of ``cfsm``'s alphabet."""
    mapping = dict(cfsm.alphabet.items())
    explicit = {c for c in mapping if c is not anything_else}
    class_chars: dict[int, set[str]] = {}
    other_class = mapping.get(anything_else)
    for c, k in mapping.items():
        if c is not anything_else:
            class_chars.setdefault(k, set()).add(c)
    class_ranges: dict[int, list[tuple[int, int]]] = {}
    for k in set(mapping.values()):
        rs = _codepoint_ranges(class_chars.get(k, set()), negate=False)
        if k == other_class:
            rs = sorted(rs + _codepoint_ranges(explicit, negate=True))
        class_ranges[k] = rs
    return {k: [seq for a, b in rs for seq in utf8_sequences(a, b)] for k, rs in class_ranges.items()}


def interegular_dfa(pattern: str, limits: Limits) -> ByteDFA:
    """The fallback path through interegular's character automaton.

    Kept in one function: the nested ``build``/``fill`` share the byte rows, their memo and the
    set of byte cuts of one expansion.
    """
    deadline = limits.deadline()
    cfsm = _char_fsm(pattern, limits)
    deadline.check(f"regex {pattern[:60]!r}")
    limits.check_states(len(cfsm.states), f"regex {pattern[:60]!r}")

    class_seqs = _class_sequences(cfsm)

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
        for x, y in itertools.pairwise(cuts):
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
        limits.check_memory(len(rows) * 1024, f"regex {pattern[:60]!r}")  # one int32 row of 256 bytes
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
