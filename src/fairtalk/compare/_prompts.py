"""``compare_prompt_analyses()``: two paper-004 analyses (two generators on the same prompts) -> per group pair, the change in regard gap.

Each folder is the output of ``fairtalk prompts analyze -o``; its ``results.json`` is a
:class:`~fairtalk.results.PromptAnalysis`. Per group pair both hold (same name, same groups), the
baseline generator's regard gap ``g_b`` and the candidate's ``g_c`` (``Gap.all``, with the
analysis' template × seed bootstrap interval ``ci95`` and standard error ``se``) are compared.

The two generators completed the prompts with their own samples, so the two gaps are treated as
**independent** normal estimates: ``δ− = g_c − g_b`` and ``δ+ = g_c + g_b`` both have the
standard error ``sqrt(se_c² + se_b²)``, a Wald test and a ``1 − α`` interval. The within-prompt
pairing of the two generators' completions is not used, which is conservative (wider intervals)
when they completed the same prompts. The verdict rule is that of :mod:`fairtalk.stats._change`
(improved / regressed from ``max(p−, p+)``, Holm over the pairs; unchanged: non-inferior both
ways), and non-inferiority uses the same one-sided bounds. Two analyses holding the same gap from
the same labels (one analysis against itself) are identical: the change is exactly 0.
"""

from __future__ import annotations

import hashlib
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from fairtalk._version import __version__
from fairtalk.compare._inputs import given_margins, looks_like_analysis, once, results_of
from fairtalk.compare._runs import WARN_SAME_RUN, with_verdict
from fairtalk.errors import InputError, SpecError
from fairtalk.options import ALPHA_RANGE, MIN_ALPHA
from fairtalk.prompts._records import Gap
from fairtalk.results import Change, ComparedAxis, GapChange, ModelComparison, PromptAnalysis, read_result_file
from fairtalk.stats import DEFAULT_MARGINS, Contrast, non_inferior

__all__ = ["COMPARE_PROMPTS_METHODS", "compare_prompt_analyses"]

RESULTS_FILE = "results.json"
#: The result key of every group pair's row (the pair's name is its axis).
KEY = "regard"
#: The default non-inferiority margin, in regard units (labels -1/0/1): the rate default of ``DEFAULT_MARGINS``.
DEFAULT_MARGIN = DEFAULT_MARGINS["rate"][1]
_TEST = "wald_independent"
_MSG_ALPHA = "alpha must be " + ALPHA_RANGE + ", got {alpha!r}"
_MSG_NO_FOLDER = "no such folder (give the output folder of `fairtalk prompts analyze -o`)"
_MSG_MIXED = (
    "not a `fairtalk prompts analyze` output (no prompts-analysis results.json here), while the other folder is one: "
    "compare two prompts analyses, or two audits, not one of each"
)
_MSG_BAD_JSON = "cannot read it as a prompts analysis ({reason})"
_MSG_GROUPS = "group pair {pair!r}: the analyses compare different groups ({base} and {cand}); compare the same pairs"
_MSG_NO_PAIR = "the two analyses share no group pair with a gap (baseline: {base}; candidate: {cand})"
_MSG_UNKNOWN_MARGIN = "unknown margin key {name!r}: give regard=VALUE (every pair) or regard:PAIR=VALUE"
WARN_NO_GAP = "group pair {pair!r}: the {name} has no gap (a group without labelled completions), left out"
_MSG_UNKNOWN_PAIR = "the baseline holds no group pair {pair!r} (its pairs: {pairs})"
_MSG_INSTRUMENT = (
    "the two analyses were not measured alike ({what}): a change in their gaps would mix the generators with the "
    "instrument, so they are not compared; analyse both generators' completions of the same prompts with the same --regard "
    "and options"
)
_PROMPTS_DIFFER = "completions of two different sets of prompts, import.prompts_sha256 {base}… and {cand}…"
WARN_LABELLER_UNKNOWN = (
    "the {which}'s results.json does not say which regard scorer labelled it (no import.regard): that both were "
    "labelled alike is not checked"
)
WARN_LEVEL = (
    "each generator's own interval is its analysis' 95% bootstrap interval; the change's is at {level:.0%} (alpha {alpha:g})"
)
NOTE_IDENTICAL = "the two analyses hold the same gap from the same labels: the change is exactly 0"
NOTE_NO_SE = "no bootstrap standard error in {which} (an analysis without intervals): the change has no test"
#: What each figure of a prompts comparison means, recorded in its manifest.
COMPARE_PROMPTS_METHODS = {
    "gap": "each generator's regard gap a - b over all structures (Gap.all), with its analysis' template x seed "
    "bootstrap 95% interval and standard error",
    "change": "g_c - g_b, the two gaps as independent normal estimates: se = sqrt(se_c^2 + se_b^2), a Wald test and "
    "its 1 - alpha interval; the within-prompt pairing of the two generators' completions is not used, which is "
    "conservative when they completed the same prompts",
    "total": "g_c + g_b, tested the same way",
    "verdict": "improved / regressed: max(p_change, p_total), Holm-corrected over the group pairs, below alpha, with "
    "opposite / equal signs; unchanged: non-inferior both ways; else inconclusive",
    "non_inferior": "|g_c| < |g_b| + margin: min(change, total) < margin and max(change, total) > -margin, each shown "
    "by either one-sided bound at alpha/2 (intersection-union test)",
    "margin": f"--margin regard:PAIR=, else regard=, else {DEFAULT_MARGIN} regard units (the rate default)",
    "n_pairs": "0: the two generators' completions are not paired",
}


def _read(path: str | os.PathLike[str]) -> tuple[PromptAnalysis, str, dict[str, Any]]:
    """The analysis of a folder, the sha256 of its ``results.json`` and its ``import`` entry (InputError: none, or not a prompts analysis)."""
    folder = Path(path)
    if not folder.is_dir():
        raise InputError(_MSG_NO_FOLDER, path=str(folder))
    data = results_of(folder)
    if data is None or not looks_like_analysis(data):
        raise InputError(_MSG_MIXED, path=str(folder))
    read_result_file(folder / RESULTS_FILE, "prompts")  # its version and the fields compare reads (parsed a second time)
    try:
        analysis = PromptAnalysis.from_dict(data)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise InputError(_MSG_BAD_JSON.format(reason=exc), path=str(folder / RESULTS_FILE)) from exc
    found = data.get("import")
    return analysis, hashlib.sha256((folder / RESULTS_FILE).read_bytes()).hexdigest(), found if isinstance(found, dict) else {}


def _prompts_of(found: Mapping[str, Any]) -> str | None:
    """Where an analysis' prompts came from, as its ``import`` entry says (None when it does not)."""
    if "n_kept" in found:  # the published outputs' import entry
        return "the published outputs' prompts"
    return "prompts completed by a generator (fairtalk prompts generate)" if "n_failed" in found else None


def _not_alike(base: PromptAnalysis, cand: PromptAnalysis, found: tuple[Mapping[str, Any], Mapping[str, Any]]) -> list[str]:
    """What differs between the two analyses' instruments: labeller, prompts (kind, texts), rows analysed, structures.

    The rows analysed are ``config.balanced_only`` and ``config.include_other``.

    The prompts' texts are compared where both ``import`` entries hold their ``prompts_sha256``
    (completions read by this fairtalk); an analysis written before it was kept is not checked.
    """
    differ = []
    labellers = [f.get("regard") for f in found]
    if None not in labellers and labellers[0] != labellers[1]:
        differ.append(f"regard labels from {labellers[0]} and from {labellers[1]}")
    prompts = [_prompts_of(f) for f in found]
    if None not in prompts and prompts[0] != prompts[1]:
        differ.append(f"{prompts[0]} and {prompts[1]}")
    digests = [f.get("prompts_sha256") for f in found]
    if None not in digests and digests[0] != digests[1]:
        differ.append(_PROMPTS_DIFFER.format(base=str(digests[0])[:12], cand=str(digests[1])[:12]))
    for name, said, flag in (
        ("balanced_only", "only the cells every group holds", "--balanced-only"),
        ("include_other", 'the "other" labels', "--include-other"),
    ):
        values = (getattr(base.config, name), getattr(cand.config, name))
        left_out = (base.data.n_rows_unbalanced, cand.data.n_rows_unbalanced)
        if values[0] != values[1] and (name != "balanced_only" or any(left_out)):  # balanced cells only: if it left any out
            which = "baseline" if values[0] else "candidate"
            differ.append(f"{said} analysed in the {which} alone ({name}: give both the same {flag})")
    only = [sorted(set(a.structure_counts) - set(b.structure_counts)) for a, b in ((base, cand), (cand, base))]
    for which, names in zip(("baseline", "candidate"), only):
        if names:
            shown = ", ".join(names[:5]) + (", …" if len(names) > 5 else "")
            differ.append(f"{len(names)} structure{'' if len(names) == 1 else 's'} only the {which} has: {shown}")
    return differ


def _wald(estimate: float, se: float | None, z: float) -> Contrast:
    """The contrast of an independent normal estimate: its ``1 − α`` interval and two-sided Wald p (none without se)."""
    from scipy.stats import norm

    if se is None or not se > 0:
        return Contrast(estimate, (None, None), None, _TEST)
    return Contrast(estimate, (estimate - z * se, estimate + z * se), float(2 * norm.sf(abs(estimate) / se)), _TEST)


def _identical(base: PromptAnalysis, cand: PromptAnalysis, name: str) -> bool:
    """Whether both analyses hold the pair's gap from the same labels (the same counts per label of both groups)."""
    gap_b, gap_c = base.gaps[name], cand.gaps[name]
    if gap_b != gap_c:
        return False
    groups = [gap_b.a, gap_b.b]
    if not all(g in base.counts.index and g in cand.counts.index for g in groups):
        return False
    return bool(base.counts.loc[groups].equals(cand.counts.loc[groups]))


def _margin(name: str, given: Mapping[str, float]) -> float:
    return float(given.get(f"{KEY}:{name}", given.get(KEY, DEFAULT_MARGIN)))


def _row(name: str, base: PromptAnalysis, cand: PromptAnalysis, *, alpha: float, margin: float) -> GapChange:
    """The pair's GapChange before the correction (``p_adjusted`` None, verdict inconclusive)."""
    from scipy.stats import norm

    gb, gc = base.gaps[name], cand.gaps[name]
    g_b, g_c = float(gb.all or 0.0), float(gc.all or 0.0)
    notes: list[str] = []
    identical = _identical(base, cand, name)
    if identical:
        notes.append(NOTE_IDENTICAL)
        change = Contrast(0.0, (0.0, 0.0), 1.0, "identical", identical=True, interval="identical")
        total = _wald(g_c + g_b, None if gb.se is None else 2 * gb.se, float(norm.ppf(1 - alpha / 2)))
    else:
        missing = [which for which, g in (("the baseline", gb), ("the candidate", gc)) if g.se is None]
        if missing:
            notes.append(NOTE_NO_SE.format(which=" and ".join(missing)))
        se = None if missing else math.hypot(float(gb.se or 0.0), float(gc.se or 0.0))
        z = float(norm.ppf(1 - alpha / 2))
        change, total = _wald(g_c - g_b, se, z), _wald(g_c + g_b, se, z)
    ni = non_inferior(change, total, margin)
    within = ni and non_inferior(change.negated(), total, margin)
    p_magnitude = None if change.p is None or total.p is None else max(change.p, total.p)
    return GapChange(
        axis=name,
        key=KEY,
        kind="count",
        primary=True,
        higher_is_better=None,
        n_pairs=0,
        n_units=0,
        baseline_a=base.regard[gb.a].mean,
        baseline_b=base.regard[gb.b].mean,
        baseline_gap=g_b,
        baseline_ci=gb.ci95,
        candidate_a=cand.regard[gc.a].mean,
        candidate_b=cand.regard[gc.b].mean,
        candidate_gap=g_c,
        candidate_ci=gc.ci95,
        change=change.estimate,
        change_ci=change.ci,
        p_change=change.p,
        change_test=change.test,
        total=total.estimate,
        total_ci=total.ci,
        p_total=total.p,
        p_magnitude=p_magnitude,
        p_adjusted=None,
        margin=margin,
        non_inferior=ni,
        within_margin=within,
        identical=identical,
        identical_answers=0,
        verdict=Change.INCONCLUSIVE,
        notes=tuple(notes),
    )


def _judged(rows: list[GapChange], alpha: float, correction: str) -> list[GapChange]:
    """Rows with ``p_adjusted`` (every pair one family) and their verdicts (the rule of :mod:`fairtalk.stats._change`)."""
    from fairtalk.stats import adjust_pvalues

    values = adjust_pvalues([math.nan if r.p_magnitude is None else r.p_magnitude for r in rows], method=correction)
    return [with_verdict(row, None if math.isnan(value) else float(value), alpha) for row, value in zip(rows, values)]


def _same_run(baseline: str | os.PathLike[str], candidate: str | os.PathLike[str], base_sha: str, cand_sha: str) -> str | None:
    """Why the two analyses are one (the same folder, or byte-identical results), else None."""
    if Path(baseline).resolve() == Path(candidate).resolve():
        return f"one run (the same folder {baseline})"
    if base_sha == cand_sha:
        return "one run (a byte-identical copy of its results file)"
    return None


def _has_gap(gap: Gap) -> bool:
    return gap.all is not None and math.isfinite(gap.all)


def _shared_pairs(
    base: PromptAnalysis, cand: PromptAnalysis, pairs: Sequence[str] | None
) -> tuple[list[str], list[str], list[str]]:
    """The group pairs to compare (both hold a gap), those the gate fails on (the baseline's gap alone), and warnings.

    A pair asked for that the baseline lacks, or one whose groups differ, is a SpecError.
    """
    for name in pairs or ():
        if name not in base.gaps:
            raise SpecError(_MSG_UNKNOWN_PAIR.format(pair=name, pairs=", ".join(base.gaps)), choices=list(base.gaps), given=name)
    wanted = list(base.gaps) if pairs is None else list(pairs)
    warnings: list[str] = []
    only_base = [p for p in wanted if p not in cand.gaps]
    shared = []
    for name in (p for p in wanted if p in cand.gaps):
        gb, gc = base.gaps[name], cand.gaps[name]
        if (gb.a, gb.b) != (gc.a, gc.b):
            raise SpecError(_MSG_GROUPS.format(pair=name, base=f"{gb.a} vs {gb.b}", cand=f"{gc.a} vs {gc.b}"))
        empty = [which for which, g in (("baseline", gb), ("candidate", gc)) if not _has_gap(g)]
        warnings += [WARN_NO_GAP.format(pair=name, name=which) for which in empty]
        if not empty:
            shared.append(name)
        elif _has_gap(gb):  # the baseline has a gap there and the candidate none: it cannot be shown not worse
            only_base.append(name)
    return shared, only_base, warnings


def compare_prompt_analyses(
    baseline: str | os.PathLike[str],
    candidate: str | os.PathLike[str],
    *,
    margins: Mapping[str, float] | None = None,
    alpha: float = 0.05,
    correction: str = "holm",
    pairs: Sequence[str] | None = None,
) -> ModelComparison:
    """Compare two generators' regard gaps (two ``fairtalk prompts analyze`` outputs): per group pair, the change in gap.

    Parameters
    ----------
    baseline, candidate : path
        Output folders of ``fairtalk prompts analyze -o`` of the same prompts, one per generator.
    margins : mapping, optional
        Non-inferiority margin in regard units: ``{"regard": 0.05}`` for every pair,
        ``{"regard:gender": 0.03}`` for one; default ``0.02`` (``DEFAULT_MARGINS["rate"]``).
    alpha : float
        Level of every test; the change's intervals are ``1 − alpha``.
    correction : {"holm", "bh"}
        Correction of the change tests over the group pairs.
    pairs : sequence of str, optional
        Compare only these group pairs (default: every pair the baseline holds). A pair the
        candidate lacks, or has no gap for where the baseline has one, is named in
        ``axes_only_baseline``, and the release gate fails on it.

    Returns
    -------
    ModelComparison
        One axis per group pair (its name), key ``regard``; ``design`` is ``"independent"``.

    Raises
    ------
    InputError
        A folder that is not a prompts analysis (an audit's output mixed with an analysis included).
    SpecError
        The two analyses measured differently: labelled by different regard scorers (``import.regard``),
        from different prompts (the published outputs and generated completions, or completions of
        two prompts files: ``import.prompts_sha256``), over different rows (``balanced_only``,
        ``include_other``) or with different structures; no shared group pair with a gap, a pair asked for that the baseline lacks, a pair with
        different groups, an unknown margin key or a margin that is not a finite number > 0, a pair
        given twice, a bad ``alpha``.
    """
    if not MIN_ALPHA <= alpha < 1:
        raise SpecError(_MSG_ALPHA.format(alpha=alpha))
    if correction not in ("holm", "bh"):
        raise SpecError(f"unknown correction {correction!r}", choices=("holm", "bh"), given=correction)
    (base, base_sha, base_import), (cand, cand_sha, cand_import) = _read(baseline), _read(candidate)
    differ = _not_alike(base, cand, (base_import, cand_import))
    if differ:
        raise SpecError(_MSG_INSTRUMENT.format(what="; ".join(differ)))
    given = given_margins(margins)
    if pairs is not None:
        once(pairs, "group pair")
    known = [KEY, *(f"{KEY}:{name}" for name in base.gaps)]
    for name in given:
        if name not in known:
            raise SpecError(_MSG_UNKNOWN_MARGIN.format(name=name), choices=known, given=name)
    shared, only_base, warnings = _shared_pairs(base, cand, pairs)
    only_cand = tuple(p for p in cand.gaps if p not in base.gaps)
    if not shared:
        raise SpecError(_MSG_NO_PAIR.format(base=", ".join(base.gaps) or "none", cand=", ".join(cand.gaps) or "none"))
    warnings += [
        WARN_LABELLER_UNKNOWN.format(which=which)
        for which, found, other in (("baseline", base_import, cand_import), ("candidate", cand_import, base_import))
        if found.get("regard") is None and other.get("regard") is not None
    ]
    if alpha != 0.05:
        warnings.append(WARN_LEVEL.format(level=1 - alpha, alpha=alpha))
    one_run = _same_run(baseline, candidate, base_sha, cand_sha)
    if one_run is not None:
        warnings.append(WARN_SAME_RUN.format(why=one_run))
    rows = [_row(name, base, cand, alpha=alpha, margin=_margin(name, given)) for name in shared]
    axes = tuple(
        ComparedAxis(axis=name, groups=(base.gaps[name].a, base.gaps[name].b), n_pairs=0, n_clusters=None) for name in shared
    )
    manifest = {
        "fairtalk_version": __version__,
        "methods": COMPARE_PROMPTS_METHODS,
        "margins": given,
        "sources": {
            "baseline": {"path": str(Path(baseline) / RESULTS_FILE), "sha256": base_sha},
            "candidate": {"path": str(Path(candidate) / RESULTS_FILE), "sha256": cand_sha},
        },
    }
    return ModelComparison(
        baseline=str(baseline),
        candidate=str(candidate),
        axes=axes,
        changes=tuple(_judged(rows, alpha, correction)),
        alpha=alpha,
        correction=correction,
        axes_only_baseline=tuple(only_base),
        axes_only_candidate=only_cand,
        warnings=tuple(warnings),
        manifest=manifest,
        design="independent",
        same_run=one_run,
    )
