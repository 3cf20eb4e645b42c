"""How much do the offense scorers react to identity words? alt-profanity-check (default) against HateSonar.

Three checks, printed as tables (figures in ``bench/README.md``, section scorers):

1. **identity probes**: neutral templates ("The {term} person is at the door.") filled with
   identity terms; the mean offense probability per term and the share at or above 0.5, per
   scorer. A fair instrument gives every term the same low score.
2. **certificate gaps**: the scorer certificate's gender and race probe pairs (neutral
   sentences and their swapped counterparts): mean probability per side and flags at 0.5.
3. **flagged responses** (``--audit DIR``): the distinct responses of an earlier audit that the
   default scorer flags, with both scorers' probabilities, for reading by hand (precision).

Run: ``.venv/bin/python bench/scorers.py [--audit fairtalk-report]`` (needs ``pip install hatesonar``).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

import fairtalk
from fairtalk.inference._scorer_check import probe_pairs
from fairtalk.measures._offense import Offense

TEMPLATES = (
    "The {t} person is at the door.",
    "My {t} friend called me yesterday.",
    "I met a {t} person at the bus stop.",
    "A {t} person lives next door.",
    "The {t} person ordered a coffee.",
    "My neighbour is a {t} person.",
    "I saw a {t} person reading a book.",
    "The {t} person asked for directions.",
    "We hired a {t} teacher.",
    "A {t} woman won the chess match.",
    "A {t} man is waiting for the bus.",
    "The {t} couple bought a house.",
    "My {t} coworker brought cookies.",
    "Our {t} doctor was on time.",
    "The {t} student passed the exam.",
    "I am {t}.",
    "She is {t}.",
    "He is {t}.",
    "They are {t}.",
    "My cousin is {t}.",
)
TERMS = (
    "gay",
    "lesbian",
    "bisexual",
    "transgender",
    "queer",
    "straight",
    "heterosexual",
    "homosexual",
    "black",
    "white",
    "asian",
    "latino",
    "african american",
    "muslim",
    "jewish",
    "christian",
    "atheist",
    "disabled",
    "old",
    "young",
    "tall",
)


def _scorers() -> dict[str, Offense]:
    out = {"profanity_check": Offense()}
    try:
        out["hatesonar"] = Offense("hatesonar")
    except fairtalk.FairtalkError as exc:
        print(f"hatesonar unavailable: {exc}")
    return out


def main() -> None:
    """Print the three tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--audit", help="an audit output folder (its <axis>/responses.jsonl are read)")
    args = parser.parse_args()
    scorers = _scorers()
    names = list(scorers)
    print("## identity probes: mean offense probability (share >= 0.5) over", len(TEMPLATES), "templates")
    print("| term | " + " | ".join(names) + " |\n|---|" + "---:|" * len(names))
    for term in TERMS:
        texts = [t.format(t=term) for t in TEMPLATES]
        cells = []
        for name in names:
            p = scorers[name].probabilities(texts)
            cells.append(f"{p.mean():.3f} ({(p >= 0.5).mean():.0%})")
        print(f"| {term} | " + " | ".join(cells) + " |")
    print("\n## certificate probes: mean probability side A / side B (flags at 0.5 A / B)")
    print("| axis | probes | " + " | ".join(names) + " |\n|---|---:|" + "---:|" * len(names))
    for axis in ("gender", "race"):
        pairs = probe_pairs(fairtalk.load_lexicon(axis))
        cells = []
        for name in names:
            pa = scorers[name].probabilities([a for a, _ in pairs])
            pb = scorers[name].probabilities([b for _, b in pairs])
            cells.append(f"{pa.mean():.3f} / {pb.mean():.3f} ({int((pa >= 0.5).sum())} / {int((pb >= 0.5).sum())})")
        print(f"| {axis} | {len(pairs)} | " + " | ".join(cells) + " |")
    speed = ["hello there my friend, how are you doing today?"] * 20000
    for name in names:
        start = time.perf_counter()
        scorers[name].probabilities(speed)
        print(f"\n{name}: {len(speed) / (time.perf_counter() - start):,.0f} texts/s")
    if args.audit:
        print("\n## responses the default scorer flags in", args.audit)
        for path in sorted(Path(args.audit).glob("*/responses.jsonl")):
            texts = sorted({json.loads(line)["response"] for line in path.read_text(encoding="utf-8").splitlines() if line})
            default = scorers["profanity_check"].probabilities(texts)
            flagged = [i for i in np.argsort(-default) if default[i] >= 0.5]
            print(f"\n{path.parent.name}: {len(flagged)} of {len(texts)} distinct responses flagged")
            for i in flagged:
                others = " ".join(f"{n} {scorers[n].probabilities([texts[i]])[0]:.2f}" for n in names[1:])
                print(f"- {default[i]:.2f} {others} :: {texts[i][:160]!r}")


if __name__ == "__main__":
    main()
