"""guide.load / guide.Model: default model, env override, vocabulary checks, packing, chat template."""

from __future__ import annotations

import pytest
import torch

import fsm
import guide
from guide.models import _PackedLinear, model_vocabulary, pack_linear_weights

from .tiny_models import tiny_llama


@pytest.fixture(scope="module")
def default_model():
    return guide.load()


def test_default_model_loads(default_model, tokenizer):
    m = default_model
    assert isinstance(m, guide.Model)
    assert m.vocabulary.size == 49152
    assert tokenizer.eos_token_id in m.vocabulary.eos_token_ids
    assert m.device.type == "cpu" and m.dtype == torch.float32
    assert m.packed  # CPU default: oneDNN-packed linears
    assert m.decode(m.encode("Hello, world!")) == "Hello, world!"


def test_packing_keeps_outputs_and_state_dict():
    hf = tiny_llama()
    ids = torch.randint(0, 49152, (2, 7))
    with torch.inference_mode():
        want = hf(ids).logits
    keys = set(hf.state_dict())
    assert pack_linear_weights(hf)
    assert all(type(m) is _PackedLinear for m in hf.modules() if isinstance(m, torch.nn.Linear))
    with torch.inference_mode():
        got = hf(ids).logits
    assert torch.allclose(got, want, atol=1e-4, rtol=1e-4)
    assert set(hf.state_dict()) == keys  # save_pretrained / state_dict keep working
    # training still uses the real weights (gradients flow)
    hf.train()
    hf(ids).logits.sum().backward()
    assert hf.model.layers[0].mlp.up_proj.weight.grad is not None


def test_from_hf_without_packing(tokenizer):
    m = guide.Model.from_hf(tiny_llama(), tokenizer, pack_weights=False)
    assert not m.packed
    assert not any(isinstance(x, _PackedLinear) for x in m.hf.modules())


def test_env_var_points_to_another_model(tmp_path, monkeypatch, tokenizer):
    d = tmp_path / "tiny"
    tiny_llama(seed=3).save_pretrained(d)
    tokenizer.save_pretrained(d)
    monkeypatch.setenv("GUIDE_DEFAULT_MODEL", str(d))
    m = guide.load(pack_weights=False)
    assert m.hf.config.num_hidden_layers == 2
    assert m.vocabulary.size == 49152


def test_env_var_to_missing_dir_is_clear(tmp_path, monkeypatch):
    monkeypatch.setenv("GUIDE_DEFAULT_MODEL", str(tmp_path / "nope"))
    with pytest.raises(FileNotFoundError, match="GUIDE_DEFAULT_MODEL"):
        guide.load()


def test_missing_path_is_clear(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="could not load a model"):
        guide.load(tmp_path / "empty")


def test_tokenizer_larger_than_model_is_rejected(tokenizer):
    with pytest.raises(fsm.VocabularyError, match="does not belong to this model"):
        model_vocabulary(tiny_llama(vocab_size=1000), tokenizer)


def test_padded_logits_width_is_the_vocabulary_size(tokenizer):
    vocab = model_vocabulary(tiny_llama(vocab_size=49152 + 64), tokenizer)
    assert vocab.size == 49152 + 64 and vocab.n_tokens == 49152
    assert vocab.token_bytes(49152 + 10) is None


def test_generation_config_eos_ids_are_added(tokenizer):
    hf = tiny_llama()
    hf.generation_config.eos_token_id = [2, 0]
    assert set(model_vocabulary(hf, tokenizer).eos_token_ids) == {0, 2}


def test_chat_template(default_model):
    text = default_model.chat("What is 2+2?", system="Be brief.")
    assert text.startswith("<|im_start|>system\nBe brief.<|im_end|>")
    assert text.endswith("<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n")


def test_encode_does_not_double_bos(default_model):
    ids = default_model.encode("Hi there")
    assert ids == default_model.tokenizer("Hi there")["input_ids"]


def test_bad_dtype_name():
    with pytest.raises(ValueError, match="unknown dtype"):
        guide.load(dtype="float8")
