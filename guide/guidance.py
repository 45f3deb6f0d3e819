"""Guidance as logits sources: steer one model with others or with a classifier, under any constraint.

Each class here is a `LogitsSource` (see `guide.sources`), so ``guide.generate`` masks, samples and
batches it exactly as it does a plain `Model`:

* `Prompted(model, prefix)` — the model with a fixed prefix (text, or a system turn through the chat
  template) before every prompt, or with every prompt re-rendered through its chat template; one small
  model can so serve as its own expert and anti-expert.
* `DExperts` (Liu et al. 2021): ``top_p_filter(z_base) + alpha * (z_expert - z_antiexpert)``.
* `ProxyTuning` (Liu et al. 2024): ``z_base + alpha * (z_expert - z_antiexpert)``.
* `ClassifierFreeGuidance` (Sanchez et al. 2023): ``scale * (ls(z_cond) - ls(z_uncond)) + ls(z_uncond)``.
* `ClassifierGuidance` (FUDGE, Yang & Klein 2021): top-k candidates rescored by ``log P(attr | prefix+tok)``.
* `Contrastive` (Li et al. 2023): ``ls(z_exp) - beta * ls(z_ama)`` on the plausibility head.

Participants that wrap the same model object (``Prompted(m, ...)``, ``m`` itself, the CFG branches) are
stacked into one batch with one KV cache, so three participants on one model cost one wider forward
pass per step, not three. Participants must share a vocabulary (`VocabularyMismatch` otherwise); a
padded logits width is truncated to the shared part.

Truncations (DExperts' nucleus on the base, the contrastive plausibility head, FUDGE's top-k) must see
the constraint: a nucleus cut before the mask can remove every token the grammar allows. So sessions
return the untruncated combination from ``decode`` and truncate in ``rescore(masked_logits)``, which
the generate loop calls after masking (tokens the mask removed are ``-inf`` there; the combination
itself is always finite). `rescore_masked` is that hook for loops that hold a session.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import torch

import fsm

from .sources import LogitsSource, Session

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

NEG_INF = float("-inf")

# Largest top-k tried before a full sort when cutting a nucleus: the nucleus almost always lies inside.
_NUCLEUS_PROBE = 512


class GuidanceError(ValueError):
    """A guidance source built with bad arguments, or driven by a loop that skips its rescoring.

    >>> isinstance(GuidanceError("x"), ValueError)
    True
    """


class VocabularyMismatch(GuidanceError, fsm.VocabularyError):
    """Participants of a guidance combination whose vocabularies differ on the ids they share."""


# -- prompt views ------------------------------------------------------------------------------------


class _PromptMemory:
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


class _View:
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
        root, formats = _resolve(self)
        return root.prefill([_apply_formats(formats, *self._memory.split(p)) for p in prompts])

    def decode(self, token_ids: Sequence[int]) -> str:
        return self.vocabulary.decode(token_ids).decode("utf-8", errors="replace")


class Prompted(_View):
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
        self._memory = _PromptMemory()
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
            ids = list(source.encode(_render_chat(source, [{"role": "system", "content": system}], False)))
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
            return list(self.source.encode(_render_chat(self.source, messages, True))), extra
        if self._drop_bos is not None and prompt and prompt[0] == self._drop_bos:
            prompt = prompt[1:]
        return self.prefix_ids + prompt, extra

    def chat(self, *args: Any, **kwargs: Any) -> str:
        return self.source.chat(*args, **kwargs)

    def __repr__(self) -> str:
        what = "chat" if self.chat_mode else f"prefix={len(self.prefix_ids)} tokens"
        return f"Prompted({self.source!r}, {what})"


class _Unconditional(_View):
    """The CFG unconditional branch: the prompt's last token (or a fixed negative prompt), not the prompt."""

    def __init__(self, source: LogitsSource, negative_ids: list[int] | None):
        self.source = source
        self.negative_ids = negative_ids
        self._memory = _PromptMemory()

    def rewrite(self, prompt: list[int], extra: list[int]) -> tuple[list[int], list[int]]:
        return (list(self.negative_ids) if self.negative_ids else prompt[-1:]), extra


def _render_chat(source: LogitsSource, messages: list[dict], generation_prompt: bool) -> str:
    tok = source.tokenizer
    if not getattr(tok, "chat_template", None):
        raise GuidanceError(f"Prompted: the tokenizer of {source!r} has no chat template (use a text prefix)")
    return tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=generation_prompt)


def _resolve(source: LogitsSource) -> tuple[LogitsSource, list[Callable]]:
    """The innermost source under a chain of views, and the views' formats, outermost first."""
    formats = []
    while isinstance(source, _View):
        formats.append(source.rewrite)
        source = source.source
    return source, formats


def _apply_formats(formats: list[Callable], prompt: list[int], extra: list[int]) -> list[int]:
    for f in formats:
        prompt, extra = f(prompt, extra)
    return list(prompt) + list(extra)


# -- shared vocabulary -------------------------------------------------------------------------------


def shared_width(base: fsm.Vocabulary, other: fsm.Vocabulary, role: str = "participant") -> int:
    """Logits columns two participants can combine: ``base.size`` when the fingerprints agree, else the
    common width after checking every shared token id spells the same bytes.

    >>> v = fsm.Vocabulary([b"a", b"b", None], eos_token_ids=[2])
    >>> shared_width(v, fsm.Vocabulary([b"a", b"b", None], eos_token_ids=[2], size=8))
    3
    """
    if other.fingerprint == base.fingerprint:
        return base.size
    n = min(base.n_tokens, other.n_tokens)
    a, b = base.tokens, other.tokens
    if a[:n] != b[:n]:
        i = next(i for i in range(n) if a[i] != b[i])
        raise VocabularyMismatch(
            f"the {role} does not share the base's vocabulary: token id {i} is {a[i]!r} for the base and "
            f"{b[i]!r} for the {role}; guidance needs models with the same tokenizer"
        )
    if any(t is not None for t in a[other.n_tokens :]):
        raise VocabularyMismatch(
            f"the base has text tokens beyond the {role}'s {other.n_tokens} tokens; "
            f"the {role} cannot score them"
        )
    width = min(base.size, other.size)
    late = [e for e in base.eos_token_ids if e >= width]
    if late:
        raise VocabularyMismatch(f"the base's EOS ids {late} are beyond the {role}'s {other.size} logits")
    return width


# -- stacked participant sessions --------------------------------------------------------------------


class _Stack:
    """The sessions of a combination's participants. Participants that resolve to the same model object
    share one batch (their formatted prompts stacked), so one forward pass serves all of them."""

    def __init__(self, groups: list[tuple[Session, list[int]]], n_parts: int, n_rows: int):
        self.groups = groups  # (session, participant indices stacked in it, in order)
        self.n_parts = n_parts
        self.n = n_rows

    @classmethod
    def open(
        cls, participants: Sequence[LogitsSource], pairs: list[tuple[list[int], list[int]]], fuse: bool
    ) -> tuple[_Stack, list[torch.Tensor]]:
        order: dict[int, list[int]] = {}
        roots = []
        for i, p in enumerate(participants):
            root, formats = _resolve(p)
            roots.append((root, formats))
            order.setdefault(id(root) if fuse else i, []).append(i)
        parts: list[torch.Tensor | None] = [None] * len(participants)
        groups = []
        n = len(pairs)
        for members in order.values():
            root = roots[members[0]][0]
            prompts = [_apply_formats(roots[i][1], *pair) for i in members for pair in pairs]
            session, logits = root.prefill(prompts)
            for j, i in enumerate(members):
                parts[i] = logits[j * n : (j + 1) * n]
            groups.append((session, members))
        return cls(groups, len(participants), n), parts  # type: ignore[return-value]

    def decode(self, tokens: torch.Tensor, lengths: torch.Tensor | None) -> list[torch.Tensor]:
        parts: list[torch.Tensor | None] = [None] * self.n_parts
        n = self.n
        for session, members in self.groups:
            m = len(members)
            t = tokens.repeat(m, 1) if m > 1 else tokens
            ln = None if lengths is None else (lengths.repeat(m) if m > 1 else lengths)
            logits = session.decode(t, ln)
            for j, i in enumerate(members):
                parts[i] = logits[j * n : (j + 1) * n]
        return parts  # type: ignore[return-value]

    def keep(self, rows: torch.Tensor) -> None:
        n = self.n
        for session, members in self.groups:
            m = len(members)
            session.keep(torch.cat([rows + j * n for j in range(m)]) if m > 1 else rows)
        self.n = int(rows.shape[0])


# -- the combination base --------------------------------------------------------------------------


class _Combination:
    """Shared machinery: participants, vocabulary checks, prompt memory, sessions."""

    _needs_rescore = False  # whether sessions must get `rescore` after the mask
    _tracks_ids = False  # whether sessions keep each row's token ids (for a classifier)

    def __init__(self, base: LogitsSource, others: dict[str, LogitsSource], fuse: bool):
        self._base = base
        self.fuse = bool(fuse)
        self.vocabulary = base.vocabulary
        self.tokenizer = base.tokenizer
        width = base.vocabulary.size
        for role, src in others.items():
            _check_source(src, role)
            width = min(width, shared_width(base.vocabulary, src.vocabulary, role))
        _check_source(base, "base")
        self._width = width
        self._memory = _PromptMemory()
        self._participants: list[LogitsSource] = [base]

    @property
    def device(self) -> torch.device:
        return self._base.device

    @property
    def needs_rescore(self) -> bool:
        """Whether this method truncates after the constraint mask (its sessions' ``rescore`` must run).

        >>> DExperts(model, pos, neg, base_top_p=0.9).needs_rescore   # doctest: +SKIP
        True
        """
        return self._needs_rescore

    @property
    def tracks_ids(self) -> bool:
        """Whether its sessions keep each row's token ids (a classifier scores the text so far)."""
        return self._tracks_ids

    @property
    def width(self) -> int:
        """The logits columns every participant scores (the shared part of their vocabularies)."""
        return self._width

    def encode(self, text: str) -> list[int]:
        """Token ids of a prompt string, as the base encodes it.

        >>> source.encode("Hello")   # doctest: +SKIP
        [19556]
        """
        ids = list(self._base.encode(text))
        self._memory.remember(ids)
        return ids

    def decode(self, token_ids: Sequence[int]) -> str:
        return self.vocabulary.decode(token_ids).decode("utf-8", errors="replace")

    def chat(self, *args: Any, **kwargs: Any) -> str:
        return self._base.chat(*args, **kwargs)

    def prefill(self, prompts: Sequence[Sequence[int]]) -> tuple[GuidedSession, torch.Tensor]:
        """Open a batch on every participant; return the session and the combined first logits.

        >>> session, logits = source.prefill([[1, 2, 3], [4, 5]])   # doctest: +SKIP
        """
        pairs = [self._memory.split(p) for p in prompts]
        stack, parts = _Stack.open(self._participants, pairs, self.fuse)
        return GuidedSession.start(self, stack, pairs, parts)

    def combine(self, parts: list[torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor | None]:
        """(combined logits, state for `truncate`) from each participant's logits, in participant order."""
        raise NotImplementedError

    def truncate(
        self, logits: torch.Tensor, state: torch.Tensor | None, session: GuidedSession
    ) -> torch.Tensor:
        """The method's cut of the masked combined ``logits`` (``-inf`` = removed by the constraint)."""
        return logits


class GuidedSession:
    """One open batch of a guidance source: the participants' sessions plus what ``rescore`` needs.

    ``decode``/``keep`` follow the `Session` protocol; ``rescore(masked_logits)`` applies the method's
    truncation after the constraint mask and must be called once per step before sampling when the
    source needs it (`rescore_masked`).
    """

    def __init__(self, source: _Combination, stack: _Stack, pairs: list[tuple[list[int], list[int]]]):
        self.source = source
        self.stack = stack
        self.state: torch.Tensor | None = (
            None  # what the method's `combine` left for its `truncate` (a tensor or None)
        )
        self.pending = False
        self.ids: list[list[int]] | None = None
        self.starts: list[int] | None = None
        if source.tracks_ids:
            self.ids = [p + e for p, e in pairs]
            self.starts = [len(p) for p, _ in pairs]

    @classmethod
    def start(
        cls,
        source: _Combination,
        stack: _Stack,
        pairs: list[tuple[list[int], list[int]]],
        parts: list[torch.Tensor],
    ) -> tuple[GuidedSession, torch.Tensor]:
        """A session over freshly prefilled participants, and the combination of their first logits."""
        session = cls(source, stack, pairs)
        return session, session.combine_parts(parts)

    @property
    def n_rows(self) -> int:
        return self.stack.n

    def decode(self, tokens: torch.Tensor, lengths: torch.Tensor | None = None) -> torch.Tensor:
        self._check_rescored()
        parts = self.stack.decode(tokens, lengths)
        if self.ids is not None:
            rows = tokens.tolist()
            lens = lengths.tolist() if lengths is not None else [tokens.shape[1]] * len(rows)
            for r, (toks, k) in enumerate(zip(rows, lens, strict=True)):
                self.ids[r].extend(toks[:k])
        return self.combine_parts(parts)

    def keep(self, rows: torch.Tensor) -> None:
        self._check_rescored()
        self.stack.keep(rows)
        if self.ids is not None:
            keep = rows.tolist()
            self.ids = [self.ids[i] for i in keep]
            self.starts = [self.starts[i] for i in keep]  # type: ignore[index]
        self.state = None

    def rescore(self, logits: torch.Tensor) -> torch.Tensor:
        """The method's truncation of the masked combined logits (``-inf`` = removed by the constraint)."""
        self.pending = False
        if not self.source.needs_rescore:
            return logits
        return self.source.truncate(logits, self.state, self)

    def combine_parts(self, parts: list[torch.Tensor]) -> torch.Tensor:
        """The combined logits of one step from each participant's (marks ``rescore`` as due if needed)."""
        width, device = self.source.width, self.source.device
        parts = [p[:, :width].to(device) if p.shape[-1] != width or p.device != device else p for p in parts]
        logits, self.state = self.source.combine(parts)
        size = self.source.vocabulary.size
        if logits.shape[-1] < size:  # ids some participant cannot score (never text: checked) are banned
            logits = torch.cat(
                [logits, logits.new_full((logits.shape[0], size - logits.shape[-1]), NEG_INF)], -1
            )
        self.pending = self.source.needs_rescore
        return logits

    def _check_rescored(self) -> None:
        if self.pending:
            raise GuidanceError(
                f"{type(self.source).__name__} truncates after the constraint mask, but the generate loop "
                "sampled without calling session.rescore(logits); use guide.generate, or call "
                "guide.guidance.rescore_masked(session, logits) after masking"
            )


def rescore_masked(session: Session, logits: torch.Tensor) -> torch.Tensor:
    """The generate loop's hook: after the constraint mask, before sampling, let a guidance session
    truncate (nucleus, plausibility head, classifier top-k); other sessions pass through.

    >>> logits = rescore_masked(session, masked_logits)   # doctest: +SKIP
    """
    rescore = getattr(session, "rescore", None)
    return logits if rescore is None else rescore(logits)


def _check_source(src: object, role: str) -> None:
    for attr in ("vocabulary", "tokenizer", "prefill", "encode"):
        if not hasattr(src, attr):
            raise GuidanceError(
                f"the {role} must be a LogitsSource (a guide.Model, Prompted…); it has no {attr!r}"
            )


def _finite(name: str, value: float) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise GuidanceError(f"{name} must be a number, got {value!r}") from None
    if not math.isfinite(v):
        raise GuidanceError(f"{name} must be finite, got {value!r}")
    return v


# -- truncations ------------------------------------------------------------------------------------


def nucleus_filter(logits: torch.Tensor, top_p: float) -> torch.Tensor:
    """Keep the smallest set of top tokens whose probability reaches ``top_p`` (the first token that
    crosses ``p`` included; DExperts' filter); the rest become ``-inf``. A new tensor.

    >>> nucleus_filter(torch.log(torch.tensor([[0.5, 0.3, 0.2]])), 0.6).isfinite().tolist()
    [[True, True, False]]
    """
    if top_p >= 1:
        return logits.clone()
    _n, v = logits.shape
    k = min(v, _NUCLEUS_PROBE)
    lse = torch.logsumexp(logits, dim=-1, keepdim=True)
    vals, idx = logits.topk(k, dim=-1)
    cum = (vals - lse).exp().cumsum(dim=-1)
    done = cum[:, -1] > top_p
    if k < v and not bool(done.all()):
        vals, idx = logits.sort(dim=-1, descending=True)
        cum = (vals - lse).exp().cumsum(dim=-1)
    remove = cum > top_p
    remove[:, 1:] = remove[:, :-1].clone()  # shift: the token that crosses p stays
    remove[:, 0] = False
    kept = torch.zeros_like(logits, dtype=torch.bool).scatter_(1, idx, ~remove)
    return logits.masked_fill(~kept, NEG_INF)


# -- the methods ------------------------------------------------------------------------------------


class DExperts(_Combination):
    """DExperts (Liu et al. 2021):
    ``z = top_p_filter(z_base, base_top_p) + alpha * (z_expert - z_antiexpert)``.

    The nucleus is cut from the base's distribution over the tokens the constraint allows.
    ``base_top_p=1`` disables it; negative ``alpha`` steers away from the expert; ``alpha=0`` skips the
    expert forwards (with ``base_top_p=1`` it is exactly the base).

    >>> model = guide.load()                                                               # doctest: +SKIP
    >>> pos = Prompted(model, "A happy review:\\n")                                        # doctest: +SKIP
    >>> neg = Prompted(model, "An angry review:\\n")                                       # doctest: +SKIP
    >>> guide.generate(DExperts(model, pos, neg, alpha=2.0), "The food", max_new_tokens=10)  # doctest: +SKIP
    """

    def __init__(
        self,
        base: LogitsSource,
        expert: LogitsSource,
        antiexpert: LogitsSource,
        alpha: float = 2.0,
        base_top_p: float = 0.9,
        *,
        fuse: bool = True,
    ):
        super().__init__(base, {"expert": expert, "antiexpert": antiexpert}, fuse)
        self.expert, self.antiexpert = expert, antiexpert
        self.alpha = _finite("alpha", alpha)
        self.base_top_p = _finite("base_top_p", base_top_p)
        if not 0 < self.base_top_p <= 1:
            raise GuidanceError(f"base_top_p must be in (0, 1], got {base_top_p!r}")
        if self.alpha != 0:
            self._participants = [base, expert, antiexpert]
        self._needs_rescore = self.base_top_p < 1

    def combine(self, parts: list[torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor | None]:
        base = parts[0]
        z = base if self.alpha == 0 else base + self.alpha * (parts[1] - parts[2])
        return z, base

    def truncate(self, logits: torch.Tensor, base: torch.Tensor, session: GuidedSession) -> torch.Tensor:
        allowed = logits[:, : base.shape[-1]] != NEG_INF
        nucleus = nucleus_filter(base.masked_fill(~allowed, NEG_INF), self.base_top_p)
        cut = torch.ones_like(logits, dtype=torch.bool)
        cut[:, : base.shape[-1]] = nucleus == NEG_INF
        return logits.masked_fill(cut, NEG_INF)


class ProxyTuning(_Combination):
    """Proxy-tuning (Liu et al. 2024): ``z = z_base + alpha * (z_expert - z_antiexpert)``, e.g. a large
    untuned base steered by a small tuned expert and its untuned anti-expert. Each participant may
    format the prompt its own way (``Prompted(expert, chat=True)``); only generated ids are shared, and
    the experts' logits are truncated to the base vocabulary.

    >>> ProxyTuning(big_base, Prompted(small_chat, chat=True), small_base, alpha=1.0)   # doctest: +SKIP
    """

    def __init__(
        self,
        base: LogitsSource,
        expert: LogitsSource,
        antiexpert: LogitsSource,
        alpha: float = 1.0,
        *,
        fuse: bool = True,
    ):
        super().__init__(base, {"expert": expert, "antiexpert": antiexpert}, fuse)
        self.expert, self.antiexpert = expert, antiexpert
        self.alpha = _finite("alpha", alpha)
        if self.alpha != 0:
            self._participants = [base, expert, antiexpert]

    def combine(self, parts: list[torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor | None]:
        if self.alpha == 0:
            return parts[0], None
        return parts[0] + self.alpha * (parts[1] - parts[2]), None


class ClassifierFreeGuidance(_Combination):
    """Classifier-free guidance (Sanchez et al. 2023):
    ``scale * (logsoftmax(z_cond) - logsoftmax(z_uncond)) + logsoftmax(z_uncond)``.

    The unconditional branch sees only the prompt's last token (and, like the conditional one, every
    generated token), or ``negative_prompt`` instead of the prompt. ``scale=1`` is exactly the model
    (no second branch is run).

    >>> cfg = ClassifierFreeGuidance(model, scale=1.5)                       # doctest: +SKIP
    >>> guide.generate(cfg, "Write about the sea:", max_new_tokens=12)      # doctest: +SKIP
    """

    def __init__(
        self,
        model: LogitsSource,
        negative_prompt: str | Sequence[int] | None = None,
        scale: float = 1.5,
        *,
        fuse: bool = True,
    ):
        super().__init__(model, {}, fuse)
        self.model = model
        self.scale = _finite("scale", scale)
        neg: list[int] | None = None
        if isinstance(negative_prompt, str):
            neg = list(model.encode(negative_prompt)) if negative_prompt else None
        elif negative_prompt is not None:
            neg = [int(t) for t in negative_prompt]
            bad = [t for t in neg if not 0 <= t < model.vocabulary.size]
            if bad:
                raise GuidanceError(f"negative_prompt has token ids outside the vocabulary: {bad[:5]}")
        self.negative_ids = neg
        if self.scale != 1:
            self._participants = [model, _Unconditional(model, neg)]

    def combine(self, parts: list[torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor | None]:
        if self.scale == 1:
            return parts[0], None
        cond = torch.log_softmax(parts[0], dim=-1)
        uncond = torch.log_softmax(parts[1], dim=-1)
        return self.scale * (cond - uncond) + uncond, None


class Contrastive(_Combination):
    """Contrastive decoding (Li et al. 2023): among tokens with ``p_exp >= alpha * max p_exp`` (over the
    tokens the constraint allows), score ``logp_exp - beta * logp_ama``; the rest ``-inf``.
    ``beta=0`` is the expert alone (argmax unchanged; the amateur is not run).

    >>> Contrastive(guide.load("big"), guide.load("small"), alpha=0.1)   # doctest: +SKIP
    """

    def __init__(
        self,
        expert: LogitsSource,
        amateur: LogitsSource,
        alpha: float = 0.1,
        beta: float = 1.0,
        *,
        fuse: bool = True,
    ):
        super().__init__(expert, {"amateur": amateur}, fuse)
        self.expert, self.amateur = expert, amateur
        self.alpha = _finite("alpha", alpha)
        self.beta = _finite("beta", beta)
        if not 0 <= self.alpha <= 1:
            raise GuidanceError(f"alpha (plausibility threshold) must be in [0, 1], got {alpha!r}")
        if self.beta != 0:
            self._participants = [expert, amateur]
        self._needs_rescore = self.alpha > 0

    def combine(self, parts: list[torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor | None]:
        if self.beta == 0:
            return parts[0], parts[0]
        expert = torch.log_softmax(parts[0], dim=-1)
        return expert - self.beta * torch.log_softmax(parts[1], dim=-1), parts[0]

    def truncate(self, logits: torch.Tensor, expert: torch.Tensor, session: GuidedSession) -> torch.Tensor:
        w = expert.shape[-1]
        z = expert.masked_fill(logits[:, :w] == NEG_INF, NEG_INF)
        head = z >= z.max(dim=-1, keepdim=True).values + math.log(self.alpha)
        cut = torch.ones_like(logits, dtype=torch.bool)
        cut[:, :w] = ~head
        return logits.masked_fill(cut, NEG_INF)


class ClassifierGuidance(_Combination):
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
        self.weight = _finite("weight", weight)
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
