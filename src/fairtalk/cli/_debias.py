"""`fairtalk augment` and `fairtalk pool-filter`: debiasing data and retrieval pools."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import typer

from fairtalk.cli._app import (
    app,
    check_output_file,
    console,
    info,
    interrupted,
    lexicon_inputs,
    resolve_lexicon,
    when_interrupted,
)
from fairtalk.cli._axes import AUDIT_AXIS_NAMES, AXES, AXIS_NAMES, WORD_AXES
from fairtalk.cli._choices import Split
from fairtalk.cli._schema import check_options, score_option

if TYPE_CHECKING:
    from fairtalk.lexicons import Lexicon

_MSG_NO_DIALOGUES = (
    "no dialogues to augment: {n_read:,} records read, {n_no_response:,} without a response{skipped} "
    "(augment needs context-response pairs: jsonl with a 'response' field, twitter, parlai, "
    "builtin:chitchat); nothing was written"
)

#: How the corpus readers name a problem with a reply (twitter: ``reply: missing (odd number of lines)``); the record
#: is kept without its reply, which augment counts among those without a response.
_REPLY_PREFIX = "reply: "

#: Ctrl-C before the augmented corpus is written: it is written whole or not at all.
_MSG_NOT_WRITTEN = "{output} was not written (an earlier file there is unchanged)"


@app.command()
def augment(
    corpus: str = typer.Option(
        ...,
        "--corpus",
        help="Context-response corpus: builtin:chitchat, FORMAT:PATH (jsonl, twitter, parlai) or a path. A jsonl "
        "corpus's records have a 'response' field.",
    ),
    axis: str | None = typer.Option(None, "--axis", help=f"An axis ({AXIS_NAMES}) or a lexicon file. Axes: {AXES}."),
    lexicon: str | None = typer.Option(
        None, "--lexicon", help="A lexicon file for the axis (overrides the built-in word pairs)."
    ),
    output: str = typer.Option(
        ...,
        "-o",
        "--output",
        help="Augmented JSONL to write ({context, response, augmented, origin}; .gz compresses). An existing file is "
        "replaced only when it is an augmented corpus fairtalk wrote; never an input.",
    ),
    seed: int = typer.Option(0, "--seed", min=0, help="Seed for choosing among several counterparts."),
    field: str | None = typer.Option(None, "--field", help="JSONL field holding the context (default: 'context', else 'text')."),
    split: Split = typer.Option(Split.all, "--split", help="builtin:chitchat only: all, train, or heldout."),
    again: bool = typer.Option(
        False,
        "--again",
        help="Augment a corpus fairtalk augmented already (another axis' twins, on purpose). Without it, one is "
        "refused, since its twins would get twins of their own.",
    ),
) -> None:
    """Counterpart data augmentation: write each dialogue plus its group-swapped twin (when it changes)."""
    import time

    import fairtalk
    from fairtalk.debias import is_dialogues_file, write_dialogues
    from fairtalk.report import check_output_name

    started = time.perf_counter()
    check_output_name(output, option="-o", kind="file")  # before any work: '-', '~'
    try:
        lex = resolve_lexicon(axis, lexicon)
        contexts = fairtalk.read_corpus(corpus, field=field, split=split.value)
        inputs = {"--corpus": contexts.path, **lexicon_inputs([lex], "--lexicon" if lexicon else "--axis")}
        # an input, a device, the user's own file, a folder or an unwritable place: refused before any work
        check_output_file(output, what="augmented corpus", ours=is_dialogues_file, inputs=inputs)
        augmentation = fairtalk.augment(contexts, fairtalk.Swapper(lex, seed=seed), again=again)
        write_dialogues(_some_dialogues(augmentation, contexts, corpus), output, inputs=[corpus])
    except KeyboardInterrupt:
        interrupted(note=_MSG_NOT_WRITTEN.format(output=output))
    when_interrupted(f"{output} was written", keep=[output])
    _print_augmentation(lex.axis, augmentation.summary, contexts.summary, output, time.perf_counter() - started)


def _some_dialogues(augmentation: Any, contexts: Any, corpus: str) -> Any:
    """The augmented dialogues as they come; an InputError at the end when there was none, or no counterpart.

    Either way nothing is written (an earlier file at the output stays as it was).
    """
    import fairtalk
    from fairtalk.debias import check_counterparts

    n = 0
    for dialogue in augmentation:
        n += 1
        yield dialogue
    if n == 0:
        summary, read = augmentation.summary, contexts.summary
        replies, others = _read_rows(read)  # a missing reply is one of those without a response, not a skip of its own
        skipped = f" ({'; '.join(f'{k:,} {reason}' for reason, k in replies)})" if replies else ""
        skipped += "".join(f", {k:,} {done}: {reason}" for done, reason, k in others)
        raise fairtalk.InputError(
            _MSG_NO_DIALOGUES.format(n_read=summary.n_read, n_no_response=summary.n_no_response, skipped=skipped)
        )
    check_counterparts(augmentation.summary, augmentation.swapper, corpus=corpus)  # a plain copy is no augmented corpus


def _read_rows(read: Any) -> tuple[list[tuple[str, int]], list[tuple[str, str, int]]]:
    """The reader's problems: those of a reply, a part of the records counted "without a response"; and the rest.

    A twitter context whose reply is missing or unreadable is kept without it (and augment
    then leaves it out, counted under "without a response"), so its reason is no skip of its
    own; another problem that keeps its record in part is "kept without a part", as
    ``fairtalk pairs`` says; any other skipped the line.
    """
    from fairtalk.corpora import kept_in_part

    replies: list[tuple[str, int]] = []
    others: list[tuple[str, str, int]] = []
    for reason, n in read.skipped:
        if reason.startswith(_REPLY_PREFIX):
            replies.append((reason, n))
        else:
            others.append(("kept without a part" if kept_in_part(reason) else "skipped", reason, n))
    return replies, others


def _print_augmentation(axis: str, summary: Any, read: Any, output: str, seconds: float) -> None:
    """Render the counts of an augmentation pass as a rich table (long cells wrap: paths are never cut)."""
    from rich.table import Table
    from rich.text import Text

    table = Table(title=f"fairtalk augment · axis {axis}", show_header=False, title_justify="left")
    table.add_column(style="bold")
    table.add_column(justify="right")
    table.add_column(overflow="fold")
    replies, others = _read_rows(read)
    table.add_row("records read", f"{summary.n_read:,}", "")
    table.add_row("  without a response", f"{summary.n_no_response:,}", "left out")
    for reason, n in replies:  # among those without a response: the reader kept the context, not the reply
        what = reason.removeprefix(_REPLY_PREFIX)
        table.add_row("    of which reply", f"{n:,}", Text(f"{what}, first at {read.where(reason) or '?'}"))
    table.add_row("dialogues in", f"{summary.n_in:,}", "")
    share = f"{summary.n_changed / summary.n_in:.1%} of dialogues" if summary.n_in else ""
    table.add_row("counterparts added", f"{summary.n_changed:,}", share)
    ratio = f"× {summary.ratio:.2f} (paper: 2.58M → 4.20M, × 1.63)" if summary.ratio else ""
    table.add_row("dialogues out", f"{summary.n_out:,}", Text(f"{ratio} → {output}"))
    terms = ", ".join(f"{term} {n:,}" for term, n in summary.top_terms)
    table.add_row("top swaps", "", Text(terms or "none"))
    for done, reason, n in others:  # lines the corpus reader could not use (or used in part)
        table.add_row(Text(f"{done}: {reason}"), f"{n:,}", Text(f"first at {read.where(reason) or '?'}"))
    table.add_row("time", f"{seconds:.1f} s", "")
    console.print(table, markup=False, highlight=False)


_MSG_POOL_REASONS = "--drop takes a comma-separated list of reasons"
_MSG_POOL_AXIS = "--drop group_words needs an axis: give --axis, the axis (or lexicon file) whose words are dropped"
_MSG_POOL_AXIS_UNUSED = "--axis is used only by --drop group_words, which is not asked for; add it to --drop, or leave --axis out"
_MSG_POOL_EMPTY = "no candidates in the pool (every line is blank); nothing to filter"
_MSG_POOL_ALL_DROPPED = (
    "every candidate of the pool was dropped ({reasons}); nothing was written: a retrieval pool with no candidates "
    "cannot answer (respond --model 'builtin:retrieval?pool=...' refuses it); give fewer --drop reasons, or a larger pool"
)


def _pool_lexicons(axis: str | None) -> list[Lexicon]:
    """The lexicons whose words ``--drop group_words`` looks for: none, one, or each pair of a multi-way axis."""
    from fairtalk.debias import pool_lexicons

    if axis is None:
        return []
    if not axis.strip():
        resolve_lexicon(axis, None)  # refused in the words every command gives a blank --axis
    return list(pool_lexicons(axis))


@app.command("pool-filter")
def pool_filter(
    ctx: typer.Context,
    pool: str = typer.Option(..., "--pool", help="Candidate pool: one response per line (UTF-8)."),
    output: str = typer.Option(
        ...,
        "-o",
        "--output",
        help="Filtered pool to write, one response per line. An existing file is replaced only when it is a filtered "
        "pool of --pool (each of its lines a candidate of the pool); never the pool itself.",
    ),
    drop: str = typer.Option(
        "offensive,negative,group_words", "--drop", help="Comma-separated reasons: offensive, negative, group_words."
    ),
    axis: str | None = typer.Option(
        None,
        "--axis",
        help=f"Axis for group_words: {AUDIT_AXIS_NAMES} or a lexicon file. Axes: {WORD_AXES}.",
    ),
    offense_threshold: float = score_option("offense_threshold", "--offense-threshold", ranged=True),
    negative_threshold: float = typer.Option(
        -0.8, "--negative-threshold", help="Strongly negative when VADER's compound score is below this."
    ),
    offense: str = score_option("offense", "--offense"),
) -> None:
    """Remove biased candidates (offensive, strongly negative, mentioning group words) from a retrieval pool."""
    import fairtalk
    from fairtalk.debias import filter_pool, is_filtered_pool, read_pool_lines, write_pool
    from fairtalk.report import check_output_name

    check_options(ctx, "offense_threshold", "offense")  # in audit's words, before the pool is read
    reasons = [reason.strip() for reason in drop.split(",") if reason.strip()]
    if not reasons:
        raise fairtalk.SpecError(_MSG_POOL_REASONS, choices=("group_words", "negative", "offensive"))
    if ("group_words" in reasons) != (axis is not None):  # the words need an axis; an axis nothing uses is dropped
        raise fairtalk.SpecError(_MSG_POOL_AXIS if axis is None else _MSG_POOL_AXIS_UNUSED)
    check_output_name(output, option="-o", kind="file")  # before any work: '-', '~'
    lexicons = _pool_lexicons(axis)
    inputs = {"--pool": pool, **lexicon_inputs(lexicons, "--axis")}
    read = read_pool_lines(pool)
    candidates = read.candidates
    if not candidates:
        raise fairtalk.InputError(_MSG_POOL_EMPTY, path=pool)
    # before the filtering: an input, a device, a file that is not a filtered pool of this one (the user's)
    check_output_file(output, what="filtered pool", ours=lambda path: is_filtered_pool(path, candidates), inputs=inputs)
    result = filter_pool(
        candidates,
        drop=reasons,
        swapper=lexicons or None,
        offense_threshold=offense_threshold,
        negative_threshold=negative_threshold,
        offense_scorer=offense,
    )
    if not result.kept:  # an empty pool is no pool: `respond --model builtin:retrieval?pool=` would refuse it
        dropped = ", ".join(f"{reason} {n:,}" for reason, n in result.dropped_by.items() if n)
        raise fairtalk.InputError(_MSG_POOL_ALL_DROPPED.format(reasons=dropped), path=pool)
    write_pool(result.kept, output, input_path=pool)
    _print_pool_filter(result, read.n_blank)
    info(f"wrote {output}", keep=[output])


def _print_pool_filter(result: Any, n_blank: int) -> None:
    """The counts of a pool filtering: blank lines skipped, the pool before, each reason's drops, the pool after."""
    from rich.table import Table

    table = Table(title="fairtalk pool-filter", show_header=False, title_justify="left")
    table.add_column(style="bold")
    table.add_column(justify="right")
    if n_blank:
        table.add_row("lines read", f"{result.n_before + n_blank:,}")
        table.add_row("  blank lines skipped", f"{n_blank:,}")
    table.add_row("pool before", f"{result.n_before:,}")
    for reason, n in result.dropped_by.items():
        table.add_row(f"  dropped: {reason}", f"{n:,}")
    table.add_row("pool after", f"{result.n_after:,}")
    console.print(table, markup=False, highlight=False)
