"""`fairtalk respond`: generation alone (pairs -> responses JSONL), and the decoding options it shares with `audit`."""

from __future__ import annotations

import os
from typing import IO, TYPE_CHECKING

import typer

from fairtalk.cli._app import (
    IN_MEMORY,
    app,
    check_output_file,
    info,
    interrupted,
    say,
    stdin_as_file,
    stdout_to_stderr,
)
from fairtalk.cli._choices import Engine, plain, was_given
from fairtalk.cli._schema import check_options, run_option
from fairtalk.cli._test_options import SYSTEM_PROMPT, text_or_file
from fairtalk.errors import ResponderError, SpecError
from fairtalk.options import MODEL_SPEC_HELP

if TYPE_CHECKING:
    from fairtalk import DecodingSettings, Responder
    from fairtalk.models import RayEngine
    from fairtalk.pipeline import Generation
    from fairtalk.results import GenerationSummary

_MSG_PAIRS_A_COUNT = (
    "{value}: no such pairs file; --pairs here is a pairs FILE (write one with `fairtalk pairs`); audit's --pairs is a count"
)
_MSG_RAY_ONLY = "--ray-address and --ray-actors are options of --engine ray"
_MSG_NO_PAIRS = "no pairs to answer (the file holds no record)"
_MSG_NONE_LEFT = (
    "no complete pair left of {n_pairs:,}: the model failed on {n_errors:,} pair side(s) ({counts}); first error: "
    "{first}; nothing was written to {output}"
)
#: The decoding settings that sampling alone uses, and ``do_sample``, by their flags (for :meth:`DecodingSettings.check_sampling`).
SAMPLING_FLAGS = {"do_sample": "--sample", "temperature": "--temperature", "top_k": "--top-k", "top_p": "--top-p"}

# The model and decoding options of `respond`, `audit` (and `prompts generate`: the model ones).
MODEL_ARG = run_option("model_args", "--model-arg")
MODEL_VERSION = run_option("model_version", "--model-version")
BATCH_SIZE = run_option("batch_size", "--batch-size", ranged=True)
MAX_NEW_TOKENS = typer.Option(
    256,
    "--max-new-tokens",
    help="Longest response, in tokens. The default, 256, leaves room for a chat model's whole answer (paper 001's "
    "setting was 40, which cut most chat answers off mid-sentence). An answer cut off at the limit is scored as it is: score and audit warn when more than 10% of one side's answers were, and their --exclude-truncated tests only the pairs where neither was.",
)
SAMPLE = typer.Option(False, "--sample/--greedy", help="Sample (seeded per item) or decode greedily.")
TEMPERATURE = typer.Option(1.0, "--temperature", help="Sampling temperature (with --sample).")
TOP_K = typer.Option(None, "--top-k", help="Sample from the k most likely tokens (with --sample).")
TOP_P = typer.Option(None, "--top-p", help="Nucleus sampling threshold (with --sample).")
STOP = typer.Option(None, "--stop", help="A string that ends an answer (repeatable). \\n is a newline, \\t a tab.")
ENGINE = run_option("engine", "--engine", show_default="local")  # None is local: the help shows it as such
RAY_ADDRESS = typer.Option(
    None,
    "--ray-address",
    help="With --engine ray: the cluster to join (HOST:PORT, auto, ray://HOST:10001). Default: start a local one "
    "of this run's own, never joining another; auto: the one RAY_ADDRESS names.",
)
RAY_ACTORS = typer.Option(
    None,
    "--ray-actors",
    min=1,
    help="With --engine ray: copies of the model (actors). Default: the cluster's CPUs, or its GPUs for a model that wants one.",
)
MAX_CONSECUTIVE_FAILURES = run_option("max_consecutive_failures", "--max-consecutive-failures", ranged=True)
REPETITION_PENALTY = typer.Option(
    None,
    "--repetition-penalty",
    help="Repetition penalty sent to the model. Default: the model's or server's own, which differ: give 1.0 for none.",
)


def stop_strings(values: list[str] | None) -> list[str]:
    """The ``--stop`` values, with a backslash-n read as a newline and a backslash-t as a tab."""
    return [v.replace("\\n", "\n").replace("\\t", "\t") for v in values or ()]


def decoding_settings(
    *,
    sample: bool,
    max_new_tokens: int,
    temperature: float,
    top_k: int | None,
    top_p: float | None,
    stop: list[str] | None = None,
    repetition_penalty: float | None = None,
) -> DecodingSettings:
    """The DecodingSettings the decoding options describe (SpecError for a bad value).

    ``--temperature`` (other than 1), ``--top-k`` and ``--top-p`` without ``--sample`` are an
    error: greedy decoding would drop them without a word.
    """
    import fairtalk

    settings = fairtalk.DecodingSettings(
        do_sample=sample,
        max_new_tokens=max_new_tokens,
        temperature=temperature,
        top_k=top_k,
        top_p=top_p,
        stop=tuple(stop_strings(stop)),
        repetition_penalty=repetition_penalty,
    )
    settings.check_sampling(SAMPLING_FLAGS)  # the library's one check, in the flags' words
    return settings


def engine_option(
    engine: Engine | str | None, address: str | None, n_actors: int | None, base: RayEngine | str | None = None
) -> RayEngine | None:
    """The engine ``--engine``/``--ray-address``/``--ray-actors`` give over ``base`` (a config file's): None or a RayEngine."""
    import dataclasses

    import fairtalk
    from fairtalk.models import RayEngine

    name = plain(engine)
    current = base if isinstance(base, RayEngine) and name != "local" else None
    if name == "ray" and current is None:
        current = RayEngine()
    if current is None:
        if address is not None or n_actors is not None:
            raise fairtalk.SpecError(_MSG_RAY_ONLY)
        return None
    return dataclasses.replace(
        current,
        address=current.address if address is None else address,
        num_actors=current.num_actors if n_actors is None else n_actors,
    )


def model_options(model_arg: list[str] | None, system_prompt: str | None = None) -> dict[str, str]:
    """The ``--model-arg KEY=VALUE`` options as a dict, with ``--system-prompt`` (TEXT or @FILE) as ``system_prompt``.

    SpecError for a malformed or repeated one, or a system prompt given both ways.
    """
    import fairtalk
    from fairtalk.models import parse_model_args

    options = parse_model_args(model_arg or [])
    if (system := text_or_file(system_prompt, "--system-prompt")) is not None:
        if "system_prompt" in options:
            raise fairtalk.SpecError("give the system prompt once: --system-prompt or --model-arg system_prompt=...")
        options["system_prompt"] = system
    return options


def model_inputs(responder: Responder) -> dict[str, str]:
    """The files a loaded model was made from (``input_paths``), by what they are, for the never-overwrite checks."""
    paths = responder.input_paths
    return {(f"the model file #{i + 1}" if i else "the model file"): str(path) for i, path in enumerate(paths)}


#: What the counts line says of pairs left out for a failed side: a store file retries them, an in-memory store does not.
_MSG_RETRIED = " ({n:,} pairs left out; failures are retried on the next run)"
_MSG_NOT_KEPT = (
    " ({n:,} pairs left out; no run store file kept this run's answers: give --store FILE to keep them, and a re-run "
    "asks only the failures again)"
)


def generation_line(summary: GenerationSummary, *, stored: bool = True) -> str:
    """One line of generation counts: pair sides generated, from the store, failed; a server's requests and retries.

    ``stored``: the run had a store file (False: an in-memory store, whose failures no next run retries).
    """
    line = f"{summary.n_generated:,} generated, {summary.n_cached:,} from the store, {summary.n_errors:,} failed"
    if summary.n_pairs_with_errors:
        line += (_MSG_RETRIED if stored else _MSG_NOT_KEPT).format(n=summary.n_pairs_with_errors)
    if summary.max_in_flight is not None and summary.n_generated:
        line += f"; up to {summary.max_in_flight:,} of max_concurrency {summary.max_concurrency:,} requests in flight"
    if summary.retry_budget is not None and (summary.n_generated or summary.n_errors):
        line += f"; {summary.n_retries:,} of {summary.retry_budget:,} retries used"  # requests were sent: say how they went
        if summary.n_retries_refused:
            line += f", {summary.n_retries_refused:,} failure(s) not retried (retry budget spent)"
        if summary.n_retries_waited:
            line += f", and {summary.n_retries_waited:,} while the server could not take requests (on retry_seconds)"
    return line


def generation_lines(summary: GenerationSummary, *, stored: bool = True) -> list[str]:
    """The counts line (``stored``: see :func:`generation_line`), then (indented) the failures by kind, their first messages and replaced code points."""
    lines = [generation_line(summary, stored=stored)]
    if summary.error_counts:
        kinds = ", ".join(f"{kind} {n:,}" for kind, n in summary.error_counts.items())
        lines.append(f"  failures by kind: {kinds}")
    lines += [f"  error: {message}" for message in summary.error_examples]
    if summary.n_unencodable:
        lines.append(
            f"  {summary.n_unencodable:,} code point(s) in responses could not be stored as UTF-8 "
            "(lone surrogates) and were replaced by U+FFFD"
        )
    return lines


def _check_complete(n_complete: int, summary: GenerationSummary, output: str) -> None:
    """No complete pair left is an error, as in audit, before ``output`` is written: no empty file that looks like a result.

    The error counts the failures by kind and gives the first.
    """
    if n_complete:
        return
    counts = ", ".join(f"{kind} {n:,}" for kind, n in summary.error_counts.items())
    first = summary.error_examples[0] if summary.error_examples else "?"
    raise ResponderError(
        _MSG_NONE_LEFT.format(n_pairs=summary.n_pairs, n_errors=summary.n_errors, counts=counts, first=first, output=output)
    )


@app.command()
def respond(
    ctx: typer.Context,
    pairs: str = typer.Option(..., "--pairs", help="Pairs JSONL (from `fairtalk pairs`); - reads standard input."),
    model: str = typer.Option(
        ...,
        "--model",
        help=MODEL_SPEC_HELP,
    ),
    model_arg: list[str] | None = MODEL_ARG,
    model_version: str | None = MODEL_VERSION,
    output: str = typer.Option(
        "responses.jsonl",
        "-o",
        "--output",
        help="Responses JSONL to write (the `fairtalk score` input); '-' writes to stdout. Every pair asked is in it "
        '(a side that failed as a record with "response": null and its "error", which `score` counts as lost); '
        "with '-', the messages go to stderr. An existing file is replaced only when it is a responses file fairtalk wrote; never an input.",
    ),
    store: str | None = typer.Option(
        None,
        "--store",
        help="SQLite run store: a rerun reuses its responses. It commits new ones as they arrive and retries failures. "
        "A new file or "
        "a run store (never an input, a device or another file).",
    ),
    seed: int = typer.Option(0, "--seed", min=0, help="Per-item generation seeds derive from (seed, pair id, side)."),
    max_errors: int | None = run_option("max_errors", "--max-errors"),
    max_consecutive_failures: int = MAX_CONSECUTIVE_FAILURES,
    batch_size: int = BATCH_SIZE,
    max_new_tokens: int = MAX_NEW_TOKENS,
    sample: bool = SAMPLE,
    temperature: float = TEMPERATURE,
    top_k: int | None = TOP_K,
    top_p: float | None = TOP_P,
    stop: list[str] | None = STOP,
    repetition_penalty: float | None = REPETITION_PENALTY,
    system_prompt: str | None = SYSTEM_PROMPT,
    engine: Engine | None = ENGINE,
    ray_address: str | None = RAY_ADDRESS,
    ray_actors: int | None = RAY_ACTORS,
) -> None:
    """Generate a model's responses to both sides of every pair (generation alone, no scoring)."""
    import contextlib

    to_stdout = output == "-"
    with stdout_to_stderr() if to_stdout else contextlib.nullcontext(None) as document:  # -o -: stdout holds only the JSONL
        _respond(
            ctx,
            document,
            pairs=pairs,
            model=model,
            model_arg=model_arg,
            model_version=model_version,
            output=output,
            store=store,
            seed=seed,
            max_errors=max_errors,
            max_consecutive_failures=max_consecutive_failures,
            batch_size=batch_size,
            max_new_tokens=max_new_tokens,
            sample=sample,
            temperature=temperature,
            top_k=top_k,
            top_p=top_p,
            stop=stop,
            repetition_penalty=repetition_penalty,
            system_prompt=system_prompt,
            engine=engine,
            ray_address=ray_address,
            ray_actors=ray_actors,
        )


def _respond(
    ctx: typer.Context,
    document: IO[str] | None,
    *,
    pairs: str,
    model: str,
    model_arg: list[str] | None,
    model_version: str | None,
    output: str,
    store: str | None,
    seed: int,
    max_errors: int | None,
    max_consecutive_failures: int,
    batch_size: int,
    max_new_tokens: int,
    sample: bool,
    temperature: float,
    top_k: int | None,
    top_p: float | None,
    stop: list[str] | None,
    repetition_penalty: float | None,
    system_prompt: str | None,
    engine: Engine | None,
    ray_address: str | None,
    ray_actors: int | None,
) -> None:
    """The body of `respond`; ``document`` is the real stdout for ``-o -`` (None otherwise)."""
    import fairtalk
    from fairtalk.cli._output import loading_model, progress_bars
    from fairtalk.files import check_not_in_run
    from fairtalk.pairs import PairColumn
    from fairtalk.report import check_default_output, check_not_input, is_responses_file
    from fairtalk.store import is_run_store

    responder = None
    try:
        check_pairs_file(pairs)
        check_options(ctx, "max_errors", "batch_size", "max_consecutive_failures")  # in audit's words
        if document is None:
            check_not_input(output, {"--pairs": pairs, "--store": store})
            check_not_in_run(output, option="-o")  # an audit's race/responses.jsonl is that run's, not this one's
            if not was_given(ctx, "output"):  # a place the user did not name: only fairtalk's file
                check_default_output(output, ours=is_responses_file, what="responses file", option="-o")
            # before any work: an input, a device, the user's file, a folder or an unwritable place fails now
            check_output_file(output, what="responses file", ours=is_responses_file, inputs={"--pairs": pairs, "--store": store})
        if store is not None:
            check_not_input(store, {"--pairs": pairs}, option="--store")
        if store is not None and store != IN_MEMORY:
            check_output_file(store, option="--store", what="run store", ours=is_run_store, hold=False, inputs={"--pairs": pairs})
        settings = decoding_settings(
            sample=sample,
            max_new_tokens=max_new_tokens,
            temperature=temperature,
            top_k=top_k,
            top_p=top_p,
            stop=stop,
            repetition_penalty=repetition_penalty,
        )
        with stdin_as_file(pairs) as pairs_path:
            items = PairColumn.of(fairtalk.read_pairs(pairs_path))  # held as columns, not a record per pair
        if not items:
            raise fairtalk.InputError(_MSG_NO_PAIRS, path="standard input" if pairs == "-" else pairs)
        on_ray = engine_option(engine, ray_address, ray_actors)
        with loading_model(model):  # a model slow to load still shows progress (issue 25)
            if on_ray is not None:  # the spec is loaded on every actor; this process writes the store
                responder = on_ray.responder(model, batch_size=batch_size, model_args=model_options(model_arg, system_prompt))
            else:
                responder = fairtalk.load_responder(model, **model_options(model_arg, system_prompt))
        files = model_inputs(responder)
        if document is None:
            check_not_input(output, files)
        if store is not None:
            check_not_input(store, files, option="--store")
        with progress_bars() as progress:
            generation = fairtalk.respond(
                items,
                model=responder,
                seed=seed,
                store=store,
                settings=settings,
                max_errors=max_errors,
                batch_size=batch_size,
                progress=progress,
                model_version=model_version,
                max_consecutive_failures=max_consecutive_failures,
            )
        _check_complete(generation.responses.n_pairs, generation.summary, "stdout" if document is not None else output)
        fairtalk.write_responses(generation.responses, output if document is None else document)
    except KeyboardInterrupt:
        interrupted(store)
    finally:
        if responder is not None:
            responder.close()
    where = "stdout" if document is not None else output
    stored = store is not None and store.strip() not in ("", IN_MEMORY)
    _say_done(generation, None if responder is None else responder.n_actors, where, stored=stored)


def _say_done(generation: Generation, n_actors: int | None, where: str, *, stored: bool) -> None:
    """The model, the generation counts, the warnings (a prompt cut to fit) and what was written, on stderr."""
    summary = generation.summary
    actors = "" if n_actors is None else f" on {n_actors} Ray actor(s)"
    say(f"model {summary.model}{actors}", stderr=True)  # the fingerprint: the store's key, part of the result
    for line in generation_lines(summary, stored=stored):
        say(line, style="yellow" if line.startswith("  ") else None, stderr=True)
    for warning in generation.warnings:  # a prompt cut to fit: the responses file records it, and score warns again
        say(f"warning: {warning}", style="yellow", stderr=True)
    n_lost = summary.n_pairs - generation.responses.n_pairs
    also = f" and {n_lost:,} left out (their failed sides recorded as failures)" if n_lost else ""
    info(f"wrote {generation.responses.n_pairs:,} pairs{also} to {where}", stderr=True, keep=[where])


def check_pairs_file(pairs: str) -> None:
    """SpecError for a ``--pairs`` of respond or similarity that is a whole number and no file: a count, as audit takes."""
    if pairs.strip().isdigit() and not os.path.exists(pairs):
        raise SpecError(_MSG_PAIRS_A_COUNT.format(value=pairs))
