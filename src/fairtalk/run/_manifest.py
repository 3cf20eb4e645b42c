"""The provenance of a scored axis: versions, hashes, thresholds and seeds, what it takes to trace and reproduce a result."""

from __future__ import annotations

import platform
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version

from fairtalk._jsonl import jsonable
from fairtalk._responses import ResponseSet
from fairtalk._version import __version__
from fairtalk.config import ScoreOptions
from fairtalk.inference import METHODS
from fairtalk.lexicons import Lexicon, lexicon_record
from fairtalk.measures import AnyMeasure
from fairtalk.results import (
    InputProvenance,
    LexiconProvenance,
    MeasureProvenance,
    Provenance,
    ScoringSettings,
    SourceRecord,
)

__all__ = ["measure_settings", "score_provenance"]


def _package_version(name: str) -> str:
    try:
        return version(name)
    except PackageNotFoundError:
        return "unknown"


def measure_settings(o: ScoreOptions) -> ScoringSettings:
    """The provenance's ``options``: the settings the measures and a judge were built with."""
    return ScoringSettings(
        distinct=o.distinct,
        offense=o.offense,
        offense_threshold=o.offense_threshold,
        sentiment_threshold=o.sentiment_threshold,
        judge_rubric=o.judge_rubric,
        judge_scale=o.judge_scale,
    )


def score_provenance(
    lexicon: Lexicon,
    measures: Sequence[AnyMeasure],
    rs: ResponseSet,
    o: ScoreOptions,
    *,
    n_permutations: int,
    clustered: bool,
    primary: Sequence[str],
) -> Provenance:
    """Versions, hashes, thresholds and seeds: what it takes to trace and reproduce a result scored with ``o``."""
    return Provenance(
        fairtalk_version=__version__,
        python=platform.python_version(),
        libraries={name: _package_version(name) for name in ("numpy", "scipy", "statsmodels")},
        # a custom lexicon's copy with it: a reader opens no path it names
        lexicon=LexiconProvenance.from_dict(jsonable(lexicon_record(lexicon))),
        measures=tuple(
            MeasureProvenance(name=m.name, keys=tuple(m.keys), kind=m.kind, version=m.version, config=jsonable(m.config))
            for m in measures
        ),
        options=measure_settings(o),
        seed=o.seed,
        alpha=o.alpha,
        correction=o.correction,
        n_resamples=o.n_resamples,
        n_permutations=n_permutations,
        mask_groups=o.mask_groups,
        drop_empty=o.drop_empty,
        exclude_truncated=o.exclude_truncated,
        binary_test=o.binary_test,
        count_test=o.count_test,
        clustered=clustered,
        power=o.power,
        margins=jsonable(dict(o.margins)),
        primary=tuple(sorted(primary)),
        methods=METHODS,
        input=InputProvenance(
            sources=tuple(SourceRecord(path=path, sha256=sha) for path, sha in rs.sources), summary=jsonable(rs.summary)
        ),
    )
