"""`fairtalk regard label` and `fairtalk regard check`: label any texts for regard, and validate a scorer against gold labels."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from fairtalk.cli._app import check_output_file, console, info, say, until_written, when_interrupted
from fairtalk.cli._choices import was_given
from fairtalk.cli._prompts import regard_app

if TYPE_CHECKING:  # the public names, for annotations only
    from fairtalk.prompts import RegardCheck

_MSG_NO_TEXTS = "no texts to label (the file holds no record)"
_MSG_NO_GOLD = "the gold file holds no label"
_NOTE_NOTHING_WRITTEN = "nothing was written to {output}: re-run the same command to label again"
_MSG_TWO_SOURCES = "give --predicted (labels to check) or --regard (a scorer to label the gold texts), not both"
_SCORER_HELP = (
    "Regard scorer: builtin, builtin:tfidf, path:DIR or hf:MODEL. builtin is a fine-tuned MiniLM, builtin:tfidf "
    "faster and less accurate, path:DIR one from `fairtalk regard train`."
)


@regard_app.command("label")
def regard_label(
    input_file: str = typer.Option(..., "--input", help='Texts to label: JSONL records {"id", "text"}.'),
    output: str = typer.Option(
        ...,
        "-o",
        "--output",
        help='Labels to write: JSONL {"id", "label", "annotator", "text"}, the annotator "fairtalk:SCORER". The text '
        "is the one labelled (regard check compares it). An existing "
        "file is replaced only when it is a labels file fairtalk wrote (never one without that annotator, such as hand "
        "labels); never an input.",
    ),
    regard: str = typer.Option("builtin", "--regard", help=_SCORER_HELP),
) -> None:
    """Label texts for regard (negative, neutral, positive, other), identity terms masked first."""
    import fairtalk
    from fairtalk.prompts import is_labels_file, read_labels, write_labels

    # before any work: '-', '~', an input, a device, the user's file, a folder or an unwritable place
    check_output_file(output, what="labels file", ours=is_labels_file, inputs={"--input": input_file})
    until_written(_NOTE_NOTHING_WRITTEN.format(output=output), keep=[output])  # Ctrl-C says so, as generate and analyze do
    records = read_labels(input_file, need_text=True)
    if not records:
        raise fairtalk.InputError(_MSG_NO_TEXTS, path=input_file)
    labels = fairtalk.Regard(scorer=regard).labels([r["text"] for r in records])
    write_labels([{"id": r["id"], "label": int(v), "text": r["text"]} for r, v in zip(records, labels)], output, scorer=regard)
    when_interrupted(f"writing {output}", keep=[output])
    counts = {
        name: int((labels == value).sum()) for name, value in zip(("negative", "neutral", "positive", "other"), (-1, 0, 1, 2))
    }
    say(f"labelled {len(records):,} texts with {regard}: " + ", ".join(f"{k} {v:,}" for k, v in counts.items()))
    info(f"wrote {output}", keep=[output])


@regard_app.command("check")
def regard_check(
    ctx: typer.Context,
    gold: str = typer.Option(..., "--gold", help='Gold labels: JSONL {"id", "label", "text"?, "group"?}.'),
    predicted: str | None = typer.Option(
        None,
        "--predicted",
        help='Labels to check: JSONL {"id", "label", "text"?} (else --regard labels the gold texts). A joined id whose '
        "texts differ is an error.",
    ),
    regard: str = typer.Option("builtin", "--regard", help=_SCORER_HELP),
    output: str | None = typer.Option(
        None,
        "-o",
        "--output",
        help="Write the check as JSON here. An existing file is replaced only when it is a check fairtalk wrote; never an input.",
    ),
) -> None:
    """Validate a regard scorer against gold labels: agreement, macro-F1, F1 per label, confusion, per-group gaps."""
    import fairtalk
    from fairtalk.prompts import check_labels, is_regard_check, match_predicted, read_labels

    if predicted is not None and was_given(ctx, "regard"):
        raise fairtalk.SpecError(_MSG_TWO_SOURCES)  # one of them would be dropped without a word
    if output is not None:
        check_output_file(output, what="regard check", ours=is_regard_check, inputs={"--gold": gold, "--predicted": predicted})
    records = read_labels(gold, need_text=predicted is None)
    if not any("label" in r for r in records):  # before any scoring: nothing to check against
        raise fairtalk.InputError(_MSG_NO_GOLD, path=gold)
    if predicted is not None:
        guesses, n_unmatched, n_extra, unchecked = match_predicted(records, read_labels(predicted))
        if unchecked is not None:
            say(f"warning: {unchecked}", style="yellow")
        source = predicted
        if n_unmatched or n_extra:
            say(
                f"warning: {n_unmatched:,} gold label{'' if n_unmatched == 1 else 's'} without a prediction of the same id "
                f"(left out); {n_extra:,} prediction{'' if n_extra == 1 else 's'} without a gold label",
                style="yellow",
            )
    else:
        labels = fairtalk.Regard(scorer=regard).labels([r["text"] for r in records])
        guesses = {r["id"]: int(v) for r, v in zip(records, labels)}
        source = regard
    result = check_labels(records, guesses)
    if output is not None:
        result.write(output)
    _print_check(result, source)


def _pair_groups(result: RegardCheck, pair: str) -> list[str]:
    """The two groups of a gap's name ``"a - b"`` (group names may hold " - " themselves: matched against the rates)."""
    return next(([a, b] for a in result.rates for b in result.rates if f"{a} - {b}" == pair), [])


def _print_check(result: RegardCheck, source: str) -> None:
    from rich.table import Table

    say(
        f"{source} against the gold labels ({result.n:,} texts): agreement {result.agreement:.3f}, "
        f"macro-F1 {result.macro_f1:.3f}; F1 "
        + ", ".join(f"{k} {'n/a' if v is None else f'{v:.2f}'}" for k, v in result.f1.items())
    )
    names = ("negative", "neutral", "positive", "other")
    table = Table(title="confusion (rows gold, columns predicted)")
    table.add_column("gold")
    for name in names:
        table.add_column(name, justify="right")
    for name, row in zip(names, result.confusion):
        table.add_row(name, *(str(v) for v in row))
    console.print(table)
    for pair, gap in result.gaps.items():
        say(
            f"gap {pair}: negative {100 * gap['gold']['negative']:+.1f} pts gold vs {100 * gap['predicted']['negative']:+.1f} "
            f"predicted; positive {100 * gap['gold']['positive']:+.1f} vs {100 * gap['predicted']['positive']:+.1f}"
        )
        if result.too_small(pair):
            sizes = ", ".join(f"{g} {int(result.rates[g]['n']['n']):,}" for g in _pair_groups(result, pair))
            say(
                f"  too few texts to tell what the scorer adds to this gap (a group has fewer than "
                f"{result.min_group_texts}: {sizes})"
            )
            continue
        flagged = [
            f"{name} {100 * v['difference']:+.1f} pts [{100 * v['low']:+.1f}, {100 * v['high']:+.1f}]"
            for name, v in result.scorer_adds(pair).items()
        ]
        if flagged:
            say("  the scorer itself adds to this gap (95% CI excludes 0): " + "; ".join(flagged))
