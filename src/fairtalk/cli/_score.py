"""`fairtalk score`: score existing responses and write the report."""

from __future__ import annotations

import typer

from fairtalk.cli._app import (
    app,
    check_output_file,
    console,
    info,
    interrupted,
    print_json,
    resolve_lexicon,
    say,
    stdin_as_file,
)
from fairtalk.cli._axes import AXES
from fairtalk.cli._choices import BinaryTest, Correction, CountTest, Distinct, Engine
from fairtalk.cli._respond import RAY_ADDRESS, engine_option
from fairtalk.cli._test_options import (
    BINARY_TEST,
    CLUSTERS,
    CONFIG,
    COUNT_TEST,
    FAIL_ON_BIAS,
    FAIL_UNLESS_EQUIVALENT,
    JUDGE_RUBRIC,
    JUDGE_SCALE,
    JUNIT,
    MARGIN,
    PRIMARY,
    SCORE_PARAMS,
    gates_in_force,
    given_options,
    parse_margins,
    report_gates,
    text_or_file,
    write_ci_files,
)

SCORE_ENGINE = typer.Option(
    None,
    "--engine",
    help="Where the per-response measures run: local (this process; the default) or ray (batches of 2,000 distinct responses as Ray tasks, once there are two or more; same scores).",
)
EXCLUDE_TRUNCATED = typer.Option(
    False,
    "--exclude-truncated",
    help="Test only the pairs where neither answer was cut off at the token limit (finish reason 'length'); how many were left out is stated. Models that report finish reasons: openai:, hf:, vllm: (and the responses files and stores they wrote); with others the option has nothing to act on and says so. Without it, a warning names what was scored on cut-off text when more than 10% of one side's answers were.",
)
GOLD = typer.Option(
    None,
    "--gold",
    help="A gold file of human labels (fairtalk label -o): each key it labels also gets the gap the labels imply "
    "(prediction-powered inference), with an interval valid whatever the scorer's error.",
)
#: The scoring options of `score`: the shared ones, --exclude-truncated and --gold.
_SCORE_PARAMS = {**SCORE_PARAMS, "exclude_truncated": "exclude_truncated", "gold": "gold"}
SCORE_TASKS = typer.Option(
    None, "--ray-actors", min=1, help="With --engine ray: scoring tasks at once (default: the cluster's CPUs)."
)


@app.command()
def score(
    ctx: typer.Context,
    responses: str = typer.Option(
        ...,
        "--responses",
        help="Responses JSONL ({pair_id, side, context, response}), or a.txt of the two-file layout; - reads standard input.",
    ),
    responses_b: str | None = typer.Option(
        None, "--responses-b", help="b.txt, aligned line by line with --responses (two-file layout)."
    ),
    axis: str | None = typer.Option(None, "--axis", help=f"An axis or a lexicon file. Axes: {AXES}."),
    lexicon: str | None = typer.Option(
        None, "--lexicon", help="A lexicon file for the axis (overrides the built-in word pairs)."
    ),
    output: str = typer.Option(
        "fairtalk-report", "-o", "--output", help="Folder for results.json, results.csv, report.md, report.html."
    ),
    fail_on_bias: bool = FAIL_ON_BIAS,
    fail_unless_equivalent: bool = FAIL_UNLESS_EQUIVALENT,
    junit: str | None = JUNIT,
    alpha: float = typer.Option(0.05, "--alpha", min=0.0, max=1.0, help="Significance level for the adjusted p-values."),
    correction: Correction = typer.Option(
        Correction.holm, "--correction", help="Multiple-testing correction: holm (family-wise) or bh (false discovery rate)."
    ),
    mask_groups: bool = typer.Option(False, "--mask-groups", help="Also score with the group words masked (scorer-bias check)."),
    drop_empty: bool = typer.Option(False, "--drop-empty", help="Drop empty responses instead of scoring them as ''."),
    exclude_truncated: bool = EXCLUDE_TRUNCATED,
    gold: str | None = GOLD,
    distinct: Distinct = typer.Option(
        Distinct.paper, "--distinct", help="Distinct-n definition: paper (/ words) or standard (/ n-grams)."
    ),
    offense: str = typer.Option(
        "profanity_check", "--offense", help="Offense scorer: profanity_check (default), hatesonar, or hf:MODEL."
    ),
    offense_threshold: float = typer.Option(0.5, "--offense-threshold", help="Offensive when the probability is >= this."),
    sentiment_threshold: float = typer.Option(
        0.8, "--sentiment-threshold", help="Positive above +t, negative below -t (VADER compound)."
    ),
    seed: int = typer.Option(0, "--seed", min=0, help="Seed for the bootstrap and the mask."),
    resamples: int = typer.Option(2000, "--resamples", min=1, help="Bootstrap resamples."),
    measures: str | None = typer.Option(
        None, "--measures", help="Comma-separated measure names (default: the paper's set and refusal), plugins included."
    ),
    json_out: bool = typer.Option(
        False, "--json", help="Write the result (results.json's content) to stdout; messages go to stderr."
    ),
    binary_test: BinaryTest = BINARY_TEST,
    count_test: CountTest = COUNT_TEST,
    clusters: bool = CLUSTERS,
    margin: list[str] | None = MARGIN,
    primary: str | None = PRIMARY,
    judge_rubric: str | None = JUDGE_RUBRIC,
    judge_scale: str | None = JUDGE_SCALE,
    config: str | None = CONFIG,
    engine: Engine | None = SCORE_ENGINE,
    ray_address: str | None = RAY_ADDRESS,
    ray_actors: int | None = SCORE_TASKS,
) -> None:
    """Score existing responses for bias between two groups, print the table and write the report."""
    import fairtalk
    from fairtalk.cli._output import scoring_line
    from fairtalk.report import (
        check_report_folder,
        labelled_lines,
        left_out_note,
        rich_table,
        write_report,
    )

    try:
        check_report_folder(output, {"--responses": responses, "--responses-b": responses_b, "--gold": gold})
        if junit is not None:
            check_output_file(junit, option="--junit")
        values, names = given_options(
            ctx, _SCORE_PARAMS, {"margin": parse_margins, "judge_rubric": lambda v: text_or_file(v, "--judge-rubric")}
        )
        base = fairtalk.ScoreOptions() if config is None else fairtalk.ScoreOptions.from_file(config)
        options = base.updated(values, names=names)
        target = resolve_lexicon(axis, lexicon)
        on_ray = engine_option(engine, ray_address, ray_actors)
        with stdin_as_file(responses) as responses_path:
            source = fairtalk.read_responses(
                responses_path if responses_b is None else (responses_path, responses_b), drop_empty=options.drop_empty
            )
        result = fairtalk.score(source, axis=target, options=options, engine=on_ray)  # --json: prints go to stderr
        paths = write_report(result, output)
    except KeyboardInterrupt:
        interrupted()
    if json_out:
        from fairtalk.results import versioned

        print_json(versioned(result.to_dict()))
    else:
        console.print(rich_table(result))
    if (where := scoring_line(result.manifest, asked=on_ray is not None)) is not None:
        say(where)
    if (note := left_out_note(result)) is not None:
        say(f"left out: {note}", style="yellow")
    for line in labelled_lines(result):
        say(f"labelled: {line}")
    for path in paths.values():
        info(f"wrote {path}")
    write_ci_files(
        {result.axis: result},
        junit,
        gates=gates_in_force(fail_on_bias=fail_on_bias, fail_unless_equivalent=fail_unless_equivalent),
    )
    code = report_gates(
        {result.axis: result}, alpha=options.alpha, fail_on_bias=fail_on_bias, fail_unless_equivalent=fail_unless_equivalent
    )
    if code:
        raise typer.Exit(code=code)
