"""Retrieval pool filtering (paper 001 §4): remove biased candidate responses from the pool.

A retrieval model can only answer with a candidate from its pool, so dropping the candidates
that the chosen measures flag removes those answers outright. Reasons, checked cheapest first:

``group_words``
    the candidate mentions a word of the axis (either group), by
    :meth:`Swapper.sides <fairtalk.counterfactual.Swapper.sides>`;
``offensive``
    the offense measure's probability is ``>= offense_threshold``;
``negative``
    the VADER compound score is ``< negative_threshold`` (strongly negative).

Each dropped candidate is counted once, under the first reason in that order that flags it, so
``sum(dropped_by.values()) == n_before - n_after``; a later check scores only the candidates
still in the pool, each distinct text once.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import numpy as np

from fairtalk._jsonl import open_input
from fairtalk.counterfactual import Swapper
from fairtalk.errors import InputError, OutputError, SpecError
from fairtalk.files import same_file, write_text_atomic
from fairtalk.lexicons import Lexicon, expand_axis, load_lexicon
from fairtalk.measures import Measure, get_measure, score_unique

__all__ = [
    "DROP_REASONS",
    "PoolFilterResult",
    "PoolLines",
    "filter_pool",
    "is_filtered_pool",
    "pool_lexicons",
    "read_pool",
    "read_pool_lines",
    "write_pool",
]

#: The reasons a candidate can be dropped for, in the order they are checked.
DROP_REASONS = ("group_words", "offensive", "negative")

_MSG_REASON = "unknown pool-filter reason {given!r}"
_MSG_NEEDS_AXIS = "dropping group_words needs an axis: pass swapper= (a Swapper, a Lexicon, lexicons or an axis name)"
_MSG_NOT_TEXT = "pool candidate {index} is not a string (got {type})"
_MSG_POOL_READ = "cannot read the candidate pool ({reason})"
_MSG_POOL_DECODE = "the candidate pool is not valid UTF-8"
_MSG_POOL_SAME = "refusing to overwrite the input pool {input!r}; choose another output path"


@dataclass(frozen=True, slots=True)
class PoolFilterResult:
    """The filtered pool: kept candidates (in order, with their input positions) and drop counts."""

    kept: tuple[str, ...]
    kept_indices: tuple[int, ...]
    dropped_by: dict[str, int]
    n_before: int
    n_after: int

    @property
    def n_dropped(self) -> int:
        """How many candidates were removed."""
        return self.n_before - self.n_after


def filter_pool(
    candidates: Sequence[str],
    *,
    drop: Iterable[str] = DROP_REASONS,
    swapper: Swapper | Lexicon | Sequence[Lexicon] | str | None = None,
    offense_threshold: float = 0.5,
    negative_threshold: float = -0.8,
    offense_scorer: str = "profanity_check",
) -> PoolFilterResult:
    """Drop the candidates flagged for any of the ``drop`` reasons.

    Parameters
    ----------
    candidates : sequence of str
        The candidate responses (repeats allowed; each is judged on its own).
    drop : iterable of str
        Reasons from :data:`DROP_REASONS`: ``"group_words"``, ``"offensive"``, ``"negative"``.
    swapper : Swapper, Lexicon, sequence of Lexicon, or str, optional
        The axis whose words ``group_words`` looks for (a lexicon or an axis name is turned into
        a Swapper; a multi-way axis name, such as ``"religion"``, looks for every group's words,
        as do the lexicons of its pairs, :func:`pool_lexicons`); required when ``group_words`` is
        dropped.
    offense_threshold : float
        Offensive when the offense probability is ``>= offense_threshold``.
    negative_threshold : float
        Strongly negative when VADER's compound score is ``< negative_threshold``.
    offense_scorer : str
        The offense measure's scorer (``"profanity_check"`` or ``"hf:MODEL"``).

    Returns
    -------
    PoolFilterResult
        ``kept``, ``kept_indices``, ``dropped_by`` (every requested reason, 0 when none),
        ``n_before`` and ``n_after``.

    Raises
    ------
    SpecError
        An unknown reason (with the choices), or ``group_words`` without an axis.

    Examples
    --------
    >>> result = filter_pool(["nice to meet you", "she is here", "i hate you, you are awful and disgusting"],
    ...                      drop=["group_words", "negative"], swapper="gender")
    >>> result.kept, result.dropped_by
    (('nice to meet you',), {'group_words': 1, 'negative': 1})
    """
    reasons = _check_reasons(drop)
    texts = list(candidates)
    for index, text in enumerate(texts):
        if not isinstance(text, str):
            raise TypeError(_MSG_NOT_TEXT.format(index=index, type=type(text).__name__))
    swappers: tuple[Swapper, ...] = ()
    if "group_words" in reasons:
        swappers = _as_swappers(swapper) if swapper is not None else ()
        if not swappers:  # none given (or no lexicon in a sequence): no word would be dropped
            raise SpecError(_MSG_NEEDS_AXIS)
    alive = np.ones(len(texts), dtype=bool)
    dropped_by: dict[str, int] = {}
    for reason in reasons:
        positions = np.flatnonzero(alive)
        subset = [texts[i] for i in positions]
        if reason == "group_words":
            flags = np.fromiter((any(one.sides(text) for one in swappers) for text in subset), dtype=bool, count=len(subset))
        elif reason == "offensive":
            measure = cast(Measure, get_measure("offense", scorer=offense_scorer, threshold=offense_threshold))
            flags = score_unique(measure, subset)["offense_rate"] > 0.5 if subset else np.zeros(0, bool)
        else:
            measure = cast(Measure, get_measure("sentiment", negative_threshold=negative_threshold, positive_threshold=1.0))
            flags = score_unique(measure, subset)["sentiment_negative"] > 0.5 if subset else np.zeros(0, bool)
        alive[positions[flags]] = False
        dropped_by[reason] = int(flags.sum())
    kept_indices = tuple(int(i) for i in np.flatnonzero(alive))
    return PoolFilterResult(
        kept=tuple(texts[i] for i in kept_indices),
        kept_indices=kept_indices,
        dropped_by=dropped_by,
        n_before=len(texts),
        n_after=len(kept_indices),
    )


def _check_reasons(drop: Iterable[str]) -> tuple[str, ...]:
    """Validate the reasons; return them in checking order, without repeats."""
    given = [drop] if isinstance(drop, str) else list(drop)
    for reason in given:
        if reason not in DROP_REASONS:
            raise SpecError(_MSG_REASON.format(given=reason), choices=DROP_REASONS, given=str(reason))
    return tuple(reason for reason in DROP_REASONS if reason in given)


def pool_lexicons(axis: str | os.PathLike[str]) -> tuple[Lexicon, ...]:
    """The lexicons whose words ``group_words`` looks for: the axis' own, or each pair's of a multi-way axis.

    A multi-way axis (``religion``, or a multi-way lexicon file) gives one lexicon per pair that
    an audit runs (:func:`~fairtalk.lexicons.expand_axis`), so every group's words count; a pair of
    it (``religion:christian-muslim``) gives that pair's alone.

    Examples
    --------
    >>> [lexicon.axis for lexicon in pool_lexicons("religion")][:2], len(pool_lexicons("religion"))
    (['religion:christian-muslim', 'religion:christian-jewish'], 5)
    >>> [lexicon.axis for lexicon in pool_lexicons("gender")]
    ['gender']

    Raises
    ------
    SpecError
        No such axis (the message lists the choices).
    LexiconError
        A lexicon file that cannot be read or fails validation.
    """
    return tuple(load_lexicon(pair) for pair in expand_axis(os.fspath(axis)))


def _as_swappers(value: Swapper | Lexicon | Sequence[Lexicon] | str) -> tuple[Swapper, ...]:
    """One Swapper, or one per group pair of a multi-way axis name (every group's words then count)."""
    if isinstance(value, Swapper):
        return (value,)
    if isinstance(value, Lexicon):
        return (Swapper(value),)
    if isinstance(value, str):
        value = pool_lexicons(value)
    return tuple(Swapper(lexicon) for lexicon in value)


@dataclass(frozen=True, slots=True)
class PoolLines:
    """A candidate pool file as read (:func:`read_pool_lines`): its candidates, and the blank lines left out."""

    candidates: tuple[str, ...]
    n_blank: int

    @property
    def n_lines(self) -> int:
        """Every line of the file: the candidates and the blank (or whitespace-only) lines."""
        return len(self.candidates) + self.n_blank


def read_pool(path: str | os.PathLike[str]) -> list[str]:
    """Read a candidate pool: one candidate per line (UTF-8), blank lines ignored, ends stripped.

    :func:`read_pool_lines` reads it the same way and counts the blank lines too.

    Raises
    ------
    InputError
        The file is missing, unreadable or not UTF-8 (with the line).
    """
    return list(read_pool_lines(path).candidates)


def read_pool_lines(path: str | os.PathLike[str]) -> PoolLines:
    r"""Read a candidate pool as :func:`read_pool` does, counting the blank (or whitespace-only) lines it leaves out.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     pool = Path(folder) / "pool.txt"
    ...     _ = pool.write_text("hi there\n\n   \nnice day\n")
    ...     read = read_pool_lines(pool)
    >>> read.candidates, read.n_blank, read.n_lines
    (('hi there', 'nice day'), 2, 4)

    Raises
    ------
    InputError
        The file is missing, unreadable or not UTF-8 (with the line).
    """
    try:
        with open_input(path, what="candidate pool file") as handle:  # missing, a pipe or a device: a clear error
            data = handle.read()
    except OSError as exc:
        raise InputError(_MSG_POOL_READ.format(reason=exc.strerror or exc), path=os.fspath(path)) from exc
    pool: list[str] = []
    n_blank = 0
    for lineno, raw in enumerate(data.splitlines(), start=1):
        try:
            text = raw.decode("utf-8").strip()
        except UnicodeDecodeError as exc:
            raise InputError(_MSG_POOL_DECODE, path=os.fspath(path), line=lineno) from exc
        if text:
            pool.append(text)
        else:
            n_blank += 1
    return PoolLines(candidates=tuple(pool), n_blank=n_blank)


def is_filtered_pool(path: str | os.PathLike[str], candidates: Iterable[str]) -> bool:
    """Whether ``path`` is a filtered pool of ``candidates``, as :func:`write_pool` writes one: each of its lines is one of them.

    A pool file holds no marker of its own (one response a line), so what pool-filter may replace
    is told by its content: a file of lines all drawn from this pool (an earlier filtering of it,
    or an empty file). A line that is not a candidate (the user's own text, another pool) makes it
    the user's file.
    """
    if not os.path.isfile(path):
        return False
    try:
        lines = read_pool(path)
    except InputError:
        return False
    known = {" ".join(text.split()) for text in candidates}
    return all(" ".join(line.split()) in known for line in lines)


def write_pool(
    candidates: Iterable[str], path: str | os.PathLike[str], *, input_path: str | os.PathLike[str] | None = None
) -> int:
    """Write one candidate per line (newlines inside a candidate become spaces); return the count.

    Raises
    ------
    OutputError
        ``path`` is ``input_path`` (also through a link), or cannot be written (written atomically).
    """
    target = Path(path)
    if input_path is not None and same_file(target, input_path):
        raise OutputError(_MSG_POOL_SAME.format(input=os.fspath(input_path)), path=os.fspath(path))
    lines = [" ".join(text.split()) + "\n" for text in candidates]
    write_text_atomic(target, "".join(lines))
    return len(lines)
