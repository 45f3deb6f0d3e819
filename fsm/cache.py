"""On-disk cache of compiled automata and index rows: bounded, atomic, checksummed.

Entries are ``.npz`` files named by a key hashed from (spec fingerprint, vocabulary fingerprint,
library version). Writes go to a temporary file and are renamed into place, so concurrent writers
never leave a torn file; each entry carries a SHA-256 of its arrays, so a truncated, corrupt or
foreign file is detected, deleted and rebuilt — never trusted. The directory is kept under a byte
budget by evicting the least recently used entries.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import tempfile
from pathlib import Path

import numpy as np

DEFAULT_MAX_BYTES = 2 << 30


def cache_root() -> Path | None:
    """``$GUIDE_CACHE_DIR/fsm`` or the user cache dir's ``fsm``; ``None`` when ``GUIDE_FSM_CACHE=off``."""
    if os.environ.get("GUIDE_FSM_CACHE", "").lower() in ("0", "off", "none", "false", "no"):
        return None
    env = os.environ.get("GUIDE_CACHE_DIR")
    if env:
        return Path(env) / "fsm"
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("guide")) / "fsm"


def _digest(arrays: dict[str, np.ndarray]) -> str:
    h = hashlib.sha256()
    for name in sorted(arrays):
        a = np.ascontiguousarray(arrays[name])
        h.update(name.encode())
        h.update(str(a.dtype).encode())
        h.update(str(a.shape).encode())
        h.update(a.tobytes())
    return h.hexdigest()


class DiskCache:
    """A directory of checksummed npz entries with an LRU byte budget.

    >>> c = DiskCache(Path(tempfile.mkdtemp()))
    >>> _ = c.put("k", {"a": np.arange(3)}); c.get("k")["a"].tolist()
    [0, 1, 2]
    """

    def __init__(self, root: Path, max_bytes: int = DEFAULT_MAX_BYTES):
        self.root = Path(root)
        self.max_bytes = max_bytes

    def _path(self, key: str) -> Path:
        return self.root / f"{key}.npz"

    def get(self, key: str) -> dict[str, np.ndarray] | None:
        path = self._path(key)
        if not path.exists():
            return None
        try:
            with np.load(path, allow_pickle=False) as f:
                arrays = {k: f[k] for k in f.files}
            stored = arrays.pop("__sha256__").tobytes().decode()
            stored_key = arrays.pop("__key__").tobytes().decode()
            if stored != _digest(arrays) or stored_key != key:
                raise ValueError("checksum mismatch")
        except Exception:
            # Corrupt, truncated or foreign: never trust it; drop it so it is rebuilt.
            with contextlib.suppress(OSError):
                path.unlink()
            return None
        with contextlib.suppress(OSError):
            os.utime(path)  # LRU: mark as recently used
        return arrays

    def put(self, key: str, arrays: dict[str, np.ndarray]) -> bool:
        """Store atomically; returns False (silently) when the directory is not writable."""
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            payload = dict(arrays)
            payload["__sha256__"] = np.frombuffer(_digest(arrays).encode(), dtype=np.uint8)
            payload["__key__"] = np.frombuffer(key.encode(), dtype=np.uint8)
            buf = io.BytesIO()
            np.savez(buf, **payload)
            fd, tmp = tempfile.mkstemp(dir=self.root, prefix=".tmp-", suffix=".npz")
            try:
                with os.fdopen(fd, "wb") as fh:
                    fh.write(buf.getvalue())
                os.replace(tmp, self._path(key))
            finally:
                if os.path.exists(tmp):
                    os.unlink(tmp)
            self.evict()
            return True
        except OSError:
            return False

    def evict(self) -> None:
        """Delete least recently used entries until the directory fits in ``max_bytes``."""
        try:
            entries = [(p.stat().st_mtime, p.stat().st_size, p) for p in self.root.glob("*.npz")]
        except OSError:
            return
        total = sum(e[1] for e in entries)
        for _, size, p in sorted(entries):
            if total <= self.max_bytes:
                break
            try:
                p.unlink()
                total -= size
            except OSError:
                pass

    def size_bytes(self) -> int:
        return sum(p.stat().st_size for p in self.root.glob("*.npz")) if self.root.exists() else 0


__all__ = ["DiskCache", "cache_root"]
