"""Token id -> exact bytes, for any Hugging Face tokenizer, without importing torch.

Constraints work on bytes, so the vocabulary must give the exact bytes each token contributes to the
text: byte-level BPE tokens go through the GPT-2 byte<->unicode map, SentencePiece pieces turn ``▁``
into a space and ``<0xNN>`` into one raw byte, added tokens are their literal text, and special tokens
(``<|im_end|>``, ``<s>``…) are never text at all (``None``): they can only be allowed as EOS.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from .errors import VocabularyError

_BYTE_FALLBACK = re.compile(r"^<0x([0-9A-Fa-f]{2})>$")


@lru_cache(maxsize=1)
def _gpt2_unicode_to_byte() -> dict[str, int]:
    """The inverse of GPT-2's ``bytes_to_unicode`` table (printable stand-ins for every byte)."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1))
    bs += list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {chr(c): b for b, c in zip(bs, cs, strict=True)}


def byte_level_token_bytes(token: str) -> bytes:
    """Bytes of a byte-level BPE token string. ``byte_level_token_bytes("Ġhi") == b" hi"``."""
    table = _gpt2_unicode_to_byte()
    try:
        return bytes(table[c] for c in token)
    except KeyError as exc:
        raise VocabularyError(
            f"token {token!r} is not a byte-level BPE string (char {exc.args[0]!r})"
        ) from None


def sentencepiece_token_bytes(piece: str) -> bytes:
    """Bytes of a SentencePiece piece. ``sentencepiece_token_bytes("▁hi") == b" hi"``; ``<0x0A>`` -> ``b"\\n"``."""
    m = _BYTE_FALLBACK.match(piece)
    if m:
        return bytes([int(m.group(1), 16)])
    return piece.replace("\u2581", " ").encode("utf-8")


@dataclass
class TokenTrie:
    """The vocabulary's byte trie in flat numpy arrays, nodes in breadth-first order (root = 0).

    The children of node ``n`` are the contiguous nodes ``child_start[n] : child_start[n] + child_count[n]``;
    the tokens whose bytes end exactly at ``n`` are ``tok_ids[tok_start[n] : tok_start[n] + tok_count[n]]``.
    """

    node_byte: np.ndarray  # uint8, byte on the edge into the node
    child_start: np.ndarray  # int32
    child_count: np.ndarray  # int32
    tok_start: np.ndarray  # int32
    tok_count: np.ndarray  # int32
    tok_ids: np.ndarray  # int32
    depth: np.ndarray  # int32
    parent: np.ndarray  # int64 (root's parent is 0)

    @property
    def n_nodes(self) -> int:
        return len(self.node_byte)

    @property
    def token_nodes(self) -> np.ndarray:
        """The node of each entry of ``tok_ids`` (cached)."""
        tn = self.__dict__.get("_token_nodes")
        if tn is None:
            tn = np.repeat(np.arange(self.n_nodes), self.tok_count)
            self.__dict__["_token_nodes"] = tn
        return tn

    @staticmethod
    def build(tokens: Sequence[bytes | None]) -> TokenTrie:
        """The trie of ``tokens`` (``None`` and empty entries have no node), one depth at a time.

        Nodes are numbered by (length, bytes): at depth d the key ``parent * 256 + byte`` of each token
        still that long orders its prefix as its bytes do (parents were numbered so at depth d - 1),
        so one ``np.unique`` per depth numbers them — no Python loop over prefixes (a 262k-token
        vocabulary builds in a fraction of a second instead of seconds).

        >>> t = TokenTrie.build([b"ab", b"a", None, b"b"])
        >>> t.node_byte.tolist(), t.parent.tolist(), t.tok_ids.tolist()
        ([0, 97, 98, 98], [0, 0, 0, 1], [1, 3, 0])
        """
        present = [i for i, b in enumerate(tokens) if b]
        return TokenTrie.of_ids(np.array(present, dtype=np.int64), [tokens[i] for i in present])

    @staticmethod
    def of_ids(ids: np.ndarray, data: Sequence[bytes]) -> TokenTrie:
        """`build` of tokens ``ids`` whose bytes are ``data`` (each non-empty): a few tokens of a
        big vocabulary without a pass over all of it.

        >>> TokenTrie.of_ids(np.array([4, 7]), [b"ab", b"a"]).tok_ids.tolist()
        [7, 4]
        """
        ids = np.asarray(ids, dtype=np.int64)
        lens = np.array([len(b) for b in data], dtype=np.int64)
        flat = np.frombuffer(b"".join(data), dtype=np.uint8)  # type: ignore[arg-type]
        starts = np.cumsum(lens) - lens
        node = np.zeros(len(data), dtype=np.int64)  # each token's node at the current depth
        parents, edge_bytes, depths = (
            [np.zeros(1, np.int64)],
            [np.zeros(1, np.uint8)],
            [np.zeros(1, np.int32)],
        )
        n = 1
        alive = np.arange(len(data))
        for d in range(1, int(lens.max(initial=0)) + 1):
            alive = alive[lens[alive] >= d]
            key = node[alive] * 256 + flat[starts[alive] + d - 1]
            uniq, inverse = np.unique(key, return_inverse=True)
            parents.append(uniq >> 8)
            edge_bytes.append((uniq & 255).astype(np.uint8))
            depths.append(np.full(len(uniq), d, dtype=np.int32))
            node[alive] = n + inverse.reshape(-1)
            n += len(uniq)
        parent = np.concatenate(parents)
        node_byte = np.concatenate(edge_bytes)
        depth = np.concatenate(depths)
        # Nodes ordered by (length, bytes): children of one parent are contiguous and in parent order.
        child_count = np.bincount(parent[1:], minlength=n).astype(np.int32)
        child_start = np.zeros(n, dtype=np.int32)
        if n > 1:
            first_child = np.full(n, n, dtype=np.int64)
            np.minimum.at(first_child, parent[1:], np.arange(1, n))
            child_start = np.where(child_count > 0, first_child, 0).astype(np.int32)
        order = np.lexsort((ids, node))
        tn = node[order]
        tok_ids = ids[order].astype(np.int32)
        tok_count = np.bincount(tn, minlength=n).astype(np.int32) if len(tn) else np.zeros(n, np.int32)
        tok_start = (np.cumsum(tok_count) - tok_count).astype(np.int32)
        return TokenTrie(node_byte, child_start, child_count, tok_start, tok_count, tok_ids, depth, parent)


class Vocabulary:
    """Exact bytes of every token id, the EOS ids, the logits width and the special tokens' texts.

    >>> v = Vocabulary([b"a", b"b", b"ab", None], eos_token_ids=[3], special_tokens={"<|end|>": 3})
    >>> v.size, v.token_bytes(2), v.eos_token_ids, v.special_tokens["<|end|>"]
    (4, b'ab', (3,), 3)
    """

    def __init__(
        self,
        tokens: Sequence[bytes | None],
        eos_token_ids: Iterable[int],
        size: int | None = None,
        special_tokens: Mapping[str, int] | None = None,
    ):
        self._tokens: list[bytes | None] = [None if t is None else bytes(t) for t in tokens]
        self.eos_token_ids: tuple[int, ...] = tuple(sorted({int(i) for i in eos_token_ids}))
        n = len(self._tokens)
        self.size: int = n if size is None else int(size)
        if self.size < n:
            raise VocabularyError(f"logits width {self.size} is smaller than the tokenizer's {n} tokens")
        if not self.eos_token_ids:
            raise VocabularyError("the vocabulary has no EOS token id; pass eos_token_ids explicitly")
        bad = [i for i in self.eos_token_ids if not 0 <= i < self.size]
        if bad:
            raise VocabularyError(f"EOS ids {bad} are outside the vocabulary (size {self.size})")
        for i in self.eos_token_ids:  # EOS is control, never text
            if i < n:
                self._tokens[i] = None
        # text -> id of the special (control) tokens: what fsm.Token("<|im_end|>") resolves through
        self.special_tokens: dict[str, int] = {str(k): int(i) for k, i in (special_tokens or {}).items()}
        bad = sorted(k for k, i in self.special_tokens.items() if not 0 <= i < self.size)
        if bad:
            raise VocabularyError(f"special tokens {bad} have ids outside the vocabulary (size {self.size})")
        self._trie: TokenTrie | None = None
        self._single_bytes: np.ndarray | None = None
        self._derived: dict[str, Any] = {}
        self._lock = threading.RLock()  # reentrant: a derived table may read the trie
        h = hashlib.sha256()
        h.update(json.dumps([self.size, list(self.eos_token_ids)]).encode())
        for t in self._tokens:
            h.update(b"\xff\xfe" if t is None else len(t).to_bytes(4, "little") + t)
        if self.special_tokens:  # a spec may name them (fsm.Token), so they are part of the identity
            h.update(json.dumps(sorted(self.special_tokens.items())).encode())
        self.fingerprint: str = h.hexdigest()[:32]

    @property
    def n_tokens(self) -> int:
        """Number of token ids the tokenizer defines (``size`` may be larger: padded logits)."""
        return len(self._tokens)

    def token_bytes(self, token_id: int) -> bytes | None:
        """The bytes token ``token_id`` adds to the text, or ``None`` for special, EOS or padded ids."""
        if 0 <= token_id < len(self._tokens):
            return self._tokens[token_id]
        if 0 <= token_id < self.size:
            return None
        raise IndexError(f"token id {token_id} outside the vocabulary (size {self.size})")

    @property
    def tokens(self) -> list[bytes | None]:
        return self._tokens

    @property
    def trie(self) -> TokenTrie:
        """The byte trie over all text tokens, built once and shared by every index on this vocabulary."""
        if self._trie is None:
            with self._lock:
                if self._trie is None:
                    self._trie = TokenTrie.build(self._tokens)
        return self._trie

    @property
    def single_bytes(self) -> np.ndarray:
        """Bool mask over 0..255: which bytes are a token on their own (computed once)."""
        if self._single_bytes is None:
            mask = np.zeros(256, dtype=bool)
            for t in self._tokens:
                if t is not None and len(t) == 1:
                    mask[t[0]] = True
            self._single_bytes = mask
        return self._single_bytes

    def derived(self, name: str, build: Callable[[], Any]) -> Any:
        """A table computed from this vocabulary alone, built by ``build()`` on first use and kept
        (token classes shared by every index on the vocabulary).

        >>> v = Vocabulary([b"a", None], eos_token_ids=[1])
        >>> v.derived("n", lambda: 7), v.derived("n", lambda: 8)
        (7, 7)
        """
        hit = self._derived.get(name)
        if hit is None:
            with self._lock:
                hit = self._derived.get(name)
                if hit is None:
                    hit = self._derived[name] = build()
        return hit

    def has_all_single_bytes(self) -> bool:
        """True when every byte 0..255 is a token by itself, so any live byte state has a next token."""
        return bool(self.single_bytes.all())

    def decode(self, token_ids: Iterable[int]) -> bytes:
        """Concatenated bytes of the text tokens in ``token_ids`` (special ids add nothing)."""
        return b"".join(self._tokens[i] or b"" for i in token_ids if 0 <= i < len(self._tokens))

    def __repr__(self) -> str:
        return f"Vocabulary(size={self.size}, n_tokens={self.n_tokens}, eos={self.eos_token_ids})"

    @classmethod
    def from_tokenizer(
        cls,
        tokenizer: Any,
        size: int | None = None,
        eos_token_ids: Iterable[int] | None = None,
    ) -> Vocabulary:
        """Build from a Hugging Face tokenizer (fast or slow), byte-level BPE or SentencePiece.

        ``size`` is the model's logits width when larger than the tokenizer (padded embeddings);
        ``eos_token_ids`` adds to the tokenizer's own EOS (e.g. a generation config's list).

        >>> from transformers import AutoTokenizer           # doctest: +SKIP
        >>> Vocabulary.from_tokenizer(AutoTokenizer.from_pretrained(path)).size   # doctest: +SKIP
        49152
        """
        n = len(tokenizer)
        pieces = tokenizer.convert_ids_to_tokens(list(range(n)))
        kind = _tokenizer_kind(tokenizer)
        added = getattr(tokenizer, "added_tokens_decoder", {}) or {}
        special_ids = set(getattr(tokenizer, "all_special_ids", []) or [])
        tokens: list[bytes | None] = []
        special: dict[str, int] = {}
        for i, piece in enumerate(pieces):
            if i in special_ids:
                tokens.append(None)
                if piece is not None:
                    special[str(piece)] = i
            elif i in added:
                tok = added[i]
                if getattr(tok, "special", False):
                    tokens.append(None)
                    special[str(getattr(tok, "content", tok))] = i
                else:
                    tokens.append(str(tok.content if hasattr(tok, "content") else tok).encode("utf-8"))
            elif piece is None:
                tokens.append(None)
            elif kind == "byte_level":
                tokens.append(byte_level_token_bytes(piece))
            elif kind == "sentencepiece":
                tokens.append(sentencepiece_token_bytes(piece))
            else:
                tokens.append(piece.encode("utf-8"))
        eos = set(eos_token_ids or [])
        if getattr(tokenizer, "eos_token_id", None) is not None:
            eos.add(int(tokenizer.eos_token_id))
        if not eos:
            raise VocabularyError(
                f"tokenizer {type(tokenizer).__name__} has no eos_token_id; pass eos_token_ids=[...]"
            )
        return cls(tokens, eos, size=size if size is not None else n, special_tokens=special)


def _tokenizer_kind(tokenizer: Any) -> str:
    """'byte_level', 'sentencepiece' or 'plain', read from the tokenizer's decoder configuration."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is not None:
        try:
            spec = json.loads(backend.to_str())
        except Exception:  # pragma: no cover - exotic backends
            spec = {}
        text = json.dumps([spec.get("decoder"), spec.get("pre_tokenizer"), spec.get("model", {}).get("type")])
        if "ByteLevel" in text:
            return "byte_level"
        if "ByteFallback" in text or "\u2581" in text or "Metaspace" in text:
            return "sentencepiece"
        return "plain"
    if hasattr(tokenizer, "sp_model") or hasattr(tokenizer, "sp_model_kwargs"):
        return "sentencepiece"
    if hasattr(tokenizer, "byte_decoder"):
        return "byte_level"
    return "plain"
