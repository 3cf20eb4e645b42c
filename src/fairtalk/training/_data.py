"""Training data for the reference models: dialogue pairs, validation slice, CDA, id tensors, batches.

The validation slice is carved out of the *training* corpus by conversation (``Context.id`` up
to its last ``/``; chitchat ids are ``chitchat:CONV/TURN``), so that adjacent turns of one
conversation never straddle it. It is separate from the corpus' own held-out split, which
supplies audit contexts and is never read for training.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from fairtalk.errors import InputError
from fairtalk.records import Context

__all__ = [
    "Dialogue",
    "DialogueRead",
    "DialogueSplit",
    "batches",
    "count_dialogues",
    "encode_pairs",
    "pad",
    "read_dialogues",
    "split_dialogues",
]

_MSG_NO_PAIRS = (
    "the corpus has no context-response pairs to train on ({n_read:,} records read, {n_no_response:,} without a "
    "response, {n_blank_context:,} with a blank context; it needs a 'response' field: builtin:chitchat, jsonl with "
    "'response', twitter, parlai)"
)
_MSG_TOO_FEW = "only {n} dialogues: need at least 2 to train and validate"


@dataclass(frozen=True, slots=True)
class Dialogue:
    """One training pair with its conversation group (for the validation split)."""

    group: str
    context: str
    response: str


@dataclass(frozen=True, slots=True)
class DialogueSplit:
    """Training and validation dialogues, plus what CDA added."""

    train: tuple[Dialogue, ...]
    validation: tuple[Dialogue, ...]
    n_read: int
    n_augmented: int = 0


def _group(record: Context) -> str:
    return record.id.rsplit("/", 1)[0] if "/" in record.id else record.id


@dataclass(frozen=True, slots=True)
class DialogueRead:
    """The usable dialogues of a pass over the records, and what was left out.

    ``n_read`` records came in; ``n_no_response`` had no (or a blank) response and
    ``n_blank_context`` a response but a blank context: both left out. ``dialogues`` holds the
    rest (a seeded sample of them with ``max_dialogues``).
    """

    dialogues: list[Dialogue]
    n_read: int
    n_no_response: int
    n_blank_context: int


def count_dialogues(records: Iterable[Context], *, max_dialogues: int | None = None, seed: int = 0) -> DialogueRead:
    """:func:`read_dialogues` with the counts of the records it left out."""
    pairs: list[Dialogue] = []
    n_read = n_no_response = n_blank_context = 0
    for r in records:
        n_read += 1
        response = (r.response or "").strip()
        if not response:
            n_no_response += 1
        elif not r.text.strip():
            n_blank_context += 1
        else:
            pairs.append(Dialogue(_group(r), r.text.strip(), response))
    if not pairs:
        raise InputError(_MSG_NO_PAIRS.format(n_read=n_read, n_no_response=n_no_response, n_blank_context=n_blank_context))
    if max_dialogues is not None and len(pairs) > max_dialogues:
        keep = np.sort(np.random.default_rng([seed, 1]).choice(len(pairs), max_dialogues, replace=False))
        pairs = [pairs[i] for i in keep]
    return DialogueRead(pairs, n_read, n_no_response, n_blank_context)


def read_dialogues(records: Iterable[Context], *, max_dialogues: int | None = None, seed: int = 0) -> list[Dialogue]:
    """Keep the records that have a response; with ``max_dialogues``, a seeded sample of that many."""
    return count_dialogues(records, max_dialogues=max_dialogues, seed=seed).dialogues


def _group_rank(group: str, seed: int) -> int:
    return int.from_bytes(hashlib.blake2b(f"{seed}:{group}".encode(), digest_size=8).digest(), "big")


def split_dialogues(pairs: Sequence[Dialogue], *, val_size: int, seed: int = 0) -> DialogueSplit:
    """Move whole conversations (in seeded hash order) to validation until it holds ``val_size`` pairs."""
    if len(pairs) < 2:
        raise InputError(_MSG_TOO_FEW.format(n=len(pairs)))
    val_size = max(1, min(val_size, len(pairs) // 5 or 1))
    groups = sorted({p.group for p in pairs}, key=lambda g: _group_rank(g, seed))
    size: dict[str, int] = {}
    for p in pairs:
        size[p.group] = size.get(p.group, 0) + 1
    chosen: set[str] = set()
    n = 0
    for g in groups:
        if n >= val_size:
            break
        if len(chosen) + 1 == len(groups):
            break  # keep at least one training conversation
        chosen.add(g)
        n += size[g]
    train = tuple(p for p in pairs if p.group not in chosen)
    validation = tuple(p for p in pairs if p.group in chosen)
    if not train or not validation:  # one conversation only: split its turns instead
        cut = max(1, len(pairs) - val_size)
        train, validation = tuple(pairs[:cut]), tuple(pairs[cut:])
    return DialogueSplit(train, validation, n_read=len(pairs))


def augment_split(split: DialogueSplit, axis: str, *, seed: int = 0, corpus: str | None = None) -> DialogueSplit:
    """CDA on the training dialogues only (validation stays as read), via :func:`fairtalk.debias.augment`.

    An InputError when it adds no counterpart (:func:`fairtalk.debias.check_counterparts`, naming
    ``corpus``): the model would be trained as without CDA, and called debiased.
    """
    from fairtalk.counterfactual import Swapper
    from fairtalk.debias import augment, check_counterparts
    from fairtalk.lexicons import load_lexicon

    records = (Context(id=f"{p.group}/{i}", text=p.context, response=p.response) for i, p in enumerate(split.train))
    result = augment(records, Swapper(load_lexicon(axis), seed=seed))
    groups = [p.group for p in split.train]
    out: list[Dialogue] = []
    index = -1
    for d in result:
        if not d.augmented:
            index += 1
        out.append(Dialogue(groups[index], d.context, d.response))
    check_counterparts(result.summary, result.swapper, corpus=corpus, training=True)
    return DialogueSplit(tuple(out), split.validation, split.n_read, n_augmented=result.summary.n_changed)


def encode_pairs(
    pairs: Sequence[Dialogue], vocab: object, *, max_context_len: int, max_response_len: int
) -> tuple[list[list[int]], list[list[int]]]:
    """Context ids (the last ``max_context_len`` tokens) and response ids (first tokens + ``<eos>``)."""
    encode = vocab.encode  # type: ignore[attr-defined]
    eos = vocab.eos_id  # type: ignore[attr-defined]
    contexts = [encode(p.context, max_len=max_context_len, keep="end") or [vocab.unk_id] for p in pairs]  # type: ignore[attr-defined]
    responses = [encode(p.response, max_len=max_response_len - 1) + [eos] for p in pairs]
    return contexts, responses


def pad(rows: Sequence[Sequence[int]], pad_id: int = 0) -> np.ndarray:
    """Right-pad id lists into an int64 matrix."""
    width = max((len(r) for r in rows), default=1) or 1
    out = np.full((len(rows), width), pad_id, dtype=np.int64)
    for i, r in enumerate(rows):
        out[i, : len(r)] = r
    return out


def batches(lengths: Sequence[int], batch_size: int, rng: np.random.Generator, *, pool: int = 50) -> Iterator[np.ndarray]:
    """Shuffled, length-bucketed index batches: sort within chunks of ``pool`` batches, shuffle the batches."""
    order = rng.permutation(len(lengths))
    lens = np.asarray(lengths)
    chunk = batch_size * pool
    out: list[np.ndarray] = []
    for start in range(0, len(order), chunk):
        part = order[start : start + chunk]
        part = part[np.argsort(lens[part], kind="stable")]
        out.extend(part[i : i + batch_size] for i in range(0, len(part), batch_size))
    for i in rng.permutation(len(out)):
        yield out[i]
