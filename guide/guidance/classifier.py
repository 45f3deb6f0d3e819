"""FUDGE-style classifier guidance (`ClassifierGuidance`): top-k candidates rescored by a classifier's
``log P(attribute | prefix + token)``."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import torch

import fsm

from ..masks import NEG_INF
from ..sources import LogitsSource
from .combination import Combination, finite
from .errors import GuidanceError
from .session import GuidedSession

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase


class ClassifierGuidance(Combination):
    """FUDGE-style classifier guidance: for the ``top_k`` most likely tokens the constraint allows,
    ``score = logsoftmax(z)_k + weight * log P(attr | prefix ⊕ candidate)``; all other tokens ``-inf``.

    ``classifier`` is either a callable taking a list of texts (``input="text"``) or of token-id lists
    (``input="ids"``) and returning one log-probability per item (or an ``(N, C)`` array with ``label``
    the column), or a Hugging Face sequence-classification model with ``label`` (name or index) and
    its ``tokenizer`` (omit it when the classifier shares the generator's tokenizer: ids are passed).
    The prefix is the generated text (``include_prompt=True`` prepends the prompt). Every candidate of
    every row goes through the classifier in one batch per step. ``weight=0`` is exactly the model.

    >>> def positive(texts): return [-3.0 * sum(w in t for w in ("bad", "awful")) for t in texts]
    >>> ClassifierGuidance(model, positive, weight=1.0, top_k=20)   # doctest: +SKIP
    """

    _tracks_ids = True

    def __init__(
        self,
        model: LogitsSource,
        classifier: Callable[[list[Any]], Any] | torch.nn.Module,
        weight: float = 1.0,
        top_k: int = 20,
        *,
        label: str | int | None = None,
        tokenizer: PreTrainedTokenizerBase | None = None,
        input: str = "text",
        include_prompt: bool = False,
    ):
        super().__init__(model, {}, True)
        self.model = model
        self.weight = finite("weight", weight)
        if not isinstance(top_k, int) or isinstance(top_k, bool) or top_k < 1:
            raise GuidanceError(f"top_k must be an int >= 1, got {top_k!r}")
        if input not in ("text", "ids"):
            raise GuidanceError(f"input must be 'text' or 'ids', got {input!r}")
        self.top_k = top_k
        self.include_prompt = bool(include_prompt)
        self.classify = _as_classifier(classifier, label, tokenizer, input, model.vocabulary)
        self._needs_rescore = self.weight != 0

    def combine(self, parts: list[torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor | None]:
        return parts[0], None

    def truncate(
        self, logits: torch.Tensor, state: torch.Tensor | None, session: GuidedSession
    ) -> torch.Tensor:
        logp = torch.log_softmax(logits, dim=-1)
        k = min(self.top_k, logits.shape[-1])
        vals, idx = logp.topk(k, dim=-1)
        valid = vals != NEG_INF
        cand_rows, cand_cols = valid.nonzero(as_tuple=True)
        assert session.ids is not None and session.starts is not None
        heads = [
            ids if self.include_prompt else ids[s:]
            for ids, s in zip(session.ids, session.starts, strict=True)
        ]
        seqs = [
            heads[r] + [t]
            for r, t in zip(cand_rows.tolist(), idx[cand_rows, cand_cols].tolist(), strict=True)
        ]
        scores = self.classify(seqs).to(logits.device)
        if scores.shape != (len(seqs),):
            raise GuidanceError(f"the classifier returned shape {tuple(scores.shape)} for {len(seqs)} inputs")
        if bool(torch.isnan(scores).any()) or bool((scores == float("inf")).any()):
            raise GuidanceError("the classifier returned NaN or +inf log-probabilities")
        total = torch.full_like(vals, NEG_INF)
        total[cand_rows, cand_cols] = vals[cand_rows, cand_cols] + self.weight * scores
        return torch.full_like(logits, NEG_INF).scatter_(1, idx, total)


def _as_classifier(
    classifier: Callable[[list[Any]], Any] | torch.nn.Module,
    label: str | int | None,
    tokenizer: PreTrainedTokenizerBase | None,
    input: str,
    vocab: fsm.Vocabulary,
) -> Callable[[list[list[int]]], torch.Tensor]:
    """A function from token-id sequences to a float tensor of log P(attr | sequence)."""
    config = getattr(classifier, "config", None)
    if isinstance(classifier, torch.nn.Module) and config is not None and hasattr(config, "id2label"):
        return _hf_classifier(classifier, label, tokenizer, vocab)
    if not callable(classifier):
        raise GuidanceError("classifier must be a callable or a Hugging Face sequence-classification model")

    def to_text(ids: list[int]) -> str:
        return vocab.decode(ids).decode("utf-8", errors="replace")

    def run(seqs: list[list[int]]) -> torch.Tensor:
        out = classifier([to_text(s) for s in seqs] if input == "text" else seqs)
        scores = torch.as_tensor(
            out.detach().cpu() if isinstance(out, torch.Tensor) else out, dtype=torch.float32
        )
        if scores.dim() == 2 and label is not None:
            if not isinstance(label, int):
                raise GuidanceError("label must be a column index when the classifier returns a matrix")
            scores = scores[:, label]
        return scores.reshape(-1) if scores.dim() == 2 and scores.shape[1] == 1 else scores

    return run


def _hf_classifier(
    model: torch.nn.Module,
    label: str | int | None,
    tokenizer: PreTrainedTokenizerBase | None,
    vocab: fsm.Vocabulary,
) -> Callable[[list[list[int]]], torch.Tensor]:
    config = model.config
    if label is None:
        raise GuidanceError("a Hugging Face classifier needs label= (a name in config.id2label or an index)")
    if isinstance(label, str):
        names = {str(v): int(k) for k, v in config.id2label.items()}
        if label not in names:
            raise GuidanceError(f"label {label!r} is not one of the classifier's labels {sorted(names)}")
        column = names[label]
    else:
        column = int(label)
    n_labels = int(getattr(config, "num_labels", len(config.id2label)))
    if not 0 <= column < n_labels:
        raise GuidanceError(f"label index {column} is outside the classifier's {n_labels} labels")
    model = model.eval()
    device = next(model.parameters()).device
    if tokenizer is None:
        pad = getattr(config, "pad_token_id", None)
        if pad is None:
            raise GuidanceError("the classifier's config has no pad_token_id; set it, or pass its tokenizer=")
        if int(getattr(config, "vocab_size", vocab.n_tokens)) < vocab.n_tokens:
            raise GuidanceError(
                "the classifier's vocabulary is smaller than the generator's; pass its tokenizer="
            )
    elif tokenizer.pad_token is None:
        raise GuidanceError("the classifier's tokenizer has no pad token; set tokenizer.pad_token first")

    def run(seqs: list[list[int]]) -> torch.Tensor:
        if tokenizer is not None:
            texts = [vocab.decode(s).decode("utf-8", errors="replace") for s in seqs]
            batch = tokenizer(texts, padding=True, return_tensors="pt")
            ids, mask = batch["input_ids"], batch["attention_mask"]
        else:
            width = max(1, max(len(s) for s in seqs))
            ids = torch.full((len(seqs), width), int(pad), dtype=torch.long)
            mask = torch.zeros((len(seqs), width), dtype=torch.long)
            for r, s in enumerate(seqs):
                ids[r, : len(s)] = torch.as_tensor(s, dtype=torch.long)
                mask[r, : len(s)] = 1
        with torch.inference_mode():
            out = model(input_ids=ids.to(device), attention_mask=mask.to(device))
        return torch.log_softmax(out.logits.float(), dim=-1)[:, column].cpu()

    return run
