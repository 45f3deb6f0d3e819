"""DExperts on the default model: does a prompted positive expert / negative anti-expert pair raise the
rate of positive continuations, at what perplexity cost, and at what speed?

Setup (SmolLM2-135M-Instruct plays all three roles):
  base        the model on the raw prompt
  expert      Prompted(model, POSITIVE_PREFIX)   anti-expert  Prompted(model, NEGATIVE_PREFIX)
  DExperts(base, expert, antiexpert, alpha, base_top_p=0.9), sampled at temperature 1 with fixed seeds.
  Baselines: the base alone (also with top_p=0.9, the truncation DExperts applies to the base) and
  the positive expert alone (plain prompting), same sampling.

Judges, both named in the output:
  lexicon     a small sentiment word list (LEXICON_POS / LEXICON_NEG below): positive when the
              continuation has more positive than negative words, negative when fewer.
  zero-shot   the same base model asked whether the text is positive or negative
              (next-token logit of " positive" vs " negative"); a weak judge at 135M parameters.
Perplexity: of each continuation under the base model given the raw prompt (lower = more fluent to the
base), mean over prompts of per-continuation perplexity.

Speed: decode tokens/s of the loop (greedy, EOS banned, fixed length) for the plain model and for
DExperts with its three participants stacked in one batch (the default) or run as three sessions
(fuse=False); the ratio to the plain model is the step-time cost of three participants.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_guidance.py [--prompts 60] [--tokens 16]
        [--no-zero-shot] [--threads 1]
"""

from __future__ import annotations

import argparse
import math
import os
import re
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import guide
from guide.guidance import DExperts, Prompted

POSITIVE_PREFIX = "The following text is extremely positive, happy, cheerful and enthusiastic:\n"
NEGATIVE_PREFIX = "The following text is extremely negative, angry, sad and pessimistic:\n"

# fmt: off
PROMPTS = [
    "The movie was", "My neighbor", "Yesterday at work", "The food at the new restaurant",
    "When I opened the box", "The weather this weekend", "My brother called me and", "The hotel room",
    "After the meeting, the manager", "The concert last night", "I finally finished reading the book, and",
    "The new phone", "Our flight", "The teacher told the class", "When we arrived at the beach",
    "The customer service", "My first day at school", "The results of the election",
    "The city council decided", "The old house on the hill", "This morning I woke up and", "The train was",
    "Her new song", "The price of coffee", "The doctor said", "The football match", "The kids in the park",
    "The software update", "My landlord", "The museum exhibit", "When the package finally arrived,",
    "The last time I saw him,", "The meal my grandmother cooked", "The traffic on the highway",
    "The wedding", "The neighbors' dog", "The job interview", "The vacation", "The restaurant's service",
    "The new policy at work", "My car", "The game developers", "The hospital staff",
    "The community garden", "The review of the album", "The bus driver", "The town festival",
    "The lecture", "The end of the season", "The storm", "The birthday party", "The hiking trail",
    "The apartment", "The online course", "The bakery down the street", "The team's performance",
    "The theater play", "The long weekend", "The school board meeting", "The new coworker",
]
# fmt: on


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


LEXICON_POS = _words(
    """good great excellent amazing wonderful fantastic happy joy joyful love loved lovely beautiful
best better perfect delightful pleasant fun enjoy enjoyed enjoyable exciting excited awesome brilliant glad
cheerful nice kind friendly warm success successful proud hope hopeful grateful thankful thank smile smiled
laugh laughed laughter positive bright celebrate celebrated celebration impressive incredible superb fabulous
favorite comfortable peaceful calm charming inspiring inspired win won winning blessed thrilled enthusiastic
magnificent gorgeous heartwarming adorable marvelous outstanding remarkable fresh delicious tasty helpful
generous vibrant lively relaxing relaxed sunny sweet"""
)
LEXICON_NEG = _words(
    """bad terrible awful horrible worst worse sad angry anger hate hated disappointing disappointed
poor boring annoying annoyed ugly painful pain fail failed failure problem problems broken wrong nasty rude
dirty cold disgusting dreadful fear afraid scared miserable unhappy upset frustrated frustrating stress
stressful tired lonely cry cried crying death dead died kill killed sick ill hurt injured damage damaged
destroyed disaster crisis tragic tragedy worried worry anxious negative loss lost lose losing dangerous
violence violent attack attacked crime criminal struggle struggling suffer suffering pessimistic gloomy
depressing depressed dark bitter harsh cruel mess chaos delay delayed cancelled canceled complaint"""
)
_WORD = re.compile(r"[a-z']+")


def lexicon_label(text: str) -> int:
    """+1 positive, -1 negative, 0 neutral: more positive than negative lexicon words, or fewer."""
    words = _WORD.findall(text.lower())
    score = sum(w in LEXICON_POS for w in words) - sum(w in LEXICON_NEG for w in words)
    return (score > 0) - (score < 0)


def zero_shot_positive(model, texts: list[str]) -> list[bool]:
    """The base model asked zero-shot (raw prompt, no chat template: shorter): is the next-token logit of
    " positive" above that of " negative"?"""
    tok = model.tokenizer
    pos_id, neg_id = tok.encode(" positive")[0], tok.encode(" negative")[0]
    prompts = [
        model.encode(
            f'Text: "{t.strip()}"\nQuestion: is the sentiment of this text positive or '
            f"negative?\nAnswer: the sentiment is"
        )
        for t in texts
    ]
    out = []
    for i in range(0, len(prompts), 16):
        _, logits = model.prefill(prompts[i : i + 16])
        out += (logits[:, pos_id] > logits[:, neg_id]).tolist()
    return out


def perplexities(model, prompts: list[list[int]], conts: list[list[int]]) -> list[float]:
    """Per-continuation perplexity under the model given the prompt (cache-free forwards; the output
    layer only on the continuation's positions)."""
    out = []
    for i in range(0, len(prompts), 16):
        ps, cs = prompts[i : i + 16], conts[i : i + 16]
        seqs = [p + c for p, c in zip(ps, cs, strict=True)]
        ids = torch.zeros((len(seqs), max(len(s) for s in seqs)), dtype=torch.long)
        for r, s in enumerate(seqs):
            ids[r, : len(s)] = torch.tensor(s)
        with torch.inference_mode():
            hidden = model.hf.model(input_ids=ids, use_cache=False).last_hidden_state
            for r, (p, c) in enumerate(zip(ps, cs, strict=True)):
                if c:
                    logp = torch.log_softmax(
                        model.hf.lm_head(hidden[r, len(p) - 1 : len(p) - 1 + len(c)]).float(), -1
                    )
                    out.append(math.exp(float(-logp[torch.arange(len(c)), torch.tensor(c)].mean())))
    return out


def quality(model, name, source, prompts, tokens, seed, zero_shot, **sampling):
    t = time.perf_counter()
    outs = guide.generate(source, prompts, max_new_tokens=tokens, seed=seed, temperature=1.0, **sampling)
    secs = time.perf_counter() - t
    texts = [o.text for o in outs]
    labels = [lexicon_label(x) for x in texts]
    zs = zero_shot_positive(model, texts) if zero_shot else [float("nan")]
    ppl = perplexities(
        model,
        [model.encode(p) for p in prompts],
        [[t for t in o.token_ids if t not in model.vocabulary.eos_token_ids] for o in outs],
    )
    n = len(texts)
    row = {
        "name": name,
        "pos": sum(x > 0 for x in labels) / n,
        "neg": sum(x < 0 for x in labels) / n,
        "zs": sum(zs) / len(zs),
        "ppl": sum(ppl) / len(ppl),
        "secs": secs,
        "example": texts[0],
    }
    print(
        f"{name:<34} {row['pos']:>6.0%} {row['neg']:>6.0%} {row['zs']:>9.0%} {row['ppl']:>8.1f} {secs:>7.1f}s"
        f"   e.g. {PROMPTS[0]!r} -> {texts[0][:60]!r}",
        flush=True,
    )
    return row


def speed(source, prompts, tokens, repeats):
    eos = source.vocabulary.eos_token_ids
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        guide.generate(source, prompts, max_new_tokens=tokens, logit_bias={e: float("-inf") for e in eos})
        best = min(best, time.perf_counter() - t)
    return len(prompts) * tokens / best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--prompts", type=int, default=60)
    ap.add_argument("--tokens", type=int, default=16)
    ap.add_argument(
        "--no-zero-shot",
        dest="zero_shot",
        action="store_false",
        help="skip the zero-shot judge (the base model asked)",
    )
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--speed-tokens", type=int, default=32)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument(
        "--threads",
        type=int,
        default=1,
        help="torch threads (1 by default: on a shared 2-core machine more threads spin and stall)",
    )
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    model = guide.load()
    prompts = PROMPTS[: args.prompts]
    pos, neg = Prompted(model, POSITIVE_PREFIX), Prompted(model, NEGATIVE_PREFIX)
    print(
        f"model {model.name}  threads {torch.get_num_threads()}  prompts {len(prompts)}  "
        f"tokens {args.tokens}  sampling temperature 1, seeds {args.seed}.."
    )
    print(
        "judges: lexicon = word-list sentiment classifier in this file; zero-shot = the base model asked "
        "'positive or negative?'\n"
    )
    print(f"{'source':<34} {'lex+':>6} {'lex-':>6} {'zeroshot+':>9} {'ppl':>8} {'time':>8}")
    t0 = time.perf_counter()
    runs = [
        ("base", model, {}),
        ("base, top_p=0.9", model, {"top_p": 0.9}),
        ("positive expert alone (prompting)", pos, {}),
        ("DExperts alpha=2", DExperts(model, pos, neg, alpha=2.0), {}),
        ("DExperts alpha=-2 (steer negative)", DExperts(model, pos, neg, alpha=-2.0), {}),
    ]
    rows = [
        quality(model, name, src, prompts, args.tokens, args.seed, args.zero_shot, **kw)
        for name, src, kw in runs
    ]
    base, nucleus, dx = rows[0], rows[1], rows[3]
    print(
        f"\nDExperts alpha=2 vs base: positive rate (lexicon) {base['pos']:.0%} -> {dx['pos']:.0%}, "
        f"(zero-shot) {base['zs']:.0%} -> {dx['zs']:.0%}; perplexity {base['ppl']:.1f} -> {dx['ppl']:.1f} "
        f"({dx['ppl'] / base['ppl']:.2f}x; base with the same top_p=0.9: {nucleus['ppl']:.1f})"
    )

    print(
        "\nspeed: decode tokens/s, greedy, EOS banned, "
        f"{args.speed_tokens} tokens per row, best of {args.repeats}"
    )
    for batch in (1, 8):
        ps = prompts[:batch]
        single = speed(model, ps, args.speed_tokens, args.repeats)
        fused = speed(DExperts(model, pos, neg), ps, args.speed_tokens, args.repeats)
        apart = speed(DExperts(model, pos, neg, fuse=False), ps, args.speed_tokens, args.repeats)
        print(
            f"  batch {batch}: plain {single:7.1f} tok/s | DExperts stacked {fused:7.1f} tok/s "
            f"({single / fused:.2f}x step time) | DExperts 3 sessions {apart:7.1f} tok/s "
            f"({single / apart:.2f}x step time)   goal <= 3.3x",
            flush=True,
        )
    print(f"\ntotal {time.perf_counter() - t0:.0f}s")


if __name__ == "__main__":
    main()
