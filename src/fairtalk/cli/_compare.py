"""`fairtalk compare BASELINE CANDIDATE`: whether the candidate model is more biased than the baseline, on the same pairs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from fairtalk.cli._app import app, console, info, interrupted, print_json, say
from fairtalk.cli._choices import was_given
from fairtalk.cli._schema import check_options, score_option
from fairtalk.cli._test_options import check_junit, parse_margins, write_ci_files

if TYPE_CHECKING:
    from fairtalk.gates import Gate, GateOutcome
    from fairtalk.results import AuditResult, ModelComparison

_MSG_NO_AXIS = "--axis names nothing; give one or more axes both runs hold, comma-separated"
_MSG_OUTPUT_INSIDE = (
    "-o {output} {where} {name} {path}, an input of this run; write the comparison to a folder outside both inputs"
)
_MSG_CLUSTERS = (
    "--{flag} applies only to two audits; a comparison of prompts analyses takes their gaps as independent "
    "estimates and would ignore it (leave it out)"
)
_MARGIN = typer.Option(
    None,
    "--margin",
    help="Non-inferiority margin of a measure key, KEY=VALUE (repeatable). The value is in the key's units (rates "
    "as fractions: offense_rate=0.01). Default: the baseline audit's own margin for the key (the equivalence margin its results.json "
    "records), else the kind's default on the baseline's scores (rates 0.02, counts 0.1 sd); never the candidate's.",
)


@app.command()
def compare(
    ctx: typer.Context,
    baseline: str = typer.Argument(
        ..., help="The baseline's output folder (of `fairtalk audit -o`, `fairtalk score -o` or `fairtalk prompts analyze -o`)."
    ),
    candidate: str = typer.Argument(
        ..., help="The candidate's output folder: an audit of the same pairs, or an analysis of the same prompts."
    ),
    output: str | None = typer.Option(
        None,
        "-o",
        "--output",
        help="Folder for results.json, results.csv, report.md and report.html, outside both inputs (default: none written).",
    ),
    fail_if_worse: bool = typer.Option(
        False,
        "--fail-if-worse",
        help="Exit 1 unless every primary measure is shown non-inferior (the release gate). Non-inferior: "
        "|candidate gap| < |baseline gap| + margin.",
    ),
    margin: list[str] | None = _MARGIN,
    alpha: float = score_option(
        "alpha", "--alpha", ranged=True, note="Every test of the change uses it; its intervals are 1 - alpha."
    ),
    clusters: bool = score_option("clusters", "--clusters/--no-clusters", note="Two audits only."),
    axis: str | None = typer.Option(
        None, "--axis", help="Compare only these axes, comma-separated (default: every axis both hold)."
    ),
    json_out: bool = typer.Option(
        False,
        "--json",
        help="Write the comparison (results.json's content) to stdout; messages go to stderr. With --fail-if-worse it "
        "holds `gates`, the gate's outcome.",
    ),
    junit: str | None = typer.Option(
        None,
        "--junit",
        help="Also write a JUnit XML file: a testcase per key, failing where --fail-if-worse would. An existing FILE is "
        "replaced only when it is a JUnit file fairtalk wrote; never inside BASELINE or CANDIDATE, nor a file of -o. A "
        "comparison that stops on an error (exit 2 or 3) or is interrupted (130) once FILE was checked leaves in it one "
        "testcase in error, never an earlier run's pass. With "
        "$GITHUB_STEP_SUMMARY set, the findings and the table are appended to the job summary (with or without --junit; "
        "best effort: a summary that cannot be appended is a warning, and the exit code stays the gate's).",
    ),
) -> None:
    """Compare two audits of the same pairs: per axis and measure, the change in gap, its verdict and the release gate.

    Both runs are scored again with the baseline's measures. A key is improved or regressed when the size of its gap is shown to change, unchanged when shown to differ by less than the margin both ways, else inconclusive. Exit codes: 0 done; 1 --fail-if-worse and a primary key not shown non-inferior; 2 a usage or input error.

    Two `fairtalk prompts analyze` folders (paper 004) compare two generators' regard gaps per group pair instead (--axis names group pairs; --margin regard=VALUE or regard:PAIR=VALUE; the gaps are taken as independent estimates, so --clusters/--no-clusters is refused).
    """
    from fairtalk import SpecError
    from fairtalk.pipeline import compare_prompt_analyses, compare_runs, is_prompt_analysis
    from fairtalk.report import MODEL_COMPARISON_FILES, check_report_folder, write_model_comparison

    check_options(ctx, "alpha")  # before any work, in audit's words
    inputs = {"BASELINE": baseline, "CANDIDATE": candidate}
    outputs = {} if output is None else {f"-o's {name}": Path(output) / name for name in MODEL_COMPARISON_FILES.values()}
    try:
        if output:  # '' is refused by check_report_folder, by name
            _check_output_outside(output, inputs)
            check_report_folder(output, inputs, names=MODEL_COMPARISON_FILES.values(), kind="comparison")
        check_junit(junit, inputs=inputs, outputs=outputs, folder=output, name="fairtalk.compare")
        axes = None if axis is None else [a.strip() for a in axis.split(",") if a.strip()]
        if axes == []:
            raise SpecError(_MSG_NO_AXIS)
        if is_prompt_analysis(baseline) or is_prompt_analysis(candidate):
            if was_given(ctx, "clusters"):  # an option the comparison would not use is an error, not dropped
                raise SpecError(_MSG_CLUSTERS.format(flag="clusters" if clusters else "no-clusters"))
            result = compare_prompt_analyses(baseline, candidate, margins=parse_margins(margin), alpha=alpha, pairs=axes)
        else:
            result = compare_runs(baseline, candidate, margins=parse_margins(margin), alpha=alpha, clusters=clusters, axes=axes)
        paths = {} if output is None else write_model_comparison(result, output, gated=fail_if_worse)
    except KeyboardInterrupt:
        interrupted(note="the comparison was not written (run it again)")
    protected = {**inputs, **outputs, "-o": output}
    if show_comparison(result, paths, json_out=json_out, junit=junit, gate=fail_if_worse, protected=protected):
        raise typer.Exit(code=1)


def _check_output_outside(output: str, inputs: Mapping[str, str]) -> None:
    """``-o``, before any work: never an input folder nor inside one (OutputError naming which)."""
    from fairtalk.errors import OutputError

    folder = Path(output).resolve()
    for name, path in inputs.items():
        given = Path(path).resolve()
        if folder == given or folder.is_relative_to(given):
            where = "is" if folder == given else "lies inside"
            raise OutputError(_MSG_OUTPUT_INSIDE.format(output=output, where=where, name=name, path=path))


def show_comparison(
    result: ModelComparison,
    paths: Mapping[str, Path],
    *,
    json_out: bool,
    junit: str | None,
    gate: bool,
    joined: tuple[Mapping[str, object], Sequence[GateOutcome]] | None = None,
    protected: Mapping[str, object] | None = None,
    audit: tuple[Mapping[str, AuditResult], Sequence[Gate]] | None = None,
) -> int:
    """Show a comparison and write its CI files; 1 when ``--fail-if-worse``'s gate (``gate``) fails, else 0.

    Prints its table (or, with ``--json``, its JSON; when ``gate``, with ``gates`` holding
    ``--fail-if-worse``'s outcome, as ``audit --json`` holds its gates'), its gate
    lines and the files written, and writes ``--junit`` and the job summary (never appended to one of
    ``protected``, the run's inputs and outputs). ``fairtalk compare`` and ``fairtalk audit --baseline-model`` both end with it.
    ``--fail-if-worse``'s headline is shown only when ``gate`` (requested). ``audit``: the audit's
    results and the audit gates requested, whose testcases the JUnit file holds too. ``joined``
    (``audit --baseline-model --json``): the audit's document (``run``, ``results``) and its gates'
    outcomes; stdout then holds one document: the audit's keys, the comparison under ``comparison``,
    and in ``gates`` the audit's gates then ``--fail-if-worse``'s.
    """
    from fairtalk.gates import Gate, evaluate
    from fairtalk.report import gate_lines, model_comparison_table, model_comparison_title

    outcome = evaluate(result, Gate.FAIL_IF_WORSE)
    if json_out:
        from fairtalk.results import versioned

        done = [*(joined[1] if joined is not None else ()), *([outcome] if gate else [])]
        data = result.to_dict() if joined is None else {**joined[0], "comparison": result.to_dict()}
        print_json(versioned({**data, "gates": [o.to_dict() for o in done]} if done else data))  # as `audit --json`'s
    else:
        say(model_comparison_title(result), style="bold", keep=[result.candidate, result.baseline])
        console.print(model_comparison_table(result, width=console.width, title=False))
    for line in gate_lines(result, gated=gate and outcome.passed):  # a failing headline is said once, below
        say(line)
    for path in paths.values():
        info(f"wrote {path}", keep=[path])
    results, gates = audit if audit is not None else (None, ())
    write_ci_files(result, junit, gates=gates, gated=gate, audit=results, protected=protected)
    if gate and not outcome.passed:
        say(outcome.headline, style="bold red")  # "Gate fail-if-worse: FAILED — …" names its flag
        for failure in outcome.failures:
            if failure.key is not None:  # a whole-run failure's reason is in the headline already
                say(f"  {failure.name}: {failure.reason}", style="red")
        return 1
    return 0
