"""Small models shared by the guide tests (the real default model is `guide.load()`)."""

from __future__ import annotations

import torch
from transformers import LlamaConfig, LlamaForCausalLM


def tiny_llama(*, vocab_size: int = 49152, seed: int = 0) -> LlamaForCausalLM:
    """A randomly initialised 2-layer Llama with SmolLM2's vocabulary size: a fast model for loop tests.

    >>> tiny_llama(seed=1).config.num_hidden_layers
    2
    """
    torch.manual_seed(seed)
    cfg = LlamaConfig(
        vocab_size=vocab_size,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=512,
        bos_token_id=1,
        eos_token_id=2,
        pad_token_id=2,
        tie_word_embeddings=True,
    )
    return LlamaForCausalLM(cfg).eval()
