"""A batch's masks computed in worker processes: every core, and off the caller's thread.

A matcher's cold rows are Python (the lazy automaton's expansions), so threads in one process share one
core under the GIL: a decode step of 32 requests on schemas never seen before spends ~4 ms of one core
in masks (`benchmarks/bench_batch.py`), while the other cores wait. `MaskPool` keeps each row's matcher
in one of ``workers`` processes and has them write every row's mask into one bitmask in shared memory.
A row's next mask is started as soon as its token is known (`MaskPool.advance` returns at once), so a
step's masks are computed on all the workers together, and alongside whatever the caller does before it
reads them (`MaskPool.masks`: the next forward pass, on a GPU server).

Each worker is a process of its own (``spawn``: safe beside torch's and a server's threads; a script
that makes a pool needs the usual ``if __name__ == "__main__":`` guard). It rebuilds the vocabulary and
warms it up once (`fsm.warm_up`, seconds), then compiles the specs it is given: a row's index lives in
the worker that serves the row, so nothing but specs, token ids and errors crosses a pipe; the masks
cross in shared memory.

The example is `MaskPool`'s; `benchmarks/bench_batch.py` (``--modes ours-pool``) times it.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import pickle
from collections.abc import Mapping
from multiprocessing.shared_memory import SharedMemory
from typing import Any

import numpy as np

from .compiler import compile as compile_spec
from .limits import Limits
from .spec import Spec
from .vocabulary import Vocabulary
from .warm import warm_up


class MaskPoolError(RuntimeError):
    """A worker of a `MaskPool` exited or did not answer in time (the pool is unusable after it)."""


def _serve(conn, vocab_args: tuple, shm_name: str, shape: tuple[int, int], limits: Limits | None) -> None:
    """A worker's loop: one reply per message, in order (`MaskPool` counts what it still awaits)."""
    vocab = Vocabulary(*vocab_args)
    warm_up(vocab)
    # (a spawned process shares its parent's resource tracker: attaching registers the name it
    # holds already, and the pool's `shutdown` unlinks it once)
    shm = SharedMemory(name=shm_name)
    masks = np.ndarray(shape, np.int32, buffer=shm.buf)
    matchers: dict[int, Any] = {}
    errors: list[tuple[int, BaseException]] = []

    def fail(row: int, exc: BaseException) -> None:
        """The row's error, sent back and raised by the pool; the row is closed."""
        matchers.pop(row, None)
        masks[row] = 0
        errors.append((row, exc))

    conn.send(("ready", os.getpid()))
    try:
        while True:
            op, arg = conn.recv()
            errors.clear()
            if op == "stop":
                break
            if op == "open":
                for row, spec in arg:
                    try:
                        m = compile_spec(spec, vocab, limits=limits).matcher()
                        m.fill_bitmask(masks[row])  # its first mask, ahead of the first read
                        matchers[row] = m
                    except Exception as exc:
                        fail(row, exc)
            elif op == "advance":
                for row, token in arg:  # every row advanced first: a rejected token stops only its row
                    try:
                        matchers[row].advance(token)
                    except Exception as exc:
                        fail(row, exc)
                for row, _ in arg:
                    m = matchers.get(row)
                    if m is not None:
                        try:
                            m.fill_bitmask(masks[row])
                        except Exception as exc:  # a row past its time budget
                            fail(row, exc)
            elif op == "reset":
                for row in arg:  # a new matcher on the row's compiled index: its first mask again
                    m = matchers[row] = matchers[row].index.matcher()
                    m.fill_bitmask(masks[row])
            elif op == "close":
                for row in arg:
                    matchers.pop(row, None)
                    masks[row] = 0
            elif op == "status":
                arg = [(row, matchers[row].is_accepting(), matchers[row].is_finished()) for row in arg]
            try:
                conn.send((errors, arg if op == "status" else None))
            except (pickle.PicklingError, TypeError, AttributeError):  # an error that does not pickle
                conn.send(([(row, RuntimeError(f"{type(e).__name__}: {e}")) for row, e in errors], None))
    finally:
        masks = None  # the buffer's last view: the segment can close
        shm.close()


class MaskPool:
    """Matchers for ``rows`` batch rows in ``workers`` processes, their masks in one shared bitmask.

    ``open({row: spec})`` compiles each spec in the worker with the fewest open rows and starts its
    first mask; ``advance({row: token})`` sends the sampled tokens and returns at once (each worker
    advances its rows, then computes their next masks); ``masks()`` waits for what is outstanding and
    returns the ``rows x ceil(V/32)`` int32 bitmask (`fsm.Matcher.fill_bitmask`'s layout; a row not
    open is all zeros). Errors are the in-process ones (a `fsm.SpecError` from ``open``,
    `fsm.TokenRejected` from the ``masks()`` after a bad token), raised once every worker has
    answered, with a note naming the row; the row is closed. Not thread-safe: one caller drives it.

    >>> import fsm
    >>> v = fsm.Vocabulary([b"a", b"b", b"ab", None], eos_token_ids=[3])
    >>> with MaskPool(v, rows=2, workers=1) as pool:
    ...     pool.open({0: fsm.Regex("ab"), 1: fsm.Regex("b+")})
    ...     first = pool.masks()[:, 0].tolist()  # token 0 "a" is bit 1, "b" 2, "ab" 4, EOS 8
    ...     pool.advance({0: 0, 1: 1})
    ...     print(first, "then", pool.masks()[:, 0].tolist())
    [5, 2] then [2, 10]
    """

    def __init__(
        self,
        vocab: Vocabulary,
        rows: int,
        workers: int | None = None,
        limits: Limits | None = None,
        start_timeout: float = 300.0,
        reply_timeout: float | None = None,
    ):
        if rows < 1:
            raise ValueError(f"rows must be at least 1, got {rows}")
        workers = workers if workers is not None else min(os.cpu_count() or 1, rows)
        if workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers}")
        self.rows, self.n_workers, self.limits = rows, workers, limits
        self._reply_timeout = reply_timeout
        words = (vocab.size + 31) // 32
        self._shm = SharedMemory(create=True, size=rows * words * 4)
        self._masks = np.ndarray((rows, words), np.int32, buffer=self._shm.buf)
        self._masks[:] = 0
        self._where: dict[int, int] = {}  # open row -> its worker
        self._awaited = [0] * workers  # replies each worker still owes
        self._closed = False
        ctx = multiprocessing.get_context("spawn")
        vocab_args = (vocab.tokens, vocab.eos_token_ids, vocab.size, vocab.special_tokens)
        self._conns, self._procs = [], []
        try:
            for _ in range(workers):
                mine, theirs = ctx.Pipe()
                p = ctx.Process(
                    target=_serve,
                    args=(theirs, vocab_args, self._shm.name, self._masks.shape, limits),
                    daemon=True,
                    name="fsm-mask-pool",
                )
                p.start()
                theirs.close()
                self._conns.append(mine)
                self._procs.append(p)
            for w in range(workers):
                self._recv(w, start_timeout)  # ("ready", pid)
        except BaseException:
            self.shutdown()
            raise

    # -- the batch -------------------------------------------------------------------------------
    def open(self, specs: Mapping[int, Spec]) -> None:
        """Compile ``specs`` (row -> spec), each in the worker with the fewest open rows, and start
        their first masks; waits for the compiles. A row already open is replaced."""
        self._check_rows(specs)
        load = [0] * self.n_workers
        for w in self._where.values():
            load[w] += 1
        by_worker: dict[int, list] = {}
        for row, spec in specs.items():
            old = self._where.pop(row, None)
            if old is not None:
                self._send(old, ("close", [row]))
                load[old] -= 1
            w = min(range(self.n_workers), key=load.__getitem__)
            load[w] += 1
            self._where[row] = w
            by_worker.setdefault(w, []).append((row, spec))
        for w, items in by_worker.items():
            self._send(w, ("open", items))
        self._wait()

    def advance(self, tokens: Mapping[int, int]) -> None:
        """Advance each open row by its token (row -> token id) and start its next mask; returns
        without waiting (`masks` waits)."""
        self._check_rows(tokens)
        for w, items in self._by_worker((row, (row, int(token))) for row, token in tokens.items()).items():
            self._send(w, ("advance", items))

    def masks(self) -> np.ndarray:
        """The bitmask of every row, once each worker has finished what it was sent (read-only view)."""
        self._wait()
        view = self._masks.view()
        view.setflags(write=False)
        return view

    def status(self, rows: list[int]) -> dict[int, tuple[bool, bool]]:
        """Per open row: (its text is accepted as it stands, only EOS is left), after what was sent."""
        by_worker = self._by_worker((row, row) for row in rows)
        self._wait()
        out: dict[int, tuple[bool, bool]] = {}
        for w, rs in by_worker.items():
            self._send(w, ("status", rs))
            _, got = self._recv(w, self._reply_timeout)
            self._awaited[w] -= 1
            out.update({row: (acc, fin) for row, acc, fin in got})
        return out

    def reset(self, rows: list[int]) -> None:
        """Start each of ``rows`` over on its compiled spec (a new matcher on the same index, its rows
        kept: what a new request on the same spec sees); returns without waiting."""
        for w, rs in self._by_worker((row, row) for row in rows).items():
            self._send(w, ("reset", rs))

    def close(self, rows: list[int]) -> None:
        """Drop the matchers of ``rows`` (their masks become zeros once the workers have read it)."""
        for row in rows:
            w = self._where.pop(row, None)
            if w is not None:
                self._send(w, ("close", [row]))

    @property
    def pids(self) -> list[int]:
        """The workers' process ids (to watch or limit them from outside)."""
        return [p.pid for p in self._procs]

    @property
    def open_rows(self) -> list[int]:
        """The rows with a matcher, sorted."""
        return sorted(self._where)

    # -- life ------------------------------------------------------------------------------------
    def shutdown(self) -> None:
        """Stop the workers and free the shared bitmask (idempotent)."""
        if self._closed:
            return
        self._closed = True
        for conn, p in zip(self._conns, self._procs, strict=True):
            try:
                if p.is_alive():
                    conn.send(("stop", None))
            except (OSError, ValueError):
                pass
        for conn, p in zip(self._conns, self._procs, strict=True):
            p.join(timeout=10)
            if p.is_alive():
                p.kill()
                p.join()
            conn.close()
        self._masks = None  # the buffer's last view: the segment can close
        self._shm.close()
        self._shm.unlink()

    def __enter__(self) -> MaskPool:
        return self

    def __exit__(self, *exc) -> None:
        self.shutdown()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):  # at interpreter shutdown the modules may be gone
            self.shutdown()

    # -- the pipes -------------------------------------------------------------------------------
    def _check_rows(self, rows) -> None:
        if self._closed:
            raise MaskPoolError("the mask pool is shut down")
        bad = [r for r in rows if not 0 <= r < self.rows]
        if bad:
            raise IndexError(f"rows {bad} are outside the pool's {self.rows} rows")

    def _by_worker(self, pairs) -> dict[int, list]:
        """``(row, item)`` pairs grouped as the items of each open row's worker (KeyError: a row
        not open)."""
        out: dict[int, list] = {}
        for row, item in pairs:
            w = self._where.get(row)
            if w is None:
                raise KeyError(f"row {row} is not open")
            out.setdefault(w, []).append(item)
        return out

    def _send(self, w: int, msg: tuple) -> None:
        try:
            self._conns[w].send(msg)
        except (OSError, ValueError) as exc:
            raise MaskPoolError(f"mask pool worker {w} is gone ({exc})") from exc
        self._awaited[w] += 1

    def _recv(self, w: int, timeout: float | None):
        conn, p = self._conns[w], self._procs[w]
        waited = 0.0
        try:
            while not conn.poll(1.0):
                waited += 1.0
                if not p.is_alive():
                    raise MaskPoolError(f"mask pool worker {w} exited (code {p.exitcode})")
                if timeout is not None and waited >= timeout:
                    raise MaskPoolError(f"mask pool worker {w} did not answer in {timeout:g} s")
            return conn.recv()
        except (EOFError, OSError) as exc:  # its end of the pipe closed as it died
            p.join(timeout=5)
            raise MaskPoolError(f"mask pool worker {w} exited (code {p.exitcode})") from exc

    def _wait(self) -> None:
        """Collect every outstanding reply; raise the first row's error (the others as notes)."""
        errors: list[tuple[int, BaseException]] = []
        for w in range(self.n_workers):
            while self._awaited[w]:
                got, _ = self._recv(w, self._reply_timeout)
                self._awaited[w] -= 1
                errors.extend(got)
        if not errors:
            return
        errors.sort(key=lambda e: e[0])
        for row, _ in errors:
            self._where.pop(row, None)
        row, exc = errors[0]
        exc.add_note(f"(mask pool row {row}; the row is closed)")
        for other, e in errors[1:]:
            exc.add_note(f"row {other} failed too: {type(e).__name__}: {e}")
        raise exc
