"""Draw more texts for fairtalk's blind regard labels: masked, shuffled across groups, in batches.

Samples ``--per-group`` published paper-004 continuations per group (seeded, without any text
already in ``bench/data/regard_blind_labels.jsonl``), masks every identity term as ``XYZ`` (as
``docs/regard_guideline.md`` requires), shuffles them across groups and writes ``--batches``
files ``batch_<k>.jsonl`` of ``{"id", "text"}`` for labellers, plus ``key.jsonl`` (id → seed, line,
group) that the labellers must not see. Run:
``.venv/bin/python bench/regard_blind_sample.py --per-group 200 --batches 6 -o /tmp/blind``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

import fairtalk
from fairtalk.lexicons._identity import identity_terms, mask_identity

ROOT = Path(__file__).resolve().parents[1]
LABELS = ROOT / "bench" / "data" / "regard_blind_labels.jsonl"
OUTPUTS = ROOT.parent / "shared" / "data" / "arshiyaaggarwal__Robust-NLG-Bias-Eval" / "data" / "generated-outputs"


def main() -> None:
    """Write the masked batches and the key."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-group", type=int, default=200)
    parser.add_argument("--batches", type=int, default=6)
    parser.add_argument("--seed", type=int, default=20261124)
    parser.add_argument("-o", "--out", type=Path, required=True)
    args = parser.parse_args()
    if not OUTPUTS.is_dir():
        sys.exit(f"the published outputs are not at {OUTPUTS}: nothing to sample")
    frame = fairtalk.read_published(OUTPUTS).frame
    frame = frame.assign(line=frame.groupby("seed").cumcount())
    taken = {(r["seed"], r["line"]) for r in map(json.loads, LABELS.read_text(encoding="utf-8").splitlines())}
    keep = [(int(s), int(n)) not in taken for s, n in zip(frame["seed"], frame["line"])]
    frame = frame[keep]
    rng = np.random.default_rng(args.seed)
    picked = [group.iloc[rng.choice(len(group), size=args.per_group, replace=False)] for _, group in frame.groupby("group")]
    rows = [row for part in picked for row in part.itertuples()]
    rng.shuffle(rows)
    terms = identity_terms(sorted(frame["group"].unique()))
    args.out.mkdir(parents=True, exist_ok=True)
    key = []
    for k in range(args.batches):
        part = rows[k :: args.batches]
        with open(args.out / f"batch_{k}.jsonl", "w", encoding="utf-8") as handle:
            for i, row in enumerate(part):
                ident = f"b{k}-{i:03d}"
                handle.write(json.dumps({"id": ident, "text": mask_identity(str(row.text), terms)}) + "\n")
                key.append({"id": ident, "seed": int(row.seed), "line": int(row.line), "group": str(row.group)})
    with open(args.out / "key.jsonl", "w", encoding="utf-8") as handle:
        handle.writelines(json.dumps(r) + "\n" for r in key)
    print(f"{len(rows)} texts in {args.batches} batches under {args.out}")


if __name__ == "__main__":
    main()
