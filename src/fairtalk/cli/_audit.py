"""`fairtalk audit`: corpus -> pairs -> responses -> scores -> report, per axis, in one command."""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from fairtalk.cli._app import (
    IN_MEMORY,
    app,
    check_output_file,
    console,
    info,
    interrupted,
    lexicon_inputs,
    print_json,
    say,
    when_interrupted,
)
from fairtalk.cli._by_turn import by_turn_lines
from fairtalk.cli._choices import BinaryTest, Correction, CorrectionScope, CountTest, Distinct, Engine, Mixed, Split
from fairtalk.cli._respond import (
    BATCH_SIZE,
    ENGINE,
    MAX_CONSECUTIVE_FAILURES,
    MAX_NEW_TOKENS,
    MODEL_ARG,
    MODEL_VERSION,
    RAY_ACTORS,
    RAY_ADDRESS,
    REPETITION_PENALTY,
    SAMPLE,
    SAMPLING_FLAGS,
    STOP,
    TEMPERATURE,
    TOP_K,
    TOP_P,
    engine_option,
    generation_lines,
    model_options,
    stop_strings,
)
from fairtalk.cli._schema import cli_default, given_options, run_option, score_option
from fairtalk.cli._test_options import (
    CONFIG,
    FAIL_ON_BIAS,
    FAIL_UNLESS_EQUIVALENT,
    JUNIT,
    SCORE_CONVERTERS,
    SCORE_KEYS,
    SYSTEM_PROMPT,
    check_file_keys,
    check_judge_options,
    check_junit,
    ci_outputs,
    gates_in_force,
    one_config,
    report_gates,
    text_or_file,
    write_ci_files,
)
from fairtalk.options import RUN_FIELDS

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from contextlib import AbstractContextManager

    from fairtalk import AuditConfig, InputError, Lexicon
    from fairtalk.gates import Gate, GateOutcome
    from fairtalk.results import AuditResult, AuditRun

_STORE_FILE = "store.sqlite"
#: Where the report goes when neither --output nor the config file says (the flag's default).
_DEFAULT_OUTPUT = cli_default("out_dir")
#: With --baseline-model: the baseline's audit and the comparison go in these folders of OUTPUT.
BASELINE_FOLDER, COMPARISON_FOLDER = "baseline", "comparison"
_MSG_REPLACED = "replaced the earlier run in {output} (axes: {axes})"
_MSG_SAME_MODEL = (
    "--baseline-model: the baseline and the candidate would be {why}, whose answers are the same: a model cannot be "
    "shown not worse than itself; give the model the candidate replaces (or another --model-version, --model-arg or "
    "decoding setting)"
)
_MSG_STORE_IS_OUTPUT = (
    "--store and -o name the same path: the run store is a file, the output a folder; give --store another file "
    "(or leave it out: the store is then OUTPUT/store.sqlite)"
)
_MSG_OUTPUT_IN_STORE = "-o lies under --store {store}: the run store is a file; give --store a file outside the output folder"
_MSG_WORSE_ALONE = "--fail-if-worse needs --baseline-model (the model the candidate is compared with)"
_NOTE_RUN_SCOPE = (
    "--fail-on-bias over several axes: Holm corrects all axes of the run together (--correction-scope run), "
    "so the gate's family-wise error over the measures holds α for the whole run (an axis that lost pairs on "
    "one side adds its own loss check at α); give --correction-scope axis for each axis on its own"
)
#: The options ``--until-decided`` and ``--by-turn`` check together: named by their flags even when left at their defaults.
_CHECKED_TOGETHER = ("until_decided", "max_pairs", "n_pairs", "looks", "spending", "by_turn", "turns")
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
    from fairtalk.models import check_model_spec
    from fairtalk.run import load_axes

    values, names = given_options(
        ctx, (*RUN_FIELDS, *SCORE_KEYS), {**SCORE_CONVERTERS, "model_args": model_options}, named=_CHECKED_TOGETHER
    )
    decoding, _ = given_options(ctx, _DECODING_PARAMS, {"stop": stop_strings})
    decoding = {_DECODING_PARAMS[key]: value for key, value in decoding.items()}
    if (system := text_or_file(ctx.params.get("system_prompt"), "--system-prompt")) is not None:
        values["model_args"] = {**values.get("model_args", {}), "system_prompt": system}  # over the file's, key by key
        names["model_args"] = "--system-prompt"
    if decoding:
        values["settings"] = decoding
        names.update({key: flag for key, flag in SAMPLING_FLAGS.items() if key in decoding})
    names.setdefault("do_sample", SAMPLING_FLAGS["do_sample"])
    values.pop("engine", None)  # --engine and --ray-* go over the file's engine table below, keeping its other keys
    if path is None:
        config = fairtalk.AuditConfig().updated(values, names=names)
    else:  # the file's values under the command line's, tables merged key by key, validated once
        config = fairtalk.AuditConfig.from_file(path, values, names=names)
    engine, address, n_actors = (ctx.params.get(key) for key in ("engine", "ray_address", "ray_actors"))
    if (engine, address, n_actors) != (None, None, None):
        names["engine"] = "--engine"
        config = config.updated({"engine": engine_option(engine, address, n_actors, base=config.engine) or "local"}, names=names)
    check_judge_options(config.score)
    out_dir = config.out_dir if config.out_dir is not None else _DEFAULT_OUTPUT
    store = str(config.store) if isinstance(config.store, str) else str(Path(out_dir) / _STORE_FILE)  # never a RunStore here
    _check_store_apart(store, out_dir)
    # the lexicons are loaded here once, so that a lexicon file can be checked as an input
    with _of_file(path, values, "axes"):  # an unknown axis of the file names it
        lexicons = load_axes(config.axes)  # an axis given twice fails here, before its report folder is checked
    check_file_keys(path, values, config.score, lexicons)  # a bad margin or primary key of the file names it
    if isinstance(config.model, str):
        with _of_file(path, values, "model", "model_args"):  # before any answer: a bad model of the file names it
            check_model_spec(config.model, **config.model_args)
    return config.updated({"out_dir": out_dir, "store": store, "axes": lexicons}), lexicons, out_dir, store


def _check_store_apart(store: str, output: str) -> None:
    """OutputError, before anything is created, when ``--store`` names the output folder or a folder above it."""
    from fairtalk.errors import OutputError
    from fairtalk.files import same_file

    if store.strip() in ("", IN_MEMORY):
        return
    if same_file(store, output):
        raise OutputError(_MSG_STORE_IS_OUTPUT, path=store)
    if Path(store).resolve() in Path(output).resolve().parents:
        raise OutputError(_MSG_OUTPUT_IN_STORE.format(store=store), path=output)


def _of_file(path: str | None, given: Mapping[str, object], *keys: str) -> AbstractContextManager[None]:
    """A SpecError in the block names the ``--config`` file when the values of ``keys`` came from it (none on the command line)."""
    from fairtalk.config import file_named

    if path is None or any(key in given for key in keys):
        return contextlib.nullcontext()
    return file_named(path)


def _say_skips(name: str, skipped: tuple[tuple[str, int], ...], first: dict[str, str], config: AuditConfig) -> None:
    """The corpus lines the reader skipped, and those it kept without a part (system messages, a reply), by reason.

    Conversations kept without their system messages get the hint that ``--system-prompt`` gives
    the model one, when the model takes a system prompt and was given none (:func:`_takes_system_prompt`).
    """
    from fairtalk.corpora import SYSTEM_MESSAGES, kept_in_part

    for reason, n in skipped:
        done = f"kept {n:,} corpus line(s) without a part" if kept_in_part(reason) else f"skipped {n:,} corpus line(s)"
        hint = _HINT_SYSTEM_PROMPT if reason == SYSTEM_MESSAGES and _takes_system_prompt(config) else ""
        say(f"{name}: {done}: {reason} (first at {first.get(reason, '?')}){hint}", style="yellow")


def _takes_system_prompt(config: AuditConfig) -> bool:
    """Whether the audited model takes a system prompt and was given none: what the model's own spec check accepts.

    ``openai:``, ``hf:``, ``vllm:`` and ``builtin:smollm2`` take one; ``python:``, ``builtin:echo`` and
    ``replay:`` refuse it (``unknown option 'system_prompt' for python:bot.py:reply``).
    """
    from fairtalk.errors import SpecError
    from fairtalk.models import check_model_spec, model_prefixes, parse_model_spec

    model = config.model
    if (
        not isinstance(model, str)
        or _SYSTEM_PROMPT in config.model_args
        or _SYSTEM_PROMPT in parse_model_spec(model, prefixes=model_prefixes()).options
    ):
        return False
    try:
        check_model_spec(model, **{**config.model_args, _SYSTEM_PROMPT: "a system prompt"})
    except SpecError:
        return False
    return True


#: The model option a ``--system-prompt`` sets.
_SYSTEM_PROMPT = "system_prompt"
#: After the count of conversations kept without their system messages, for a model that takes one.
_HINT_SYSTEM_PROMPT = "; give the model one with --system-prompt"
_MSG_PAIRS_FILE = (
    "{value!r} is a file, but audit's --pairs is a count (pairs per axis); to answer a pairs file, "
    "run `fairtalk respond --pairs FILE` and score its responses with `fairtalk score`"
)
_MSG_PAIRS_COUNT = "{value!r} is not a whole number (audit's --pairs is the pairs per axis)"


def pairs_count(value: str) -> int:
    """``audit --pairs``: a whole number; a value naming a file gets a hint (``respond --pairs`` takes a pairs file).

    Its error is typer's ``Invalid value for '--pairs': …`` (a PydanticCustomError: typer checks options through pydantic).
    """
    from pydantic_core import PydanticCustomError

    try:
        return int(value)
    except ValueError:
        message = _MSG_PAIRS_FILE if os.path.isfile(value) else _MSG_PAIRS_COUNT
        raise PydanticCustomError("pairs_count", message.format(value=value)) from None


@app.command()
def audit(  # noqa: C901, PLR0915
    ctx: typer.Context,
    corpus: str = run_option("corpus", "--corpus"),
    axes: str = run_option("axes", "--axis"),
    model: str | None = run_option("model", "--model"),
    model_args: list[str] | None = MODEL_ARG,
    model_version: str | None = MODEL_VERSION,
    n_pairs: int | None = run_option("n_pairs", "--pairs", parser=pairs_count),
    seed: int = score_option("seed", "--seed", ranged=True),
    store: str | None = run_option("store", "--store"),
    out_dir: str = run_option("out_dir", "-o", "--output"),
    fail_on_bias: bool = FAIL_ON_BIAS,
    fail_unless_equivalent: bool = FAIL_UNLESS_EQUIVALENT,
    junit: str | None = JUNIT,
    max_errors: int | None = run_option("max_errors", "--max-errors"),
    max_consecutive_failures: int = MAX_CONSECUTIVE_FAILURES,
    split: Split | None = run_option("split", "--split"),
    batch_size: int = BATCH_SIZE,
    max_new_tokens: int = MAX_NEW_TOKENS,
    sample: bool = SAMPLE,
    temperature: float = TEMPERATURE,
    top_k: int | None = TOP_K,
    top_p: float | None = TOP_P,
    stop: list[str] | None = STOP,
    repetition_penalty: float | None = REPETITION_PENALTY,
    alpha: float = score_option("alpha", "--alpha", ranged=True),
    correction: Correction = score_option("correction", "--correction"),
    mask_groups: bool = score_option("mask_groups", "--mask-groups"),
    distinct: Distinct = score_option("distinct", "--distinct"),
    offense: str = score_option("offense", "--offense"),
    n_resamples: int = score_option("n_resamples", "--resamples", ranged=True),
    mixed: Mixed = run_option("mixed", "--mixed"),
    balance: bool = run_option("balance", "--balance"),
    measures: str | None = score_option("measures", "--measures"),
    drop_empty: bool = score_option("drop_empty", "--drop-empty"),
    exclude_truncated: bool = score_option("exclude_truncated", "--exclude-truncated"),
    gold: str | None = score_option("gold", "--gold"),
    offense_threshold: float = score_option("offense_threshold", "--offense-threshold", ranged=True),
    sentiment_threshold: float = score_option("sentiment_threshold", "--sentiment-threshold", ranged=True),
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
    system_prompt: str | None = SYSTEM_PROMPT,
    correction_scope: CorrectionScope = run_option("correction_scope", "--correction-scope"),
    turns: int = run_option("turns", "--turns"),
    by_turn: bool = run_option("by_turn", "--by-turn"),
    similarity: str | None = run_option("similarity", "--similarity"),
    until_decided: bool = run_option("until_decided", "--until-decided"),
    max_pairs: int | None = run_option("max_pairs", "--max-pairs"),
    looks: int | None = run_option("looks", "--looks"),
    spending: str = run_option("spending", "--spending"),
    json_out: bool = typer.Option(
        False,
        "--json",
        help="Write the results to stdout as one JSON document. It holds the run and every axis's result (with "
        "--baseline-model, the comparison too), and `gates` when a gate is given; messages go to stderr.",
    ),
    baseline_model: str | None = typer.Option(
        None,
        "--baseline-model",
        help="Also audit this model (a spec as for --model: python:, openai:, hf:, ...) on the same pairs, and compare "
        "--model with it. The baseline's audit goes into "
        "OUTPUT/baseline (one store for both) and the comparison into OUTPUT/comparison, as `fairtalk compare "
        "OUTPUT/baseline OUTPUT` does.",
    ),
    fail_if_worse: bool = typer.Option(
        False,
        "--fail-if-worse",
        help="With --baseline-model: exit 1 unless every primary measure is shown non-inferior to the baseline. "
        "--junit then holds the comparison's testcases (and the audit's too when --fail-on-bias or "
        "--fail-unless-equivalent is given).",
    ),
    config_given: list[str] | None = CONFIG,
    engine: Engine | None = ENGINE,
    ray_address: str | None = RAY_ADDRESS,
    ray_actors: int | None = RAY_ACTORS,
) -> None:
    """Audit a dialogue model end to end: pairs, responses, scores and a report per axis.

    Example: fairtalk audit --model python:mybot.py:reply --axis gender --pairs 500 -o report --fail-on-bias
    """
    import fairtalk
    from fairtalk.cli._labelled import say_labelled
    from fairtalk.cli._output import progress_bars, scoring_line
    from fairtalk.gates import evaluate
    from fairtalk.models import RayEngine
    from fairtalk.report import previous_axes, result_served, rich_table, sequential_summary

    config_file = one_config(config_given)  # one path (a second --config is refused)
    store_path: object = store  # the default store is known once the options are read
    gates = gates_in_force(fail_on_bias=fail_on_bias, fail_unless_equivalent=fail_unless_equivalent)
    earlier: tuple[str, ...] = ()  # the axes of an earlier run in the output folder, said on Ctrl-C
    try:
        if fail_if_worse and baseline_model is None:
            raise fairtalk.SpecError(_MSG_WORSE_ALONE)
        config, lexicons, output, store_path = _config(ctx, config_file)  # output: out_dir, its default filled in
        if baseline_model is not None:
            _check_baseline(config, _baseline_config(config, baseline_model, output, store_path))
        if fail_on_bias and config_file is None and _scope_left_out(ctx) and len(lexicons) > 1:
            config = config.updated({"correction_scope": "run"})  # the gate reads every axis: so does the correction
            say(_NOTE_RUN_SCOPE)
        protected = _check_outputs(config, lexicons, output, store_path, junit=junit, config_file=config_file)
        earlier = previous_axes(output)  # the run replaces them whole: said once it is written
        with progress_bars() as progress:  # --json: what is printed meanwhile goes to stderr (json_mode)
            run = fairtalk.audit(config, progress=progress, gates=gates)  # its pages and index state the gates
    except fairtalk.InputError as exc:
        raise _with_rerun(exc, ctx, store_path) from exc
    except KeyboardInterrupt:
        note = None if store_path is not None else "no answer had been generated yet"
        interrupted(store_path, note=note, earlier=str(output) if earlier else None)
    when_interrupted(f"the run was written in {output}", _missing(baseline_model), store_path, keep=[output])
    outcomes = [evaluate(run.results, g) for g in gates]  # the gates requested, as the report states them: in the JSON
    document = {"run": run.to_dict(), "results": {name: r.to_dict() for name, r in run.results.items()}} if json_out else {}
    if json_out and baseline_model is None:  # with a baseline, one document holds the comparison too: printed after it
        from fairtalk.results import versioned

        print_json(versioned({**document, "gates": [o.to_dict() for o in outcomes]} if outcomes else document))
    on_ray = " · engine ray" if isinstance(config.engine, RayEngine) else ""
    say(
        f"model {_model_shown(run.model, console.width)}{on_ray} · corpus {run.corpus} ({run.split}) · seed {run.seed} · run {run.run_id}"
    )
    for name, axis_run in run.axes.items():
        if not json_out:
            console.print(rich_table(axis_run.result))
        cov, check = axis_run.coverage, axis_run.pairs_check
        dropped = "" if (note := cov.dropped_note()) is None else f" ({note})"
        say(
            f"{name}: {cov.n_read:,} contexts read, {cov.n_matched:,} mention a group{dropped}, {_audited(cov.n_pairs, axis_run.result)}"
        )
        if axis_run.result.provenance.sequential is None and (short := cov.shortfall()) is not None:
            say(f"{name}: {short}", style="yellow")
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
        _say_skips(name, cov.skipped, dict(cov.skipped_first), config)
        for line in generation_lines(axis_run.generation, stored=str(store_path) != IN_MEMORY):
            say(f"{name}: {line}", style="yellow" if line.startswith("  ") else None)
        if (served := result_served(axis_run.result)) is not None:
            say(f"{name}: {served[0]}", style="bold yellow" if served[1] else None)
        for line in by_turn_lines(axis_run.result):
            say(f"{name}: {line}")
        if (looked := sequential_summary(axis_run.result.provenance)) is not None:
            say(f"{name}: {looked}")
            held = axis_run.result.provenance.sequential
            for key, why in ((held and held.undecided_why) or {}).items():  # the keys that held the run to its budget
                say(f"{name}:   {key} held the run back: {why}")
        if (where := scoring_line(axis_run.result.provenance, asked=bool(on_ray))) is not None:
            say(f"{name}: {where}")
        say_labelled(axis_run.result, prefix=f"{name}: ")
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
        info(f"{name}: report in {Path(output) / axis_run.folder}/", keep=[output])
    info(f"wrote {Path(output) / 'index.html'}", keep=[output])
    if earlier:  # even under -q: files of an earlier run are gone
        say(_MSG_REPLACED.format(output=output, axes=", ".join(earlier)))
    worse = baseline_model is not None and fail_if_worse  # the JUnit file waits for the comparison's decisions
    write_ci_files(run.results, None if worse else junit, gates=gates, protected=protected)
    code = report_gates(
        run.results, alpha=config.score.alpha, fail_on_bias=fail_on_bias, fail_unless_equivalent=fail_unless_equivalent
    )
    if baseline_model is not None:
        ci = (junit if worse else None, run.results, gates)
        joined = (document, outcomes) if json_out else None
        code = max(
            code,
            _against_baseline(
                config, baseline_model, output, store_path, fail_if_worse, ci=ci, audited=(run, outcomes), joined=joined
            ),
        )
    if code:
        raise typer.Exit(code=code)


def _with_rerun(exc: InputError, ctx: typer.Context, store: object) -> InputError:
    """``exc``, and when it is labels of other answers found once the answers exist, the command that reruns without them.

    That command is this one as given, without ``--gold``: the store it names (or ``OUTPUT/store.sqlite``)
    gives every answer. A run without a store file kept no answer: no command to give.
    """
    from fairtalk.inference import OtherAnswersError

    if not isinstance(exc.__cause__, OtherAnswersError) or str(store).strip() in ("", IN_MEMORY):
        return exc
    source = ctx.get_parameter_source("gold")
    if source is None or source.name != "COMMANDLINE":  # the options file names it: the same command would again
        note = f"Leave gold out of {one_config(ctx.params.get('config_given'))} and run the same command"
    else:
        note = f"The command: {_command_without(ctx, 'gold')}"
    return type(exc)(f"{exc.message}. {note}", path=exc.path, line=exc.line)


def _command_without(ctx: typer.Context, left_out: str) -> str:
    """The running ``fairtalk`` command as given (each option given, in the command's order), less ``left_out``."""
    import shlex

    words = ["fairtalk", ctx.info_name or "audit"]
    for param in ctx.command.params:
        source = ctx.get_parameter_source(param.name or "")
        if param.name == left_out or source is None or source.name != "COMMANDLINE" or not param.opts:
            continue
        value = ctx.params.get(param.name or "")
        if getattr(param, "is_flag", False) and isinstance(value, bool):
            flags = param.opts if value else param.secondary_opts
            words += flags[-1:] if flags else []
            continue
        for one in value if isinstance(value, (list, tuple)) else [value]:
            words += [param.opts[-1], str(getattr(one, "value", one))]
    return shlex.join(words)


def _missing(baseline_model: str | None) -> list[str | None]:
    """What ``audit`` writes after its run, named for the line Ctrl-C prints then."""
    return [*ci_outputs(), None if baseline_model is None else "the baseline's audit and the comparison"]


def _audited(n_pairs: int, result: AuditResult) -> str:
    """``"500 pairs audited"``; with pairs lost, the pairs tested and the losses by side."""
    losses = result.losses
    if losses is None:
        return f"{n_pairs:,} pairs audited"
    return (
        f"{result.n_pairs:,} pairs audited ({losses.n_lost:,} of {losses.n_asked:,} left out, a side lost: "
        f"side a only {losses.a_only:,}, side b only {losses.b_only:,}, both {losses.both:,})"
    )


def _check_outputs(
    config: AuditConfig, lexicons: list[Lexicon], output: str, store: str, *, junit: str | None, config_file: str | None
) -> dict[str, object]:
    """Before any work: the run folder, ``--store`` and ``--junit``; returns what the job summary may never be appended to.

    ``--junit`` is a new file or a JUnit file fairtalk wrote, never an input (the corpus, a
    lexicon file, the options file, the gold file, the store) nor inside an entry of the run
    folder (an axis folder, the baseline's run, the index). The library checks the corpus and
    the model's files against the run folder again when it has them.
    """
    import fairtalk
    from fairtalk.report import INDEX_FILE, RUN_FILE, check_not_input, check_output_folder, check_run_folder, previous_entries
    from fairtalk.store import is_run_store

    inputs = lexicon_inputs(lexicons, "--axis")
    folders = check_run_folder(output, [lexicon.axis for lexicon in lexicons], inputs)  # a lexicon file is an input too
    try:
        corpus = fairtalk.read_corpus(config.corpus, split=config.effective_split, turns=config.turns).path
    except fairtalk.FairtalkError:  # the audit itself says what is wrong with it
        corpus = None
    files = {**inputs, "--corpus": corpus, "--config": config_file, "--gold": config.score.gold}
    entries = sorted({*folders, *previous_entries(output), INDEX_FILE, RUN_FILE, BASELINE_FOLDER, COMPARISON_FOLDER})
    outputs = {f"the run folder's {entry}": os.path.join(output, entry) for entry in entries}
    check_junit(junit, inputs={**files, "--store": store}, outputs=outputs, folder=output)
    check_not_input(store, inputs, option="--store")
    if store != IN_MEMORY:
        check_output_file(store, option="--store", what="run store", ours=is_run_store, hold=False, inputs=files)
    check_output_folder(output, {**inputs, "--config": config_file})
    return {**files, **outputs, "--store": store, "-o": output}


def _baseline_config(config: AuditConfig, model: str, output: str, store: object) -> AuditConfig:
    """The baseline's audit: the candidate's options but its model, into OUTPUT/baseline (see :func:`_against_baseline`)."""
    args = {k: v for k, v in config.model_args.items() if k == "system_prompt"}
    return config.updated(
        {
            "model": model,
            "model_args": args,
            "model_version": None,
            "out_dir": str(Path(output) / BASELINE_FOLDER),
            "store": str(store),
            "gold": None,
        }
    )


def _check_baseline(config: AuditConfig, baseline: AuditConfig) -> None:
    """SpecError before any answer is generated when the baseline is no model it could load, or the candidate's own.

    No model it could load: an unknown built-in, a ``python:`` file not there, an option its adapter
    does not take; the candidate's own model gives the same answers.
    """
    from fairtalk.compare import same_model_configs
    from fairtalk.errors import SpecError
    from fairtalk.models import check_model_spec

    if isinstance(baseline.model, str):
        try:
            check_model_spec(baseline.model, **dict(baseline.model_args))
        except SpecError as exc:
            raise SpecError(f"--baseline-model: {exc}") from exc  # its text lists the choices
    if (why := same_model_configs(baseline, config)) is not None:
        raise SpecError(_MSG_SAME_MODEL.format(why=why))


def _against_baseline(
    config: AuditConfig,
    model: str,
    output: str,
    store: object,
    gate: bool,
    *,
    ci: tuple[str | None, Mapping[str, AuditResult], Sequence[Gate]],
    audited: tuple[AuditRun, Sequence[GateOutcome]],
    joined: tuple[Mapping[str, object], Sequence[GateOutcome]] | None,
) -> int:
    """Audit the baseline ``model`` on the same pairs (the same store) into OUTPUT/baseline, compare, print; the exit code.

    ``audited``: the candidate's run and its gates' outcomes: its ``index.html`` is written again
    with ``--fail-if-worse``'s outcome after them (when ``gate``) and links to the baseline's run and
    the comparison's report. ``joined`` (``--json``): the audit's document (``run``, ``results``) and the outcomes of its gates,
    printed with the comparison as one document (see :func:`~fairtalk.cli._compare.show_comparison`).
    ``ci``: the JUnit file to write with the comparison's ``--fail-if-worse`` testcases (None: the
    audit wrote its own), with the audit's results and the audit gates requested, whose testcases
    it holds too.

    The baseline keeps every option of the candidate's audit but its model: its own ``--model-arg``
    are none (a ``--system-prompt`` is kept, so both models are asked alike), and it takes no
    ``--gold`` (the labels are of the candidate's answers, never the baseline's).
    """
    import fairtalk
    from fairtalk.cli._compare import show_comparison
    from fairtalk.cli._output import progress_bars
    from fairtalk.gates import Gate, evaluate
    from fairtalk.report import MODEL_COMPARISON_FILES, check_report_folder, write_index, write_model_comparison

    base_out, compare_out = Path(output) / BASELINE_FOLDER, Path(output) / COMPARISON_FOLDER
    try:
        check_report_folder(str(compare_out), {"OUTPUT": output}, names=MODEL_COMPARISON_FILES.values(), kind="comparison")
        base_config = _baseline_config(config, model, output, store)
        with progress_bars() as progress:
            base_run = fairtalk.audit(base_config, progress=progress)
        info(f"baseline {base_run.model}: report in {base_out}/", keep=[output])
        result = fairtalk.compare_runs(base_out, output)
        paths = write_model_comparison(result, compare_out, gated=gate)
        run, outcomes = audited  # the run's index shows the comparison's gate too, and links both
        worse = [evaluate(result, Gate.FAIL_IF_WORSE)] if gate else []
        write_index(run, output, gates=[*outcomes, *worse], compared=(base_run.model, BASELINE_FOLDER, COMPARISON_FOLDER))
    except KeyboardInterrupt:
        interrupted(store)
    protected = {"OUTPUT": output, "--store": str(store)}
    junit, results, gates = ci
    return show_comparison(
        result,
        paths,
        json_out=joined is not None,
        junit=junit,
        gate=gate,
        joined=joined,
        protected=protected,
        audit=(results, gates),
    )


def _model_shown(model: str, width: int) -> str:
    """A recorded model (``SPEC {json settings}[ version=TAG]``) as the ``model`` line shows it in ``width`` columns.

    The settings' JSON holds no space, so a long one (a GGUF file, a chat template's hash, a system
    prompt) was one word the 80-column console could not break: where the settings (and a version
    after them) are wider than a continuation line of ``width`` columns (indented by 2), each comma of
    the settings gets a space after it; the spec and the values stay as recorded. Settings that fit
    such a line are shown as recorded (the line wraps before them).

    >>> _model_shown('hf:org/m {"dtype":"float32","gguf_file":"m.gguf"} version=v2', 40)
    'hf:org/m {"dtype": "float32", "gguf_file": "m.gguf"} version=v2'
    >>> _model_shown('hf:org/m {"dtype":"float32"}', 40)
    'hf:org/m {"dtype":"float32"}'
    """
    head, space, rest = model.partition(" ")
    if len(rest) + 2 <= width or not rest.startswith("{"):
        return model
    try:
        settings, end = json.JSONDecoder().raw_decode(rest)
    except ValueError:
        return model
    if not isinstance(settings, dict):
        return model
    return f"{head}{space}{json.dumps(settings)}{rest[end:]}"
