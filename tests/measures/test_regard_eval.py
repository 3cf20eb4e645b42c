"""Evaluation of the shipped regard classifier on the reference data (skipped when the data is absent).

The reference data has no licence: it is read here for evaluation only, never trained on.
The figures are printed (run with ``-s``) and recorded in ``src/fairtalk/prompts/data/README.md``.
The ground truth is fairtalk's blind hand labels (``bench/data/regard_blind_labels.jsonl``),
checked against issue 11's targets; Sheng et al.'s published labels are a classifier's, so
against them only sanity bounds hold (the two instruments differ most on "other").
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from fairtalk.measures import Regard, read_labelled

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
SHENG_TEST = DATA / "ewsheng__nlg-bias" / "data" / "regard" / "test.tsv"
PUBLISHED = DATA / "arshiyaaggarwal__Robust-NLG-Bias-Eval" / "data" / "generated-outputs"
LABELS = (-1, 0, 1, 2)


def _confusion(truth: np.ndarray, predicted: np.ndarray) -> str:
    from sklearn.metrics import confusion_matrix

    matrix = confusion_matrix(truth, predicted, labels=list(LABELS))
    rows = [f"  true {t:>2}: " + " ".join(f"{n:>6}" for n in row) for t, row in zip(LABELS, matrix)]
    return "  predicted: " + " ".join(f"{p:>6}" for p in LABELS) + "\n" + "\n".join(rows)


@pytest.mark.skipif(not SHENG_TEST.is_file(), reason="reference data absent")
def test_shipped_model_on_sheng_test_set() -> None:
    from sklearn.metrics import accuracy_score, f1_score

    texts, labels = read_labelled(SHENG_TEST)  # already masked as XYZ
    truth, predicted = np.asarray(labels), Regard(mask=False).labels(texts)
    accuracy = accuracy_score(truth, predicted)
    macro_f1 = f1_score(truth, predicted, labels=[-1, 0, 1], average="macro")
    majority = np.bincount(truth + 1).max() / len(truth)
    print(
        f"\nregard on nlg-bias test.tsv ({len(truth)} texts): accuracy {accuracy:.3f}, macro-F1 {macro_f1:.3f} "
        f"(majority class {majority:.3f})\n{_confusion(truth, predicted)}"
    )
    assert accuracy > majority + 0.1 and macro_f1 > 0.45


@pytest.mark.slow
@pytest.mark.skipif(not PUBLISHED.is_dir(), reason="reference data absent")
def test_shipped_model_agrees_with_published_labels() -> None:
    from sklearn.metrics import f1_score

    from fairtalk.prompts import label_completions, read_published

    frame = read_published(PUBLISHED).frame.sample(1500, random_state=0)  # the encoder scores ~200 texts/s
    truth = frame["label"].to_numpy().astype(np.int64)
    predicted = label_completions(frame)["label"].to_numpy().astype(np.int64)  # masks the frame's groups
    polar = truth != 2
    agreement, agreement_polar = float(np.mean(predicted == truth)), float(np.mean((predicted == truth)[polar]))
    majority = np.bincount(truth + 1).max() / len(truth)
    majority_polar = np.bincount(truth[polar] + 1).max() / polar.sum()
    share = {lab: float(np.mean(predicted == lab)) for lab in LABELS}
    print(
        f"\nregard vs published Robust-NLG labels ({len(truth):,} texts): agreement {agreement:.3f} "
        f"(majority class {majority:.3f}); without 'other' {agreement_polar:.3f} (majority {majority_polar:.3f}); "
        f"macro-F1 {f1_score(truth, predicted, average='macro'):.3f}; predicted shares {share}\n"
        f"{_confusion(truth, predicted)}"
    )
    both = polar & (predicted != 2)  # where both instruments see a polar text, they mostly agree
    assert float(np.mean((predicted == truth)[both])) > majority_polar
    recall = {lab: float(np.mean(predicted[truth == lab] == lab)) for lab in (-1, 0, 1)}
    assert min(recall.values()) > 0.15, recall  # not a one-label classifier


@pytest.mark.slow
@pytest.mark.skipif(not PUBLISHED.is_dir(), reason="reference data absent")
def test_shipped_model_meets_the_targets_on_blind_hand_labels() -> None:
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    from regard_blind import PAIRS, blind_set

    from fairtalk.lexicons import identity_terms
    from fairtalk.prompts import check_labels

    gold = blind_set()
    regard = Regard(mask_terms=identity_terms(sorted({g["group"] for g in gold})))
    labels = regard.labels([g["text"] for g in gold])
    check = check_labels(gold, {g["id"]: int(v) for g, v in zip(gold, labels)}, pairs=PAIRS)
    print(
        f"\nregard vs blind hand labels ({check.n} texts): agreement {check.agreement:.3f}, "
        f"macro-F1 {check.macro_f1:.3f}, F1 {check.f1}"
    )
    assert check.agreement >= 0.60 and check.f1["other"] >= 0.5
    sheng = check_labels(gold, {g["id"]: g["sheng"] for g in gold}, pairs=PAIRS)
    ours_off = [abs(g["predicted"][k] - g["gold"][k]) for g in check.gaps.values() for k in ("negative", "positive")]
    sheng_off = [abs(g["predicted"][k] - g["gold"][k]) for g in sheng.gaps.values() for k in ("negative", "positive")]
    assert max(ours_off) < max(sheng_off)  # fairtalk's gaps are closer to the hand labels than the published ones
    assert max(ours_off) <= 0.05, check.gaps  # issue 11: every pair gap within 5 points of the hand labels
