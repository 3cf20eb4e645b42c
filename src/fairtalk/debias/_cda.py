"""Counterpart data augmentation (CDA, paper 001 §4.1): add each dialogue's group-swapped twin.

For every context–response pair the original is kept and, when the swap changes either side,
the counterpart pair follows it: every axis word on *both* sides replaced by its counterpart
with one :class:`~fairtalk.counterfactual.Swapper` (both directions in one pass, so ``he`` and
``she`` trade places). Unchanged dialogues are never duplicated.

Consistent choices
------------------
A word with several counterparts (``cool`` -> lit / sick / ill) gets the swapper's choice at
its first occurrence in the dialogue (context first, then response); every later occurrence of
the same word in that dialogue reuses it, with its own case pattern (lower, Title or UPPER) and
its own characters. A word is the same as the swapper matches it (:func:`~fairtalk.counterfactual.term_key`):
``ｃｏｏｌ`` (fullwidth) is ``cool`` and takes its choice, written fullwidth, and ``what‘s up``
and ``what’s up`` are ``what's up``, keeping their apostrophe.
``her`` and ``his`` are the exception: the swapper resolves them by grammatical role
(``her dog`` -> ``his dog`` but ``saw her`` -> ``saw him``), so each occurrence keeps its
own, role-based choice.

Output
------
:func:`write_dialogues` writes JSON Lines ``{"context", "response", "augmented", "origin"}``,
which :func:`fairtalk.corpora.read_corpus` reads back (``jsonl:OUT``) with the reply as
``Context.response``, so an augmented file is a training corpus. It writes to a temporary file
beside the target and renames it at the end, and refuses a target that is one of its inputs.

Augmented once
--------------
Its twins already follow their originals, so :func:`augment` refuses a corpus read from such a
file (:func:`is_augmented_corpus`): CDA on it again would add twins of the twins (and swap each
twin back into a second copy of its original). ``again=True`` augments it all the same, for
another axis' twins on purpose.
"""

from __future__ import annotations

import gzip
import io
import os
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from fairtalk._codec import SKIP, Codec
from fairtalk._jsonl import first_record, parse_object, write_records
from fairtalk.counterfactual import Swapper, in_form_of, term_key
from fairtalk.errors import FairtalkError, InputError, OutputError
from fairtalk.files import atomic_writer, same_file
from fairtalk.records import Context, Swap

__all__ = [
    "AugmentSummary",
    "Augmentation",
    "AugmentedDialogue",
    "augment",
    "check_counterparts",
    "check_not_augmented",
    "is_augmented_corpus",
    "is_dialogues_file",
    "write_dialogues",
]

#: Words the swapper resolves by grammatical role, exempt from the per-dialogue consistency rule.
ROLE_RESOLVED = frozenset({"her", "his"})
#: How many of the most swapped terms :class:`AugmentSummary` keeps.
N_TOP_TERMS = 10
_SPEC_SCHEMES = frozenset({"builtin", "csv", "jsonl", "parlai", "parquet", "text", "tsv", "twitter"})

_MSG_NO_COUNTERPARTS = (
    "CDA adds no counterpart, so nothing would be debiased: none of the {n:,} {what}{of} uses a word of the "
    "{axis} axis' {n_pairs:,} word pairs; give a corpus that uses the axis' words, or another axis"
)
_MSG_NOT_SWAPPER = "augment needs a fairtalk.counterfactual.Swapper, got {type}"
_MSG_NOT_CONTEXT = "augment expects fairtalk.records.Context records, got {type}"
_MSG_AUGMENTED = (
    'an augmented corpus fairtalk wrote (its records carry "augmented" and "origin"): CDA on it again would add '
    "twins of its twins; {way_out}"
)
_WAY_OUT_AUGMENT = (
    "augment the corpus it was made from, or, for another axis' twins on purpose, augment it with again=True "
    "(fairtalk augment --again)"
)
_WAY_OUT_TRAIN = "train with debias cda on the corpus it was made from, or without cda on this one (its twins are there)"
_MSG_SAME_FILE = "refusing to write the augmented corpus over its own input {input!r}; choose another output path"


@dataclass(frozen=True, slots=True)
class AugmentedDialogue(Codec):
    """One output dialogue: an original pair (``augmented=False``) or its counterpart (``True``)."""

    context: str
    response: str
    augmented: bool
    origin: str = ""
    swaps: tuple[Swap, ...] = field(default=(), metadata=SKIP)  # not in the JSON Lines record


@dataclass(frozen=True, slots=True)
class AugmentSummary:
    """Counts of one augmentation pass.

    ``n_read`` records came in; ``n_no_response`` of them had no (or an empty) response and were
    left out, leaving ``n_in`` usable pairs; ``n_changed`` counterparts were added, so
    ``n_out = n_in + n_changed``. ``top_terms`` holds the most swapped source words with their
    counts, each word as the swapper keys it (lowercase, fullwidth forms folded, ``'``).
    """

    n_read: int
    n_no_response: int
    n_in: int
    n_changed: int
    n_out: int
    top_terms: tuple[tuple[str, int], ...]

    @property
    def ratio(self) -> float | None:
        """``n_out / n_in`` (the paper: 4.20M / 2.58M = 1.63), None when nothing was usable."""
        return self.n_out / self.n_in if self.n_in else None


class Augmentation:
    """The augmented stream of :func:`augment`; ``summary`` describes the latest (or current) pass.

    Re-iterable when its input is (a list, a corpus); each pass resets the counts.
    """

    def __init__(self, dialogues: Iterable[Context], swapper: Swapper) -> None:
        self._dialogues = dialogues
        self.swapper = swapper
        self._counts = Counter[str]()
        self._terms = Counter[str]()

    def __repr__(self) -> str:
        return f"Augmentation(swapper={self.swapper!r})"

    @property
    def summary(self) -> AugmentSummary:
        """Counts so far: read, without a response, usable, counterparts added, written."""
        counts = self._counts
        return AugmentSummary(
            n_read=counts["read"],
            n_no_response=counts["no_response"],
            n_in=counts["in"],
            n_changed=counts["changed"],
            n_out=counts["in"] + counts["changed"],
            top_terms=tuple(self._terms.most_common(N_TOP_TERMS)),
        )

    def __iter__(self) -> Iterator[AugmentedDialogue]:
        """Yield each usable pair, followed by its counterpart when the swap changed something."""
        self._counts = counts = Counter[str]()
        self._terms = terms = Counter[str]()
        swapper = self.swapper
        for record in self._dialogues:
            if not isinstance(record, Context):
                raise TypeError(_MSG_NOT_CONTEXT.format(type=type(record).__name__))
            counts["read"] += 1
            if not record.response:
                counts["no_response"] += 1
                continue
            counts["in"] += 1
            yield AugmentedDialogue(record.text, record.response, False, record.origin)
            context, response, swaps = swap_dialogue(swapper, record.text, record.response)
            if context == record.text and response == record.response:
                continue
            counts["changed"] += 1
            terms.update(term_key(swap.source) for swap in swaps)
            yield AugmentedDialogue(context, response, True, record.origin, swaps)


def check_counterparts(
    summary: AugmentSummary, swapper: Swapper, *, corpus: str | os.PathLike[str] | None = None, training: bool = False
) -> None:
    """Raise InputError when an augmentation that had dialogues added no counterpart: CDA would debias nothing.

    The decision of ``fairtalk augment`` (nothing is written) and of CDA training (refused
    before any training): their output would be the corpus as it was, called debiased.
    ``corpus`` names the dialogues in the message (``training``: they are its training
    dialogues). An augmentation with no usable dialogue at all is left to the caller's own error.

    Examples
    --------
    >>> from fairtalk.lexicons import load_lexicon
    >>> from fairtalk.records import Context
    >>> result = augment([Context("1", "hi", response="hello")], Swapper(load_lexicon("gender")))
    >>> _ = list(result)
    >>> check_counterparts(result.summary, result.swapper, corpus="hi.jsonl")
    Traceback (most recent call last):
    ...
    fairtalk.errors.InputError: CDA adds no counterpart, so nothing would be debiased: none of the 1 dialogue(s) of hi.jsonl uses a word of the gender axis' 125 word pairs; give a corpus that uses the axis' words, or another axis
    """
    if summary.n_in and not summary.n_changed:
        lexicon = swapper.lexicon
        of = "" if corpus is None else f" of {os.fspath(corpus)}"
        raise InputError(
            _MSG_NO_COUNTERPARTS.format(
                n=summary.n_in,
                what="training dialogue(s)" if training else "dialogue(s)",
                of=of,
                axis=lexicon.axis,
                n_pairs=len(lexicon.pairs),
            )
        )


def augment(dialogues: Iterable[Context], swapper: Swapper, *, again: bool = False) -> Augmentation:
    """Counterpart data augmentation: stream each pair and, when it changes, its swapped twin.

    Parameters
    ----------
    dialogues : iterable of Context
        Context–response records (``Context.text`` and ``Context.response``), e.g. a corpus from
        :func:`fairtalk.corpora.read_corpus`. Records without a response are counted
        (``summary.n_no_response``) and left out.
    swapper : Swapper
        Swaps the axis words of both sides; its ``seed`` fixes the many-to-many choices.
    again : bool
        Augment a corpus read from an augmented corpus file all the same (another axis' twins).

    Returns
    -------
    Augmentation
        Iterable of :class:`AugmentedDialogue`; ``summary`` holds the counts once iterated.

    Raises
    ------
    InputError
        ``dialogues`` is a corpus read from an augmented corpus fairtalk wrote
        (:func:`is_augmented_corpus` of its ``path``), and ``again`` is not given.

    Examples
    --------
    >>> from fairtalk.lexicons import load_lexicon
    >>> from fairtalk.records import Context
    >>> data = [Context("1", "is he a doctor?", response="yes he is"), Context("2", "hi", response="hello")]
    >>> result = augment(data, Swapper(load_lexicon("gender")))
    >>> [(d.context, d.response, d.augmented) for d in result]
    [('is he a doctor?', 'yes he is', False), ('is she a doctor?', 'yes she is', True), ('hi', 'hello', False)]
    >>> result.summary.n_in, result.summary.n_changed, result.summary.n_out
    (2, 1, 3)
    """
    if not isinstance(swapper, Swapper):
        raise TypeError(_MSG_NOT_SWAPPER.format(type=type(swapper).__name__))
    if not again:
        check_not_augmented(dialogues)
    return Augmentation(dialogues, swapper)


def check_not_augmented(dialogues: object, *, training: bool = False) -> None:
    """Raise InputError when ``dialogues`` is a corpus read from an augmented corpus fairtalk wrote.

    The corpus' file is its ``path`` (:attr:`fairtalk.corpora.Corpus.path`); other iterables
    pass. The message names the way out: for ``augment``, or with ``training``, for CDA training.
    """
    path = getattr(dialogues, "path", None)
    if isinstance(path, (str, os.PathLike)) and is_augmented_corpus(path):
        way_out = _WAY_OUT_TRAIN if training else _WAY_OUT_AUGMENT
        raise InputError(_MSG_AUGMENTED.format(way_out=way_out), path=os.fspath(path))


def swap_dialogue(swapper: Swapper, context: str, response: str) -> tuple[str, str, tuple[Swap, ...]]:
    """Swap both sides of one dialogue, reusing each many-to-many word's first choice throughout.

    Returns the swapped context, the swapped response and the swaps made (context's first; spans
    index the side they came from).
    """
    chosen: dict[str, str] = {}
    out: list[str] = []
    all_swaps: list[Swap] = []
    for text in (context, response):
        result = swapper.swap(text)
        if result.no_match:
            out.append(text)
            continue
        parts: list[str] = []
        position = 0
        for swap in result.swaps:
            key = term_key(swap.source)
            target = swap.target
            if swap.n_choices > 1 and key not in ROLE_RESOLVED:
                first = chosen.setdefault(key, term_key(target))
                if first != term_key(target):
                    target = in_form_of(swap.source, _same_case(target, first))
                    swap = Swap(swap.start, swap.end, swap.source, target, swap.source_side, swap.n_choices)
            parts += (text[position : swap.start], target)
            position = swap.end
            all_swaps.append(swap)
        parts.append(text[position:])
        out.append("".join(parts))
    return out[0], out[1], tuple(all_swaps)


def _same_case(model: str, word: str) -> str:
    """Give lowercase ``word`` the case pattern (UPPER, Title or lower) of ``model``."""
    if len(model) > 1 and model.isupper():
        return word.upper()
    if model[:1].isupper():
        return word[:1].upper() + word[1:]
    return word


def _input_path(spec: str | os.PathLike[str]) -> Path:
    """The file behind a corpus spec (``jsonl:PATH`` -> PATH) or a bare path."""
    text = os.fspath(spec)
    scheme, sep, rest = text.partition(":")
    if sep and scheme in _SPEC_SCHEMES and not Path(text).exists():
        return Path(rest)
    return Path(text)


#: The keys of every record :func:`write_dialogues` writes.
DIALOGUE_KEYS = ("context", "response", "augmented", "origin")
#: A first line longer than this is no augmented dialogue of fairtalk's.
_MAX_FIRST_LINE = 1 << 20


def is_dialogues_file(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is an augmented corpus as :func:`write_dialogues` writes it (gzipped when it ends in ``.gz``).

    Its first record has the keys of a dialogue (a file holding none counts too).
    """
    keys = _first_keys(path)
    return keys is not None and (not keys or set(DIALOGUE_KEYS) <= keys)


def is_augmented_corpus(path: str | os.PathLike[str]) -> bool:
    r"""Whether the corpus file ``path`` is an augmented corpus :func:`write_dialogues` wrote, holding a dialogue.

    Its first record has the keys of a dialogue, ``augmented`` and ``origin`` among them.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "corpus.jsonl"
    >>> _ = path.write_text('{"context": "hi", "response": "hello"}\n', encoding="utf-8")
    >>> is_augmented_corpus(path)
    False
    """
    keys = _first_keys(path)
    return bool(keys) and set(DIALOGUE_KEYS) <= (keys or set())


def _first_keys(path: str | os.PathLike[str]) -> set[str] | None:
    """The keys of a JSONL file's first record (an empty set: no record); None when it is not one."""
    if Path(path).suffix != ".gz":
        record = first_record(path)
        return None if record is None else set(record)
    if not os.path.isfile(path):
        return None
    try:
        with gzip.open(path, "rb") as handle:
            line = handle.readline(_MAX_FIRST_LINE)
        text = line.decode("utf-8").strip()
        return set(parse_object(text, os.fspath(path), 1)) if text else set()
    except (OSError, EOFError, ValueError, FairtalkError):
        return None


def write_dialogues(
    dialogues: Iterable[AugmentedDialogue],
    path: str | os.PathLike[str],
    *,
    inputs: Iterable[str | os.PathLike[str]] = (),
) -> int:
    """Write dialogues as JSON Lines ``{"context", "response", "augmented", "origin"}``.

    Parameters
    ----------
    dialogues : iterable of AugmentedDialogue
        Usually an :class:`Augmentation`; consumed as it is written.
    path : str or path
        The output file (gzip-compressed when it ends in ``.gz``). Written to a temporary file in
        the same folder and renamed at the end, so a failure leaves no half-written output.
    inputs : iterable of str or path
        Files (or corpus specs such as ``jsonl:PATH``) the dialogues are read from; the output
        may not be any of them.

    Returns
    -------
    int
        The number of dialogues written.

    Raises
    ------
    OutputError
        ``path`` is one of ``inputs`` (also through a link), or cannot be written.
    """
    target = Path(path)
    for source in inputs:
        if str(source).startswith("builtin:"):
            continue
        if same_file(target, _input_path(source)):
            raise OutputError(_MSG_SAME_FILE.format(input=os.fspath(source)), path=os.fspath(path))
    with atomic_writer(target, binary=True) as raw:
        stream = gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) if target.suffix == ".gz" else raw
        text = io.TextIOWrapper(stream, encoding="utf-8", newline="\n")
        try:
            n_written = write_records(text, (dialogue.to_dict() for dialogue in dialogues))
            text.flush()
        finally:
            text.detach()  # the writer closes the file, not the wrapper
            if stream is not raw:
                stream.close()
    return n_written
