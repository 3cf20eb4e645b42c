"""How good are the offense scorers on chatbot answers? Precision, recall and per-group error against blind hand labels.

Reads the sample of ``bench/offense_sample.py`` (``bench/data/offense_sample_key.jsonl``: stratum,
weight, group and both scorers' probabilities) and the hand labels of
``docs/offense_guideline.md`` (``bench/data/offense_labels_A.jsonl`` on every item,
``offense_labels_B.jsonl`` on the first 100). Every figure is weighted by the inverse of each
item's inclusion probability, so it estimates the whole pool of distinct answers, not the
flag-heavy sample; 95% intervals come from a stratified bootstrap of items.

For each scorer (alt-profanity-check and HateSonar at 0.5) it prints precision, recall, and per
group the false-positive rate (clean answers flagged) and the false-negative rate (offensive
answers missed), and the agreement of the two annotators (Cohen's κ).

Run: ``.venv/bin/python bench/offense_eval.py [--resamples 2000]``.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parent / "data"
SCORERS = ("profanity_check", "hatesonar")
#: Below this many offensive answers, recall and the missed share are not estimated (an interval of 2 is no estimate).
MIN_POSITIVES = 10


@dataclass(frozen=True)
class Items:
    """The labelled items, aligned: label, weight, stratum, group, source and each scorer's flag."""

    label: np.ndarray
    weight: np.ndarray
    stratum: np.ndarray
    group: np.ndarray
    source: np.ndarray
    flags: dict[str, np.ndarray]


def _rows(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def load(labels: str = "offense_labels_A.jsonl") -> Items:
    """The key joined with one annotator's labels (items without a label are left out)."""
    key = {row["id"]: row for row in _rows(DATA / "offense_sample_key.jsonl")}
    given = {row["id"]: int(row["offensive"]) for row in _rows(DATA / labels)}  # type: ignore[call-overload]
    ids = [i for i in key if i in given]
    return Items(
        label=np.array([given[i] for i in ids]),
        weight=np.array([float(key[i]["weight"]) for i in ids]),  # type: ignore[arg-type]
        stratum=np.array([key[i]["stratum"] for i in ids]),
        group=np.array([key[i]["group"] for i in ids]),
        source=np.array([key[i]["source"] for i in ids]),
        flags={s: np.array([float(key[i][s]) >= 0.5 for i in ids]) for s in SCORERS},  # type: ignore[arg-type]
    )


def rates(flag: np.ndarray, label: np.ndarray, weight: np.ndarray) -> dict[str, float]:
    """Weighted precision, recall, false-positive rate and false-negative rate (NaN where undefined)."""

    def ratio(num: np.ndarray, den: np.ndarray) -> float:
        d = float((weight * den).sum())
        return float((weight * num).sum()) / d if d > 0 else float("nan")

    pos, neg = label == 1, label == 0
    return {
        "precision": ratio(flag & pos, flag),
        "recall": ratio(flag & pos, pos),
        "false_positive": ratio(flag & neg, neg),
        "false_negative": ratio(~flag & pos, pos),
    }


def bootstrap(items: Items, scorer: str, mask: np.ndarray, resamples: int, seed: int = 0) -> dict[str, tuple[float, float]]:
    """95% intervals of :func:`rates` on the items in ``mask``, resampling items within each stratum."""
    rng = np.random.default_rng(seed)
    strata = [np.flatnonzero(items.stratum == s) for s in np.unique(items.stratum)]
    draws: dict[str, list[float]] = {}
    for _ in range(resamples):
        take = np.concatenate([rng.choice(s, s.size) for s in strata])
        take = take[mask[take]]
        for name, value in rates(items.flags[scorer][take], items.label[take], items.weight[take]).items():
            draws.setdefault(name, []).append(value)
    return {name: (float(np.nanpercentile(v, 2.5)), float(np.nanpercentile(v, 97.5))) for name, v in draws.items()}


def kappa(first: str = "offense_labels_A.jsonl", second: str = "offense_labels_B.jsonl") -> tuple[float, float, int]:
    """Cohen's κ, observed agreement and the number of items both annotators labelled."""
    from sklearn.metrics import cohen_kappa_score

    a = {row["id"]: int(row["offensive"]) for row in _rows(DATA / first)}  # type: ignore[call-overload]
    b = {row["id"]: int(row["offensive"]) for row in _rows(DATA / second)}  # type: ignore[call-overload]
    both = [i for i in a if i in b]
    x, y = [a[i] for i in both], [b[i] for i in both]
    return float(cohen_kappa_score(x, y)), float(np.mean(np.array(x) == np.array(y))), len(both)


def _cell(value: float, interval: tuple[float, float] | None = None) -> str:
    if value != value:
        return "n/a"
    return f"{value:.3f}" if interval is None else f"{value:.3f} [{interval[0]:.2f}, {interval[1]:.2f}]"


def _precision(hits: int, flags: int) -> str:
    """Precision with its exact (Clopper-Pearson) 95% interval: every flag lies in the ``flagged`` stratum, drawn uniformly."""
    from scipy.stats import binomtest

    if flags == 0:
        return "n/a (no flags)"
    low, high = binomtest(hits, flags).proportion_ci(method="exact")
    return f"{hits / flags:.3f} [{low:.3f}, {high:.3f}] ({hits} of {flags} flags)"


def main() -> None:
    """Print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--resamples", type=int, default=2000)
    args = parser.parse_args()
    items = load()
    every = np.ones(items.label.size, dtype=bool)
    n_off = int(items.label.sum())
    share = float((items.weight * items.label).sum() / items.weight.sum())
    print(f"{items.label.size} labelled answers, {n_off} offensive; weighted share of the pool offensive: {share:.3f}")
    k, observed, n_both = kappa()
    print(f"agreement of the two annotators on {n_both} answers: Cohen's kappa {k:.2f}, observed {observed:.2f}")
    print("\n| scorer | answers | precision | recall |\n|---|---|---|---|")
    for scorer in SCORERS:
        for source in ("all", "bare audit", "SmolLM2"):
            mask = every if source == "all" else items.source == source
            r = rates(items.flags[scorer][mask], items.label[mask], items.weight[mask])
            ci = bootstrap(items, scorer, mask, args.resamples) if source == "all" else None
            flagged, positives = items.flags[scorer][mask], items.label[mask] == 1
            found = f"{int((flagged & positives).sum())} of {int(positives.sum())} offensive answers flagged"
            recall = (
                _cell(r["recall"], ci and ci["recall"]) if positives.sum() >= MIN_POSITIVES else f"too few to estimate ({found})"
            )
            print(f"| {scorer} | {source} | {_precision(int((flagged & positives).sum()), int(flagged.sum()))} | {recall} |")
    print("\n| scorer | group | clean answers flagged | offensive answers missed |\n|---|---|---|---|")
    for scorer in SCORERS:
        for group in sorted(set(items.group)):
            mask = items.group == group
            r = rates(items.flags[scorer][mask], items.label[mask], items.weight[mask])
            missed = _cell(r["false_negative"]) if (items.label[mask] == 1).sum() >= MIN_POSITIVES else "too few offensive"
            print(f"| {scorer} | {group} | {_cell(r['false_positive'])} | {missed} |")


if __name__ == "__main__":
    main()
