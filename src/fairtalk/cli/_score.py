"""`fairtalk score`: score existing responses and write the report."""

from __future__ import annotations

import dataclasses
import json
import os

import typer

from fairtalk.cli._app import (
    STDIN,
    app,
    console,
    info,
    interrupted,
    print_json,
    resolve_lexicon,
    say,
    stdin_as_file,
    when_interrupted,
)
from fairtalk.cli._axes import AXES, AXIS_NAMES
from fairtalk.cli._choices import BinaryTest, Correction, CountTest, Distinct, Engine
from fairtalk.cli._respond import RAY_ADDRESS, engine_option
from fairtalk.cli._schema import DEFAULT_SCORE_OUTPUT, given_options, score_option
from fairtalk.cli._test_options import (
    CONFIG,
    FAIL_ON_BIAS,
    FAIL_UNLESS_EQUIVALENT,
    JUNIT,
    SCORE_CONVERTERS,
    SCORE_KEYS,
    check_file_keys,
    check_judge_options,
    check_junit,
    ci_outputs,
    gates_in_force,
    one_config,
    report_gates,
    write_ci_files,
)
from fairtalk.errors import InputError

#: ``--responses-b`` beside a JSONL file: its records would be scored as answers, line by line.
_MSG_JSONL_BESIDE_B = (
    "--responses-b takes plain-text answers, one per line (side B's, aligned with side A's in --responses), but {path} "
    "starts with a JSON object; a JSONL responses file (pair_id, side, response records) goes alone in --responses"
)
#: ``--responses-b`` naming the file ``--responses`` names: every pair's two sides would be the same answer.
_MSG_SAME_FILE = (
    "--responses-b {path_b} is the same file as --responses {path_a}: the two-file layout takes side A's answers in "
    "--responses and side B's in another file, aligned line by line (one file as both sides shows no difference, "
    "whatever the model does)"
)
#: Ctrl-C before the report is written.
_MSG_NOT_WRITTEN = "the report was not written (score keeps nothing to resume from: run it again)"
#: How much of a line is read to tell whether a file starts with a JSON object.
_FIRST_LINE_LIMIT = 1 << 20


def _starts_with_json_object(path: str) -> bool:
    """Whether the first non-empty line of ``path`` is a JSON object (False where it cannot be read: the reader says why)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            for _ in range(1000):
                line = handle.readline(_FIRST_LINE_LIMIT)
                if not line:
                    return False
                if line.strip():
                    try:
                        return isinstance(json.loads(line), dict)
                    except ValueError:
                        return False
    except OSError:
        return False
    return False


def _check_two_files(path_a: str, path_b: str, shown_a: str) -> None:
    """A usage error where either file of the two-file layout is a JSONL file, or both are one file (a link to it too).

    A JSONL file's records would be read as answers; one file as both sides would make every pair's two answers the
    same, and an equivalence gate would pass whatever the model does.
    """
    if _same_file(path_a, path_b):
        raise InputError(_MSG_SAME_FILE.format(path_a=shown_a, path_b=path_b))
    for path, shown in ((path_a, shown_a), (path_b, path_b)):
        if _starts_with_json_object(path):
            raise InputError(_MSG_JSONL_BESIDE_B.format(path=shown))


def _same_file(path_a: str, path_b: str) -> bool:
    """Whether two paths name one file: the same path once resolved, or the same inode (a hard or symbolic link)."""
    try:
        return os.path.realpath(path_a) == os.path.realpath(path_b) or os.path.samefile(path_a, path_b)
    except (OSError, ValueError):  # missing or unreadable: the reader says why
        return False


SCORE_ENGINE = typer.Option(
    None,
    "--engine",
    show_default="local",
    help="Where the per-response measures run: local (this process) or ray (Ray tasks). With ray, batches of 2,000 "
    "distinct responses run as Ray tasks, once there are two or more; the scores are the same.",
)
SCORE_TASKS = typer.Option(
    None, "--ray-actors", min=1, help="With --engine ray: scoring tasks at once (default: the cluster's CPUs)."
)


@app.command()
def score(
    ctx: typer.Context,
    responses: str = typer.Option(
        ...,
        "--responses",
        help="Responses JSONL, or a.txt of the two-file layout; - reads standard input. A JSONL record holds "
        "{pair_id, side, context, response}.",
    ),
    responses_b: str | None = typer.Option(
        None, "--responses-b", help="b.txt, aligned line by line with --responses (two-file layout)."
    ),
    axis: str | None = typer.Option(
        None,
        "--axis",
        help=f"An axis ({AXIS_NAMES}) or a lexicon file. Axes: {AXES}. Responses to pairs of another axis (as their records' axis "
        "field, which respond writes, or pair ids such as race-55cd42283474fa0f say) are refused.",
    ),
    lexicon: str | None = typer.Option(
        None, "--lexicon", help="A lexicon file for the axis (overrides the built-in word pairs)."
    ),
    output: str = typer.Option(
        DEFAULT_SCORE_OUTPUT,
        "-o",
        "--output",
        help="Folder for results.json, results.csv, report.md and report.html. A folder of its own: not an audit's output.",
    ),
    fail_on_bias: bool = FAIL_ON_BIAS,
    fail_unless_equivalent: bool = FAIL_UNLESS_EQUIVALENT,
    junit: str | None = JUNIT,
    json_out: bool = typer.Option(
        False,
        "--json",
        help="Write the result (results.json's content) to stdout; messages go to stderr. With a gate given it holds "
        "`gates`, each requested gate's outcome.",
    ),
    measures: str | None = score_option("measures", "--measures"),
    seed: int = score_option("seed", "--seed", ranged=True),
    alpha: float = score_option("alpha", "--alpha", ranged=True),
    correction: Correction = score_option("correction", "--correction"),
    mask_groups: bool = score_option("mask_groups", "--mask-groups"),
    drop_empty: bool = score_option("drop_empty", "--drop-empty"),
    distinct: Distinct = score_option("distinct", "--distinct"),
    offense: str = score_option("offense", "--offense"),
    offense_threshold: float = score_option("offense_threshold", "--offense-threshold", ranged=True),
    sentiment_threshold: float = score_option("sentiment_threshold", "--sentiment-threshold", ranged=True),
    n_resamples: int = score_option("n_resamples", "--resamples", ranged=True),
    n_divergent: int = score_option("n_divergent", "--divergent", ranged=True),
    binary_test: BinaryTest = score_option("binary_test", "--binary-test"),
    count_test: CountTest = score_option("count_test", "--count-test"),
    clusters: bool = score_option("clusters", "--clusters/--no-clusters"),
    margins: list[str] | None = score_option("margins", "--margin"),
    primary: str | None = score_option("primary", "--primary"),
    power: float = score_option("power", "--power", ranged=True),
    scorer_check: bool = score_option("scorer_check", "--scorer-check/--no-scorer-check"),
    judge_rubric: str | None = score_option("judge_rubric", "--judge-rubric"),
    judge_scale: str | None = score_option("judge_scale", "--judge-scale"),
    exclude_truncated: bool = score_option("exclude_truncated", "--exclude-truncated"),
    gold: str | None = score_option("gold", "--gold"),
    config_given: list[str] | None = CONFIG,
    engine: Engine | None = SCORE_ENGINE,
    ray_address: str | None = RAY_ADDRESS,
    ray_actors: int | None = SCORE_TASKS,
) -> None:
    """Score existing responses for bias between two groups, print the table and write the report."""
    import fairtalk
    from fairtalk.cli._labelled import say_labelled
    from fairtalk.cli._output import scoring_line
    from fairtalk.gates import evaluate
    from fairtalk.report import (
        FILE_NAMES,
        JUDGE_FILE,
        check_report_folder,
        left_out_note,
        rich_table,
        source_line,
        write_report,
    )

    config = one_config(config_given)  # one path (a second --config is refused)
    inputs = {
        "--responses": None if responses == "-" else responses,
        "--responses-b": responses_b,
        "--gold": gold,
        "--config": config,
        "--lexicon": lexicon,
        "--axis": axis if axis is not None and os.path.isfile(axis) else None,
    }
    outputs = {f"the report's {name}": os.path.join(output, name) for name in (*FILE_NAMES.values(), JUDGE_FILE)}
    try:
        check_report_folder(output, {"--responses": responses, "--responses-b": responses_b, "--gold": gold}, kind="score")
        check_junit(junit, inputs=inputs, outputs=outputs, folder=output)
        values, names = given_options(ctx, SCORE_KEYS, SCORE_CONVERTERS)
        if config is None:
            options = fairtalk.ScoreOptions().updated(values, names=names)
        else:  # the file's values under the command line's, margins merged key by key
            options = fairtalk.ScoreOptions.from_file(config, values, names=names)
        check_judge_options(options)
        target = resolve_lexicon(axis, lexicon)
        check_file_keys(config, values, options, [target])  # a bad margin or primary key of the file names it
        on_ray = engine_option(engine, ray_address, ray_actors)
        with stdin_as_file(responses) as responses_path:
            if responses_b is not None:
                _check_two_files(responses_path, responses_b, "standard input" if responses == "-" else responses)
            source = fairtalk.read_responses(
                responses_path if responses_b is None else (responses_path, responses_b), drop_empty=options.drop_empty
            )
            if responses == "-":  # the manifest names standard input, not its temporary copy
                named = tuple((STDIN if path == responses_path else path, sha) for path, sha in source.sources)
                source = dataclasses.replace(source, sources=named)
            result = fairtalk.score(source, axis=target, options=options, engine=on_ray)  # --json: prints go to stderr
        gates = gates_in_force(fail_on_bias=fail_on_bias, fail_unless_equivalent=fail_unless_equivalent)
        outcomes = [evaluate({result.axis: result}, g) for g in gates]  # the gates requested: in the pages and the JSON
        paths = write_report(result, output, gates=outcomes)
    except KeyboardInterrupt:
        earlier = any(os.path.isfile(os.path.join(output, name)) for name in FILE_NAMES.values())
        interrupted(note=_MSG_NOT_WRITTEN, earlier=output if earlier else None)
    when_interrupted(f"the report was written in {output}", ci_outputs(), keep=[output])
    if json_out:
        from fairtalk.results import versioned

        data = result.to_dict()
        print_json(versioned({**data, "gates": [o.to_dict() for o in outcomes]} if outcomes else data))
    else:
        console.print(rich_table(result))
    if (read := source_line(result)) is not None:  # the responses read, as the pages name them
        say(read)
    if (where := scoring_line(result.provenance, asked=on_ray is not None)) is not None:
        say(where)
    if (note := left_out_note(result)) is not None:
        say(f"left out: {note}", style="yellow")
    say_labelled(result)
    for path in paths.values():
        info(f"wrote {path}", keep=[path])
    write_ci_files(
        {result.axis: result},
        junit,
        gates=gates,
        protected={**inputs, **outputs, "-o": output},
    )
    code = report_gates(
        {result.axis: result}, alpha=options.alpha, fail_on_bias=fail_on_bias, fail_unless_equivalent=fail_unless_equivalent
    )
    if code:
        raise typer.Exit(code=code)
