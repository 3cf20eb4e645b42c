"""The ``fairtalk`` command line: one thin typer function per command."""

from __future__ import annotations

import sys
from typing import Any, NoReturn

import typer
from rich.console import Console

from fairtalk.errors import FairtalkError

app = typer.Typer(
    name="fairtalk",
    help="Audit dialogue systems and text generators for demographic bias.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_show_locals=False,
)
err_console = Console(stderr=True)
console = Console()

#: Exit code for a user error (bad input, unknown spec).
EXIT_USAGE = 2
#: Exit code when ``--fail-on-bias`` finds a significant difference.
EXIT_BIAS = 1


def fail(error: FairtalkError | str) -> NoReturn:
    """Print ``error: <message>`` on stderr and exit 2."""
    err_console.print(f"[bold red]error:[/] {error}", markup=True, highlight=False, soft_wrap=True)
    raise typer.Exit(code=EXIT_USAGE)


def _print_version(value: bool) -> None:
    if value:
        from fairtalk import __version__

        console.print(f"fairtalk {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_print_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Audit dialogue systems and text generators for demographic bias."""


_SCORE_CHOICES = {"--correction": ("holm", "bh"), "--distinct": ("paper", "standard")}
_MSG_SCORE_CHOICE = "{option} must be one of the choices, not {given!r}"
_MSG_SCORE_AXIS = "give --axis (a built-in axis or a lexicon file) or --lexicon FILE"


@app.command()
def score(
    responses: str = typer.Option(..., "--responses", help="Responses JSONL ({pair_id, side, context, response}), or a.txt of the two-file layout."),
    responses_b: str | None = typer.Option(None, "--responses-b", help="b.txt, aligned line by line with --responses (two-file layout)."),
    axis: str | None = typer.Option(None, "--axis", help="Built-in axis (gender, race) or a lexicon file."),
    lexicon: str | None = typer.Option(None, "--lexicon", help="A lexicon file for the axis (overrides the built-in word pairs)."),
    output: str = typer.Option("fairtalk-report", "-o", "--output", help="Folder for results.json, results.csv, report.md, report.html."),
    fail_on_bias: bool = typer.Option(False, "--fail-on-bias", help="Exit 1 when any adjusted p < alpha (a CI gate)."),
    alpha: float = typer.Option(0.05, "--alpha", min=0.0, max=1.0, help="Significance level for the adjusted p-values."),
    correction: str = typer.Option("holm", "--correction", help="Multiple-testing correction: holm or bh."),
    mask_groups: bool = typer.Option(False, "--mask-groups", help="Also score with the group words masked (scorer-bias check)."),
    drop_empty: bool = typer.Option(False, "--drop-empty", help="Drop empty responses instead of scoring them as ''."),
    distinct: str = typer.Option("paper", "--distinct", help="Distinct-n definition: paper (/ words) or standard (/ n-grams)."),
    offense: str = typer.Option("profanity_check", "--offense", help="Offense scorer: profanity_check or hf:MODEL."),
    offense_threshold: float = typer.Option(0.5, "--offense-threshold", help="Offensive when the probability is >= this."),
    sentiment_threshold: float = typer.Option(0.8, "--sentiment-threshold", help="Positive above +t, negative below -t (VADER compound)."),
    seed: int = typer.Option(0, "--seed", help="Seed for the bootstrap and the mask."),
    resamples: int = typer.Option(2000, "--resamples", min=1, help="Bootstrap resamples."),
) -> None:
    """Score existing responses for bias between two groups, print the table and write the report."""
    import dataclasses

    import fairtalk
    from fairtalk.report import rich_table, write_report

    try:
        for option, given in (("--correction", correction), ("--distinct", distinct)):
            if given not in _SCORE_CHOICES[option]:
                raise fairtalk.SpecError(
                    _MSG_SCORE_CHOICE.format(option=option, given=given), choices=_SCORE_CHOICES[option], given=given
                )
        if lexicon is not None:
            lex = fairtalk.load_lexicon(lexicon)
            target = lex if axis is None else dataclasses.replace(lex, axis=axis)
        elif axis is not None:
            target = axis
        else:
            raise fairtalk.SpecError(_MSG_SCORE_AXIS)
        source = responses if responses_b is None else fairtalk.read_responses((responses, responses_b), drop_empty=drop_empty)
        result = fairtalk.score(
            source,
            axis=target,
            seed=seed,
            alpha=alpha,
            correction=correction,
            mask_groups=mask_groups,
            drop_empty=drop_empty,
            distinct=distinct,
            offense=offense,
            offense_threshold=offense_threshold,
            sentiment_threshold=sentiment_threshold,
            n_resamples=resamples,
        )
        paths = write_report(result, output)
    except FairtalkError as exc:
        fail(exc)
    console.print(rich_table(result))
    for path in paths.values():
        console.print(f"wrote {path}", highlight=False, markup=False)
    biased = result.biased(alpha)
    if biased:
        console.print(f"significant (adjusted p < {alpha:g}): {', '.join(biased)}", style="bold red", highlight=False, markup=False)
    else:
        console.print(f"no significant difference at adjusted p < {alpha:g}", style="green", highlight=False, markup=False)
    if fail_on_bias and biased:
        raise typer.Exit(code=EXIT_BIAS)


_MSG_PAIRS_AXIS = "give --axis (gender, race, or a lexicon file) or --lexicon FILE"
_MSG_PAIRS_LIMIT = "--limit must be at least 1, not {given}"


@app.command()
def pairs(
    corpus: str = typer.Option(..., "--corpus", help="builtin:chitchat, FORMAT:PATH (text, tsv, csv, jsonl, parquet, twitter, parlai) or a path with a known extension (.txt .tsv .csv .jsonl .parquet, optionally .gz)."),
    axis: str | None = typer.Option(None, "--axis", help="Built-in axis (gender, race) or a lexicon file."),
    lexicon: str | None = typer.Option(None, "--lexicon", help="A lexicon file for the axis (overrides the built-in word pairs)."),
    output: str = typer.Option("pairs.jsonl", "-o", "--output", help="Pairs JSONL to write (parent folders are created; '-' writes to stdout). The summary always goes to stderr."),
    limit: int | None = typer.Option(None, "--limit", help="Keep a seeded uniform sample of N pairs (still reads the whole corpus)."),
    seed: int = typer.Option(0, "--seed", help="Seed for the --limit sample and for many-to-many word choices."),
    mixed: str = typer.Option("drop", "--mixed", help="Contexts mentioning both groups: drop them, or keep them (swapped; original side = the side with more mentions)."),
    column: str | None = typer.Option(None, "--column", help="TSV/CSV/Parquet column: header name or 0-based index (default: a 'context'/'text' column, else the first)."),
    field: str | None = typer.Option(None, "--field", help="JSONL field holding the context (default: 'context', else 'text')."),
    split: str = typer.Option("all", "--split", help="builtin:chitchat only: all, train, or heldout (~10% of conversations, chosen by a hash of their id)."),
) -> None:
    """Build parallel context pairs (group-A wording on side a, group-B on side b) from a corpus."""
    import dataclasses
    import time

    import fairtalk

    started = time.perf_counter()
    try:
        if limit is not None and limit < 1:
            raise fairtalk.SpecError(_MSG_PAIRS_LIMIT.format(given=limit))
        if lexicon is not None:
            lex = fairtalk.load_lexicon(lexicon)
            lex = lex if axis is None else dataclasses.replace(lex, axis=axis)
        elif axis is not None:
            lex = fairtalk.load_lexicon(axis)
        else:
            raise fairtalk.SpecError(_MSG_PAIRS_AXIS)
        contexts = fairtalk.read_corpus(corpus, field=field, column=column, split=split)
        pair_set = fairtalk.build_pairs(
            contexts, fairtalk.Swapper(lex, seed=seed), mixed=mixed, limit=limit, seed=seed  # type: ignore[arg-type]
        )
        fairtalk.write_pairs(pair_set, sys.stdout if output == "-" else output)
    except FairtalkError as exc:
        fail(exc)
    _print_coverage(pair_set.coverage, "stdout" if output == "-" else output, time.perf_counter() - started)


def _print_coverage(coverage: object, output: str, seconds: float) -> None:
    """Render a pairs Coverage summary as a rich table on stderr."""
    from rich.table import Table
    from rich.text import Text

    cov: Any = coverage
    table = Table(title=f"fairtalk pairs · axis {cov.axis}", show_header=False, title_justify="left")
    table.add_column(style="bold")
    table.add_column(justify="right")
    table.add_column(overflow="fold")
    share = f"{cov.n_matched / cov.n_read:.1%} of read" if cov.n_read else ""
    table.add_row("contexts read", f"{cov.n_read:,}", "")
    table.add_row("matched", f"{cov.n_matched:,}", share)
    for side, group in zip("ab", cov.groups):
        table.add_row(f"  original {group}", f"{cov.n_by_group[group]:,}", f"side {side}")
    table.add_row("  mixed (both groups)", f"{cov.n_mixed:,}", "kept" if cov.mixed == "keep" else "dropped")
    table.add_row("  duplicates", f"{cov.n_duplicates:,}", "dropped")
    sample = f"sample of {cov.limit:,}" if cov.limit is not None else ""
    table.add_row("pairs written", f"{cov.n_pairs:,}", Text(f"{sample}{' → ' if sample else '→ '}{output}"))
    terms = ", ".join(f"{term} {n:,}" for term, n in cov.top_terms)
    table.add_row("top swaps", "", Text(terms or "none"))
    first = dict(cov.skipped_first)
    for reason, n in cov.skipped:
        table.add_row(Text(f"skipped: {reason}"), f"{n:,}", Text(f"first at {first.get(reason, '?')}"))
    table.add_row("time", f"{seconds:.1f} s", "")
    err_console.print(table, markup=False, highlight=False)


_MSG_SWAP_AXIS = "give --axis or --lexicon FILE"


@app.command()
def swap(
    texts: list[str] | None = typer.Argument(None, help="Texts to swap; without them, lines are read from stdin."),
    axis: str | None = typer.Option(None, "--axis", help="Built-in axis: gender or race."),
    lexicon: str | None = typer.Option(None, "--lexicon", help="A lexicon file (overrides --axis)."),
    variant: str = typer.Option("default", "--variant", help="Built-in word lists: default (cleaned) or paper (as printed)."),
    seed: int = typer.Option(0, "--seed", help="Seed for choosing among several counterparts."),
) -> None:
    """Swap each line into the other group's wording (both directions), one output line per input line."""
    import fairtalk

    try:
        if lexicon is not None:
            lex = fairtalk.load_lexicon(lexicon, variant=variant)
        elif axis is not None:
            lex = fairtalk.load_lexicon(axis, variant=variant)
        else:
            raise fairtalk.SpecError(_MSG_SWAP_AXIS, choices=fairtalk.builtin_axes())
        swapper = fairtalk.Swapper(lex, seed=seed)
    except FairtalkError as exc:
        fail(exc)
    if texts:
        lines = (line for text in texts for line in text.split("\n"))
    else:  # bytes in, bytes out: undecodable bytes pass through unchanged
        lines = (raw.decode("utf-8", "surrogateescape").removesuffix("\n").removesuffix("\r") for raw in sys.stdin.buffer)
    out = sys.stdout.buffer
    interactive = sys.stdin.isatty()
    try:
        for line in lines:
            out.write(swapper.swap(line).text.encode("utf-8", "surrogateescape") + b"\n")
            if interactive:
                out.flush()
        out.flush()
    except BrokenPipeError:  # `fairtalk swap < big.txt | head`: stop quietly
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        raise typer.Exit(code=0) from None


_MSG_AUGMENT_AXIS = "give --axis (gender, race, or a lexicon file) or --lexicon FILE"


@app.command()
def augment(
    corpus: str = typer.Option(..., "--corpus", help="Context-response corpus: builtin:chitchat, FORMAT:PATH (jsonl with a 'response' field, twitter, parlai) or a path."),
    axis: str | None = typer.Option(None, "--axis", help="Built-in axis (gender, race) or a lexicon file."),
    lexicon: str | None = typer.Option(None, "--lexicon", help="A lexicon file for the axis (overrides the built-in word pairs)."),
    output: str = typer.Option(..., "-o", "--output", help="Augmented JSONL to write ({context, response, augmented, origin}; .gz compresses). Never the input."),
    seed: int = typer.Option(0, "--seed", help="Seed for choosing among several counterparts."),
    field: str | None = typer.Option(None, "--field", help="JSONL field holding the context (default: 'context', else 'text')."),
    split: str = typer.Option("all", "--split", help="builtin:chitchat only: all, train, or heldout."),
) -> None:
    """Counterpart data augmentation: write each dialogue plus its group-swapped twin (when it changes)."""
    import dataclasses
    import time

    import fairtalk

    started = time.perf_counter()
    try:
        if lexicon is not None:
            lex = fairtalk.load_lexicon(lexicon)
            lex = lex if axis is None else dataclasses.replace(lex, axis=axis)
        elif axis is not None:
            lex = fairtalk.load_lexicon(axis)
        else:
            raise fairtalk.SpecError(_MSG_AUGMENT_AXIS, choices=fairtalk.builtin_axes())
        contexts = fairtalk.read_corpus(corpus, field=field, split=split)
        augmentation = fairtalk.augment(contexts, fairtalk.Swapper(lex, seed=seed))
        fairtalk.write_dialogues(augmentation, output, inputs=[corpus])
    except FairtalkError as exc:
        fail(exc)
    _print_augmentation(lex.axis, augmentation.summary, contexts.summary, output, time.perf_counter() - started)


def _print_augmentation(axis: str, summary: Any, read: Any, output: str, seconds: float) -> None:
    """Render the counts of an augmentation pass as a rich table."""
    from rich.table import Table
    from rich.text import Text

    table = Table(title=f"fairtalk augment · axis {axis}", show_header=False, title_justify="left")
    table.add_column(style="bold")
    table.add_column(justify="right")
    table.add_column()
    table.add_row("records read", f"{summary.n_read:,}", "")
    table.add_row("  without a response", f"{summary.n_no_response:,}", "left out")
    table.add_row("dialogues in", f"{summary.n_in:,}", "")
    share = f"{summary.n_changed / summary.n_in:.1%} of dialogues" if summary.n_in else ""
    table.add_row("counterparts added", f"{summary.n_changed:,}", share)
    ratio = f"× {summary.ratio:.2f} (paper: 2.58M → 4.20M, × 1.63)" if summary.ratio else ""
    table.add_row("dialogues out", f"{summary.n_out:,}", Text(f"{ratio} → {output}"))
    terms = ", ".join(f"{term} {n:,}" for term, n in summary.top_terms)
    table.add_row("top swaps", "", Text(terms or "none"))
    for reason, n in read.skipped:  # lines the corpus reader could not use
        table.add_row(Text(f"skipped: {reason}"), f"{n:,}", Text(f"first at {read.where(reason) or '?'}"))
    table.add_row("time", f"{seconds:.1f} s", "")
    console.print(table, markup=False, highlight=False)


_MSG_POOL_REASONS = "--drop takes a comma-separated list of reasons"


@app.command("pool-filter")
def pool_filter(
    pool: str = typer.Option(..., "--pool", help="Candidate pool: one response per line (UTF-8)."),
    output: str = typer.Option(..., "-o", "--output", help="Filtered pool to write, one response per line."),
    drop: str = typer.Option("offensive,negative,group_words", "--drop", help="Comma-separated reasons: offensive, negative, group_words."),
    axis: str | None = typer.Option(None, "--axis", help="Axis (gender, race, or a lexicon file) whose words group_words drops."),
    offense_threshold: float = typer.Option(0.5, "--offense-threshold", help="Offensive when the probability is >= this."),
    negative_threshold: float = typer.Option(-0.8, "--negative-threshold", help="Strongly negative when VADER's compound score is below this."),
    offense: str = typer.Option("profanity_check", "--offense", help="Offense scorer: profanity_check or hf:MODEL."),
) -> None:
    """Remove biased candidates (offensive, strongly negative, mentioning group words) from a retrieval pool."""
    import fairtalk

    try:
        reasons = [reason.strip() for reason in drop.split(",") if reason.strip()]
        if not reasons:
            raise fairtalk.SpecError(_MSG_POOL_REASONS, choices=("group_words", "negative", "offensive"))
        candidates = fairtalk.read_pool(pool)
        result = fairtalk.filter_pool(
            candidates,
            drop=reasons,
            swapper=axis,
            offense_threshold=offense_threshold,
            negative_threshold=negative_threshold,
            offense_scorer=offense,
        )
        fairtalk.write_pool(result.kept, output, input_path=pool)
    except FairtalkError as exc:
        fail(exc)
    from rich.table import Table

    table = Table(title="fairtalk pool-filter", show_header=False, title_justify="left")
    table.add_column(style="bold")
    table.add_column(justify="right")
    table.add_row("pool before", f"{result.n_before:,}")
    for reason, n in result.dropped_by.items():
        table.add_row(f"  dropped: {reason}", f"{n:,}")
    table.add_row("pool after", f"{result.n_after:,}")
    console.print(table, markup=False, highlight=False)
    console.print(f"wrote {output}", markup=False, highlight=False)


# (new commands go above this line)


def main() -> None:
    """Entry point of the ``fairtalk`` console script."""
    try:
        app()
    except FairtalkError as exc:  # raised outside a command body (option parsing callbacks)
        err_console.print(f"error: {exc}", highlight=False, soft_wrap=True)
        sys.exit(EXIT_USAGE)


if __name__ == "__main__":
    main()
