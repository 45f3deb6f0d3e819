"""``fsm.compile``: spec + vocabulary -> index, cached in memory (LRU by bytes) and on disk."""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import numpy as np

from .automata import ByteDFA
from .cache import DiskCache, cache_root
from .errors import SpecError
from .index import FINISHED, DfaIndex, Index, Row
from .json import JsonSchema
from .limits import DEFAULT_LIMITS, Limits
from .spec import Spec
from .vocabulary import Vocabulary

VERSION = "0.1.0"
_MEMORY_BUDGET = 1 << 30

_lock = threading.Lock()
_memory: OrderedDict[tuple, Any] = OrderedDict()
# The bytes of the entries as last summed, plus those of each entry added since. Summing every
# entry's ``nbytes`` at each compile cost O(entries) (~0.3 ms a compile with a few hundred kept);
# a lazy index grows after it is added, so the sum is redone every `_RESUM` additions and
# whenever the running figure passes the budget.
_memory_bytes = 0
_added = 0
_RESUM = 64


def _spec_of(spec: Any) -> Spec:
    """Accept spec objects; turn obvious shorthands (pydantic class, schema dict) into specs."""
    # the common class first: a runtime-checkable protocol's test costs ~7 µs a compile
    if isinstance(spec, JsonSchema) or isinstance(spec, Spec):  # noqa: SIM101
        return spec
    if isinstance(spec, dict) or (isinstance(spec, type) and hasattr(spec, "model_json_schema")):
        return JsonSchema(spec)
    if isinstance(spec, str):
        raise SpecError(
            "fsm.compile got a plain string; wrap it: fsm.Regex(pattern), fsm.Grammar(lark_text) "
            "or fsm.JsonSchema(json_text)"
        )
    raise SpecError(
        f"fsm.compile cannot compile a {type(spec).__name__}; pass fsm.Regex, fsm.JsonSchema, "
        "fsm.Grammar or fsm.Choice"
    )


def _disk_key(spec_fp: str, vocab: Vocabulary) -> str:
    return hashlib.sha256(f"{spec_fp}|{vocab.fingerprint}|{VERSION}".encode()).hexdigest()[:40]


def compile(spec: Any, vocab: Vocabulary, limits: Limits | None = None, cache: bool = True) -> Index:
    """Compile ``spec`` for ``vocab`` into an immutable index shared by all matchers.

    >>> import fsm
    >>> v = Vocabulary([b"a", b"b", None], eos_token_ids=[2])
    >>> compile(fsm.Regex("ab*"), v).matcher().allowed_token_ids().tolist()
    [0]
    """
    spec = _spec_of(spec)
    if not isinstance(vocab, Vocabulary):
        raise TypeError(f"fsm.compile needs an fsm.Vocabulary, got {type(vocab).__name__}")
    limits = limits or DEFAULT_LIMITS
    key = (spec.fingerprint, vocab.fingerprint, limits)
    if cache:
        with _lock:
            hit = _memory.get(key)
            if hit is not None:
                _memory.move_to_end(key)
                return hit
    disk = DiskCache(cache_root()) if cache and cache_root() is not None else None
    index = None
    if disk is not None:
        index = _load(disk, _disk_key(spec.fingerprint, vocab), vocab, spec.fingerprint, limits)
    if index is None:
        index = spec.build_index(vocab, limits)
        if disk is not None and isinstance(index, DfaIndex):
            save(index, disk)
    if cache:
        with _lock:
            _memory[key] = index
            _evict_memory()
    return index


def _evict_memory() -> None:
    """Drop the least recently used entries past the budget (``_lock`` held; the newest is kept)."""
    global _memory_bytes, _added
    _added += 1
    _memory_bytes += getattr(next(reversed(_memory.values())), "nbytes", 0)
    if _added % _RESUM and _memory_bytes <= _MEMORY_BUDGET:
        return
    total = sum(getattr(v, "nbytes", 0) for v in _memory.values())
    while len(_memory) > 1 and total > _MEMORY_BUDGET:
        _, old = _memory.popitem(last=False)
        total -= getattr(old, "nbytes", 0)
    _memory_bytes = total


@dataclass(frozen=True)
class MemoryCacheInfo:
    """The in-memory index cache: entries, their bytes (sum of ``index.nbytes``) and its budget."""

    entries: int
    nbytes: int
    budget: int


def memory_cache_info() -> MemoryCacheInfo:
    """How full the in-memory cache of `compile` is.

    >>> memory_cache_info().budget
    1073741824
    """
    with _lock:
        return MemoryCacheInfo(
            len(_memory), sum(getattr(v, "nbytes", 0) for v in _memory.values()), _MEMORY_BUDGET
        )


def clear_memory_cache() -> None:
    """Forget every compiled index held in memory (disk entries stay)."""
    global _memory_bytes
    with _lock:
        _memory.clear()
        _memory_bytes = 0


def save(index: DfaIndex, disk: DiskCache | None = None) -> bool:
    """Persist an index's automaton and the rows computed so far."""
    if disk is None:
        root = cache_root()
        if root is None:
            return False
        disk = DiskCache(root)
    computed = index.computed_rows()
    states = np.array(sorted(computed), dtype=np.int32)
    rows = [computed[int(s)] for s in states]
    lens = np.array([len(r.tokens) for r in rows], dtype=np.int64)
    arrays = {
        "table": index.dfa.table,
        "byte_class": index.dfa.byte_class,
        "initial": np.array([index.dfa.initial], dtype=np.int64),
        "accepting": index.dfa.accepting,
        "row_states": states,
        "row_lens": lens,
        "row_tokens": np.concatenate([r.tokens for r in rows]) if rows else np.zeros(0, np.int32),
        "row_next": np.concatenate([r.next_states for r in rows]) if rows else np.zeros(0, np.int32),
    }
    return disk.put(_disk_key(index.fingerprint, index.vocabulary), arrays)


def _load(disk: DiskCache, key: str, vocab: Vocabulary, fingerprint: str, limits: Limits) -> DfaIndex | None:
    arrays = disk.get(key)
    if arrays is None:
        return None
    try:
        dfa = ByteDFA(arrays["table"], arrays["byte_class"], int(arrays["initial"][0]), arrays["accepting"])
        index = DfaIndex(dfa, vocab, fingerprint=fingerprint, limits=limits)
        offs = np.concatenate([[0], np.cumsum(arrays["row_lens"])])
        rows = {}
        for i, s in enumerate(arrays["row_states"].tolist()):
            tok = arrays["row_tokens"][offs[i] : offs[i + 1]]
            nxt = arrays["row_next"][offs[i] : offs[i + 1]]
            rows[s] = Row(tok, nxt, bool((nxt != FINISHED).any()))
        index.restore_rows(rows)
        return index
    except Exception:
        return None
