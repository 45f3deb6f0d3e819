"""Each grammar terminal as a byte DFA, checked against Python's ``re`` (which lark's lexer runs).

The automaton assumes the longest match (the shortest for lazy terminals); lark takes whatever
Python's regex engine matches. Sampled texts of each DFA are matched with Python's ``re`` and any
disagreement is a `GrammarError` up front, instead of a lexer that silently differs from lark's.
"""

from __future__ import annotations

import random
import re
import threading
from collections import OrderedDict, deque
from dataclasses import replace

import numpy as np

from ..automata import ByteDFA
from ..errors import GrammarError, RegexError, SpecTooComplex
from ..limits import Deadline, Limits
from ..regex import regex_to_dfa
from .lark import Terminal

# bytes a Unicode-aware Python regex may read differently from the ASCII automaton
SENSITIVE = np.zeros(256, dtype=bool)
SENSITIVE[0x80:] = True
SENSITIVE[0x1C:0x20] = True  # Python's Unicode \s includes the ASCII separators 0x1c..0x1f


def terminal_dfa(term: Terminal, limits: Limits, deadline: Deadline | None = None) -> ByteDFA:
    """Byte DFA of one terminal; lazy terminals keep only their shortest matches (what Python takes).

    Checked against Python's ``re`` on sampled texts (see `_probe_python_agrees`); cached by pattern.
    Built within ``deadline`` (the lexer's; default ``limits.max_seconds`` from now).
    """
    where = f" (line {term.line})" if term.line else ""
    if term.is_string and term.value and term.flags <= {"i"} and (term.value.isascii() or not term.flags):
        return literal_dfa(term.value, ignore_case="i" in term.flags)
    try:
        dfa, problem = _cached_check(term, limits, deadline or limits.deadline())
    except SpecTooComplex as exc:
        raise exc.named(f"terminal {term.name}{where}") from None
    except RegexError as exc:
        raise GrammarError(f"terminal {term.name}{where} cannot be enforced: {exc}") from None
    if problem:
        raise GrammarError(f"terminal {term.name}{where}: {problem}")
    return dfa


def literal_dfa(value: str, ignore_case: bool = False) -> ByteDFA:
    """Byte DFA of one literal string (ASCII letters in both cases when ``ignore_case``).

    >>> literal_dfa("Ab", ignore_case=True).accepts(b"aB")
    True
    """
    data = value.encode("utf-8")
    steps = []
    for b in data:
        ch = chr(b)
        steps.append(
            {b, ord(ch.lower()), ord(ch.upper())} if ignore_case and ch.isascii() and ch.isalpha() else {b}
        )
    used = sorted(set().union(*steps)) if steps else []
    byte_class = np.zeros(256, dtype=np.int32)
    byte_class[used] = np.arange(1, len(used) + 1)
    table = np.full((len(steps) + 1, len(used) + 1), -1, dtype=np.int32)
    for i, allowed in enumerate(steps):
        table[i, byte_class[sorted(allowed)]] = i + 1
    accepting = np.zeros(len(steps) + 1, dtype=bool)
    accepting[-1] = True
    return ByteDFA(table, byte_class, 0, accepting)


# Checked terminal DFAs by pattern and budgets (the deadline is not part of the key: a terminal
# that was built once is reused whatever time is left).
_CACHE_SIZE = 512
_cache: OrderedDict[tuple, tuple[ByteDFA, str | None]] = OrderedDict()
_cache_lock = threading.Lock()


def _cached_check(term: Terminal, limits: Limits, deadline: Deadline) -> tuple[ByteDFA, str | None]:
    """`_checked_dfa` through the cache (keyed by pattern and budgets, not by the time left)."""
    key = (term.dfa_regexp, term.regexp, term.lazy, term.unicode_sensitive, replace(limits, max_seconds=0.0))
    with _cache_lock:
        hit = _cache.get(key)
        if hit is not None:
            _cache.move_to_end(key)
            return hit
    hit = _checked_dfa(*key[:4], limits, deadline)
    with _cache_lock:
        _cache[key] = hit
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return hit


def _checked_dfa(
    dfa_regexp: str, regexp: str, lazy: bool, sensitive: bool, limits: Limits, deadline: Deadline
):
    dfa = regex_to_dfa(dfa_regexp, limits, deadline)
    if lazy:
        table = dfa.table.copy()
        table[dfa.accepting] = -1
        dfa = ByteDFA(table, dfa.byte_class, dfa.initial, dfa.accepting)
    if dfa.accepting[dfa.initial]:
        return dfa, "it matches the empty string, which lark's lexer forbids"
    return dfa, _python_disagreement(regexp, dfa, lazy, sensitive)


def _samples(dfa: ByteDFA, rng, n_random: int = 24, max_len: int = 24) -> list[bytes]:
    """Shortest text to every accepting state, plus random accepted walks (ASCII-leaning)."""
    full = dfa.full_table()
    succ = [np.nonzero(row >= 0)[0].tolist() for row in full]
    table = full.tolist()
    acc = dfa.accepting.tolist()
    paths = {dfa.initial: b""}
    queue = deque([dfa.initial])
    while queue:
        s = queue.popleft()
        nxt = succ[s]
        for b in nxt[:: max(1, len(nxt) // 6)]:
            t = table[s][b]
            if t not in paths:
                paths[t] = paths[s] + bytes([b])
                queue.append(t)
    out = [p for s, p in paths.items() if acc[s]]
    ascii_succ = [[b for b in lst if b < 0x80] for lst in succ]
    for _ in range(n_random):
        s, buf = dfa.initial, bytearray()
        for _ in range(max_len):
            if not succ[s] or (acc[s] and rng.random() < 0.3):
                break
            pool = ascii_succ[s] if ascii_succ[s] and rng.random() < 0.8 else succ[s]
            b = pool[rng.randrange(len(pool))]
            buf.append(b)
            s = table[s][b]
        if acc[s]:
            out.append(bytes(buf))
    return out


def _python_disagreement(regexp: str, dfa: ByteDFA, lazy: bool, sensitive: bool) -> str | None:
    """lark takes Python's match; the automaton assumes the longest (or, lazy, the shortest) one.

    Probe sampled texts: Python's ``re.match`` must consume exactly the text the automaton ends at.
    Returns a description of the first disagreement, or None.
    """
    rng = random.Random(0)
    rx = re.compile(regexp)
    for data in _samples(dfa, rng):
        if sensitive and SENSITIVE[np.frombuffer(data, dtype=np.uint8)].any():
            continue  # never generated: sensitive bytes are rejected while this terminal is alive
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        probes = [text]
        if lazy:  # a longer continuation must not make Python go further
            probes += [text + x for x in ("*/", "\n", "x", '"', "a", "'", text)]
        for p in probes:
            m = rx.match(p)
            if m is None or m.end() != len(text):
                got = "nothing" if m is None else repr(m.group(0))
                return (
                    f"on {p!r} Python's regex engine (which lark's lexer uses) matches {got}, not {text!r}; "
                    "reorder alternatives so longer ones come first (lark takes the first alternative "
                    "that matches, not the longest)"
                )
    return None
