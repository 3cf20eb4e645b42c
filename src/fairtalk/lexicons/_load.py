"""Loading lexicons and attribute lists: built-in axes by name, files by path, third-party axes by entry point."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Sequence
from functools import cache, partial
from importlib import resources
from pathlib import Path

from fairtalk._jsonl import open_input
from fairtalk._registry import Registry
from fairtalk.errors import InputError, LexiconError, SpecError, path_argument
from fairtalk.lexicons._format import (
    AttributeList,
    Lexicon,
    normalize,
    parse_attributes,
    parse_lexicon,
)
from fairtalk.lexicons._multiway import MultiwayLexicon, is_multiway, pair_lexicon, parse_multiway

_BUILTIN_AXES: tuple[str, ...] = (
    "gender",
    "race",
    "religion",
    "orientation",
    "age",
    "names-gender",
    "names-race",
    "nonbinary",
    "neopronouns",
)
#: Axes with the paper's printed lists as a ``paper`` variant.
_PAPER_AXES: tuple[str, ...] = ("gender", "race")
#: Axes of more than two groups (one column a group): ``religion`` audits its first group against each other.
_MULTIWAY_AXES: tuple[str, ...] = ("religion",)
_VARIANTS: tuple[str, ...] = ("default", "paper")
_BUILTIN_ATTRIBUTES: tuple[str, ...] = ("career", "family", "pleasant", "unpleasant")

_MSG_UNKNOWN_AXIS = "unknown lexicon axis {given!r} (not a built-in axis nor an existing file)"
_MSG_NO_SUCH_AXIS = "unknown lexicon axis {given!r} (no built-in or registered axis has this name)"
_MSG_UNKNOWN_VARIANT = "unknown lexicon variant {given!r}"
_MSG_VARIANT_FOR_FILE = "variant {given!r} applies only to built-in axes, not to a lexicon file"
_MSG_UNKNOWN_ATTRIBUTES = "unknown attribute list {given!r} (not a built-in list nor an existing file)"
_MSG_UNREADABLE = "cannot read lexicon file ({reason})"
_MSG_TOO_LARGE = "the lexicon file is larger than {limit} MiB; a lexicon holds word pairs (is it the right file?)"
#: The largest lexicon file read, in bytes (the built-in ones hold a few kilobytes).
MAX_LEXICON_BYTES = 64 << 20
_MSG_NOT_LEXICON = "axis {name!r} loaded {got}, not a Lexicon"
_MSG_NO_PAPER_VARIANT = "axis {axis!r} has no paper variant (only gender and race come from the paper)"
#: A bare multi-way axis (``religion``) or file where two groups are needed: its pairs to choose (:func:`refuse_bare_multiway`).
_MSG_BARE_MULTIWAY = (
    "{given} has {n} groups and {needs} two: choose a pair ({pairs}, or {name}:A-B for any two of {groups}); "
    "{audit} runs {first} against each"
)
_MSG_PAIR_OF_TWO = "{path}:{chosen} chooses two groups of a multi-way lexicon, and {path} has two ({groups}): give the file alone"

#: Entry-point group through which other packages register axes.
ENTRY_POINT_GROUP = "fairtalk.axes"


def _builtin_axis(axis: str, variant: str = "default") -> Lexicon:
    if variant not in _VARIANTS:
        raise SpecError(_MSG_UNKNOWN_VARIANT.format(given=variant), choices=_VARIANTS, given=variant)
    if variant != "default" and axis not in _PAPER_AXES:
        raise SpecError(_MSG_NO_PAPER_VARIANT.format(axis=axis), choices=("default",), given=variant)
    if axis in _MULTIWAY_AXES:  # one pair of its groups is a lexicon: religion:christian-muslim, ...
        raise SpecError(multiway_message(axis, _load_multiway(axis).groups), given=axis)
    return _load_builtin(axis, variant)


def multiway_message(
    name: str, groups: Sequence[str], *, given: str | None = None, needs: str = "a lexicon pairs", audit: str | None = None
) -> str:
    """The refusal of the bare multi-way axis or file ``name`` (of ``groups``) where two groups are needed: its pairs.

    The one wording of this refusal, for the library and every surface over it (:func:`refuse_bare_multiway`):
    ``given`` says what was given (``"axis NAME"`` by default; the CLI's ``"--axis NAME"``), ``needs`` what
    takes two groups (a lexicon; ``"this command compares"``) and ``audit`` what runs every group (``"an
    audit of NAME"``; ``"`fairtalk audit --axis NAME`"``).

    Examples
    --------
    >>> multiway_message("pets", ("cat", "dog", "fish"))
    'axis pets has 3 groups and a lexicon pairs two: choose a pair (pets:cat-dog, pets:cat-fish, or pets:A-B for any two of cat, dog, fish); an audit of pets runs cat against each'
    """
    first = groups[0]
    return _MSG_BARE_MULTIWAY.format(
        given=f"axis {name}" if given is None else given,
        n=len(groups),
        needs=needs,
        pairs=", ".join(f"{name}:{first}-{other}" for other in groups[1:]),
        name=name,
        groups=", ".join(groups),
        audit=f"an audit of {name}" if audit is None else audit,
        first=first,
    )


def refuse_bare_multiway(axis: str, *, given: str, needs: str) -> None:
    """SpecError where ``axis`` is a bare multi-way axis or file and two groups are needed, naming the pairs to choose.

    In the words of :func:`multiway_message`, as :func:`load_lexicon` refuses it, with the command that
    runs every group (``fairtalk audit --axis AXIS``): the CLI's single-pair commands and the
    integrations call this before any pair is built (a bare ``religion`` would otherwise mean its
    first two groups, a part of what an audit runs).

    Examples
    --------
    >>> refuse_bare_multiway("religion:christian-jewish", given="--axis religion:christian-jewish", needs="this command compares")
    >>> refuse_bare_multiway("religion", given="--axis religion", needs="this command compares")
    Traceback (most recent call last):
    ...
    fairtalk.errors.SpecError: --axis religion has 6 groups and this command compares two: choose a pair (religion:christian-muslim, ...

    Raises
    ------
    SpecError
        ``axis`` is a bare multi-way axis or file.
    LexiconError
        ``axis`` is a multi-way lexicon file that cannot be read or fails validation.
    """
    if len(expand_axis(axis)) > 1:
        audit = f"`fairtalk audit --axis {axis}`"
        raise SpecError(multiway_message(axis, axis_groups(axis), given=given, needs=needs, audit=audit))


def expand_axis(axis: str) -> tuple[str, ...]:
    """The two-group axes an audit of ``axis`` runs: a multi-way axis' first group against each other one.

    Examples
    --------
    >>> expand_axis("religion")
    ('religion:christian-muslim', 'religion:christian-jewish', 'religion:christian-hindu', 'religion:christian-buddhist', 'religion:christian-atheist')
    >>> expand_axis("gender"), expand_axis("religion:muslim-jewish")
    (('gender',), ('religion:muslim-jewish',))

    A multi-way lexicon file (``# groups:`` with three or more names) expands the same way, its
    pairs named ``PATH:A-B`` (what :func:`load_lexicon` reads back).

    Raises
    ------
    LexiconError
        ``axis`` is a multi-way lexicon file that cannot be read or fails validation.
    """
    name = axis.removeprefix("builtin:")
    if name in _MULTIWAY_AXES:
        groups = _load_multiway(name).groups
        return tuple(f"{name}:{groups[0]}-{other}" for other in groups[1:])
    multi = _multiway_file(axis)
    if multi is not None:
        return tuple(f"{axis}:{multi.groups[0]}-{other}" for other in multi.groups[1:])
    return (axis,)


def axis_groups(axis: str) -> tuple[str, ...]:
    """The groups of an axis :func:`load_lexicon` accepts, or of a multi-way lexicon file (more than two for a multi-way one).

    Examples
    --------
    >>> axis_groups("gender"), axis_groups("religion")[:3]
    (('male', 'female'), ('christian', 'muslim', 'jewish'))
    """
    name = axis.removeprefix("builtin:")
    if name in _MULTIWAY_AXES:
        return _load_multiway(name).groups
    multi = _multiway_file(axis)
    if multi is not None:
        return multi.groups
    return load_lexicon(name).groups


#: Axis name -> its loader, ``loader(variant) -> Lexicon`` (built in: ``default`` or ``paper``).
AXES: Registry[Callable[[str], Lexicon]] = Registry(
    "lexicon axis",
    group=ENTRY_POINT_GROUP,
    base=Callable,  # type: ignore[arg-type]
    expected="a function that loads a Lexicon",
    builtins={axis: partial(_builtin_axis, axis) for axis in _BUILTIN_AXES},
)


def builtin_axes() -> tuple[str, ...]:
    """Return the names of the built-in lexicon axes (gender and race from the paper, and fairtalk's own)."""
    return _BUILTIN_AXES


def axis_names() -> tuple[str, ...]:
    """Return every axis :func:`load_lexicon` accepts by name: the built-in ones and registered ones, sorted.

    Examples
    --------
    >>> {"gender", "race", "religion", "nonbinary", "neopronouns"} <= set(axis_names())
    True
    """
    return AXES.names()


def register_axis(name: str, loader: str | Callable[[str], Lexicon]) -> None:
    """Register an axis: ``load_lexicon(name, variant=V)`` then returns ``loader(V)`` (or ``"module:function"``).

    Raises
    ------
    SpecError
        ``name`` is already an axis, or ``loader`` is a malformed string.
    """
    AXES.add(name, loader)


def builtin_attribute_lists() -> tuple[str, ...]:
    """Return the names of the built-in attribute lists."""
    return _BUILTIN_ATTRIBUTES


def load_lexicon(axis_or_path: str | os.PathLike[str], *, variant: str = "default") -> Lexicon:
    """Load a built-in lexicon by axis name, or a user's lexicon file by path.

    Parameters
    ----------
    axis_or_path : str or os.PathLike
        ``"gender"`` or ``"race"`` (built-in; ``"builtin:race"`` also works), an axis registered
        with :func:`register_axis` or the ``fairtalk.axes`` entry-point group, or the path of a
        lexicon file (TAB- or ``" - "``-separated pairs; see the module docstring), or
        ``PATH:A-B`` for two groups of a multi-way file (three or more groups, like
        ``religion:christian-muslim``). A bare name that is not a built-in axis is read as a path
        when such a file exists.
    variant : {"default", "paper"}
        Built-in variant: the cleaned lists or the lists exactly as printed in the paper.
        A user's file is always variant ``"custom"``; pass the default here.

    Returns
    -------
    Lexicon
        Frozen; built-in loads are cached, so repeated calls return the same object.

    Raises
    ------
    SpecError
        Unknown axis or built-in variant (the message lists the choices); a bare multi-way axis
        (``religion``: a lexicon is one pair of its groups, and the message names them; see
        :func:`expand_axis` for every pair).
    LexiconError
        The file cannot be read or fails validation (the message names ``file:line``); a bare
        multi-way file (the message names its pairs); ``PATH:A-B`` of a file of two groups.

    Examples
    --------
    >>> lexicon = load_lexicon("gender")
    >>> lexicon.groups, len(lexicon.pairs)
    (('male', 'female'), 125)
    >>> pair = load_lexicon("race", variant="paper").pairs[-1]
    >>> pair.a, pair.b
    ('subliminal', 'shade')
    """
    path_argument(axis_or_path, "load_lexicon: axis_or_path", what="an axis name or a lexicon path (a str or os.PathLike)")
    if isinstance(axis_or_path, str):
        named = _by_name(axis_or_path.removeprefix("builtin:"), variant)
        if named is not None:
            return named
        if axis_or_path.startswith("builtin:") or not _looks_like_path(axis_or_path):
            raise AXES.unknown(axis_or_path.removeprefix("builtin:"), _MSG_UNKNOWN_AXIS.format(given=axis_or_path))
    if variant != "default":
        raise SpecError(_MSG_VARIANT_FOR_FILE.format(given=variant), choices=("default",))
    if isinstance(axis_or_path, str) and (chosen := _file_pair(axis_or_path)) is not None:
        return chosen
    path = Path(axis_or_path)
    data = _read_bytes(path)
    if is_multiway(data):
        groups = parse_multiway(data, source=str(path), stem=path.stem).groups
        raise LexiconError(multiway_message(str(path), groups, given="the file"), path=str(path))
    return parse_lexicon(data, source=str(path), stem=path.stem, variant="custom")


def lexicon_by_name(axis: str, *, variant: str = "default") -> Lexicon:
    """The lexicon of a built-in or registered axis (``"gender"``, ``"religion:christian-muslim"``); never a file.

    For a name that comes from a file someone else wrote (a run folder's manifest): unlike
    :func:`load_lexicon`, a name that is no axis is an error, never a path to read.

    Raises
    ------
    SpecError
        No axis of that name (the message lists the choices), or an unknown variant.

    Examples
    --------
    >>> lexicon_by_name("builtin:gender", variant="paper").variant
    'paper'
    """
    name = axis.removeprefix("builtin:")
    named = _by_name(name, variant)
    if named is None:
        raise AXES.unknown(name, _MSG_NO_SUCH_AXIS.format(given=axis))
    return named


def load_attributes(name_or_path: str | os.PathLike[str]) -> AttributeList:
    """Load a built-in attribute word list by name, or a user's list (one word a line) by path.

    Parameters
    ----------
    name_or_path : str or os.PathLike
        ``"career"``, ``"family"``, ``"pleasant"``, ``"unpleasant"``, or a file path. The list's
        name comes from a ``# attribute: NAME`` header line, else from the file name.

    Returns
    -------
    AttributeList
        Words lowercased, whitespace collapsed.

    Raises
    ------
    SpecError
        An unknown name that is not an existing file.
    LexiconError
        The file cannot be read, or has a TAB in a line or a duplicate word (``file:line``).

    Examples
    --------
    >>> words = load_attributes("unpleasant").words
    >>> "kill" in words and "lie" in words and "kill lie" not in words
    True
    """
    if isinstance(name_or_path, str):
        name = name_or_path.removeprefix("builtin:")
        if name in _BUILTIN_ATTRIBUTES:
            return _load_builtin_attributes(name)
        if name_or_path.startswith("builtin:") or not _looks_like_path(name_or_path):
            raise SpecError(
                _MSG_UNKNOWN_ATTRIBUTES.format(given=name_or_path),
                choices=_BUILTIN_ATTRIBUTES,
                given=name,
            )
    path = Path(name_or_path)
    return parse_attributes(_read_bytes(path), source=str(path), stem=path.stem)


def terms_on_both_sides(lexicon: Lexicon) -> frozenset[str]:
    """Return the (lowercased) words or phrases that occur on both sides of ``lexicon``.

    Empty for every validated file except those that declare ``# both-sides:`` (the paper's race
    list: ``mad`` and ``police``). A swapper should treat these as ambiguous.
    """
    side_a = {normalize(pair.a) for pair in lexicon.pairs}
    return frozenset(side_a & {normalize(pair.b) for pair in lexicon.pairs})


# --------------------------------------------------------------------------------------------
# internals


def _by_name(name: str, variant: str) -> Lexicon | None:
    """The lexicon of the axis ``name`` (a multi-way axis' pair ``religion:a-b`` included), or None for no such axis."""
    parent, colon, chosen = name.partition(":")
    if colon and parent in _MULTIWAY_AXES:  # religion:christian-muslim
        group_a, _, group_b = chosen.partition("-")
        if variant != "default":
            raise SpecError(_MSG_NO_PAPER_VARIANT.format(axis=parent), choices=("default",), given=variant)
        return pair_lexicon(_load_multiway(parent), group_a, group_b, variant=variant)
    if name not in AXES:
        return None
    lexicon = AXES.get(name)(variant)
    if not isinstance(lexicon, Lexicon):
        raise SpecError(_MSG_NOT_LEXICON.format(name=name, got=type(lexicon).__name__))
    return lexicon


def _multiway_file(name: str) -> MultiwayLexicon | None:
    """The multi-way lexicon in the file ``name``, or None: a built-in or registered axis, no such file, or two groups."""
    if name.startswith("builtin:") or name in AXES or not _looks_like_path(name) or not Path(name).is_file():
        return None
    data = _read_bytes(Path(name))
    return parse_multiway(data, source=name, stem=Path(name).stem) if is_multiway(data) else None


def _file_pair(name: str) -> Lexicon | None:
    """The lexicon of two groups of a multi-way file, ``PATH:A-B``; None when ``name`` is no such pair.

    Its source is the file's path (the input a command must not overwrite).
    """
    path, colon, chosen = name.rpartition(":")
    if not colon or not path or Path(name).exists() or not Path(path).is_file():
        return None
    multi = _multiway_file(path)
    if multi is None:
        groups = ", ".join(load_lexicon(path).groups)
        raise LexiconError(_MSG_PAIR_OF_TWO.format(path=path, chosen=chosen, groups=groups), path=path)
    group_a, _, group_b = chosen.partition("-")
    return dataclasses.replace(pair_lexicon(multi, group_a, group_b, variant="custom"), source=path)


def _looks_like_path(text: str) -> bool:
    return os.sep in text or "/" in text or Path(text).suffix != "" or Path(text).exists()


def _read_bytes(path: Path) -> bytes:
    """The bytes of a user's lexicon file; a pipe, a device or a file over :data:`MAX_LEXICON_BYTES` is refused at once."""
    try:
        handle = open_input(path, what="lexicon file")
    except InputError as exc:
        cause = exc.__cause__ or exc.__context__
        if not isinstance(cause, OSError):  # not a regular file
            raise LexiconError(exc.message, path=str(path)) from None
        reason = cause.strerror or type(cause).__name__
        raise LexiconError(_MSG_UNREADABLE.format(reason=reason), path=str(path)) from cause
    try:
        with handle:
            data = handle.read(MAX_LEXICON_BYTES + 1)
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise LexiconError(_MSG_UNREADABLE.format(reason=reason), path=str(path)) from exc
    if len(data) > MAX_LEXICON_BYTES:
        raise LexiconError(_MSG_TOO_LARGE.format(limit=MAX_LEXICON_BYTES >> 20), path=str(path))
    return data


def _builtin_bytes(filename: str) -> bytes:
    return resources.files("fairtalk.lexicons").joinpath(filename).read_bytes()


@cache
def _load_builtin(axis: str, variant: str) -> Lexicon:
    stem = axis if variant == "default" else f"{axis}-{variant}"
    return parse_lexicon(_builtin_bytes(f"{stem}.tsv"), source=f"builtin:{stem}", stem=axis, variant=variant)


@cache
def _load_multiway(axis: str) -> MultiwayLexicon:
    return parse_multiway(_builtin_bytes(f"{axis}.tsv"), source=f"builtin:{axis}", stem=axis)


@cache
def _load_builtin_attributes(name: str) -> AttributeList:
    return parse_attributes(_builtin_bytes(f"{name}.tsv"), source=f"builtin:{name}", stem=name)
