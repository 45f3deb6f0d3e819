"""Loading a causal LM as a `guide.Model`: the HF model, its tokenizer, its `fsm.Vocabulary`, its chat template.

A `Model` is also the simplest `LogitsSource` (see `guide.sources`): ``model.prefill(prompts)`` opens a
batch with its own KV cache. On CPU, `load` repacks the linear layers' weights into oneDNN's blocked
layout (what ``torch.compile`` does on CPU) because small-batch decoding is dominated by those matmuls.
"""

from __future__ import annotations

import copy
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import torch
import torch.nn.functional as F

import fsm

from .sources import ModelSession

if TYPE_CHECKING:
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

# Packing doubles the memory of the linear weights (the HF copy stays for state_dict/save_pretrained),
# so it is only automatic below this many bytes of linear weights.
_AUTO_PACK_MAX_BYTES = 3 << 30


@dataclass(eq=False)
class Model:
    """A loaded causal LM ready for `guide.generate`: HF model, tokenizer, byte-exact vocabulary.

    >>> model = guide.load()                       # doctest: +SKIP
    >>> model.vocabulary.size, model.device.type   # doctest: +SKIP
    (49152, 'cpu')
    """

    hf: PreTrainedModel
    tokenizer: PreTrainedTokenizerBase
    vocabulary: fsm.Vocabulary
    name: str = ""
    packed: bool = False
    _pad_id: int = field(default=0, repr=False)

    @property
    def device(self) -> torch.device:
        return next(self.hf.parameters()).device

    @property
    def dtype(self) -> torch.dtype:
        return next(self.hf.parameters()).dtype

    @property
    def eos_token_ids(self) -> tuple[int, ...]:
        return self.vocabulary.eos_token_ids

    @property
    def pad_token_id(self) -> int:
        """The id that left-pads shorter prompts in a batch (the tokenizer's pad token, else the first EOS).

        >>> model.pad_token_id   # doctest: +SKIP
        2
        """
        return self._pad_id

    @classmethod
    def from_hf(
        cls,
        hf: PreTrainedModel,
        tokenizer: PreTrainedTokenizerBase,
        *,
        pack_weights: bool | None = None,
        name: str = "",
    ) -> Model:
        """Wrap an already loaded HF causal LM and its tokenizer (vocabularies are checked).

        >>> model = Model.from_hf(AutoModelForCausalLM.from_pretrained(d), AutoTokenizer.from_pretrained(d))  # doctest: +SKIP
        """
        hf = hf.eval()
        vocab = model_vocabulary(hf, tokenizer)
        pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else vocab.eos_token_ids[0]
        device = next(hf.parameters()).device
        if pack_weights is None:
            pack_weights = device.type == "cpu" and _linear_bytes(hf) <= _AUTO_PACK_MAX_BYTES
        packed = pack_linear_weights(hf) if pack_weights else False
        return cls(
            hf,
            tokenizer,
            vocab,
            name=name or str(getattr(hf.config, "name_or_path", "")),
            packed=packed,
            _pad_id=int(pad),
        )

    # -- text <-> tokens ----------------------------------------------------------------------------
    def encode(self, text: str) -> list[int]:
        """Token ids of a prompt string used as given (BOS added only if the tokenizer adds one
        and the text does not already start with it).

        >>> model.encode("Hello")  # doctest: +SKIP
        [19556]
        """
        bos = getattr(self.tokenizer, "bos_token", None)
        add_special = not (bos and text.startswith(bos))
        return list(self.tokenizer(text, add_special_tokens=add_special)["input_ids"])

    def decode(self, token_ids: Sequence[int]) -> str:
        """Text of token ids, byte-exact from the vocabulary (special tokens add nothing).

        >>> model.decode(model.encode("Hello"))  # doctest: +SKIP
        'Hello'
        """
        return self.vocabulary.decode(token_ids).decode("utf-8", errors="replace")

    def chat(self, messages: str | list[dict], system: str | None = None) -> str:
        """The prompt string for a chat turn, through the tokenizer's chat template.

        ``messages`` is a user message string or a list of ``{"role", "content"}`` dicts.

        >>> model.chat("What is 2+2?")  # doctest: +SKIP
        '<|im_start|>system\\n...<|im_end|>\\n<|im_start|>user\\nWhat is 2+2?<|im_end|>\\n<|im_start|>assistant\\n'
        """
        if isinstance(messages, str):
            messages = [{"role": "user", "content": messages}]
        if system is not None:
            messages = [{"role": "system", "content": system}, *messages]
        if not getattr(self.tokenizer, "chat_template", None):
            raise ValueError(f"the tokenizer of {self.name or 'this model'} has no chat template")
        return self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)

    # -- LogitsSource ---------------------------------------------------------------------------------
    def prefill(self, prompts: Sequence[Sequence[int]]) -> tuple[ModelSession, torch.Tensor]:
        """Open a batch: run the prompts (left-padded) and return the session and last-position logits.

        >>> session, logits = model.prefill([[1, 2, 3], [4, 5]])  # doctest: +SKIP
        >>> logits.shape                                          # doctest: +SKIP
        torch.Size([2, 49152])
        """
        return ModelSession.start(self.hf, prompts, self._pad_id, self.vocabulary.size)

    def truncated(self, n_layers: int) -> Model:
        """This model with only its first ``n_layers`` decoder layers: a self-speculative (layer-skip)
        draft for ``guide.generate(..., draft=...)`` with the same tokenizer, embeddings, final norm and
        head. The layers are shared, not copied (no extra memory); a draft of ``n`` of ``L`` layers
        costs about ``n / L`` of a forward pass plus the head. Needs a decoder stack at ``hf.model.layers``
        (Llama, Mistral, Qwen, SmolLM and their kin).

        >>> draft = guide.load().truncated(8)                                 # doctest: +SKIP
        >>> guide.generate(model, prompt, constraint, draft=draft)            # doctest: +SKIP
        """
        body = getattr(self.hf, "model", None)
        layers = getattr(body, "layers", None)
        if not isinstance(body, torch.nn.Module) or not isinstance(layers, torch.nn.ModuleList):
            raise ValueError(
                f"cannot truncate {type(self.hf).__name__}: it has no decoder stack at hf.model.layers"
            )
        if not isinstance(n_layers, int) or not 1 <= n_layers < len(layers):
            raise ValueError(f"n_layers must be an int in [1, {len(layers) - 1}], got {n_layers!r}")
        config = copy.deepcopy(self.hf.config)
        config.num_hidden_layers = n_layers  # the decoder loop and the KV cache read it
        if getattr(config, "layer_types", None):
            config.layer_types = list(config.layer_types)[:n_layers]
        # New containers built on the meta device (no weights allocated), then given the original's
        # submodules: the weights (packed or not) are shared, only the layer list is shorter.
        with torch.device("meta"):
            draft_body = type(body)(config)
            hf = type(self.hf)(config)
        for name, child in body.named_children():
            setattr(
                draft_body, name, torch.nn.ModuleList(list(layers)[:n_layers]) if child is layers else child
            )
        for name, child in self.hf.named_children():
            setattr(hf, name, draft_body if child is body else child)
        hf.generation_config = self.hf.generation_config
        hf.eval()
        return Model(
            hf,
            self.tokenizer,
            self.vocabulary,
            name=f"{self.name}[:{n_layers} layers]",
            packed=self.packed,
            _pad_id=self._pad_id,
        )

    def __repr__(self) -> str:
        return f"Model({self.name!r}, device={self.device}, dtype={self.dtype}, vocab={self.vocabulary.size})"


def load(
    name_or_path: str | os.PathLike | None = None,
    device: str | torch.device | None = None,
    dtype: str | torch.dtype | None = None,
    *,
    pack_weights: bool | None = None,
    warm_up: bool = True,
) -> Model:
    """Load a causal LM (local directory or hub id) as a `Model`; with no name, the embedded default.

    ``device`` defaults to CUDA when available, else CPU; ``dtype`` to float32 on CPU and bfloat16
    (float16 where unsupported) on CUDA. ``pack_weights`` (default: on for CPU models under 3 GB)
    repacks linear weights for oneDNN; it snapshots the weights, so repack after changing them.
    ``warm_up``: build the vocabulary's shared constraint tables (`fsm.warm_up`) on a background
    thread, so the first constrained request does not pay them (1.5 s for the default model's
    vocabulary; a request that comes sooner waits only for what is left).
    ``$GUIDE_DEFAULT_MODEL`` names another directory for the default.

    >>> model = load()                      # doctest: +SKIP
    >>> model.tokenizer.eos_token           # doctest: +SKIP
    '<|im_end|>'
    """
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from .default_model import default_model_dir

    path = default_model_dir() if name_or_path is None else name_or_path
    device = torch.device(device) if device is not None else _default_device()
    dtype = _resolve_dtype(dtype, device)
    local = Path(path).is_dir()
    looks_local = local or Path(path).exists() or str(path).startswith((".", "/", "~"))
    if looks_local and not (Path(path) / "config.json").is_file():
        raise FileNotFoundError(
            f"could not load a model from {str(path)!r}: not a model directory (no config.json). Pass a "
            "directory with config.json, weights and tokenizer, or set GUIDE_DEFAULT_MODEL."
        )
    try:
        tokenizer = AutoTokenizer.from_pretrained(str(path), local_files_only=local)
        hf = AutoModelForCausalLM.from_pretrained(str(path), dtype=dtype, local_files_only=local)
    except OSError as exc:
        raise FileNotFoundError(
            f"could not load a model from {str(path)!r}: {exc}. Pass a local model directory "
            "(config.json, weights, tokenizer) or set GUIDE_DEFAULT_MODEL."
        ) from None
    model = Model.from_hf(hf.to(device), tokenizer, pack_weights=pack_weights, name=str(path))
    if warm_up:
        # daemon: a process that exits before the tables are built must not wait for them
        threading.Thread(
            target=fsm.warm_up, args=(model.vocabulary,), name="guide-warm-up", daemon=True
        ).start()
    return model


def model_vocabulary(hf: PreTrainedModel, tokenizer: PreTrainedTokenizerBase) -> fsm.Vocabulary:
    """The `fsm.Vocabulary` of a tokenizer sized to the model's logits width, after checking they match.

    EOS ids are the tokenizer's plus the generation config's (chat models often end turns with another id).

    >>> model_vocabulary(hf, tokenizer).size   # doctest: +SKIP
    49152
    """
    out = hf.get_output_embeddings()
    width = int(getattr(out, "out_features", 0) or hf.config.get_text_config().vocab_size)
    n_tok = len(tokenizer)
    if n_tok > width:
        raise fsm.VocabularyError(
            f"tokenizer has {n_tok} tokens but the model's output layer has only {width} logits: "
            "the tokenizer does not belong to this model"
        )
    if width > 2 * n_tok + 1024:
        raise fsm.VocabularyError(
            f"the model's output layer has {width} logits but the tokenizer only {n_tok} tokens: "
            "the tokenizer does not belong to this model"
        )
    eos = set()
    gen_eos = getattr(getattr(hf, "generation_config", None), "eos_token_id", None)
    for e in gen_eos if isinstance(gen_eos, (list, tuple)) else [gen_eos]:
        if e is not None and 0 <= int(e) < width:
            eos.add(int(e))
    return fsm.Vocabulary.from_tokenizer(tokenizer, size=width, eos_token_ids=eos)


# -- CPU weight packing ------------------------------------------------------------------------------


class _PackedLinear(torch.nn.Linear):
    """An `nn.Linear` whose inference forward uses a oneDNN-packed copy of its weight.

    Installed by swapping ``__class__`` so parameters, hooks and ``state_dict`` stay untouched.
    """

    guide_packed_weight: torch.Tensor

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if (
            torch.is_grad_enabled() and self.weight.requires_grad
        ) or x.dtype != self.guide_packed_weight.dtype:
            return F.linear(x, self.weight, self.bias)
        return torch.ops.mkldnn._linear_pointwise(x, self.guide_packed_weight, self.bias, "none", [], "")


def pack_linear_weights(hf: torch.nn.Module, batch_hint: int = 8) -> bool:
    """Repack every `nn.Linear` of a CPU model for oneDNN; returns False (and changes nothing) when
    this torch build cannot, or the packed kernel disagrees with `F.linear` on a probe.

    >>> pack_linear_weights(model.hf)   # doctest: +SKIP
    True
    """
    linears = [m for m in hf.modules() if type(m) is torch.nn.Linear]
    if not linears or not torch.backends.mkldnn.is_available():
        return False
    w0 = linears[0].weight
    if w0.device.type != "cpu" or w0.dtype not in (torch.float32, torch.bfloat16):
        return False
    reorder = getattr(torch.ops.mkldnn, "_reorder_linear_weight", None)
    if reorder is None:
        return False
    try:
        with torch.inference_mode():
            probe = torch.randn(3, linears[0].in_features, dtype=w0.dtype)
            packed0 = reorder(w0.detach(), batch_hint)
            got = torch.ops.mkldnn._linear_pointwise(probe, packed0, linears[0].bias, "none", [], "")
            want = F.linear(probe, w0, linears[0].bias)
            tol = 1e-3 if w0.dtype == torch.float32 else 5e-2
            if not torch.allclose(got, want, rtol=tol, atol=tol * float(want.abs().max().clamp(min=1))):
                return False
            for m in linears:
                m.guide_packed_weight = reorder(m.weight.detach(), batch_hint)
                m.__class__ = _PackedLinear
    except (RuntimeError, NotImplementedError):
        for m in linears:
            if isinstance(m, _PackedLinear):
                m.__class__ = torch.nn.Linear
        return False
    return True


def _linear_bytes(hf: torch.nn.Module) -> int:
    return sum(
        m.weight.numel() * m.weight.element_size() for m in hf.modules() if isinstance(m, torch.nn.Linear)
    )


def _default_device() -> torch.device:
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def _resolve_dtype(dtype: str | torch.dtype | None, device: torch.device) -> torch.dtype:
    if isinstance(dtype, torch.dtype):
        return dtype
    if dtype is None or dtype == "auto":
        if device.type == "cuda":
            return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
        return torch.float32
    names = {
        "float32": torch.float32,
        "fp32": torch.float32,
        "float16": torch.float16,
        "fp16": torch.float16,
        "half": torch.float16,
        "bfloat16": torch.bfloat16,
        "bf16": torch.bfloat16,
    }
    if dtype not in names:
        raise ValueError(f"unknown dtype {dtype!r}; use one of {sorted(names)} or a torch.dtype")
    return names[dtype]
