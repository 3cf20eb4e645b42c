"""Draw the blind sample for judging the offense scorers: answers from the bare audit and from SmolLM2.

The pool holds the distinct answers of two sources:

- the bare audit's responses (``fairtalk audit``: builtin:minilm-retrieval on chitchat, gender and race);
- SmolLM2-135M-Instruct's answers in ``bench/data/llm_answers.jsonl`` (issue 25).

Offensive answers are rare, so a uniform sample would hold too few to measure precision. The
sample takes **every** answer that either scorer flags (profanity_check at 0.5, HateSonar's
offensive or hate class), up to ``--flagged``, and fills up to ``--n`` with a uniform draw of
the rest. Each row of the key file records its stratum and its inverse-probability weight, so
``bench/offense_eval.py`` estimates recall over the whole pool, not over the sample.

Two files in ``bench/data``:

- ``offense_sample.jsonl``: ``{"id", "text"}`` only, in a shuffled order: what annotators see
  (no scorer output, no group, no source);
- ``offense_sample_key.jsonl``: per id the source, axis, group, stratum, weight and both scores.

Run: ``.venv/bin/fairtalk audit -o /tmp/bare`` then
``.venv/bin/python bench/offense_sample.py --audit /tmp/bare [--n 420] [--flagged 160] [--seed 0]``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path

import numpy as np

import fairtalk

DATA = Path(__file__).resolve().parent / "data"


def _pool(audit: Path) -> list[dict[str, str]]:
    """Distinct answers with where they came from (the first occurrence of each text)."""
    seen: dict[str, dict[str, str]] = {}
    for axis in ("gender", "race"):
        responses = fairtalk.read_responses(audit / axis / "responses.jsonl")
        lexicon = fairtalk.load_lexicon(axis)
        for side, rows in (("a", responses.a), ("b", responses.b)):
            for r in rows:
                group = lexicon.groups[0] if side == "a" else lexicon.groups[1]
                seen.setdefault(r.response.strip(), {"source": "bare audit", "axis": axis, "group": group})
    for line in (DATA / "llm_answers.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        lexicon = fairtalk.load_lexicon(row["axis"])
        group = lexicon.groups[0] if row["side"] == "a" else lexicon.groups[1]
        seen.setdefault(row["answer"].strip(), {"source": "SmolLM2", "axis": row["axis"], "group": group})
    return [{"text": text, **meta} for text, meta in seen.items() if text]


def main() -> None:
    """Write the sample and its key."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--audit", type=Path, required=True, help="output folder of a bare `fairtalk audit`")
    parser.add_argument("--n", type=int, default=420)
    parser.add_argument("--flagged", type=int, default=160)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    pool = _pool(args.audit)
    texts = [row["text"] for row in pool]
    profanity = fairtalk.get_measure("offense", scorer="profanity_check").raw_scores(texts)
    sonar = fairtalk.get_measure("offense", scorer="hatesonar").raw_scores(texts)
    assert profanity is not None and sonar is not None
    flagged = np.flatnonzero((profanity >= 0.5) | (sonar >= 0.5))
    rest = np.setdiff1d(np.arange(len(pool)), flagged)
    rng = np.random.default_rng(args.seed)
    take_flagged = flagged if flagged.size <= args.flagged else rng.choice(flagged, args.flagged, replace=False)
    take_rest = rng.choice(rest, args.n - take_flagged.size, replace=False)
    weight = {"flagged": flagged.size / take_flagged.size, "rest": rest.size / take_rest.size}
    chosen = [(int(i), "flagged") for i in take_flagged] + [(int(i), "rest") for i in take_rest]
    rng.shuffle(chosen)
    with (
        (DATA / "offense_sample.jsonl").open("w", encoding="utf-8") as sample,
        (DATA / "offense_sample_key.jsonl").open("w", encoding="utf-8") as key,
    ):
        for i, stratum in chosen:
            row = pool[i]
            item = hashlib.sha256(row["text"].encode()).hexdigest()[:12]
            sample.write(json.dumps({"id": item, "text": row["text"]}, ensure_ascii=False) + "\n")
            key.write(
                json.dumps(
                    {
                        "id": item,
                        "source": row["source"],
                        "axis": row["axis"],
                        "group": row["group"],
                        "stratum": stratum,
                        "weight": weight[stratum],
                        "profanity_check": round(float(profanity[i]), 4),
                        "hatesonar": round(float(sonar[i]), 4),
                    }
                )
                + "\n"
            )
    print(
        f"pool {len(pool):,} distinct answers; flagged by either scorer {flagged.size:,}; "
        f"sample {len(chosen)} ({take_flagged.size} flagged, {take_rest.size} others)"
    )


if __name__ == "__main__":
    main()
