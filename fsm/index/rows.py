"""Row-based token indexes: for each automaton state, the allowed tokens and where each one leads.

Rows are computed lazily — the first time a matcher reaches a state — by one vectorized walk of the
vocabulary's byte trie from that state (`fsm.index.token_walk.walk_tokens`), so compiling costs only the
automaton and a generation pays for the states it visits. ``build_all()`` computes every row ahead
of time, all states of a chunk walked together. `RowIndex` holds this shared machinery (row cache,
token sets and packed masks shared between states, the memory budget); `fsm.index.dfa.DfaIndex`
(an eager `ByteDFA`) and `fsm.index.lazy.LazyDfaIndex` (a lazily determinized one) extend it, and
`RowMatcher` is the matcher of both.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from contextlib import AbstractContextManager, nullcontext
from typing import Protocol

import numpy as np

from ..automata import ByteDFA
from ..errors import SpecTooComplex, TokenRejected
from ..limits import DEFAULT_LIMITS, Deadline, Limits
from ..vocabulary import Vocabulary
from .bitmask import frozen_bitmask
from .contract import Matcher, OnDemand
from .kernels import kernels
from .row_lookup import find_token

FINISHED = -2  # the "state" after EOS
_CHUNK = 256  # states walked together by build_all: bounds the walk's memory on big automata
_SMALL_ROW = 64  # rows of at most this many tokens are sorted by insertion, in one compiled call
_WHOLE_KEY = 256  # rows of at most this many tokens are shared by their whole token list as key


class Row:
    """One state's allowed tokens (sorted, EOS included when accepting) and the state each leads to.

    ``packed``: the tokens' packed bitmask when known. A `RowIndex` keeps a plain row's arrays as a
    tuple (`RowIndex._store`) and its mask apart, and makes a `Row` of them when asked.
    """

    __slots__ = ("has_text", "next_states", "packed", "tokens")

    def __init__(
        self, tokens: np.ndarray, next_states: np.ndarray, has_text: bool, packed: np.ndarray | None = None
    ):
        self.tokens = tokens  # int32, sorted
        self.next_states = next_states  # int32, FINISHED for EOS
        self.has_text = has_text  # any non-EOS token
        self.packed = packed

    @property
    def nbytes(self) -> int:
        return (
            self.tokens.nbytes + self.next_states.nbytes + (0 if self.packed is None else self.packed.nbytes)
        )

    def next_state(self, token_id: int) -> int | None:
        """The state ``token_id`` leads to, or None when it is not allowed."""
        i = find_token(self.tokens, token_id)
        return None if i < 0 else int(self.next_states[i])


def _sorted(tok: np.ndarray) -> bool:
    """Whether ``tok`` is strictly increasing (a walk's output almost never is: its head tells).

    >>> _sorted(np.array([1, 4, 9])), _sorted(np.array([4, 1, 9]))
    (True, False)
    """
    head = tok[:8]
    return bool((head[1:] > head[:-1]).all()) and bool((tok[1:] > tok[:-1]).all())


class OnDemandDFA(OnDemand, Protocol):
    """An `OnDemand` automaton whose expansions a row walk can put under its deadline."""

    def within(self, deadline: Deadline | None) -> AbstractContextManager[None]:
        """Check the expansions made inside the block against ``deadline``."""


class RowIndex(ABC):
    """Lazy token index over a byte DFA; immutable from the outside and safe to share across threads.

    Subclasses say how to walk the trie from a batch of states (`walk`) and how many states there are.
    """

    def __init__(
        self,
        dfa: ByteDFA,
        vocab: Vocabulary,
        fingerprint: str,
        limits: Limits | None,
        n_classes: int,
        name: str = "",
    ):
        self.dfa = dfa
        # what a budget overrun while a row is made names (a regex's "regex '…'"); "": the
        # automaton's own error, unchanged (a JSON schema's names its part at compile)
        self.name = name
        self.vocabulary = vocab
        self.fingerprint = fingerprint
        self.limits = limits or DEFAULT_LIMITS
        self.eos_ids = np.array(vocab.eos_token_ids, dtype=np.int32)
        self.eos_set = frozenset(vocab.eos_token_ids)
        self.eos_bitmask = frozen_bitmask(vocab.eos_token_ids, vocab.size)
        # A plain row is kept as the tuple of its arrays, its mask in ``_masks``: tuples of arrays and
        # dicts of them drop out of the garbage collector's view, a row object would not. Rows
        # were two thirds of what a server's full collections walked (~50 ms each at 200 schemas).
        self._rows: dict[int, tuple | Row] = {}
        self._masks: dict[int, np.ndarray] = {}  # state -> its packed mask, once asked or known
        # Many states allow the same token set (e.g. the inside of every free JSON string): rows
        # with equal tokens share one array and one packed mask (``_packs``: by the array's id, the
        # array held with it). Keyed by a sample of the tokens, equal arrays found by comparing:
        # hashing a whole row's bytes cost 60 µs on a 49k-token row, twice per new state.
        self._shared: dict[bytes | tuple[int, bytes], tuple[np.ndarray, ...]] = {}
        self._packs: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self._lock = threading.RLock()
        self._single: dict[int, int] = {}
        self._steps = None  # each state's uniform step, found by the row walks (`steps.Steps`)
        self._class_sizes = np.bincount(dfa.byte_class, minlength=n_classes)
        self._nbytes = 0

    @abstractmethod
    def walk(self, states: np.ndarray, deadline: Deadline) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """`walk_tokens` from ``states``: (source position, token, end state) triples; gives up with
        `SpecTooComplex` past ``deadline``."""

    @property
    @abstractmethod
    def n_states(self) -> int:
        """States of the automaton (all of them expanded, for a lazy one)."""

    # -- rows -------------------------------------------------------------------------------
    def row(self, state: int) -> Row:
        """The row of ``state``, computed on first use (within ``limits.max_seconds``)."""
        r = self._rows.get(state)
        if r is None:
            with self._lock:
                r = self._rows.get(state)
                if r is None:
                    # built or loaded once per vocabulary / process: not this row's time
                    k = kernels()
                    k.ensure_compiled()
                    _ = k.vocabulary_preorder(self.vocabulary)
                    deadline = self.limits.deadline()  # one for the row, shaped or walked
                    try:
                        r = self._new_row(state, deadline)
                    except SpecTooComplex as exc:
                        if not self.name:
                            raise
                        raise exc.named(self.name) from None
                    self._store(state, r)
                    return r
        return Row(*r, self._masks.get(state)) if r.__class__ is tuple else r

    def _store(self, state: int, r: Row) -> None:
        """Keep ``state``'s row (replacing any earlier one and its mask): a plain `Row` as a tuple of
        its arrays and its mask apart."""
        self._masks.pop(state, None)
        if r.__class__ is Row:
            if r.packed is not None:
                self._masks[state] = r.packed
            self._rows[state] = (r.tokens, r.next_states, r.has_text)
        else:
            self._rows[state] = r

    def next_state(self, state: int, token_id: int) -> int | None:
        """The state ``token_id`` leads to from ``state``, or None when it is not allowed (no row
        object made for a plain row)."""
        r = self._rows.get(state)
        if r.__class__ is tuple:
            i = find_token(r[0], token_id)
            return None if i < 0 else int(r[1][i])
        return self.row(state).next_state(token_id)

    def _new_row(self, state: int, deadline: Deadline):
        """``state``'s row, made on its first visit: walked here (a subclass tries other kinds first)."""
        return self._walked_row(state, deadline)

    def _walked_row(self, state: int, deadline: Deadline) -> Row:
        """``state``'s row from `_row_arrays`."""
        tok, end = self._row_arrays(state, deadline)
        return self._make_row(state, tok, end)

    def _row_arrays(self, state: int, deadline: Deadline) -> tuple[np.ndarray, np.ndarray]:
        """(tokens, end states) of ``state``, by the compiled trie walk (`fsm.index.trie_kernel`)."""
        return self.kernel_row(state, deadline)

    @property
    def steps(self):
        """The states' uniform steps found by this index's row walks (`fsm.index.steps.Steps`)."""
        if self._steps is None:
            self._steps = kernels().Steps()
        return self._steps

    def on_demand(self) -> OnDemandDFA | None:
        """The automaton as it expands on demand (None: every row of ``dfa.table`` is made)."""
        return None

    def kernel_row(
        self, state: int, deadline: Deadline, deferred: list | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """(tokens, end states) of ``state`` by `trie_kernel.walk_row` over the byte trie; the nodes
        a guarded state defers go to ``deferred`` (`trie_kernel.walk_row`)."""
        return self._walk_row(state, deadline, deferred, kernels().UNKNOWN)

    def _walk_row(
        self, state: int, deadline: Deadline, deferred: list | None, chain
    ) -> tuple[np.ndarray, np.ndarray]:
        """`kernel_row` with ``chain`` (`trie_kernel.walk_row`'s, ``UNKNOWN``: found by the walk)."""
        lazy = self.on_demand()
        # the DFA rows the walk expands count against the row's deadline too
        with lazy.within(deadline) if lazy is not None else nullcontext():
            k = kernels()
            trie = k.vocabulary_preorder(self.vocabulary)
            return k.walk_row(
                self.dfa,
                state,
                trie,
                on_demand=lazy,
                deadline=deadline,
                steps=self.steps,
                deferred=deferred,
                chain=chain,
            )

    def _make_row(self, state: int, tok: np.ndarray, end: np.ndarray) -> Row:
        has_text = len(tok) > 0
        if self.dfa.accepting[state]:
            tok = np.concatenate([tok, self.eos_ids])
            end = np.concatenate([end, np.full(len(self.eos_ids), FINISHED, dtype=np.int32)])
        packed = None
        pack = False  # a big sorted row's mask: packed once it is known no equal row has one
        if len(tok) <= _SMALL_ROW:  # most rows: a few tokens
            tok, end = kernels().small_sorted_row(
                np.ascontiguousarray(tok, np.int32), np.ascontiguousarray(end, np.int32)
            )
        elif _sorted(tok):  # a row derived from a sorted one (`LazyDfaIndex`'s counter shifts)
            tok, end = tok.astype(np.int32, copy=False), end.astype(np.int32, copy=False)
            pack = len(tok) * 32 > self.vocabulary.size
        elif len(tok) * 32 > self.vocabulary.size:  # big rows: a scatter is cheaper than a sort
            # its mask packed in the same pass: matchers ask for it next
            tok, end, packed = kernels().sorted_packed_row(tok, end, self.vocabulary.size, FINISHED - 1)
        else:
            order = np.argsort(tok, kind="stable")
            tok, end = tok[order].astype(np.int32), end[order].astype(np.int32)
        return self._sorted_row(tok, end, has_text, packed, pack)

    def _sorted_row(
        self,
        tok: np.ndarray,
        end: np.ndarray,
        has_text: bool,
        packed: np.ndarray | None = None,
        pack: bool = False,
    ) -> Row:
        """The row of pairs sorted by token (int32, EOS included), its token array shared with an
        equal row's and its mask with that row's (or ``packed``, or packed now when ``pack``)."""
        tok = self._share(tok)
        if pack or packed is not None or id(tok) in self._packs:
            # (the sibling rows of a key's prefixes hold the same tokens, only their ends differ:
            # the first one's mask serves them all; packing each cost ~50 µs of ~600)
            packed = self._mask_of(tok, packed)
        row = Row(tok, end, has_text, packed)
        self._charge(end.nbytes)
        return row

    def _charge(self, nbytes: int) -> None:
        """Count ``nbytes`` more of rows against ``limits.max_index_bytes``."""
        self._nbytes += nbytes
        if self._nbytes > self.limits.max_index_bytes:
            raise SpecTooComplex(
                f"token index {self.fingerprint[:40]} grew past max_index_bytes={self.limits.max_index_bytes:,}",
                budget="max_index_bytes",
                limit=self.limits.max_index_bytes,
            )

    def _share(self, tok: np.ndarray) -> np.ndarray:
        """The array of an earlier row with the same tokens, else ``tok``."""
        small = len(tok) <= _WHOLE_KEY
        # a small row's key is its tokens themselves: found by the hash, no comparison
        key = tok.tobytes() if small else (len(tok), tok[:: len(tok) // 64].tobytes())
        bucket = self._shared.get(key, ())
        for arr in bucket:
            if small or np.array_equal(arr, tok):
                return arr
        self._shared[key] = (*bucket, tok)
        self._nbytes += tok.nbytes
        return tok

    def _mask_of(self, tok: np.ndarray, packed: np.ndarray | None = None) -> np.ndarray:
        """The packed mask of token array ``tok``: the one kept for that array, else ``packed`` (when
        made already) or a new one, kept for every row of that array."""
        known = self._packs.get(id(tok))
        if known is not None:
            return known[1]
        if packed is None:
            packed = kernels().pack_tokens(tok, self.vocabulary.size)  # numpy's: ~4x the time
        packed.setflags(write=False)
        self._packs[id(tok)] = (tok, packed)  # the array held: its id is not reused
        self._nbytes += packed.nbytes
        return packed

    def bitmask(self, state: int) -> np.ndarray:
        """Packed allowed-token bitmask of ``state`` (ceil(V/32) int32 words), cached."""
        bm = self._masks.get(state)
        if bm is None:
            r = self.row(state)
            bm = r.packed
            if bm is None:
                with self._lock:
                    bm = self._mask_of(r.tokens)
            self._masks[state] = bm
        return bm

    def fill_rows(self, states: np.ndarray, deadline: Deadline | None = None) -> None:
        """Compute the rows of ``states`` (none computed yet), a chunk of states per trie walk,
        within ``deadline`` (default: ``limits.max_seconds`` from now)."""
        _ = self.vocabulary.trie  # built once per vocabulary: not this build's time
        deadline = deadline or self.limits.deadline()
        with self._lock:
            for lo in range(0, len(states), _CHUNK):
                chunk = states[lo : lo + _CHUNK]
                src, tok, end = self.walk(chunk, deadline)
                order = np.argsort(src, kind="stable")
                src, tok, end = src[order], tok[order], end[order]
                bounds = np.searchsorted(src, np.arange(len(chunk) + 1))
                for i, s in enumerate(chunk.tolist()):
                    a, b = bounds[i], bounds[i + 1]
                    self._store(s, self._make_row(s, tok[a:b], end[a:b]))
                deadline.check(f"building index {self.fingerprint[:40]}")

    def missing_rows(self) -> np.ndarray:
        """The states whose row is not computed yet, ascending."""
        return np.array(sorted(set(range(self.n_states)) - set(self._rows)), dtype=np.int64)

    def computed_rows(self) -> dict[int, Row]:
        """A snapshot of the rows computed so far (what the disk cache saves)."""
        with self._lock:
            return {s: self.row(s) for s in list(self._rows)}

    def restore_rows(self, rows: dict[int, Row]) -> None:
        """Install rows computed earlier for this automaton and vocabulary (from the disk cache)."""
        with self._lock:
            for s, r in rows.items():
                self._store(s, r)

    # -- automaton helpers used by matchers ---------------------------------------------------
    def single_byte(self, state: int) -> int:
        """The only byte the DFA accepts from ``state`` when it is not accepting, else -1."""
        b = self._single.get(state)
        if b is None:
            b = -1
            if not self.dfa.accepting[state]:
                live = self.dfa.table[state] >= 0
                if int(self._class_sizes[live].sum()) == 1:
                    cls = int(np.nonzero(live)[0][0])
                    b = int(np.nonzero(self.dfa.byte_class == cls)[0][0])
            self._single[state] = b
        return b

    @property
    def initial_state(self) -> int:
        return self.dfa.initial

    def is_accepting_state(self, state: int) -> bool:
        return state == FINISHED or bool(self.dfa.accepting[state])

    @property
    def n_rows(self) -> int:
        """Rows computed so far."""
        return len(self._rows)

    def matcher(self) -> RowMatcher:
        """A fresh matcher at the start state (cheap: one per sequence)."""
        return RowMatcher(self)


class RowMatcher(Matcher):
    """The matcher of a `RowIndex`: its state is an automaton state (an int), `FINISHED` after EOS.

    >>> import fsm
    >>> v = fsm.Vocabulary([b"a", b"b", b"ab", None], eos_token_ids=[3])
    >>> m = fsm.compile(fsm.Regex("a|ab"), v).matcher()
    >>> m.advance(0); m.allowed_token_ids().tolist(), m.is_finished()
    ([1, 3], False)
    """

    __slots__ = ()

    FINISHED = FINISHED

    def _allowed_ids(self) -> np.ndarray:
        return self._index.row(self._state).tokens

    def _bitmask(self) -> np.ndarray:
        return self._index.bitmask(self._state)

    def _next_state(self, token_id: int) -> int:
        nxt = self._index.next_state(self._state, token_id)
        if nxt is None:
            raise TokenRejected(token_id)
        return nxt

    def _accepting(self) -> bool:
        return self._index.is_accepting_state(self._state)

    def _has_text(self) -> bool:
        return self._index.row(self._state).has_text

    def _after_byte(self, state: int, byte: int, before: bytearray) -> int | None:
        return self._index.dfa.step(state, byte)
