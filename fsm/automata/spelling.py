"""Whether a vocabulary's single-byte tokens can finish an automaton from every state it holds.

A lazily computed token row is exact only when no state a token leads to is a token-level dead end:
from every NFA state some accepting path must be spelled by tokens. Single-byte tokens are the
sure ones. Most vocabularies lack a few bytes (SmolLM2 has no token ``\\xf1`` or ``\\xf2``, the lead
bytes of U+40000..U+BFFFF), and an edge that only such characters take is harmless when the state
has another way on (RFC 3987's ``ucschar`` is a dozen parallel ranges, two of them out of reach):
the check is made per state, on the NFA with the edges no single byte spells left out, rather than
refusing the lazy index for the whole automaton (which sent an ``iri`` schema to the eager index or
the grammar engine, seconds where the lazy index takes milliseconds).

>>> from fsm.automata import lit, alt, node_nfa
>>> trans, eps, start, final, _, counters = node_nfa(alt(lit("a"), lit("\\U00050000")))
>>> spelled_to_the_end(trans, eps, final, counters, None, [ord("a")] + list(range(0x80, 0xC0)))
True
>>> spelled_to_the_end(trans, eps, final, counters, None, [ord("b")] + list(range(0x80, 0xC0)))
False
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..limits import Deadline
from .byte_classes import edge_ranges
from .liveness import live_states


def spelled_to_the_end(
    trans,
    eps,
    final: int,
    counters,
    calls,
    single_bytes,
    deadline: Deadline | None = None,
    ranges: set[tuple[int, int]] | None = None,
) -> bool:
    """True when, from every state of the trimmed NFA (``trans``/``eps``, its counter blocks, its
    rule ``calls``) that can reach ``final``, a path to it exists whose every character some
    sequence of the ``single_bytes`` tokens spells. Continuation bytes must all be tokens (a token
    may end inside a character), and every edge of a counter block must be spelled (a block's
    states are not checked one by one). ``ranges``: `byte_classes.edge_ranges` of ``trans``, when known.
    """
    spelled = _speller(np.asarray(single_bytes, dtype=np.int64))
    if spelled is None:
        return False  # a continuation byte that is no token: let the eager index prune
    if spelled is _every_byte:
        return True  # (a vocabulary with every UTF-8 byte a token: every range spelled)
    # the distinct ranges only (``ranges``, when the caller has them: `byte_classes.edge_ranges`)
    ranges = edge_ranges(trans) if ranges is None else ranges
    bad = {r for r in ranges if not spelled(r)}
    if counters is not None and not all(spelled((lo, hi)) for lo, hi, _ in counters.all_edges()):
        return False
    if not bad:
        return True
    entries = counters.entries if counters is not None else ()
    before = live_states(trans, eps, final, entries, calls, deadline)
    kept = [tuple(e for e in edges if (e[0], e[1]) not in bad) for edges in trans]
    after = live_states(kept, eps, final, entries, calls, deadline)
    return all(a or not b for a, b in zip(after, before, strict=True))


# per vocabulary (its single-byte tokens): whether each range seen so far is spelled; every
# compile for one model asks about the same few dozen ranges
_SPELLERS: dict[bytes, Callable[[tuple[int, int]], bool] | None] = {}


def _speller(single_bytes: np.ndarray) -> Callable[[tuple[int, int]], bool] | None:
    """Whether a range's characters can each be spelled by ``single_bytes`` tokens (memoized per
    range); None when a continuation byte is no token."""
    key = single_bytes.tobytes()
    if key in _SPELLERS:
        return _SPELLERS[key]
    ok = np.zeros(256, dtype=bool)
    ok[single_bytes] = True
    if not ok[0x80:0xC0].all():
        speller = None
    elif ok[_UTF8_BYTES].all():  # (C0, C1 and F5..FF are in no character's UTF-8 form)
        speller = _every_byte
    else:
        prefix = np.concatenate([[0], np.cumsum(ok)]).tolist()
        known: dict[tuple[int, int], bool] = {}

        def spelled(r: tuple[int, int]) -> bool:
            hit = known.get(r)
            if hit is None:
                lo, hi = r
                a, b = (lo, hi) if hi < 0x80 else (lo, 0x7F) if lo < 0x80 else (_lead(lo), _lead(hi))
                hit = prefix[b + 1] > prefix[a] or (
                    lo < 0x80 <= hi and prefix[_lead(hi) + 1] > prefix[_lead(0x80)]
                )
                if len(known) < 65536:
                    known[r] = hit
            return hit

        speller = spelled
    if len(_SPELLERS) >= 16:
        _SPELLERS.clear()
    _SPELLERS[key] = speller
    return speller


_UTF8_BYTES = np.r_[0:0xC0, 0xC2:0xF5]  # the bytes of UTF-8 text


def _every_byte(r: tuple[int, int]) -> bool:
    """The speller of a vocabulary that spells every byte of UTF-8 text alone: any range."""
    return True


def _lead(c: int) -> int:
    """The first UTF-8 byte of code point ``c`` (surrogates included: ranges may span them)."""
    return chr(c).encode("utf-8", "surrogatepass")[0]
