"""`fairtalk similarity`: do a model's answers to counterfactual pairs differ more than its answers to one context asked twice."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from fairtalk.cli._app import (
    IN_MEMORY,
    app,
    check_output_file,
    console,
    info,
    interrupted,
    print_json,
    say,
    when_interrupted,
)
from fairtalk.cli._choices import SimilarityMethod, comma_list
from fairtalk.cli._respond import (
    BATCH_SIZE,
    MAX_CONSECUTIVE_FAILURES,
    MAX_NEW_TOKENS,
    MODEL_ARG,
    MODEL_VERSION,
    REPETITION_PENALTY,
    SAMPLE,
    STOP,
    TEMPERATURE,
    TOP_K,
    TOP_P,
    check_pairs_file,
    decoding_settings,
    model_options,
)
from fairtalk.cli._schema import check_options, run_option, score_option
from fairtalk.cli._test_options import SYSTEM_PROMPT

if TYPE_CHECKING:
    from rich.console import RenderableType

    from fairtalk.results import SimilarityResult


@app.command()
def similarity(
    ctx: typer.Context,
    pairs: str = typer.Option(..., "--pairs", help="Pairs JSONL (from `fairtalk pairs`)."),
    model: str | None = run_option("model", "--model"),
    model_arg: list[str] | None = MODEL_ARG,
    model_version: str | None = MODEL_VERSION,
    methods: str = typer.Option(
        "exact,rouge_l,answered,length_ratio",
        "--methods",
        help="Similarity methods, comma-separated: exact, rouge_l, cosine, answered, length_ratio. cosine compares MiniLM "
        "embeddings; answered counts pairs only one side answered.",
    ),
    seed: int = typer.Option(0, "--seed", min=0, help="Seed of the counterfactual answers (the baseline's are derived from it)."),
    sample: bool = SAMPLE,
    temperature: float = TEMPERATURE,
    top_k: int | None = TOP_K,
    top_p: float | None = TOP_P,
    max_new_tokens: int = MAX_NEW_TOKENS,
    stop: list[str] | None = STOP,
    repetition_penalty: float | None = REPETITION_PENALTY,
    batch_size: int = BATCH_SIZE,
    store: str | None = typer.Option(
        None,
        "--store",
        help="SQLite run store (stored answers are reused). A new file or a run store (never an input, a device or "
        "another file).",
    ),
    alpha: float = score_option("alpha", "--alpha", ranged=True, note="Here: of the tests over the methods, Holm-corrected."),
    system_prompt: str | None = SYSTEM_PROMPT,
    max_consecutive_failures: int = MAX_CONSECUTIVE_FAILURES,
    output: str | None = typer.Option(
        None,
        "-o",
        "--output",
        help="Write the result as JSON to this file. An existing file is replaced only when it is a similarity result "
        "fairtalk wrote; never an input.",
    ),
    json_out: bool = typer.Option(False, "--json", help="Write the result to stdout as JSON; messages go to stderr."),
) -> None:
    """Test whether answers to counterfactual pairs diverge more than a no-effect baseline (one context asked twice).

    Under greedy decoding (the default) a model found deterministic on a few contexts asked again has a baseline of zero: the test is one against zero change. Under --sample, a model or server whose re-asks are identical far beyond chance (it ignores sampling or the seed) gets a warning. A method differs only when its test and its 95% interval agree.
    """
    import fairtalk
    from fairtalk.cli._output import progress_bars
    from fairtalk.report import similarity_basis, similarity_row

    check_pairs_file(pairs)
    check_options(ctx, "alpha", "batch_size", "max_consecutive_failures")  # before any answer, as audit checks them
    chosen = comma_list(methods, "--methods", SimilarityMethod, what="similarity method")
    _check_outputs(pairs, output, store)
    settings = decoding_settings(
        sample=sample,
        max_new_tokens=max_new_tokens,
        temperature=temperature,
        top_k=top_k,
        top_p=top_p,
        stop=stop,
        repetition_penalty=repetition_penalty,
    )
    try:
        with progress_bars() as progress:
            result = fairtalk.similarity_test(
                pairs,
                model=model,
                methods=chosen,
                seed=seed,
                settings=settings,
                store=store,
                alpha=alpha,
                batch_size=batch_size,
                model_args=model_options(model_arg, system_prompt),
                model_version=model_version,
                progress=progress,
                max_consecutive_failures=max_consecutive_failures,
            )
        if output is not None:
            result.write(output)  # atomic: Ctrl-C meanwhile leaves the earlier file (or none)
    except KeyboardInterrupt:  # the answers so far are in the store (a rerun resumes), or were not kept without one
        interrupted(store)
    if output is not None:
        info(f"wrote {output}", keep=[output])  # on stderr under --json (json_mode), like every message
        when_interrupted(f"{output} was written", keep=[output])
    for warning in result.warnings:  # on stderr under --json, like every message
        say(f"warning: {warning}", style="bold yellow")
    if json_out:
        from fairtalk.results import versioned

        print_json(versioned(result.to_dict()))
        return
    console.print(_similarity_table(result, width=console.width))
    say(similarity_basis(result))
    for row in result.rows:
        if similarity_row(row)["disagree"]:  # test and interval disagree: the row says which
            say(f"{row.method}: {row.note}")
    say(f"model {result.model}")


#: The table's columns: header -> the key of :func:`fairtalk.report.similarity_row`'s cells.
_COLUMNS = {
    "method": "method",
    "counterfactual": "counterfactual",
    "baseline": "baseline",
    "difference": "difference",
    "95% CI": "ci95",
    "p adj.": "p_adjusted",
    "verdict": "verdict",
}


def _similarity_table(result: SimilarityResult, *, width: int) -> RenderableType:
    """The methods as a ``rich`` Table, or, where its rows do not fit ``width`` columns whole, one block per method.

    A narrow terminal (80 columns) would otherwise cut headers and verdicts (``counter…``, ``no differen…``).
    """
    from rich.console import Console, Group
    from rich.measure import Measurement
    from rich.table import Table
    from rich.text import Text

    from fairtalk.report import divergence_meaning, similarity_row

    title = f"{result.axis}: {result.n_pairs:,} pairs"
    meaning = divergence_meaning([row.method for row in result.rows])  # what each method's figures are
    table = Table(title=title, caption=meaning, caption_justify="left")
    for header in _COLUMNS:
        table.add_column(header, justify="left" if header in ("method", "verdict") else "right")
    rows = [(row, similarity_row(row)) for row in result.rows]
    for row, cells in rows:
        table.add_row(*(cells[key] for key in _COLUMNS.values()), style="bold" if row.detected() else None)
    wide = Console(width=1 << 16)  # measures the table with no cell wrapped or cut; prints nothing
    if Measurement.get(wide, wide.options, table).maximum <= width:
        return table
    parts = [Text(title, style="bold"), Text(meaning)]
    for row, cells in rows:
        style = "bold" if row.detected() else ""
        parts += [
            Text(f"  {cells['method']}", style=style),
            Text(f"    counterfactual {cells['counterfactual']}, baseline {cells['baseline']}"),
            Text(f"    difference {cells['difference']} (95% CI {cells['ci95']}), p adj. {cells['p_adjusted']}"),
            Text(f"    {cells['verdict']}", style=style),
        ]
    return Group(*parts)


def _is_similarity_result(path: object) -> bool:
    """Whether ``path`` is a result :meth:`SimilarityResult.write` wrote (it reads back as one)."""
    import fairtalk
    from fairtalk.results import SimilarityResult

    try:
        SimilarityResult.read_json(str(path))
    except fairtalk.FairtalkError:
        return False
    return True


def _check_outputs(pairs: str, output: str | None, store: str | None) -> None:
    """Before any answer: ``-o`` and ``--store`` are new files or fairtalk's of their kind, never an input or a device."""
    from fairtalk.store import is_run_store

    inputs = {"--pairs": pairs}  # a model's own file is no similarity result or store: refused as not fairtalk's
    if output is not None:
        check_output_file(output, what="similarity result", ours=_is_similarity_result, inputs={**inputs, "--store": store})
    if store is not None and store != IN_MEMORY:
        check_output_file(store, option="--store", what="run store", ours=is_run_store, hold=False, inputs=inputs)
