"""`fairtalk reproduce debias`: paper 001's Table 7 (baseline, CDA and WER Seq2Seq models on the same pairs)."""

from __future__ import annotations

import time

import typer

from fairtalk.cli._app import app, console
from fairtalk.cli._axes import AXES
from fairtalk.cli._choices import Engine
from fairtalk.cli.respond import ENGINE, RAY_ACTORS, RAY_ADDRESS, engine_option

reproduce_app = typer.Typer(
    name="reproduce",
    help="Reproduce the papers' experiments end to end.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_show_locals=False,
)
app.add_typer(reproduce_app, name="reproduce")

_MSG_PAIRS = "--pairs must be at least 1, not {given}"


@reproduce_app.command("debias")
def debias(
    quick: bool = typer.Option(
        False, "--quick", help="Small models on 25k dialogues for one epoch, 1000 pairs: minutes on 2 cores."
    ),
    axis: str = typer.Option(
        "gender", "--axis", help=f"The axis CDA and WER debias and the audit pairs: {AXES}, or a lexicon file."
    ),
    seed: int = typer.Option(0, "--seed", min=0, help="Seed of training, the pair sample, generation and the bootstrap."),
    cache: str | None = typer.Option(
        None, "--cache", help="Checkpoints and run store (default OUTPUT/cache); a finished checkpoint there is reused."
    ),
    output: str = typer.Option(
        "fairtalk-debias", "-o", "--output", help="Folder for table7.md/.csv, results.json and one report folder per model."
    ),
    n_pairs: int | None = typer.Option(
        None, "--pairs", help="Pairs to audit (default: 1000 with --quick, else every held-out pair)."
    ),
    corpus: str = typer.Option(
        "builtin:chitchat",
        "--corpus",
        help="Training dialogues (builtin:chitchat: its train split; the audit uses its held-out split).",
    ),
    eval_corpus: str | None = typer.Option(
        None, "--eval-corpus", help="Contexts to audit (default: --corpus; builtin:chitchat's held-out split)."
    ),
    resamples: int = typer.Option(2000, "--resamples", min=1, help="Bootstrap resamples."),
    engine: Engine | None = ENGINE,
    ray_address: str | None = RAY_ADDRESS,
    ray_actors: int | None = RAY_ACTORS,
) -> None:
    """Train (or reuse) baseline, CDA and WER Seq2Seq models and audit them on the same held-out pairs."""
    import fairtalk
    from fairtalk.cli._output import progress_bars, show_log
    from fairtalk.report import comparison_rich_table

    started = time.perf_counter()
    if n_pairs is not None and n_pairs < 1:
        raise fairtalk.SpecError(_MSG_PAIRS.format(given=n_pairs))
    on_ray = engine_option(engine, ray_address, ray_actors)  # checked before any training
    show_log("fairtalk.training", "fairtalk.pipeline._reproduce")  # the stages and epochs, unless -q
    with progress_bars() as progress:
        comparison = fairtalk.reproduce_debias(
            out_dir=output, quick=quick, axis=axis, seed=seed, cache_dir=cache, n_pairs=n_pairs, corpus=corpus,
            eval_corpus=eval_corpus, n_resamples=resamples, progress=progress, engine=on_ray,
        )  # fmt: skip
    console.print(comparison_rich_table(comparison))
    for model in comparison.models.values():
        console.print(f"{model.name}: {model.n_different}/{comparison.n_pairs} pairs answered differently, "
                      f"{model.n_distinct} distinct responses", highlight=False, markup=False)  # fmt: skip
    trained = ", ".join(name for name, model in comparison.models.items() if model.trained) or "none (all cached)"
    n_generated = sum(model.run.n_generated for model in comparison.models.values())
    n_cached = sum(model.run.n_cached for model in comparison.models.values())
    console.print(
        f"trained: {trained} · responses: {n_generated} generated, {n_cached} from the store · wrote {comparison.files['table_md']}, {comparison.files['table_csv']}, "
        f"{comparison.files['results']} and a report per model · {(time.perf_counter() - started) / 60:.1f} min",
        highlight=False,
        markup=False,
        soft_wrap=True,
    )
