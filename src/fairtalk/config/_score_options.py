"""``ScoreOptions``: every option of ``score()`` declared once, in one frozen value validated once; reading options files.

``score()``, ``audit()`` (through :class:`~fairtalk.pipeline.AuditConfig`) and the CLI all
build this one object, from keyword arguments, a mapping or a TOML/YAML file, and pass it on
whole: nothing below it validates an option again. Each field carries its type, default,
bounds and help text (a pydantic dataclass, see ``_schema.py``; the last three from
:mod:`fairtalk.options`, which ``fairtalk score --help`` and ``fairtalk audit --help`` read).
"""

from __future__ import annotations

import contextlib
import math
import os
import typing
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import InitVar
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal, Self, TypedDict, TypeVar, Unpack

from pydantic import ValidationInfo, field_validator, model_validator

from fairtalk._schema import keys_of, label, options_schema
from fairtalk.config._file import FILE_FORMATS, load_mapping
from fairtalk.errors import SpecError, path_argument
from fairtalk.lexicons import Lexicon
from fairtalk.measures import (
    AnyMeasure,
    CorpusMeasure,
    Measure,
    MeasureOptions,
    check_measure_names,
    may_be_corpus,
    measure_names,
    parse_scale,
)
from fairtalk.models import DecodingSettings
from fairtalk.options import RUN_FIELDS, SCORE_FIELDS, least_resamples, permutations_for

__all__ = [
    "CORRECTIONS",
    "FILE_FORMATS",
    "JUDGE_PREFIX",
    "ScoreOptions",
    "ScoreOverrides",
    "file_named",
    "keyword_options",
    "load_mapping",
    "merge_score_table",
    "normal_keys",
    "overlay",
    "split_names",
]

#: The multiple-testing corrections: Holm (family-wise error) and Benjamini-Hochberg (false discovery rate).
Correction = Literal["holm", "bh"]
CORRECTIONS: tuple[str, ...] = typing.get_args(Correction)
#: The distinct-n definitions (:data:`fairtalk.measures._diversity.DEFINITIONS`).
Distinct = Literal["paper", "standard"]
#: The paired test of rates (:data:`fairtalk.config.BINARY_TESTS`).
BinaryTest = Literal["score", "exact", "midp"]
#: The test for counts (:data:`fairtalk.inference._measure_tests.COUNT_TESTS`).
CountTest = Literal["mean", "wilcoxon"]

_MSG_GOLD = "{name} must be the path of a gold file (fairtalk label -o), got {value!r}"
_MSG_TOO_FEW_RESAMPLES = (
    "{name} {value}{default} is too few for {alpha_name} {alpha:g}: a permutation test of {value} resamples gives no p below "
    "1/{plus_one} = {smallest:.3g}, so no corpus key (distinct-n, diversity) could be shown different or equivalent; "
    "give at least {least} resamples (--resamples; n_resamples in Python or a config file)"
)
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
_MSG_KEYWORD = "{function}() got an unexpected keyword argument {key!r}"
_MSG_OPTIONS_TYPE = "options must be a ScoreOptions, got {type}"
_MSG_UNKNOWN_OPTION = "unknown {what} option {given!r}"
#: A run option (``n_pairs``, ``model``) where only scoring options are read: say whose option it is.
_MSG_RUN_OPTION = "{given!r} is an audit option, not a score option (score reads only the scoring options)"
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


class ScoreOverrides(TypedDict, total=False):
    """The scoring options as keyword arguments (of ``ScoreOptions(...)``, ``score()`` and ``audit()``), in every form accepted.

    The keys are :class:`ScoreOptions`' fields (a test holds them equal); the types are what a
    caller may pass: a comma-separated string or a sequence for ``measures`` and ``primary``,
    ``"1-5"`` for ``judge_scale``, a path for ``gold``. Type, default, bounds and help are the
    fields'.
    """

    measures: str | Sequence[str | AnyMeasure] | None
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
    primary: str | Sequence[str] | None
    power: float
    scorer_check: bool
    judge_rubric: str | None
    judge_scale: str | tuple[int, int] | None
    exclude_truncated: bool
    gold: str | os.PathLike[str] | None


@options_schema(kw_only=True)
class ScoreOptions:
    """How ``score()`` measures and tests: one frozen value, validated once, here.

    Every field is an option of :func:`fairtalk.score`, declared once: its type here, its
    default, bounds and help text in :data:`fairtalk.options.SCORE_FIELDS` (the CLI's ``--help``
    reads them); given by keyword in any
    form the constructor accepts and held normalised: sequences become tuples (a string is
    split at commas) and ``margins`` a read-only mapping.
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

    measures: tuple[str | AnyMeasure, ...] | None = SCORE_FIELDS["measures"]
    seed: int = SCORE_FIELDS["seed"]
    alpha: float = SCORE_FIELDS["alpha"]
    correction: Correction = SCORE_FIELDS["correction"]
    mask_groups: bool = SCORE_FIELDS["mask_groups"]
    drop_empty: bool = SCORE_FIELDS["drop_empty"]
    distinct: Distinct = SCORE_FIELDS["distinct"]
    offense: str = SCORE_FIELDS["offense"]
    offense_threshold: float = SCORE_FIELDS["offense_threshold"]
    sentiment_threshold: float = SCORE_FIELDS["sentiment_threshold"]
    n_resamples: int = SCORE_FIELDS["n_resamples"]
    n_divergent: int = SCORE_FIELDS["n_divergent"]
    binary_test: BinaryTest = SCORE_FIELDS["binary_test"]
    count_test: CountTest = SCORE_FIELDS["count_test"]
    clusters: bool = SCORE_FIELDS["clusters"]
    margins: Mapping[str, float] = SCORE_FIELDS["margins"]
    primary: tuple[str, ...] | None = SCORE_FIELDS["primary"]
    power: float = SCORE_FIELDS["power"]
    scorer_check: bool = SCORE_FIELDS["scorer_check"]
    judge_rubric: str | None = SCORE_FIELDS["judge_rubric"]
    judge_scale: tuple[int, int] | None = SCORE_FIELDS["judge_scale"]
    exclude_truncated: bool = SCORE_FIELDS["exclude_truncated"]
    gold: str | None = SCORE_FIELDS["gold"]
    names: InitVar[Mapping[str, str] | None] = None

    if TYPE_CHECKING:  # what a caller may pass (validated and normalised into the fields above)

        def __init__(self, *, names: Mapping[str, str] | None = None, **options: Unpack[ScoreOverrides]) -> None: ...

    @field_validator("measures", mode="before")
    @classmethod
    def _measures(cls, value: Any, info: ValidationInfo) -> tuple[str | AnyMeasure, ...] | None:
        """Names split at commas; measure objects; one ``judge:SPEC`` at most; names known (plugins included)."""
        name = label(info)
        measures = split_names(value, name, choices=measure_names)
        for item in measures or ():
            if not isinstance(item, (str, Measure, CorpusMeasure)):  # a duck-typed measure is refused
                raise SpecError(_MSG_MEASURE_TYPE.format(type=type(item).__name__))
        judges = [m for m in measures or () if isinstance(m, str) and m.startswith(JUDGE_PREFIX)]
        if len(judges) > 1 or any(not j[len(JUDGE_PREFIX) :].strip() for j in judges):
            raise SpecError(_MSG_JUDGES.format(name=name, value=judges))
        check_measure_names(m for m in measures or () if isinstance(m, str) and m not in judges)  # plugins included
        return measures

    @field_validator("judge_rubric")
    @classmethod
    def _rubric(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is not None and value.count("{response}") != 1:
            raise SpecError(_MSG_RUBRIC.format(name=label(info), value=value))
        return value

    @field_validator("judge_scale", mode="before")
    @classmethod
    def _scale(cls, value: Any, info: ValidationInfo) -> tuple[int, int] | None:
        try:
            return parse_scale(value)
        except SpecError:
            raise SpecError(_MSG_SCALE.format(name=label(info), value=value)) from None

    @field_validator("primary", mode="before")
    @classmethod
    def _primary(cls, value: Any, info: ValidationInfo) -> tuple[str, ...] | None:
        primary = split_names(value, label(info))
        if primary is not None and not all(isinstance(key, str) for key in primary):
            raise SpecError(_MSG_NAMES.format(name=label(info), value=value))
        return primary

    @field_validator("margins", mode="plain")
    @classmethod
    def _margins(cls, value: Any, info: ValidationInfo) -> Mapping[str, float]:
        """A read-only mapping of keys to numbers > 0."""
        if not isinstance(value, Mapping):
            raise SpecError(_MSG_MARGINS.format(name=label(info), value=value))
        for key, margin in value.items():
            if not _number(margin) or not margin > 0:
                raise SpecError(_MSG_MARGIN.format(key=key, value=margin))
        return MappingProxyType({str(k): float(v) for k, v in value.items()})

    @model_validator(mode="after")
    def _resamples(self, info: ValidationInfo) -> Self:
        """Enough resamples for a corpus key's permutation test to reach ``alpha`` (its smallest p is ``1/(n + 1)``).

        Checked where a corpus measure may be scored: the default suite (diversity), or measures
        named that are not all per-response measures.
        """
        n, alpha = self.n_resamples, self.alpha
        if self.measures is not None and not any(_corpus(m) for m in self.measures):
            return self
        if 1.0 / (permutations_for(n, alpha) + 1) >= alpha:
            raise SpecError(
                _MSG_TOO_FEW_RESAMPLES.format(
                    name=label(info, "n_resamples"),
                    value=n,
                    default=" (the default)" if n == SCORE_FIELDS["n_resamples"].default else "",
                    alpha_name=label(info, "alpha"),
                    alpha=alpha,
                    plus_one=n + 1,
                    smallest=1.0 / (n + 1),
                    least=least_resamples(alpha),
                )
            )
        return self

    @field_validator("offense")
    @classmethod
    def _offense(cls, value: str, info: ValidationInfo) -> str:
        if not value.strip():
            raise SpecError(_MSG_OFFENSE.format(name=label(info), value=value))
        return value

    @field_validator("gold", mode="before")
    @classmethod
    def _gold(cls, value: Any, info: ValidationInfo) -> str | None:
        if value is None:
            return None
        if not isinstance(value, (str, os.PathLike)) or not str(value).strip():
            raise SpecError(_MSG_GOLD.format(name=label(info), value=value))
        return os.fspath(value)

    @classmethod
    def keys(cls) -> tuple[str, ...]:
        """The option names."""
        return keys_of(cls)

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
    def from_file(
        cls,
        path: str | os.PathLike[str],
        overrides: Mapping[str, Any] | None = None,
        *,
        names: Mapping[str, str] | None = None,
    ) -> ScoreOptions:
        """The options of a TOML or YAML file (a top-level ``[score]`` table is read as well), ``overrides`` over them.

        ``overrides`` (the command line's options) win over the file's, and a table among them
        (``margins``) over the file's key by key: ``--margin a=0.02`` keeps the file's margin of
        ``b``. The options are validated once, merged.

        Raises
        ------
        InputError
            The file cannot be read or parsed.
        SpecError
            An unknown key or a bad value (the message names the file when the file's values alone give it).
        """
        return options_from_file(
            path, overrides, names, lambda m, n: cls.from_mapping(m, names=n), lambda m, n: cls().updated(m, names=n)
        )

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
        for key in given:
            if key in RUN_FIELDS:  # an audit's config file given to score: its run options are audit's alone
                raise SpecError(_MSG_RUN_OPTION.format(given=key), choices=self.keys(), given=key)
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


def keyword_options(given: Mapping[str, Any], known: Sequence[str], function: str) -> dict[str, Any]:
    """The keyword options a function was given (``**overrides``); a keyword that is no option is a TypeError, as Python's."""
    for key in given:
        if key not in known:
            raise TypeError(_MSG_KEYWORD.format(function=function, key=key))
    return dict(given)


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


_Built = TypeVar("_Built")

#: Options whose value is a table of keys: a table given over a file's is merged with it key by key.
TABLES = ("margins", "model_args", "settings")


def file_values(mapping: Mapping[str, Any]) -> dict[str, Any]:
    """An options file's table, flat: keys as Python names, a ``[score]`` table's keys beside the others (SpecError for one in both)."""
    flat = normal_keys(mapping)
    nested = flat.pop("score", None)
    if isinstance(nested, Mapping):
        flat = merge_score_table(flat, nested)
    elif nested is not None:
        flat["score"] = nested
    return flat


def overlay(base: Mapping[str, Any], changes: Mapping[str, Any]) -> dict[str, Any]:
    """``changes`` over ``base`` (flat tables of options): a key of ``changes`` wins, a table of :data:`TABLES` key by key.

    A model given over the file's leaves the file's ``model_args`` out, and ``do_sample`` false
    (``--greedy``) the file's sampling settings.

    >>> overlay({"margins": {"a": 0.01, "b": 0.02}, "seed": 1}, {"margins": {"a": 0.05}})
    {'margins': {'a': 0.05, 'b': 0.02}, 'seed': 1}
    >>> overlay({"model": "hf:x", "model_args": {"dtype": "bf16"}}, {"model": "builtin:echo"})
    {'model': 'builtin:echo'}
    >>> overlay({"settings": {"do_sample": True, "temperature": 0.7}}, {"settings": {"do_sample": False}})
    {'settings': {'do_sample': False}}
    """
    out = dict(base)
    nested = changes.get("score")
    if isinstance(nested, Mapping):
        changes = merge_score_table({k: v for k, v in changes.items() if k != "score"}, nested)
    elif nested is not None:  # a ScoreOptions (or a bad value, refused later) replaces every scoring option
        out = {key: value for key, value in out.items() if key not in keys_of(ScoreOptions)}
    if "model" in changes and "model" in out and changes["model"] != out["model"]:
        out.pop("model_args", None)  # the file's model options are its model's, not the one given over it
    for key, value in changes.items():
        if key in TABLES and isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            table = normal_keys(out[key]) if key == "settings" else dict(out[key])
            given = normal_keys(value) if key == "settings" else dict(value)
            if key == "settings" and given.get("do_sample") is False:  # greedy over a sampling file: its sampling goes
                table = {k: v for k, v in table.items() if k not in DecodingSettings.SAMPLING_KEYS}
            out[key] = {**table, **given}
        else:
            out[key] = value
    return out


def options_from_file(
    path: str | os.PathLike[str],
    overrides: Mapping[str, Any] | None,
    names: Mapping[str, str] | None,
    build: Callable[[Mapping[str, Any], Mapping[str, str] | None], _Built],
    others: Callable[[Mapping[str, Any], Mapping[str, str] | None], object],
) -> _Built:
    """The options of the file ``path`` with ``overrides`` over them (:func:`overlay`), ``build`` once, merged.

    ``build(values, names)`` makes the options object (``from_mapping``); ``others(values, names)``
    checks the command line's values alone, so that an error of the file's values alone names
    the file (:func:`blame_file`).
    """
    path_argument(path, "from_file: path", what="a config file path (a str or os.PathLike)")
    mapping = load_mapping(path)
    with file_named(path):
        flat = file_values(mapping)
        if not overrides and names is None:
            return build(flat, None)
    cli = normal_keys(overrides or {})
    try:
        return build(overlay(flat, cli), names)
    except SpecError as exc:
        blame_file(path, exc, lambda given: build(flat, given), names, lambda: others(cli, names))
        raise


def _message(check: Callable[[], object]) -> str | None:
    """The message of the SpecError ``check()`` raises; None when it raises none."""
    try:
        check()
    except SpecError as exc:
        return str(exc)
    return None


def blame_file(
    path: str | os.PathLike[str],
    error: SpecError,
    check: Callable[[Mapping[str, str] | None], object],
    names: Mapping[str, str] | None,
    others: Callable[[], object],
) -> None:
    """SpecError naming the file when its values give ``error`` (what checking the merged values raised).

    They give it when ``check(names)`` (the file's values alone) raises ``error``'s message and
    ``others()`` (the other values alone: the command line's) does not; it is then raised in the
    file's words (keys, not flags), named ``path: ...``. Otherwise nothing is raised here.
    """
    if _message(lambda: check(names)) != str(error) or _message(others) == str(error):
        return
    with file_named(path):
        check(None)  # the same error, its options named as the file names them
        raise error  # names alone made the difference (not expected): said as it was, with the file's name


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


def _corpus(measure: str | AnyMeasure) -> bool:
    """Whether ``measure`` (a name, a judge spec or a measure) may be a corpus measure, tested by permutation."""
    if isinstance(measure, str):
        return not measure.startswith(JUDGE_PREFIX) and may_be_corpus(measure)
    return isinstance(measure, CorpusMeasure)
