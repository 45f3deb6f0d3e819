"""Guard points (`fsm.automata.Guard`) run by `fsm.index.GuardedDfaIndex`: random languages
``A | B <check p> C | B <check p> C <check q> D`` against a reference that splits the word by
regexes and runs the checks on the prefixes, for every tokenization of every short word; random
walks only ever finish on words of the language (they may stop at a dead end: a check that fails
further on); rollback and copy keep the text.
"""

from __future__ import annotations

import itertools
import random
import re

from hypothesis import given, settings
from hypothesis import strategies as st

import fsm
from fsm.automata import Guard, LazyByteDFA, alt, node_nfa, regex_node, seq
from fsm.index import GuardedDfaIndex
from fsm.testing import accepts, check_matcher_contract

ALPHABET = "ab!"
TOKENS = ["".join(p) for n in (1, 2, 3) for p in itertools.product(ALPHABET, repeat=n)]
VOCAB = fsm.Vocabulary([t.encode() for t in TOKENS] + [None], eos_token_ids=[len(TOKENS)])
WORDS = ["".join(p) for n in range(7) for p in itertools.product(ALPHABET, repeat=n)]
PIECES = ["a", "b", "!", "a*", "b+", "(?:ab)*", "[ab]", "!?", "a?b", "(?:a|!b)"]
CHECKS = {
    "even": lambda text: len(text) % 2 == 0,
    "a-odd": lambda text: text.count(b"a") % 2 == 1,
    "ends-b": lambda text: text.endswith(b"b"),
    "never": lambda text: False,
    "always": lambda text: True,
}


def _node(rx: str):
    return regex_node(rx)


def _language(a, b, c, d, p, q):
    """The tree and a reference membership test of ``a | b <p> c | b <p> c <q> d``."""
    pc, qc = CHECKS[p], CHECKS[q]
    tree = alt(
        _node(a),
        seq(_node(b), Guard(pc), _node(c)),
        seq(_node(b), Guard(pc), _node(c), Guard(qc), _node(d)),
    )

    def member(w: str) -> bool:
        if re.fullmatch(a, w):
            return True
        for i in range(len(w) + 1):
            u = w[:i]
            if not (re.fullmatch(b, u) and pc(u.encode())):
                continue
            if re.fullmatch(c, w[i:]):
                return True
            for k in range(i, len(w) + 1):
                if re.fullmatch(c, w[i:k]) and qc(w[:k].encode()) and re.fullmatch(d, w[k:]):
                    return True
        return False

    return tree, member


def _splits(w: str, rnd: random.Random) -> list[str]:
    out, i = [], 0
    while i < len(w):
        n = rnd.randint(1, min(3, len(w) - i))
        out.append(w[i : i + n])
        i += n
    return out


@settings(max_examples=60, deadline=None)
@given(
    parts=st.tuples(*[st.sampled_from(PIECES)] * 4),
    checks=st.tuples(st.sampled_from(sorted(CHECKS)), st.sampled_from(sorted(CHECKS))),
    seed=st.integers(0, 2**16),
)
def test_guarded_languages_match_their_reference(parts, checks, seed):
    tree, member = _language(*parts, *checks)
    index = GuardedDfaIndex(LazyByteDFA(*node_nfa(tree)), VOCAB)
    rnd = random.Random(seed)
    for w in WORDS:
        ids = [TOKENS.index(t) for t in _splits(w, rnd)]
        assert accepts(index, ids) == member(w), (parts, checks, w)
        if member(w):
            check_matcher_contract(index, ids)
    for _ in range(20):  # what a sampler can reach: only words of the language finish
        text = _walk(index, rnd)
        if text is not None:
            assert member(text), (parts, checks, text)


def _walk(index, rnd: random.Random, max_tokens: int = 12) -> str | None:
    """A random walk's text when it ends by EOS; None at the cap or at a dead end (a check that
    fails further on is no automaton's to foresee: `fsm.index.guarded` leaves those possible)."""
    m, out = index.matcher(), []
    for _ in range(max_tokens):
        allowed = m.allowed_token_ids().tolist()
        if not allowed:
            return None
        t = rnd.choice(allowed)
        if t in VOCAB.eos_token_ids:
            return "".join(out)
        m.advance(t)
        out.append(TOKENS[t])
    return None


def test_rollback_and_copy_keep_the_text():
    tree = alt(seq(_node("a+"), Guard(CHECKS["even"]), _node("!")), _node("a*b"))
    index = GuardedDfaIndex(LazyByteDFA(*node_nfa(tree)), VOCAB)
    m = index.matcher()
    m.advance(TOKENS.index("aa"))
    assert m.is_allowed(TOKENS.index("!")) and not m.is_allowed(TOKENS.index("a!"))
    c = m.copy()
    m.advance(TOKENS.index("a"))
    assert not m.is_allowed(TOKENS.index("!")) and m.is_allowed(TOKENS.index("a!"))
    assert c.is_allowed(TOKENS.index("!"))  # the copy kept its own text
    m.rollback(1)
    assert m.is_allowed(TOKENS.index("!")) and m.forced_bytes() == b""
    m.reset()
    assert m.is_allowed(TOKENS.index("a!")) is False and m.is_allowed(TOKENS.index("aa!"))


def test_forced_bytes_resolve_the_checks_on_the_way():
    # after "ab" only "!" can follow, and only when the check passes on "ab": the forced run says so
    tree = seq(_node("ab"), Guard(CHECKS["ends-b"]), _node("!!"))
    m = GuardedDfaIndex(LazyByteDFA(*node_nfa(tree)), VOCAB).matcher()
    assert m.forced_bytes() == b"ab!!"
    never = seq(_node("ab"), Guard(CHECKS["never"]), _node("!!"))
    assert GuardedDfaIndex(LazyByteDFA(*node_nfa(never)), VOCAB).matcher().forced_bytes() == b"a"
