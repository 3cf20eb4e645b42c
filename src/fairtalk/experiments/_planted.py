"""Planted models: a base model made to answer group B with an offensive reply at rate p, audited against the truth.

Each :class:`~fairtalk.models._planted.PlantedResponder` wraps one base model, shared by all rates
through an in-memory memo (the base answers the same group-A wordings at every rate). The pairs
are built once; every planted model is audited on them with the offense and sentiment measures,
and each measure's recovered gap (``B - A``) is set beside its truth,
``rate * (1 - base_share)``, where ``base_share`` is the share of group-A answers the measure flags.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from fairtalk.config import AuditConfig, ScoreOptions
from fairtalk.counterfactual import Swapper
from fairtalk.models import DecodingSettings, PlantedResponder, Responder
from fairtalk.progress import ProgressReporter
from fairtalk.records import Coverage, Pair
from fairtalk.report import write_run
from fairtalk.results import AuditResult, DebiasComparison, DebiasedGap, PlantedGap
from fairtalk.run import run_axes

__all__ = ["PLANTED_KEYS", "PLANTED_RATES", "MemoResponder", "debiased_rows", "group_a_mapper", "planted_gaps"]

#: The planted rates of ``reproduce planted``: 0, 1, 2, 5 and 10 points.
PLANTED_RATES = (0.0, 0.01, 0.02, 0.05, 0.10)
#: The measure keys set beside the truth: the planted replies are offensive and clearly negative.
PLANTED_KEYS = ("offense_rate", "sentiment_negative")
_MEASURES = ("offense", "sentiment")


class MemoResponder(Responder):
    """A base model whose answers are kept by context, so several planted models ask it once per text.

    Meant for greedy decoding (one answer per text); the generation seeds are passed on for the first call only.
    """

    def __init__(self, base: Responder) -> None:
        self.base = base
        self.input_paths = base.input_paths
        self._answers: dict[str, str] = {}

    @property
    def fingerprint(self) -> str:
        """The base model's fingerprint."""
        return self.base.fingerprint

    def respond(self, contexts: Sequence[str], settings: DecodingSettings, *, seeds: Sequence[int]) -> list[str]:
        """The kept answer per context; the base model answers the new ones, once each."""
        new = list(dict.fromkeys(c for c in contexts if c not in self._answers))
        if new:
            first = {c: s for c, s in zip(contexts, seeds, strict=True)}
            answers = self.base.respond(new, settings, seeds=[first[c] for c in new])
            self._answers.update(zip(new, answers, strict=True))
        return [self._answers[c] for c in contexts]

    def close(self) -> None:
        """Close the base model."""
        self.base.close()


def group_a_mapper(swapper: Swapper, pairs: Sequence[Pair] = ()) -> Callable[[str], str | None]:
    """``text -> its group-A wording`` for a text that mentions group B only, else None.

    A pair's group-B side maps to its own group-A side (so the base model's answer is exactly
    the group-A one); any other text is swapped by ``swapper`` when it mentions group B only.
    """
    known = {pair.b: pair.a for pair in pairs}

    def to_group_a(text: str) -> str | None:
        if text in known:
            return known[text]
        result = swapper.swap(text)
        sides = {swap.source_side for swap in result.swaps}
        return result.text if sides == {"b"} else None

    return to_group_a


def _negated(bounds: tuple[float | None, float | None]) -> tuple[float | None, float | None]:
    """An interval of ``A - B`` as one of ``B - A`` (``0.0 - x``, so a zero stays ``0.0``, never ``-0.0``)."""
    lo, hi = bounds
    return (None if hi is None else 0.0 - hi, None if lo is None else 0.0 - lo)


def _gap_row(result: AuditResult, key: str, rate: float, n_planted: int, n_unmapped: int) -> PlantedGap:
    m = result.measure(key)
    base_share = float(m.a)
    truth = rate * (1.0 - base_share)
    ci = _negated(m.ci95)  # the audit bounds A - B
    gap = None if m.estimate is None else 0.0 - m.estimate  # 0.0 - x: no -0.0
    covered = None if ci[0] is None or ci[1] is None else bool(ci[0] - 1e-12 <= truth <= ci[1] + 1e-12)
    return PlantedGap(
        rate=rate,
        key=key,
        n_pairs=result.n_pairs,
        base_share=base_share,
        true_gap=truth,
        n_planted=n_planted,
        gap=gap,
        ci=ci,
        covered=covered,
        p_adjusted=m.p_adjusted,
        verdict=m.verdict,
        mde=m.mde,
        n_unmapped=n_unmapped,
    )


def planted_gaps(
    pairs: Sequence[Pair],
    coverage: Coverage,
    swapper: Swapper,
    base: Responder,
    *,
    rates: Sequence[float],
    seed: int,
    n_resamples: int,
    reporter: ProgressReporter,
    out_dir: Path | None = None,
    report_formats: tuple[str, ...] | None = ("json",),
    base_name: str = "",
    offense_only: bool = False,
) -> tuple[PlantedGap, ...]:
    """Audit one planted model per rate on ``pairs``; a :class:`PlantedGap` per rate and key of :data:`PLANTED_KEYS`.

    With ``out_dir``, each planted model's report goes to ``out_dir/p<rate in points>/``. With
    ``offense_only``, only the offense measure is scored (one key, so no correction within the family).
    """
    measures, keys = (_MEASURES[:1], PLANTED_KEYS[:1]) if offense_only else (_MEASURES, PLANTED_KEYS)
    lexicon = swapper.lexicon
    to_group_a = group_a_mapper(swapper, pairs)
    memo = base if isinstance(base, MemoResponder) else MemoResponder(base)
    n_unmapped = sum(group_a_mapper(swapper)(pair.b) != pair.a for pair in pairs)
    config = AuditConfig(
        model=memo,
        axes=(lexicon,),
        n_pairs=None,
        settings=DecodingSettings(),
        score=ScoreOptions(seed=seed, n_resamples=n_resamples, measures=measures),
    )
    rows: list[PlantedGap] = []
    for rate in rates:
        model = PlantedResponder(memo, to_group_a, rate=rate, seed=seed)
        n_planted = sum(model.planted(pair.b) is not None for pair in pairs)
        run = run_axes(
            config.updated({"model": model}),
            [lexicon],
            reporter,
            pairs={lexicon.axis: (pairs, coverage)},
            extra_manifest={"planted_rate": rate, "base_model": base_name},
        )
        if out_dir is not None:
            write_run(run, out_dir / f"p{rate * 100:g}", formats=report_formats)
        result = run.axes[lexicon.axis].result
        rows.extend(_gap_row(result, key, rate, n_planted, n_unmapped) for key in keys)
    return tuple(rows)


def debiased_rows(comparison: DebiasComparison, architecture: str = "seq2seq") -> tuple[DebiasedGap, ...]:
    """Each trained model's gap (``B - A``) per key of :data:`PLANTED_KEYS`, with its change from the baseline.

    ``architecture`` names the comparison's models (``seq2seq`` or ``retrieval``) on each row.
    """
    rows: list[DebiasedGap] = []
    for name, model in comparison.models.items():
        for key in PLANTED_KEYS:
            m = model.result.measure(key)
            change = comparison.gap_change(name, key)
            rows.append(
                DebiasedGap(
                    model=name,
                    key=key,
                    a=float(m.a),
                    b=float(m.b),
                    gap=float(m.b - m.a),
                    ci=_negated(m.ci95),
                    verdict=m.verdict,
                    p_adjusted=m.p_adjusted,
                    change=None if change is None else 0.0 - change.change,
                    change_ci=(None, None) if change is None else _negated(change.change_ci),
                    p_change=None if change is None else change.p_adjusted,
                    change_verdict=None if change is None else change.verdict,
                    architecture=architecture,
                )
            )
    return tuple(rows)
