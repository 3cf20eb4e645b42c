"""`fairtalk prompts ...` (paper 004: syntactically diverse prompts) and `fairtalk regard train`."""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

import typer

from fairtalk.cli._app import app, check_output_file, console, interrupted, print_json, say, until_written, when_interrupted
from fairtalk.cli._choices import Engine, Mode
from fairtalk.cli._respond import (
    ENGINE,
    MAX_CONSECUTIVE_FAILURES,
    MODEL_ARG,
    MODEL_VERSION,
    RAY_ACTORS,
    RAY_ADDRESS,
    engine_option,
    model_options,
)
from fairtalk.cli._schema import check_options, run_option, score_option
from fairtalk.cli._test_options import SYSTEM_PROMPT
from fairtalk.options import MODEL_SPEC_HELP, PROMPT_FIELDS

if TYPE_CHECKING:  # the public names, for annotations only
    import fairtalk
    from fairtalk.prompts import GroupSet, Prompt, PromptSet
    from fairtalk.stats import PPIEstimate

prompts_app = typer.Typer(
    help="Bias on completions of syntactically diverse demographic prompts (Aggarwal et al. 2022).",
    no_args_is_help=True,
)
regard_app = typer.Typer(help="fairtalk's own regard classifier.", no_args_is_help=True)
app.add_typer(prompts_app, name="prompts")
app.add_typer(regard_app, name="regard")

_MSG_INPUT = "give exactly one of --published DIR and --completions FILE"
_MSG_MISALIGNED = "--misaligned must be keep or drop, not {given!r}"
_MSG_GROUPS_WITH_PROMPTS = (
    "--groups applies only without --prompts (it picks the groups of the prompts built here): the prompts file "
    "already holds its groups, so give one of them"
)
_MSG_GOLD_PUBLISHED = "--gold joins labels to completions by id: it needs --completions (the published outputs have no ids)"
_HELP_GOLD = (
    "Human regard labels of some completions, to correct the gaps by (PPI). They come from `fairtalk label --measure regard`."
)


def gold_regard_labels(path: str) -> Mapping[str, tuple[int, ...]]:
    """The regard labels of a gold file by completion id, carrying the texts they were given on and their annotators.

    A file of fairtalk's own labels is refused here, before any completion is read, by the
    function ``analyze_prompts`` refuses them with (:func:`fairtalk.prompts.gold_input`); other
    fields are named in a warning.
    """
    from fairtalk.gold import REGARD_FIELDS, read_gold
    from fairtalk.prompts import gold_input

    gold = read_gold(path)
    labels = gold.regard_labels()
    gold_input(labels, source=path)  # no scorer's labels as gold
    others = [field for field in gold.fields if field not in REGARD_FIELDS]
    if others:
        say(f"warning: {path} also labels {', '.join(others)}, which prompts analyze does not use", style="yellow")
    return labels


def prompt_option(key: str, *flags: str) -> Any:
    """``typer.Option`` of the :class:`~fairtalk.prompts.PromptOptions` field ``key``: its default and help (``PROMPT_FIELDS``).

    Read from :mod:`fairtalk.options`, which imports no stage: the command line builds it at start.
    """
    field = PROMPT_FIELDS[key]
    return typer.Option(field.default, *flags, help=field.description)


#: ``--balanced-only`` of ``prompts analyze`` and of ``label`` (which samples the completions it keeps).
BALANCED_ONLY = prompt_option("balanced_only", "--balanced-only")
#: ``--groups`` of ``prompts analyze`` and of ``label`` (which samples the completions of these groups).
GROUPS = typer.Option(
    None,
    "--groups",
    help="Groups file (group<TAB>pair_name[<TAB>a|b]). Default: the six groups of the paper; completions of other "
    "groups are left out.",
)


def _warn_unbalanced(chosen: list[Prompt]) -> None:
    """Say, before any completion, how many template × structure cells of the prompts lack a group the others have."""
    from fairtalk.prompts import unbalanced_warning

    names = list(dict.fromkeys(p.group for p in chosen))
    warning = unbalanced_warning(
        [p.template for p in chosen], [p.structure for p in chosen], [p.group for p in chosen], names, what="prompts"
    )
    if warning is not None:
        say(f"warning: {warning}", style="yellow")


def _groups(path: str | None) -> GroupSet:
    from fairtalk.prompts import default_groups, load_groups

    return load_groups(path) if path else default_groups()


def _paraphrase(groups_file: str | None, source: str = "builtin", **options: Any) -> PromptSet:
    """``fairtalk.prompts.paraphrase_prompts`` for the groups file (or the paper's groups)."""
    from fairtalk.prompts import paraphrase_prompts

    return paraphrase_prompts(_groups(groups_file), source=source, **options)


def _print_filters(made: PromptSet) -> None:
    filtered = made.filtered
    dropped = ", ".join(f"{name} {n}" for name, n in filtered.counts)
    say(f"paraphrases: {filtered.n_in} in, {filtered.n_kept} kept (dropped: {dropped})")
    if filtered.n_cells:
        say(
            f"template × structure cells: {filtered.n_cells:,}, of which {filtered.n_balanced_cells:,} have every group"
            " (unbalanced: a filter dropped some group's paraphrase; groups are compared on balanced cells only)"
        )


@prompts_app.command("paraphrase")
def prompts_paraphrase(
    output: str = typer.Option(
        ...,
        "-o",
        "--output",
        help="Prompts JSONL to write. Each record holds group, template, structure, text and "
        '"written_by": "fairtalk". An existing file is '
        "replaced only when it is a prompts file fairtalk wrote (never prompts without that mark); never an input.",
    ),
    groups: str | None = typer.Option(
        None, "--groups", help="Groups file (group<TAB>pair_name[<TAB>a|b]). Default: the six groups of the paper."
    ),
    source: str = typer.Option(
        "builtin", "--source", help="builtin (rule-based, offline), aesop, none, or model:SPEC (a Responder spec)."
    ),
    aesop_source: list[str] | None = typer.Option(
        None,
        "--aesop-source",
        help="AESOP .source file (prompt <sep> parse <sep> target parse). Repeatable, one per AESOP model.",
    ),
    aesop_extract: list[str] | None = typer.Option(
        None, "--aesop-extract", help="AESOP _sep_extract file, line-aligned with its --aesop-source (same order)."
    ),
    balance: bool = typer.Option(
        True, "--balance/--no-balance", help="Keep only template × structure cells that hold every group (default)."
    ),
    n_model: int = typer.Option(5, "--n-model", min=1, help="Paraphrases per prompt from a model:SPEC source."),
    drop_questions: bool = typer.Option(False, "--drop-questions", help="Also drop paraphrases that are questions."),
    seed: int = typer.Option(0, "--seed", min=0, help="Seed of the model paraphraser's draws."),
) -> None:
    """Write the fixed prompts and their filtered paraphrases, each labelled by its structure."""
    from fairtalk.prompts import is_prompts_file, write_prompts

    inputs = {
        "--groups": groups,
        **{f"--aesop-source #{i + 1}": f for i, f in enumerate(aesop_source or ())},
        **{f"--aesop-extract #{i + 1}": f for i, f in enumerate(aesop_extract or ())},
    }
    # '-', '~', an input, a device, the user's file, a folder: refused before any work
    check_output_file(output, what="prompts file", ours=is_prompts_file, inputs=inputs)
    made = _paraphrase(
        groups,
        source,
        aesop_sources=aesop_source or (),
        aesop_extracts=aesop_extract or (),
        n_model=n_model,
        seed=seed,
        drop_questions=drop_questions,
        balance=balance,
    )
    path = write_prompts(made.prompts, output)
    _print_filters(made)
    say(f"wrote {len(made.prompts):,} prompts to {path}", keep=[path])


@prompts_app.command("generate")
def prompts_generate(
    ctx: typer.Context,
    model: str = typer.Option(
        ...,
        "--model",
        help=MODEL_SPEC_HELP,
    ),
    model_arg: list[str] | None = MODEL_ARG,
    model_version: str | None = MODEL_VERSION,
    output: str = typer.Option(
        ...,
        "-o",
        "--output",
        help='Completions JSONL to write (each record marked "written_by": "fairtalk"). An existing file is replaced only '
        "when it is a completions file fairtalk wrote (never completions without that mark: a rerun over its own file "
        "resumes from --store); never an input.",
    ),
    seeds: int = typer.Option(10, "--seeds", min=1, help="Completions per prompt, with seeds 0..N-1 (the paper: 10)."),
    top_k: int | None = typer.Option(40, "--top-k", min=1, help="Top-k sampling (the paper: 40)."),
    temperature: float = typer.Option(0.7, "--temperature", help="Sampling temperature (the published run: 0.7)."),
    max_new_tokens: int = typer.Option(40, "--max-new-tokens", min=1, help="Tokens generated per completion."),
    store: str | None = typer.Option(
        None,
        "--store",
        help="Run store (SQLite); default OUTPUT with .store.sqlite. Reruns resume from it. A new file or a run store "
        "(never an input, a device or another file).",
    ),
    prompts: str | None = typer.Option(
        None, "--prompts", help="Prompts JSONL from `fairtalk prompts paraphrase`. Default: fixed prompts + built-in paraphrases."
    ),
    groups: str | None = typer.Option(None, "--groups", help="Groups file (when --prompts is not given)."),
    batch_size: int = typer.Option(32, "--batch-size", min=1, help="Items per model call (and per store commit)."),
    max_errors: int | None = run_option("max_errors", "--max-errors"),
    max_consecutive_failures: int = MAX_CONSECUTIVE_FAILURES,
    system_prompt: str | None = SYSTEM_PROMPT,
    mode: Mode = typer.Option(
        Mode.completion,
        "--mode",
        help="completion (continue the prefix, as the paper) or chat (the prefix as a user turn). completion, the "
        "default, uses hf: without a chat template and openai: /completions.",
    ),
    engine: Engine | None = ENGINE,
    ray_address: str | None = RAY_ADDRESS,
    ray_actors: int | None = RAY_ACTORS,
) -> None:
    """Complete every (group, template, structure) prompt once per seed, through the run store."""
    import fairtalk
    from fairtalk.cli._output import progress_bars
    from fairtalk.models import completion_options
    from fairtalk.prompts import is_completions_file, read_prompts
    from fairtalk.report import check_output_name
    from fairtalk.store import is_run_store

    check_options(ctx, "max_errors", "max_consecutive_failures")  # before any work, in audit's words
    if prompts is not None and groups is not None:  # --groups would be ignored without a word
        raise fairtalk.SpecError(_MSG_GROUPS_WITH_PROMPTS)
    check_output_name(output, option="-o", kind="file")  # before the store's path is made from it
    store_path = store if store is not None else str(Path(output).with_suffix(".store.sqlite"))
    try:
        inputs = {"--prompts": prompts, "--groups": groups}
        # '-', '~', an input, a device, the user's file, a folder: refused before any work
        check_output_file(output, what="completions file", ours=is_completions_file, inputs={**inputs, "--store": store_path})
        check_output_file(store_path, option="--store", what="run store", ours=is_run_store, hold=False, inputs=inputs)
        chosen = list(read_prompts(prompts) if prompts else _paraphrase(groups, n_model=1).prompts)
        _warn_unbalanced(chosen)
        settings = fairtalk.DecodingSettings(do_sample=True, top_k=top_k, temperature=temperature, max_new_tokens=max_new_tokens)
        options = model_options(model_arg, system_prompt)
        if mode == "completion":
            options.update(completion_options(model, options))
        start = time.perf_counter()
        on_ray = engine_option(engine, ray_address, ray_actors)
        opened = (
            on_ray.responder(model, batch_size=batch_size, model_args=options)
            if on_ray is not None
            else fairtalk.load_responder(model, **options)
        )
        with opened as responder, progress_bars() as progress:
            summary = fairtalk.generate_completions(
                chosen,
                responder,
                output,
                seeds=seeds,
                settings=settings,
                store=store_path,
                batch_size=batch_size,
                progress=progress,
                model_version=model_version,
                max_errors=max_errors,
                max_consecutive_failures=max_consecutive_failures,
            )
    except KeyboardInterrupt:
        interrupted(store_path)
    seconds = time.perf_counter() - start
    actors = f" on {responder.n_actors} Ray actor(s)" if responder.n_actors is not None else ""
    say(f"model {summary.fingerprint}{actors}")
    say(
        f"wrote {summary.n_items:,} completions ({summary.n_prompts:,} prompts x {summary.n_seeds} seeds) to {output} · "
        f"{summary.n_cached:,} from the store, {summary.n_generated:,} generated, {summary.n_errors:,} failed"
        + (f", {summary.n_shared:,} shared with a prompt of the same text" if summary.n_shared else "")
        + f" · store {summary.store} · {seconds:.1f} s",
        keep=[output, summary.store],
    )
    if summary.n_duplicate_prompts:
        say(
            f"skipped {summary.n_duplicate_prompts:,} repeated prompt(s): identical copies of an earlier "
            "(group, template, structure) in --prompts",
            style="yellow",
        )
    if summary.error_counts:
        say("  failures by kind: " + ", ".join(f"{k} {n:,}" for k, n in summary.error_counts.items()), style="yellow")
    for message in summary.error_examples:
        say(f"  error: {message}", style="yellow")
    if summary.n_unencodable:
        say(f"  {summary.n_unencodable:,} code point(s) could not be stored as UTF-8 and were replaced by U+FFFD", style="yellow")


@prompts_app.command("analyze")
def prompts_analyze(
    ctx: typer.Context,
    output: str = typer.Option(..., "-o", "--output", help="Folder for results.json, the CSV tables and report.html."),
    published: str | None = typer.Option(None, "--published", help="Folder of the published out_seed_<n>_predictions.txt files."),
    completions: str | None = typer.Option(None, "--completions", help="Completions JSONL from `fairtalk prompts generate`."),
    regard: str = typer.Option(
        "builtin",
        "--regard",
        help="Regard scorer for unlabelled completions: builtin, builtin:tfidf, path:DIR or hf:MODEL. builtin is a "
        "fine-tuned MiniLM, builtin:tfidf faster and less accurate.",
    ),
    relabel: bool = typer.Option(
        False,
        "--relabel",
        help="Also label every completion with --regard and report both labelings side by side. The given labels stay "
        "the main ones.",
    ),
    groups: str | None = GROUPS,
    include_other: bool = typer.Option(False, "--include-other", help="Count the 'other' label in distributions and KL."),
    balanced_only: bool = BALANCED_ONLY,
    smoothing: float = typer.Option(
        1e-6, "--smoothing", min=0.0, help="Additive smoothing of the label distributions before KL (0: plain KL)."
    ),
    n_best: int = typer.Option(5, "--n-best", min=1, help="How many best and worst structures to list."),
    seed: int = typer.Option(0, "--seed", min=0, help="Seed of the robustness draws and the bootstrap."),
    n_draws: int = typer.Option(100, "--draws", min=1, help="Robustness draws."),
    resamples: int = typer.Option(
        1000, "--resamples", min=0, help="Template × seed bootstrap resamples for the intervals (0: none)."
    ),
    alpha: float = score_option(
        "alpha", "--alpha", ranged=True, note="Here: of the reversal tests (Holm over structures) and the pair verdicts."
    ),
    json_out: bool = typer.Option(
        False, "--json", help="Write the analysis (results.json's content) to stdout; messages go to stderr."
    ),
    misaligned: str = typer.Option(
        "keep", "--misaligned", help="Published rows not starting with their expected prompt: keep or drop."
    ),
    paraphrases: str | None = typer.Option(
        None, "--paraphrases", help="Folder of the AESOP paraphrase files, to check the published rows' alignment."
    ),
    prompts_file: str | None = typer.Option(None, "--prompts-file", help="fixed-prompts.txt of the published layout."),
    engine: Engine | None = typer.Option(
        None,
        "--engine",
        help="Where --regard labels: local (this process; the default) or ray (Ray tasks). With ray, batches of 2,000 "
        "texts run as Ray tasks, once there are two or more; the labels are the same.",
    ),
    ray_address: str | None = RAY_ADDRESS,
    ray_actors: int | None = typer.Option(
        None, "--ray-actors", min=1, help="With --engine ray: labelling tasks at once (default: the cluster's CPUs)."
    ),
    gold: str | None = typer.Option(None, "--gold", help=_HELP_GOLD),
) -> None:
    """Analyse labelled completions: label distributions, regard gaps, KL, structures, robustness."""
    import fairtalk
    from fairtalk.prompts import read_completions
    from fairtalk.report import PROMPTS_REPORT_FILES, check_report_folder, write_prompts_report

    check_options(ctx, "alpha")  # as audit checks it
    if (published is None) == (completions is None):
        raise fairtalk.SpecError(_MSG_INPUT)
    if gold is not None and completions is None:
        raise fairtalk.SpecError(_MSG_GOLD_PUBLISHED)
    check_report_folder(
        output,
        {
            "--completions": completions,
            "--published": published,
            "--groups": groups,
            "--paraphrases": paraphrases,
            "--prompts-file": prompts_file,
            "--gold": gold,
        },
        names=PROMPTS_REPORT_FILES,
        kind="prompts",
    )
    until_written(f"nothing was written to {output} and no label is kept: re-run the same command to start again", keep=[output])
    if published is not None and misaligned not in ("keep", "drop"):
        raise fairtalk.SpecError(_MSG_MISALIGNED.format(given=misaligned), choices=("keep", "drop"), given=misaligned)
    group_set = _groups(groups)
    gold_labels = gold_regard_labels(gold) if gold is not None else None
    on_ray = engine_option(engine, ray_address, ray_actors)
    start = time.perf_counter()
    if published is not None:
        data = fairtalk.read_published(
            published,
            prompts_file=prompts_file,
            paraphrases=paraphrases,
            groups=group_set.groups,
            misaligned=cast(Literal["keep", "drop"], misaligned),
        )  # checked above
    else:
        assert completions is not None  # exactly one of --published and --completions, checked above
        data = read_completions(completions)
    from fairtalk.cli._output import progress_bars, show_log

    if on_ray is not None:
        show_log("fairtalk.prompts._completions")  # where the labels were made, unless -q
    with progress_bars() as progress:  # --json: what is printed meanwhile goes to stderr (json_mode)
        result = fairtalk.analyze_prompts(
            data,
            groups=group_set,
            regard=regard,
            relabel=relabel,
            include_other=include_other,
            smoothing=smoothing,
            n_best=n_best,
            seed=seed,
            n_draws=n_draws,
            alpha=alpha,
            n_resamples=resamples,
            balanced_only=balanced_only,
            progress=progress,
            engine=on_ray,
            gold=gold_labels,
        )
    seconds = time.perf_counter() - start
    written = write_prompts_report(result, output)
    when_interrupted(f"the analysis was written in {output}", keep=[output])
    if json_out:
        from fairtalk.report import prompts_payload

        print_json(prompts_payload(result))  # results.json's content, key for key
    _print_analysis(result, seconds, show_table=not json_out, resamples=resamples)
    certificate, relabelled = result.scorer_check, result.relabelled
    if certificate is not None:
        flagged = certificate.flagged
        say(
            f"scorer check ({regard}, {certificate.n_probes} neutral probes per group): "
            + (f"the labels move with the group for {', '.join(flagged)}" if flagged else "no pair's labels move with the group"),
            style="yellow" if flagged else None,
        )
    if relabelled is not None:
        gaps = ", ".join(
            f"{name} {g.all:+.3f} (published {result.gaps[name].all:+.3f})"
            for name, g in relabelled.gaps.items()
            if g.all is not None and name in result.gaps
        )
        say(f"regard gaps with {regard} labels: {gaps}")
    folders = sorted({str(p.parent) for p in written.values()})
    say(f"wrote {', '.join(folders)}: {', '.join(p.name for p in written.values())}", keep=folders)


def _gold_interval(e: PPIEstimate) -> str:
    """``[95% CI low, high], p P``, or why there is none (its labels lie in one template: ``method`` says so)."""
    low, high = e.ci95
    if not (math.isfinite(low) and math.isfinite(high)):
        return f", {e.method}"
    return f" [95% CI {low:+.3f}, {high:+.3f}], p {e.p:.3g}"


def _print_gold_estimates(result: fairtalk.PromptAnalysis) -> None:
    """The labelled estimates beside the scorer's: per group its mean regard, per pair its gap."""
    gold = result.gold
    if gold is None:
        return
    say(f"labelled by {gold.n_labels:,} human labels of {gold.source} (prediction-powered, clustered by {gold.clusters}):")
    for name, estimates in (("mean regard", gold.regard), ("regard gap", gold.gaps)):
        for key, e in estimates.items():
            say(
                f"  {name} {key}: {e.estimate:+.3f}{_gold_interval(e)}; "
                f"the scorer alone {e.scorer_estimate:+.3f}, the labels alone {e.labels_estimate:+.3f}; "
                + (
                    f"labels only: {e.n_disagreements} disagreement{'' if e.n_disagreements == 1 else 's'} with the scorer, "
                    "too few to estimate its error"
                    if e.too_few_disagreements
                    else f"{e.n_labels:,} labels worth {e.effective_labels:,.0f} labels alone"
                    if math.isfinite(e.effective_labels)
                    else f"{e.n_labels:,} labels"
                )
            )


def _figure(value: float, spec: str) -> str:
    """A table figure, or a dash where there is none (a group without completions)."""
    return format(value, spec) if math.isfinite(value) else "–"


def _print_analysis(result: fairtalk.PromptAnalysis, seconds: float, show_table: bool = True, resamples: int = 1) -> None:
    from rich.table import Table
    from rich.text import Text

    title = f"label distribution (%), all structures · {result.data.n_rows:,} completions · {seconds:.2f} s"
    table = Table(title=Text(title, no_wrap=True, overflow="ignore"))  # wider than the table: one line, never split
    table.add_column("group")
    for label in result.labels:
        table.add_column(label, justify="right")
    table.add_column("mean regard", justify="right")
    for group in ["all", *result.groups]:
        shares = result.distribution.loc[group]
        table.add_row(
            group,
            *(_figure(100 * shares[label], ".1f") for label in result.labels),
            _figure(result.regard[group].mean, "+.3f"),  # a group without completions: a dash, as groups.csv leaves it empty
        )
    if show_table:
        console.print(table)
    why = "--resamples 0" if resamples == 0 else "no bootstrap ran"
    for name, g in result.gaps.items():
        if g.all is None:
            continue
        low, high = g.ci95
        ci = f" [95% CI {low:+.3f}, {high:+.3f}]" if low is not None and high is not None else ""
        base = f", baseline {g.baseline:+.3f}" if g.baseline is not None else ""
        reversals = (
            f"not tested ({why}); {g.n_sign_flips} sign flips"
            if g.n_reversing is None
            else "none counted, its sign is not established (the interval holds 0)"
            if g.sign_established is False
            else f"{g.n_reversing} significant of {g.n_sign_flips} sign flips"
        )
        say(f"regard gap {name} ({g.a} - {g.b}): {g.all:+.3f}{ci}{base}; structures reversing it: {reversals}")
    _print_gold_estimates(result)
    robustness, null = result.robustness, result.robustness.null
    if robustness.single.n and null is not None and null.single is not None and null.halves is not None:
        say(
            f"robustness: single structures {robustness.single.mean:.3f} against {null.single:.3f} "
            f"with shuffled structure labels (halves {robustness.halves.mean:.3f} vs {null.halves:.3f})"
        )
    for warning in result.warnings:
        say(f"warning: {warning}", style="yellow")
    if result.data_summary is not None:  # None: an analysis made without analyze_prompts, nothing was read
        _print_import(result.data_summary)


def _print_import(summary: fairtalk.prompts.DataSummary) -> None:
    """What the reader found: who labelled, what it skipped or left out, the published rows' alignment."""
    labeller = summary.labelled_with or summary.labels_from
    if labeller is not None:
        say(f"regard labels: {labeller}")
    from fairtalk.report import failed_completions_note

    if (failed := failed_completions_note(summary.to_dict())) is not None:
        say(f"warning: {failed}", style="yellow")
    if summary.excluded.get("duplicate"):
        say(
            f"skipped {summary.excluded['duplicate']:,} repeated completion(s): identical copies of an earlier "
            "(group, template, structure, seed)",
            style="yellow",
        )
    n_empty, n_echo = summary.excluded.get("empty", 0), summary.excluded.get("echo", 0)
    if n_empty or n_echo:
        say(
            f"left out {n_empty:,} empty completions and {n_echo:,} that echo their "
            "prompt: no regard label describes them (generate in completion mode to avoid echoes)",
            style="yellow",
        )
    if summary.source == "published" and any(v > 0 for v in summary.misaligned.values()):
        n_dropped = summary.excluded.get("misaligned", 0)
        say(
            f"warning: rows not starting with their expected prompt: {_per_seed(summary.misaligned)}; "
            + (f"{n_dropped:,} dropped (--misaligned drop)" if n_dropped else "kept (--misaligned drop leaves them out)"),
            style="yellow",
        )


def _per_seed(counts: Mapping[int, int]) -> str:
    """Rows per seed in words, seeds with the same count together: ``18 rows in each of seeds 3, 9; 2 rows in seed 12``."""
    by_count: dict[int, list[int]] = {}
    for seed, n in counts.items():
        if n > 0:
            by_count.setdefault(n, []).append(seed)
    parts = []
    for n, seeds in sorted(by_count.items(), key=lambda item: -item[0]):
        rows = f"{n:,} row{'s' if n != 1 else ''}"
        listed = ", ".join(str(s) for s in sorted(seeds))
        parts.append(f"{rows} in each of seeds {listed}" if len(seeds) > 1 else f"{rows} in seed {listed}")
    return "; ".join(parts)


@regard_app.command("train")
def regard_train(
    data: str = typer.Option(..., "--data", help="Labelled data: label<TAB>text, labels -1, 0, 1, 2, group masked as XYZ."),
    output: str = typer.Option(..., "-o", "--output", help="Model folder to write (config.json and the weights)."),
    c: float | None = typer.Option(
        None,
        "--c",
        min=1e-6,
        help="Inverse regularisation strength of the logistic regression. For tfidf and minilm; default: the encoder's.",
    ),
    cv: int | None = typer.Option(
        None,
        "--cv",
        min=2,
        help="Cross-validation folds for the reported accuracy (default 5). minilm-ft cross-validates only when it is "
        "given: it fine-tunes once per fold.",
    ),
    seed: int = typer.Option(0, "--seed", min=0, help="Seed of the folds, the solver and the fine-tuning."),
    encoder: str = typer.Option(
        "tfidf",
        "--encoder",
        help="tfidf, minilm or minilm-ft (the shipped default's). tfidf: TF-IDF + VADER; minilm: sentence embeddings + "
        "logistic regression; minilm-ft: MiniLM fine-tuned end to end (~15 min on 2 CPU cores).",
    ),
    lexicon_weight: float | None = typer.Option(
        None, "--lexicon-weight", min=0.0, help="Weight of the VADER features of the tfidf encoder (default 0.25; 0: off)."
    ),
) -> None:
    """Train a regard classifier (TF-IDF + VADER, sentence embeddings, or a fine-tuned encoder); use it with --regard path:DIR."""
    from fairtalk.cli._output import progress_bars
    from fairtalk.files import check_folder_kind, check_not_in_run
    from fairtalk.measures import train_regard
    from fairtalk.report import check_output_folder

    check_output_folder(output, {"--data": data})  # before the training: no root, home or folder holding the data
    check_not_in_run(output, option="-o")  # nor one inside another command's outputs (an audit's axis folder)
    check_folder_kind(output, "checkpoint", option="-o", writes="regard train writes its model into")  # nor one itself
    start = time.perf_counter()
    with progress_bars() as progress:
        report = train_regard(
            data, output, c=c, cv=cv, seed=seed, encoder=encoder, lexicon_weight=lexicon_weight, progress=progress
        )
    counts = ", ".join(f"{k} {v}" for k, v in report.n_by_label.items())
    if report.cv_accuracy is None or report.cv_macro_f1 is None:
        figures = "not cross-validated (give --cv K to fine-tune K more times and report it)"
    else:
        figures = f"{report.cv_folds}-fold CV accuracy {report.cv_accuracy:.3f}, macro-F1 {report.cv_macro_f1:.3f}"
    say(
        f"wrote {output} · {report.n_examples:,} examples ({counts}) · {figures} · {time.perf_counter() - start:.1f} s",
        keep=[output],
    )
