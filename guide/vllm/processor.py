"""`guide.vllm.LogitsProcessor`: the library's constraints inside vLLM's V1 engine, per request.

Registered with ``LLM(model, logits_processors=[guide.vllm.LogitsProcessor])`` or
``vllm serve <model> --logits-processors guide.vllm:LogitsProcessor``; a request opts in with the
``guide_*`` arguments of `guide.vllm.arguments` in ``SamplingParams.extra_args`` (over the OpenAI
API: ``extra_body={"vllm_xargs": {...}}``). Rows without them are never touched.

What it avoids costing the server:
- **A bad or hostile spec never reaches the engine.** ``validate_params`` runs in the front end at
  admission and compiles the spec over a 257-token byte vocabulary under the processor's `fsm.Limits`:
  parse errors, unsupported keywords and budget overruns become the request's HTTP 400, while the
  engine, which every other request shares, only ever compiles specs that passed.
- **Compiles overlap the forward pass.** A new row's index is compiled on a worker thread started in
  ``update_state`` (before the forward pass) and joined in ``apply`` (after it); indexes are shared
  across requests through `fsm.compile`'s memory and disk caches, so a repeated schema costs a lookup.
- **One vectorized mask per step.** Every constrained row's matcher writes its packed bitmask into one
  `guide.masks.MaskBuffer` (pinned on CUDA), applied to the logits in one operation.
"""

from __future__ import annotations

import logging
import time
import weakref
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from vllm.v1.sample.logits_processor import BatchUpdate, MoveDirectionality
from vllm.v1.sample.logits_processor import LogitsProcessor as _VllmLogitsProcessor

import fsm

from ..masks import MaskBuffer
from .arguments import spec_from_args

if TYPE_CHECKING:
    from vllm import SamplingParams
    from vllm.config import VllmConfig

log = logging.getLogger(__name__)
KEPT_TIMINGS = 100_000  # most recent compile and mask times a processor keeps


@lru_cache(maxsize=1)
def byte_vocabulary() -> fsm.Vocabulary:
    """Every single byte as a token, plus EOS: a spec compiles over it iff its language is buildable.

    >>> byte_vocabulary().size
    257
    """
    return fsm.Vocabulary([bytes([b]) for b in range(256)] + [None], eos_token_ids=[256])


@dataclass
class Timings:
    """Where the processor's time went: each compile (on its worker thread) and each step's masks.

    >>> list(Timings().compile_seconds)
    []
    """

    # bounded: an engine lives for days and appends a mask time every step
    compile_seconds: deque[float] = field(default_factory=lambda: deque(maxlen=KEPT_TIMINGS))
    mask_seconds: deque[float] = field(default_factory=lambda: deque(maxlen=KEPT_TIMINGS))  # per apply()

    def clear(self) -> None:
        """Forget what was recorded (a benchmark clears before each run it measures)."""
        self.compile_seconds.clear()
        self.mask_seconds.clear()


@dataclass
class _Row:
    """One constrained request in the batch: its index (maybe still compiling) and its matcher."""

    index: Future
    output: list[int]  # vLLM's live list of the request's output ids (a reference, grows in place)
    matcher: Any = None
    seen: int = 0  # output ids already fed to the matcher
    failed: str | None = None


class LogitsProcessor(_VllmLogitsProcessor):
    """Mask each constrained row of vLLM's batch to the tokens its spec allows next.

    ``limits`` bounds every compile (front end and engine); subclass to change it.

    >>> llm = vllm.LLM(model_dir, logits_processors=[guide.vllm.LogitsProcessor])   # doctest: +SKIP
    >>> params = vllm.SamplingParams(extra_args=guide.vllm.request_args(Person))      # doctest: +SKIP
    """

    limits: fsm.Limits = fsm.Limits()
    compile_threads: int = 2
    # The engine builds the processor itself; with the engine in-process
    # (VLLM_ENABLE_V1_MULTIPROCESSING=0) this reaches it, e.g. for its `Timings`.
    latest: weakref.ref | None = None

    @classmethod
    def validate_params(cls, sampling_params: SamplingParams) -> None:
        """Refuse a request whose ``guide_*`` arguments are bad, with the `fsm.SpecError` message."""
        spec = spec_from_args(sampling_params.extra_args)
        if spec is not None:
            fsm.compile(spec, byte_vocabulary(), limits=cls.limits)

    def __init__(self, vllm_config: VllmConfig, device: torch.device, is_pin_memory: bool):
        # The tokenizer is read only here, once per engine process (vLLM's own is not handed over).
        from transformers import AutoTokenizer

        model = vllm_config.model_config
        tokenizer = AutoTokenizer.from_pretrained(
            model.tokenizer, revision=model.tokenizer_revision, trust_remote_code=model.trust_remote_code
        )
        width = model.get_vocab_size()
        self.vocab = fsm.Vocabulary.from_tokenizer(tokenizer, size=width, eos_token_ids=eos_ids(model))
        self.tokenizer = tokenizer  # guide_tools follow its chat template and special tokens
        self.masks = MaskBuffer(width, device, capacity=vllm_config.scheduler_config.max_num_seqs)
        self.rows: dict[int, _Row] = {}
        self._pool = ThreadPoolExecutor(self.compile_threads, thread_name_prefix="guide-compile")
        self._end = _EosOnly(self.vocab)
        self.timings = Timings()
        type(self).latest = weakref.ref(self)

    def is_argmax_invariant(self) -> bool:
        """A mask changes the argmax: greedy rows must see it too."""
        return False

    def update_state(self, batch_update: BatchUpdate | None) -> None:
        """Follow vLLM's batch: rows removed, then added (compiles start), then moved or swapped."""
        if batch_update is None:
            return
        for i in batch_update.removed:
            self.rows.pop(i, None)
        for i, params, _prompt, output in batch_update.added:
            spec = spec_from_args(params.extra_args, self.tokenizer)  # validated at admission
            if spec is None:
                self.rows.pop(i, None)
            else:
                self.rows[i] = _Row(self._pool.submit(self._compile, spec), output)
        for a, b, direction in batch_update.moved:
            row_a, row_b = self.rows.pop(a, None), self.rows.pop(b, None)
            if row_a is not None:
                self.rows[b] = row_a
            if direction == MoveDirectionality.SWAP and row_b is not None:
                self.rows[a] = row_b

    def apply(self, logits: torch.Tensor) -> torch.Tensor:
        """Mask the constrained rows of ``logits`` in place (one vectorized write for all of them)."""
        if not self.rows:
            return logits
        t = time.perf_counter()
        rows = sorted(i for i in self.rows if i < logits.shape[0])
        matchers = [self._catch_up(self.rows[i]) for i in rows]
        self.masks.apply(logits, rows, matchers)
        self.timings.mask_seconds.append(time.perf_counter() - t)
        return logits

    def _compile(self, spec: fsm.Spec) -> fsm.Index:
        t = time.perf_counter()
        index = fsm.compile(spec, self.vocab, limits=self.limits)
        self.timings.compile_seconds.append(time.perf_counter() - t)
        return index

    def _catch_up(self, row: _Row) -> Any:
        """Resolve the row's compile, feed its matcher the ids sampled since the last step, return it."""
        if row.failed is not None:
            return self._end
        try:
            if row.matcher is None:
                row.matcher = row.index.result().matcher()
            for t in row.output[row.seen :]:
                if t < 0:  # async scheduling's placeholder for an id still on its way: later
                    break
                row.matcher.advance(t)
                row.seen += 1
        except (fsm.SpecError, fsm.TokenRejected) as e:
            # A spec that compiled at admission but not over the model's vocabulary (a token-level
            # budget): the row can only end. Logged, since the request sees an empty output.
            log.error("guide.vllm: request ends early, its constraint failed in the engine: %s", e)
            row.failed = str(e)
            return self._end
        return row.matcher


class _EosOnly:
    """The mask of a row that can only end: EOS and nothing else."""

    def __init__(self, vocab: fsm.Vocabulary):
        self.bits = fsm.pack_bitmask(np.array(vocab.eos_token_ids), vocab.size)

    def fill_bitmask(self, out: np.ndarray) -> None:
        out[: len(self.bits)] = self.bits


def eos_ids(model: Any) -> list[int]:
    """EOS ids of a vLLM model config's generation config (chat models end turns with their own id).

    >>> eos_ids(llm.llm_engine.model_config)   # doctest: +SKIP
    [2]
    """
    config = model.try_get_generation_config() or {}
    eos = config.get("eos_token_id")
    if eos is None:
        return []
    return [int(e) for e in (eos if isinstance(eos, (list, tuple)) else [eos])]
