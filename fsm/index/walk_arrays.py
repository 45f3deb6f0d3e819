"""The arrays a row walk (`fsm.index.trie_kernel`) reads of an automaton, eager or made on demand.

A lazily determinized DFA keeps table rows for its expanded states only (`LazyByteDFA.row_index`:
most states a walk makes are never expanded); an eager one, and one that has no guard points, get
shared stand-ins (a row per state, no state guarded) instead of arrays made per walk.

>>> from fsm.regex import regex_to_dfa
>>> tbl, rows, bc, n_labels, flags = walk_view(regex_to_dfa("ab"), None, False)
>>> rows.tolist() == list(range(len(tbl))), n_labels, bool(flags.all())
(True, 256, True)
"""

from __future__ import annotations

import numpy as np

from ..automata import ByteDFA
from .contract import OnDemand
from .steps import Steps


def walk_view(
    dfa: ByteDFA, on_demand: OnDemand | None, labels_are_classes: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, np.ndarray]:
    """(table, state -> its row in the table, label -> column, labels, expanded flags) of the
    automaton as a walk reads it: an automaton made on demand may keep rows for its expanded states
    only (`LazyByteDFA.row_index`), an eager one has a row per state."""
    tbl = on_demand.table_buffer if on_demand is not None else np.asarray(dfa.table)
    rows = getattr(on_demand, "row_index", None)
    if rows is None:
        rows = _identity(len(tbl))
    n_labels = int(tbl.shape[1]) if labels_are_classes else 256
    bc = np.arange(n_labels, dtype=np.int32) if labels_are_classes else np.asarray(dfa.byte_class, np.int32)
    flags = on_demand.expanded_flags if on_demand is not None else np.ones(len(tbl), dtype=np.bool_)
    return tbl, rows, bc, n_labels, flags


_IDENTITY = np.arange(1024, dtype=np.int32)


def _identity(n: int) -> np.ndarray:
    """``0..n-1`` (int32): the rows of a table with a row per state; one array shared, read only."""
    global _IDENTITY
    if len(_IDENTITY) < n:
        _IDENTITY = np.arange(max(n, 2 * len(_IDENTITY)), dtype=np.int32)
    return _IDENTITY[:n]


def guard_arrays_of(on_demand: OnDemand | None, flags: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The automaton's guard arrays (`LazyByteDFA.guard_arrays`), or none guarded (for as many
    states as ``flags``, the expanded flags, has room for).

    >>> galt, gdead = guard_arrays_of(None, np.ones(5, np.bool_)); bool((galt[:5] == -1).all())
    True
    """
    if getattr(on_demand, "has_guards", False):
        return on_demand.guard_arrays  # type: ignore[union-attr]
    global _NO_GUARDS
    if len(_NO_GUARDS[0]) < len(flags):  # read only: one pair shared by every walk
        n = max(len(flags), 2 * len(_NO_GUARDS[0]))
        _NO_GUARDS = (np.full(n, -1, np.int32), np.zeros(n, np.bool_))
    return _NO_GUARDS


_NO_GUARDS = (np.full(1024, -1, np.int32), np.zeros(1024, np.bool_))


def step_arrays(
    steps: Steps, flags: np.ndarray, on_demand: OnDemand | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``steps``' arrays for as many states as ``flags`` (the expanded flags) has room for, guarded
    states marked as having no uniform step: a chain never runs through a state whose checks are
    still open.

    >>> st, masks, known, chars = step_arrays(Steps(), np.ones(3, np.bool_), None); len(known)
    3
    """
    st, masks, known, chars = steps.arrays(len(flags))
    if getattr(on_demand, "has_guards", False):
        galt = on_demand.guard_arrays[0]  # type: ignore[union-attr]
        n = min(len(galt), len(known))  # the buffers grow apart: states exist below both lengths
        guarded = galt[:n] >= 0
        known[:n][guarded] = True
        st[:n][guarded] = -1
    return st, masks, known, chars
