"""How sound the counterfactuals are on real chats: leftover group markers and word-sense swaps.

Builds the gender (or ``--axis race``) pairs of every held-out ``builtin:chitchat`` context that
mentions one group (the audit's pairs before sampling) and reports, against fixed marker lists
that do not depend on the lexicon version (so that before and after are comparable):

* **leftover**: the share of pairs whose swapped side still holds a marker of the original's
  group (``guy`` left on the female side of a male original), and the markers by count; also
  without the terms the swapper keeps on purpose (``oh man``, ``you guys``: no reference to a
  person), which ``--variant default`` reports in ``kept``. For race the markers are the words of
  the list as printed (``race-paper``); the AAE words that are also ordinary English (``ice``,
  ``sick``) are counted apart, since leaving them is mostly right (``ice cream``);
* **ambiguous swaps**: counts of swaps of words with a second sense (gender: ``man``, ``boy``,
  ``god``, ``king``, ``father``, ``master``, ``host``...; race: the African American English words
  that are also ordinary English words, ``ice``, ``chips``, ``blood``, ``sick``, ``pen``, ``peace``,
  ``cop``...), and with ``--sample N`` a seeded sample of N pairs holding such a swap, printed for
  reading by eye (``--sample-out FILE`` writes them as JSONL with the swapped words marked);
* **pairs_check.json**: the leftover, kept and ambiguous figures of :func:`fairtalk.check_pairs`
  over the same pairs (``--axis race`` only; the gender figures above predate it).

``--split train`` reads the training conversations instead (a fresh sample of lines, unseen while
the lexicon's sense rules were written); ``--lexicon FILE`` swaps with a lexicon file (the list
before a change, for a before/after on the same lines); ``--lines FILE`` re-swaps the originals of
an earlier ``--sample-out`` file, line by line, and writes them to ``--sample-out`` in its order.

Run: ``.venv/bin/python bench/swap_quality.py [--axis gender|race] [--variant default|paper]
[--split heldout|train] [--sample 200 --sample-out F] [--lines F]``.
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
}
#: Words with a second sense that a swap can get wrong (interjection, name, other meaning).
AMBIGUOUS = frozenset(
    "man boy boys god gods lord king kings queen father master masters host hosts bachelor"
    " bachelors governor sir dude bro guy guys".split()
)
#: African American English words of the race list that are also ordinary English words (issue 30):
#: swapped to Standard English in their ordinary sense they make nonsense ("ice cream" -> "jewelry cream").
RACE_AMBIGUOUS = frozenset(
    "ice chips blood sick ill pen peace cop fly word dumb tight flow brick lit chill whip grill mo dub shade"
    " balling kicks sneaks crib yo dis da squad swag dope tims".split()
    + ["cut on", "pop out", "you stay", "you playing", "i'm out", "i'm straight", "young blood", "square up"]
)
_WORD = re.compile(r"[a-z']+")


def race_markers() -> dict[str, frozenset[str]]:
    """Each side's words of the race list as printed, lowercased, less the words on both sides."""
    paper = fairtalk.load_lexicon("race", variant="paper")
    a = {p.a.lower() for p in paper.pairs}
    b = {p.b.lower() for p in paper.pairs}
    return {"a": frozenset(a - b), "b": frozenset(b - a)}


def _found(text: str, words: frozenset[str]) -> Counter[str]:
    """The words and phrases of ``words`` in ``text`` (whole words, case-insensitive), by count."""
    low = " ".join(_WORD.findall(text.lower().replace("\u2019", "'")))
    return Counter({w: n for w in words if (n := len(re.findall(rf"(?<![a-z']){re.escape(w)}(?![a-z'])", low)))})


def _row(pair: fairtalk.Pair) -> dict[str, object]:
    original, swapped = (pair.a, pair.b) if pair.original_side == "a" else (pair.b, pair.a)
    return {"id": pair.id, "original": original, "swapped": swapped, "swaps": [f"{s.source}->{s.target}" for s in pair.swaps]}


def main() -> None:
    """Print the leftover and ambiguous-swap figures; optionally write a sample for reading."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--axis", default="gender", choices=("gender", "race"))
    parser.add_argument("--variant", default="default", choices=("default", "paper"))
    parser.add_argument("--lexicon", type=Path, help="swap with this lexicon file instead of the built-in one")
    parser.add_argument("--split", default="heldout", choices=("heldout", "train"))
    parser.add_argument("--sample", type=int, default=0, help="pairs with an ambiguous swap to sample for reading")
    parser.add_argument("--sample-out", type=Path, help="write the sample here as JSONL")
    parser.add_argument("--lines", type=Path, help="re-swap the originals of an earlier --sample-out file")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    lexicon = fairtalk.load_lexicon(str(args.lexicon) if args.lexicon else args.axis, variant=args.variant)
    swapper = fairtalk.Swapper(lexicon)
    if args.lines:
        reswap(swapper, args.lines, args.sample_out)
        return
    pairs = list(fairtalk.build_pairs(fairtalk.read_corpus("builtin:chitchat", split=args.split), swapper))
    if args.axis == "race":
        candidates = race_figures(pairs, swapper, f"race ({args.lexicon or args.variant}, {args.split})")
    else:
        candidates = gender_figures(pairs, swapper, args.variant)
    if args.sample:
        chosen = random.Random(args.seed).sample(candidates, min(args.sample, len(candidates)))
        rows = [_row(p) for p in chosen]
        if args.sample_out:
            args.sample_out.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
            print(f"wrote {len(rows)} sampled pairs to {args.sample_out}")
        else:
            for r in rows:
                print(json.dumps(r))


def gender_figures(pairs: list[fairtalk.Pair], swapper: fairtalk.Swapper, variant: str) -> list[fairtalk.Pair]:
    """Print the gender figures; return the pairs with an ambiguous swap."""
    leftover: Counter[str] = Counter()
    n_left = n_left_unkept = 0
    kept: Counter[str] = Counter()
    ambiguous: Counter[str] = Counter()
    candidates = []
    for pair in pairs:
        original = pair.original_side
        swapped = pair.b if original == "a" else pair.a
        words = Counter(w for w in _WORD.findall(swapped.lower().replace("\u2019", "'")) if w in MARKERS[original])
        kept_here = Counter(
            k.source.lower().replace("\u2019", "'") for k in swapper.swap(pair.a if original == "a" else pair.b).kept
        )
        kept.update(f"{k} ({n})" for k, n in kept_here.items())
        n_left += bool(words)
        n_left_unkept += bool(words - kept_here)
        leftover.update(words)
        hits = [s.source.lower() for s in pair.swaps if s.source.lower() in AMBIGUOUS]
        ambiguous.update(hits)
        if hits:
            candidates.append(pair)
    print(f"gender ({variant}): {len(pairs)} pairs from the held-out chats")
    print(
        f"leftover: {n_left} pairs ({100 * n_left / max(len(pairs), 1):.1f}%) keep a marker of the original group;"
        f" most common: {', '.join(f'{w} {n}' for w, n in leftover.most_common(12))}"
    )
    print(f"leftover without the terms kept on purpose: {n_left_unkept} pairs ({100 * n_left_unkept / max(len(pairs), 1):.1f}%)")
    print(
        f"ambiguous swaps: {sum(ambiguous.values())} in {len(candidates)} pairs;"
        f" {', '.join(f'{w} {n}' for w, n in ambiguous.most_common(15))}"
    )
    return candidates


def race_figures(pairs: list[fairtalk.Pair], swapper: fairtalk.Swapper, name: str) -> list[fairtalk.Pair]:
    """Print the race figures and pairs_check.json's; return the pairs with a swap of an ambiguous AAE word."""
    markers = race_markers()
    by_side = Counter(p.original_side for p in pairs)
    leftover: Counter[str] = Counter()
    n_left = n_left_plain = 0
    ambiguous: Counter[str] = Counter()
    candidates = []
    for pair in pairs:
        swapped = pair.b if pair.original_side == "a" else pair.a
        words = _found(swapped, markers[pair.original_side])
        for swap in pair.swaps:  # a marker inside a counterpart is no leftover ("bye" -> "bye felicia")
            words -= _found(swap.target, markers[pair.original_side])
        n_left += bool(words)
        n_left_plain += bool(words - Counter({w: n for w, n in words.items() if w in RACE_AMBIGUOUS}))
        leftover.update(words)
        hits = [s.source.lower() for s in pair.swaps if s.source_side == "b" and s.source.lower() in RACE_AMBIGUOUS]
        ambiguous.update(hits)
        if hits:
            candidates.append(pair)
    n = max(len(pairs), 1)
    print(f"{name}: {len(pairs)} pairs ({by_side['a']} Standard English originals, {by_side['b']} AAE originals)")
    print(
        f"leftover: {n_left} pairs ({100 * n_left / n:.1f}%) keep a word of the original side of the printed"
        f" list; most common: {', '.join(f'{w} {c}' for w, c in leftover.most_common(12))}"
    )
    print(f"leftover not counting AAE words that are also ordinary English: {n_left_plain} pairs ({100 * n_left_plain / n:.1f}%)")
    print(
        f"ambiguous AAE-word swaps: {sum(ambiguous.values())} in {len(candidates)} pairs;"
        f" {', '.join(f'{w} {c}' for w, c in ambiguous.most_common(20))}"
    )
    check = fairtalk.check_pairs(pairs, swapper)
    print(
        f"pairs_check.json: leftover {check.n_leftover} of {check.n_pairs} ({100 * check.leftover_share:.1f}%)"
        f" {dict(check.leftover_terms[:8])}; pairs with a kept term {check.n_pairs_with_kept}"
        f" {dict(check.kept[:10])}; ambiguous {dict(check.ambiguous[:10])}"
    )
    return candidates


def reswap(swapper: fairtalk.Swapper, lines: Path, out: Path | None) -> None:
    """Swap the originals of an earlier sample again, one row each, in its order."""
    rows = [json.loads(line) for line in lines.read_text(encoding="utf-8").splitlines() if line.strip()]
    new = []
    for row in rows:
        result = swapper.swap(row["original"])
        new.append(
            {
                "id": row["id"],
                "original": row["original"],
                "swapped": result.text,
                "swaps": [f"{s.source}->{s.target}" for s in result.swaps],
                "kept": [f"{k.source} ({k.reason})" for k in result.kept],
            }
        )
    changed = sum(r["swapped"] != o["swapped"] for r, o in zip(new, rows))
    print(f"re-swapped {len(new)} lines of {lines}: {changed} differ from the file's swapped side")
    if out:
        out.write_text("".join(json.dumps(r) + "\n" for r in new), encoding="utf-8")
        print(f"wrote them to {out}")


if __name__ == "__main__":
    main()
