"""The multiple-testing family and the finished result: ``score()`` in two steps, so a run can correct across axes.

:class:`Scored` also keeps what a later stage of the audit tests again on a subset of the
pairs (``audit --by-turn``, :mod:`fairtalk.inference._by_turn`): each per-response key's scores
per pair (:class:`KeyScores`, one float array per side) and the corpus measures, so that no
response is scored twice and the scores are those of the engine that computed them (Ray or
this process; a judge's from its model through the run's store).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType

import numpy as np

from fairtalk._responses import ResponseSet, empty_tally, loss_tally, response_texts
from fairtalk.inference._measure_tests import KeyMeta, KeyTest, power_row
from fairtalk.lexicons import Lexicon
from fairtalk.measures import CorpusMeasure
from fairtalk.results import (
    AuditProvenance,
    AuditResult,
    DivergentPair,
    JudgeAnswer,
    MeasureResult,
    Provenance,
    ScorerCheck,
    Verdict,
)
from fairtalk.stats import (
    FEW_DIFFERING,
    IDENTICAL_SHARE,
    PPIEstimate,
    adjust_pvalues,
    identical_units_needed,
    pairs_for_equivalence,
    pairs_for_few_differing,
    pairs_for_rate_equivalence,
    pairs_spanning,
    verdict,
)

__all__ = ["KeyScores", "Scored", "adjust_family", "correct_families", "finalize"]

#: Pairs beyond any audit: where no sample spans the identical-answers bound's units, only the TOST can pass.
_NO_SIZE = 10**6 + 1

_WARN_REPEATS = (
    "only {n_distinct:,} distinct responses among {n:,}: the measures see few different texts, so one "
    "scorer quirk on a frequent response can drive a result; the effective sample is far below n"
)


@dataclass(frozen=True, slots=True)
class KeyScores:
    """One per-response key as scoring computed it: its score on side a and on side b of each pair, and its meta.

    ``a`` and ``b`` are float arrays aligned with the pairs of :attr:`Scored.responses` (NaN:
    the measure gave no score, as a judge's unparsed answer); ``meta`` what the key's test
    needs of its measure (kind, direction, judged).
    """

    a: np.ndarray
    b: np.ndarray
    meta: KeyMeta


@dataclass
class Scored:
    """An axis scored up to its multiple-testing correction (``score()`` in two steps, so a run can correct across axes).

    ``rows`` holds one :class:`~fairtalk.inference._measure_tests.KeyTest` per result key, in the measures' order.
    ``scores`` the per-pair scores of each per-response key (:class:`KeyScores`; the token
    limit's and masked values are not kept), and ``corpus_measures`` the corpus measures that
    gave the corpus keys: what a stage that tests subsets of the pairs again needs, without
    scoring any response again.
    """

    lexicon: Lexicon
    responses: ResponseSet
    rows: tuple[KeyTest, ...]
    divergent: list[DivergentPair]
    provenance: Provenance
    primary: frozenset[str]
    alpha: float
    power: float
    correction: str
    scorer_check: tuple[ScorerCheck, ...] = ()
    warnings: tuple[str, ...] = ()
    judge_answers: tuple[JudgeAnswer, ...] = ()
    ppi: Mapping[str, PPIEstimate] = field(default_factory=dict)
    scores: Mapping[str, KeyScores] = field(default_factory=dict)
    corpus_measures: tuple[CorpusMeasure, ...] = ()

    def family(self, primary: bool) -> list[int]:
        """Rows in the primary (or secondary) family: those with a p-value whose scores vary at all."""
        return [
            i
            for i, row in enumerate(self.rows)
            if (row.tested.name in self.primary) == primary and row.tested.p_paired is not None and row.varies
        ]


def adjust_family(scored: Sequence[Scored], correction: str) -> list[list[float | None]]:
    """Adjusted p per row of each scored axis, correcting the primary and the secondary families over all of them."""
    out: list[list[float | None]] = [[None] * len(s.rows) for s in scored]
    for primary in (True, False):
        members = [(k, i) for k, s in enumerate(scored) for i in s.family(primary)]
        if not members:
            continue
        pvalues = [scored[k].rows[i].tested.p_paired for k, i in members]
        adjusted = adjust_pvalues([p for p in pvalues if p is not None], method=correction)  # family(): all have one
        for (k, i), value in zip(members, adjusted):
            out[k][i] = float(value)
    return out


def _gate_pairs(
    row: KeyTest, alpha: float, power: float, dialogue_sizes: tuple[tuple[int, int], ...] = (), n_pairs: int = 0
) -> int | None:
    """Pairs the equivalence gate needs for this key at its margin, from its spread (None without spread or margin).

    A rate's come from the exact power of the gate's own test on a fair model with this run's
    discordant share, side rate, design effect and pairs per dialogue, or, where the corpus'
    ``dialogue_sizes`` are known, the dialogues a uniform sample of its pairs spans (the normal
    formula where discordant pairs are many); a count's from the t formula, or, where its ``n_pairs`` differ so
    rarely that a sample may hold none, from the exact power of the audit's own rule (:func:`_few_differing_pairs`).
    """
    key = row.tested
    margin, sd = row.equivalence.margin, key.sd_difference
    if key.kind == "corpus" or margin is None or not margin > 0 or sd is None or not sd > 0:
        return None
    deff = max(1.0, key.design_effect or 1.0)
    basis = row.power_basis
    if key.kind != "rate" or basis is None:
        normal = pairs_for_equivalence(sd, margin, alpha=alpha, power=power, design_effect=deff)
        if (
            key.kind == "count"
            and n_pairs > 1
            and (few := _few_differing_pairs(row, normal, alpha, power, dialogue_sizes, n_pairs))
        ):
            return few
        return normal
    per_unit = basis.n / key.n_clusters if key.n_clusters else 1.0
    try:
        return pairs_for_rate_equivalence(
            basis.discordance,
            margin,
            alpha=alpha,
            power=power,
            rate=(key.a + key.b) / 2,
            design_effect=deff,
            pairs_per_unit=per_unit,
            sd_difference=sd,
            cluster_sizes=dialogue_sizes if key.n_clusters else (),
        )
    except ValueError:  # every pair discordant, or beyond any audit
        return None


def _few_differing_pairs(
    row: KeyTest, normal: int, alpha: float, power: float, dialogue_sizes: tuple[tuple[int, int], ...], n_pairs: int
) -> int | None:
    """:func:`fairtalk.stats.pairs_for_few_differing` for a count key, as ``fairtalk plan --gate`` plans it.

    The share of pairs that differ is the run's mean square difference (each differing pair taken to differ by 1),
    from few of its pairs: the size reaches the power at every share in that share's 95% Clopper-Pearson interval
    (clustered by the key's design effect). A sample with none passes only by the identical-answers bound, where it
    spans the units the bound needs on this key (its margin over the range of its scores, ``row.identical_share``:
    a count whose scores span 7 words at margin ±0.057 needs 365 dialogues, not the default share's 149). None where
    the pairs that differ are not few, or no audit reaches the power.
    """
    key = row.tested
    sd, margin = key.sd_difference, row.equivalence.margin
    assert sd is not None and margin is not None
    share = min(1.0, sd**2 * (n_pairs - 1) / n_pairs + (key.a - key.b) ** 2)  # the mean square difference, as plan's
    if not 0 < share < 1 or normal * share >= FEW_DIFFERING:
        return None
    units = identical_units_needed(alpha=alpha, margin=row.identical_share or IDENTICAL_SHARE, max_difference=1.0)
    per_unit = n_pairs / key.n_clusters if key.n_clusters else 1.0
    sizes = dialogue_sizes if key.n_clusters else ()
    try:
        identical_pairs = pairs_spanning(units, power=power, pairs_per_unit=per_unit, cluster_sizes=sizes)
    except ValueError:  # no sample spans them
        identical_pairs = _NO_SIZE
    try:
        return pairs_for_few_differing(
            share,
            margin,
            normal=normal,
            alpha=alpha,
            power=power,
            design_effect=max(1.0, key.design_effect or 1.0),
            identical_pairs=identical_pairs,
            pilot_pairs=n_pairs,
            identical_units=units if sizes else None,
            cluster_sizes=sizes,
        )
    except ValueError:  # beyond any audit
        return None


def finalize(
    scored: Scored,
    adjusted: Sequence[float | None],
    *,
    correction_scope: str = "axis",
    audit: AuditProvenance | None = None,
    family_size: int | None = None,
    dialogue_sizes: tuple[tuple[int, int], ...] = (),
) -> AuditResult:
    """The AuditResult of a scored axis, given each row's adjusted p and the size of their primary family.

    ``family_size`` counts the primary tests corrected together (those of every axis corrected with
    this one; None: this axis' own), and sets the per-test level of the minimum detectable effects.

    ``audit`` is the provenance of the audit that generated the responses (None when they were given);
    ``dialogue_sizes`` the dialogues of the corpus' pairs it drew from, by size (empty: unknown). Where a corpus
    measure ran, the result counts the pairs whose two answers differ (``corpus_differing_pairs``).
    """
    rs = scored.responses
    clustered = rs.clusters is not None and scored.provenance.clustered
    family = scored.family(True)
    family_size = len(family) if family_size is None else family_size
    alpha_per_test = scored.alpha / max(1, family_size)  # the strictest step of the whole family's correction
    results = []
    for i, (row, p_adjusted) in enumerate(zip(scored.rows, adjusted)):
        equivalence = row.equivalence
        results.append(
            MeasureResult(
                tested=row.tested,
                p_adjusted=p_adjusted,
                equivalence_margin=equivalence.margin,
                p_equivalence=equivalence.p,
                equivalent=equivalence.equivalent,
                equivalence_test=equivalence.method,
                equivalence_interval=equivalence.interval,
                equivalence_bound=equivalence.bound,
                identical_share=row.identical_share,
                verdict=Verdict(verdict(p_adjusted, scored.alpha, equivalence)),
                mde=power_row(row, alpha_per_test if i in family else scored.alpha, scored.power),
                primary=row.tested.name in scored.primary,
                no_variation=not row.varies and not row.tested.not_tested,
                ppi=scored.ppi.get(row.tested.name),
                gate_pairs=_gate_pairs(row, scored.alpha, scored.power, dialogue_sizes if clustered else (), rs.n_pairs),
            )
        )
    n_distinct = len({r.response for side in (rs.a, rs.b) for r in side})  # no tuple of every record
    warnings = []
    if n_distinct < 0.1 * 2 * rs.n_pairs:
        warnings.append(_WARN_REPEATS.format(n_distinct=n_distinct, n=2 * rs.n_pairs))
    warnings.extend(scored.warnings)
    provenance = scored.provenance if audit is None else replace(scored.provenance, audit=audit)
    clusters = rs.clusters
    return AuditResult(
        axis=scored.lexicon.axis,
        groups=tuple(scored.lexicon.groups),  # type: ignore[arg-type]
        n_pairs=rs.n_pairs,
        measures=tuple(results),
        alpha=scored.alpha,
        correction=scored.correction,
        divergent_pairs=tuple(scored.divergent),
        input_summary=MappingProxyType(dict(rs.summary)),
        provenance=provenance,
        n_clusters=None if clusters is None or not provenance.clustered else len(set(clusters)),
        correction_scope=correction_scope,
        family_size=family_size,
        n_distinct_responses=n_distinct,
        warnings=tuple(warnings),
        scorer_check=scored.scorer_check,
        judge_answers=scored.judge_answers,
        corpus_dialogue_sizes=dialogue_sizes if clustered else (),
        corpus_differing_pairs=_differing_pairs(rs) if scored.corpus_measures else None,
        lost_by_dialogue=loss_tally(rs) if clusters is not None and provenance.clustered else (),
        empty_by_dialogue=empty_tally(rs) if clusters is not None and provenance.clustered else (),
    )


def _differing_pairs(rs: ResponseSet) -> int:
    """The pairs whose two answers differ: the only ones a corpus measure's permutation test swaps to anything new."""
    return sum(a != b for a, b in zip(response_texts(rs.a), response_texts(rs.b)))


def correct_families(
    scored: Sequence[tuple[str, Scored]],
    *,
    correction: str,
    scope: str,
    pvalues: Sequence[Sequence[float | None]] | None = None,
) -> tuple[list[list[float | None]], list[str], list[int]]:
    """Each axis' adjusted p per row, its correction scope and the size of its primary family.

    The families are each axis on its own (``correction_scope="axis"``; the pairs of groups of
    one multi-way axis together) or all axes together (``"run"``). ``pvalues`` replaces each
    row's ``p_paired`` as the p-value corrected (a sequential audit's p-values over its looks).
    The size stated for an axis is its whole family's: the primary tests corrected together
    with its own, those of every axis of the run for ``"run"``.
    """

    def adjust(members: Sequence[int]) -> list[list[float | None]]:
        if pvalues is None:
            return adjust_family([scored[i][1] for i in members], correction)
        return _adjust_given([scored[i][1] for i in members], [pvalues[i] for i in members], correction)

    families: dict[str, list[int]] = {}
    if scope == "run":
        families["run"] = list(range(len(scored)))
    else:  # each axis on its own; the pairs of groups of one multi-way axis together
        for index, (axis, _) in enumerate(scored):
            families.setdefault(_family_of(axis, index), []).append(index)
    adjusted: list[list[float | None]] = [[] for _ in scored]
    scopes = ["run" if scope == "run" else "axis"] * len(scored)
    sizes = [0] * len(scored)
    for members in families.values():
        family_adjusted = adjust(members)
        size = sum(_primary_tested(scored[i][1], p) for i, p in zip(members, family_adjusted))
        for index, p_adjusted in zip(members, family_adjusted):
            adjusted[index], sizes[index] = p_adjusted, size
            if scope != "run" and len(members) > 1:
                scopes[index] = f"multi-way axis {scored[index][0].partition(':')[0]} ({len(members)} pairs of groups)"
    return adjusted, scopes, sizes


def _primary_tested(scored: Scored, adjusted: Sequence[float | None]) -> int:
    """The rows of ``scored``'s primary family that were corrected (given an adjusted p)."""
    return sum(adjusted[i] is not None for i in scored.family(True))


def _adjust_given(
    scored: Sequence[Scored], pvalues: Sequence[Sequence[float | None]], correction: str
) -> list[list[float | None]]:
    """As :func:`adjust_family`, correcting the p-values given per row instead of the rows' own."""
    out: list[list[float | None]] = [[None] * len(s.rows) for s in scored]
    for primary in (True, False):
        members = [(k, i) for k, s in enumerate(scored) for i in s.family(primary) if pvalues[k][i] is not None]
        if members:
            given = [float(pvalues[k][i]) for k, i in members]  # type: ignore[arg-type]  # filtered above
            for (k, i), value in zip(members, adjust_pvalues(given, method=correction)):
                out[k][i] = float(value)
    return out


def _family_of(axis: str, index: int) -> str:
    """The correction family of an axis: a multi-way axis' pairs of groups share one (``religion``)."""
    parent, colon, _ = axis.partition(":")
    return parent if colon else f"{axis}\x00{index}"
