"""Disk cache: atomic writes, corrupt entries rebuilt, LRU byte budget, concurrent writers."""

from __future__ import annotations

import multiprocessing as mp
import os

import numpy as np

import fsm
from fsm.cache import DiskCache
from fsm.compiler import _disk_key


def test_roundtrip_and_checksum(tmp_path):
    c = DiskCache(tmp_path)
    assert c.put("k1", {"a": np.arange(10), "b": np.array([True, False])})
    got = c.get("k1")
    assert got["a"].tolist() == list(range(10)) and got["b"].tolist() == [True, False]


def test_corrupt_truncated_and_foreign_entries_are_dropped(tmp_path):
    c = DiskCache(tmp_path)
    c.put("k1", {"a": np.arange(1000)})
    path = tmp_path / "k1.npz"
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])  # truncated
    assert c.get("k1") is None and not path.exists()
    c.put("k2", {"a": np.arange(5)})
    (tmp_path / "k2.npz").rename(tmp_path / "k3.npz")  # an entry stored under another key
    assert c.get("k3") is None
    (tmp_path / "k4.npz").write_bytes(b"not a zip file")
    assert c.get("k4") is None


def test_flipped_byte_detected(tmp_path):
    c = DiskCache(tmp_path)
    c.put("k", {"a": np.zeros(4096, dtype=np.int32)})
    path = tmp_path / "k.npz"
    raw = bytearray(path.read_bytes())
    pos = raw.find(b"\x00" * 64, 200)  # inside the array payload
    raw[pos + 10] = 7
    path.write_bytes(bytes(raw))
    assert c.get("k") is None


def test_lru_eviction_by_bytes(tmp_path):
    c = DiskCache(tmp_path)
    for i in range(6):
        c.put(f"k{i}", {"a": np.zeros(5000, dtype=np.int32)})  # ~20 KB each
        os.utime(tmp_path / f"k{i}.npz", (1000 + i, 1000 + i))
    entry = (tmp_path / "k0.npz").stat().st_size
    c.max_bytes = int(3.5 * entry)
    c.get("k3")  # recently used: survives
    c.put("k9", {"a": np.zeros(5000, dtype=np.int32)})
    names = {p.stem for p in tmp_path.glob("*.npz")}
    assert c.size_bytes() <= c.max_bytes
    assert names == {"k3", "k5", "k9"}
    assert "k9" in names and "k3" in names and "k0" not in names


def _writer(root, seed):
    c = DiskCache(root)
    for _ in range(20):
        c.put("same", {"a": np.full(20000, seed, dtype=np.int32)})


def test_concurrent_writers_never_corrupt(tmp_path):
    ctx = mp.get_context("fork")
    procs = [ctx.Process(target=_writer, args=(tmp_path, s)) for s in range(4)]
    for p in procs:
        p.start()
    reads = 0
    c = DiskCache(tmp_path)
    while any(p.is_alive() for p in procs):
        got = c.get("same")
        if got is not None:
            assert len(set(got["a"].tolist())) == 1  # one writer's whole payload, never a mix
            reads += 1
    for p in procs:
        p.join()
        assert p.exitcode == 0
    assert c.get("same") is not None
    assert not list(tmp_path.glob(".tmp-*"))


def test_compile_uses_disk_cache(tmp_cache, vocab):
    spec = fsm.Regex(r"[a-z]{2,6}-\d{1,3}")
    idx = fsm.compile(spec, vocab)
    idx.build_all()
    fsm.save(idx)
    fsm.clear_memory_cache()
    again = fsm.compile(spec, vocab)
    assert again is not idx
    assert again.n_rows == idx.n_rows  # rows came back from disk
    for s in range(idx.dfa.n_states):
        assert again.row(s).tokens.tolist() == idx.row(s).tokens.tolist()
    # A corrupt entry is ignored and rebuilt.
    path = tmp_cache / "fsm" / f"{_disk_key(spec.fingerprint, vocab)}.npz"
    path.write_bytes(b"garbage")
    fsm.clear_memory_cache()
    rebuilt = fsm.compile(spec, vocab)
    assert rebuilt.matcher().allowed_token_ids().tolist() == idx.matcher().allowed_token_ids().tolist()


def test_memory_cache_returns_same_index(tmp_cache, vocab):
    a = fsm.compile(fsm.Regex("abc"), vocab)
    b = fsm.compile(fsm.Regex("abc"), vocab)
    assert a is b


def test_cache_can_be_turned_off(monkeypatch, vocab):
    monkeypatch.setenv("GUIDE_FSM_CACHE", "off")
    fsm.clear_memory_cache()
    assert fsm.compile(fsm.Regex("x+"), vocab).matcher().allowed_token_ids().size > 0
