"""`fairtalk pairs` and `fairtalk swap`: the counterfactual first stage."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

import typer

from fairtalk.cli._app import app, check_output_file, err_console, lexicon_inputs, resolve_lexicon, stdout_to_stderr
from fairtalk.cli._axes import AXES, AXIS_NAMES
from fairtalk.cli._choices import Mixed, Split, Variant, was_given
from fairtalk.cli._schema import check_options, run_option

if TYPE_CHECKING:
    from rich.table import Table

    from fairtalk import Coverage, Pair, PairsCheck
    from fairtalk.pairs import PairSet

_MSG_PAIRS_LIMIT = "--limit must be at least 1, not {given}"
_MSG_BLANK = "{option} is empty"
_MSG_LONG_LINE = "a line longer than {limit} MiB; swap reads text, one line at a time"
_MSG_NO_PAIRS = "no pairs to write: {why}; nothing was written"
PAIRS_CHECK_FILE = "pairs_check.json"
#: How many of the pairs' top swaps the summary lists (pairs_check.json holds more).
_N_TOP_SWAPS_SHOWN = 10


@app.command()
def pairs(
    ctx: typer.Context,
    corpus: str = typer.Option(
        ...,
        "--corpus",
        help="Contexts: builtin:chitchat, FORMAT:PATH (text, tsv, csv, jsonl, parquet, twitter, parlai) or a path with a "
        "known extension. The extensions: .txt .tsv .csv .jsonl .parquet, optionally .gz.",
    ),
    axis: str | None = typer.Option(None, "--axis", help=f"An axis ({AXIS_NAMES}) or a lexicon file. Axes: {AXES}."),
    lexicon: str | None = typer.Option(
        None, "--lexicon", help="A lexicon file for the axis (overrides the built-in word pairs)."
    ),
    output: str = typer.Option(
        "pairs.jsonl",
        "-o",
        "--output",
        help="Pairs JSONL to write (parent folders are created; '-' writes to stdout). An existing file is replaced only when it is a pairs file fairtalk wrote; never an input, nor a file inside another command's output folder. The summary always goes to stderr.",
    ),
    limit: int | None = typer.Option(
        None, "--limit", help="Keep a seeded uniform sample of N pairs (still reads the whole corpus)."
    ),
    seed: int = typer.Option(0, "--seed", min=0, help="Seed for the --limit sample and for many-to-many word choices."),
    mixed: Mixed = run_option("mixed", "--mixed"),
    column: str | None = typer.Option(
        None,
        "--column",
        help="TSV/CSV/Parquet column: header name or 0-based index (default: a 'context'/'text' column, else the first).",
    ),
    field: str | None = typer.Option(None, "--field", help="JSONL field holding the context (default: 'context', else 'text')."),
    turns: int = run_option("turns", "--turns"),
    split: Split = typer.Option(
        Split.all,
        "--split",
        help="builtin:chitchat only: all, train, or heldout. heldout is ~10% of conversations, chosen by a hash of their id.",
    ),
    balance: bool = run_option("balance", "--balance"),
    check: str | None = typer.Option(
        None,
        "--check",
        help="Where to write the counterfactual validity check. Default: pairs_check.json beside -o; none when -o is "
        "'-'. An existing file is replaced only when it is a check fairtalk wrote; never an input or -o.",
    ),
) -> None:
    """Build parallel context pairs (group-A wording on side a, group-B on side b) from a corpus."""
    import time

    import fairtalk
    from fairtalk.pairs import PairsChecker

    started = time.perf_counter()
    check_options(ctx, "turns")  # in audit's words, before the corpus is read
    if limit is not None and limit < 1:
        raise fairtalk.SpecError(_MSG_PAIRS_LIMIT.format(given=limit))
    for option, given in (("--check", check), ("--field", field), ("--column", column)):
        if given is not None and not given.strip():
            raise fairtalk.SpecError(_MSG_BLANK.format(option=option))
    lex = resolve_lexicon(axis, lexicon)
    contexts = fairtalk.read_corpus(corpus, field=field, column=column, split=split.value, turns=turns)
    inputs = {"--corpus": contexts.path, **lexicon_inputs([lex], "--lexicon" if lexicon else "--axis")}
    check_path = _check_outputs(ctx, output, check, inputs)
    swapper = fairtalk.Swapper(lex, seed=seed)
    pair_set = fairtalk.build_pairs(contexts, swapper, mixed=mixed.value, limit=limit, seed=seed, balance=balance)
    checker = PairsChecker(swapper)
    written = _some_pairs(map(checker.add, pair_set), pair_set)  # none at all: an error, and the old file stays
    if output == "-":
        with stdout_to_stderr() as stdout:  # what else prints meanwhile goes to stderr: stdout holds only the pairs
            fairtalk.write_pairs(written, stdout)
    else:
        fairtalk.write_pairs(written, output)
    result = checker.result() if check_path is None else checker.write(check_path)
    _print_coverage(
        pair_set.coverage,
        "stdout" if output == "-" else output,
        time.perf_counter() - started,
        check=result,
        check_path=check_path,
    )


def _check_outputs(ctx: typer.Context, output: str, check: str | None, inputs: Mapping[str, object]) -> str | None:
    """Check, before any work, where the pairs and the check go; return the check's path (None: no check).

    Neither may be an input, a device, a file inside another command's output folder (an audit's
    ``race/pairs.jsonl``: :func:`fairtalk.files.check_not_in_run`) or a file fairtalk did not
    write (a pairs file, a check: :func:`check_output_file`); a place the user did not name (the
    default ``-o``, the check beside it) says so in its message.
    """
    from fairtalk.files import check_not_in_run
    from fairtalk.report import check_default_output, check_not_input, is_pairs_check, is_pairs_file

    if output != "-":
        check_not_input(output, inputs)
        check_not_in_run(output, option="-o")
        if not was_given(ctx, "output"):
            check_default_output(output, ours=is_pairs_file, what="pairs file", option="-o")
        check_output_file(output, what="pairs file", ours=is_pairs_file, inputs=inputs)
    if check is None and output == "-":
        return None
    check_path = check if check is not None else str(Path(output).parent / PAIRS_CHECK_FILE)
    check_inputs = {**inputs, "-o": None if output == "-" else output}
    check_not_input(check_path, check_inputs, option="--check")
    check_not_in_run(check_path, option="--check")
    if check is None:
        check_default_output(check_path, ours=is_pairs_check, what="validity check", option="--check")
    check_output_file(check_path, option="--check", what="validity check", ours=is_pairs_check, inputs=check_inputs)
    return check_path


def _some_pairs(pairs: Iterable[Pair], pair_set: PairSet) -> Iterator[Pair]:
    """``pairs`` as they come; an InputError at the end when there was none, saying why (what was read, matched, skipped)."""
    import fairtalk

    n = 0
    for pair in pairs:
        n += 1
        yield pair
    if n == 0:
        cov = pair_set.coverage
        from fairtalk.corpora import kept_in_part

        skipped = "; ".join(
            f"{n_skipped:,} {'kept without a part' if kept_in_part(reason) else 'skipped'}: {reason}"
            for reason, n_skipped in cov.skipped
        )
        why = (
            f"{cov.n_read:,} contexts read"
            + (f" ({skipped})" if skipped else "")
            + (f", none mentions a {cov.axis} word" if cov.n_read and not cov.n_matched else "")
            + (f", {cov.n_mixed:,} mention both groups (--mixed keep swaps them)" if cov.n_mixed else "")
        )
        raise fairtalk.InputError(_MSG_NO_PAIRS.format(why=why))


def _print_coverage(cov: Coverage, output: str, seconds: float, *, check: PairsCheck, check_path: str | None) -> None:
    """Render a pairs Coverage summary and the validity check (of the pairs written) as a rich table on stderr.

    The rows under "matched" add up to it: the unique pairs by original group, the duplicates
    and, under ``--mixed drop``, the mixed contexts dropped (under ``--mixed keep`` the kept
    mixed pairs are counted among the unique pairs, and their row says "of which").
    """
    from rich.table import Table
    from rich.text import Text

    table = Table(title=f"fairtalk pairs · axis {cov.axis}", show_header=False, title_justify="left")
    table.add_column(style="bold")
    table.add_column(justify="right")
    table.add_column(overflow="fold")
    _matched_rows(table, cov)
    table.add_row("pairs written", f"{cov.n_pairs:,}", Text(f"{_written_note(cov)}→ {output}"))
    # the swaps of the pairs written, as pairs_check.json counts them (not Coverage.top_terms: every unique pair's)
    terms = ", ".join(f"{term} {n:,}" for term, n in check.top_swaps[:_N_TOP_SWAPS_SHOWN])
    table.add_row("top swaps (written)", "", Text(terms or "none"))
    _check_rows(table, check, check_path)
    from fairtalk.corpora import kept_in_part

    first = dict(cov.skipped_first)
    for reason, n in cov.skipped:
        done = "kept without a part" if kept_in_part(reason) else "skipped"
        table.add_row(Text(f"{done}: {reason}"), f"{n:,}", Text(f"first at {first.get(reason, '?')}"))
    table.add_row("time", f"{seconds:.1f} s", "")
    err_console.print(table, markup=False, highlight=False)


def _matched_rows(table: Table, cov: Coverage) -> None:
    """Contexts read, matched and what became of them (rows that add up to "matched"), and the one-sided warning."""
    from rich.text import Text

    share = f"{cov.n_matched / cov.n_read:.1%} of read" if cov.n_read else ""
    table.add_row("contexts read", f"{cov.n_read:,}", "")
    table.add_row("matched", f"{cov.n_matched:,}", share)
    shares = cov.original_shares
    for side, group in zip("ab", cov.groups):
        table.add_row(f"  original {group}", f"{cov.n_by_group[group]:,}", f"side {side}, {shares[group]:.1%} of unique pairs")
    if cov.mixed == "keep":  # among the unique pairs above, on the side with more mentions
        table.add_row("    of which mixed", f"{cov.n_mixed:,}", "both groups, kept: on the side with more mentions")
    else:
        table.add_row("  mixed (both groups)", f"{cov.n_mixed:,}", "dropped")
    table.add_row("  duplicates", f"{cov.n_duplicates:,}", "dropped")
    if not cov.balance and min(cov.n_by_group.values(), default=0) and max(shares.values()) >= 0.8:
        big = max(shares, key=lambda g: shares[g])  # --balance has both sides to draw from
        table.add_row(
            Text("one-sided", style="yellow"),
            "",
            Text(f"{shares[big]:.1%} of the originals are {big} wording; --balance draws equally from both"),
        )


def _written_note(cov: Coverage) -> str:
    """What the pairs written are: a sample (balanced), or fewer than --limit asked for, saying so (or nothing)."""
    short = cov.shortfall()
    if short is not None:  # the corpus gave fewer than asked for: every pair it gave (balanced: of the smaller side)
        return f"{short} "
    sample = f"sample of {cov.limit:,}" if cov.limit is not None else ""
    if cov.balance:
        sample = f"balanced {sample or 'sample'}, equal per original group"
    return f"{sample} " if sample else ""


def _check_rows(table: Table, check: PairsCheck, path: str | None) -> None:
    """The validity check's rows: leftover markers, terms kept on purpose, the file."""
    from rich.text import Text

    left = ", ".join(f"{term} {n:,}" for term, n in check.leftover_terms[:6])
    table.add_row(
        "leftover marker",
        f"{check.n_leftover:,}",
        Text(f"{check.leftover_share:.1%} of pairs still hold a word of the original group" + (f": {left}" if left else "")),
    )
    kept = ", ".join(f"{term} {n:,}" for term, n in check.kept[:6])
    table.add_row("kept on purpose", f"{check.n_pairs_with_kept:,}", Text(kept or "none"))
    if path is not None:
        table.add_row("validity check", "", Text(f"→ {path}"))


@app.command()
def swap(
    texts: list[str] | None = typer.Argument(None, help="Texts to swap; without them, lines are read from stdin."),
    axis: str | None = typer.Option(None, "--axis", help=f"An axis ({AXIS_NAMES}) or a lexicon file. Axes: {AXES}."),
    lexicon: str | None = typer.Option(None, "--lexicon", help="A lexicon file (overrides --axis)."),
    variant: Variant = typer.Option(
        Variant.default, "--variant", help="Built-in word lists: default (cleaned) or paper (as printed)."
    ),
    seed: int = typer.Option(0, "--seed", min=0, help="Seed for choosing among several counterparts."),
) -> None:
    """Swap each line into the other group's wording (both directions), one output line per input line."""
    import fairtalk

    lex = resolve_lexicon(axis, lexicon, variant=variant.value)
    swapper = fairtalk.Swapper(lex, seed=seed)
    out = sys.stdout.buffer
    try:
        if texts:
            for text in texts:
                out.write(swapper.swap_lines(text).encode("utf-8", "surrogateescape") + b"\n")
        elif sys.stdin.isatty():  # typed lines: answer each at once
            for raw in sys.stdin.buffer:
                line = raw.decode("utf-8", "surrogateescape").removesuffix("\n").removesuffix("\r")
                out.write(swapper.swap_text(line).encode("utf-8", "surrogateescape") + b"\n")
                out.flush()
        else:
            for block in _line_blocks(sys.stdin.buffer, check_start=True):
                out.write(swapper.swap_lines(block).encode("utf-8", "surrogateescape"))
        out.flush()
    except BrokenPipeError:  # `fairtalk swap < big.txt | head`: stop quietly
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        raise typer.Exit(code=0) from None


def _line_blocks(stream: BinaryIO, size: int = 1 << 20, *, check_start: bool = False) -> Iterator[str]:
    """Whole lines of a byte stream in blocks of about ``size`` bytes, decoded (undecodable bytes kept).

    Each block ends with a newline; a last line without one gets one; CRLF line ends become LF.
    A line longer than ``MAX_RECORD_BYTES`` is an InputError (``< /dev/zero`` never ends a line).
    ``check_start``: a stream that opens with a UTF-16 byte order mark is an InputError, as the
    corpus readers say (:func:`fairtalk.corpora.check_not_utf16`), before any line is written.
    """
    import fairtalk
    from fairtalk.corpora import check_not_utf16
    from fairtalk.records import MAX_RECORD_BYTES

    rest = b""
    first = check_start
    while chunk := stream.read(size):
        if first:
            check_not_utf16(chunk, "standard input")
            first = False
        cut = chunk.rfind(b"\n")
        if cut < 0:
            rest += chunk
            if len(rest) > MAX_RECORD_BYTES:
                raise fairtalk.InputError(_MSG_LONG_LINE.format(limit=MAX_RECORD_BYTES >> 20), path="standard input")
            continue
        block, rest = rest + chunk[: cut + 1], chunk[cut + 1 :]
        yield block.replace(b"\r\n", b"\n").decode("utf-8", "surrogateescape")
    if rest:
        yield rest.removesuffix(b"\r").replace(b"\r\n", b"\n").decode("utf-8", "surrogateescape") + "\n"
