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
    ['MAX_WALKED_SHARE', 'PreorderTrie', 'Steps']
    """
    global _loaded
    if _loaded is None:
        # lazy: numba must not be loaded by `import fsm` (the module docstring says why)
        from .body_rows import shaped_row, wide_anchor  # lazy: numba
        from .literal_rows import literal_row  # lazy: numba
        from .preorder import PreorderTrie, preorder, vocabulary_preorder  # lazy: numba
        from .row_sort import (
            pack_tokens,
            set_bits,
            small_sorted_row,
            sorted_packed_row,
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
        from .trie_kernel import ensure_compiled, walk_below, walk_row  # lazy: numba

        _loaded = SimpleNamespace(
            MAX_WALKED_SHARE=MAX_WALKED_SHARE,
            PreorderTrie=PreorderTrie,
            Steps=Steps,
            dense_ends=dense_ends,
            differing_bytes=differing_bytes,
            ensure_compiled=ensure_compiled,
            first_bytes=first_bytes,
            literal_row=literal_row,
            pack_tokens=pack_tokens,
            preorder=preorder,
            same_beyond_ascii=same_beyond_ascii,
            set_bits=set_bits,
            shaped_row=shaped_row,
            sibling_row=sibling_row,
            small_sorted_row=small_sorted_row,
            sorted_packed_row=sorted_packed_row,
            vocabulary_preorder=vocabulary_preorder,
            walk_below=walk_below,
            walk_row=walk_row,
            wide_anchor=wide_anchor,
        )
    return _loaded
