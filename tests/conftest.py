"""Shared fixtures: the real SmolLM2 tokenizer and vocabulary (loaded once per session)."""

from __future__ import annotations

import importlib.util
import os

import pytest

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

# tests/vllm run in their own venv (`make test-vllm`): vLLM is an optional extra, not a dev dependency.
collect_ignore = [] if importlib.util.find_spec("vllm") else ["vllm"]


@pytest.fixture(scope="session")
def model_dir():
    from guide.default_model import default_model_dir

    return default_model_dir()


@pytest.fixture(scope="session")
def tokenizer(model_dir):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(model_dir)


@pytest.fixture(scope="session")
def vocab(tokenizer):
    import fsm

    return fsm.Vocabulary.from_tokenizer(tokenizer)


@pytest.fixture()
def tmp_cache(tmp_path, monkeypatch):
    """An isolated fsm disk cache directory, and an empty in-memory cache."""
    import fsm

    monkeypatch.setenv("GUIDE_CACHE_DIR", str(tmp_path / "cache"))
    fsm.clear_memory_cache()
    yield tmp_path / "cache"
    fsm.clear_memory_cache()
