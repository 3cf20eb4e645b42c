"""Checkpoint directories of the reference models: safetensors weights plus JSON config and vocabulary.

A checkpoint is a directory::

    config.json         format, model kind, architecture sizes, training settings (seed, corpus
                        spec, debias, epochs, ...), fairtalk/torch versions, training time, validation
    vocab.json          the word vocabulary (:class:`~fairtalk.training._vocab.Vocab`)
    model.safetensors   the weights (fp16 or fp32; loaded as fp32)
    pool.json           retrieval only: the candidate responses (a JSON list of strings)
    pool.safetensors    retrieval only: their encodings (``vectors``, one unit row per candidate)

:func:`load_checkpoint` raises :class:`~fairtalk.errors.InputError` naming the file for a
missing or corrupt part, never a torch or JSON traceback. ``Checkpoint.sha256`` hashes every
file's bytes, so a fingerprint built on it changes whenever the model does.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from fairtalk.errors import InputError, OutputError
from fairtalk.files import WRITTEN, check_folder_kind, check_output_folder, staged
from fairtalk.training._vocab import Vocab

if TYPE_CHECKING:
    import torch

__all__ = [
    "CHECKPOINT_FILES",
    "CONFIG",
    "FORMAT",
    "MODEL_KINDS",
    "Checkpoint",
    "TrainingRecord",
    "check_checkpoint_folder",
    "load_checkpoint",
    "read_training_record",
    "save_checkpoint",
]

FORMAT = "fairtalk-checkpoint"
FORMAT_VERSION = 1
MODEL_KINDS = ("retrieval", "seq2seq")
CONFIG, VOCAB, WEIGHTS, POOL, POOL_VECTORS = "config.json", "vocab.json", "model.safetensors", "pool.json", "pool.safetensors"
#: Every file a checkpoint may hold: what a save replaces (or removes, a pool the new one has not).
CHECKPOINT_FILES = (CONFIG, VOCAB, WEIGHTS, POOL, POOL_VECTORS)

_MSG_NOT_DIR = "checkpoint directory not found"
_MSG_MISSING = "checkpoint file missing"
_MSG_CONFIG = "corrupt checkpoint config ({reason})"
_MSG_WEIGHTS = "corrupt checkpoint weights ({reason})"
_MSG_POOL = "corrupt candidate pool ({reason})"
_MSG_OTHER_SETTINGS = (
    "holds a checkpoint trained with other settings ({changes}), which this run would replace; "
    "write the new checkpoint to another folder, or delete this one first to retrain it"
)
_MSG_NOT_CHECKPOINT = (
    "holds {n} entr{ies} of no checkpoint ({names}); a checkpoint goes into a new or empty folder, or one holding a "
    "checkpoint: write it to a new folder, or move those files out"
)
#: How many of a folder's other entries that refusal names.
_N_NAMED = 3
#: The entries fairtalk makes in a folder it writes, besides a checkpoint's files: its marker and (while it writes, or
#: after a crash, undone by the next run) its staging, trash and temporary files.
_FAIRTALK_PREFIX = ".fairtalk-"
#: Training settings that do not change the model a run trains (a rerun with another value replaces it).
_SAME_MODEL = frozenset({"threads"})
_MSG_KIND = "unknown model kind {kind!r} (expected one of {choices})"
_MSG_DTYPE = "dtype must be 'float16' or 'float32', got {dtype!r}"


@dataclass(frozen=True)
class Checkpoint:
    """A loaded checkpoint: config, vocabulary, fp32 weights and (retrieval) the encoded pool."""

    path: Path
    config: Mapping[str, Any]
    vocab: Vocab
    state: Mapping[str, torch.Tensor]
    sha256: str
    pool: tuple[str, ...] | None = None
    pool_vectors: torch.Tensor | None = None

    @property
    def kind(self) -> str:
        """``"seq2seq"`` or ``"retrieval"``."""
        return str(self.config["model"])

    @property
    def architecture(self) -> dict[str, Any]:
        """Constructor keyword arguments of the network."""
        return dict(self.config["architecture"])


def save_checkpoint(
    directory: str | os.PathLike[str],
    *,
    config: Mapping[str, Any],
    vocab: Vocab,
    state: Mapping[str, torch.Tensor],
    dtype: str = "float16",
    pool: Sequence[str] | None = None,
    pool_vectors: torch.Tensor | None = None,
) -> Path:
    """Write a checkpoint directory (created if needed), its files swapped in together.

    ``config`` must hold ``model`` (seq2seq or retrieval) and ``architecture``; ``format`` and
    ``format_version`` are added. Floating-point tensors are stored in ``dtype``. Only files
    fairtalk wrote are replaced (:func:`fairtalk.files.staged`): a file of the user's under a
    checkpoint's name is an OutputError, and nothing changes; other files in the folder stay.
    """
    import torch
    from safetensors.torch import save_file

    if config.get("model") not in MODEL_KINDS:
        raise ValueError(_MSG_KIND.format(kind=config.get("model"), choices=MODEL_KINDS))
    if dtype not in ("float16", "float32"):
        raise ValueError(_MSG_DTYPE.format(dtype=dtype))
    target = getattr(torch, dtype)
    out = Path(directory)

    def cast(t: torch.Tensor) -> torch.Tensor:
        t = t.detach().cpu()
        return (t.to(target) if t.is_floating_point() else t).contiguous()

    full = {"format": FORMAT, "format_version": FORMAT_VERSION, **config, "dtype": dtype}
    written = [
        WEIGHTS,
        VOCAB,
        CONFIG,
        *((POOL,) if pool is not None else ()),
        *((POOL_VECTORS,) if pool is not None and pool_vectors is not None else ()),
    ]
    with staged(out, displace=[name for name in CHECKPOINT_FILES if name not in written]) as staging:
        save_file({k: cast(v) for k, v in state.items()}, str(staging / WEIGHTS))
        vocab.save(staging / VOCAB)
        if pool is not None:
            (staging / POOL).write_text(json.dumps(list(pool), ensure_ascii=False), encoding="utf-8")
            if pool_vectors is not None:
                save_file({"vectors": cast(pool_vectors)}, str(staging / POOL_VECTORS))
        (staging / CONFIG).write_text(json.dumps(full, indent=2, sort_keys=True), encoding="utf-8")
        for name in written:
            os.chmod(staging / name, 0o644)  # checkpoints are shared and shipped
    return out


@dataclass(frozen=True, slots=True)
class TrainingRecord:
    """What a checkpoint's ``config.json`` says of its training: whether it finished, its time, the last validation."""

    finished: bool
    seconds: float | None
    validation: Mapping[str, float]


def read_training_record(directory: str | os.PathLike[str]) -> TrainingRecord | None:
    """The training record of the checkpoint in ``directory``; None when it holds no readable ``config.json`` object."""
    try:
        config = json.loads((Path(directory) / CONFIG).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(config, dict):
        return None
    history = config.get("history") or [{}]
    last = history[-1] if isinstance(history, list) and isinstance(history[-1], dict) else {}
    seconds = config.get("training_seconds")
    return TrainingRecord(
        finished=config.get("finished") is True,
        seconds=seconds if isinstance(seconds, int | float) and not isinstance(seconds, bool) else None,
        validation=MappingProxyType(dict(last.get("validation") or {})),
    )


def check_checkpoint_folder(
    directory: str | os.PathLike[str],
    inputs: Mapping[str, Any] | None = None,
    *,
    training: Mapping[str, Any] | None = None,
) -> None:
    """Raise OutputError, before any training, unless a checkpoint can be written into ``directory``.

    Refused as :func:`fairtalk.files.check_output_folder` refuses a folder (a file, the root, the
    home folder, one holding an input among ``inputs``), a folder holding, under a
    checkpoint's file names, files fairtalk did not write, a folder holding another
    command's outputs (an audit's run, a report: :func:`fairtalk.files.check_folder_kind`),
    and a folder holding no checkpoint but other entries (the user's own files): a checkpoint
    goes into a new or empty folder, or one holding a checkpoint (whose other files stay).
    With ``training`` (the new run's settings, as its ``config.json`` records them), a
    checkpoint there trained with other settings is refused too: only the same run replaces it.
    """
    check_output_folder(directory, inputs, replaces=CHECKPOINT_FILES)
    check_folder_kind(directory, "checkpoint", option="the output folder", writes="a checkpoint needs")
    _check_no_other_files(Path(directory))
    if training is not None:
        changes = _changed_settings(Path(directory), training)
        if changes:
            raise OutputError(_MSG_OTHER_SETTINGS.format(changes="; ".join(changes)), path=str(directory))


def _check_no_other_files(directory: Path) -> None:
    """OutputError when ``directory`` holds no checkpoint file but other entries (fairtalk's marker and staging aside)."""
    try:
        names = sorted(entry.name for entry in directory.iterdir()) if directory.is_dir() else []
    except OSError:
        return  # unreadable: check_output_folder has refused what cannot be written
    if any(name in CHECKPOINT_FILES for name in names):
        return  # a checkpoint (check_owned: fairtalk's); the files beside it stay, as save_checkpoint keeps them
    others = [name for name in names if name != WRITTEN and not name.startswith(_FAIRTALK_PREFIX)]
    if others:
        shown = ", ".join(others[:_N_NAMED]) + (", ..." if len(others) > _N_NAMED else "")
        message = _MSG_NOT_CHECKPOINT.format(n=len(others), ies="y" if len(others) == 1 else "ies", names=shown)
        raise OutputError(message, path=str(directory))


def _changed_settings(directory: Path, training: Mapping[str, Any]) -> list[str]:
    """``"debias: cda, now none"`` for each setting of the checkpoint in ``directory`` the new run changes."""
    try:
        config = json.loads((directory / CONFIG).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return []  # no checkpoint there (a damaged one is fairtalk's own, replaced as before)
    old = config.get("training") if isinstance(config, dict) and config.get("format") == FORMAT else None
    if not isinstance(old, dict):
        return []
    new = json.loads(json.dumps(dict(training), default=str))  # as config.json holds it: tuples as lists
    return [
        f"{key}: {json.dumps(old.get(key))}, now {json.dumps(new.get(key))}"
        for key in sorted(set(old) | set(new))
        if key not in _SAME_MODEL and old.get(key) != new.get(key)
    ]


def _read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise InputError(_MSG_MISSING, path=str(path)) from None
    except OSError as exc:
        raise InputError(f"cannot read checkpoint file ({exc.strerror})", path=str(path)) from exc


def _tensors(path: Path, data: bytes, message: str) -> dict[str, torch.Tensor]:
    from safetensors.torch import load

    try:
        tensors = load(data)
    except Exception as exc:  # safetensors raises its own error types for corrupt headers
        raise InputError(
            message.format(reason=str(exc).splitlines()[0] if str(exc) else type(exc).__name__), path=str(path)
        ) from exc
    return {k: (v.float() if v.is_floating_point() else v) for k, v in tensors.items()}


def load_checkpoint(directory: str | os.PathLike[str]) -> Checkpoint:
    """Read a checkpoint directory written by :func:`save_checkpoint`.

    Raises
    ------
    InputError
        The directory or one of its files is missing, unreadable or corrupt.
    """
    root = Path(directory)
    if not root.is_dir():
        raise InputError(_MSG_NOT_DIR, path=str(root))
    digest = hashlib.sha256()
    raw_config = _read_bytes(root / CONFIG)
    try:
        config = json.loads(raw_config)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(_MSG_CONFIG.format(reason=exc), path=str(root / CONFIG)) from exc
    if not isinstance(config, dict) or config.get("format") != FORMAT:
        raise InputError(_MSG_CONFIG.format(reason=f"not a {FORMAT} config"), path=str(root / CONFIG))
    if config.get("model") not in MODEL_KINDS or not isinstance(config.get("architecture"), dict):
        raise InputError(
            _MSG_CONFIG.format(reason="needs 'model' (seq2seq or retrieval) and 'architecture'"), path=str(root / CONFIG)
        )
    raw_vocab = _read_bytes(root / VOCAB)
    try:
        vocab = Vocab.from_dict(json.loads(raw_vocab), path=str(root / VOCAB))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"corrupt vocabulary ({exc})", path=str(root / VOCAB)) from exc
    raw_weights = _read_bytes(root / WEIGHTS)
    state = _tensors(root / WEIGHTS, raw_weights, _MSG_WEIGHTS)
    for part in (raw_config, raw_vocab, raw_weights):
        digest.update(hashlib.sha256(part).digest())
    pool = vectors = None
    if config["model"] == "retrieval":
        raw_pool = _read_bytes(root / POOL)
        try:
            pool = json.loads(raw_pool)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise InputError(_MSG_POOL.format(reason=exc), path=str(root / POOL)) from exc
        if not isinstance(pool, list) or not pool or not all(isinstance(t, str) for t in pool):
            raise InputError(_MSG_POOL.format(reason="expected a non-empty JSON list of strings"), path=str(root / POOL))
        pool = tuple(pool)
        digest.update(hashlib.sha256(raw_pool).digest())
        if (root / POOL_VECTORS).exists():
            raw_vectors = _read_bytes(root / POOL_VECTORS)
            vectors = _tensors(root / POOL_VECTORS, raw_vectors, _MSG_POOL).get("vectors")
            if vectors is None or vectors.dim() != 2 or vectors.shape[0] != len(pool):
                raise InputError(
                    _MSG_POOL.format(reason=f"expected 'vectors' with {len(pool)} rows"), path=str(root / POOL_VECTORS)
                )
            digest.update(hashlib.sha256(raw_vectors).digest())
    return Checkpoint(root, config, vocab, state, digest.hexdigest(), pool, vectors)
