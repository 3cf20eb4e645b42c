"""`fairtalk train`: train a reference dialogue model (Seq2Seq or Transformer retrieval)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import typer

from fairtalk.cli._app import app, check_two_groups, info, interrupted, lexicon_inputs, say, when_interrupted
from fairtalk.cli._axes import AXES, AXIS_NAMES
from fairtalk.cli._choices import Debias, Dtype, TrainModel, was_given

if TYPE_CHECKING:
    from fairtalk.corpora import ReadSummary
    from fairtalk.errors import InputError

_MSG_LR = "--lr must be a finite number > 0 and at most {most:.4g} (float32's largest, the weights' precision), got {value!r}"
_MSG_INTERRUPTED = (
    "no checkpoint was written to {output}, and no epoch is kept: re-run the same command to train again from the start"
)
_MSG_UNUSED = "{option} applies only with {needs}; this run would ignore it (leave it out)"
#: Options used only by some runs: parameter, option, whether a (model, debias) run uses it, what it needs.
_ONLY_WITH = (
    ("wer_k", "--wer-k", lambda model, debias: debias == "wer", "--debias wer"),
    ("axis", "--axis", lambda model, debias: debias in ("cda", "wer"), "--debias cda or --debias wer"),
    ("pool_size", "--pool-size", lambda model, debias: model == "retrieval", "the retrieval model"),
)


def _check_lr(value: float | None) -> float | None:
    """``--lr``: a finite rate > 0, at most float32's largest.

    Torch refuses nan or a negative rate mid-run, inf trains to nan, and one that float32 cannot hold stops it with an
    overflow. A rate float32 holds but Adam's first step (10 x the rate) overflows is the training loop's "training
    diverged" error.
    """
    from fairtalk.training import MAX_LR  # the library's bound (TrainConfig's), loaded without torch

    if value is not None and not (math.isfinite(value) and 0 < value <= MAX_LR):
        from fairtalk.errors import SpecError

        raise SpecError(_MSG_LR.format(most=MAX_LR, value=value))
    return value


def _with_skips(error: InputError, read: ReadSummary) -> InputError:
    """``error`` (one not about a file's line) with the lines the corpus reader skipped, when it skipped any."""
    if error.path is not None or not read.skipped:
        return error
    return type(error)(read.with_skips(str(error)))  # a reply's problem: among those without a response, not a skip


@app.command()
def train(
    ctx: typer.Context,
    model: TrainModel = typer.Argument(..., help="seq2seq (LSTM generator) or retrieval (Transformer ranker)."),
    corpus: str = typer.Option(
        "builtin:chitchat",
        "--corpus",
        help="Context-response corpus: builtin:chitchat (its train split), jsonl/twitter/parlai:PATH.",
    ),
    output: str = typer.Option(
        ...,
        "-o",
        "--output",
        help="Checkpoint directory to write (config.json, vocab.json, model.safetensors). A new or empty folder, or one "
        "holding a checkpoint of the same settings, which the run replaces (another command's folder is refused).",
    ),
    debias: Debias = typer.Option(
        Debias.none, "--debias", help="none, cda (train on the counterpart-augmented corpus) or wer (embedding regularization)."
    ),
    wer_k: float = typer.Option(0.5, "--wer-k", min=0.0, help="WER coefficient k."),
    axis: str = typer.Option("gender", "--axis", help=f"Axis for --debias or a lexicon file: {AXIS_NAMES}. The axes: {AXES}."),
    epochs: int = typer.Option(2, "--epochs", min=1, help="Passes over the training dialogues."),
    seed: int = typer.Option(0, "--seed", min=0, help="Seed for initialisation, data order, validation split, CDA and the pool."),
    max_dialogues: int | None = typer.Option(
        None, "--max-dialogues", min=2, help="Train on a seeded sample of this many dialogues."
    ),
    batch_size: int = typer.Option(128, "--batch-size", min=1, help="Dialogues per step (retrieval: in-batch negatives)."),
    lr: float | None = typer.Option(
        None, "--lr", callback=_check_lr, help="Adam learning rate, a finite number > 0 (default 1e-3)."
    ),
    pool_size: int = typer.Option(16000, "--pool-size", min=1, help="Retrieval: candidates sampled from the training responses."),
    threads: int = typer.Option(2, "--threads", min=1, help="CPU threads for torch."),
    dtype: Dtype = typer.Option(Dtype.float16, "--dtype", help="Precision of the saved weights: float16 or float32."),
) -> None:
    """Train a reference model on a dialogue corpus; print validation figures each epoch."""
    import fairtalk
    from fairtalk.cli._output import progress_bars, show_log
    from fairtalk.report import check_output_folder
    from fairtalk.training import check_checkpoint_folder

    for name, option, applies, needs in _ONLY_WITH:  # an option the run would not use is an error, not dropped
        if was_given(ctx, name) and not applies(model.value, debias.value):
            raise fairtalk.SpecError(_MSG_UNUSED.format(option=option, needs=needs))
    check_two_groups(axis)  # a bare religion would debias christian vs muslim only
    check_output_folder(output, {"--corpus": corpus})  # before the training: no root, home or folder holding the corpus
    lexicons = [fairtalk.load_lexicon(axis)] if debias.value in ("cda", "wer") else []
    check_output_folder(output, lexicon_inputs(lexicons, "--axis"), hold=False)  # nor the --axis file
    check_checkpoint_folder(output)  # nor a folder of the user's own files (train_model checks it again)
    config = fairtalk.TrainConfig(
        model=model.value,
        epochs=epochs,
        seed=seed,
        batch_size=batch_size,
        lr=lr,
        debias=debias.value,
        wer_k=wer_k,
        axis=axis,
        max_dialogues=max_dialogues,
        pool_size=pool_size,
        threads=threads,
        dtype=dtype.value,
        corpus=corpus,
    )
    split = "train" if corpus == "builtin:chitchat" else "all"
    dialogues = fairtalk.read_corpus(corpus, split=split)
    info(
        f"training {model.value} on {corpus}"
        + (f" (split {split})" if split != "all" else "")
        + f", debias {debias.value}, seed {seed}, {epochs} epoch(s)"
    )
    show_log("fairtalk.training")  # one line per epoch, unless -q
    with progress_bars() as progress:
        try:
            result = fairtalk.train_model(dialogues, config, output, progress=progress)
        except fairtalk.InputError as exc:  # too few dialogues: say what the reader skipped
            raise _with_skips(exc, dialogues.summary) from exc
        except KeyboardInterrupt:  # the checkpoint is written whole at the end, and no epoch is kept before
            interrupted(note=_MSG_INTERRUPTED.format(output=output), keep=[output])
    when_interrupted(f"the checkpoint was written in {output}", keep=[output])
    read = dialogues.summary  # what was read but not trained on, counted once (a missing reply: without a response)
    for line in [*read.skip_lines(replies=False), *result.left_out_lines(reply_note=read.reply_note())]:
        say(line)
    last = result.epochs[-1].validation if result.epochs else {}
    figures = ", ".join(f"{k} {v:.4f}" for k, v in last.items())
    debiased = {
        "cda": f" ({result.n_augmented:,} added by CDA)",
        "wer": f" ({result.n_wer_pairs:,} word pair{'' if result.n_wer_pairs == 1 else 's'} tied by WER)",
    }.get(debias.value, "")
    say(
        f"wrote {result.path} · {result.n_train:,} training dialogues{debiased}, "
        f"{result.n_validation:,} validation · vocab {result.vocab_size:,} · {result.n_parameters:,} parameters · "
        f"{result.seconds / 60:.1f} min · validation {figures}",
        keep=[result.path],
    )
