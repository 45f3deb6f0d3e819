"""The ``vllm.general_plugins`` entry point that makes ``"guide"`` a structured-output backend of vLLM.

vLLM 0.32 picks its structured-output backend from a fixed list (an open RFC asks for a registry),
so `register` — which vLLM calls in every process it starts (front end, engine core, workers) —
widens that list in the three places that hold it, only for the vLLM minor it was written against:

1. ``StructuredOutputsConfig.backend``, a ``Literal`` validated by pydantic: ``"guide"`` is added
   and the config class rebuilt, so ``--structured-outputs-config.backend guide`` and
   ``LLM(structured_outputs_config={"backend": "guide"})`` are accepted;
2. ``SamplingParams._validate_structured_outputs`` (the front end's admission check): for the
   ``guide`` backend a request is checked by `guide.vllm.backend.check` (a bad spec is the request's
   HTTP 400 with the `fsm.SpecError` message); other backends run vLLM's own code;
3. ``StructuredOutputManager.grammar_init`` (the engine): builds `guide.vllm.backend.GuideBackend`
   the first time the ``guide`` backend is needed, then runs vLLM's own code, which uses it.

Any other vLLM version: nothing is patched, an error is logged and the server runs without the
backend (asking for ``"guide"`` is then vLLM's own "invalid backend" error).
"""

from __future__ import annotations

import logging
import typing
from typing import Any

import fsm

log = logging.getLogger(__name__)

NAME = "guide"
TESTED = "0.32."  # the vLLM minor whose private dispatch the patches below follow
_registered = False


def register() -> bool:
    """Make ``"guide"`` a structured-output backend; False (and an error logged) on another vLLM.

    Idempotent: vLLM calls it once per process, `structured_outputs_config` calls it again.

    >>> register()   # doctest: +SKIP
    True
    """
    global _registered
    if _registered:
        return True
    import vllm  # the plugin runs only inside vLLM; this module is imported by its entry point

    if not vllm.__version__.startswith(TESTED):
        log.error(
            "guide.vllm: the 'guide' structured-output backend was tested with vLLM %sx and is not "
            "installed into vLLM %s; use guide.vllm.LogitsProcessor (the public logits-processor API) "
            "or a vLLM %sx",
            TESTED,
            vllm.__version__,
            TESTED,
        )
        return False
    _allow_in_config()
    _validate_in_front_end()
    _build_in_engine()
    _registered = True
    return True


def structured_outputs_config(**options: Any) -> Any:
    """vLLM's ``StructuredOutputsConfig`` with the ``guide`` backend, for ``LLM(...)`` offline.

    ``LLM`` validates its config before vLLM loads its plugins, so offline code registers first —
    this does both.

    >>> llm = LLM(model_dir, structured_outputs_config=structured_outputs_config())   # doctest: +SKIP
    """
    if not register():
        raise RuntimeError(f"the 'guide' backend needs vLLM {TESTED}x (see the log)")
    from vllm.config.structured_outputs import StructuredOutputsConfig

    return StructuredOutputsConfig(backend=NAME, **options)


# The imports below are inside functions: they run after the version check, since another vLLM
# may lay these modules out differently (the plugin must log, not fail to import).


def _allow_in_config() -> None:
    from pydantic.dataclasses import rebuild_dataclass
    from vllm.config import structured_outputs as config

    cls = config.StructuredOutputsConfig
    names = typing.get_args(config.StructuredOutputsBackend)
    if NAME in names:
        return
    widened = typing.Literal[(*names, NAME)]  # type: ignore[valid-type]
    cls.__annotations__["backend"] = widened
    cls.__dataclass_fields__["backend"].type = widened
    cls.__pydantic_fields__["backend"].annotation = widened
    rebuild_dataclass(cls, force=True)


def _validate_in_front_end() -> None:
    from vllm.exceptions import VLLMValidationError
    from vllm.sampling_params import SamplingParams
    from vllm.v1.structured_output.request import get_structured_output_key

    from .backend import GuideBackend, check

    theirs = SamplingParams._validate_structured_outputs

    def validate(self: SamplingParams, model_config: Any, config: Any, tokenizer: Any) -> None:
        if config is None or config.backend != NAME or self.structured_outputs is None:
            return theirs(self, model_config, config, tokenizer)
        if tokenizer is None:
            raise VLLMValidationError("structured outputs need a tokenizer (skip_tokenizer_init is set)")
        kind, text = get_structured_output_key(self.structured_outputs)
        try:
            check(kind, text, limits=GuideBackend.limits)
        except fsm.SpecError as e:  # RequestArgumentError (a bad choice list) included
            raise VLLMValidationError(f"structured_outputs.{kind.name.lower()}: {e}") from None
        self.structured_outputs._backend = NAME  # what vLLM records for the backend that checked it
        self.structured_outputs.__post_init__()

    SamplingParams._validate_structured_outputs = validate


def _build_in_engine() -> None:
    from vllm.v1.structured_output import StructuredOutputManager

    from .backend import GuideBackend

    theirs = StructuredOutputManager.grammar_init

    def grammar_init(self: StructuredOutputManager, request: Any) -> None:
        config = self.vllm_config
        if (
            self.backend is None
            and request.structured_output_request is not None
            and config.structured_outputs_config.backend == NAME
        ):
            self.backend = GuideBackend(
                config,
                tokenizer=self.tokenizer,
                vocab_size=config.model_config.get_vocab_size(),
            )
        theirs(self, request)

    StructuredOutputManager.grammar_init = grammar_init
