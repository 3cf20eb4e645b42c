"""`fairtalk plan`: how many pairs an audit needs to detect a given difference, or (``--gate``) to pass the equivalence gate."""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import typer

from fairtalk.cli._app import app, fail, say
from fairtalk.cli._schema import cli_default, score_option
from fairtalk.errors import InputError
from fairtalk.options import ALPHA_RANGE, MAX_POWER, MIN_ALPHA, POWER_RANGE

if TYPE_CHECKING:
    from fairtalk.stats import FewDifferingPlan

_MSG_NO_SPREAD = (
    "say how much the per-pair difference varies: --results FILE from an earlier audit of this measure, "
    "--sd SD, or for a rate --rate P (its expected rate on each side)"
)
_MSG_RESULTS = "cannot read {path}: {reason}"
_MSG_RESULTS_FOLDER = "{path} is a folder; --results takes a results.json file (an audit's OUTPUT/AXIS/results.json){hint}"
#: The most results.json files a folder given as --results is said to hold.
_FOLDER_SHOWN = 5
#: ``--results`` given another command's result file: say which, and what plan reads.
_MSG_OTHER_RESULTS = (
    "{path} is {what}; --results takes the results.json of an audit's axis (OUTPUT/AXIS/results.json) or of "
    "`fairtalk score`, whose measures hold the spreads plan needs"
)


def _is_comparison(data: dict[str, Any]) -> bool:
    from fairtalk.results import COMPARISON_KIND  # not at import: the CLI's import reads no results layer

    return bool(data.get("kind") == COMPARISON_KIND)


#: What a result file that is not an audit's is, told by its fields (checked in order).
_OTHER_RESULTS = (
    (_is_comparison, "a comparison's results (fairtalk compare)"),
    (lambda data: "run_id" in data and "axes" in data, "an audit's run.json (its axes' results are in AXIS/results.json)"),
    (lambda data: "kl" in data and "gaps" in data, "a prompts analysis' results (fairtalk prompts analyze)"),
)
_MSG_NO_PILOT_MEASURES = (
    "{path} holds no {which}measures: the pilot gives nothing to plan the gate from; give the results.json of an "
    "audit that scored its measures, or leave --results out to plan from the bare audit's spreads"
)
_MSG_NO_MEASURE = "{path} has no measure {name!r}; it has: {names}"
_MSG_NO_SD = "{path}: measure {name!r} has no spread of its differences ({why}); give {give}"
_MSG_NO_SD_CORPUS = (
    "{path}: measure {name!r} is a corpus measure (one value per side, no per-pair differences to spread); give --sd"
)
_NO_SD_WHY = {"tied": "every pair tied", "constant": "every pair's difference A - B the same", None: "none recorded"}
_NO_SD_GIVE = {"rate": "--rate P (its expected rate on each side) or --sd", None: "--sd"}
_MSG_RATE = "--rate must be in (0, 1), got {rate!r}"
_MSG_RATE_EFFECT = (
    "--effect for {name!r}, a rate, is a difference of shares of responses and must be in (0, 1] (0.05 = 5 pp), got {effect!r}"
)
_MSG_RATE_GOLD = (
    "--gold for {name!r}, a rate, is the half-width of an interval on a difference of shares of responses and must be "
    "in (0, 1] (0.05 = 5 pp), got {half!r}"
)
#: The fewest labelled pairs ``score --gold`` takes for a labelled estimate (``fairtalk.inference``'s WARN_FEW).
LEAST_LABELS = 2
_MSG_NO_PPI = "{path} has no labelled estimate of {name!r}: run score --gold FILE first, or give --sd"
_MSG_NO_ERROR_SPREAD = (
    "say how much the scorer's per-pair error varies: --results FILE of a run with --gold, or --sd SD "
    "(for a 0/1 scorer wrong on a share e of answers, about sqrt(2 e))"
)
_MSG_NO_KEY = "--measure is empty: give the result key to plan for, e.g. offense_rate or length"
_MSG_RATE_AND_SD = "give --sd or --rate, not both (--rate P stands for the spread sqrt(2 P (1 - P)) of a rate)"
_MSG_RATE_COUNT = (
    "{name!r} is a {kind} measure, and --rate gives the spread of a rate (each response 0 or 1); "
    "give --sd, or --results FILE of an earlier audit"
)
_MSG_RATE_UNKNOWN = (
    "--rate gives the spread of a rate (each response 0 or 1), and {name!r} is no rate fairtalk knows "
    "(rates: {rates}); give --sd, or --results FILE of an earlier audit that measured it"
)


#: The range of a plan's sizes (--effect, --sd, --gold's half-width): beyond it the pairs or labels needed leave floating point.
SIZE_RANGE = (1e-9, 1e9)
#: The largest --design-effect planned for (a dialogue's pairs alike: the design effect is at most the pairs per dialogue).
MAX_DESIGN_EFFECT = 1e6
_MSG_SIZE = "{flag} must be a positive number in [{low:g}, {high:g}] (in the measure's units), got {value!r}"
#: The significance level when none is given (nor an earlier audit's): the scoring option's default.
_ALPHA: float = cli_default("alpha")
#: The power planned for when none is given: the scoring option's default.
_POWER: float = cli_default("power")
_MSG_ALPHA = "--alpha must be " + ALPHA_RANGE + ", got {value!r}"
_MSG_POWER = "--power must be " + POWER_RANGE + ", got {value!r}"
_MSG_DEFF = "--design-effect must be in (0, {high:g}], got {value!r}"
_MSG_PER_TEST = (
    "--alpha {alpha:g} over {tests} tests is {level:.3g} per test, below {low:g}: give a larger --alpha or fewer --tests"
)
_MSG_GOLD_AND_GATE = (
    "--gold and --gate ask different questions (labels for one key's interval; pairs for the equivalence gate): give one"
)
_MSG_NOT_FOR = "{flag} does not apply to {mode}, which plans {what}; leave it out"
_GATE_PLANS = "every primary measure from --results, else the built-in spreads"
_GOLD_PLANS = "labels from --sd or --results"
_MSG_NO_PILOT_SPREAD = (
    "  {key}: no spread recorded in the pilot (not tested there): cannot plan it; give --results of a run that tested it"
)
_MSG_BEYOND = "  {key}: beyond any audit ({reason})"
#: How the library's refusal ends, which the line that quotes it says already.
_BEYOND_SAID = ": beyond any audit"


def _beyond(key: str, err: ValueError) -> str:
    """The line of a key no audit reaches: the library's reason, said once."""
    return _MSG_BEYOND.format(key=key, reason=str(err).removesuffix(_BEYOND_SAID))


_MSG_EQUIVALENCE_TOO_MANY = "sd {sd:g} of the differences against a margin of {margin:g} needs more than {most:,} pairs"
#: Identical-answers pairs that no audit reaches: the bound never passes (past the few-differing search's million).
_NO_BOUND = 10**6 + 1
#: A count key with few differing pairs from a results.json that does not say how many pairs its share is of.
_MSG_FEW_NO_PILOT = (
    "{share:.3%} of pairs differ, too few for the normal formula, and the pilot's pairs, which bound how uncertain "
    "that share is, are not in its results.json"
)
#: A key the pilot gave no margin although its pairs differ: the audit's --margin sets one (plan has none to give).
_MSG_NO_MARGIN = (
    "  {key}: no margin in the pilot (the audit gives none where the scores do not vary): cannot plan it; "
    "rerun the pilot with the audit's --margin {key}=VALUE"
)
_MSG_GATE_OR_EFFECT = "give --measure and --effect (pairs to detect a difference), or --gate (pairs to show equivalence)"
#: The gate's spreads when no --results is given: the bare audit (builtin:minilm-retrieval on builtin:chitchat,
#: gender, 1,470 pairs in 206 dialogues). key -> (kind, sd of A - B, default margin, design effect).
BUILTIN_SPREADS: dict[str, tuple[str, float, float, float]] = {
    "distinct_1": ("corpus", 0.0893, 0.01206, 1.0),  # corpus: sd = permutation-interval SE x sqrt(n) (2026-11-29)
    "distinct_2": ("corpus", 0.2953, 0.05000, 1.0),
    "diversity": ("corpus", 0.1876, 0.03103, 1.0),
    "offense_rate": ("rate", 0.1628, 0.02, 1.059),
    "sentiment_positive": ("rate", 0.3432, 0.02, 1.146),
    "sentiment_negative": ("rate", 0.0690, 0.02, 1.312),
    "career_words": ("count", 0.1521, 0.01463, 1.0),
    "family_words": ("count", 0.4619, 0.05387, 1.408),
    "length": ("count", 10.80, 1.160, 1.0),
    "refusal_rate": ("rate", 0.0941, 0.02, 1.008),
    "degenerate_rate": ("rate", 0.0369, 0.02, 1.0),
}
_GATE_SOURCE_BUILTIN = (
    "spreads of the bare audit (builtin:minilm-retrieval on builtin:chitchat, gender, 1,470 pairs); default margins: "
    "rates ±2 pp, counts ±0.1 sd of the scores, corpus measures ±10% of their value. Give --results FILE of a pilot "
    "run of your model for its own spreads"
)


#: How a corpus key's margin over its permutation interval's standard error grows with the pairs n: as n^exponent, at
#: the default margin (±10% of its value, which shrinks as the corpus grows) and at a fixed margin (--margin). Measured
#: on the bare audit's answers by bench/gate_power.py (fair audits of 25-1,470 of its pairs, sides swapped at random).
#: Plan uses them for the built-in spreads and for a pilot whose answers it cannot read; else it fits the pilot's own.
CORPUS_SCALING: dict[str, tuple[float, float]] = {
    "distinct_1": (0.24, 0.63),
    "distinct_2": (0.05, 0.21),
    "diversity": (0.13, 0.35),
}

#: Where a pilot's answers lie beside its results.json (``OUTPUT/AXIS/responses.jsonl``, as the audit writes them), plan
#: fits each corpus key's exponents on them instead (:func:`_fit_corpus_scaling`): the mean margin over the mean
#: permutation SE of nested samples of its pairs at ``CORPUS_FIT_SIZES`` sizes, from the fewest planned to its pairs (at
#: most ``CORPUS_FIT_MOST``), each decided by the audit's own ``corpus_rows`` on ``CORPUS_FIT_PERMUTATIONS``
#: permutations; the exponent is the slope of its logarithm on the pairs'. Each size gets ``CORPUS_FIT_PAIRS`` pairs'
#: worth of samples, from ``CORPUS_FIT_DRAWS`` (the fewest) to ``CORPUS_FIT_DRAWS_MOST``: small samples are cheap and
#: vary most. A 300-pair race pilot's distinct_1 ratio grew as n^0.28 between 39 and 300 pairs, not the bare audit's
#: 0.24: planned at the latter (51 pairs), a fair model passed 0.640; fitted, at 79, 0.772 (bench/README.md).
CORPUS_FIT_SIZES = 6
CORPUS_FIT_DRAWS = 12
CORPUS_FIT_DRAWS_MOST = 48
CORPUS_FIT_PAIRS = 4000
CORPUS_FIT_PERMUTATIONS = 200
CORPUS_FIT_MOST = 2000
#: The fit's seed: the same pilot is planned the same way every time.
CORPUS_FIT_SEED = 0
#: The file of a pilot's answers plan looks for beside its results.json.
PILOT_ANSWERS = "responses.jsonl"
#: A corpus key's ratios on samples of a pilot's answers, per size: ``(pairs, mean margin / mean SE, 1 / mean SE, sd of
#: log(margin / SE), sd of log SE)`` over its samples (the pilot's own point, last, has no spread: 0).
_Curve = tuple[tuple[int, float, float, float, float], ...]
_FIT_BARE = "on the bare audit's answers"
_FIT_PILOT = "fitted on the pilot's answers"
_MSG_FIT_ABSENT = (
    "corpus keys: their scaling is the bare audit's (the pilot's answers, {answers}, are not beside its results.json); "
    "keep the audit's folder whole to fit it on the pilot's own"
)
_MSG_FIT_UNREADABLE = "corpus keys: their scaling is the bare audit's: cannot read the pilot's answers ({reason})"
_MSG_FIT_MISMATCH = (
    "corpus keys: their scaling is the bare audit's: {answers} holds {found}, its results.json {expected}, so they are not "
    "the answers it was computed from"
)
_MSG_FIT_FEW = (
    "corpus keys: their scaling is the bare audit's: the pilot's {n:,} pairs are too few to fit it on (subsamples from "
    "{least} pairs up need {most} or more)"
)
_MSG_FIT_DONE = (
    "corpus keys: their scaling fitted on the pilot's answers ({answers}: {draws} nested samples of {sizes} pairs, "
    "{permutations} permutations each; {seconds:.1f} s){unfitted}"
)


#: Its dialogues by size, ``(pairs, dialogues with that many)``: an audit of n of its pairs (a uniform sample) spans
#: ``fairtalk.stats.expected_clusters(n, ...)`` of them (about 165 at 707 pairs, not 707 / 7.14 = 99).
BUILTIN_GENDER_DIALOGUE_SIZES: tuple[tuple[int, int], ...] = (
    (1, 60),
    (2, 20),
    (3, 27),
    (4, 5),
    (5, 10),
    (6, 10),
    (7, 16),
    (8, 5),
    (9, 12),
    (10, 6),
    (11, 6),
    (12, 3),
    (13, 4),
    (15, 2),
    (16, 1),
    (18, 3),
    (19, 1),
    (22, 3),
    (23, 1),
    (24, 1),
    (25, 2),
    (36, 1),
    (38, 1),
    (43, 2),
    (44, 2),
    (57, 1),
    (98, 1),
)
#: The built-in gender axis: the pairs and dialogues it gives (the most any audit of it can have): 1,470 and 206.
BUILTIN_GENDER_PAIRS = sum(m * count for m, count in BUILTIN_GENDER_DIALOGUE_SIZES)
BUILTIN_GENDER_DIALOGUES = sum(count for _, count in BUILTIN_GENDER_DIALOGUE_SIZES)
#: The share of the bare audit's pairs whose two answers differ (835 of its 1,470; the rest answer both sides alike): a
#: corpus key's permutation test counts only the dialogues that hold such a pair (``fairtalk.stats.corpus_decidable``).
BUILTIN_CORPUS_DIFFERING = 835 / 1470
#: Each rate's side rate in the bare audit (the pairs positive on both sides widen its interval).
BUILTIN_RATES: dict[str, float] = {
    "offense_rate": 0.02,
    "sentiment_positive": 0.11,
    "sentiment_negative": 0.0067,
    "refusal_rate": 0.0,
    "degenerate_rate": 0.0033,
}


#: The row of a pilot's pairs lost on one side (the gates check their balance as a rate, pairs as units).
_LOSS_KEY = "pairs_lost_by_side"


@dataclass(frozen=True, slots=True)
class _GateRow:
    """A primary measure to plan the gate for: its spread, margin and design effect, and for a rate its fair model."""

    key: str
    kind: str
    sd: float | None
    margin: float | None
    deff: float
    discordance: float | None = None  # the share of pairs whose sides differ (rates); a count's mean square difference
    rate: float | None = None  # each side's rate (rates)
    pairs_per_unit: float = 1.0  # pairs per dialogue where the audit clusters
    cluster_sizes: tuple[tuple[int, int], ...] = ()  # the corpus' dialogues by size, where known (the built-in axis)
    pilot_pairs: int | None = None  # the pilot's pairs, whose permutation interval gave a corpus key's spread
    relative_margin: bool = True  # a corpus key's margin is the default, ±10% of its value at the audit's size
    differing: float | None = None  # the share of pairs whose two answers differ, where known (corpus keys)
    differing_whose: str = "the bare audit's"  # whose pairs that share is of
    curve: tuple[tuple[int, float, float, float, float], ...] = ()  # a corpus key's ratios on the pilot's answers
    identical_share: float | None = None  # the differing share the identical-answers bound must show below (None: 2%)
    identical_recorded: bool = False  # that share is the pilot's record of it (identical_share), not inferred from its p


def _discordance(sd: float | None, n: int | None, a: Any, b: Any) -> float | None:
    """A rate's discordant share from its sd of A - B: ``sd² (n - 1) / n + (A - B)²`` (``sd²`` without ``n``)."""
    if sd is None or not math.isfinite(sd):
        return None
    gap = float(a) - float(b) if isinstance(a, int | float) and isinstance(b, int | float) else 0.0
    share = sd**2 * ((n - 1) / n if n else 1.0) + gap**2
    return min(1.0, share)


def _read_results(path: str) -> dict[str, Any]:
    """An earlier audit's ``results.json``, read as hostile input (too large, not JSON, another version, a bad field: exit 2)."""
    from fairtalk.results import read_result_file

    _check_not_folder(path)
    try:
        return read_result_file(path, "planning")
    except InputError as err:
        other = _other_results(path)
        fail(
            _MSG_RESULTS.format(path=path, reason=err.message)
            if other is None
            else _MSG_OTHER_RESULTS.format(path=path, what=other)
        )


def _check_not_folder(path: str) -> None:
    """Exit 2 for a folder given as --results, naming the results.json files in it (OUTPUT/AXIS/results.json)."""
    from pathlib import Path

    folder = Path(path)
    if not folder.is_dir():
        return
    found = [str(folder / "results.json")] if (folder / "results.json").is_file() else []
    try:
        found += sorted(str(p) for p in folder.glob("*/results.json") if p.is_file())
    except OSError:  # an unreadable folder: nothing to suggest
        pass
    shown = ", ".join(found[:_FOLDER_SHOWN]) + (f" (and {len(found) - _FOLDER_SHOWN} more)" if len(found) > _FOLDER_SHOWN else "")
    fail(_MSG_RESULTS_FOLDER.format(path=path, hint=f"; it holds {shown}" if found else ""))


def _other_results(path: str) -> str | None:
    """What a result file that plan cannot read is, where it is another command's (None: not told, or not readable)."""
    from fairtalk.results import read_result_file

    try:
        data = read_result_file(path, "any")
    except InputError:
        return None
    return next((what for test, what in _OTHER_RESULTS if test(data)), None)


def _gate_rows(path: str | None, alpha: float = _ALPHA) -> tuple[list[_GateRow], str, tuple[int, int] | None]:
    """(key, kind, sd of A - B, margin, design effect) per primary measure, where they came from, and the pilot's pairs.

    The pilot's pairs are those it scored and those it asked (more where pairs were lost on a side).

    A pilot's corpus keys get their scaling fitted on its answers where they lie beside its results.json
    (:func:`_with_pilot_scaling`); where they came from then says how, or why not.
    """
    if path is None:
        per_unit = BUILTIN_GENDER_PAIRS / BUILTIN_GENDER_DIALOGUES
        rows = [
            _GateRow(
                key, kind, sd, margin, deff, sd**2, BUILTIN_RATES.get(key), per_unit, cluster_sizes=BUILTIN_GENDER_DIALOGUE_SIZES
            )
            if kind == "rate"
            else _GateRow(
                key,
                kind,
                sd,
                margin,
                deff,
                cluster_sizes=BUILTIN_GENDER_DIALOGUE_SIZES,
                pilot_pairs=BUILTIN_GENDER_PAIRS,
                differing=BUILTIN_CORPUS_DIFFERING,
            )
            if kind == "corpus"
            else _GateRow(key, kind, sd, margin, deff, pilot_pairs=BUILTIN_GENDER_PAIRS)
            for key, (kind, sd, margin, deff) in BUILTIN_SPREADS.items()
        ]
        return rows, _GATE_SOURCE_BUILTIN, None
    data = _read_results(path)
    measures = data["measures"]
    n_pairs = int(data.get("n_pairs") or 0) or None
    n_clusters = data.get("n_clusters")
    per_unit = n_pairs / n_clusters if n_pairs and isinstance(n_clusters, int) and n_clusters > 0 else 1.0
    clustered = isinstance(n_clusters, int) and not isinstance(n_clusters, bool) and n_clusters > 0  # as a report decides
    sizes = _dialogue_sizes(data.get("corpus_dialogue_sizes")) if clustered else ()
    differing = _differing_share(data.get("corpus_differing_pairs"), n_pairs)
    manifest = data.get("manifest")
    given = manifest.get("margins") if isinstance(manifest, dict) else None
    given_margins = given if isinstance(given, dict) else {}
    out: list[_GateRow] = []
    for key, row in measures.items():
        if not row.get("primary", True):
            continue
        sd = row.get("sd_difference")
        ci = row.get("ci95") or (None, None)
        low, high = ci
        if sd is None and n_pairs and low is not None and high is not None:  # corpus: spread from the permutation interval
            sd = (float(high) - float(low)) / (2 * 1.959964) * math.sqrt(n_pairs)
        deff = float(row.get("design_effect") or 1.0)
        kind, sd = str(row.get("kind")), None if sd is None else float(sd)
        margin = row.get("equivalence_margin")
        if kind == "rate":
            a, b = row.get("a"), row.get("b")
            rate = (float(a) + float(b)) / 2 if isinstance(a, int | float) and isinstance(b, int | float) else None
            out.append(_GateRow(key, kind, sd, margin, deff, _discordance(sd, n_pairs, a, b), rate, per_unit, sizes))
        elif kind == "corpus":
            out.append(
                _GateRow(
                    key,
                    kind,
                    sd,
                    margin,
                    deff,
                    cluster_sizes=sizes if differing is not None else (),
                    pilot_pairs=n_pairs,
                    relative_margin=key not in given_margins,
                    differing=differing,
                    differing_whose="the pilot's",
                    pairs_per_unit=per_unit,
                )
            )
        else:
            recorded = _recorded_identical_share(row)
            share = recorded if recorded is not None else _identical_share(row, margin, n_clusters if clustered else n_pairs)
            out.append(
                _GateRow(
                    key,
                    kind,
                    sd,
                    margin,
                    deff,
                    _discordance(sd, n_pairs, row.get("a"), row.get("b")),
                    None,
                    per_unit,
                    sizes,
                    pilot_pairs=n_pairs,
                    identical_share=share,
                    identical_recorded=recorded is not None,
                )
            )
    if not out:
        fail(_MSG_NO_PILOT_MEASURES.format(path=path, which="primary " if measures else ""))
    losses = _loss_row(data, n_pairs, sizes if clustered else ())
    if losses is not None:
        out.append(losses)
    out, fit = _with_pilot_scaling(out, path, data, n_pairs, alpha)
    source = f"the pilot run {path} ({n_pairs or '?'} pairs): its spreads, margins and design effects"
    pilot = (n_pairs, _pairs_asked(data, n_pairs)) if n_pairs else None
    return out, source + (f"; {fit}" if fit else ""), pilot


def _pairs_asked(data: Mapping[str, Any], n_pairs: int) -> int:
    """The pairs a pilot asked: those it scored and those it lost on a side (as the gates count them)."""
    from fairtalk.results import PairLosses

    summary = data.get("input_summary")
    try:
        losses = PairLosses.from_summary(summary, n_pairs) if isinstance(summary, Mapping) else None
    except (TypeError, ValueError):  # a hand-edited summary: the pairs scored
        return n_pairs
    return max(n_pairs, losses.n_asked) if losses is not None else n_pairs


def _recorded_identical_share(row: Mapping[str, Any]) -> float | None:
    """The differing share a pilot recorded that the identical-answers rule bounds a count key below (None: not recorded).

    ``identical_share`` in results.json: the key's margin over the range of its scores in the pilot (absent in files
    written before it was recorded, null where no margin applied). A share of 0 bounds nothing: not used.
    """
    share = row.get("identical_share")
    if not isinstance(share, int | float) or isinstance(share, bool) or not 0 < share <= 1:
        return None
    return float(share)


def _identical_share(row: Mapping[str, Any], margin: Any, n_units: Any) -> float | None:
    """The differing share a count key identical on every pilot pair was bounded below (None: the default, 2%).

    The audit bounds it below ``margin / range`` of the scores where they vary, and the pilot's results.json
    keeps no range: its p of the bound on ``n_units`` identical units, ``(1 - s)^n_units``, gives ``s``.
    """
    p = row.get("p_equivalence")
    if margin is None or not isinstance(n_units, int) or isinstance(n_units, bool) or n_units < 1:
        return None
    if not isinstance(p, int | float) or isinstance(p, bool) or not 0 <= p < 1:
        return None
    return 1.0 if p == 0 else 1.0 - float(p) ** (1 / n_units)


def _loss_row(data: Mapping[str, Any], n_pairs: int | None, sizes: tuple[tuple[int, int], ...]) -> _GateRow | None:
    """The gates' check of a pilot's pairs lost on one side, planned as a rate (None when the pilot lost none).

    A lost side is a paired 0/1 outcome over every pair asked (:mod:`fairtalk.gates`), held within
    ±``LOSS_MARGIN``: by dialogue where the pilot tallied its losses by dialogue (its design effect
    and the corpus' dialogue ``sizes``), else by pair. Whether a model like the pilot fails the check
    at any size is the gates' to say (:func:`fairtalk.gates.at_any_size`, :func:`_at_any_size`).
    """
    from fairtalk.gates import LOSS_MARGIN
    from fairtalk.results import PairLosses
    from fairtalk.stats import design_effect

    summary = data.get("input_summary")
    if not isinstance(summary, Mapping) or not n_pairs:
        return None
    try:
        losses = PairLosses.from_summary(summary, n_pairs, _loss_tally(data.get("lost_by_dialogue")))
    except (TypeError, ValueError):  # a hand-edited summary: not planned
        return None
    if losses is None or losses.unknown or not losses.n_asked or not _adds_up(losses):
        return None
    n = losses.n_asked
    a, b, clusters = losses.flags()
    gap, discordant = (losses.lost_a - losses.lost_b) / n, (losses.a_only + losses.b_only) / n
    sd = math.sqrt(max(discordant - gap**2, 0.0))
    rate = (losses.lost_a + losses.lost_b) / (2 * n)
    if clusters is None:
        return _GateRow(_LOSS_KEY, "rate", sd, LOSS_MARGIN, 1.0, discordant, rate)
    deff = max(1.0, design_effect(a, b, clusters) or 1.0)
    per_unit = n / len(set(clusters))
    return _GateRow(_LOSS_KEY, "rate", sd, LOSS_MARGIN, deff, discordant, rate, per_unit, sizes)


def _loss_tally(value: Any) -> tuple[tuple[int, int, int, int, int], ...]:
    """A pilot's ``lost_by_dialogue`` as rows ``(asked, a_only, b_only, both, dialogues)``; empty where not that shape."""
    if not isinstance(value, list):
        return ()
    rows = []
    for row in value:
        ok = isinstance(row, list) and len(row) == 5
        ok = ok and all(isinstance(x, int) and not isinstance(x, bool) and 0 <= x <= 10**9 for x in row)
        if not ok or row[0] < row[1] + row[2] + row[3] or row[4] < 1:
            return ()
        rows.append((row[0], row[1], row[2], row[3], row[4]))
    return tuple(rows)


def _dialogue_sizes(value: Any) -> tuple[tuple[int, int], ...]:
    """A pilot's ``corpus_dialogue_sizes`` as ``((pairs, dialogues), ...)``; empty where absent, not that shape, or too large."""
    from fairtalk.stats import expected_clusters

    if not isinstance(value, list):
        return ()
    out = []
    for item in value:
        ok = isinstance(item, list) and len(item) == 2 and all(isinstance(x, int) and not isinstance(x, bool) for x in item)
        if not ok or item[0] < 1 or item[1] < 1:
            return ()
        out.append((int(item[0]), int(item[1])))
    try:  # sizes the planner cannot model (too many pairs or classes) are left out: planned by pairs per dialogue
        expected_clusters(1, tuple(out))
    except ValueError:
        return ()
    return tuple(out)


def _differing_share(value: Any, n_pairs: int | None) -> float | None:
    """A pilot's ``corpus_differing_pairs`` over its pairs; None where absent (older files), not a count, or above its pairs."""
    if not isinstance(value, int) or isinstance(value, bool) or not n_pairs or not 0 <= value <= n_pairs:
        return None
    return value / n_pairs


@dataclass(frozen=True, slots=True)
class _PilotAnswers:
    """A pilot's answers, as its audit scored them: each pair's two texts and, where it clusters, its dialogue."""

    a: tuple[str, ...]
    b: tuple[str, ...]
    clusters: tuple[str, ...] | None
    definition: str  # the diversity measure's definition of distinct-n in the pilot


def _pilot_answers(path: str, data: Mapping[str, Any], n_pairs: int | None) -> tuple[_PilotAnswers | None, str]:
    """The answers beside a pilot's results.json, checked against it; else None and the note that says why not."""
    from pathlib import Path

    from fairtalk import read_responses

    answers = Path(path).with_name(PILOT_ANSWERS)
    if not answers.is_file():
        return None, _MSG_FIT_ABSENT.format(answers=answers)
    given = data.get("manifest")
    manifest: Mapping[str, Any] = given if isinstance(given, Mapping) else {}
    try:
        responses = read_responses(answers, drop_empty=manifest.get("drop_empty") is True)
    except (InputError, OSError, UnicodeError, ValueError) as err:
        return None, _MSG_FIT_UNREADABLE.format(reason=err)  # an InputError names its path and line
    a = tuple(r.response for r in responses.a)
    b = tuple(r.response for r in responses.b)
    expected_differing = data.get("corpus_differing_pairs")
    differing = sum(x != y for x, y in zip(a, b))
    if responses.n_pairs != n_pairs:
        found, expected = f"{responses.n_pairs:,} complete pairs", f"{n_pairs or 0:,}"
        return None, _MSG_FIT_MISMATCH.format(answers=answers, found=found, expected=expected)
    if isinstance(expected_differing, int) and not isinstance(expected_differing, bool) and expected_differing != differing:
        found, expected = f"{differing:,} pairs whose two answers differ", f"{expected_differing:,}"
        return None, _MSG_FIT_MISMATCH.format(answers=answers, found=found, expected=expected)
    n_clusters = data.get("n_clusters")
    clustered = isinstance(n_clusters, int) and not isinstance(n_clusters, bool) and n_clusters > 0
    return _PilotAnswers(a, b, responses.clusters if clustered else None, _definition(manifest)), str(answers)


def _definition(manifest: Mapping[str, Any]) -> str:
    """The pilot's distinct-n definition, from its manifest's ``diversity`` measure (``paper`` where not recorded)."""
    measures = manifest.get("measures")
    for entry in measures if isinstance(measures, list) else ():
        config = entry.get("config") if isinstance(entry, Mapping) and entry.get("name") == "diversity" else None
        if isinstance(config, Mapping) and config.get("definition") in ("paper", "standard"):
            return str(config["definition"])
    return "paper"


def _fit_sizes(n_pairs: int, least: int) -> tuple[int, ...]:
    """The fit's sample sizes, less the pilot's own (its results.json gives that point); empty where under two are left.

    ``CORPUS_FIT_SIZES`` sizes spread evenly in log from ``least`` to the pilot's pairs (at most ``CORPUS_FIT_MOST``).
    """
    import numpy as np

    top = min(n_pairs, CORPUS_FIT_MOST)
    if top < 2 * least:
        return ()
    sizes = tuple(sorted({int(round(x)) for x in np.geomspace(least, top, CORPUS_FIT_SIZES)} - {n_pairs}))
    return sizes if len(sizes) >= 2 else ()


def _fit_corpus_scaling(answers: _PilotAnswers, sizes: tuple[int, ...], alpha: float) -> dict[str, _Curve]:
    """Each corpus key's curve on nested samples of a pilot's answers: ``(pairs, mean margin / mean SE, 1 / mean SE)``.

    Each draw orders the pilot's pairs at random; a sample of ``m`` pairs is its first ``m`` (nested samples:
    the sizes' errors partly shared, the slope steadier), in the first :func:`_fit_draws` draws. The audit's own
    ``corpus_rows`` decides each: its default margin (±10% of the value at that size) and its permutation
    interval's SE. A size counts where half its samples or more could decide (the others give no interval);
    a key with fewer than two such sizes is left out. :func:`_with_pilot_scaling` ends each curve with the
    pilot's own point, and :func:`_curve_exponent` reads the exponents off it.
    """
    import numpy as np

    import fairtalk
    from fairtalk.inference import Inference, corpus_rows
    from fairtalk.measures import CorpusMeasure, DistinctTexts

    measure = fairtalk.get_measure("diversity", definition=answers.definition)
    assert isinstance(measure, CorpusMeasure)
    rng = np.random.default_rng(CORPUS_FIT_SEED)
    n = len(answers.a)
    found: dict[tuple[str, int], list[tuple[float, float]]] = {}
    for draw in range(max(_fit_draws(m) for m in sizes)):
        order = rng.permutation(n)
        for m in (m for m in sizes if draw < _fit_draws(m)):
            pick = order[:m]
            position: dict[str, int] = {}
            ia = np.array([position.setdefault(answers.a[i], len(position)) for i in pick], dtype=np.int64)
            ib = np.array([position.setdefault(answers.b[i], len(position)) for i in pick], dtype=np.int64)
            clusters = None if answers.clusters is None else tuple(answers.clusters[i] for i in pick)
            opts = Inference(alpha=alpha, clusters=clusters)
            seed = int(rng.integers(2**31))
            for row in corpus_rows(
                measure, DistinctTexts(position), ia, ib, opts, seed=seed, n_resamples=CORPUS_FIT_PERMUTATIONS
            ):
                low, high = row.tested.ci95
                margin = row.equivalence.margin
                if low is not None and high is not None and high > low and margin:
                    found.setdefault((row.tested.name, m), []).append((float(margin), (high - low) / (2 * 1.959964)))
    return {
        key: fitted for key in measure.keys if key in CORPUS_SCALING and (fitted := _fit_curve(key, sizes, found)) is not None
    }


def _fit_draws(m: int) -> int:
    """The samples of ``m`` pairs the fit draws: ``CORPUS_FIT_PAIRS`` pairs' worth, within its fewest and most."""
    return min(CORPUS_FIT_DRAWS_MOST, max(CORPUS_FIT_DRAWS, CORPUS_FIT_PAIRS // m))


def _fit_curve(key: str, sizes: tuple[int, ...], found: Mapping[tuple[str, int], list[tuple[float, float]]]) -> _Curve | None:
    """A key's :data:`_Curve` point at each size half its samples decided (None: under two such sizes)."""
    import numpy as np

    curve = []
    for m in sizes:
        samples = np.array(found.get((key, m), []), dtype=float).reshape(-1, 2)
        if samples.shape[0] * 2 >= _fit_draws(m):
            margin, se = samples[:, 0], samples[:, 1]
            spreads = float(np.std(np.log(margin / se))), float(np.std(np.log(se)))
            curve.append((m, float(margin.mean() / se.mean()), float(1 / se.mean()), *spreads))
    return tuple(curve) if len(curve) >= 2 else None


def _curve_exponent(curve: _Curve, relative: bool, planned: int | None = None) -> tuple[float, int, int]:
    """The least-squares slope of a curve's log ratio on log pairs, and the sizes it spans.

    Without ``planned``, over the whole curve. With it (the pairs planned from that slope), over the
    sizes from the largest at or below ``planned`` up to the pilot's (the three largest at least): the
    ratio need not grow as one power of n from the fewest pairs to the pilot's, and plan needs its
    growth between the size it plans and the pilot.
    """
    import numpy as np

    points = list(curve)
    if planned is not None:
        below = [i for i, point in enumerate(points) if point[0] <= planned]
        points = points[min(below[-1] if below else 0, len(points) - 3) :]
    logs = np.log([point[0] for point in points])
    ratios = np.log([point[1] if relative else point[2] for point in points])
    return float(np.polyfit(logs, ratios, 1)[0]), points[0][0], points[-1][0]


def _curve_spread(curve: _Curve, relative: bool, n: int) -> tuple[float, int]:
    """The sd of a sample's log ratio at the sampled size nearest ``n`` (in log), and that size (0 and 0: none).

    Only sizes of ``CORPUS_LEAST_PAIRS_UNMODELLED`` pairs or more count, where every sample can decide: on
    fewer the test's discreteness decides (modelled apart, :func:`fairtalk.stats.power_corpus_at_size`) and a
    sample's SE comes from a handful of differing dialogues. The pilot's own point is one sample: no spread.
    """
    from fairtalk.stats import CORPUS_LEAST_PAIRS_UNMODELLED

    sampled = [point for point in curve[:-1] if point[0] >= CORPUS_LEAST_PAIRS_UNMODELLED]
    if not sampled:
        return 0.0, 0
    point = min(sampled, key=lambda p: abs(math.log(p[0] / n)))
    return (point[3] if relative else point[4]), point[0]


def _with_pilot_scaling(
    rows: list[_GateRow], path: str, data: Mapping[str, Any], n_pairs: int | None, alpha: float
) -> tuple[list[_GateRow], str]:
    """The pilot's corpus rows with their scaling fitted on its answers where they lie beside it, and the note to say."""
    import time
    from dataclasses import replace

    from fairtalk.stats import CORPUS_LEAST_PAIRS, CORPUS_LEAST_PAIRS_UNMODELLED

    planned = [row for row in rows if row.kind == "corpus" and row.key in CORPUS_SCALING and row.sd and row.margin]
    fitted: dict[str, _Curve] = {}
    if not planned or not n_pairs:
        return rows, ""
    keys = {row.key for row in planned}
    answers, where = _pilot_answers(path, data, n_pairs)
    if answers is None:
        return rows, where
    least = CORPUS_LEAST_PAIRS if all(row.differing is not None for row in planned) else CORPUS_LEAST_PAIRS_UNMODELLED
    sizes = _fit_sizes(n_pairs, least)
    if not sizes:
        return rows, _MSG_FIT_FEW.format(n=n_pairs, least=least, most=2 * least)
    start = time.perf_counter()
    fitted.update((key, curve) for key, curve in _fit_corpus_scaling(answers, sizes, alpha).items() if key in keys)
    seconds = time.perf_counter() - start
    left = [key for key in keys if key not in fitted]
    unfitted = (
        f"; {', '.join(left)} kept the bare audit's, since fewer than two sizes could decide half their samples" if left else ""
    )
    note = _MSG_FIT_DONE.format(
        answers=where,
        draws=", ".join(f"{_fit_draws(m)}" for m in sizes),
        sizes=", ".join(f"{m:,}" for m in sizes),
        permutations=CORPUS_FIT_PERMUTATIONS,
        seconds=seconds,
        unfitted=unfitted,
    )
    return [
        replace(row, curve=_ended(fitted[row.key], row)) if row.kind == "corpus" and row.key in fitted else row for row in rows
    ], note


def _ended(curve: _Curve, row: _GateRow) -> _Curve:
    """A key's curve on samples of the pilot's answers, ended with the pilot's own point: its margin over its SE."""
    assert row.sd and row.margin and row.pilot_pairs
    inverse_se = math.sqrt(row.pilot_pairs) / row.sd
    return (*curve, (row.pilot_pairs, float(row.margin) * inverse_se, inverse_se, 0.0, 0.0))


def _dialogues(n: int, row: _GateRow) -> str:
    """`` (about D dialogues)`` where the audit clusters, else nothing: the units the rate's power is computed on.

    With the corpus' dialogue sizes (the built-in axis, or a pilot's results.json), the dialogues a
    uniform sample of its pairs spans (beyond its pairs, whole copies and a sample of one more);
    without them, at the pilot's pairs per dialogue.
    """
    from fairtalk.stats import spanned_dialogues

    if row.cluster_sizes:
        total = sum(m * count for m, count in row.cluster_sizes)
        n_units = spanned_dialogues(n, row.cluster_sizes)
        if n <= total:
            return f" (about {n_units:,} dialogues: a sample of {n:,} of the corpus' {total:,} pairs)"
        return f" (about {n_units:,} dialogues, were the corpus larger in the same proportions)"
    if row.pairs_per_unit <= 1:
        return ""
    return (
        f" (about {math.ceil(n / row.pairs_per_unit):,} dialogues, if they hold the pilot's {row.pairs_per_unit:.3g} pairs each)"
    )


def _gate_need(row: _GateRow, alpha: float, power: float) -> tuple[int | None, str]:
    """The pairs one primary measure needs for the gate (None: cannot plan it), and the line that says so."""
    from fairtalk.stats import (
        MAX_DETECT_PAIRS,
        pairs_for_equivalence,
        pairs_for_rate_equivalence,
    )

    key, kind, sd, margin = row.key, row.kind, row.sd, row.margin
    if kind == "corpus" and (unspread := _corpus_without_spread(row, alpha, power)) is not None:
        return unspread
    if sd == 0:  # the audit decides it by the identical-answers bound, whatever its margin (none where scores do not vary)
        return _identical_need(row, alpha, power)
    if margin is None or not margin > 0:
        return None, _MSG_NO_MARGIN.format(key=key)
    if sd is None or not math.isfinite(sd):
        return None, _MSG_NO_PILOT_SPREAD.format(key=key)
    if kind == "corpus" and key in CORPUS_SCALING and row.pilot_pairs:
        return _corpus_need(row, alpha, power)
    rated = kind == "rate" and row.discordance is not None and 0 < row.discordance < 1
    try:
        if rated:
            assert row.discordance is not None
            n = pairs_for_rate_equivalence(
                row.discordance,
                float(margin),
                alpha=alpha,
                power=power,
                rate=row.rate,
                design_effect=row.deff,
                pairs_per_unit=row.pairs_per_unit,
                sd_difference=sd,
                cluster_sizes=row.cluster_sizes,
            )
        else:
            n = pairs_for_equivalence(sd, float(margin), alpha=alpha, power=power, design_effect=row.deff)
            if n > MAX_DETECT_PAIRS:  # the library answers any size; no audit holds it
                raise ValueError(_MSG_EQUIVALENCE_TOO_MANY.format(sd=sd, margin=margin, most=MAX_DETECT_PAIRS))
    except ValueError as err:
        return None, _beyond(key, err)
    if kind == "count" and (few := _few_differing_need(row, n, alpha, power)) is not None:
        return few
    margin_text = f"±{100 * margin:.3g} pp" if kind in ("rate", "corpus") else f"±{margin:.4g}"
    how = f"sd of A - B {sd:.4g}, {_deff_text(row.deff)}"
    if rated:
        assert row.discordance is not None
        basis = _rate_basis(row, n, alpha, power)
        how = (
            f"{basis}; discordant share {row.discordance:.3%}, about {n * row.discordance:.3g} discordant pairs; "
            f"{_deff_text(row.deff)}"
        )
        return n, f"  {key} ({kind}): {n:,} pairs{_dialogues(n, row)} at margin {margin_text} ({how})"
    return n, f"  {key} ({kind}): {n:,} pairs at margin {margin_text} ({how})"


def _differing_share_of_count(row: _GateRow) -> float | None:
    """A count key's share of pairs that differ in the pilot, taking each to differ by 1: its mean square difference.

    ``sd² (n - 1) / n + gap²`` (the pilot's mean of ``(A - B)²``, :func:`_discordance`): the share exactly where every differing pair
    differs by 1 (a count of words or tokens moves by 1 at the least, so at most this share differ). None where
    the pilot's pairs or its gap are not known.
    """
    if row.discordance is not None:
        return row.discordance
    if row.sd is None or not row.pilot_pairs or not math.isfinite(row.sd):
        return None
    n = row.pilot_pairs
    return min(1.0, row.sd**2 * (n - 1) / n)


def _rate_basis(row: _GateRow, n: int, alpha: float, power: float) -> str:
    """How a rate's pairs were planned: the normal formula, or the exact power of its own rule where discordant pairs are few."""
    from fairtalk.stats import FEW_DISCORDANT, POWER_TOLERANCE, power_rate_equivalence

    assert row.discordance is not None and row.margin is not None
    margin = row.margin
    if n * row.discordance >= FEW_DISCORDANT:
        return "normal formula"
    reached = power_rate_equivalence(
        n,
        row.discordance,
        float(margin),
        alpha=alpha,
        rate=row.rate,
        design_effect=row.deff,
        pairs_per_unit=row.pairs_per_unit,
        cluster_sizes=row.cluster_sizes,
    )
    basis = f"exact power of its test, {reached:.2f} at this size"
    if reached < power:  # the first size to reach the target jumps too far past it: the tooth before it
        basis += f" (the next size to reach {power:.2f} jumps past {power + POWER_TOLERANCE:.2f})"
    if abs(reached - power) > POWER_TOLERANCE / 2 and n > 1:  # the power jumps here: one more discordant count passes
        below = power_rate_equivalence(
            n - 1,
            row.discordance,
            float(margin),
            alpha=alpha,
            rate=row.rate,
            design_effect=row.deff,
            pairs_per_unit=row.pairs_per_unit,
            cluster_sizes=row.cluster_sizes,
        )
        basis += f", {below:.2f} at {n - 1:,} (it jumps here)"
    return basis


def _few_differing_need(row: _GateRow, normal: int, alpha: float, power: float) -> tuple[int | None, str] | None:
    """A count key with few differing pairs: the size at which the audit's own rule passes a fair model (None: not few).

    The normal formula (:func:`fairtalk.stats.pairs_for_equivalence`) takes the pilot's spread to hold on any
    sample; where the pilot's differing share leaves under :data:`FEW_DIFFERING` differing pairs at its size,
    a sample may hold none (the audit then needs the identical-answers bound's units) or too few for the TOST to
    pass. That share comes from few of the pilot's pairs, so the size is
    :func:`fairtalk.stats.plan_few_differing`'s (:func:`_few_differing_plan`): the power reaches the target at
    every share in its 95% Clopper-Pearson interval, as the audit's reports plan it. The lines say the interval
    and how the size depends on it.
    """
    try:
        found = _few_differing_plan(row, normal, alpha, power)
    except ValueError as err:
        return None, _beyond(row.key, err)
    if found is None:
        return None
    plan = found.plan
    n = plan.pairs
    head = (
        f"  {row.key} (count): {n:,} pairs{_dialogues(n, row)} at margin ±{row.margin:.4g} (the exact power of the "
        f"audit's own rule, at least {plan.least:.2f} at this size for every differing share in the interval below; "
        f"{_deff_text(row.deff)})"
    )
    return n, "\n".join((head, *_few_differing_text(row, found, normal)))


@dataclass(frozen=True)
class _FewFound:
    """A few-differing count key's plan, the identical-answers bound's pairs and units, and the pairs without the bound."""

    plan: FewDifferingPlan
    identical_pairs: int
    units: int
    without_bound: int | None  # the pairs the TOST alone needs over the interval (None: no size up to a million)
    share: float | None = None  # the key's own share the bound must show below (None: not recorded, the default 2%)


def _few_differing_plan(row: _GateRow, normal: int, alpha: float, power: float) -> _FewFound | None:
    """A count key's :func:`fairtalk.stats.plan_few_differing`, with the identical-answers bound's pairs and units.

    None where its differing pairs are not few at ``normal`` (the normal formula's pairs). ValueError where no size
    reaches the power, or the pilot's pairs, which its share's interval needs, are not known. The bound needs the
    units of the key's own share, its margin over the range of its scores, where the pilot recorded it
    (``identical_share``); else (an older results.json, or the built-in spreads) of the default share, 2%, which
    undercounts them for scores that span more than margin / 2%. The pairs the TOST alone needs, were the bound
    never to pass, come with it.
    """
    from dataclasses import replace

    from fairtalk.stats import FEW_DIFFERING, IDENTICAL_SHARE, identical_units_needed, plan_few_differing

    share = _differing_share_of_count(row)
    if share is None or row.margin is None or not 0 < share < 1 or normal * share >= FEW_DIFFERING:
        return None
    if not row.pilot_pairs:
        raise ValueError(_MSG_FEW_NO_PILOT.format(share=share))
    own = row.identical_share if row.identical_recorded else None  # else the default share: no range to scale by
    ident, _ = _identical_need(replace(row, identical_share=own), alpha, power)
    identical_pairs = ident if ident is not None else _NO_BOUND
    units = identical_units_needed(alpha=alpha, margin=own or IDENTICAL_SHARE, max_difference=1.0)

    def planned(identical: int, sizes: tuple[tuple[int, int], ...]) -> FewDifferingPlan | None:
        assert row.pilot_pairs is not None and row.margin is not None
        return plan_few_differing(
            share,
            float(row.margin),
            normal=normal,
            pilot_pairs=row.pilot_pairs,
            alpha=alpha,
            power=power,
            design_effect=row.deff,
            identical_pairs=identical,
            identical_units=units if sizes else None,
            cluster_sizes=sizes,
        )

    plan = planned(identical_pairs, row.cluster_sizes)
    if plan is None:
        return None
    try:
        alone = planned(_NO_BOUND, ())
        without = alone.pairs if alone is not None else None
    except ValueError:  # beyond a million pairs
        without = None
    return _FewFound(plan, identical_pairs, units, without, own)


def _few_share_text(share: float) -> str:
    """A differing share as plan prints it: a percentage with three significant digits."""
    return f"{100 * share:.3g}%"


def _few_end_text(n: int, share: float, at: tuple[float, float], identical_pairs: int, units: int, row: _GateRow) -> str:
    """What decides a fair audit of ``n`` pairs at one differing ``share``: the identical-answers bound or the TOST."""
    total, identical = at
    if identical < total / 2:
        return f"power {total:.2f}, mostly by the TOST on the {n * share:.3g} pairs that differ in a sample (on average)"
    none = (1 - share) ** n
    if row.cluster_sizes:
        reach = f"{units:,} dialogues, which a sample of {n:,} pairs spans with chance {identical / none:.2f}"
    else:
        reach = f"from {identical_pairs:,} pairs"
    return (
        f"power {total:.2f}: {none:.0%} of samples hold no differing pair and pass only by the identical-answers bound "
        f"({reach}; {identical:.2f} of the power)"
    )


def _few_differing_text(row: _GateRow, found: _FewFound, normal: int) -> list[str]:
    """The lines under a few-differing key's size: the pilot's share, its interval, and what the size holds at each end."""
    plan, identical_pairs, units = found.plan, found.identical_pairs, found.units
    n, share, low, high = plan.pairs, plan.share, plan.low, plan.high
    counted = round(share * (row.pilot_pairs or 0))
    ends = {low: "the low end", high: "the high end", share: "the pilot's share"}
    which = ends.get(plan.least_share, "inside the interval")
    deff = f", the pilot's pairs counted at design effect {row.deff:.3g}" if row.deff > 1 else ""
    lines = [
        f"    the differing share is uncertain: the pilot's sd of A - B {row.sd:.4g} is {share:.3%} of pairs differing "
        f"by 1, about {counted:,} of its {row.pilot_pairs or 0:,}; from so few, the share an audit meets lies between "
        f"{_few_share_text(low)} and {_few_share_text(high)} ({plan.confidence:.0%} Clopper-Pearson interval{deff}), "
        "and the size holds for every share in it: the least power, "
        f"{plan.least:.2f}, is at {_few_share_text(plan.least_share)} ({which})",
        f"    at the low end, {_few_share_text(low)}: {_few_end_text(n, low, plan.at_low, identical_pairs, units, row)}",
        f"    at the high end, {_few_share_text(high)}: {_few_end_text(n, high, plan.at_high, identical_pairs, units, row)}",
    ]
    at_share = "no size up to a million pairs, whatever the share"
    if plan.at_share is not None and plan.at_share_least is not None:
        at_share = f"{plan.at_share:,} pairs, whose power falls to {plan.at_share_least:.2f} within the interval"
    lines.append(
        f"    at the pilot's share alone, taken as known, the plan would be {at_share}; the normal formula's {normal:,} "
        f"pairs would hold {normal * share:.2g} differing"
    )
    lines.append(_few_bound_text(row, found))
    return lines


def _few_bound_text(row: _GateRow, found: _FewFound) -> str:
    """The line on the identical-answers bound's units: the key's own (its margin over its scores' range), or the default's."""
    units, share = found.units, found.share
    unit = "dialogues" if row.cluster_sizes or row.pairs_per_unit > 1 else "pairs"
    tost = f"{found.without_bound:,} pairs" if found.without_bound is not None else "more than a million pairs"
    never = f"were the bound never to pass, the TOST alone would need {tost} for every share in the interval"
    if share is None:
        return (
            f"    the identical-answers bound is planned at its default share, 2% of {unit} ({units:,}), since the "
            "pilot's results.json does not record the key's own (identical_share, written by audits from this version "
            f"on; rerun the pilot to plan it): a count whose scores span more than its margin / 2% needs more, and {never}"
        )
    spread = f", the pilot's scores spanning {float(row.margin or 0.0) / share:.3g}" if share < 1 else ""
    dialogues = sum(count for _, count in row.cluster_sizes)
    beyond = (
        f", more than the corpus' {dialogues:,} dialogues hold, so no sample of it passes this way"
        if row.cluster_sizes and units > dialogues
        else ""
    )
    return (
        f"    the identical-answers bound needs {units:,} {unit} on this key{beyond}: it shows the share of {unit} that "
        f"could differ below the margin over the range of its scores, {share:.3%}{spread}; an audit of "
        f"{found.plan.pairs:,} pairs may see a wider range and need more (plan again from its results.json); {never}"
    )


def _identical_need(row: _GateRow, alpha: float, power: float, corpus: bool = False) -> tuple[int | None, str]:
    """A key identical on every pair of the pilot: the units the audit's identical-answers bound needs, and their pairs.

    The bound counts units (dialogues where the audit clusters, else pairs): ``identical_units_needed`` of the
    share the key is bounded below (a rate's margin; a count's margin over its scores' range, else 2%). Where the
    audit clusters they become pairs as a rate's dialogues do: those a sample of the corpus spans with ``power``,
    else the pilot's pairs per dialogue.
    """
    from fairtalk.stats import IDENTICAL_SHARE, identical_units_needed, pairs_spanning

    share = row.identical_share or IDENTICAL_SHARE
    if row.kind == "rate" and row.margin is not None and row.margin > 0:
        share = float(row.margin)
    units = identical_units_needed(alpha=alpha, margin=share, max_difference=1.0)
    try:
        n = pairs_spanning(units, power=power, pairs_per_unit=row.pairs_per_unit, cluster_sizes=row.cluster_sizes)
    except ValueError as err:
        return None, _beyond(row.key, err)
    bound = (
        f"the pilot answered both sides alike on every pair; the audit's identical-answers bound shows the share of "
        f"{{units}} that could differ below {100 * share:.3g}%" + (", whatever the margin" if corpus else "")
    )
    if row.cluster_sizes:
        total, dialogues = sum(m * count for m, count in row.cluster_sizes), sum(count for _, count in row.cluster_sizes)
        spans = f"a sample of the corpus' {total:,} pairs spans that many with power {power:.0%}"
        if units > dialogues or n > total:  # beyond the corpus: the size of a corpus larger in the same proportions
            spans = (
                f"more than the corpus holds: it has {dialogues:,} dialogues in {total:,} pairs, so no audit of it passes "
                "this way; the pairs are those of a corpus larger in the same proportions"
            )
        size = f"{units:,} dialogues (about {n:,} pairs: {spans})"
        bound = bound.format(units="dialogues")
    elif row.pairs_per_unit > 1:
        size = f"{units:,} dialogues (about {n:,} pairs, at the pilot's {row.pairs_per_unit:.3g} pairs per dialogue)"
        bound = bound.format(units="dialogues")
    else:
        size = f"{n:,} pairs"
        bound = bound.format(units="pairs")
    line = f"  {row.key} ({row.kind}): {size}, all answered alike ({bound})"
    if corpus:
        line += "; if the audited model's answers differ, plan from a pilot where they do"
    return n, line


def _corpus_without_spread(row: _GateRow, alpha: float, power: float) -> tuple[int | None, str] | None:
    """A pilot's corpus key that its permutation test gave no spread: every pair answered alike, or too few differ.

    None where neither (or its differing share is not known): planned from its spread. Identical answers pass by
    the audit's bound on the differing share, whatever the margin; too few differing units leave no spread to plan from.
    """
    margin = row.margin
    if row.differing is None or not row.pilot_pairs:
        return None
    if row.differing > 0 and (row.sd is not None or margin is None or not margin > 0):
        return None
    if row.differing == 0:
        return _identical_need(row, alpha, power, corpus=True)
    differing = round(row.differing * row.pilot_pairs)
    return None, (
        f"  {row.key} (corpus): only {differing:,} of the pilot's {row.pilot_pairs:,} pairs answer the two sides "
        "differently, too few (or in too few dialogues) for its permutation test to give a spread: cannot plan it; "
        "give --results of a larger pilot"
    )


def _deff_text(deff: float) -> str:
    """The design effect as plan states it: one below 1 (a pilot's estimate) is planned as 1, and plan says so."""
    if deff < 1:
        return f"design effect {deff:.3g}, planned as 1: a pilot's estimate below 1 is not relied on"
    return f"design effect {deff:.3g}"


def _corpus_need(row: _GateRow, alpha: float, power: float) -> tuple[int | None, str]:
    """A corpus key's pairs for the gate: its margin over the permutation interval's SE, scaled to each size.

    The normal formula (a fixed margin, an SE falling as ``1 / sqrt(n)``) planned the bare audit's corpus keys at
    sizes where a fair model passed 0.99-1.00 of the time: see :func:`fairtalk.stats.pairs_for_corpus_equivalence`.
    Where the pairs' differing share is known (the built-in spreads, or a pilot's ``corpus_differing_pairs``), the
    power also counts the chance that a sample holds the differing dialogues the permutation test needs
    (:func:`fairtalk.stats.corpus_decidable`); without it (an older pilot), 25 pairs at the fewest.
    """
    from fairtalk.stats import (
        CORPUS_LEAST_PAIRS_UNMODELLED,
        POWER_TOLERANCE,
        corpus_decidable,
        corpus_least_units,
        pairs_for_corpus_equivalence,
        power_corpus_at_size,
        spanned_dialogues,
    )

    assert row.sd is not None and row.margin is not None and row.pilot_pairs
    n_pilot, margin = row.pilot_pairs, float(row.margin)
    ratio = margin / (row.sd / math.sqrt(n_pilot))
    differing, sizes = row.differing, row.cluster_sizes

    def pairs(exponent: float, spread: float = 0.0) -> int:
        return pairs_for_corpus_equivalence(
            ratio, n_pilot, exponent=exponent, alpha=alpha, power=power, differing=differing, sizes=sizes, spread=spread
        )

    spread = 0.0
    try:
        if row.curve:  # fitted on the pilot's answers: over the whole curve, then between that size and the pilot's
            n = pairs(_curve_exponent(row.curve, row.relative_margin)[0])
            exponent, low, high = _curve_exponent(row.curve, row.relative_margin, n)
            spread, spread_at = _curve_spread(row.curve, row.relative_margin, pairs(exponent))
            n = pairs(exponent, spread)
            averaged = f"; the power averaged over a sample's spread of the ratio, sd {spread:.2f} in log at {spread_at:,} pairs"
            whose = f"{_FIT_PILOT} (its samples of {low:,}-{high:,} pairs{averaged if spread_at else ''})"
        else:
            exponent, whose = CORPUS_SCALING[row.key][0 if row.relative_margin else 1], _FIT_BARE
            n = pairs(exponent)
    except ValueError as err:
        return None, _beyond(row.key, err)
    reached = power_corpus_at_size(
        n, ratio, n_pilot, exponent=exponent, alpha=alpha, differing=differing, sizes=sizes, spread=spread
    )
    at = f"±{100 * margin:.3g} pp at the pilot's {n_pilot:,} pairs"
    which = (
        f"its default margin, ±10% of its value ({at}; wider on fewer pairs)"
        if row.relative_margin
        else f"margin ±{100 * margin:.3g} pp (the pilot's --margin, the same at any size)"
    )
    how = (
        f"permutation TOST; the margin is {ratio:.3g} standard errors of its interval at the pilot, growing as "
        f"n^{exponent:.2f} {whose}; "
    )
    if reached > power + POWER_TOLERANCE:  # the normal approximation overstates it on so few pairs: no figure
        how += f"power above {power:.2f} at any size from {n:,} pairs (the fewest planned): it cannot be planned nearer"
    else:
        how += f"power about {reached:.2f} at this size"
    if row.differing is not None:
        decides = corpus_decidable(n, row.differing, row.cluster_sizes, alpha=alpha)
        if decides < 1 - POWER_TOLERANCE / 10:  # on few pairs the test's discreteness decides: say so
            units = f"of its about {spanned_dialogues(n, row.cluster_sizes):,} dialogues" if row.cluster_sizes else "of its pairs"
            how += (
                f"; the permutation test passes nothing unless {corpus_least_units(alpha)} or more {units} hold answers "
                f"that differ ({row.differing:.0%} of {row.differing_whose} pairs do; the power counts its chance, "
                f"{decides:.2f})"
            )
    else:
        how += (
            f"; from {CORPUS_LEAST_PAIRS_UNMODELLED} pairs at the fewest, since the pilot's results.json does not count its "
            "pairs whose two answers differ (corpus_differing_pairs, written by audits from this version on): the "
            "permutation test's chance to decide on fewer pairs is not modelled; rerun the pilot to model it"
        )
    return n, f"  {row.key} (corpus): {n:,} pairs at {which} ({how})"


def _gate(results: str | None, alpha: float, power: float) -> None:
    """Say how many pairs the equivalence gate needs for each primary measure at its margin."""
    rows, source, pilot = _gate_rows(results, alpha)
    say(
        f"pairs the equivalence gate (--fail-unless-equivalent) needs to pass a fair model with power {power:.0%} "
        f"(TOST at α {alpha:g} per measure; all of them together is an intersection-union test, no correction; "
        "a rate's from the exact power of its own rule where its discordant pairs are few: under 10 discordant units, "
        "dialogues where the audit clusters, an exact bound on each direction's share of units decides):"
    )
    sizes = next((row.cluster_sizes for row in rows if row.cluster_sizes), ())
    if results is not None and sizes:  # the pilot's own corpus
        corpus, dialogues = sum(m * count for m, count in sizes), sum(count for _, count in sizes)
        whose = "the pilot's corpus gives"
    else:
        corpus, dialogues, whose = BUILTIN_GENDER_PAIRS, BUILTIN_GENDER_DIALOGUES, "the built-in gender axis gives"
    needs = []
    for row in rows:
        n, line = _gate_need(row, alpha, power)
        if n is not None and n > corpus and not any(said in line for said in _SAID_BEYOND):
            line += f"; more than the {corpus:,} pairs {whose}"
        say(line)
        if n is not None:
            needs.append(n)
    lasting, notes = ((), ()) if results is None else _at_any_size(results)
    if needs:
        most = max(needs)
        within = "within" if most <= corpus else "more than"
        opening = (
            f"a fair model needs at least {most:,} pairs to pass the gate"
            if lasting
            else f"the gate needs at least {most:,} pairs"
        )
        say(
            f"{opening} (the most any one primary measure needs; with several "
            f"measures near that many, all passing together is less likely than {power:.0%})"
            + _pilot_text(pilot)
            + f"; {within} the {corpus:,} pairs ({dialogues:,} dialogues) {whose}"
            + ("; but a model like the pilot fails the gate at any size (the next line)" if lasting else "")
        )
    if lasting:
        say(_MSG_AT_ANY_SIZE + "; ".join(lasting))
    for note in notes:
        say(note, style="yellow")
    pilot_sizes = sizes if results is not None else BUILTIN_GENDER_DIALOGUE_SIZES
    say(_identical_text(alpha, power, pilot_sizes, results is not None))
    say(f"from {source}")


#: What plan says where the pilot's own results fail the gate at any size (:func:`fairtalk.gates.at_any_size`).
_MSG_AT_ANY_SIZE = (
    "a model like the pilot fails the gate at any size (more pairs narrow an interval, not the gap it is about), so "
    "these sizes are for a fair model only: "
)
#: The fields of a pilot's measure that plan does not need but a MeasureResult has no default for.
_MEASURE_DEFAULTS: dict[str, Any] = {
    "a": math.nan,
    "b": math.nan,
    "difference": None,
    "z": None,
    "p": None,
    "p_paired": None,
    "paired_test": "",
    "ci95": [None, None],
    "effect_size": None,
    "effect_size_name": "",
}


def _at_any_size(path: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """What the gate fails on a model like the pilot at any size, as :func:`fairtalk.gates.at_any_size` says it.

    The pilot's results.json is read as an :class:`~fairtalk.results.AuditResult`; a file written
    by hand, or before a field was recorded, is read as far as it goes (a measure it cannot read is
    left out; counts of lost or empty answers that are no counts, or do not add up, are said so and
    left out), so the gates decide on what it holds. Returns the gates' reasons, and plan's notes on what it left out.
    """
    from fairtalk.gates import at_any_size

    data = _read_results(path)
    summary, said = _pilot_summary(path, data)
    pilot = _pilot_result({**data, "input_summary": summary})
    try:
        found = at_any_size(pilot) if pilot is not None else ()
        unknown = pilot is not None and pilot.losses is not None and pilot.losses.unknown > 0
    except (TypeError, ValueError, ArithmeticError):  # a hand-edited file the gates cannot read: no claim
        found, unknown = (), False
    said += (_MSG_UNKNOWN_SIDE.format(path=path),) if unknown else ()
    return tuple(d.reason if d.key is None else f"{d.key}: {d.reason}" for d in found), said


#: A pilot's counts of lost or empty answers that plan cannot read: the gates' checks of them are not said.
_MSG_BAD_SUMMARY = (
    "{path}: its counts of lost or empty answers (input_summary) do not add up, or exceed {most:,} pairs, so plan "
    "cannot say whether they fail the gate at any size (rerun the pilot)"
)
#: A pilot whose lost pairs carry no side: the gates fail on it (a new audit records the sides).
_MSG_UNKNOWN_SIDE = (
    "{path}: its lost pairs do not record which side was lost (written before the sides were counted): every gate "
    "fails on such a file, and plan cannot plan their check; rerun the pilot"
)
#: The most pairs asked a pilot's counts of lost or empty answers are read for (beyond: no audit, and no memory, holds them).
_MOST_ASKED = 10**7
#: The input_summary keys that count lost or empty answers by side.
_COUNT_PREFIXES = ("n_lost_", "n_empty_")


def _pilot_summary(path: str, data: Mapping[str, Any]) -> tuple[dict[str, int], tuple[str, ...]]:
    """A pilot's ``input_summary`` as counts the gates can read, and a note where its loss or empty counts do not add up."""
    from fairtalk.results import PairLosses

    given = data.get("input_summary")
    items = [(str(k), v) for k, v in (given.items() if isinstance(given, Mapping) else ())]
    summary = {k: v for k, v in items if isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= 10**9}
    counted = [k for k, _ in items if k.startswith(_COUNT_PREFIXES)]
    n_pairs = data.get("n_pairs")
    n = n_pairs if isinstance(n_pairs, int) and not isinstance(n_pairs, bool) and n_pairs >= 0 else 0
    found = (PairLosses.from_summary(summary, n), PairLosses.from_empties(summary, n))
    if all(_adds_up(f) for f in found) and all(k in summary for k in counted):
        return summary, ()
    kept = {k: v for k, v in summary.items() if not k.startswith(_COUNT_PREFIXES)}
    return kept, (_MSG_BAD_SUMMARY.format(path=path, most=_MOST_ASKED),)


def _adds_up(found: Any) -> bool:
    """Whether a pilot's lost (or empty) answers, as PairLosses, are counts that add up, on at most ``_MOST_ASKED`` pairs."""
    if found is None:
        return True
    return bool(min(found.a_only, found.b_only, found.both) >= 0 and found.n_lost <= found.n_asked <= _MOST_ASKED)


def _pilot_result(data: Mapping[str, Any]) -> Any:
    """A pilot's results.json as an AuditResult: whole where it reads so, else its measures, losses and empties."""
    from fairtalk.results import AuditResult, MeasureResult

    try:
        return AuditResult.from_dict(data)
    except (KeyError, TypeError, ValueError, AttributeError):  # hand-written or older: read what the gates need
        pass
    measures = []
    rows = data.get("measures")
    for name, row in rows.items() if isinstance(rows, Mapping) else ():
        try:
            measures.append(MeasureResult.from_dict({**_MEASURE_DEFAULTS, **row, "name": name}))
        except (KeyError, TypeError, ValueError, AttributeError):
            continue
    alpha, n_clusters = data.get("alpha"), data.get("n_clusters")
    try:
        return AuditResult(
            axis=str(data.get("axis") or "pilot"),
            groups=("a", "b"),
            n_pairs=int(data.get("n_pairs") or 0),
            measures=tuple(measures),
            alpha=float(alpha) if isinstance(alpha, int | float) and 0 < alpha < 1 else _ALPHA,
            input_summary=data["input_summary"],
            n_clusters=n_clusters if isinstance(n_clusters, int) and not isinstance(n_clusters, bool) else None,
            lost_by_dialogue=_loss_tally(data.get("lost_by_dialogue")),
            empty_by_dialogue=_loss_tally(data.get("empty_by_dialogue")),
        )
    except (TypeError, ValueError):
        return None


#: What a line that plans beyond the corpus already says of it (else :func:`_gate` says so at its end).
_SAID_BEYOND = ("were the corpus larger", "more than the corpus holds")


def _pilot_text(pilot: tuple[int, int] | None) -> str:
    """``; the pilot scored N pairs`` (and of how many asked, where it lost some), or nothing without a pilot."""
    if pilot is None:
        return ""
    scored, asked = pilot
    if asked > scored:
        return f"; the pilot scored {scored:,} of the {asked:,} pairs it asked ({asked - scored:,} lost on a side)"
    return f"; the pilot scored {scored:,} pairs"


def _identical_text(alpha: float, power: float, sizes: tuple[tuple[int, int], ...], pilot: bool) -> str:
    """The closing line on identical answers: the units the bound needs, and the pairs that span them where known."""
    from fairtalk.stats import IDENTICAL_SHARE, identical_units_needed, pairs_spanning

    units = identical_units_needed(alpha=alpha, margin=IDENTICAL_SHARE, max_difference=1.0)
    whose = "the pilot's corpus" if pilot else "the built-in gender axis"
    text = (
        f"identical answers on both sides pass at {units:,} units or more: pairs, or dialogues where the audit clusters "
        "by dialogue (the default on a corpus of dialogues"
        + ("" if pilot else "; the built-in gender axis holds 147 dialogues in 500 pairs and 153 in 600")
        + ")"
    )
    if not sizes:
        return text
    try:
        n = pairs_spanning(units, power=power, cluster_sizes=sizes)
    except ValueError:
        return text
    return text + f"; a sample of about {n:,} pairs of {whose} spans {units:,} dialogues with power {power:.0%}"


def _kinds() -> dict[str, str]:
    """Result key -> kind (rate, count, corpus) of every registered measure that builds without options."""
    import fairtalk
    from fairtalk.measures import measure_names

    kinds: dict[str, str] = {}
    for name in measure_names():
        try:
            measure = fairtalk.get_measure(name)
        except (fairtalk.FairtalkError, TypeError, ValueError, ImportError):  # needs options (attribute_words: a lexicon)
            continue
        kinds.update({key: str(measure.kind_of(key)) for key in measure.keys})
    return kinds


def _check_rate(measure: str, kind: str | None) -> None:
    """Exit 2 unless ``measure`` is a rate: by the earlier audit's ``kind`` when given, else by the registered measures."""
    kinds = _kinds() if kind is None else {measure: kind}
    if measure not in kinds:
        fail(_MSG_RATE_UNKNOWN.format(name=measure, rates=", ".join(sorted(k for k, v in kinds.items() if v == "rate"))))
    if kinds[measure] != "rate":
        fail(_MSG_RATE_COUNT.format(name=measure, kind=kinds[measure]))


def _from_results(path: str, measure: str) -> dict[str, Any]:
    """The measure's row of a results.json, with the run's family size and n."""
    data = _read_results(path)
    rows = data["measures"]
    if measure not in rows:
        fail(_MSG_NO_MEASURE.format(path=path, name=measure, names=", ".join(sorted(rows)) or "none"))
    row = rows[measure]
    n_pairs = int(data.get("n_pairs") or 0) or None
    n_clusters = data.get("n_clusters")
    clustered = isinstance(n_clusters, int) and not isinstance(n_clusters, bool) and n_clusters > 0
    manifest = data.get("manifest")
    known: dict[str, Any] = {
        "deff": float(row.get("design_effect") or 1.0),
        "tests": int(data.get("family_size") or 1),
        "n_pairs": data.get("n_pairs"),
        "mde": row.get("mde"),
        "alpha": float(data.get("alpha") or _ALPHA),
        "kind": row.get("kind"),
        "clustered": clustered,
        "binary_test": manifest.get("binary_test") if isinstance(manifest, dict) else None,
    }
    spread = row.get("sd_difference")
    if isinstance(spread, int | float) and not isinstance(spread, bool) and spread > 0:
        known["sd"] = float(spread)
    else:  # --sd or --rate may give it; else plan says why the run has none (see _detect_spread)
        known["no_sd"] = _no_spread(path, measure, row)
    if row.get("kind") == "rate" and "sd" in known:
        known["discordance"] = _discordance(known["sd"], n_pairs, row.get("a"), row.get("b"))
    if clustered and n_pairs and isinstance(n_clusters, int):
        known["per_unit"] = max(1.0, n_pairs / n_clusters)
        known["sizes"] = _dialogue_sizes(data.get("corpus_dialogue_sizes"))
    return known


def _no_spread(path: str, measure: str, row: Mapping[str, Any]) -> str:
    """Why an earlier audit's row gives no spread to plan from, and what to give instead, by the kind of key."""
    kind = row.get("kind")
    if kind == "corpus":
        return _MSG_NO_SD_CORPUS.format(path=path, name=measure)
    spread = row.get("sd_difference")
    why = None if spread is None else "tied" if row.get("difference") == 0 else "constant"
    give = _NO_SD_GIVE["rate" if kind == "rate" else None]
    return _MSG_NO_SD.format(path=path, name=measure, why=_NO_SD_WHY[why], give=give)


def _check_size(flag: str, value: float) -> None:
    """Exit 2 unless ``value`` lies in :data:`SIZE_RANGE` (NaN included)."""
    low, high = SIZE_RANGE
    if not low <= value <= high:
        fail(_MSG_SIZE.format(flag=flag, low=low, high=high, value=value))


def _check_alpha(alpha: float) -> None:
    if not MIN_ALPHA <= alpha < 1:
        fail(_MSG_ALPHA.format(value=alpha))


def _check_mode(gate: bool, gold: float | None, given: dict[str, object]) -> None:
    """Exit 2 for --gold with --gate, or an option the chosen question does not use (``given``: flag -> value or None)."""
    if gold is not None and gate:
        fail(_MSG_GOLD_AND_GATE)
    unused: tuple[str, ...] = ("--effect", "--rate", "--tests", "--design-effect")
    if gold is not None:
        mode, what, flags = "--gold", _GOLD_PLANS, ("--power", *unused)  # a labelled interval has no power
    elif gate:
        mode, what, flags = "--gate", _GATE_PLANS, ("--measure", "--sd", *unused)
    else:
        return
    for flag in flags:
        if given.get(flag) is not None:
            fail(_MSG_NOT_FOR.format(flag=flag, mode=mode, what=what))


def _labels(measure: str | None, half_width: float, results: str | None, sd: float | None, alpha: float) -> None:
    """``plan --gold``: the labelled pairs a prediction-powered interval of ±``half_width`` needs."""
    from fairtalk.stats import labels_needed

    if measure is None or not measure.strip():
        fail(_MSG_NO_KEY)
    _check_size("--gold", half_width)
    _check_alpha(alpha)
    floor, caveat, kind, run_pairs = 0.0, "", None, None
    if sd is not None:
        _check_size("--sd", sd)
        error_sd, source = sd, "--sd"
        if results is not None:
            kind = _result_kind(results, measure)
    elif results is not None:
        error_sd, floor, source, caveat, run_pairs = _labelled_spread(results, measure, alpha)
        kind = _result_kind(results, measure)
    else:
        fail(_MSG_NO_ERROR_SPREAD)
    kind = kind if kind is not None else _kinds().get(measure)
    if kind == "rate" and not half_width <= 1:
        fail(_MSG_RATE_GOLD.format(name=measure, half=half_width))
    amount = functools.partial(_half_width_text, rate=kind == "rate")
    if floor >= half_width:
        fail(_MSG_FLOOR.format(name=measure, half=amount(half_width), floor=amount(floor), path=results))
    try:
        needed = labels_needed(math.sqrt(half_width**2 - floor**2), error_sd, alpha=alpha)
    except ValueError as err:
        fail(str(err))
    least = (
        f" (at least {LEAST_LABELS}: score --gold needs {LEAST_LABELS} for a labelled estimate)" if needed < LEAST_LABELS else ""
    )
    needed = max(needed, LEAST_LABELS)
    say(
        f"{measure}: {needed:,} labelled pairs{least} give a {1 - alpha:.0%} interval of {amount(half_width)} for the "
        "labelled gap "
        + ("(spread of the labels' own per-pair gap" if caveat else "(spread of the scorer's per-pair error")
        + f" {error_sd:.4g}, from {source}; both sides of each pair labelled)"
        + (f"; the scorer's own term, {amount(floor)}, is a floor more labels cannot lower" if floor else "")
    )
    if caveat:
        say(caveat, style="yellow")
    if run_pairs is not None and needed > run_pairs:
        shrinks = ""
        if floor:
            least_labels = max(LEAST_LABELS, labels_needed(half_width, error_sd, alpha=alpha))
            shrinks = _MSG_FLOOR_SHRINKS.format(floor=amount(floor), pairs=run_pairs, least=least_labels)
        say(
            _MSG_MORE_THAN_RUN.format(needed=needed, pairs=run_pairs, path=results, responses=2 * needed) + shrinks,
            style="yellow",
        )


def _half_width_text(half: float, *, rate: bool) -> str:
    """A half-width as plan says it: in percentage points for a rate (as score --gold does), else in the key's units."""
    return f"±{100 * half:.4g} pp" if rate else f"±{half:.4g}"


def _result_kind(path: str, measure: str) -> str | None:
    """The kind (rate, count ...) of ``measure`` in a results.json, where it has the measure (None otherwise)."""
    row = _read_results(path)["measures"].get(measure)
    kind = row.get("kind") if isinstance(row, Mapping) else None
    return kind if isinstance(kind, str) else None


_MSG_FLOOR = (
    "{name}: no number of labels gives {half}: the scorer's own term in {path} (its gap on every pair, which labels "
    "do not shrink) is already {floor}; ask for a wider interval, or score more pairs"
)
_MSG_OLD_PPI = (
    "{path}: its labelled estimate of {name!r} does not split its spread (written by an older fairtalk): rerun score --gold"
)
_MSG_MORE_THAN_RUN = (
    "warning: {needed:,} labelled pairs are more than the {pairs:,} pairs {path} scored, and only pairs an audit holds "
    "can be labelled: audit at least {needed:,} pairs and label {needed:,} of them (label --n {responses:,}: both sides "
    "of each pair)"
)
_MSG_FLOOR_SHRINKS = (
    "; the scorer's own term, {floor}, was measured at the run's {pairs:,} pairs and shrinks as more are scored, so "
    "in a larger audit as few as {least:,} labels may do: plan again from its run with --gold"
)
_CAVEAT_FEW = (
    "warning: only {k} labelled {unit} in {path} {verb} with the scorer, too few to estimate its error; its estimate is "
    "the labels' alone and so is the spread used, so the labels planned may be more than needed"
)


_CAVEAT_NO_NARROWER = (
    "warning: the labelled estimate in {path} is the labels' alone (PPI++'s interval was no narrower), so the spread "
    "used is the labels' own, not the scorer's error; the labels planned may be more than a scorer that helps needs"
)


def _labelled_spread(results: str, measure: str, alpha: float) -> tuple[float, float, str, str, int | None]:
    """From a run with --gold: the labelled term's per-pair spread, the scorer-only half-width, the source, a caveat, its pairs.

    The spread is the scorer's per-pair error where the run's estimate was PPI's, else (the labels alone: too few
    disagreements, or PPI++ no narrower) the labels' own, and the caveat says so. Its pairs are the run's (None where
    the file does not say).

    The labelled pairs' term is the only one more labels shrink (``se_labelled * sqrt(n_labels)`` per pair); the
    scorer's term on every pair (``se_scorer``) sets a half-width no number of labels can beat.
    """
    from scipy.stats import norm

    from fairtalk.stats import MIN_DISAGREEMENTS

    data = _read_results(results)
    rows = data["measures"]
    if measure not in rows:
        fail(_MSG_RESULTS.format(path=results, reason=f"no measure {measure!r}"))
    ppi = rows[measure].get("ppi")
    if not isinstance(ppi, dict) or not ppi.get("se") or not ppi.get("n_labels"):
        fail(_MSG_NO_PPI.format(path=results, name=measure))
    labelled, scorer = ppi.get("se_labelled"), ppi.get("se_scorer")
    if not isinstance(labelled, int | float) or not isinstance(scorer, int | float):
        fail(_MSG_OLD_PPI.format(path=results, name=measure))
    n_labels = float(ppi["n_labels"])
    floor = float(norm.ppf(1 - alpha / 2)) * float(scorer)
    k = ppi.get("n_disagreements")
    few = isinstance(k, int) and k < MIN_DISAGREEMENTS
    clustered = isinstance(data.get("n_clusters"), int) and not isinstance(data.get("n_clusters"), bool)
    unit = ("dialogue" if k == 1 else "dialogues") if clustered else ("pair" if k == 1 else "pairs")  # as score says it
    verb = "disagrees" if k == 1 else "disagree"
    caveat = _CAVEAT_FEW.format(k=k, unit=unit, verb=verb, path=results) if few else ""
    if not few and ppi.get("effective_labels") is None:  # the labels alone: PPI++'s interval was no narrower
        caveat = _CAVEAT_NO_NARROWER.format(path=results)
    items = ppi.get("n_items")
    run_pairs = items if isinstance(items, int) and not isinstance(items, bool) and items > 0 else None
    return float(labelled) * math.sqrt(n_labels), floor, f"{results} ({ppi['n_labels']} labels)", caveat, run_pairs


_MSG_NOT_A_NUMBER = "{flag} must be a number, got {value!r}"
_MSG_TESTS = "--tests must be a whole number >= 1 (the tests in the corrected family), got {value!r}"


@dataclass(frozen=True, slots=True)
class _Numbers:
    """plan's numeric options, read (None: not given)."""

    effect: float | None
    sd: float | None
    rate: float | None
    alpha: float | None
    power: float | None
    tests: int | None
    design_effect: float | None
    gold: float | None


def _number(flag: str, text: str | None) -> float | None:
    """A numeric option as given (None: not given); exit 2 with one ``error:`` line where it is no number.

    plan's numbers are read here, not by click, whose refusal is a usage block of three lines; each
    option's range is checked where it is used, in the same one-line form.
    """
    if text is None:
        return None
    try:
        return float(text)
    except ValueError:
        fail(_MSG_NOT_A_NUMBER.format(flag=flag, value=text))


def _whole_tests(text: str | None) -> int | None:
    """``--tests`` as given (None: not given); exit 2 unless it is a whole number >= 1."""
    if text is None:
        return None
    try:
        tests = int(text)
    except ValueError:
        fail(_MSG_TESTS.format(value=text))
    if tests < 1:
        fail(_MSG_TESTS.format(value=tests))
    return tests


@app.command()
def plan(  # noqa: C901
    measure: str | None = typer.Option(None, "--measure", help="The result key to plan for, e.g. offense_rate or length."),
    effect: str | None = typer.Option(
        None,
        "--effect",
        metavar="FLOAT",
        help="The smallest difference A - B worth detecting, in the measure's units (0.01 = 1 pp of a rate).",
    ),
    gate: bool = typer.Option(
        False,
        "--gate",
        help="Instead: the pairs the equivalence gate needs for each primary measure. Each at its margin, from "
        "--results of a pilot run, else from the built-in corpus' spreads.",
    ),
    results: str | None = typer.Option(
        None, "--results", help="results.json of an earlier audit: its spread, design effect and family size."
    ),
    sd: str | None = typer.Option(None, "--sd", metavar="FLOAT", help="Standard deviation of the per-pair difference A - B."),
    rate: str | None = typer.Option(
        None,
        "--rate",
        metavar="FLOAT",
        help="For a rate with no earlier audit: its expected rate on each side. The sides are assumed independent "
        "(a safe overestimate).",
    ),
    alpha: str | None = score_option(
        "alpha",
        "--alpha",
        ranged=True,
        default=None,
        lead="Significance level of the planned test (with --gate, the equivalence test).",
        note=f"With --gold, the interval's level is 1 - alpha. Default: with --measure, the earlier audit's (--results), else {_ALPHA:g}; with --gate or --gold, {_ALPHA:g}.",
    ),
    power: str | None = score_option(
        "power",
        "--power",
        ranged=True,
        default=None,
        lead="Power planned for: of detecting --effect, or with --gate of showing equivalence.",
        note=f"Not with --gold. Default: {_POWER:g}.",
    ),
    tests: str | None = typer.Option(
        None,
        "--tests",
        metavar="<int >= 1>",
        help="Tests in the corrected family (default: the earlier audit's; else 1). Holm is planned as Bonferroni, a safe bound.",
    ),
    design_effect: str | None = typer.Option(
        None,
        "--design-effect",
        metavar="FLOAT",
        help="Variance inflation from clustered pairs (default: the earlier audit's; else 1).",
    ),
    gold: str | None = typer.Option(
        None,
        "--gold",
        metavar="HALF_WIDTH",
        help="Instead: the labelled pairs a --gold interval of ±HALF_WIDTH needs for --measure. The interval is that "
        "of score --gold; the spread comes from --results of a run with --gold (its scorer's error spread) or --sd (the spread of the scorer's per-pair error).",
    ),
) -> None:
    """Say how many pairs an audit needs to detect a difference of --effect in --measure, or with --gate to show equivalence."""
    given = _Numbers(
        effect=_number("--effect", effect),
        sd=_number("--sd", sd),
        rate=_number("--rate", rate),
        alpha=_number("--alpha", alpha),
        power=_number("--power", power),
        tests=_whole_tests(tests),
        design_effect=_number("--design-effect", design_effect),
        gold=_number("--gold", gold),
    )
    _check_mode(
        gate,
        given.gold,
        {
            "--power": given.power,
            "--measure": measure,
            "--effect": given.effect,
            "--sd": given.sd,
            "--rate": given.rate,
            "--tests": given.tests,
            "--design-effect": given.design_effect,
        },
    )
    if given.gold is not None:
        _labels(measure, given.gold, results, given.sd, given.alpha if given.alpha is not None else _ALPHA)
        return
    planned = given.power if given.power is not None else _POWER
    if not 0 < planned <= MAX_POWER:
        fail(_MSG_POWER.format(value=planned))
    if gate:
        level = given.alpha if given.alpha is not None else _ALPHA
        _check_alpha(level)
        _gate(results, level, planned)
        return
    if measure is None or given.effect is None:
        fail(_MSG_GATE_OR_EFFECT)
    _detect(measure, given.effect, results, given.sd, given.rate, given.alpha, planned, given.tests, given.design_effect)


def _detect(
    measure: str,
    effect: float,
    results: str | None,
    sd: float | None,
    rate: float | None,
    alpha: float | None,
    power: float,
    tests: int | None,
    design_effect: float | None,
) -> None:
    """``plan --measure K --effect E``: the pairs on which K's own test detects E with ``power`` (the report's MDE, inverted)."""
    from fairtalk.report import measure_amount
    from fairtalk.stats import pairs_to_detect

    if not measure.strip():
        fail(_MSG_NO_KEY)
    _check_size("--effect", effect)
    known, kind = _detect_spread(measure, results, sd, rate)
    if kind == "rate" and not effect <= 1:
        fail(_MSG_RATE_EFFECT.format(name=measure, effect=effect))
    level = alpha if alpha is not None else known.get("alpha", _ALPHA)
    _check_alpha(level)
    family = tests if tests is not None else known.get("tests", 1)
    if level / family < MIN_ALPHA:
        fail(_MSG_PER_TEST.format(alpha=level, tests=family, level=level / family, low=MIN_ALPHA))
    deff = design_effect if design_effect is not None else known.get("deff", 1.0)
    if not 0 < deff <= MAX_DESIGN_EFFECT:
        fail(_MSG_DEFF.format(high=MAX_DESIGN_EFFECT, value=deff))
    test, discordance, how = _detect_test(kind, known, deff)
    try:
        needed = pairs_to_detect(
            effect,
            known["sd"],
            test=test,
            alpha=level / family,
            power=power,
            discordance=discordance,
            design_effect=deff,
            pairs_per_unit=known.get("per_unit", 1.0),
            cluster_sizes=known.get("sizes", ()),
        )
    except ValueError as err:
        fail(f"{measure}: {err}")
    amount = functools.partial(measure_amount, m=kind or "")
    shown = _effect_text(effect, amount(effect), percent=kind in ("rate", "corpus"))
    say(
        f"{measure}: {needed:,} pairs detect a difference of {shown} with power {power:.0%} "
        f"(two-sided, α {level:g} over {family} test{'s' if family != 1 else ''} → {level / family:.3g} each; "
        f"{how}; sd of A - B {known['sd']:.4g}; {_deff_text(deff)}); an audit of that many pairs, spread like this, "
        f"reports a minimum detectable effect of {shown} or less"
    )
    if known.get("n_pairs"):
        mde = known.get("mde")
        at = f"; its minimum detectable effect was {amount(mde)}" if isinstance(mde, int | float) else ""
        say(f"the earlier audit had {int(known['n_pairs']):,} pairs{at}")


def _effect_text(effect: float, shown: str, *, percent: bool) -> str:
    """``shown`` (the effect as the report writes it), or more digits where its two decimals lose it (1e-9: not "0.00 pp")."""
    value = 100 * effect if percent else effect
    number = float(shown.split()[0])
    if math.isclose(number, value, rel_tol=0.005):
        return shown
    return f"{value:.3g} pp" if percent else f"{value:.3g}"


def _detect_spread(measure: str, results: str | None, sd: float | None, rate: float | None) -> tuple[dict[str, Any], str]:
    """What ``plan --measure`` plans from: the earlier audit's row, --sd or --rate; and the key's kind (rate, count ...)."""
    if sd is not None and rate is not None:
        fail(_MSG_RATE_AND_SD)
    known: dict[str, Any] = {} if results is None else _from_results(results, measure)
    kind = known.get("kind") if isinstance(known.get("kind"), str) else None
    if rate is not None:
        _check_rate(measure, kind)
        kind = "rate"
    if sd is not None:
        _check_size("--sd", sd)
        known["sd"] = sd
        known.pop("discordance", None)
    elif rate is not None:
        if not 0 < rate < 1:
            fail(_MSG_RATE.format(rate=rate))
        known["sd"] = math.sqrt(2 * rate * (1 - rate))
        known.pop("discordance", None)
    if "sd" not in known:
        fail(known.get("no_sd", _MSG_NO_SPREAD))
    return known, kind if kind is not None else _kinds().get(measure, "count")


def _detect_test(kind: str, known: Mapping[str, Any], deff: float) -> tuple[str, float, str]:
    """The test the audit runs on the key (as its MDE models it), the discordant share of a rate, and how plan says it.

    A rate is the score test (the default): its power is modelled as the cluster mean test's, normal
    theory with the design effect (``rate_mean``, on the dialogues where the pilot clustered or a design
    effect above 1 says the pairs are clustered, else on the pairs). A pilot that ran McNemar
    (``--binary-test exact`` or ``midp``) is planned with McNemar's exact power on pairs, or the cluster
    mean test where it clustered. Its discordance is the pilot's, else ``sd²`` (``--rate P``:
    ``2 P (1 - P)``). Anything else is the mean test (the noncentral t).
    """
    sd = float(known["sd"])
    clustered = known.get("clustered", False) or max(1.0, deff) > 1
    units = "dialogues" if known.get("clustered") else "units"
    if kind != "rate":
        return "mean", 0.0, f"the noncentral t of the mean test on its {units if clustered else 'pairs'}"
    q = known.get("discordance")
    discordance = min(1.0, sd**2) if q is None else float(q)
    mcnemar = known.get("binary_test") in ("exact", "midp")
    if clustered:
        test_name = "the cluster mean test" if mcnemar else "the score test, as the cluster mean test"
        return "rate_mean", discordance, f"{test_name} by {units}; discordant share {discordance:.3g}"
    if not mcnemar:
        return "rate_mean", discordance, f"the score test, as the mean test on pairs; discordant share {discordance:.3g}"
    test = "mcnemar_midp" if known.get("binary_test") == "midp" else "mcnemar_exact"
    return test, discordance, f"{test.replace('_', ' ')} power; discordant share {discordance:.3g}"
