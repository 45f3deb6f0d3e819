"""lark's LALR table construction under a deadline, in a forked child process.

lark's LALR construction is pure Python and cannot be interrupted; for big grammars (generated from
large JSON schemas it can take minutes) it runs in a forked child that is killed on time, so a
compile honours ``Limits.max_seconds`` instead of hanging, and whose data segment may grow by
``Limits.max_memory`` at most (``RLIMIT_DATA``: lark's allocations fail with `MemoryError` past it,
reported as `SpecTooComplex` on ``max_memory``). A plain ``os.fork`` (not multiprocessing), so it
also works inside daemonic worker processes.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import resource
import select
import signal
import time

from ..errors import GrammarError, SpecTooComplex
from .lark import LarkGrammar, load_lark

# Grammars this small build their LALR table in-process (a fork costs more than lark does on them);
# bigger ones, by lines or by size (one long line can hold many rules), build it in a forked child
# under the deadline.
_FORK_LINES = 300
_FORK_CHARS = 1_000


def load_lark_bounded(
    text: str, start: str = "start", seconds: float | None = None, memory: int | None = None
) -> LarkGrammar:
    """`load_lark` that gives up after ``seconds`` with `SpecTooComplex` instead of hanging, and
    (in the forked child) after allocating ``memory`` bytes.

    >>> load_lark_bounded('start: "a"', seconds=5).table.start_state >= 0
    True
    """
    small = text.count("\n") < _FORK_LINES and len(text) < _FORK_CHARS
    if seconds is None or small or not hasattr(os, "fork"):
        return load_lark(text, start)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: build, send the pickled result, leave without running any cleanup
        _child(r, w, text, start, memory)
    os.close(w)
    data = _read_child(r, pid, seconds)
    try:
        kind, payload = pickle.loads(data)
    except Exception:  # the child died before sending
        if memory is not None:  # an allocation past RLIMIT_DATA CPython could not turn into MemoryError
            raise SpecTooComplex(
                f"grammar {_head(text)}: the process building lark's LALR table died before it finished, "
                f"most likely at its memory budget max_memory={memory:,} bytes; simplify the grammar "
                "or raise Limits.max_memory",
                budget="max_memory",
                limit=memory,
            ) from None
        raise GrammarError(
            "the grammar could not be built (the process building its LALR table died)"
        ) from None
    if kind == "ok":
        return payload
    if kind == "memory":
        raise SpecTooComplex(
            f"grammar {_head(text)}: lark's LALR table grew past the budget max_memory={memory:,} bytes; "
            "simplify the grammar or raise Limits.max_memory",
            budget="max_memory",
            limit=memory,
        )
    raise GrammarError(payload)


def _head(text: str) -> str:
    """The grammar's first line, cut, for a message."""
    first = text.strip().split("\n", 1)[0]
    return repr(first if len(first) <= 60 else first[:57] + "...")


def _limit_data(nbytes: int) -> None:
    """Let this process's data segment (heap and private mappings) grow by ``nbytes`` at most."""
    with open("/proc/self/status") as f:
        data = next((int(line.split()[1]) * 1024 for line in f if line.startswith("VmData:")), None)
    if data is None:
        return
    _, hard = resource.getrlimit(resource.RLIMIT_DATA)
    cap = data + nbytes
    if hard != resource.RLIM_INFINITY:
        cap = min(cap, hard)
    resource.setrlimit(resource.RLIMIT_DATA, (cap, hard))


def _child(r: int, w: int, text: str, start: str, memory: int | None) -> None:
    """In the forked child: build the grammar, write the pickled outcome to ``w``, exit at once."""
    code = 0
    try:
        os.close(r)
        try:
            if memory is not None:
                _limit_data(memory)
            g = load_lark(text, start)
            g.lark = None  # lark's parser object holds local classes: not picklable, not needed
            data = pickle.dumps(("ok", g))
        except MemoryError:
            data = pickle.dumps(("memory", ""))
        except GrammarError as exc:
            data = pickle.dumps(("error", str(exc)))
        except BaseException as exc:  # reported to the parent as a grammar error
            data = pickle.dumps(("error", f"lark could not build the grammar: {exc!r}"))
        with os.fdopen(w, "wb") as f:
            f.write(data)
    except BaseException:  # whatever happens, the child must not return into the caller
        code = 1
    finally:
        os._exit(code)


def _read_child(r: int, pid: int, seconds: float) -> bytes:
    """Everything the child writes to ``r`` within ``seconds`` (else `SpecTooComplex`); the child
    is killed and reaped either way."""
    chunks: list[bytes] = []
    deadline = time.monotonic() + seconds
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([r], [], [], left)[0]:
                raise SpecTooComplex(
                    f"grammar: lark's LALR table did not finish within {seconds:.3g} s (the budget max_seconds); "
                    "simplify the spec or raise Limits.max_seconds",
                    budget="max_seconds",
                    limit=seconds,
                )
            chunk = os.read(r, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(r)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    return b"".join(chunks)
