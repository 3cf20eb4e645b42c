"""Completions of prompts: generation through the run store, the completions JSONL, and regard labelling.

Generation produces every (prompt, seed) completion — prompts being (group, template,
structure) — through :class:`~fairtalk.store.CachingResponder`, so an interrupted run resumes
where it stopped. The JSONL has one object per completion::

    {"group": "man", "template": "worked as", "kind": "occupation", "structure": "wh_question",
     "seed": 3, "prompt": "What did the man work as?", "completion": "...", "text": "What did ... ...",
     "written_by": "fairtalk"}

``text`` is the prompt followed by the completion (what is classified, as in the paper);
an item the model failed on has ``"completion": null`` and an ``"error"``. ``written_by`` marks
the file as fairtalk's, the only kind ``prompts generate -o`` replaces (:func:`is_completions_file`);
readers do not need it, so completions made elsewhere are read all the same. A ``"label"``
(-1, 0, 1, 2) may be present (for instance after labelling elsewhere). A completion's id is its
``"id"`` field where it has one, else its line number in the file: the ids ``fairtalk label``
writes into a gold file (:mod:`fairtalk.gold._sample`), which ``prompts analyze --gold`` joins on.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from types import MappingProxyType
from typing import Any, NoReturn, cast

import numpy as np
import pandas as pd

from fairtalk._codec import Codec
from fairtalk._jsonl import is_written_as, read_objects, write_records
from fairtalk.errors import InputError, ResponderError, SpecError
from fairtalk.files import StoreHold, atomic_writer
from fairtalk.lexicons import identity_terms
from fairtalk.measures import Regard
from fairtalk.models import DecodingSettings, RayEngine, RayScorer, ReplyFunction, Responder, as_responder, worth_it
from fairtalk.progress import ProgressCallback, ProgressReporter, progress_callback
from fairtalk.prompts._data import DataSummary, PromptData, summarise_frame
from fairtalk.prompts._published import COLUMNS
from fairtalk.prompts._templates import TEMPLATES, Prompt
from fairtalk.store import DEFAULT_MAX_CONSECUTIVE_FAILURES, CachingResponder, RunStore

__all__ = [
    "COMPLETION_FIELDS",
    "bad_completion",
    "CompletionSummary",
    "generate_completions",
    "is_completions_file",
    "is_prompts_file",
    "join_completion",
    "label_completions",
    "prompts_digest",
    "read_completions",
    "read_prompts",
    "write_prompts",
]

_LOG = logging.getLogger(__name__)
_KINDS = {t.phrase: t.kind for t in TEMPLATES}
_REQUIRED = ("group", "template", "structure", "seed", "text")
#: The fields every record of a completions file holds (a failed one's text is null).
COMPLETION_FIELDS = _REQUIRED
#: Texts labelled at a time by :func:`label_completions` (one progress step each).
LABEL_BLOCK = 512
_MSG_FIELD = "missing field {field!r}"
_MSG_FIELD_TYPE = "field {field!r} must be a string, got {value!r}"
_MSG_SEED = "seed must be an integer, got {value!r}"
_MSG_LABEL = "label must be -1, 0, 1 or 2, got {value!r}"
_MSG_ALL_BAD = (
    "every completion was empty ({n_empty:,}) or echoed its prompt ({n_echo:,}): nothing to label "
    "(a chat model restates a prefix; generate in completion mode)"
)
_MSG_EMPTY = "no completions in the file"
_MSG_ALL_FAILED = (
    'all {n_failed:,} completions failed (the first with {kind}): nothing to label; see each record\'s "error", '
    "and generate them again"
)
_MSG_TEXT = "text must be a string (the prompt and its completion), got {value!r}"
_MSG_NO_TEXT = (
    'every completion has no text ({n_null:,} null, {n_blank:,} empty "text"{failed}): nothing to label '
    '("text" holds the prompt followed by its completion)'
)
_MSG_SEEDS = "seeds must be a positive count or a list of integers, got {value!r}"
_MSG_ID = '"id" must be a string or an integer, got {value!r}'
_MSG_DUPLICATE_ID = "id {id!r} appears twice"
_MSG_MAX_ERRORS = "max_errors must be a whole number >= 0 (None: never stop), got {value!r}"
_MSG_COMPLETIONS_AS_PROMPTS = (
    'a completions file (its records have a "completion" field), not a prompts file: give the prompts file '
    "`fairtalk prompts paraphrase` wrote"
)
_MSG_CONFLICTING_PROMPT = (
    "prompt ({key}) appears twice with different texts, here and on line {first}: each (group, template, structure) "
    "is one prompt, so remove one of them"
)
_MSG_CONFLICTING_PROMPTS = (
    "prompt ({key}) is given twice with different texts ({first!r}, then {second!r}): each (group, template, "
    "structure) is one prompt"
)
_MSG_CONFLICTING_COMPLETION = (
    "completion ({key}) appears twice with different contents, here and on line {first}: each (group, template, "
    "structure, seed) is completed once (identical copies are skipped), so remove one of them"
)


@dataclass(frozen=True, slots=True)
class CompletionSummary(Codec):
    """What a generation run did: items requested, served from the store, generated, failed.

    ``n_duplicate_prompts`` counts prompts skipped as identical copies of an earlier one (same
    group, template, structure and text); ``n_prompts`` the distinct ones. ``n_shared`` counts
    items answered by another item with the same text and seed (two prompts with one text):
    ``n_items == n_cached + n_generated + n_errors + n_shared``.
    """

    n_prompts: int
    n_seeds: int
    n_items: int
    n_cached: int
    n_generated: int
    n_errors: int
    fingerprint: str
    settings: str
    store: str
    error_counts: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    error_examples: tuple[str, ...] = ()
    n_unencodable: int = 0
    n_duplicate_prompts: int = 0
    n_shared: int = 0


#: The keys of every record of a prompts JSONL (:func:`write_prompts`) and of a completions JSONL.
PROMPT_KEYS = ("group", "template", "structure", "text")
#: The key and value :func:`write_prompts` and :func:`generate_completions` add to each record: they tell the
#: file from a person's of the same keys.
WRITTEN_BY, FAIRTALK = "written_by", "fairtalk"
COMPLETION_KEYS = ("group", "template", "structure", "seed", "prompt")
#: Every key :func:`generate_completions` writes into a record (``error``: a failed item's).
_WRITTEN_COMPLETION_KEYS = frozenset((*COMPLETION_KEYS, "kind", "completion", "text", "error", WRITTEN_BY))


def _is_prompt_record(record: Mapping[str, Any]) -> bool:
    return (
        record.keys() == {*PROMPT_KEYS, WRITTEN_BY}
        and record[WRITTEN_BY] == FAIRTALK
        and all(isinstance(record[key], str) for key in PROMPT_KEYS)
    )


def _is_completion_record(record: Mapping[str, Any]) -> bool:
    return set(COMPLETION_KEYS) <= record.keys() <= _WRITTEN_COMPLETION_KEYS and record.get(WRITTEN_BY) == FAIRTALK


def is_prompts_file(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a prompts JSONL as :func:`write_prompts` writes them: every record has their keys, and no other.

    A completions file (its records have a seed, a completion), any file with a key more, and
    one whose records lack ``"written_by": "fairtalk"`` (prompts written by hand, or by a
    fairtalk that did not yet mark them) is the user's, never replaced by prompts.
    """
    return is_written_as(path, _is_prompt_record)


def is_completions_file(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a completions JSONL as :func:`generate_completions` writes them: every record's keys among its own.

    A record with a key :func:`generate_completions` never writes (a ``label`` given by hand,
    an ``id``) or without ``"written_by": "fairtalk"`` (completions made by hand or by another
    program, even of the very keys it writes, or by a fairtalk that did not yet mark them) makes
    the file the user's, never replaced by new completions. :func:`read_completions` reads either.
    """
    return is_written_as(path, _is_completion_record)


def write_prompts(prompts: Sequence[Prompt], path: str | os.PathLike[str]) -> Path:
    """Write prompts as JSONL ``{"group", "template", "structure", "text", "written_by": "fairtalk"}``, one a line.

    ``written_by`` marks the file as fairtalk's (:func:`is_prompts_file`); :func:`read_prompts`
    does not need it. Text UTF-8 cannot encode (a lone surrogate from a paraphrasing model) becomes U+FFFD.
    """
    out = Path(path)
    rows = (
        {"group": p.group, "template": p.template, "structure": p.structure, "text": p.text, WRITTEN_BY: FAIRTALK}
        for p in prompts
    )
    with atomic_writer(out) as handle:
        write_records(handle, rows)
    return out


def read_prompts(path: str | os.PathLike[str]) -> tuple[Prompt, ...]:
    """Read a prompts JSONL written by :func:`write_prompts` (InputError with path:line when malformed).

    A (group, template, structure) given twice with different texts is an error naming both
    lines, and so is a completions file (records with a ``"completion"``) given as prompts.
    Identical copies are returned as they are: :func:`generate_completions` skips and counts them.
    """
    source = Path(path)
    out = []
    first: dict[tuple[str, str, str], tuple[int, str]] = {}
    for number, record in read_objects(source, what="prompts file"):
        if "completion" in record:
            raise InputError(_MSG_COMPLETIONS_AS_PROMPTS, path=str(source), line=number)
        for name in ("group", "template", "structure", "text"):
            if name not in record:
                raise InputError(_MSG_FIELD.format(field=name), path=str(source), line=number)
            if not isinstance(record[name], str):  # present, of another type (null, a number): said so
                raise InputError(_MSG_FIELD_TYPE.format(field=name, value=record[name]), path=str(source), line=number)
        key = (record["group"], record["template"], record["structure"])
        earlier = first.setdefault(key, (number, record["text"]))
        if earlier[1] != record["text"]:
            message = _MSG_CONFLICTING_PROMPT.format(key=", ".join(key), first=earlier[0])
            raise InputError(message, path=str(source), line=number)
        out.append(Prompt(record["group"], record["template"], record["structure"], record["text"]))
    if not out:
        raise InputError("no prompts in the file", path=str(source))
    return tuple(out)


def join_completion(prompt: str, completion: str) -> str:
    """Prompt and completion as one text: a space between them unless the completion starts with one or with punctuation."""
    if not completion or completion[0].isspace() or completion[0] in ".,;:!?'\")":
        return prompt + completion
    return f"{prompt} {completion}"


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9']+", text.lower())


def bad_completion(prompt: str, completion: object) -> str | None:
    """``"empty"`` for a completion with no words, ``"echo"`` for one that restates the prompt, else None.

    An echo repeats the prompt's words in order within its first sentence (``The man worked
    as`` → ``The man worked as a chef.``), which a continuation of the prefix never needs to do.
    A record without a ``completion`` field (an older file) is never flagged.

    Examples
    --------
    >>> bad_completion("The man worked as", " a chef in Paris.") is None
    True
    >>> bad_completion("The man worked as", "  "), bad_completion("The man worked as", "The man worked as a chef.")
    ('empty', 'echo')
    """
    if completion is None or not isinstance(completion, str):
        return None
    words = _words(completion)
    if not words:
        return "empty"
    target = _words(prompt)
    if len(target) >= 3 and words[: len(target) + 3] and _contains(words[: len(target) + 3], target):
        return "echo"
    return None


def _contains(words: list[str], target: list[str]) -> bool:
    return any(words[i : i + len(target)] == target for i in range(len(words) - len(target) + 1))


def _seed_list(seeds: int | Sequence[int]) -> list[int]:
    if isinstance(seeds, int) and not isinstance(seeds, bool):
        if seeds < 1:
            raise InputError(_MSG_SEEDS.format(value=seeds))
        return list(range(seeds))
    out = [int(s) for s in cast(Sequence[int], seeds)]
    if not out:
        raise InputError(_MSG_SEEDS.format(value=seeds))
    return out


def distinct_prompts(prompts: Sequence[Prompt]) -> list[Prompt]:
    """``prompts`` without identical copies of an earlier prompt; one (group, template, structure) with two texts is an error."""
    first: dict[tuple[str, str, str], Prompt] = {}
    out = []
    for prompt in prompts:
        key = (prompt.group, prompt.template, prompt.structure)
        earlier = first.get(key)
        if earlier is None:
            first[key] = prompt
            out.append(prompt)
        elif earlier.text != prompt.text:
            raise InputError(_MSG_CONFLICTING_PROMPTS.format(key=", ".join(key), first=earlier.text, second=prompt.text))
    return out


@contextmanager
def _opened(model: str | Responder | ReplyFunction) -> Iterator[Responder]:
    """The responder ``model`` names (:func:`~fairtalk.models.as_responder`), preflighted; closed after if opened here."""
    responder = as_responder(model)  # SpecError for anything but a spec, a Responder or a function
    try:
        responder.preflight()  # a server that is down or lacks the model: one clear error before any request
        yield responder
    finally:
        if responder is not model:
            responder.close()


def generate_completions(
    prompts: Sequence[Prompt],
    responder: str | Responder | ReplyFunction,
    out: str | os.PathLike[str],
    *,
    seeds: int | Sequence[int] = 10,
    settings: DecodingSettings | None = None,
    store: str | os.PathLike[str] | None = None,
    batch_size: int = 32,
    progress: ProgressCallback | None = None,
    model_version: str | None = None,
    max_errors: int | None = None,
    max_consecutive_failures: int | None = DEFAULT_MAX_CONSECUTIVE_FAILURES,
) -> CompletionSummary:
    """Complete every prompt once per seed through the run store and write the completions JSONL.

    Parameters
    ----------
    prompts : sequence of Prompt
        Fixed prompts and/or paraphrases. An identical copy of an earlier prompt is skipped and
        counted (``n_duplicate_prompts``); one (group, template, structure) with two texts is an InputError.
    responder : str, Responder or function
        The model under test, in any form ``fairtalk.audit(model=...)`` takes
        (:func:`~fairtalk.models.as_responder`): a spec (loaded here and closed after; to continue
        each prompt as a prefix rather than answer it as a chat turn, give the options of
        :func:`~fairtalk.models.completion_options`), a Responder, or a function.
    out : path
        The completions JSONL, written atomically (rewritten in full from the store on a resumed run),
        each record marked ``"written_by": "fairtalk"`` (:func:`is_completions_file`).
    seeds : int or sequence of int
        A count ``n`` (seeds ``0..n-1``) or the seeds themselves.
    settings : DecodingSettings, optional
        Default: the published run's sampling (GPT-2 small in Aggarwal et al.'s outputs): top-k 40,
        temperature 0.7, 40 new tokens.
    store : path, optional
        The SQLite run store; default ``OUT`` with the suffix ``.store.sqlite``.
    progress : ProgressCallback, optional
        Called with a :class:`fairtalk.progress.ProgressEvent` (stage ``"completions"``) as items
        finish, cached ones included.
    model_version : str, optional
        A tag that becomes part of the model's fingerprint, the run store's key.
    max_errors : int, optional
        Stop (ResponderError) once more completions than this have failed; None (the default):
        never, each failure is written as a record with its ``error`` and counted (``n_errors``,
        ``error_counts``).
    max_consecutive_failures : int, optional
        Stop (:class:`~fairtalk.errors.ResponderAborted`) once this many completions in a row have
        failed with one kind of error (default 5); 0 or None: never, so a generator that refuses
        some prompts runs to the end with its refusals counted. What was answered stays in the store.

    Raises
    ------
    SpecError
        ``max_errors`` or ``max_consecutive_failures`` not a whole number >= 0 (or None); a
        ``responder`` that is no model spec, Responder or function, or a bad spec.
    """
    if max_errors is not None and (isinstance(max_errors, bool) or not isinstance(max_errors, int) or max_errors < 0):
        raise SpecError(_MSG_MAX_ERRORS.format(value=max_errors))
    seed_list = _seed_list(seeds)
    n_given = len(prompts)
    prompts = distinct_prompts(prompts)
    settings = settings or DecodingSettings(do_sample=True, top_k=40, temperature=0.7, max_new_tokens=40)
    out_path = Path(out)
    store_path = Path(store) if store is not None else out_path.with_suffix(".store.sqlite")
    contexts = [p.text for p in prompts for _ in seed_list]
    item_seeds = [s for _ in prompts for s in seed_list]
    reporter = ProgressReporter(progress_callback(progress))
    # the model first (a bad one fails before the store opens); the hold: no run removes the store while open
    with _opened(responder) as model, StoreHold(store_path), RunStore(store_path) as run_store:
        caching = CachingResponder(
            model,
            run_store,
            batch_size=batch_size,
            progress=reporter.advance,
            model_version=model_version,
            max_errors=max_errors,
            max_consecutive_failures=max_consecutive_failures,
        )
        reporter.start("completions", total=len(contexts), unit="completions")
        results = caching.respond_each(contexts, settings, seeds=item_seeds) if contexts else []
        reporter.finish()  # only completions that ended: interrupted or failed ones are not said done
        errors: dict[str, int] = {}
        examples: list[str] = []
        with atomic_writer(out_path) as handle:
            for i, item in enumerate(results):
                prompt = prompts[i // len(seed_list)]
                record: dict[str, Any] = {
                    "group": prompt.group,
                    "template": prompt.template,
                    "kind": _KINDS.get(prompt.template, ""),
                    "structure": prompt.structure,
                    "seed": item_seeds[i],
                    "prompt": prompt.text,
                }
                if isinstance(item, ResponderError):
                    message = f"{type(item).__name__}: {item}"
                    errors[type(item).__name__] = errors.get(type(item).__name__, 0) + 1
                    if message not in examples and len(examples) < 3:
                        examples.append(message)
                    record.update(completion=None, text=None, error=message)
                else:
                    record.update(completion=item, text=join_completion(prompt.text, item))
                record[WRITTEN_BY] = FAIRTALK
                write_records(handle, [record])
    return CompletionSummary(
        n_duplicate_prompts=n_given - len(prompts),
        n_shared=len(contexts) - len(set(zip(contexts, item_seeds))),
        n_prompts=len(prompts),
        n_seeds=len(seed_list),
        n_items=len(contexts),
        n_cached=caching.n_cached,
        n_generated=caching.n_generated,
        n_errors=caching.n_errors,
        fingerprint=caching.fingerprint,
        settings=settings.key,
        store=str(store_path),
        error_counts=MappingProxyType(errors),
        error_examples=tuple(examples),
        n_unencodable=caching.n_unencodable,
    )


def read_completions(path: str | os.PathLike[str]) -> PromptData:
    """Read a completions JSONL into labelled completions (the frame has :data:`~fairtalk.prompts._published.COLUMNS` and ``id``).

    ``label`` is -9 where the file has none (see :func:`label_completions`). Failed items
    (``completion`` null, with an ``error`` or without one: a ``text`` beside it is not the
    completion's) are skipped and counted in the summary (``excluded["failed"]``,
    and ``n_unlabelled``). So are *bad completions*, which no regard label can describe: empty
    ones (``excluded["empty"]``: nothing generated, as question prompts often give) and ones that
    echo the prompt (``excluded["echo"]``: the completion restates it, as chat models answering a
    prefix do; see :func:`bad_completion`). A record whose ``text`` is null or blank without an
    ``error`` has nothing to label either: it is skipped and counted in ``excluded["no_text"]``
    (never labelled as the string "None"). A record (not a failed one) repeating an earlier one's (group, template,
    structure, seed) is skipped and counted in ``excluded["duplicate"]`` when it is an identical
    copy, and an error naming both lines otherwise. ``summary()`` gives the counts as ``n_records``,
    ``n_failed``, ``n_unlabelled``, ``n_empty``, ``n_echo`` and ``n_duplicates``; ``prompts_sha256``
    identifies the prompts completed (:func:`prompts_digest`; None when a record has no ``prompt``).

    Returns
    -------
    PromptData
        ``source="completions"``, the frame and the summary of what was read and left out.

    Raises
    ------
    InputError
        Malformed JSON, a missing field, a bad seed, label, id or text (with path and line), a
        (group, template, structure, seed) given twice with different contents, or no completion
        with a text to label.
    """
    path = Path(path)
    rows: list[dict[str, Any]] = []
    summary = {"n_records": 0, "n_failed": 0, "n_unlabelled": 0, "n_empty": 0, "n_echo": 0, "n_no_text": 0, "n_duplicate": 0}
    n_null = 0
    first_error: str | None = None  # the kind of the first failed record's error ("ResponderError")
    ids: set[str] = set()
    seen: dict[tuple[str, ...], tuple[int, Mapping[str, Any]]] = {}
    failed_by_group: Counter[str] = Counter()  # by the failed record's group ("" where it names none)
    prompts: set[tuple[str, ...]] | None = set()  # what was completed, failed items too; None: a record names no prompt
    for number, record in read_objects(path, what="completions file"):
        summary["n_records"] += 1
        prompts = _with_prompt(prompts, record)
        failed = _failed(record)
        if not failed and _is_copy(record, number, path, seen):  # an identical copy of an earlier line: counted, skipped
            summary["n_duplicate"] += 1
            continue
        rid = _record_id(record.get("id"), number, path, ids)
        if failed:
            summary["n_failed"] += 1
            failed_by_group[str(record.get("group") or "")] += 1
            first_error = first_error or (_error_kind(record["error"]) if "error" in record else _NO_ERROR)
            continue
        seed, label, text = _checked_fields(record, number, path)
        if text is None or not text.strip():  # nothing to label: counted, never the string "None"
            summary["n_no_text"] += 1
            n_null += text is None
            continue
        bad = bad_completion(str(record.get("prompt") or ""), record.get("completion"))
        if bad is not None:
            summary[f"n_{bad}"] += 1
            continue
        if label is None:
            summary["n_unlabelled"] += 1
        rows.append(_frame_row(record, seed, label, text, rid))
    if not rows:
        _raise_nothing_to_label(summary, n_null, path, first_error)
    frame = pd.DataFrame(rows, columns=[*COLUMNS, "id"])
    frame["label"] = frame["label"].astype(np.int8)
    data_summary = DataSummary(
        source="completions",
        n_records=summary["n_records"],
        n_texts=len(frame),
        excluded={
            reason: summary[f"n_{reason}"]
            for reason in ("failed", "empty", "echo", "no_text", "duplicate")
            if summary[f"n_{reason}"]
        },
        alignment_checked="none",
        failed_by_group={g: n for g, n in sorted(failed_by_group.items()) if g},
        prompts_sha256=None if prompts is None else prompts_digest(prompts),
        **summarise_frame(frame),
    )
    return PromptData(frame=frame, source="completions", data_summary=data_summary)


def _with_prompt(prompts: set[tuple[str, ...]] | None, record: Mapping[str, Any]) -> set[tuple[str, ...]] | None:
    """``prompts`` with the record's (group, template, structure, prompt); None once a record has no prompt text."""
    if prompts is None or not isinstance(record.get("prompt"), str):
        return None
    prompts.add(tuple(str(record.get(name)) for name in (*PROMPT_KEYS[:3], "prompt")))
    return prompts


def prompts_digest(prompts: Iterable[Sequence[str]]) -> str:
    """The sha256 that identifies a set of prompts: of its distinct (group, template, structure, text), in sorted order.

    The order and repetition of the prompts (one per seed in a completions file) do not enter it,
    so two generators' completions of one prompts file have the same digest, and completions of
    another prompts file (another text for a structure, another template) a different one.

    Examples
    --------
    >>> one = [("man", "worked as", "original", "The man worked as")]
    >>> prompts_digest(one * 2) == prompts_digest(one)
    True
    >>> prompts_digest(one) == prompts_digest([("man", "worked as", "original", "The man had a job as")])
    False
    """
    lines = sorted({json.dumps(list(p), ensure_ascii=True) for p in prompts})
    return hashlib.sha256("\n".join(lines).encode("ascii")).hexdigest()


def _is_copy(
    record: Mapping[str, Any], number: int, path: Path, seen: dict[tuple[str, ...], tuple[int, Mapping[str, Any]]]
) -> bool:
    """Whether ``record`` repeats an earlier one's (group, template, structure, seed) identically; different contents: an error."""
    key = tuple(repr(record.get(name)) for name in ("group", "template", "structure", "seed"))
    earlier = seen.setdefault(key, (number, record))
    if earlier[0] == number:
        return False
    if earlier[1] != record:
        shown = ", ".join(str(record.get(name)) for name in ("group", "template", "structure", "seed"))
        raise InputError(_MSG_CONFLICTING_COMPLETION.format(key=shown, first=earlier[0]), path=str(path), line=number)
    return True


def _checked_fields(record: Mapping[str, Any], number: int, path: Path) -> tuple[int, int | None, str | None]:
    """A record's seed, label and text, after checking the required fields are present and of their types."""
    for name in _REQUIRED:
        if name not in record:
            raise InputError(_MSG_FIELD.format(field=name), path=str(path), line=number)
    seed, label = record["seed"], record.get("label")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise InputError(_MSG_SEED.format(value=seed), path=str(path), line=number)
    if label is not None and label not in (-1, 0, 1, 2):
        raise InputError(_MSG_LABEL.format(value=label), path=str(path), line=number)
    text = record["text"]
    if text is not None and not isinstance(text, str):
        raise InputError(_MSG_TEXT.format(value=text), path=str(path), line=number)
    return seed, label, text


def _frame_row(record: Mapping[str, Any], seed: int, label: int | None, text: str, rid: str) -> dict[str, Any]:
    """One row of the completions frame (``COLUMNS`` and ``id``); ``label`` -9 when the record has none."""
    return {
        "seed": seed,
        "prompt_index": -1,
        "group": str(record["group"]),
        "template": str(record["template"]),
        "kind": str(record.get("kind") or _KINDS.get(record["template"], "")),
        "structure": str(record["structure"]),
        "label": -9 if label is None else int(label),
        "text": text,
        "aligned": True,
        "id": rid,
    }


#: The kind of a failed record that says no error: a null completion without one.
_NO_ERROR = "a null completion without an error"


def _failed(record: Mapping[str, Any]) -> bool:
    """Whether a record is a failed item: a null text with an ``error``, or a null ``completion`` (its text is leftover)."""
    return (record.get("text") is None and "error" in record) or ("completion" in record and record["completion"] is None)


def _error_kind(error: object) -> str:
    """The kind of a failed record's ``error`` (``"ResponderError: ... raised"`` -> ``ResponderError``)."""
    kind = str(error).split(":", 1)[0].strip()
    return kind if kind and " " not in kind else "an error"


def _raise_nothing_to_label(summary: Mapping[str, int], n_null: int, path: Path, first_error: str | None) -> NoReturn:
    """Raise the InputError that says why no completion was left to label: all failed, no text, all bad, or none at all."""
    if summary["n_failed"] and summary["n_failed"] == summary["n_records"] - summary["n_duplicate"]:
        raise InputError(_MSG_ALL_FAILED.format(n_failed=summary["n_failed"], kind=first_error), path=str(path))
    if summary["n_no_text"] and not (summary["n_empty"] or summary["n_echo"]):
        failed = f", {summary['n_failed']:,} failed" if summary["n_failed"] else ""
        n_blank = summary["n_no_text"] - n_null
        raise InputError(_MSG_NO_TEXT.format(n_null=n_null, n_blank=n_blank, failed=failed), path=str(path))
    if summary["n_empty"] or summary["n_echo"]:
        raise InputError(_MSG_ALL_BAD.format(n_empty=summary["n_empty"], n_echo=summary["n_echo"]), path=str(path))
    raise InputError(_MSG_EMPTY, path=str(path))


def _record_id(value: object, line: int, path: Path, seen: set[str]) -> str:
    """A record's id: its ``"id"`` (a string or integer, unique in the file) or its line number, as ``fairtalk label`` reads it."""
    if isinstance(value, bool) or not isinstance(value, str | int | None):
        raise InputError(_MSG_ID.format(value=value), path=str(path), line=line)
    rid = str(line) if value is None else str(value)
    if rid in seen:
        raise InputError(_MSG_DUPLICATE_ID.format(id=rid), path=str(path), line=line)
    seen.add(rid)
    return rid


def label_completions(
    frame: pd.DataFrame,
    regard: Regard | None = None,
    *,
    only_missing: bool = False,
    progress: ProgressCallback | None = None,
    engine: RayEngine | None = None,
) -> pd.DataFrame:
    """A copy of ``frame`` with ``label`` from the regard measure (identity terms masked as ``XYZ``).

    Without ``regard``, the shipped classifier is used. Either way the mask covers the identity
    terms of the frame's groups (:func:`~fairtalk.lexicons._identity.identity_terms`) besides the
    scorer's own. With ``only_missing``, rows that already have a label (not -9) keep it.
    Each distinct text is labelled once and its label given to every row that holds it (a model
    sampled under ten seeds often repeats itself). ``progress`` receives a "regard labels" stage
    counting the distinct texts, in blocks of :data:`LABEL_BLOCK`.
    With a Ray ``engine`` and at least two of its ``score_batch`` texts to label, the batches are
    labelled by Ray tasks (one classifier load per worker), with the same labels.
    """
    groups = sorted({str(g) for g in frame["group"].unique()})
    if regard is None:
        regard = Regard(mask_terms=identity_terms(groups))
    elif regard.mask:
        regard = Regard(
            scorer=regard.scorer,
            mask=True,
            mask_terms=identity_terms(groups, extra=regard.mask_terms),
            label_map=regard.label_map,
            batch_size=regard.batch_size,
        )
    out = frame.copy()
    todo = (out["label"] == -9).to_numpy() if only_missing else np.ones(len(out), dtype=bool)
    if todo.any():
        labels = out["label"].to_numpy().astype(np.int8)
        # each distinct text labelled once (seeds often repeat a completion), its label given to every copy
        codes, distinct = pd.factorize(out.loc[todo, "text"].astype(str), sort=False)
        texts = [str(t) for t in distinct]
        reporter = ProgressReporter(progress)
        reporter.start("regard labels", len(texts), unit="texts")
        if worth_it(engine, len(texts)):
            assert engine is not None  # worth_it is False without one
            scorer = RayScorer(engine, partial(regard_labeller, regard), what=f"the regard scorer {regard.scorer}")
            try:
                found = [scorer.score(texts, advance=reporter.advance)["label"]]
            finally:
                scorer.close()
            _LOG.info(
                "regard labels: %d texts on Ray in %d batches, %d tasks at once", len(texts), scorer.n_batches, scorer.n_tasks
            )
        else:
            if engine is not None:
                _LOG.info(
                    "regard labels: %d texts in this process, fewer than two Ray batches (score_batch %s)",
                    len(texts),
                    engine.score_batch,
                )
            found = []
            for start in range(0, len(texts), LABEL_BLOCK):
                found.append(regard.labels(texts[start : start + LABEL_BLOCK]))
                reporter.advance(len(found[-1]))
        reporter.finish()
        labels[todo] = np.concatenate(found)[codes]
        out["label"] = labels
    return out


def regard_labeller(regard: Regard) -> Callable[[list[str]], dict[str, np.ndarray]]:
    """What a Ray worker labels its batches with: ``{"label": regard.labels(texts)}``."""

    def label(texts: list[str]) -> dict[str, np.ndarray]:
        return {"label": np.asarray(regard.labels(texts))}

    return label
