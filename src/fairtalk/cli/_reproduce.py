"""`fairtalk reproduce debias` (paper 001's Table 7) and `fairtalk reproduce planted` (a bias of known size, recovered)."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import NoReturn

import typer

from fairtalk.cli._app import app, check_two_groups, console, interrupted, say, when_interrupted
from fairtalk.cli._axes import AXES, AXIS_NAMES
from fairtalk.cli._choices import Engine
from fairtalk.cli._respond import ENGINE, RAY_ACTORS, RAY_ADDRESS, engine_option
from fairtalk.cli._schema import check_options, score_option

reproduce_app = typer.Typer(
    name="reproduce",
    help="Reproduce the papers' experiments end to end.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_show_locals=False,
)
app.add_typer(reproduce_app, name="reproduce")

_MSG_KEPT = (
    "what was finished (the checkpoints trained to the end, the answers stored) is kept in {cache}: re-run the same "
    "command to reuse it and do the rest"
)
_MSG_NOTHING_KEPT = "nothing was kept yet: re-run the same command to start again"


def _keeps_any(folder: Path) -> bool:
    """Whether ``folder`` holds a file of fairtalk's work: a checkpoint's, a run store, a corpus (not a lock, not staging)."""
    for _, dirs, files in os.walk(folder):  # hidden entries are locks, staging and temporary files: none is kept
        dirs[:] = [name for name in dirs if not name.startswith(".")]
        if any(not name.startswith(".") for name in files):
            return True
    return False


def _interrupted(output: str, cache: str | None) -> NoReturn:
    """Ctrl-C during a reproduction: what its cache keeps (a rerun reuses finished checkpoints and stored answers), exit 130."""
    folder = Path(cache) if cache else Path(output) / "cache"
    kept = _keeps_any(folder)
    interrupted(note=_MSG_KEPT.format(cache=folder) if kept else _MSG_NOTHING_KEPT, keep=[str(folder)] if kept else [])


@reproduce_app.command("debias")
def debias(
    ctx: typer.Context,
    quick: bool = typer.Option(
        False, "--quick", help="Small models on 25k dialogues for one epoch, 1000 pairs: minutes on 2 cores."
    ),
    axis: str = typer.Option(
        "gender", "--axis", help=f"Axis or lexicon file CDA, WER and the audit use: {AXIS_NAMES}. The axes: {AXES}."
    ),
    seed: int = typer.Option(0, "--seed", min=0, help="Seed of training, the pair sample, generation and the bootstrap."),
    cache: str | None = typer.Option(
        None, "--cache", help="Checkpoints and run store (default OUTPUT/cache); a finished checkpoint there is reused."
    ),
    output: str = typer.Option(
        "fairtalk-debias", "-o", "--output", help="Folder for table7.md/.csv, results.json and one report folder per model."
    ),
    n_pairs: int | None = typer.Option(
        None,
        "--pairs",
        help="Pairs to audit (default: 1000 with --quick, else every evaluation pair). "
        "The evaluation pairs are chitchat's held-out split, or all of --eval-corpus.",
    ),
    corpus: str = typer.Option(
        "builtin:chitchat",
        "--corpus",
        help="Training dialogues: their train split when the audit reads them too (then from their held-out split).",
    ),
    eval_corpus: str | None = typer.Option(
        None,
        "--eval-corpus",
        help="Contexts to audit (default: --corpus, its held-out 10% of dialogues, which no model trains on).",
    ),
    n_resamples: int = score_option("n_resamples", "--resamples", ranged=True),
    engine: Engine | None = ENGINE,
    ray_address: str | None = RAY_ADDRESS,
    ray_actors: int | None = RAY_ACTORS,
) -> None:
    """Train (or reuse) baseline, CDA and WER Seq2Seq models and audit them on the same held-out pairs."""
    import fairtalk
    from fairtalk.cli._output import progress_bars, show_log
    from fairtalk.report import comparison_rich_table

    started = time.perf_counter()
    check_options(ctx, "n_resamples", "n_pairs")  # before any training, in audit's words, naming --resamples and --pairs
    check_two_groups(axis)  # its training debiases one pair of groups
    on_ray = engine_option(engine, ray_address, ray_actors)  # checked before any training
    show_log("fairtalk.training", "fairtalk.experiments._reproduce")  # the stages and epochs, unless -q
    try:
        with progress_bars() as progress:
            comparison = fairtalk.reproduce_debias(
                out_dir=output,
                quick=quick,
                axis=axis,
                seed=seed,
                cache_dir=cache,
                n_pairs=n_pairs,
                corpus=corpus,
                eval_corpus=eval_corpus,
                n_resamples=n_resamples,
                progress=progress,
                engine=on_ray,
            )
    except KeyboardInterrupt:
        _interrupted(output, cache)
    when_interrupted(f"the results were written in {output}", keep=[output])
    console.print(comparison_rich_table(comparison))
    for model in comparison.models.values():
        say(
            f"{model.name}: {model.n_different}/{comparison.n_pairs} pairs answered differently, "
            f"{model.n_distinct} distinct response{'' if model.n_distinct == 1 else 's'}"
        )
    trained = ", ".join(name for name, model in comparison.models.items() if model.trained) or "none (all cached)"
    n_generated = sum(model.run.n_generated for model in comparison.models.values())
    n_cached = sum(model.run.n_cached for model in comparison.models.values())
    say(
        f"trained: {trained} · responses: {n_generated} generated, {n_cached} from the store · wrote {comparison.files['table_md']}, {comparison.files['table_csv']}, "
        f"{comparison.files['results']} and a report per model · {(time.perf_counter() - started) / 60:.1f} min",
        keep=comparison.files.values(),
    )


_MSG_RATES = "--rates must be comma-separated numbers in [0, 100] (points), not {given!r}"
_MSG_CORPUS_RATE = "--corpus-rate must be in [0, 100] (points), not {given}"


def _rates(given: str) -> tuple[float, ...]:
    """``0,1,2,5,10`` (points) -> fractions; SpecError on anything else."""
    import fairtalk

    try:
        rates = tuple(float(part) / 100 for part in given.split(","))
    except ValueError:
        raise fairtalk.SpecError(_MSG_RATES.format(given=given)) from None
    if not rates or any(not 0 <= r <= 1 for r in rates):
        raise fairtalk.SpecError(_MSG_RATES.format(given=given))
    return rates


@reproduce_app.command("planted")
def planted(
    ctx: typer.Context,
    quick: bool = typer.Option(
        False, "--quick", help="A small planted corpus and Seq2Seq models (one epoch): minutes on 2 cores."
    ),
    seed: int = typer.Option(0, "--seed", min=0, help="Seed of the planting, the pairs, training and the bootstrap."),
    rates: str = typer.Option("0,1,2,5,10", "--rates", help="Planted rates of the planted models, in points."),
    base_model: str = typer.Option("builtin:retrieval", "--base-model", help="The model the planted ones wrap (a model spec)."),
    corpus_rate: float | None = typer.Option(
        None, "--corpus-rate", help="Points of group-B replies replaced in the planted corpus (default 50)."
    ),
    train: bool = typer.Option(True, "--train/--no-train", help="Also train baseline, CDA and WER on a planted corpus."),
    retrieval: bool = typer.Option(
        True, "--retrieval/--no-retrieval", help="Train retrieval rankers on the planted corpus too, beside the Seq2Seq models."
    ),
    n_pairs: int | None = typer.Option(None, "--pairs", help="Held-out pairs to audit (default all)."),
    cache: str | None = typer.Option(
        None,
        "--cache",
        help="Folder of the planted corpus, checkpoints and run store (default OUTPUT/cache). A folder of its own, not "
        "OUTPUT itself.",
    ),
    output: str = typer.Option(
        "fairtalk-planted", "-o", "--output", help="Folder for planted.md/.csv, results.json, report.html."
    ),
    n_resamples: int = score_option("n_resamples", "--resamples", ranged=True),
) -> None:
    """Plant gaps of known size: check the audit recovers them, and that CDA and WER remove a planted corpus' gap.

    The planted corpus trains baseline, CDA and WER Seq2Seq models and, unless --no-retrieval, retrieval rankers.
    """
    import fairtalk
    from fairtalk.cli._output import progress_bars, show_log
    from fairtalk.pipeline import reproduce_planted

    started = time.perf_counter()
    check_options(ctx, "n_resamples", "n_pairs")  # before any training, in audit's words, naming --resamples and --pairs
    if corpus_rate is not None and not 0 <= corpus_rate <= 100:
        raise fairtalk.SpecError(_MSG_CORPUS_RATE.format(given=corpus_rate))
    show_log("fairtalk.training", "fairtalk.experiments._reproduce", "fairtalk.experiments._reproduce_planted")
    try:
        with progress_bars() as progress:
            result = reproduce_planted(
                out_dir=output,
                quick=quick,
                seed=seed,
                rates=_rates(rates),
                base_model=base_model,
                n_pairs=n_pairs,
                corpus_rate=None if corpus_rate is None else corpus_rate / 100,
                train=train,
                retrieval=retrieval,
                cache_dir=cache,
                n_resamples=n_resamples,
                progress=progress,
            )
    except KeyboardInterrupt:
        _interrupted(output, cache)
    when_interrupted(f"the results were written in {output}", keep=[output])
    for row in result.planted:
        lo, hi = row.ci
        ci = "–" if lo is None or hi is None else f"[{100 * lo:.2f}, {100 * hi:.2f}] pp"
        gap = "–" if row.gap is None else f"{100 * row.gap:.2f} pp"
        say(
            f"p = {100 * row.rate:g} pp, {row.key}: true {100 * row.true_gap:.2f} pp, recovered {gap} {ci}, "
            f"{'covered' if row.covered else 'NOT covered'}, {row.verdict.value}"
        )
    for d in result.debiased:
        change = (
            ""
            if d.change is None
            else f", change {100 * d.change:+.2f} pp ({d.change_verdict.value if d.change_verdict else '–'})"
        )
        say(f"{d.label}, {d.key}: gap {100 * d.gap:.2f} pp ({d.verdict.value}){change}")
    say(
        f"wrote {result.files['md']}, {result.files['csv']}, {result.files['json']}, {result.files['html']} · "
        f"{(time.perf_counter() - started) / 60:.1f} min",
        keep=result.files.values(),
    )
