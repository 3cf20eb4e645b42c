"""`fairtalk plan`: how many pairs an audit needs to detect a given difference."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import typer

from fairtalk.cli._app import app, fail, say

_MSG_NO_SPREAD = (
    "say how much the per-pair difference varies: --results FILE from an earlier audit of this measure, "
    "--sd SD, or for a rate --rate P (its expected rate on each side)"
)
_MSG_RESULTS = "cannot read {path}: {reason}"
_MSG_NO_MEASURE = "{path} has no measure {name!r}; it has: {names}"
_MSG_NO_SD = "{path}: measure {name!r} has no spread of its differences (every pair tied); give --sd"
_MSG_RATE = "--rate must be in (0, 1), got {rate!r}"
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
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        rows = data["measures"]
        if not isinstance(rows, dict):
            raise TypeError("'measures' is not an object")
    except (OSError, ValueError, KeyError, TypeError) as err:
        fail(_MSG_RESULTS.format(path=path, reason=err))
    if measure not in rows:
        fail(_MSG_NO_MEASURE.format(path=path, name=measure, names=", ".join(sorted(rows)) or "none"))
    row = rows[measure]
    if not row.get("sd_difference"):
        fail(_MSG_NO_SD.format(path=path, name=measure))
    return {"sd": float(row["sd_difference"]), "deff": float(row.get("design_effect") or 1.0),
            "tests": int(data.get("family_size") or 1), "n_pairs": data.get("n_pairs"), "mde": row.get("mde"),
            "alpha": float(data.get("alpha") or 0.05), "kind": row.get("kind")}  # fmt: skip


@app.command()
def plan(
    measure: str = typer.Option(..., "--measure", help="The result key to plan for, e.g. offense_rate or length."),
    effect: float = typer.Option(
        ...,
        "--effect",
        help="The smallest difference A - B worth detecting, in the measure's units (0.01 = one point of a rate).",
    ),
    results: str | None = typer.Option(
        None, "--results", help="results.json of an earlier audit: its spread, design effect and family size."
    ),
    sd: float | None = typer.Option(None, "--sd", help="Standard deviation of the per-pair difference A - B."),
    rate: float | None = typer.Option(
        None,
        "--rate",
        help="For a rate with no earlier audit: its expected rate on each side (sides assumed independent: a safe overestimate).",
    ),
    alpha: float | None = typer.Option(None, "--alpha", help="Significance level (default: the earlier audit's, else 0.05)."),
    power: float = typer.Option(0.8, "--power", help="Probability of detecting the effect."),
    tests: int | None = typer.Option(
        None,
        "--tests",
        min=1,
        help="Tests in the corrected family (default: the earlier audit's; else 1). Holm is planned as Bonferroni, a safe bound.",
    ),
    design_effect: float | None = typer.Option(
        None, "--design-effect", help="Variance inflation from clustered pairs (default: the earlier audit's; else 1)."
    ),
) -> None:
    """Say how many pairs an audit needs to detect a difference of --effect in --measure."""
    from fairtalk import pairs_needed

    if not measure.strip():
        fail(_MSG_NO_KEY)
    if not effect > 0 or not math.isfinite(effect):
        fail(f"--effect must be a positive number, got {effect!r}")
    if not 0 < power < 1:
        fail(f"--power must be in (0, 1), got {power!r}")
    if sd is not None and rate is not None:
        fail(_MSG_RATE_AND_SD)
    known: dict[str, Any] = {}
    if results is not None:
        known = _from_results(results, measure)
    if rate is not None:
        _check_rate(measure, known.get("kind") if isinstance(known.get("kind"), str) else None)
    if sd is not None:
        if not sd > 0 or not math.isfinite(sd):
            fail(f"--sd must be a positive number, got {sd!r}")
        known["sd"] = sd
    elif rate is not None:
        if not 0 < rate < 1:
            fail(_MSG_RATE.format(rate=rate))
        known["sd"] = math.sqrt(2 * rate * (1 - rate))
    if "sd" not in known:
        fail(_MSG_NO_SPREAD)
    level = alpha if alpha is not None else known.get("alpha", 0.05)
    if not 0 < level < 1:
        fail(f"--alpha must be in (0, 1), got {level!r}")
    family = tests if tests is not None else known.get("tests", 1)
    deff = design_effect if design_effect is not None else known.get("deff", 1.0)
    if not deff > 0:
        fail(f"--design-effect must be > 0, got {deff!r}")
    needed = pairs_needed(effect, known["sd"], alpha=level / family, power=power, design_effect=deff)
    say(f"{measure}: {needed:,} pairs detect a difference of {effect:g} with power {power:.0%} "
        f"(two-sided, α {level:g} over {family} test{'s' if family != 1 else ''} → {level / family:.3g} each; "
        f"sd of A - B {known['sd']:.4g}; design effect {deff:.3g})")  # fmt: skip
    if known.get("n_pairs"):
        mde = known.get("mde")
        at = f"; its minimum detectable effect was {mde:.4g}" if isinstance(mde, int | float) else ""
        say(f"the earlier audit had {int(known['n_pairs']):,} pairs{at}")
