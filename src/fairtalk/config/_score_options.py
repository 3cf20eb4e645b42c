"""``ScoreOptions``: every option of ``score()`` in one frozen value, validated once; and reading options files.

``score()``, ``audit()`` (through :class:`~fairtalk.pipeline.AuditConfig`) and the CLI all
build this one object, from keyword arguments, a mapping or a TOML/YAML file, and pass it on
whole: nothing below it validates an option again.
"""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, fields
from types import MappingProxyType
from typing import Any

from fairtalk.config._choices import BINARY_TESTS, COUNT_TESTS
from fairtalk.config._file import FILE_FORMATS, load_mapping
from fairtalk.errors import SpecError
from fairtalk.lexicons import Lexicon
from fairtalk.measures import (
    DEFINITIONS,
    AnyMeasure,
    CorpusMeasure,
    Measure,
    MeasureOptions,
    check_measure_names,
    measure_names,
    parse_scale,
)

__all__ = [
    "CORRECTIONS",
    "FILE_FORMATS",
    "JUDGE_PREFIX",
    "ScoreOptions",
    "file_named",
    "load_mapping",
    "merge_score_table",
    "normal_keys",
    "split_names",
]

#: The default ``margins``: none given (each key's kind then has its default margin).
_NO_MARGINS: Mapping[str, float] = MappingProxyType({})
#: The multiple-testing corrections: Holm (family-wise error) and Benjamini-Hochberg (false discovery rate).
CORRECTIONS = ("holm", "bh")

_MSG_CHOICE = "unknown {name} {given!r}"
_MSG_BOOL = "{name} must be true or false, got {value!r}"
_MSG_SEED = "{name} must be an integer >= 0, got {value!r}"
_MSG_UNIT = "{name} must be between 0 and 1 (exclusive), got {value!r}"
_MSG_CLOSED_UNIT = "{name} must be a number in [0, 1], got {value!r}"
_MSG_AT_LEAST = "{name} must be at least {least}, got {value!r}"
_MSG_GOLD = "{name} must be the path of a gold file (fairtalk label -o), got {value!r}"
_MSG_OFFENSE = "{name} must be a scorer name (profanity_check, hatesonar or hf:MODEL), got {value!r}"
#: ``judge:SPEC`` in ``measures``: the model SPEC answers the rubric about each response.
JUDGE_PREFIX = "judge:"
_MSG_JUDGES = "{name}: give one judge:SPEC with a model spec after 'judge:' (one judge per run), got {value!r}"
_MSG_RUBRIC = "{name} must be a text with {{response}} exactly once where the response goes, got {value!r}"
_MSG_SCALE = "{name} must be LOW-HIGH, two whole numbers >= 0 with LOW < HIGH (e.g. 1-5), got {value!r}"
_MSG_MEASURE_TYPE = (
    "measures must be names or Measure/CorpusMeasure objects (a measure subclasses fairtalk.measures.Measure "
    "or CorpusMeasure), got {type}"
)
_MSG_NAMES = "{name} must be a comma-separated string or a list of names, got {value!r}"
_MSG_MARGINS = "{name} must map measure keys to numbers, got {value!r}"
_MSG_MARGIN = "equivalence margin for {key!r} must be a number > 0, got {value!r}"
_MSG_OPTIONS_TYPE = "options must be a ScoreOptions, got {type}"
_MSG_UNKNOWN_OPTION = "unknown {what} option {given!r}"
_MSG_TWICE = "option {key!r} is given twice (at the top and in [score])"
_MSG_BOTH = "give {what}= or keyword options, not both with different values ({keys})"
#: An empty list (``--measures ''``, ``measures = []``) would silently mean "none" or "the default": refused.
_MSG_EMPTY = "{name} names nothing; give one or more, comma-separated"
#: ``n-pairs`` and ``n_pairs`` (or `` n_pairs``) are one option: a table giving both would silently keep one.
_MSG_SPELLINGS = "{first!r} and {second!r} are the same option ({key}); give it once"


def normal_keys(mapping: Mapping[str, Any]) -> dict[str, Any]:
    """The mapping with keys as Python names: ``n-pairs`` and ``n_pairs`` are one key (SpecError if both are given)."""
    out: dict[str, Any] = {}
    spelled: dict[str, object] = {}
    for key, value in mapping.items():
        name = str(key).strip().replace("-", "_")
        if name in out:
            raise SpecError(_MSG_SPELLINGS.format(first=spelled[name], second=key, key=name))
        out[name], spelled[name] = value, key
    return out


def split_names(value: Any, name: str, choices: Callable[[], Iterable[str]] | None = None) -> tuple[Any, ...] | None:
    """``"a,b"`` or ``["a", "b"]`` -> ``("a", "b")``; None stays None; an empty list is a SpecError naming ``choices()``."""
    if value is None:
        return None
    if isinstance(value, str):
        names = tuple(part.strip() for part in value.split(",") if part.strip())
    elif isinstance(value, Sequence):
        names = tuple(value)
    else:
        raise SpecError(_MSG_NAMES.format(name=name, value=value))
    if not names:
        raise SpecError(_MSG_EMPTY.format(name=name), choices=choices() if choices is not None else ())
    return names


def _number(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)


def _integer(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, int)


def _choice(value: Any, choices: Sequence[str], name: str) -> None:
    if value not in choices:
        raise SpecError(_MSG_CHOICE.format(name=name, given=value), choices=choices, given=str(value))


@dataclass(frozen=True, slots=True, init=False)
class ScoreOptions:
    """How ``score()`` measures and tests: one frozen value, validated once, here.

    Every field is an option of :func:`fairtalk.score` (see it for their meaning), given by
    keyword in any form the constructor accepts and held normalised: sequences become tuples
    (a string is split at commas) and ``margins`` a read-only mapping.
    ``judge_scale`` (``"1-5"`` or ``(1, 5)``) becomes a tuple: the judge then answers with a
    score on that scale (``judge_score``); None keeps yes/no answers (``judge_yes``).
    ``exclude_truncated`` tests only the pairs where neither answer was cut off at the token limit.
    ``gold`` is a gold file of human labels (``fairtalk label``): each labelled key's gap is also
    estimated by prediction-powered inference (``MeasureResult.ppi``).
    ``names`` only renames the options in error messages (the CLI passes its flags, so an
    error names ``--resamples`` rather than ``n_resamples``).

    Raises
    ------
    SpecError
        An unknown choice, a value of the wrong type or out of range.

    Examples
    --------
    >>> ScoreOptions(alpha=0.01, measures="offense,length").measures
    ('offense', 'length')
    >>> ScoreOptions(correction="bonferoni")
    Traceback (most recent call last):
    ...
    fairtalk.errors.SpecError: unknown correction 'bonferoni' (choose from: bh, holm)
    """

    measures: tuple[str | AnyMeasure, ...] | None
    seed: int
    alpha: float
    correction: str
    mask_groups: bool
    drop_empty: bool
    distinct: str
    offense: str
    offense_threshold: float
    sentiment_threshold: float
    n_resamples: int
    n_divergent: int
    binary_test: str
    count_test: str
    clusters: bool
    margins: Mapping[str, float]
    primary: tuple[str, ...] | None
    power: float
    scorer_check: bool
    judge_rubric: str | None
    judge_scale: tuple[int, int] | None
    exclude_truncated: bool
    gold: str | None

    def __init__(
        self,
        *,
        measures: str | Sequence[str | AnyMeasure] | None = None,
        seed: int = 0,
        alpha: float = 0.05,
        correction: str = "holm",
        mask_groups: bool = False,
        drop_empty: bool = False,
        distinct: str = "paper",
        offense: str = "profanity_check",
        offense_threshold: float = 0.5,
        sentiment_threshold: float = 0.8,
        n_resamples: int = 2000,
        n_divergent: int = 10,
        binary_test: str = "exact",
        count_test: str = "mean",
        clusters: bool = True,
        margins: Mapping[str, float] = _NO_MARGINS,
        primary: str | Sequence[str] | None = None,
        power: float = 0.8,
        scorer_check: bool = True,
        judge_rubric: str | None = None,
        judge_scale: str | tuple[int, int] | None = None,
        exclude_truncated: bool = False,
        gold: str | os.PathLike[str] | None = None,
        names: Mapping[str, str] | None = None,
    ) -> None:
        # every parameter but these two is a field: set as given, then checked and normalised together
        for key, value in {k: v for k, v in locals().items() if k not in ("self", "names")}.items():
            object.__setattr__(self, key, value)
        self._check(names)

    def _check(self, names: Mapping[str, str] | None) -> None:  # noqa: C901
        """Validate every field once, and normalise (tuples, a read-only mapping, the scale); ``names`` label errors."""
        label = dict(names or {})

        def name(key: str) -> str:
            return label.get(key, key)

        measures = split_names(self.measures, name("measures"), choices=measure_names)
        for item in measures or ():
            if not isinstance(item, (str, Measure, CorpusMeasure)):  # a duck-typed measure is refused
                raise SpecError(_MSG_MEASURE_TYPE.format(type=type(item).__name__))
        judges = [m for m in measures or () if isinstance(m, str) and m.startswith(JUDGE_PREFIX)]
        if len(judges) > 1 or any(not j[len(JUDGE_PREFIX) :].strip() for j in judges):
            raise SpecError(_MSG_JUDGES.format(name=name("measures"), value=judges))
        check_measure_names(m for m in measures or () if isinstance(m, str) and m not in judges)  # plugins included
        if self.judge_rubric is not None and (
            not isinstance(self.judge_rubric, str) or self.judge_rubric.count("{response}") != 1
        ):
            raise SpecError(_MSG_RUBRIC.format(name=name("judge_rubric"), value=self.judge_rubric))
        try:
            object.__setattr__(self, "judge_scale", parse_scale(self.judge_scale))
        except SpecError:
            raise SpecError(_MSG_SCALE.format(name=name("judge_scale"), value=self.judge_scale)) from None
        object.__setattr__(self, "measures", measures)
        primary = split_names(self.primary, name("primary"))
        if primary is not None and not all(isinstance(key, str) for key in primary):
            raise SpecError(_MSG_NAMES.format(name=name("primary"), value=self.primary))
        object.__setattr__(self, "primary", primary)
        if not isinstance(self.margins, Mapping):
            raise SpecError(_MSG_MARGINS.format(name=name("margins"), value=self.margins))
        for key, value in self.margins.items():
            if not _number(value) or not value > 0:
                raise SpecError(_MSG_MARGIN.format(key=key, value=value))
        object.__setattr__(self, "margins", MappingProxyType({str(k): float(v) for k, v in self.margins.items()}))
        if not _integer(self.seed) or self.seed < 0:
            raise SpecError(_MSG_SEED.format(name=name("seed"), value=self.seed))
        for key in ("alpha", "power"):
            value = getattr(self, key)
            if not _number(value) or not 0 < value < 1:
                raise SpecError(_MSG_UNIT.format(name=name(key), value=value))
        for key in ("offense_threshold", "sentiment_threshold"):
            value = getattr(self, key)
            if not _number(value) or not 0 <= value <= 1:
                raise SpecError(_MSG_CLOSED_UNIT.format(name=name(key), value=value))
        for key, least in (("n_resamples", 1), ("n_divergent", 0)):
            value = getattr(self, key)
            if not _integer(value) or value < least:
                raise SpecError(_MSG_AT_LEAST.format(name=name(key), least=least, value=value))
        for key in ("mask_groups", "drop_empty", "clusters", "scorer_check", "exclude_truncated"):
            if not isinstance(getattr(self, key), bool):
                raise SpecError(_MSG_BOOL.format(name=name(key), value=getattr(self, key)))
        _choice(self.correction, CORRECTIONS, name("correction"))
        _choice(self.distinct, DEFINITIONS, name("distinct"))
        _choice(self.binary_test, tuple(BINARY_TESTS), name("binary_test"))
        _choice(self.count_test, COUNT_TESTS, name("count_test"))
        if not isinstance(self.offense, str) or not self.offense.strip():
            raise SpecError(_MSG_OFFENSE.format(name=name("offense"), value=self.offense))
        if self.gold is not None:
            if not isinstance(self.gold, (str, os.PathLike)) or not str(self.gold).strip():
                raise SpecError(_MSG_GOLD.format(name=name("gold"), value=self.gold))
            object.__setattr__(self, "gold", os.fspath(self.gold))

    @classmethod
    def keys(cls) -> tuple[str, ...]:
        """The option names."""
        return tuple(f.name for f in fields(cls))

    @classmethod
    def from_mapping(cls, mapping: Mapping[str, Any], *, names: Mapping[str, str] | None = None) -> ScoreOptions:
        """The options a mapping gives (``n-resamples`` or ``n_resamples``); others keep their defaults.

        Raises
        ------
        SpecError
            An unknown key (with "did you mean" and the option names), or a bad value.
        """
        return cls().updated(mapping, names=names)

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> ScoreOptions:
        """The options of a TOML or YAML file (a top-level ``[score]`` table is read as well).

        Raises
        ------
        InputError
            The file cannot be read or parsed.
        SpecError
            An unknown key or a bad value (the message names the file).
        """
        mapping = load_mapping(path)
        with file_named(path):
            flat = normal_keys(mapping)
            nested = flat.pop("score", None)
            if isinstance(nested, Mapping):
                flat = merge_score_table(flat, nested)
            elif nested is not None:
                flat["score"] = nested
            return cls.from_mapping(flat)

    @classmethod
    def resolve(cls, options: ScoreOptions | None, kwargs: Mapping[str, Any]) -> ScoreOptions:
        """``options``, or the options ``kwargs`` give; SpecError when both give an option differently."""
        if options is None:
            return cls.from_mapping(kwargs)
        if not isinstance(options, ScoreOptions):
            raise SpecError(_MSG_OPTIONS_TYPE.format(type=type(options).__name__))
        if kwargs:
            given = normal_keys(kwargs)
            conflicts(options, options.updated(given), list(given), "options")
        return options

    def updated(self, changes: Mapping[str, Any], *, names: Mapping[str, str] | None = None) -> ScoreOptions:
        """A copy with ``changes`` applied (validated as a whole); unknown keys are SpecErrors."""
        given = normal_keys(changes)
        unknown_key(given, self.keys(), "score")
        values = {key: getattr(self, key) for key in self.keys()}
        return ScoreOptions(**{**values, **given}, names=names)

    def measure_options(self, lexicon: Lexicon) -> MeasureOptions:
        """What the measures built by name receive (:data:`~fairtalk.measures.MEASURE_OPTIONS`), for the axis ``lexicon``."""
        return MeasureOptions(
            lexicon,
            distinct=self.distinct,
            offense=self.offense,
            offense_threshold=self.offense_threshold,
            sentiment_threshold=self.sentiment_threshold,
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of every option (measure objects by their ``name``)."""
        out = {key: getattr(self, key) for key in self.keys()}
        if self.measures is not None:
            out["measures"] = [m if isinstance(m, str) else m.name for m in self.measures]
        out["margins"] = dict(self.margins)
        out["primary"] = None if self.primary is None else list(self.primary)
        out["judge_scale"] = None if self.judge_scale is None else list(self.judge_scale)
        return out


def unknown_key(given: Mapping[str, Any], known: Sequence[str], what: str) -> None:
    """SpecError naming the first key of ``given`` not in ``known``, with "did you mean" and the known keys."""
    for key in given:
        if key not in known:
            raise SpecError(_MSG_UNKNOWN_OPTION.format(what=what, given=key), choices=known, given=key)


def merge_score_table(flat: Mapping[str, Any], table: Mapping[str, Any]) -> dict[str, Any]:
    """``flat`` with the keys of a ``[score]`` table added; a key in both is a SpecError."""
    nested = normal_keys(table)
    for key in nested:
        if key in flat:
            raise SpecError(_MSG_TWICE.format(key=key))
    return {**flat, **nested}


@contextlib.contextmanager
def file_named(path: str | os.PathLike[str]) -> Iterator[None]:
    """A SpecError raised in the block names the options file it came from (``audit.toml: unknown ...``)."""
    try:
        yield
    except SpecError as exc:
        raise SpecError(f"{os.fspath(path)}: {exc}") from None


def conflicts(built: Any, given: Any, keys: Sequence[str], what: str) -> None:
    """SpecError when an options object and keyword options both give a key with different values."""
    differing = [key for key in keys if getattr(built, key) != getattr(given, key)]
    if differing:
        raise SpecError(_MSG_BOTH.format(what=what, keys=", ".join(differing)))
