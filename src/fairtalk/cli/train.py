"""`fairtalk train`: train a reference dialogue model (Seq2Seq or Transformer retrieval)."""

from __future__ import annotations

import typer

from fairtalk.cli._app import app, console

_MODELS = ("seq2seq", "retrieval")
_MSG_MODEL = "MODEL must be seq2seq or retrieval, not {given!r}"


@app.command()
def train(
    model: str = typer.Argument(..., help="seq2seq (LSTM generator) or retrieval (Transformer ranker)."),
    corpus: str = typer.Option("builtin:chitchat", "--corpus", help="Context-response corpus: builtin:chitchat (its train split), jsonl/twitter/parlai:PATH."),
    output: str = typer.Option(..., "-o", "--output", help="Checkpoint directory to write (config.json, vocab.json, model.safetensors)."),
    debias: str = typer.Option("none", "--debias", help="none, cda (train on the counterpart-augmented corpus) or wer (embedding regularization)."),
    wer_k: float = typer.Option(0.5, "--wer-k", min=0.0, help="WER coefficient k."),
    axis: str = typer.Option("gender", "--axis", help="Axis for --debias: gender, race, or a lexicon file."),
    epochs: int = typer.Option(2, "--epochs", min=1, help="Passes over the training dialogues."),
    seed: int = typer.Option(0, "--seed", min=0, help="Seed for initialisation, data order, validation split, CDA and the pool."),
    max_dialogues: int | None = typer.Option(None, "--max-dialogues", min=2, help="Train on a seeded sample of this many dialogues."),
    batch_size: int = typer.Option(128, "--batch-size", min=1, help="Dialogues per step (retrieval: in-batch negatives)."),
    lr: float | None = typer.Option(None, "--lr", help="Adam learning rate (default 1e-3)."),
    pool_size: int = typer.Option(16000, "--pool-size", min=1, help="Retrieval: candidates sampled from the training responses."),
    threads: int = typer.Option(2, "--threads", min=1, help="CPU threads for torch."),
    dtype: str = typer.Option("float16", "--dtype", help="Precision of the saved weights: float16 or float32."),
    quiet: bool = typer.Option(False, "--quiet", help="No progress bars."),
) -> None:
    """Train a reference model on a dialogue corpus; print validation figures each epoch."""
    import fairtalk

    if model not in _MODELS:
        raise fairtalk.SpecError(_MSG_MODEL.format(given=model), choices=_MODELS, given=model)
    if dtype not in ("float16", "float32"):
        raise fairtalk.SpecError(f"--dtype must be float16 or float32, not {dtype!r}", choices=("float16", "float32"), given=dtype)
    config = fairtalk.TrainConfig(
        model=model, epochs=epochs, seed=seed, batch_size=batch_size, lr=lr, debias=debias, wer_k=wer_k,
        axis=axis, max_dialogues=max_dialogues, pool_size=pool_size, threads=threads, dtype=dtype, corpus=corpus,
    )
    split = "train" if corpus == "builtin:chitchat" else "all"
    dialogues = fairtalk.read_corpus(corpus, split=split)
    console.print(f"training {model} on {corpus}" + (f" (split {split})" if split != "all" else "")
                  + f", debias {debias}, seed {seed}, {epochs} epoch(s)", highlight=False)
    result = fairtalk.train_model(dialogues, config, output, progress=not quiet,
                                  log=lambda line: console.print(line, highlight=False, markup=False))
    last = result.epochs[-1].validation if result.epochs else {}
    figures = ", ".join(f"{k} {v:.4f}" for k, v in last.items())
    console.print(
        f"wrote {result.path} · {result.n_train:,} training dialogues ({result.n_augmented:,} added by CDA), "
        f"{result.n_validation:,} validation · vocab {result.vocab_size:,} · {result.n_parameters:,} parameters · "
        f"{result.seconds / 60:.1f} min · validation {figures}",
        highlight=False, markup=False,
    )
