"""Checkers shared by the tests, the fuzz runner and the benchmarks (as ``xgrammar.testing`` is).

Everything here drives an index only through its public contract (`fsm.Index`, `fsm.Matcher`), so
one checker serves every spec kind. Imports neither torch nor pytest nor hypothesis: a random
generator (``random.Random`` or ``numpy.random.Generator``) is passed in.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from .errors import TokenRejected
from .index import LazyDfaIndex, tokenize_longest, unpack_bitmask

if TYPE_CHECKING:
    from .automata import CharDFA
    from .index import Index
    from .vocabulary import Vocabulary


class Tokenizer(Protocol):
    """Anything with a Hugging Face style ``encode`` (the tests pass the real SmolLM2 tokenizer)."""

    def encode(self, text: str, add_special_tokens: bool = ...) -> list[int]: ...


class RandomSource(Protocol):
    """What the walks need of a random generator: ``random.Random`` and numpy's both have it."""

    def random(self) -> float: ...

    def choice(self, seq: Any) -> Any: ...


def tokens_of(
    index: Index, text: str | bytes | Sequence[int], tokenizer: Tokenizer | None = None
) -> list[int]:
    """Token ids spelling ``text``: the tokenizer's when one is given, else greedy longest match
    (a sequence of ids is taken as it is).

    >>> import fsm
    >>> v = fsm.Vocabulary([b"a", b"ab", b"b", None], eos_token_ids=[3])
    >>> tokens_of(fsm.compile(fsm.Regex("(ab)+"), v), "abab")
    [1, 1]
    """
    if not isinstance(text, (str, bytes)):
        return [int(t) for t in text]
    if tokenizer is not None:
        if isinstance(text, bytes):
            text = text.decode("utf-8")
        return list(tokenizer.encode(text, add_special_tokens=False))
    data = text.encode("utf-8") if isinstance(text, str) else text
    ids = tokenize_longest(index.vocabulary.trie, data)
    if index.vocabulary.decode(ids) != data:
        raise ValueError(f"the vocabulary cannot spell {data!r} by longest match")
    return ids


def states_along(index: Index, text: str | bytes | Sequence[int], tokenizer: Tokenizer | None = None) -> list:
    """The matcher states a walk of ``text`` visits, the start state first; the walk stops at the
    first token the index refuses (a policy may refuse a valid instance part-way: what came before
    is still worth checking).

    >>> import fsm
    >>> v = fsm.Vocabulary([b"a", b"b", None], eos_token_ids=[2])
    >>> len(states_along(fsm.compile(fsm.Regex("ab"), v), "abb"))
    3
    """
    m = index.matcher()
    states = [m.state]
    for t in tokens_of(index, text, tokenizer):
        try:
            m.advance(t)
        except TokenRejected:
            break
        states.append(m.state)
    return states


def accepts(index: Index, text: str | bytes | Sequence[int], tokenizer: Tokenizer | None = None) -> bool:
    """Whether a fresh matcher of ``index`` takes ``text``'s tokens (see `tokens_of`) and then accepts.

    >>> import fsm
    >>> v = fsm.Vocabulary([b"1", b"2", b"+", None], eos_token_ids=[3])
    >>> index = fsm.compile(fsm.Regex(r"\\d+(\\+\\d+)*"), v)
    >>> accepts(index, "1+2"), accepts(index, "1+"), accepts(index, [0, 2, 1])
    (True, False, True)
    """
    m = index.matcher()
    try:
        for t in tokens_of(index, text, tokenizer):
            m.advance(t)
    except TokenRejected:
        return False
    return m.is_accepting()


@dataclass
class Walk:
    """One random walk: the text tokens taken, and how it ended."""

    tokens: list[int]  # EOS not included
    data: bytes
    finished: bool  # ended by taking EOS (else it hit the token cap)
    accepting: bool  # the matcher accepted where it stopped

    @property
    def text(self) -> str:
        """The walk's bytes as UTF-8: strict for a finished walk, with replacement characters where
        the token cap cut a character."""
        return self.data.decode("utf-8", "strict" if self.finished else "replace")


def random_walk(index: Index, rng: RandomSource, max_tokens: int = 150, eos_bias: float | None = 0.5) -> Walk:
    """Random allowed tokens from the start until EOS or ``max_tokens``.

    With ``eos_bias``, EOS is taken with that probability where allowed and text tokens are drawn
    uniformly otherwise (walks of moderate length); with None, every allowed token, EOS included,
    is equally likely. Raises AssertionError at a reachable state with nothing allowed (a dead end
    is a bug of the index).

    >>> import random, fsm
    >>> v = fsm.Vocabulary([b"a", b"b", None], eos_token_ids=[2])
    >>> w = random_walk(fsm.compile(fsm.Regex("a+b"), v), random.Random(0))
    >>> w.finished, w.text.endswith("b")
    (True, True)
    """
    m = index.matcher()
    vocab = index.vocabulary
    eos = set(vocab.eos_token_ids)
    out: list[int] = []
    for _ in range(max_tokens):
        allowed = m.allowed_token_ids()
        assert len(allowed) > 0, f"dead end after {vocab.decode(out)!r}"
        if eos_bias is None:
            t = int(rng.choice(allowed))
        else:
            if m.is_accepting() and rng.random() < eos_bias:
                return Walk(out, vocab.decode(out), True, True)
            choices = [int(t) for t in allowed if int(t) not in eos] or [int(allowed[0])]
            t = int(rng.choice(choices))
        if t in eos:
            m.advance(t)
            return Walk(out, vocab.decode(out), True, True)
        m.advance(t)
        out.append(t)
    return Walk(out, vocab.decode(out), False, m.is_accepting())


def valid_walks(
    index: Index, rng: RandomSource, walks: int, is_valid: Callable[[str], bool], **opts: Any
) -> list[str]:
    """Texts of the ``walks`` random walks (see `random_walk`) that finished, each asserted valid.

    >>> import random, fsm
    >>> v = fsm.Vocabulary([b"a", b"b", None], eos_token_ids=[2])
    >>> texts = valid_walks(fsm.compile(fsm.Regex("a*"), v), random.Random(1), 5, lambda t: "b" not in t)
    >>> len(texts)
    5
    """
    out = []
    for _ in range(walks):
        w = random_walk(index, rng, **opts)
        if w.finished:
            text = w.text
            assert is_valid(text), text
            out.append(text)
    return out


def check_matcher_contract(index: Index, tokens: Sequence[int]) -> None:
    """Assert the `fsm.Matcher` contract along ``tokens`` (which the index must accept in order).

    At every step: allowed ids are sorted and equal the bits of ``fill_bitmask``; EOS is allowed
    exactly when accepting; ``is_allowed`` agrees; a copy advanced and rolled back returns to the
    same state; forced tokens, when there are any, are accepted.

    >>> import fsm
    >>> v = fsm.Vocabulary([b"a", b"b", None], eos_token_ids=[2])
    >>> check_matcher_contract(fsm.compile(fsm.Regex("ab"), v), [0, 1])
    """
    m = index.matcher()
    vocab = index.vocabulary
    words = np.zeros((vocab.size + 31) // 32, dtype=np.int32)
    eos = set(vocab.eos_token_ids)
    for i, t in enumerate([*tokens, None]):
        allowed = m.allowed_token_ids()
        assert np.all(allowed[:-1] < allowed[1:]), "allowed ids not sorted"
        words[:] = 0
        m.fill_bitmask(words)
        assert unpack_bitmask(words, vocab.size).tolist() == allowed.tolist(), f"bitmask differs at {i}"
        assert (eos <= set(allowed.tolist())) == m.is_accepting(), f"EOS and is_accepting differ at {i}"
        assert m.n_consumed == i
        forced = m.forced_tokens()
        if forced:
            assert m.accepts_tokens(forced), f"forced tokens {forced} rejected at {i}"
        if t is None:
            break
        assert m.is_allowed(t), f"token {t} not allowed at {i}"
        c = m.copy()
        c.advance(t)
        assert c.n_consumed == i + 1
        c.rollback()
        assert c.state == m.state and c.allowed_token_ids().tolist() == allowed.tolist()
        m.advance(t)
    if m.is_accepting():
        e = min(eos)
        m.advance(e)
        assert m.is_finished() and m.allowed_token_ids().tolist() == sorted(eos)
        c = m.copy()
        assert c.is_finished(), "a copy after EOS is not finished"
        m.rollback()
        assert m.n_consumed == len(tokens)


def walked_index(index: LazyDfaIndex) -> LazyDfaIndex:
    """An index over ``index``'s automaton whose every row is walked (no shifted, shaped, kept,
    sibling, literal or narrow row): what `check_same_row` compares the others with.

    >>> from fsm import Vocabulary
    >>> from fsm.automata import LazyByteDFA, lit, node_nfa
    >>> from fsm.index import LazyDfaIndex
    >>> idx = LazyDfaIndex(LazyByteDFA(*node_nfa(lit("a"))), Vocabulary([b"a", None], eos_token_ids=[1]))
    >>> walked_index(idx).shaped_rows, walked_index(idx).lazy is idx.lazy
    (False, True)
    """
    return LazyDfaIndex(
        index.lazy,
        index.vocabulary,
        limits=index.limits,
        shift_rows=False,
        shaped_rows=False,
        shared_blocks=False,
        sibling_rows=False,
        literal_rows=False,
        narrow_rows=False,
    )


def check_same_row(index: LazyDfaIndex, other: LazyDfaIndex, state: int) -> None:
    """Assert that two lazy indexes over one automaton give ``state`` the same row: the same tokens
    and mask, and each token's end the same state or one of the same NFA set (a state inside a
    character is named by the byte read into it, one made from its set by the set: the same
    language either way). What rows derived, shaped or shared are checked against a walk with.

    >>> from fsm import Vocabulary
    >>> from fsm.automata import LazyByteDFA, cls, node_nfa, rep
    >>> from fsm.index import LazyDfaIndex
    >>> v = Vocabulary([b"a", b"b", b"ab", None], eos_token_ids=[3])
    >>> lazy = LazyByteDFA(*node_nfa(rep(cls((97, 98)), 0, 300)))
    >>> check_same_row(LazyDfaIndex(lazy, v), LazyDfaIndex(lazy, v, shift_rows=False), lazy.initial)
    """
    a, b = index.row(state), other.row(state)
    assert np.array_equal(a.tokens, b.tokens), f"state {state}: tokens differ"
    sets = index.lazy.state_set
    pairs = set(zip(a.next_states.tolist(), b.next_states.tolist(), strict=True))
    bad = [(x, y) for x, y in pairs if x != y and not (min(x, y) >= 0 and sets(x) == sets(y))]
    assert not bad, f"state {state}: end states differ, e.g. {bad[:3]}"
    assert np.array_equal(index.bitmask(state), other.bitmask(state)), f"state {state}: masks differ"
    assert a.has_text == b.has_text
    # one token at a time too (what `advance` asks): a row made lazily answers it another way;
    # every token of a small row, of a big one a spread sample and every token holding JSON's
    # structural bytes (a quote, an escape, a separator: those leave a string, or re-enter it)
    tok = b.tokens
    if len(tok) <= 512:
        pick = np.arange(len(tok))
    else:
        marked = _structural(index.vocabulary)[tok]
        marked[:: len(tok) // 256] = True
        pick = np.flatnonzero(marked)
    for i in pick.tolist():
        t, want = int(tok[i]), int(b.next_states[i])
        got = a.next_state(t)
        assert got is not None and (got == want or (min(got, want) >= 0 and sets(got) == sets(want))), (
            f"state {state}: token {t} leads to {got}, walked {want}"
        )


def _structural(vocab: Vocabulary) -> np.ndarray:
    """Whether each token's bytes hold one of ``"\\,:{}[]``, per vocabulary."""

    def build() -> np.ndarray:
        return np.array(
            [t is not None and len(t.translate(None, b'"\\,:{}[]')) < len(t) for t in vocab.tokens]
        )

    return vocab.derived("testing:structural", build)


def sample_char_dfa(d: CharDFA, rnd: RandomSource, max_len: int = 200, stop: float = 0.2) -> str | None:
    """A random string of a character DFA (every state is live), or None if it ran too long.

    >>> import random
    >>> from fsm.automata import regex_node, node_to_char_dfa
    >>> sample_char_dfa(node_to_char_dfa(regex_node("ab")), random.Random(0))
    'ab'
    """
    s, out = 0, []
    while True:
        edges = d.edges[s]
        if d.accepting[s] and (not edges or rnd.random() < stop):
            return "".join(out)
        if len(out) > max_len:
            return None
        lo, hi, t = rnd.choice(edges)
        c = rnd.choice([lo, hi, rnd.randint(lo, min(hi, lo + 300))])
        out.append(chr(c))
        s = t


_ECMA_SPACES = "\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_ECMA_IN_CLASS = {"d": "0-9", "w": "A-Za-z0-9_", "s": _ECMA_SPACES}


def ecma_search(pattern: str, text: str) -> bool:
    """Whether the ECMA-262 regex ``pattern`` (no flags) finds a match in ``text``: a reference for
    tests, run by Python's ``re`` once ``\\d \\w \\s`` (and their negations), ``.`` and ``$`` are
    rewritten to ECMA's meaning. Negated categories inside a class raise ValueError.

    >>> ecma_search(r"^\\D$", "\\u07c0"), ecma_search(r"^\\s$", "\\ufeff"), ecma_search(r"^\\w$", "é")
    (True, True, False)
    """
    import re

    out, i, in_class = [], 0, False
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern):
            nxt = pattern[i + 1]
            if nxt.lower() in _ECMA_IN_CLASS:
                members = _ECMA_IN_CLASS[nxt.lower()]
                if in_class and nxt.isupper():
                    raise ValueError(f"\\{nxt} inside a class")
                out.append(members if in_class else f"[{'^' if nxt.isupper() else ''}{members}]")
            else:
                out.append(pattern[i : i + 2])
            i += 2
            continue
        if in_class:
            in_class = ch != "]" or out[-1] in ("[", "[^")
        elif ch == "[":
            in_class = True
            if pattern[i + 1 : i + 2] == "^":
                out.append("[^")
                i += 2
                continue
        elif ch == ".":
            ch = "[^\n\r\u2028\u2029]"
        elif ch == "$":
            ch = r"\Z"
        out.append(ch)
        i += 1
    return re.search("".join(out), text) is not None
