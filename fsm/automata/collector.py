"""Python's cyclic garbage collector paused while an automaton or a token row is built.

A construction allocates ~10^5 small containers (NFA edge lists, state sets, language trees) that
either die with it (freed by reference counting) or stay in the index. While they live, the
collector promotes them from generation to generation, and each time a quarter of the long-lived
heap has been promoted it runs a full collection, which walks every tracked object of the process
— a server's whole heap (transformers and a tokenizer alone: ~420k objects, 0.2 s of CPU a
collection here). Serving 42 new schemas in one process spent a third of its CPU time in such
collections. Paused, the collector never sees the transients; what the construction keeps is seen
once, after. The pause ends with the outermost construction (nesting and threads counted), and the
collector is resumed only if it was running when the first one began.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_depth = 0
_resume = False


@contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic garbage collection inside the block (reference counting still frees everything
    that holds no cycle).

    >>> import gc
    >>> with gc_paused():
    ...     gc.isenabled()
    False
    >>> gc.isenabled()
    True
    """
    global _depth, _resume
    with _lock:
        if _depth == 0:
            _resume = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _resume:
                gc.enable()
