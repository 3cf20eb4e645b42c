"""Train a regard classifier of any kind from a ``label<TAB>text`` file: TF-IDF, sentence embeddings, or a fine-tuned encoder.

The texts are masked as at scoring time, the chosen trainer runs, and the model folder is
written with its provenance (the data file's name and sha256, the mask); the folder then works
as a scorer, ``Regard(scorer="path:DIR")``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from fairtalk.errors import InputError, SpecError
from fairtalk.measures._regard_model import (
    DEFAULT_C,
    DEFAULT_LEXICON_WEIGHT,
    ENCODERS,
    TrainReport,
    file_sha256,
    read_labelled,
    train_regard_model,
)

__all__ = ["train_regard"]

_MSG_ENCODER = "unknown regard encoder {given!r}"


def train_regard(
    data: str | os.PathLike[str],
    out_dir: str | os.PathLike[str],
    *,
    c: float | None = None,
    cv: int | None = None,
    seed: int = 0,
    encoder: str = "tfidf",
    lexicon_weight: float | None = None,
    progress: Any = None,
) -> TrainReport:
    """Train a regard classifier from a ``label<TAB>text`` file and save it in ``out_dir``.

    The texts are masked as at scoring time (every identity term of the default groups becomes
    ``XYZ``), so the model never learns from a group word. The folder then works as a scorer:
    ``Regard(scorer="path:OUT_DIR")``. Its ``config.json`` records the data file's name and
    sha256, the seed, the settings and the cross-validated accuracy and macro-F1 (when ``cv``).

    Parameters
    ----------
    c : float, optional
        Inverse regularisation strength (default :data:`DEFAULT_C` for ``tfidf``, the
        embedding module's own default for ``minilm``; not used by ``minilm-ft``).
    cv : int, optional
        Cross-validation folds of the reported figures (default 5; ``minilm-ft`` fine-tunes
        once per fold, so it cross-validates only when ``cv`` is given).
    encoder : {"tfidf", "minilm", "minilm-ft"}
        ``tfidf``: TF-IDF + VADER features. ``minilm``: all-MiniLM-L6-v2 sentence embeddings and
        a logistic regression. ``minilm-ft``: all-MiniLM-L6-v2 fine-tuned end to end (the
        shipped default; about 15 minutes on two CPU cores for 5,600 sentences).
    lexicon_weight : float, optional
        Weight of the VADER block of the ``tfidf`` encoder (default
        :data:`DEFAULT_LEXICON_WEIGHT`; 0 turns it off).
    progress : callable, optional
        Receives :class:`~fairtalk.progress.ProgressEvent` values (``minilm-ft`` training steps).

    Raises
    ------
    InputError
        Unreadable or malformed data, too few examples per label, or an unwritable folder.
    SpecError
        Unknown encoder, an option the encoder does not use, or a negative ``lexicon_weight``.
    """
    if encoder not in ENCODERS:
        raise SpecError(_MSG_ENCODER.format(given=encoder), choices=ENCODERS, given=encoder)
    if encoder == "minilm-ft" and (c is not None or lexicon_weight is not None):
        raise SpecError("--c and --lexicon-weight are options of the tfidf and minilm encoders, not of minilm-ft")
    from fairtalk.measures import _regard_embed as regard_embed
    from fairtalk.measures import _regard_finetuned as regard_finetuned
    from fairtalk.measures._regard import mask_groups

    texts, labels = read_labelled(data)
    texts = [mask_groups(t) for t in texts]  # as Regard.prepare masks at scoring time
    provenance = {"training_data_sha256": file_sha256(data), "masked": "identity terms of the default groups"}
    model: Any
    if encoder == "tfidf":
        model, report = train_regard_model(
            texts,
            labels,
            c=DEFAULT_C if c is None else c,
            cv=cv or 5,
            seed=seed,
            source=Path(data).name,
            lexicon_weight=DEFAULT_LEXICON_WEIGHT if lexicon_weight is None else lexicon_weight,
        )
    elif encoder == "minilm":
        model, report = regard_embed.train_embedding_model(
            texts,
            labels,
            encoder=encoder,
            c=regard_embed.DEFAULT_C if c is None else c,
            cv=cv or 5,
            seed=seed,
            source=Path(data).name,
        )
    else:
        model, report = regard_finetuned.train_and_validate(
            texts, labels, cv=cv, seed=seed, source=Path(data).name, progress=progress
        )
    model.config.update(provenance)
    try:
        model.save(out_dir)
    except OSError as exc:
        raise InputError(f"cannot write the model: {exc}", path=str(out_dir)) from exc
    return report
