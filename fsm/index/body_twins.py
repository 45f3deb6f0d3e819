"""A string body known from a loop like one searched before: the body search skipped, its states named when read.

A shaped row (`fsm.index.body_rows`) needs its state's *body*: the loop and the states inside the
UTF-8 characters that return to it, numbered in breadth-first order, and their shape. The search
expands every one of them (~19 states on a plain JSON string: ~0.1 ms), and every string field of
every schema is a loop of its own (what follows its closing quote differs), so a schema pays it once
per string field.

Two loops that are each one NFA state reading every character past ASCII back to itself, over the
same ranges (`LazyByteDFA.loop_ranges`), have the same states inside a character up to names: the
UTF-8 chains are made from the ranges and the target alone (`automata.utf8_chains`). If their rows
also send the same ASCII bytes back to the loop, out (an exit) or nowhere, their bodies have one
shape. So do two states before such loops (a string's first state, after its opening quote: its
own NFA state beside the loop's) that read the same characters and ASCII bytes into them. `TwinBodies`
keeps, per such key, the shape and each body state's bytes from its root; a twin's body states are
then its root (the state itself), and the others are found by walking those bytes from it — only
when a token ends inside a character and a matcher reads where (`ShapedRow`). Every exit leaves
from the root or the loop (a state inside a character reads no ASCII byte: it returns or dies),
and those are named before the walk below the exits.

>>> from fsm.automata import cls, node_nfa, rep, LazyByteDFA
>>> lazy = LazyByteDFA(*node_nfa(rep(cls((0x20, 0x21), (0x23, 0x10FFFF)), 0, None)))
>>> d = lazy.as_byte_dfa(); s = d.step(d.initial, ord("a"))
>>> key = body_key(d, lazy, s, s); key is not None and key[0]  # (surrogates are no characters)
((128, 55295), (57344, 1114111))
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from contextlib import nullcontext
from functools import partial

import numpy as np

from ..automata import ByteDFA
from .body_shapes import EXIT
from .contract import OnDemand
from .walk_arrays import walk_view

TWINS_KEPT = 256  # body keys per process (a shape of ~20 states and their paths: ~12 KB each)


def body_key(dfa: ByteDFA, on_demand: OnDemand | None, state: int, anchor: int) -> tuple | None:
    """The key of ``state``'s body among its twins, or None: ``state`` and its loop ``anchor`` do
    not read every character past ASCII into the loop, one NFA state (`LazyByteDFA.loop_ranges`).
    Both are expanded."""
    ranges = getattr(on_demand, "loop_ranges", None)
    if ranges is None:
        return None
    high, loop_high = ranges(state, anchor), ranges(anchor)
    if high is None or loop_high is None:
        return None
    on_demand.ensure(np.array([state, anchor]))  # type: ignore[union-attr]
    tbl, rows, bc, _, _ = walk_view(dfa, on_demand, False)

    def kinds(d: int) -> bytes:  # each ASCII byte into the loop, nowhere, or out
        to = tbl[rows[d], bc[:0x80]]
        return np.where(to == anchor, 0, np.where(to < 0, -1, EXIT)).astype(np.int8).tobytes()

    return high, kinds(state), (loop_high, kinds(anchor)) if anchor != state else None


def body_paths(shape: np.ndarray) -> list[bytes]:
    """Each body state's bytes from the loop (state 0), shortest first, by the shape's own edges.

    >>> shape = np.full((3, 256), -1, np.int16); shape[0, 0xC3] = 1; shape[1, 0xA9] = 0; shape[0, 0xE2] = 2
    >>> body_paths(shape)
    [b'', b'\\xc3', b'\\xe2']
    """
    paths: list[bytes | None] = [None] * len(shape)
    paths[0] = b""
    todo = [0]
    for x in todo:
        for b in np.flatnonzero(shape[x] >= 0).tolist():
            y = int(shape[x, b])
            if paths[y] is None:
                paths[y] = paths[x] + bytes([b])  # type: ignore[operator]
                todo.append(y)
    return paths  # type: ignore[return-value]


class TwinBodies:
    """Bodies by key (`body_key`), most recently used kept (`TWINS_KEPT`): (shape, paths)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_key: OrderedDict[tuple, tuple[np.ndarray, list[bytes]]] = OrderedDict()

    def get(self, key: tuple) -> tuple[np.ndarray, list[bytes]] | None:
        """The shape and paths of ``key``'s body, or None (not searched yet)."""
        with self._lock:
            got = self._by_key.get(key)
            if got is not None:
                self._by_key.move_to_end(key)
            return got

    def put(self, key: tuple, shape: np.ndarray) -> None:
        """Keep ``shape`` (a searched body's) for ``key``'s twins."""
        paths = body_paths(shape)
        if any(p is None for p in paths):
            return  # not every state reached from the loop by the shape's edges: not kept
        with self._lock:
            self._by_key[key] = (shape, paths)
            while len(self._by_key) > TWINS_KEPT:
                self._by_key.popitem(last=False)


TWINS = TwinBodies()


def body_or_twin(
    dfa: ByteDFA, state: int, on_demand: OnDemand | None, anchor: int | None, lock, search: Callable
) -> tuple[np.ndarray, np.ndarray | None, Callable[[int], int] | None]:
    """(body states, -1 where ``name`` finds them; the shape, None: no body) of ``state``: its
    twin's when a loop like it was searched before, else ``search``'s (`body_rows.body_of`)."""
    key = body_key(dfa, on_demand, state, anchor) if anchor is not None and anchor >= 0 else None
    twin = TWINS.get(key) if key is not None else None
    if twin is None:
        body = search(dfa, state, on_demand, anchor)
        if body is None:
            return np.zeros(0, np.int64), None, None
        if key is not None:
            TWINS.put(key, body[1])
        return body[0], body[1], None
    shape, paths = twin
    states = np.full(len(shape), -1, np.int64)
    states[0] = state
    # a partial, not a closure: one object a row for the garbage collector to walk, not seven
    return states, shape, partial(_walked, dfa, state, paths, lock)


def _walked(dfa: ByteDFA, state: int, paths, lock, x: int) -> int:
    """The state of a twin's body state ``x``: its path walked from ``state``."""
    with lock if lock is not None else nullcontext():
        return dfa.walk(state, paths[x])
