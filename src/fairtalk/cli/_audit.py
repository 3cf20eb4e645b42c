"""`fairtalk audit`: corpus -> pairs -> responses -> scores -> report, per axis, in one command."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from fairtalk.cli._app import (
    app,
    check_output_file,
    console,
    info,
    interrupted,
    lexicon_inputs,
    print_json,
    say,
)
from fairtalk.cli._axes import AUDIT_AXES
from fairtalk.cli._by_turn import BY_TURN, BY_TURN_FLAGS, BY_TURN_PARAMS, by_turn_lines
from fairtalk.cli._choices import BinaryTest, Correction, CorrectionScope, CountTest, Distinct, Engine, Mixed, Split
from fairtalk.cli._respond import (
    BATCH_SIZE,
    ENGINE,
    MAX_CONSECUTIVE_FAILURES,
    MAX_NEW_TOKENS,
    MODEL_ARG,
    MODEL_VERSION,
    MSG_GREEDY_ONLY,
    RAY_ACTORS,
    RAY_ADDRESS,
    REPETITION_PENALTY,
    SAMPLE,
    STOP,
    TEMPERATURE,
    TOP_K,
    TOP_P,
    engine_option,
    generation_lines,
    model_options,
    stop_strings,
)
from fairtalk.cli._score import EXCLUDE_TRUNCATED
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
    SYSTEM_PROMPT,
    gates_in_force,
    given_options,
    parse_margins,
    report_gates,
    text_or_file,
    write_ci_files,
)

if TYPE_CHECKING:
    from fairtalk import AuditConfig, Lexicon

_STORE_FILE = "store.sqlite"
_DEFAULT_OUTPUT = "fairtalk-report"
#: With --baseline-model: the baseline's audit and the comparison go in these folders of OUTPUT.
BASELINE_FOLDER, COMPARISON_FOLDER = "baseline", "comparison"
_MSG_WORSE_ALONE = "--fail-if-worse needs --baseline-model (the model the candidate is compared with)"
_NOTE_RUN_SCOPE = (
    "--fail-on-bias over several axes: Holm corrects all axes of the run together (--correction-scope run), "
    "so the gate's family-wise error holds α for the whole run; give --correction-scope axis for each "
    "axis on its own"
)
#: Command-line parameter -> AuditConfig option (the scoring ones are SCORE_PARAMS).
_AUDIT_PARAMS = {
    "corpus": "corpus",
    "axis": "axes",
    "model": "model",
    "model_arg": "model_args",
    "model_version": "model_version",
    "n_pairs": "n_pairs",
    "store": "store",
    "output": "out_dir",
    "max_errors": "max_errors",
    "max_consecutive_failures": "max_consecutive_failures",
    "split": "split",
    "batch_size": "batch_size",
    "mixed": "mixed",
    "balance": "balance",
    "correction_scope": "correction_scope",
    "similarity": "similarity",
    "turns": "turns",
    "until_decided": "until_decided",
    "max_pairs": "max_pairs",
    "looks": "looks",
    "spending": "spending",
    "exclude_truncated": "exclude_truncated",
    **BY_TURN_PARAMS,
    **SCORE_PARAMS,
}
#: The options ``--until-decided`` checks together, by their flags.
_SEQUENTIAL_FLAGS = {
    "until_decided": "--until-decided",
    "max_pairs": "--max-pairs",
    "n_pairs": "--pairs",
    "looks": "--looks",
    "spending": "--spending",
}
#: Command-line parameter -> DecodingSettings field.
_DECODING_PARAMS = {
    "max_new_tokens": "max_new_tokens",
    "sample": "do_sample",
    "temperature": "temperature",
    "top_k": "top_k",
    "top_p": "top_p",
    "stop": "stop",
    "repetition_penalty": "repetition_penalty",
}


def _scope_left_out(ctx: typer.Context) -> bool:
    """Whether ``--correction-scope`` was left at its default (not given on the command line)."""
    source = ctx.get_parameter_source("correction_scope")
    return source is None or source.name == "DEFAULT"


def _config(ctx: typer.Context, path: str | None) -> tuple[AuditConfig, list[Lexicon], str, str]:
    """The AuditConfig of ``--config`` overridden by the options given on the command line, lexicons loaded.

    Returns it with what it holds: its lexicons, its output folder and its store (the defaults filled in).
    """
    import fairtalk
    from fairtalk.lexicons import expand_axis

    values, names = given_options(
        ctx,
        _AUDIT_PARAMS,
        {"margin": parse_margins, "model_arg": model_options, "judge_rubric": lambda v: text_or_file(v, "--judge-rubric")},
    )
    decoding, _ = given_options(ctx, _DECODING_PARAMS, {"stop": stop_strings})
    for option, flag in {**_SEQUENTIAL_FLAGS, **BY_TURN_FLAGS}.items():  # named in an error even when left at its default
        names.setdefault(option, flag)
    base = fairtalk.AuditConfig() if path is None else fairtalk.AuditConfig.from_file(path)
    if (system := text_or_file(ctx.params.get("system_prompt"), "--system-prompt")) is not None:
        values["model_args"] = {**base.model_args, **values.get("model_args", {}), "system_prompt": system}
        names["model_args"] = "--system-prompt"
    if decoding:
        values["settings"] = decoding
    engine, address, n_actors = (ctx.params.get(key) for key in ("engine", "ray_address", "ray_actors"))
    if (engine, address, n_actors) != (None, None, None):
        values["engine"] = engine_option(engine, address, n_actors, base=base.engine) or "local"
        names["engine"] = "--engine"
    config = base.updated(values, names=names)
    unused = [f"--{key.replace('_', '-')}" for key in ("temperature", "top_k", "top_p") if key in decoding]
    if unused and not config.settings.do_sample:  # greedy decoding would drop them without a word
        raise fairtalk.SpecError(
            MSG_GREEDY_ONLY.format(
                options=", ".join(unused), s="ies" if len(unused) == 1 else "y", them="it" if len(unused) == 1 else "them"
            )
        )
    out_dir = config.out_dir if config.out_dir is not None else _DEFAULT_OUTPUT
    store = str(config.store) if isinstance(config.store, str) else str(Path(out_dir) / _STORE_FILE)  # never a RunStore here
    # the lexicons are loaded here once, so that a lexicon file can be checked as an input
    axes = [name for a in config.axes for name in (expand_axis(a) if isinstance(a, str) else [a])]
    lexicons = [fairtalk.load_lexicon(a) if isinstance(a, str) else a for a in axes]
    return config.updated({"out_dir": out_dir, "store": store, "axes": lexicons}), lexicons, out_dir, store


@app.command()
def audit(  # noqa: C901, PLR0915
    ctx: typer.Context,
    corpus: str = typer.Option(
        "builtin:chitchat", "--corpus", help="Contexts: builtin:chitchat (its held-out split by default), FORMAT:PATH or a path."
    ),
    axis: str = typer.Option("gender,race", "--axis", help=f"Axes to audit, comma-separated: {AUDIT_AXES}, or lexicon files."),
    model: str | None = typer.Option(
        None,
        "--model",
        help="Model spec (default: builtin:minilm-retrieval, else builtin:retrieval, else builtin:smollm2, the first that loads).",
    ),
    model_arg: list[str] | None = MODEL_ARG,
    model_version: str | None = MODEL_VERSION,
    n_pairs: int | None = typer.Option(2000, "--pairs", help="Pairs per axis: a seeded uniform sample of the corpus' pairs."),
    seed: int = typer.Option(0, "--seed", min=0, help="Seed of the sample, the per-item generation seeds and the bootstrap."),
    store: str | None = typer.Option(
        None, "--store", help="SQLite run store (default: OUTPUT/store.sqlite, so re-running resumes)."
    ),
    output: str = typer.Option("fairtalk-report", "-o", "--output", help="Folder for index.html and one folder per axis."),
    fail_on_bias: bool = FAIL_ON_BIAS,
    fail_unless_equivalent: bool = FAIL_UNLESS_EQUIVALENT,
    junit: str | None = JUNIT,
    max_errors: int | None = typer.Option(
        None, "--max-errors", help="Abort once more pair sides than this have failed (default: never; failures are counted)."
    ),
    max_consecutive_failures: int = MAX_CONSECUTIVE_FAILURES,
    split: Split | None = typer.Option(
        None, "--split", help="Corpus split of builtin:chitchat (default heldout; other corpora: all)."
    ),
    batch_size: int = BATCH_SIZE,
    max_new_tokens: int = MAX_NEW_TOKENS,
    sample: bool = SAMPLE,
    temperature: float = TEMPERATURE,
    top_k: int | None = TOP_K,
    top_p: float | None = TOP_P,
    stop: list[str] | None = STOP,
    repetition_penalty: float | None = REPETITION_PENALTY,
    alpha: float = typer.Option(0.05, "--alpha", min=0.0, max=1.0, help="Significance level for the adjusted p-values."),
    correction: Correction = typer.Option(
        Correction.holm, "--correction", help="Multiple-testing correction: holm (family-wise) or bh (false discovery rate)."
    ),
    mask_groups: bool = typer.Option(False, "--mask-groups", help="Also score with the group words masked (scorer-bias check)."),
    distinct: Distinct = typer.Option(
        Distinct.paper, "--distinct", help="Distinct-n definition: paper (/ words) or standard (/ n-grams)."
    ),
    offense: str = typer.Option(
        "profanity_check", "--offense", help="Offense scorer: profanity_check (default), hatesonar, or hf:MODEL."
    ),
    resamples: int = typer.Option(2000, "--resamples", min=1, help="Bootstrap resamples."),
    mixed: Mixed = typer.Option(
        Mixed.drop, "--mixed", help="Contexts that mention both groups: drop (default) or keep (swapped both ways)."
    ),
    balance: bool = typer.Option(
        False,
        "--balance",
        help="Draw as many pairs from each group's originals (race: as many African American English originals as Standard English ones).",
    ),
    measures: str | None = typer.Option(
        None,
        "--measures",
        help="Comma-separated measure names (default: the paper's set and refusal); see `fairtalk score --help`.",
    ),
    drop_empty: bool = typer.Option(
        False, "--drop-empty", help="Drop pairs with an empty response instead of scoring them as ''."
    ),
    exclude_truncated: bool = EXCLUDE_TRUNCATED,
    offense_threshold: float = typer.Option(
        0.5, "--offense-threshold", min=0.0, max=1.0, help="Offensive when the probability is >= this."
    ),
    sentiment_threshold: float = typer.Option(
        0.8, "--sentiment-threshold", min=0.0, max=1.0, help="Positive above +t, negative below -t (VADER compound)."
    ),
    binary_test: BinaryTest = BINARY_TEST,
    count_test: CountTest = COUNT_TEST,
    clusters: bool = CLUSTERS,
    margin: list[str] | None = MARGIN,
    primary: str | None = PRIMARY,
    judge_rubric: str | None = JUDGE_RUBRIC,
    judge_scale: str | None = JUDGE_SCALE,
    system_prompt: str | None = SYSTEM_PROMPT,
    correction_scope: CorrectionScope = typer.Option(
        CorrectionScope.axis, "--correction-scope", help="Correct each axis on its own (axis) or all axes together (run)."
    ),
    turns: int = typer.Option(
        1,
        "--turns",
        help='builtin:chitchat: each context is the last N turns of its dialogue (a conversation, sent to chat models as messages); JSONL corpora give conversations as "messages".',
    ),
    by_turn: bool = BY_TURN,
    similarity: str | None = typer.Option(
        None,
        "--similarity",
        help="Also test whether answers to the pairs diverge more than to one context asked twice (the no-effect baseline), by these methods: exact, rouge_l, cosine, answered, length_ratio (comma-separated); writes similarity.json per axis.",
    ),
    until_decided: bool = typer.Option(
        False,
        "--until-decided",
        help="Size the audit by itself: --pairs pairs per axis first, then more (steps of --pairs, or --looks equal steps) until every primary measure has a verdict (difference or equivalence) or --max-pairs is spent; p-values stay valid (group-sequential, alpha spending).",
    ),
    max_pairs: int | None = typer.Option(
        None, "--max-pairs", help="With --until-decided (required): the most pairs per axis, at least --pairs."
    ),
    looks: int | None = typer.Option(
        None, "--looks", help="With --until-decided: this many looks (>= 2), in equal steps from --pairs to --max-pairs."
    ),
    spending: str = typer.Option(
        "obrien-fleming", "--spending", help="With --until-decided: alpha spending, obrien-fleming (default) or pocock."
    ),
    json_out: bool = typer.Option(
        False, "--json", help="Write the run and every axis's result to stdout as JSON; messages go to stderr."
    ),
    baseline_model: str | None = typer.Option(
        None,
        "--baseline-model",
        help="Also audit this model on the same pairs (one store) into OUTPUT/baseline and compare --model with it "
        "into OUTPUT/comparison, as `fairtalk compare OUTPUT/baseline OUTPUT` does.",
    ),
    fail_if_worse: bool = typer.Option(
        False,
        "--fail-if-worse",
        help="With --baseline-model: exit 1 unless every primary measure is shown non-inferior to the baseline.",
    ),
    config_file: str | None = CONFIG,
    engine: Engine | None = ENGINE,
    ray_address: str | None = RAY_ADDRESS,
    ray_actors: int | None = RAY_ACTORS,
) -> None:
    """Audit a dialogue model end to end: pairs, responses, scores and a report per axis."""
    import fairtalk
    from fairtalk.cli._output import progress_bars, scoring_line
    from fairtalk.models import RayEngine
    from fairtalk.report import check_not_input, check_output_folder, check_run_folder, rich_table, sequential_summary

    store_path: object = None
    try:
        if fail_if_worse and baseline_model is None:
            raise fairtalk.SpecError(_MSG_WORSE_ALONE)
        config, lexicons, output, store_path = _config(ctx, config_file)
        if fail_on_bias and config_file is None and _scope_left_out(ctx) and len(lexicons) > 1:
            config = config.updated({"correction_scope": "run"})  # the gate reads every axis: so does the correction
            say(_NOTE_RUN_SCOPE)
        inputs = lexicon_inputs(lexicons, "--axis")
        check_run_folder(output, [lexicon.axis for lexicon in lexicons], inputs)  # a lexicon file is an input too
        if junit is not None:
            check_output_file(junit, option="--junit")
        check_not_input(store_path, inputs, option="--store")
        check_output_folder(output, {**inputs, "--config": config_file})  # the library checks the corpus and model
        with progress_bars() as progress:  # --json: what is printed meanwhile goes to stderr (json_mode)
            run = fairtalk.audit(config, progress=progress)
    except KeyboardInterrupt:
        interrupted(store_path)
    if json_out:
        from fairtalk.results import versioned

        print_json(versioned({"run": run.to_dict(), "results": {name: r.to_dict() for name, r in run.results.items()}}))
    on_ray = " · engine ray" if isinstance(config.engine, RayEngine) else ""
    say(f"model {run.model}{on_ray} · corpus {run.corpus} ({run.split}) · seed {run.seed} · run {run.run_id}")
    for name, axis_run in run.axes.items():
        if not json_out:
            console.print(rich_table(axis_run.result))
        cov, check = axis_run.coverage, axis_run.pairs_check
        say(f"{name}: {cov.n_read:,} contexts read, {cov.n_matched:,} mention a group, {cov.n_pairs:,} pairs audited")
        by_group = cov.n_by_group
        if not cov.balance and min(by_group.values(), default=0) and max(cov.original_shares.values()) >= 0.8:
            big = max(by_group, key=lambda g: by_group[g])
            say(
                f"{name}: {cov.original_shares[big]:.1%} of the pairs' originals are {big} wording; --balance draws equally from each group's originals",
                style="yellow",
            )
        if check is not None and check.n_leftover:
            say(
                f"{name}: {check.n_leftover:,} pairs ({check.leftover_share:.1%}) still hold a word of the original group on the swapped side (pairs_check.json)",
                style="yellow",
            )
        first = dict(cov.skipped_first)
        for reason, n in cov.skipped:
            say(f"{name}: skipped {n:,} corpus line(s): {reason} (first at {first.get(reason, '?')})", style="yellow")
        for line in generation_lines(axis_run.generation):
            say(f"{name}: {line}", style="yellow" if line.startswith("  ") else None)
        for line in by_turn_lines(axis_run.result):
            say(f"{name}: {line}")
        if (looked := sequential_summary(axis_run.result.manifest)) is not None:
            say(f"{name}: {looked}")
        if (where := scoring_line(axis_run.result.manifest, asked=bool(on_ray))) is not None:
            say(f"{name}: {where}")
        if axis_run.similarity is not None:
            from fairtalk.report import similarity_basis, similarity_row

            for warning in axis_run.similarity.warnings:
                say(f"{name}: warning: similarity: {warning}", style="bold yellow")
            say(f"{name}: similarity: {similarity_basis(axis_run.similarity)}")
            for row in axis_run.similarity.rows:
                verdict = "differ more than the baseline" if row.detected() else "do not differ more than the baseline"
                if similarity_row(row)["disagree"]:  # the test and its interval disagree
                    verdict = "are not counted as differing (the test and its 95% CI disagree)"
                p = "n/a" if row.p_adjusted is None else f"{row.p_adjusted:.3g}"
                say(
                    f"{name}: similarity ({row.method}): counterfactual answers {verdict} (divergence "
                    f"{row.counterfactual:.3f} vs {row.baseline:.3f}, adjusted p {p})",
                    style="bold red" if row.detected() else None,
                )
        info(f"{name}: report in {Path(output) / axis_run.folder}/")
    info(f"wrote {Path(output) / 'index.html'}")
    write_ci_files(
        run.results, junit, gates=gates_in_force(fail_on_bias=fail_on_bias, fail_unless_equivalent=fail_unless_equivalent)
    )
    code = report_gates(
        run.results, alpha=config.score.alpha, fail_on_bias=fail_on_bias, fail_unless_equivalent=fail_unless_equivalent
    )
    if baseline_model is not None:
        code = max(code, _against_baseline(config, baseline_model, output, store_path, json_out, fail_if_worse))
    if code:
        raise typer.Exit(code=code)


def _against_baseline(config: AuditConfig, model: str, output: str, store: object, json_out: bool, gate: bool) -> int:
    """Audit the baseline ``model`` on the same pairs (the same store) into OUTPUT/baseline, compare, print; the exit code.

    The baseline keeps every option of the candidate's audit but its model: its own ``--model-arg``
    are none (a ``--system-prompt`` is kept, so both models are asked alike).
    """
    import fairtalk
    from fairtalk.cli._compare import show_comparison
    from fairtalk.cli._output import progress_bars
    from fairtalk.report import MODEL_COMPARISON_FILES, check_report_folder, write_model_comparison

    base_out, compare_out = Path(output) / BASELINE_FOLDER, Path(output) / COMPARISON_FOLDER
    args = {k: v for k, v in config.model_args.items() if k == "system_prompt"}
    try:
        check_report_folder(str(compare_out), {"OUTPUT": output}, names=MODEL_COMPARISON_FILES.values())
        base_config = config.updated(
            {"model": model, "model_args": args, "model_version": None, "out_dir": str(base_out), "store": str(store)}
        )
        with progress_bars() as progress:
            base_run = fairtalk.audit(base_config, progress=progress)
        info(f"baseline {base_run.model}: report in {base_out}/")
        result = fairtalk.compare_runs(base_out, output)
        paths = write_model_comparison(result, compare_out)
    except KeyboardInterrupt:
        interrupted(store)
    return show_comparison(result, paths, json_out=json_out, junit=None, gate=gate, json_key="comparison")
