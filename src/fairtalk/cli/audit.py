"""`fairtalk audit`: corpus -> pairs -> responses -> scores -> report, per axis, in one command."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from fairtalk.cli._app import (
    app,
    console,
    interrupted,
    json_output,
    lexicon_inputs,
    print_json,
    say,
)
from fairtalk.cli._inference import (
    BINARY_TEST,
    CLUSTERS,
    COUNT_TEST,
    FAIL_ON_BIAS,
    FAIL_UNLESS_EQUIVALENT,
    MARGIN,
    PRIMARY,
    parse_margins,
    parse_primary,
    report_gates,
)
from fairtalk.cli.respond import (
    check_max_errors,
    decoding_settings,
    generation_lines,
    model_options,
)

if TYPE_CHECKING:
    from fairtalk import Lexicon

_CHOICES = {"--correction": ("holm", "bh"), "--distinct": ("paper", "standard")}
_MSG_CHOICE = "{option} must be one of the choices, not {given!r}"
_MSG_PAIRS = "--pairs must be at least 1, not {given}"
_STORE_FILE = "store.sqlite"
_MSG_NO_AXES = "give at least one axis"


def _lexicons(axis: str) -> list[Lexicon]:
    """The lexicons ``--axis`` names (comma-separated names or files), loaded once here so their files can be checked."""
    import fairtalk

    names = [item.strip() for item in axis.split(",") if item.strip()]
    if not names:
        raise fairtalk.SpecError(_MSG_NO_AXES)
    return [fairtalk.load_lexicon(name) for name in names]


@app.command()
def audit(
    corpus: str = typer.Option("builtin:chitchat", "--corpus", help="Contexts: builtin:chitchat (its held-out split by default), FORMAT:PATH or a path."),
    axis: str = typer.Option("gender,race", "--axis", help="Axes to audit, comma-separated: gender, race, or lexicon files."),
    model: str | None = typer.Option(None, "--model", help="Model spec (default: builtin:minilm-retrieval, else builtin:retrieval, else builtin:smollm2, the first that loads)."),
    model_arg: list[str] | None = typer.Option(None, "--model-arg", help="An option for the model's adapter, KEY=VALUE (repeatable), as ?KEY=VALUE in the spec."),
    model_version: str | None = typer.Option(None, "--model-version", help="A tag that is part of the model's fingerprint (the store's key): change it when the model changes where its code does not show."),
    n_pairs: int | None = typer.Option(2000, "--pairs", help="Pairs per axis: a seeded uniform sample of the corpus' pairs."),
    seed: int = typer.Option(0, "--seed", min=0, help="Seed of the sample, the per-item generation seeds and the bootstrap."),
    store: str | None = typer.Option(None, "--store", help="SQLite run store (default: OUTPUT/store.sqlite, so re-running resumes)."),
    output: str = typer.Option("fairtalk-report", "-o", "--output", help="Folder for index.html and one folder per axis."),
    fail_on_bias: bool = FAIL_ON_BIAS,
    fail_unless_equivalent: bool = FAIL_UNLESS_EQUIVALENT,
    max_errors: int | None = typer.Option(None, "--max-errors", help="Abort once more pair sides than this have failed (default: never; failures are counted)."),
    split: str | None = typer.Option(None, "--split", help="Corpus split (builtin:chitchat: all, train, heldout; default heldout)."),
    batch_size: int = typer.Option(64, "--batch-size", min=1, help="Pair sides per model call (and per store commit)."),
    max_new_tokens: int = typer.Option(40, "--max-new-tokens", help="Longest response, in tokens."),
    sample: bool = typer.Option(False, "--sample/--greedy", help="Sample (seeded per item) or decode greedily."),
    temperature: float = typer.Option(1.0, "--temperature", help="Sampling temperature (with --sample)."),
    top_k: int | None = typer.Option(None, "--top-k", help="Sample from the k most likely tokens (with --sample)."),
    top_p: float | None = typer.Option(None, "--top-p", help="Nucleus sampling threshold (with --sample)."),
    alpha: float = typer.Option(0.05, "--alpha", min=0.0, max=1.0, help="Significance level for the adjusted p-values."),
    correction: str = typer.Option("holm", "--correction", help="Multiple-testing correction: holm or bh."),
    mask_groups: bool = typer.Option(False, "--mask-groups", help="Also score with the group words masked (scorer-bias check)."),
    distinct: str = typer.Option("paper", "--distinct", help="Distinct-n definition: paper (/ words) or standard (/ n-grams)."),
    offense: str = typer.Option("profanity_check", "--offense", help="Offense scorer: profanity_check (default), hatesonar, or hf:MODEL."),
    resamples: int = typer.Option(2000, "--resamples", min=1, help="Bootstrap resamples."),
    mixed: str = typer.Option("drop", "--mixed", help="Contexts that mention both groups: drop (default) or keep (swapped both ways)."),
    measures: str | None = typer.Option(None, "--measures", help="Comma-separated measure names (default: the paper's set and refusal); see `fairtalk score --help`."),
    drop_empty: bool = typer.Option(False, "--drop-empty", help="Drop pairs with an empty response instead of scoring them as ''."),
    offense_threshold: float = typer.Option(0.5, "--offense-threshold", min=0.0, max=1.0, help="Offensive when the probability is >= this."),
    sentiment_threshold: float = typer.Option(0.8, "--sentiment-threshold", min=0.0, max=1.0, help="Positive above +t, negative below -t (VADER compound)."),
    binary_test: str = BINARY_TEST,
    count_test: str = COUNT_TEST,
    clusters: bool = CLUSTERS,
    margin: list[str] | None = MARGIN,
    primary: str | None = PRIMARY,
    correction_scope: str = typer.Option("axis", "--correction-scope", help="Correct each axis on its own (axis) or all axes together (run)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bars."),
    json_out: bool = typer.Option(False, "--json", help="Write the run and every axis's result to stdout as JSON; messages go to stderr."),
) -> None:
    """Audit a dialogue model end to end: pairs, responses, scores and a report per axis."""
    import fairtalk
    from fairtalk.report import check_not_input, check_run_folder, rich_table

    store_path = store if store is not None else str(Path(output) / _STORE_FILE)
    try:
        for option, given in (("--correction", correction), ("--distinct", distinct)):
            if given not in _CHOICES[option]:
                raise fairtalk.SpecError(_MSG_CHOICE.format(option=option, given=given), choices=_CHOICES[option],
                                         given=given)  # fmt: skip
        if n_pairs is not None and n_pairs < 1:
            raise fairtalk.SpecError(_MSG_PAIRS.format(given=n_pairs))
        check_max_errors(max_errors)
        settings = decoding_settings(sample=sample, max_new_tokens=max_new_tokens, temperature=temperature,
                                     top_k=top_k, top_p=top_p)  # fmt: skip
        lexicons = _lexicons(axis)
        inputs = lexicon_inputs(lexicons, "--axis")
        check_run_folder(output, [lexicon.axis for lexicon in lexicons], inputs)  # a lexicon file is an input too
        check_not_input(store_path, inputs, option="--store")
        run = fairtalk.run_audit(
            corpus=corpus, axes=lexicons, model=model, n_pairs=n_pairs, seed=seed, store=store_path, out_dir=output,
            settings=settings, max_errors=max_errors, split=split, batch_size=batch_size, progress=not quiet,
            alpha=alpha, correction=correction, mask_groups=mask_groups, distinct=distinct, offense=offense,
            n_resamples=resamples, model_args=model_options(model_arg), model_version=model_version,
            binary_test=binary_test, count_test=count_test, clusters=clusters, margins=parse_margins(margin),
            primary=parse_primary(primary), correction_scope=correction_scope, mixed=mixed,
            measures=parse_primary(measures), drop_empty=drop_empty, offense_threshold=offense_threshold,
            sentiment_threshold=sentiment_threshold,
        )  # fmt: skip
    except KeyboardInterrupt:
        interrupted(store_path)
    json_output(json_out)
    if json_out:
        print_json({"run": run.to_dict(), "results": {name: r.to_dict() for name, r in run.results.items()}})
    say(f"model {run.model} · corpus {run.corpus} ({run.split}) · seed {run.seed} · run {run.run_id}")
    for name, axis_run in run.axes.items():
        if not json_out:
            console.print(rich_table(axis_run.result))
        cov = axis_run.coverage
        say(f"{name}: {cov['n_read']:,} contexts read, {cov['n_matched']:,} mention a group, {cov['n_pairs']:,} pairs audited")
        first = dict(cov.get("skipped_first") or ())
        for reason, n in cov.get("skipped") or ():
            say(f"{name}: skipped {n:,} corpus line(s): {reason} (first at {first.get(reason, '?')})", style="yellow")
        for line in generation_lines(axis_run.generation):
            say(f"{name}: {line}", style="yellow" if line.startswith("  ") else None)
        say(f"{name}: report in {Path(output) / axis_run.folder}/")
    say(f"wrote {Path(output) / 'index.html'}")
    code = report_gates(run.results, alpha=alpha, fail_on_bias=fail_on_bias, fail_unless_equivalent=fail_unless_equivalent)
    if code:
        raise typer.Exit(code=code)
