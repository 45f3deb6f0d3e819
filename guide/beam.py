"""Beam search in the batched loop: every prompt's beams in one forward batch, one matcher per beam.

Scoring and finishing follow transformers' ``_beam_search`` step for step, so under a constraint the
top beam is the one ``hf.generate(num_beams=k, logits_processor=[guide.LogitsProcessor(...)])`` finds:

* a beam's score is the sum of the model's log-probabilities of its tokens: the log-softmax of the
  raw logits, then the constraint mask (which does not renormalize, as HF runs processors after the
  log-softmax);
* each step takes the top ``2k`` candidates over ``k`` beams times the vocabulary; those that end (EOS, or the
  token budget) compete for the ``k`` finished slots with score ``sum / length ** length_penalty``;
  the best ``k`` that do not end run on;
* a prompt stops when ``early_stopping is True`` and its ``k`` slots are full, when the best running
  beam cannot beat the worst finished one (HF's heuristic for ``False`` and ``"never"``), or at the
  budget. Stopped prompts leave the batch.

A matcher is forked with ``copy()`` when a beam forks (no recompilation), and the KV cache is
gathered in place with ``session.reorder``. A finished constraint allows only EOS, so constrained
beams end with EOS as in HF. A `guide.Watermark` adds its green-list bias to each beam's masked
log-probabilities, seeded by that beam's own tokens, as transformers' watermark processor does inside
its beam search. Jump-forward does not apply: a forced token's log-probability is part
of the beam's score, so it costs its step.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

import fsm

from .constraints import TokenMatcher
from .masks import NEG_INF, MaskBuffer, forbid_padding_ids
from .sources import LogitsSource
from .watermark import Watermark, context_tail

_PENALTY = -1.0e9  # HF's "never choose this" offset (not -inf: sums must stay comparable)


@dataclass(frozen=True)
class BeamOptions:
    """The beam-search settings of one call, checked at construction.

    >>> BeamOptions(num_beams=3, num_return_sequences=2).num_beams
    3
    """

    num_beams: int
    length_penalty: float = 1.0
    early_stopping: bool | str = False
    num_return_sequences: int = 1

    def __post_init__(self) -> None:
        if not isinstance(self.num_beams, int) or self.num_beams < 1:
            raise ValueError(f"num_beams must be an int >= 1, got {self.num_beams!r}")
        r = self.num_return_sequences
        if not isinstance(r, int) or not 1 <= r <= self.num_beams:
            raise ValueError(
                f"num_return_sequences must be an int in [1, num_beams={self.num_beams}], got {r!r}"
            )
        if self.early_stopping not in (True, False, "never"):
            raise ValueError(f"early_stopping must be True, False or 'never', got {self.early_stopping!r}")
        if not isinstance(self.length_penalty, (int, float)):
            raise ValueError(f"length_penalty must be a number, got {self.length_penalty!r}")


@dataclass
class Hypothesis:
    """One finished beam: its generated ids (a final EOS included) and its length-penalized score.

    >>> Hypothesis([5, 2], -1.5, forward_passes=3).score
    -1.5
    """

    token_ids: list[int]
    score: float
    forward_passes: int


@dataclass(eq=False)
class _Beam:
    ids: list[int]
    matcher: TokenMatcher | None
    dead: bool = False  # HF would carry it on (a -inf or post-EOS beam); it has no valid continuation


@dataclass(eq=False)
class _Prompt:
    """One prompt's search state (its tensors are rows of the batch-wide ones)."""

    index: int
    max_new: int
    beams: list[_Beam]
    slots: list[list[int] | None]  # the finished hypotheses' ids, best first (None = empty slot)
    passes: int = 0


def beam_search(
    source: LogitsSource,
    prompt_ids: Sequence[Sequence[int]],
    matchers: Sequence[TokenMatcher | None],
    max_new: Sequence[int],
    options: BeamOptions,
    watermark: Watermark | None = None,
) -> list[list[Hypothesis]]:
    """Beam-search every prompt in one batch; per prompt, up to ``num_return_sequences`` hypotheses, best first.

    >>> hyps = beam_search(model, [model.encode("Year: ")], [index.matcher()], [8], BeamOptions(4))  # doctest: +SKIP
    >>> model.decode(hyps[0][0].token_ids)                                                         # doctest: +SKIP
    '2023'
    """
    k = options.num_beams
    vocab = source.vocabulary
    eos = frozenset(vocab.eos_token_ids)
    prompts = [
        _Prompt(i, max_new[i], [_Beam([], m.copy() if m is not None else None) for _ in range(k)], [None] * k)
        for i, m in enumerate(matchers)
    ]
    results: list[list[Hypothesis]] = [[] for _ in prompts]
    active = [p for p in prompts if p.max_new > 0]
    if not active:
        return results
    session, logits = source.prefill([prompt_ids[p.index] for p in active])
    if not callable(getattr(session, "reorder", None)):
        raise ValueError(
            "num_beams > 1 needs a source whose sessions can reorder their KV cache (a guide.Model); "
            f"{type(source).__name__} cannot"
        )
    fan = torch.arange(len(active)).repeat_interleave(k)
    session.reorder(fan)
    logits = logits[fan.to(logits.device)]
    device = logits.device
    running = torch.full((len(active), k), _PENALTY, device=device)
    running[:, 0] = 0.0  # only the first beam's tokens count at the first step, as in HF
    fin_scores = torch.full((len(active), k), _PENALTY, device=device)
    fin_flags = torch.zeros((len(active), k), dtype=torch.bool, device=device)
    unsat = torch.ones(len(active), dtype=torch.bool, device=device)
    masks = MaskBuffer(vocab.size, device, len(active) * k)
    step = 0
    lp = float(options.length_penalty)
    while active:
        a = len(active)
        for p in active:
            p.passes += 1
        scores = _log_probs(logits, [b for p in active for b in p.beams], masks, vocab.n_tokens)
        if watermark is not None:  # HF adds a processor's bias to the log-probs a beam's score sums
            width = watermark.context_width
            contexts = [context_tail(prompt_ids[p.index], b.ids, width) for p in active for b in p.beams]
            scores = watermark.apply(scores, contexts)
        width = scores.shape[-1]
        acc = (scores.view(a, k, width) + running[:, :, None]).view(a, k * width)
        top_scores, top_idx = torch.topk(acc, 2 * k)
        parents, tokens = top_idx // width, top_idx % width
        tok_list = tokens.tolist()
        budget = torch.tensor([p.max_new for p in active], device=device)
        is_eos = torch.tensor([[t in eos for t in row] for row in tok_list], dtype=torch.bool, device=device)
        hits = is_eos | (step + 1 >= budget)[:, None]
        # the best k candidates that do not end run on
        run_scores = top_scores + hits.to(torch.float32) * _PENALTY
        nxt = torch.topk(run_scores, k)[1]
        running = torch.gather(run_scores, 1, nxt)
        # candidates that end enter the finished slots if they beat them
        did = hits.clone()
        did[:, k:] = False
        cand = top_scores / ((step + 1) ** lp)
        full = fin_flags.all(dim=1, keepdim=True) & (options.early_stopping is True)
        cand = cand + full.to(torch.float32) * _PENALTY
        cand = cand + (~unsat[:, None]).to(torch.float32) * _PENALTY
        cand = cand + (~did) * _PENALTY
        merged = torch.cat([fin_scores, cand], dim=1)
        pick = torch.topk(merged, k)[1]
        fin_scores = torch.gather(merged, 1, pick)
        fin_flags = torch.gather(torch.cat([fin_flags, did], dim=1), 1, pick)
        par_list, pick_list, nxt_list = parents.tolist(), pick.tolist(), nxt.tolist()
        for i, p in enumerate(active):
            old = p.slots
            p.slots = [
                old[j] if j < k else [*p.beams[par_list[i][j - k]].ids, tok_list[i][j - k]]
                for j in pick_list[i]
            ]
        step += 1
        # HF's stopping rule, per prompt
        if options.early_stopping == "never" and lp > 0.0:
            best_len = budget.to(torch.float32)
        else:
            best_len = torch.full_like(running[:, 0], float(step))
        best_running = running[:, 0] / best_len**lp
        worst = torch.where(fin_flags, fin_scores.min(dim=1, keepdim=True)[0], _PENALTY)
        unsat = unsat & (best_running[:, None] > worst).any(dim=1)
        go = unsat & ~(fin_flags.all(dim=1) & (options.early_stopping is True)) & ~hits.all(dim=1)
        go_list = go.tolist()
        flags_list, scores_list = fin_flags.tolist(), fin_scores.tolist()
        for i, p in enumerate(active):
            if not go_list[i]:
                results[p.index] = [
                    Hypothesis(p.slots[j], scores_list[i][j], p.passes)  # type: ignore[arg-type]
                    for j in range(options.num_return_sequences)
                    if flags_list[i][j]
                ]
        keep = [i for i in range(a) if go_list[i]]
        if not keep:
            break
        rows, feed = [], []
        for i in keep:
            p = active[i]
            forks = [(par_list[i][c], tok_list[i][c]) for c in nxt_list[i]]
            p.beams = [_fork(p.beams[b], t, eos) for b, t in forks]
            rows.extend(i * k + b for b, _ in forks)
            feed.extend(t for _, t in forks)
        keep_t = torch.as_tensor(keep, device=device)
        running, fin_scores, fin_flags, unsat = (
            running[keep_t],
            fin_scores[keep_t],
            fin_flags[keep_t],
            unsat[keep_t],
        )
        active = [active[i] for i in keep]
        session.reorder(torch.as_tensor(rows, dtype=torch.long))
        logits = session.decode(torch.as_tensor(feed, dtype=torch.long)[:, None])
    return results


def _fork(parent: _Beam, token: int, eos: frozenset[int]) -> _Beam:
    """A child beam: the parent's ids plus ``token``, with its own copy of the parent's matcher."""
    ids = [*parent.ids, token]
    if parent.dead or token in eos:
        return _Beam(ids, None, dead=True)
    if parent.matcher is None:
        return _Beam(ids, None)
    m = parent.matcher.copy()
    try:
        m.advance(token)
    except fsm.TokenRejected:  # a -inf candidate HF keeps only to fill the beam: it cannot go on
        return _Beam(ids, None, dead=True)
    return _Beam(ids, m)


def _log_probs(logits: torch.Tensor, beams: list[_Beam], masks: MaskBuffer, n_tokens: int) -> torch.Tensor:
    """Log-softmax of the raw logits, then each beam's constraint mask (no renormalization, as in HF)."""
    scores = torch.log_softmax(logits.float(), dim=-1)
    forbid_padding_ids(scores, n_tokens)
    rows = [i for i, b in enumerate(beams) if b.matcher is not None]
    if rows:
        masks.apply(scores, rows, [beams[i].matcher for i in rows])  # type: ignore[misc]
    dead = [i for i, b in enumerate(beams) if b.dead]
    if dead:
        scores[torch.as_tensor(dead, device=scores.device)] = NEG_INF
    return scores
