"""The compiled parts of the row walk, imported on a process's first row, not with ``fsm``.

numba's import loads llvmlite, one of whose objects answers ``__dict__`` with something that is no
dict; vLLM 0.32's CPU worker scans every loaded module at start-up
(``register_triton_kernel_overrides``) and fails on it. Every vLLM process imports ``fsm`` (the
``guide`` plugin does), so ``fsm`` loads numba only once it computes a row — after start-up. The
import costs ~0.3 s, plus ~0.1 s to load the compiled code from numba's disk cache, paid by
`fsm.warm_up` or by the first row (outside its deadline: `trie_kernel.ensure_compiled`).

>>> kernels().walk_row.__name__
'walk_row'
"""

from __future__ import annotations

from types import SimpleNamespace

_loaded: SimpleNamespace | None = None


def kernels() -> SimpleNamespace:
    """The walk's compiled functions and the types they use, loaded once.

    >>> sorted(vars(kernels()))[:3]
    ['CHAIN_ROW_MIN', 'MAX_WALKED_SHARE', 'NarrowWalk']
    """
    global _loaded
    if _loaded is None:
        # lazy: numba must not be loaded by `import fsm` (the module docstring says why)
        from .body_rows import ensure_shapes_compiled, shaped_row, wide_anchor  # lazy: numba
        from .chain_rows import CHAIN_ROW_MIN, chain_row, chain_table, ensure_chain_compiled  # lazy: numba
        from .literal_rows import literal_row  # lazy: numba
        from .narrow_rows import NarrowWalk, narrow_below, narrow_row  # lazy: numba
        from .preorder import PreorderTrie, preorder, vocabulary_preorder  # lazy: numba
        from .row_sort import (
            pack_tokens,
            set_bits,
            small_sorted_row,
            sorted_packed_row,
            sorted_pairs,
        )  # lazy: numba
        from .sibling_rows import (
            MAX_WALKED_SHARE,
            dense_ends,
            differing_bytes,
            first_bytes,
            same_beyond_ascii,
            sibling_row,
        )  # lazy: numba
        from .steps import Steps  # lazy: numba
        from .trie_kernel import UNKNOWN, expand_chain, label_chain_of, walk_below, walk_row  # lazy: numba
        from .trie_kernel import ensure_compiled as ensure_walk_compiled  # lazy: numba

        def ensure_compiled() -> None:
            """Every kernel a row may run loaded once per process (outside a row's deadline)."""
            ensure_walk_compiled()
            ensure_chain_compiled()
            ensure_shapes_compiled()

        _loaded = SimpleNamespace(
            CHAIN_ROW_MIN=CHAIN_ROW_MIN,
            MAX_WALKED_SHARE=MAX_WALKED_SHARE,
            NarrowWalk=NarrowWalk,
            PreorderTrie=PreorderTrie,
            Steps=Steps,
            UNKNOWN=UNKNOWN,
            chain_row=chain_row,
            chain_table=chain_table,
            dense_ends=dense_ends,
            differing_bytes=differing_bytes,
            ensure_compiled=ensure_compiled,
            expand_chain=expand_chain,
            first_bytes=first_bytes,
            label_chain_of=label_chain_of,
            literal_row=literal_row,
            narrow_below=narrow_below,
            narrow_row=narrow_row,
            pack_tokens=pack_tokens,
            preorder=preorder,
            same_beyond_ascii=same_beyond_ascii,
            set_bits=set_bits,
            shaped_row=shaped_row,
            sibling_row=sibling_row,
            small_sorted_row=small_sorted_row,
            sorted_packed_row=sorted_packed_row,
            sorted_pairs=sorted_pairs,
            vocabulary_preorder=vocabulary_preorder,
            walk_below=walk_below,
            walk_row=walk_row,
            wide_anchor=wide_anchor,
        )
    return _loaded
