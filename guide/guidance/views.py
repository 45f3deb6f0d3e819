"""Prompt views: a source that rewrites each prompt before its model sees it (`Prompted`, the CFG
unconditional branch), and the helpers that resolve a chain of views to its model."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import torch

import fsm

from ..sources import LogitsSource, Session
from .errors import GuidanceError

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase


class PromptMemory:
    """Token ids this source encoded from text, so ``prefill`` can tell a prompt from the forced tokens
    the loop appends to it (jump-forward at the start): a chat re-rendering must only wrap the prompt."""

    def __init__(self, capacity: int = 4096):
        self.capacity = capacity
        self.seen: OrderedDict[tuple[int, ...], None] = OrderedDict()
        self.lengths: dict[int, int] = {}

    def remember(self, ids: Sequence[int]) -> None:
        key = tuple(ids)
        if key in self.seen:
            self.seen.move_to_end(key)
            return
        self.seen[key] = None
        self.lengths[len(key)] = self.lengths.get(len(key), 0) + 1
        if len(self.seen) > self.capacity:
            old, _ = self.seen.popitem(last=False)
            self.lengths[len(old)] -= 1
            if not self.lengths[len(old)]:
                del self.lengths[len(old)]

    def split(self, ids: Sequence[int]) -> tuple[list[int], list[int]]:
        """(prompt, extra): the longest remembered encoding that starts ``ids``, and the rest."""
        ids = list(ids)
        for n in sorted(self.lengths, reverse=True):
            if 0 < n <= len(ids) and tuple(ids[:n]) in self.seen:
                return ids[:n], ids[n:]
        return ids, []


class View:
    """A source that rewrites each prompt before handing it to ``source`` (generated ids pass unchanged)."""

    source: LogitsSource

    def rewrite(self, prompt: list[int], extra: list[int]) -> tuple[list[int], list[int]]:
        """(prompt, extra) as this view hands them to its source: ``prompt`` the user's prompt ids,
        ``extra`` the forced ids the loop appended to it (never rewritten)."""
        raise NotImplementedError

    # LogitsSource -----------------------------------------------------------------------------------
    @property
    def vocabulary(self) -> fsm.Vocabulary:
        return self.source.vocabulary

    @property
    def tokenizer(self) -> PreTrainedTokenizerBase:
        return self.source.tokenizer

    @property
    def device(self) -> torch.device:
        return self.source.device

    def encode(self, text: str) -> list[int]:
        ids = list(self.source.encode(text))
        self._memory.remember(ids)
        return ids

    def prefill(self, prompts: Sequence[Sequence[int]]) -> tuple[Session, torch.Tensor]:
        root, formats = resolve(self)
        return root.prefill([apply_formats(formats, *self._memory.split(p)) for p in prompts])

    def decode(self, token_ids: Sequence[int]) -> str:
        return self.vocabulary.decode(token_ids).decode("utf-8", errors="replace")


class Prompted(View):
    """``source`` with a fixed prefix before every prompt, or every prompt rendered as a chat turn.

    * ``prefix``: text tokenized alone (or token ids), put before each prompt's ids;
    * ``system`` (without ``chat``): a system turn through the chat template, put before each prompt;
    * ``chat=True``: each prompt is decoded and re-rendered as the user turn of the source's chat
      template (with ``system`` if given), ending with the assistant header — a tuned expert's own
      formatting while the base sees the raw prompt (proxy-tuning).

    >>> model = guide.load()                                                             # doctest: +SKIP
    >>> happy = Prompted(model, "The following text is joyful and positive:\\n")       # doctest: +SKIP
    >>> guide.generate(happy, "My day was", max_new_tokens=8)[0].text                    # doctest: +SKIP
    """

    def __init__(
        self,
        source: LogitsSource,
        prefix: str | Sequence[int] | None = None,
        *,
        system: str | None = None,
        chat: bool = False,
    ):
        self.source = source
        self.chat_mode = bool(chat)
        self.system = system
        self._memory = PromptMemory()
        if chat and prefix is not None:
            raise GuidanceError("Prompted: give either a prefix or chat=True (put instructions in system=)")
        if prefix is not None and system is not None:
            raise GuidanceError("Prompted: give either a text prefix or a system message, not both")
        if prefix is None and system is None and not chat:
            raise GuidanceError("Prompted needs a prefix, a system message or chat=True")
        ids: list[int] = []
        if isinstance(prefix, str):
            if not prefix:
                raise GuidanceError("Prompted: the prefix is empty")
            ids = list(source.encode(prefix))
        elif prefix is not None:
            ids = [int(t) for t in prefix]
            size = source.vocabulary.size
            bad = [t for t in ids if not 0 <= t < size]
            if bad or not ids:
                raise GuidanceError(
                    f"Prompted: prefix token ids must be non-empty and in [0, {size}), got {bad[:5]}"
                )
        elif system is not None and not chat:
            ids = list(source.encode(render_chat(source, [{"role": "system", "content": system}], False)))
        self.prefix_ids = ids
        bos = getattr(source.tokenizer, "bos_token_id", None)
        # With a tokenizer that opens every encoding with BOS, the prefix already carries it and the
        # prompt's own BOS would be a second one mid-sequence. (Where BOS is not added automatically,
        # e.g. SmolLM2's <|im_start|>, a leading BOS in the prompt is content and stays.)
        auto_bos = bos is not None and list(source.tokenizer("a")["input_ids"])[:1] == [bos]
        self._drop_bos = bos if auto_bos and ids and ids[0] == bos else None

    def rewrite(self, prompt: list[int], extra: list[int]) -> tuple[list[int], list[int]]:
        if self.chat_mode:
            text = self.source.tokenizer.decode(
                prompt, skip_special_tokens=False, clean_up_tokenization_spaces=False
            )
            messages = [{"role": "user", "content": text}]
            if self.system is not None:
                messages.insert(0, {"role": "system", "content": self.system})
            return list(self.source.encode(render_chat(self.source, messages, True))), extra
        if self._drop_bos is not None and prompt and prompt[0] == self._drop_bos:
            prompt = prompt[1:]
        return self.prefix_ids + prompt, extra

    def chat(self, *args: Any, **kwargs: Any) -> str:
        return self.source.chat(*args, **kwargs)

    def __repr__(self) -> str:
        what = "chat" if self.chat_mode else f"prefix={len(self.prefix_ids)} tokens"
        return f"Prompted({self.source!r}, {what})"


class Unconditional(View):
    """The CFG unconditional branch: the prompt's last token (or a fixed negative prompt), not the prompt."""

    def __init__(self, source: LogitsSource, negative_ids: list[int] | None):
        self.source = source
        self.negative_ids = negative_ids
        self._memory = PromptMemory()

    def rewrite(self, prompt: list[int], extra: list[int]) -> tuple[list[int], list[int]]:
        return (list(self.negative_ids) if self.negative_ids else prompt[-1:]), extra


def render_chat(source: LogitsSource, messages: list[dict], generation_prompt: bool) -> str:
    tok = source.tokenizer
    if not getattr(tok, "chat_template", None):
        raise GuidanceError(f"Prompted: the tokenizer of {source!r} has no chat template (use a text prefix)")
    return tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=generation_prompt)


def resolve(source: LogitsSource) -> tuple[LogitsSource, list[Callable]]:
    """The innermost source under a chain of views, and the views' formats, outermost first."""
    formats = []
    while isinstance(source, View):
        formats.append(source.rewrite)
        source = source.source
    return source, formats


def apply_formats(formats: list[Callable], prompt: list[int], extra: list[int]) -> list[int]:
    for f in formats:
        prompt, extra = f(prompt, extra)
    return list(prompt) + list(extra)
