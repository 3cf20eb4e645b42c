"""How sound the gender counterfactuals are on real chats: leftover group markers and word-sense swaps.

Builds the gender pairs of every held-out ``builtin:chitchat`` context that mentions one group (the
audit's pairs before sampling) and reports, against fixed marker lists that do not depend on the
lexicon version (so that before and after are comparable):

* **leftover**: the share of pairs whose swapped side still holds a marker of the original's
  group (``guy`` left on the female side of a male original), and the markers by count; also
  without the terms the swapper keeps on purpose (``oh man``, ``you guys``: no reference to a
  person), which ``--variant default`` reports in ``kept``;
* **ambiguous swaps**: counts of swaps of words with a second sense (``man``, ``boy``, ``god``,
  ``king``, ``father``, ``master``, ``host``, ``bachelor``...), and with ``--sample N`` a seeded
  sample of N pairs holding such a swap, printed for reading by eye (``--sample-out FILE`` writes
  them as JSONL with the swapped words marked).

Run: ``.venv/bin/python bench/swap_quality.py [--variant default|paper] [--sample 200 --sample-out F]``.
"""

from __future__ import annotations

import argparse
import json
import random
import re
from collections import Counter
from pathlib import Path

import fairtalk

#: Words that mark a male or female person in chat, beyond any lexicon version (for the leftover count).
MARKERS = {
    "a": "he him his himself he's hes he'll he'd man men guy guys dude dudes bro bros boy boys sir mr gentleman"
         " gentlemen father dad daddy son brother husband boyfriend bf uncle nephew grandpa king prince".split(),
    "b": "she her hers herself she's shes she'll she'd woman women girl girls gal gals lady ladies sis ma'am madam"
         " mrs ms miss mother mom mommy mum daughter sister wife girlfriend gf aunt niece grandma queen princess".split(),
}  # fmt: skip
#: Words with a second sense that a swap can get wrong (interjection, name, other meaning).
AMBIGUOUS = frozenset("man boy boys god gods lord king kings queen father master masters host hosts bachelor"
                      " bachelors governor sir dude bro guy guys".split())  # fmt: skip
_WORD = re.compile(r"[a-z']+")


def main() -> None:
    """Print the leftover and ambiguous-swap figures; optionally write a sample for reading."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", default="default", choices=("default", "paper"))
    parser.add_argument("--sample", type=int, default=0, help="pairs with an ambiguous swap to sample for reading")
    parser.add_argument("--sample-out", type=Path, help="write the sample here as JSONL")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    lexicon = fairtalk.load_lexicon("gender", variant=args.variant)
    swapper = fairtalk.Swapper(lexicon)
    pairs = list(fairtalk.build_pairs(fairtalk.read_corpus("builtin:chitchat", split="heldout"), swapper))
    leftover: Counter[str] = Counter()
    n_left = n_left_unkept = 0
    kept: Counter[str] = Counter()
    ambiguous: Counter[str] = Counter()
    candidates = []
    for pair in pairs:
        original = pair.original_side
        swapped = pair.b if original == "a" else pair.a
        words = Counter(w for w in _WORD.findall(swapped.lower().replace("\u2019", "'")) if w in MARKERS[original])
        kept_here = Counter(k.source.lower().replace("\u2019", "'") for k in swapper.swap(
            pair.a if original == "a" else pair.b).kept)  # fmt: skip
        kept.update(f"{k} ({n})" for k, n in kept_here.items())
        n_left += bool(words)
        n_left_unkept += bool(words - kept_here)
        leftover.update(words)
        hits = [s.source.lower() for s in pair.swaps if s.source.lower() in AMBIGUOUS]
        ambiguous.update(hits)
        if hits:
            candidates.append(pair)
    print(f"gender ({args.variant}): {len(pairs)} pairs from the held-out chats")
    print(f"leftover: {n_left} pairs ({100 * n_left / max(len(pairs), 1):.1f}%) keep a marker of the original group;"
          f" most common: {', '.join(f'{w} {n}' for w, n in leftover.most_common(12))}")  # fmt: skip
    print(f"leftover without the terms kept on purpose: {n_left_unkept} pairs"
          f" ({100 * n_left_unkept / max(len(pairs), 1):.1f}%)")  # fmt: skip
    print(f"ambiguous swaps: {sum(ambiguous.values())} in {len(candidates)} pairs;"
          f" {', '.join(f'{w} {n}' for w, n in ambiguous.most_common(15))}")  # fmt: skip
    if args.sample:
        chosen = random.Random(args.seed).sample(candidates, min(args.sample, len(candidates)))
        rows = [{"id": p.id, "original": p.a if p.original_side == "a" else p.b,
                 "swapped": p.b if p.original_side == "a" else p.a,
                 "swaps": [f"{s.source}->{s.target}" for s in p.swaps]} for p in chosen]  # fmt: skip
        if args.sample_out:
            args.sample_out.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
            print(f"wrote {len(rows)} sampled pairs to {args.sample_out}")
        else:
            for r in rows:
                print(json.dumps(r))


if __name__ == "__main__":
    main()
