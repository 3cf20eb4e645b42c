"""`fairtalk label`: label a blind, stratified sample by hand on a local page; `fairtalk label --agreement`: κ between annotators."""

from __future__ import annotations

import typer

from fairtalk.cli._app import EXIT_INTERRUPTED, app, check_output_file, console, fail, info, say
from fairtalk.cli._axes import AXIS_NAMES
from fairtalk.cli._prompts import BALANCED_ONLY, GROUPS

_MSG_ONE_INPUT = "give one INPUT to label (an audit's axis folder or responses.jsonl, a completions JSONL, or a text file)"
_MSG_NEEDS = "labelling needs --measure and -o (e.g. --measure offense_rate -o gold.jsonl)"
_MSG_AGREEMENT_ONLY = "--agreement reads gold files only: leave out {options}"
_MSG_NO_AXIS = "--axis is empty: give an axis or a lexicon file (gender, race, ...), or leave it out"
_MSG_NO_GOLD = "--agreement needs one or more gold files (of `fairtalk label -o`)"
_MSG_COMPLETIONS_ONLY = (
    "{options} pick the completions prompts analyze keeps: they apply to a completions file (`fairtalk prompts "
    "generate`), not to {input}"
)


@app.command()
def label(
    inputs: list[str] | None = typer.Argument(
        None,
        metavar="INPUT",
        help="What to label: an audit's axis folder or responses.jsonl, a completions JSONL (`fairtalk prompts generate`), "
        "or a text file (one text per line). With --agreement: gold files.",
    ),
    measure: str | None = typer.Option(
        None,
        "--measure",
        "-m",
        help="Keys to label: offense_rate, refusal_rate, degenerate_rate, sentiment, regard, NAME_yes, NAME_score:1-5. "
        "Comma-separated. NAME_yes is a judge's yes/no, NAME_score:1-5 its scale. Texts and completions "
        "take one.",
    ),
    output: str | None = typer.Option(
        None,
        "-o",
        "--output",
        help="The gold JSONL (labels are appended as they are given). An existing file must be a gold file fairtalk "
        "wrote (to resume it); never the input, a device or another file.",
    ),
    n: int = typer.Option(200, "--n", help="How many texts to sample (responses: both sides of n/2 pairs)."),
    seed: int = typer.Option(0, "--seed", min=0, help="Seed of the sample and its order."),
    annotator: str = typer.Option("annotator", "--annotator", help="Your name, written in every row you label."),
    port: int = typer.Option(0, "--port", min=0, max=65535, help="Port on 127.0.0.1 (0: a free one)."),
    axis: str | None = typer.Option(
        None,
        "--axis",
        help=f"Lexicons to mask too: {AXIS_NAMES} or files. Comma-separated. Default: the audit's, else gender and race.",
    ),
    agreement: bool = typer.Option(
        False, "--agreement", help="Print Cohen's κ (two annotators) or Fleiss' κ (more) of gold files."
    ),
    groups: str | None = GROUPS,
    balanced_only: bool = BALANCED_ONLY,
) -> None:
    """Label a blind sample by hand, one keystroke per label, on a page served on 127.0.0.1 until Ctrl-C or Done.

    The sample is stratified (the same number per group; for responses both sides of each sampled pair, one after the other) and seeded; identity terms are shown as XYZ, groups are shuffled, no scorer output is shown. A completions file's sample holds only completions `prompts analyze` keeps (with the same --groups and --balanced-only); the others are counted. Every label is appended to the gold file at once, so a restart with the same -o resumes at the first unlabelled item. Exit codes: 0 done; 2 a usage or input error; 130 Ctrl-C (every label given is saved).
    """
    if agreement:
        given = (("--measure", measure), ("-o", output), ("--groups", groups), ("--balanced-only", balanced_only))
        _agreement(inputs or [], given=[name for name, value in given if value])
        return
    from fairtalk.gold import GoldLog, LabelServer, draw_sample, is_gold_file, label_schemes, sample_record_path

    axes = [] if axis is None else [a.strip() for a in axis.split(",") if a.strip()]
    if axis is not None and not axes:
        fail(_MSG_NO_AXIS)
    if measure is None or output is None:
        fail(_MSG_NEEDS)
    schemes = label_schemes(measure)  # the options first, then the input (as every command does)
    if not inputs or len(inputs) != 1:
        fail(_MSG_ONE_INPUT)
    # no hold: annotators label one gold file at once (GoldLog locks each write, and each annotator's session)
    check_output_file(output, what="gold file", ours=is_gold_file, inputs={"INPUT": inputs[0]}, hold=False)
    record = sample_record_path(output)  # the sample record beside it: fairtalk's too, or new
    check_output_file(
        record, option="-o's sample record", what="sample record", ours=lambda path: True, inputs={"INPUT": inputs[0]}, hold=False
    )
    sample = draw_sample(inputs[0], n=n, seed=seed, axes=axes, keep=_analysed(inputs[0], groups, balanced_only))
    log = GoldLog(output, sample, schemes, annotator=annotator)
    try:
        server = LabelServer(log, port=port)
    except BaseException:  # a busy port or session: the sample record it wrote goes with it (no label was given)
        log.release()
        raise
    where = "all given" if log.done else f"item {log.steps[log.position].index + 1} of {len(sample.items)}"
    say(
        f"labelling {len(sample.items):,} texts ({log.n_given:,} of {len(log.steps):,} labels given; {where}) into {output}",
        keep=[output],
    )
    say(f"open {server.url}", style="bold")
    info("press Ctrl-C or the page's Done button to stop; every label is saved as it is given")
    try:
        server.serve_forever(poll_interval=0.1)
    except KeyboardInterrupt:
        server.server_close()
        resume = "every label is given" if log.done else "run the same command to resume"
        say(
            f"stopped: {_saved(log.n_given, len(log.steps), output)}; {resume}",
            style="yellow",
            stderr=True,
            keep=[output],
        )
        raise typer.Exit(code=EXIT_INTERRUPTED) from None
    server.server_close()
    say(f"done: {_saved(log.n_given, len(log.steps), output)}", keep=[output])


def _analysed(path: str, groups: str | None, balanced_only: bool) -> dict[str, str] | None:
    """A completions file's completions that `prompts analyze` keeps (id -> group), the rest said; None for other inputs."""
    from fairtalk.prompts import analysed_completions, holds_completions, load_groups

    given = [name for name, value in (("--groups", groups), ("--balanced-only", balanced_only)) if value]
    if not holds_completions(path):
        if given:
            fail(_MSG_COMPLETIONS_ONLY.format(options=" and ".join(given), input=path))
        return None
    found = analysed_completions(path, groups=load_groups(groups) if groups else None, balanced_only=balanced_only)
    if found.note is not None:
        say(f"warning: {found.note}", style="yellow")
    return dict(found.groups)


def _saved(given: int, total: int, output: str) -> str:
    """How many labels were given and where they are: a session that gave none wrote no gold file, and says so."""
    from pathlib import Path

    given_text = f"{given:,} of {total:,} labels given"
    if Path(output).exists():
        return f"{given_text}, saved in {output}"
    return f"{given_text}: nothing saved, no gold file written"


def _agreement(paths: list[str], *, given: list[str]) -> None:
    """Print κ per label field of the gold files."""
    from rich.table import Table

    from fairtalk.gold import agreement

    if given:
        fail(_MSG_AGREEMENT_ONLY.format(options=" and ".join(given)))
    if not paths:
        fail(_MSG_NO_GOLD)
    results = agreement(paths)
    # short headers (explained in the caption) and one annotator a line, so an 80-column console has room for a name
    # like "bo (gold-bo.jsonl)" whole; nothing is cut with an ellipsis: a column narrower than a name still folds it
    table = Table(
        title="agreement between annotators",
        caption="observed: the share of items all annotators label alike; items: those all of them labelled",
    )
    for column in ("label", "κ", "method", "observed", "items", "annotators"):
        right = column in ("κ", "observed", "items")
        table.add_column(column, justify="right" if right else "left", overflow="fold")
    for result in results:
        kappa = "n/a" if result.kappa != result.kappa else f"{result.kappa:.3f}"
        observed = "n/a" if result.observed != result.observed else f"{result.observed:.3f}"
        method = "Cohen's κ" if result.method == "cohen" else "Fleiss' κ"
        names = ",\n".join(result.annotators)
        table.add_row(result.field, kappa, method, observed, f"{result.n_items:,}", names)
    console.print(table)
    for result in results:
        if result.left_out:
            first = result.left_out[0]
            item = f"id {first.id}" if first.side is None else f"pair {first.id} side {first.side}"
            allowed = ", ".join(str(v) for v in sorted(result.allowed))
            by = f" by {first.annotator}" if first.annotator else ""
            say(
                f"warning: {len(result.left_out):,} label(s) of {result.field} outside its labels {allowed} "
                f"(first: {first.value} on {item}{by}): left out of κ",
                style="yellow",
            )
