"""Array stand-ins for a lazily determinized DFA's table and accepting flags, so a `ByteDFA` can
hold one (`LazyByteDFA`, `fsm.compose.ComposedDFA`).

An index written for eager DFAs reads ``dfa.table[rows]``; these views expand the rows it touches
first, so the same code serves a lazily determinized automaton without making its other states.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np


class Expanding(Protocol):
    """What the views read of their automaton."""

    n_classes: int

    @property
    def n_states(self) -> int: ...

    @property
    def table_buffer(self) -> np.ndarray: ...

    @property
    def accepting_flags(self) -> np.ndarray: ...

    def ensure(self, rows) -> None: ...

    def expand_all(self) -> None: ...


class LazyTable:
    """Stands in for ``ByteDFA.table``: rows are determinized the first time an index reads them."""

    dtype = np.dtype(np.int32)

    def __init__(self, owner: Expanding):
        self._owner = owner

    @property
    def shape(self) -> tuple[int, int]:
        return (self._owner.n_states, self._owner.n_classes)

    @property
    def nbytes(self) -> int:
        return int(self._owner.n_states * self._owner.n_classes * 4)

    def __len__(self) -> int:
        return self._owner.n_states

    def __getitem__(self, key):
        o = self._owner
        rows = key[0] if isinstance(key, tuple) else key
        if isinstance(rows, slice) or rows is Ellipsis:
            return np.asarray(self)[key]
        o.ensure(rows)
        index = getattr(o, "row_index", None)  # rows for expanded states only (`LazyByteDFA`)
        at = rows if index is None else index[rows]
        return o.table_buffer[(at, *key[1:])] if isinstance(key, tuple) else o.table_buffer[at]

    def __array__(self, dtype=None, copy=None):
        o = self._owner
        o.expand_all()
        index = getattr(o, "row_index", None)
        a = o.table_buffer[: o.n_states] if index is None else o.table_buffer[index[: o.n_states]]
        return a.astype(dtype) if dtype is not None else a


class LazyFlags:
    """Stands in for ``ByteDFA.accepting`` (known as soon as a state exists)."""

    def __init__(self, owner: Expanding):
        self._owner = owner

    def __getitem__(self, key):
        return self._owner.accepting_flags[key]

    def __len__(self) -> int:
        return self._owner.n_states

    @property
    def nbytes(self) -> int:
        return self._owner.n_states

    def __array__(self, dtype=None, copy=None):
        a = self._owner.accepting_flags
        return a.astype(dtype) if dtype is not None else a
