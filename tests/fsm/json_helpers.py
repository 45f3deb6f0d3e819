"""Helpers shared by the JSON schema tests: sampling automata, walking matchers, validating."""

from __future__ import annotations

import json
import random

import jsonschema

from fsm.automata import CharDFA


def sample_char_dfa(d: CharDFA, rnd: random.Random, max_len: int = 200, stop: float = 0.2) -> str | None:
    """A random string of a character DFA (every state is live), or None if it ran too long."""
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


def validator(schema):
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def random_walk(index, vocab, rnd: random.Random, max_tokens: int = 150, eos_bias: float = 0.5):
    """Pick random allowed tokens until EOS (taken with probability ``eos_bias`` when allowed).

    Returns (text, finished): ``finished`` is False when the walk hit ``max_tokens``.
    """
    m = index.matcher()
    out: list[bytes] = []
    eos = set(vocab.eos_token_ids)
    for _ in range(max_tokens):
        allowed = m.allowed_token_ids()
        assert len(allowed) > 0, f"dead end after {b''.join(out)!r}"
        if m.is_accepting() and rnd.random() < eos_bias:
            return b"".join(out).decode("utf-8"), True
        choices = [int(t) for t in allowed if int(t) not in eos] or [int(allowed[0])]
        t = rnd.choice(choices)
        if t in eos:
            return b"".join(out).decode("utf-8"), True
        m.advance(t)
        out.append(vocab.token_bytes(t))
    return b"".join(out).decode("utf-8", "replace"), False


def valid_walks(index, vocab, v, rnd: random.Random, walks: int, **opts) -> list[str]:
    """Texts of the random walks (see `random_walk`) that finished, each asserted to be a JSON
    document valid for the validator ``v``."""
    out = []
    for _ in range(walks):
        text, finished = random_walk(index, vocab, rnd, **opts)
        if finished:
            assert v.is_valid(json.loads(text)), text
            out.append(text)
    return out


def accepts_text(index, tokenizer, text: str) -> bool:
    """Whether the index's matcher accepts ``text`` fed as the tokenizer's tokens."""
    import fsm

    m = index.matcher()
    try:
        for t in tokenizer.encode(text, add_special_tokens=False):
            m.advance(t)
    except fsm.TokenRejected:
        return False
    return m.is_accepting()


def compact(value) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
