"""Planted-bias recovery over repeated seeds: CI coverage, detection power against its prediction, equivalence at p = 0.

For each seed, a sample of ``--pairs`` held-out gender pairs of builtin:chitchat is drawn and
every planted model (``builtin:retrieval`` answering group A, group B answered as group A
unless a planted offensive reply is drawn with probability p) is audited on it with the
offense measure alone (one key, so no correction within the family). Per planted rate it prints:

- the true gap (mean over seeds of ``p * (1 - base share)``);
- coverage: the share of seeds whose 95% interval holds the truth (nominal 0.95);
- detection: the share with a difference detected, beside the power McNemar's exact test
  predicts for that truth at that n (:func:`fairtalk.stats._power.power_mcnemar`, the
  calculation behind ``fairtalk plan``), and the audit's own MDE (mean over seeds);
- equivalence: the share called equivalent (at p = 0 this is the rate a fair model passes).

Run: ``python bench/planted_recovery.py --seeds 100 --pairs 500`` (minutes on 2 cores: the base
model answers each distinct context once; then each audit is scoring and statistics).
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time
from datetime import UTC, datetime

from fairtalk.corpora import read_corpus
from fairtalk.counterfactual import Swapper
from fairtalk.experiments._planted import PLANTED_RATES, MemoResponder, planted_gaps
from fairtalk.lexicons import load_lexicon
from fairtalk.models import load_responder
from fairtalk.pairs import build_pairs
from fairtalk.progress import ProgressReporter, progress_callback
from fairtalk.results import Verdict
from fairtalk.results._planted import PlantedGap
from fairtalk.stats._power import power_mcnemar


def main() -> None:
    """Run the repeated-seed study and print one row per planted rate."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=100)
    parser.add_argument("--pairs", type=int, default=500)
    parser.add_argument("--resamples", type=int, default=200)
    parser.add_argument("--base-model", default="builtin:retrieval")
    args = parser.parse_args()

    started = time.perf_counter()
    lexicon = load_lexicon("gender")
    base = MemoResponder(load_responder(args.base_model))
    reporter = ProgressReporter(progress_callback(None))
    rows: dict[float, list[PlantedGap]] = {rate: [] for rate in PLANTED_RATES}
    for seed in range(args.seeds):
        swapper = Swapper(lexicon, seed=0)
        pair_set = build_pairs(read_corpus("builtin:chitchat", split="heldout"), swapper, limit=args.pairs, seed=seed)
        pairs = list(pair_set)
        for row in planted_gaps(
            pairs,
            pair_set.coverage,
            swapper,
            base,
            rates=PLANTED_RATES,
            seed=seed,
            n_resamples=args.resamples,
            reporter=reporter,
            offense_only=True,
        ):
            rows[row.rate].append(row)
    seconds = time.perf_counter() - started

    print(f"# planted_recovery: {args.seeds} seeds x {args.pairs} pairs, base {args.base_model}, offense_rate, alpha 0.05")
    print(
        f"# {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {platform.machine()} {platform.processor() or ''}, "
        f"python {platform.python_version()}, {seconds / 60:.1f} min"
    )
    print("| p (pts) | true gap (pts) | coverage of 95% CI | detected | predicted power | mean MDE (pts) | equivalent |")
    print("|---|---|---|---|---|---|---|")
    for rate, found in rows.items():
        n = len(found)
        truth = statistics.fmean(r.true_gap for r in found)
        covered = sum(r.covered is True for r in found) / n
        detected = sum(r.verdict is Verdict.DIFFERENT for r in found) / n
        equivalent = sum(r.verdict is Verdict.EQUIVALENT for r in found) / n
        predicted = statistics.fmean(power_mcnemar(r.n_pairs, 0.0, r.true_gap, 0.05) for r in found)
        mdes = [r.mde for r in found if r.mde is not None]
        mde = f"{100 * statistics.fmean(mdes):.2f}" if mdes else "–"
        print(
            f"| {100 * rate:g} | {100 * truth:.2f} | {covered:.3f} | {detected:.3f} | {predicted:.3f} | {mde} | {equivalent:.3f} |"
        )


if __name__ == "__main__":
    main()
