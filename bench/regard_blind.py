"""Regard scorers against fairtalk's blind hand labels of 2,400 published paper-004 continuations.

``bench/data/regard_blind_labels.jsonl`` holds our labels only (``{"seed", "line", "label",
"round"}``: the row of ``out_seed_<seed>_predictions.txt``); the texts stay in ``../shared/data``
and are read from there (the script stops with a message when they are absent). How they were
labelled: ``docs/regard_guideline.md`` (400 per group, identity terms masked, no classifier label
seen). Round 1 (600 texts, 2026-11-22) was read while the shipped classifier's third training set
was written; round 2 (1,800 texts, 2026-11-25) was labelled afterwards (``--round 2`` scores it
alone). ``bench/data/regard_blind_second_annotator.jsonl`` holds a second, independent annotator's
labels of 200 of the texts; the script prints their agreement first.

For each scorer, against the hand labels: 4-class agreement, macro-F1, F1 per label, and the
negative and positive rates per group with the pair gaps (man − woman, straight − gay,
white − black). Scorers: fairtalk's shipped classifier (``--regard`` to choose another) and
Sheng et al.'s classifier, whose labels ship with the published outputs.

Run: ``.venv/bin/python bench/regard_blind.py [--regard builtin]``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import fairtalk
from fairtalk.lexicons._identity import identity_terms
from fairtalk.prompts._regard_check import RegardCheck, check_labels, label_value

ROOT = Path(__file__).resolve().parents[1]
LABELS = ROOT / "bench" / "data" / "regard_blind_labels.jsonl"
OUTPUTS = ROOT.parent / "shared" / "data" / "arshiyaaggarwal__Robust-NLG-Bias-Eval" / "data" / "generated-outputs"
PAIRS = (("man", "woman"), ("straight person", "gay person"), ("white person", "black person"))


SECOND = ROOT / "bench" / "data" / "regard_blind_second_annotator.jsonl"


def blind_set(outputs: Path = OUTPUTS, labels: Path = LABELS, rounds: tuple[int, ...] = (1, 2)) -> list[dict]:
    """The hand-labelled records of ``rounds`` with their text, group and Sheng et al.'s label, read from the published outputs."""
    frame = fairtalk.read_published(outputs).frame
    line = frame.groupby("seed").cumcount().to_numpy()
    index = {(int(s), int(n)): i for i, (s, n) in enumerate(zip(frame["seed"], line))}
    out = []
    for record in map(json.loads, labels.read_text(encoding="utf-8").splitlines()):
        if record.get("round", 1) not in rounds:
            continue
        i = index[(record["seed"], record["line"])]
        out.append(
            {
                "id": f"{record['seed']}:{record['line']}",
                "label": label_value(record["label"]),
                "text": str(frame["text"].iloc[i]),
                "group": str(frame["group"].iloc[i]),
                "sheng": int(frame["label"].iloc[i]),
            }
        )
    return out


def annotator_agreement(first: Path = LABELS, second: Path = SECOND) -> str:
    """One line per round: how often the second annotator agrees with the first, and Cohen's kappa."""
    from sklearn.metrics import cohen_kappa_score

    def read(path: Path) -> list[dict]:
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]

    gold = {(r["seed"], r["line"]): r["label"] for r in read(first)}
    lines = []
    for round_ in sorted({r.get("round", 1) for r in read(second)}):
        pairs = [(gold[(r["seed"], r["line"])], r["label"]) for r in read(second) if r.get("round", 1) == round_]
        a, b = zip(*pairs)
        agree = sum(x == y for x, y in pairs)
        lines.append(
            f"round {round_}: the second annotator agrees on {agree} of {len(pairs)} "
            f"(Cohen's kappa {cohen_kappa_score(a, b):.2f})"
        )
    return "; ".join(lines)


def report(name: str, check: RegardCheck) -> None:
    """Print one scorer's figures as Markdown."""
    f1 = ", ".join(f"{k} {v:.2f}" for k, v in check.f1.items())
    print(f"\n### {name}: agreement {check.agreement:.3f}, macro-F1 {check.macro_f1:.3f} (F1: {f1}); n {check.n}")
    print("| group | negative % gold / scorer | positive % gold / scorer | other % gold / scorer |\n|---|---:|---:|---:|")
    for group, rates in check.rates.items():
        cells = [f"{100 * rates['gold'][k]:.0f} / {100 * rates['predicted'][k]:.0f}" for k in ("negative", "positive", "other")]
        print(f"| {group} | " + " | ".join(cells) + " |")
    print(
        "\n| gap | negative pts gold / scorer | scorer − gold, 95% CI | positive pts gold / scorer | scorer − gold, 95% CI |"
        "\n|---|---:|---:|---:|---:|"
    )
    for pair, gap in check.gaps.items():
        cells = []
        for label in ("negative", "positive"):
            added = check.instrument[pair][label]
            cells.append(
                f"{100 * gap['gold'][label]:+.0f} / {100 * gap['predicted'][label]:+.0f} | "
                f"{100 * added['difference']:+.0f} [{100 * added['low']:+.0f}, {100 * added['high']:+.0f}]"
            )
        print(f"| {pair} | " + " | ".join(cells) + " |")


def main() -> None:
    """Print the figures for fairtalk's classifier and Sheng et al.'s labels."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--regard", default="builtin", help="fairtalk regard scorer: builtin, path:DIR or hf:MODEL")
    parser.add_argument(
        "--round", type=int, choices=(1, 2), action="append", help="score only this labelling round (repeatable; default both)"
    )
    args = parser.parse_args()
    if not OUTPUTS.is_dir():
        sys.exit(f"the published outputs are not at {OUTPUTS}: nothing to evaluate")
    print(annotator_agreement())
    gold = blind_set(rounds=tuple(args.round or (1, 2)))
    groups = sorted({g["group"] for g in gold})
    ours = fairtalk.Regard(scorer=args.regard, mask_terms=identity_terms(groups)).labels([g["text"] for g in gold])
    counts = {
        name: sum(g["label"] == v for g in gold) for name, v in zip(("negative", "neutral", "positive", "other"), (-1, 0, 1, 2))
    }
    print(f"{len(gold)} hand-labelled texts: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    report(f"fairtalk ({args.regard})", check_labels(gold, {g["id"]: int(v) for g, v in zip(gold, ours)}, pairs=PAIRS))
    report("Sheng et al. (published labels)", check_labels(gold, {g["id"]: g["sheng"] for g in gold}, pairs=PAIRS))


if __name__ == "__main__":
    main()
