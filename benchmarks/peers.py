"""Adapters that give each peer library (outlines-core, xgrammar, llguidance) and ours one small shape:

    compile(kind, spec) -> matcher with .fill(words) and .advance(token_id)

so benchmarks time the same operations on the same specs and vocabulary. Peers are optional extras
(`pip install -e '.[bench]'`); a missing peer is reported as "n/a", never faked.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import fsm


class Ours:
    name = "ours"

    def __init__(self, tokenizer, vocab: fsm.Vocabulary):
        self.vocab = vocab

    def compile(self, kind: str, spec: Any):
        fsm.clear_memory_cache()
        if kind == "regex":
            s = fsm.Regex(spec)
        elif kind == "json":
            s = fsm.JsonSchema(spec)
        elif kind == "grammar":
            s = fsm.Grammar(spec)
        else:
            raise ValueError(kind)
        return _OurMatcher(fsm.compile(s, self.vocab, cache=False))

    def build_all(self, kind: str, spec: Any) -> float:
        m = self.compile(kind, spec)
        t = time.perf_counter()
        m.index.build_all()
        return time.perf_counter() - t


class _OurMatcher:
    def __init__(self, index):
        self.index = index
        self.m = index.matcher()

    def fresh(self):
        return _OurMatcher(self.index)

    def fill(self, words: np.ndarray) -> None:
        self.m.fill_bitmask(words)

    def advance(self, token_id: int) -> None:
        self.m.advance(token_id)


class OutlinesCore:
    name = "outlines-core"

    def __init__(self, tokenizer, vocab: fsm.Vocabulary):
        import outlines_core as oc

        self.oc = oc
        mapping: dict[bytes, list[int]] = {}
        for i in range(vocab.n_tokens):
            b = vocab.token_bytes(i)
            if b:
                mapping.setdefault(b, []).append(i)
        self.vocabulary = oc.Vocabulary(vocab.eos_token_ids[0], mapping)

    def compile(self, kind: str, spec: Any):
        if kind == "regex":
            rx = spec
        elif kind == "json":
            rx = self.oc.json_schema.build_regex_from_schema(json.dumps(spec))
        else:
            raise NotImplementedError("outlines-core has no grammar support")
        return _OutlinesMatcher(self.oc.Guide(self.oc.Index(rx, self.vocabulary)))


class _OutlinesMatcher:
    def __init__(self, guide):
        self.g = guide

    def fresh(self):
        self.g.reset()
        return self

    def fill(self, words: np.ndarray) -> None:
        self.g.write_mask_into(words.ctypes.data, words.size, words.itemsize)

    def advance(self, token_id: int) -> None:
        self.g.advance(token_id)


class XGrammar:
    name = "xgrammar"

    def __init__(self, tokenizer, vocab: fsm.Vocabulary):
        import xgrammar as xgr

        self.xgr = xgr
        self.info = xgr.TokenizerInfo.from_huggingface(tokenizer, vocab_size=vocab.size)

    def compile(self, kind: str, spec: Any):
        # A fresh compiler each time: xgrammar caches compiled grammars inside the compiler.
        compiler = self.xgr.GrammarCompiler(self.info, cache_enabled=False)
        if kind == "regex":
            c = compiler.compile_regex(spec)
        elif kind == "json":
            c = compiler.compile_json_schema(json.dumps(spec))
        else:
            c = compiler.compile_grammar(spec)
        return _XGrammarMatcher(self.xgr, self.xgr.GrammarMatcher(c), self.info.vocab_size)


class _XGrammarMatcher:
    def __init__(self, xgr, matcher, size):
        import torch

        self.m = matcher
        self.buf = torch.zeros((1, (size + 31) // 32), dtype=torch.int32)

    def fresh(self):
        self.m.reset()
        return self

    def fill(self, words: np.ndarray) -> None:
        self.m.fill_next_token_bitmask(self.buf)

    def advance(self, token_id: int) -> None:
        if not self.m.accept_token(token_id):
            raise ValueError(f"xgrammar rejected token {token_id}")


class LLGuidance:
    name = "llguidance"

    def __init__(self, tokenizer, vocab: fsm.Vocabulary):
        import llguidance
        import llguidance.hf
        import llguidance.numpy as lln

        self.llg, self.lln = llguidance, lln
        self.tok = llguidance.hf.from_tokenizer(tokenizer, n_vocab=vocab.size)

    def compile(self, kind: str, spec: Any):
        M = self.llg.LLMatcher
        if kind == "regex":
            g = M.grammar_from_regex(spec)
        elif kind == "json":
            g = M.grammar_from_json_schema(json.dumps(spec))
        else:
            g = M.grammar_from_lark(spec)
        m = M(self.tok, g)
        if m.is_error():
            raise ValueError(m.get_error())
        return _LLGMatcher(self.lln, m, self.tok.vocab_size)


class _LLGMatcher:
    def __init__(self, lln, m, size):
        self.lln, self.m = lln, m
        self.buf = lln.allocate_token_bitmask(1, size)

    def fresh(self):
        self.m.reset()
        return self

    def fill(self, words: np.ndarray) -> None:
        self.lln.fill_next_token_bitmask(self.m, self.buf, 0)

    def advance(self, token_id: int) -> None:
        if not self.m.consume_token(token_id):
            raise ValueError(self.m.get_error())


ALL_PEERS: list[Callable] = [OutlinesCore, XGrammar, LLGuidance]


def available_peers(tokenizer, vocab) -> list:
    """Instantiate the installed peers; print which are missing."""
    out = []
    for cls in ALL_PEERS:
        try:
            out.append(cls(tokenizer, vocab))
        except Exception as exc:  # not installed or incompatible
            print(f"# peer {cls.name}: n/a ({type(exc).__name__}: {str(exc)[:80]})")
    return out


def median(xs):
    return float(np.median(xs)) if len(xs) else float("nan")


def pct(xs, q):
    return float(np.percentile(xs, q)) if len(xs) else float("nan")


def load_default_tokenizer():
    from transformers import AutoTokenizer

    from guide.default_model import default_model_dir

    tok = AutoTokenizer.from_pretrained(default_model_dir())
    return tok, fsm.Vocabulary.from_tokenizer(tok)
