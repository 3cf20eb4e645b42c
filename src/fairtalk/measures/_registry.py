"""The measure registry (:data:`MEASURES`, a :class:`~fairtalk._registry.Registry`) and the one table of measure options.

Built-in names: ``diversity``, ``offense``, ``sentiment``, ``attribute_words``, ``length``,
``refusal``, ``degenerate`` and ``regard`` (paper 004). Third-party packages add measures through the ``fairtalk.measures`` entry-point
group (``name = "package.module:Factory"``), or at run time with :func:`register_measure`.
A name registered twice (built-in, entry point or run time) is an error, so a plugin can
never silently shadow a built-in measure. What a name is registered as must be a class that
subclasses :class:`~fairtalk.measures.Measure` or :class:`~fairtalk.measures.CorpusMeasure`
(and defines what they declare abstract), or a function that builds one: anything else is a
SpecError naming the plugin.

``score()`` builds the measures it is given by name with :func:`build_measure`: each receives,
by its constructor's parameter names, the options of :data:`MEASURE_OPTIONS` (the one table of
them), a plugin's measure as well as a built-in one.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from types import FunctionType, MappingProxyType
from typing import TYPE_CHECKING, Any, TypeAlias

from fairtalk._registry import Registry
from fairtalk.errors import SpecError
from fairtalk.measures._base import AnyMeasure, CorpusMeasure, Measure

if TYPE_CHECKING:
    from fairtalk.lexicons import Lexicon

__all__ = [
    "DEFAULT_SUITE",
    "ENTRY_POINT_GROUP",
    "MEASURES",
    "MEASURE_OPTIONS",
    "MeasureOption",
    "MeasureOptions",
    "build_default",
    "build_measure",
    "check_measure_names",
    "default_measures",
    "get_measure",
    "may_be_corpus",
    "measure_names",
    "register_measure",
]

ENTRY_POINT_GROUP = "fairtalk.measures"
"""Entry-point group through which other packages register measures."""

#: What a measure name is registered as: a Measure or CorpusMeasure subclass, or a function that builds one.
MeasureFactory: TypeAlias = Callable[..., AnyMeasure]

MEASURES: Registry[MeasureFactory] = Registry(
    "measure",
    group=ENTRY_POINT_GROUP,
    base=Callable,  # type: ignore[arg-type]
    expected="a measure class or factory",
    builtins={
        "diversity": "fairtalk.measures._diversity:Diversity",
        "offense": "fairtalk.measures._offense:Offense",
        "sentiment": "fairtalk.measures._sentiment:Sentiment",
        "attribute_words": "fairtalk.measures._attribute_words:AttributeWords",
        "length": "fairtalk.measures._length:Length",
        "refusal": "fairtalk.measures._refusal:Refusal",
        "degenerate": "fairtalk.measures._degenerate:Degenerate",
        "regard": "fairtalk.measures._regard:Regard",
    },
)
"""Measure name -> a factory (a class, or a function) that builds the measure from keyword options."""

#: The default suite, in order; ``attribute_words`` only for an axis with attribute lists.
DEFAULT_SUITE = ("diversity", "offense", "sentiment", "attribute_words", "length", "refusal", "degenerate")

_MSG_LEXICON_TYPE = "default_measures: lexicon must be a Lexicon, an axis name ('gender') or a lexicon path, got {type}"
_MSG_OPTION = "measure {name!r} does not accept these options: {error}"
_MSG_NOT_MEASURE = "measure {name!r} ({target}) did not build a Measure or CorpusMeasure (got {got})"
_MSG_NOT_SUBCLASS = (
    "measure {name!r} ({target}) is class {got}, which does not subclass fairtalk.measures.Measure or "
    "fairtalk.measures.CorpusMeasure"
)
_MSG_ABSTRACT = "measure {name!r} ({target}) does not define {missing}, which every {base} must"


@dataclass(frozen=True, slots=True)
class MeasureOptions:
    """What ``score()`` hands to the measures it builds by name: the axis and the measure settings of its options.

    Which constructor parameter receives which value is :data:`MEASURE_OPTIONS`. The values are
    validated where they come from (:class:`~fairtalk.ScoreOptions`) and by the measures themselves.

    Parameters
    ----------
    lexicon : Lexicon
        The axis: its attribute lists (``attribute_words``) and the script of its group words (``degenerate``).
    distinct : {"paper", "standard"}
        The distinct-n definition.
    offense : str
        ``"profanity_check"``, ``"hatesonar"`` or ``"hf:MODEL_OR_PATH"``.
    offense_threshold : float
        Offensive at probability ``>=`` this.
    sentiment_threshold : float
        Positive when VADER's compound is ``> t``, negative when ``< -t``.
    """

    lexicon: Lexicon
    distinct: str = "paper"
    offense: str = "profanity_check"
    offense_threshold: float = 0.5
    sentiment_threshold: float = 0.8

    @property
    def script(self) -> str:
        """The script the answers are expected in: that of the axis' group words (Latin for the built-in axes)."""
        from fairtalk.measures._degenerate import majority_script

        return majority_script(word for pair in self.lexicon.pairs for word in (pair.a, pair.b))

    def arguments(self, name: str, parameters: Collection[str]) -> dict[str, object]:
        """The keyword arguments of measure ``name`` whose constructor takes ``parameters``: the options it names."""
        return {
            parameter: option.value(self)
            for parameter, option in MEASURE_OPTIONS.items()
            if parameter in parameters and option.only in (None, name)
        }


@dataclass(frozen=True, slots=True)
class MeasureOption:
    """One row of :data:`MEASURE_OPTIONS`: the value a constructor parameter receives (``only``: the one measure it goes to)."""

    value: Callable[[MeasureOptions], object]
    description: str
    only: str | None = None


MEASURE_OPTIONS: Mapping[str, MeasureOption] = MappingProxyType(
    {
        "definition": MeasureOption(lambda o: o.distinct, "the distinct-n definition (distinct)"),
        "scorer": MeasureOption(lambda o: o.offense, "the offense scorer (offense)", only="offense"),
        "threshold": MeasureOption(lambda o: o.offense_threshold, "offensive at probability >= this (offense_threshold)"),
        "positive_threshold": MeasureOption(lambda o: o.sentiment_threshold, "positive above this (sentiment_threshold)"),
        "negative_threshold": MeasureOption(lambda o: -o.sentiment_threshold, "negative below this (-sentiment_threshold)"),
        "lexicon": MeasureOption(lambda o: o.lexicon, "the axis' lexicon: its attribute lists"),
        "script": MeasureOption(lambda o: o.script, "the script of the axis' group words"),
    }
)
"""Constructor parameter -> the option it receives: a measure built by name (a plugin's too) gets each one its
constructor names. ``scorer`` goes to ``offense`` only (``regard``'s scorer is a regard model)."""


def measure_names() -> tuple[str, ...]:
    """All registered measure names (built in, entry points, run time), sorted.

    Examples
    --------
    >>> {"diversity", "offense", "sentiment", "length"} <= set(measure_names())
    True
    """
    return MEASURES.names()


def check_measure_names(names: Iterable[str]) -> None:
    """Raise for the first name that is not a registered measure, without loading any measure.

    Raises
    ------
    SpecError
        ``unknown measure 'NAME'``, with "did you mean" and the registered names.
    """
    for name in names:
        if name not in MEASURES:
            raise MEASURES.unknown(name)


def register_measure(name: str, target: str | MeasureFactory) -> None:
    """Register a measure under ``name``: a ``"module:Factory"`` string, a Measure or CorpusMeasure subclass, or a factory.

    The measure is then selectable by name everywhere: :func:`get_measure`,
    ``score(measures=[name])`` and ``fairtalk score/audit --measures NAME``.

    Raises
    ------
    SpecError
        ``name`` is already registered, or ``target`` is a malformed string.
    """
    MEASURES.add(name, target)


def get_measure(name: str, **options: Any) -> AnyMeasure:
    """Build the measure registered as ``name`` with keyword ``options``.

    Parameters
    ----------
    name : str
        A name from :func:`measure_names`.
    **options
        Passed to the measure's constructor (``threshold=0.7``, ``definition="standard"``...).

    Raises
    ------
    SpecError
        Unknown name (with "did you mean" and the choices), an option the measure does not
        take, or a plugin that cannot be loaded or is not a measure.

    Examples
    --------
    >>> get_measure("diversity", definition="standard").definition
    'standard'
    """
    factory = _factory(name)
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):  # builtins without a signature: let the call decide
        signature = None
    if signature is not None:
        try:
            signature.bind(**options)
        except TypeError as exc:
            accepted = [p for p in signature.parameters if p not in ("self", "args", "kwargs")]
            raise SpecError(_MSG_OPTION.format(name=name, error=exc), choices=accepted) from exc
    return _built(name, factory, options)


def build_measure(name: str, options: MeasureOptions) -> AnyMeasure:
    """Build the measure registered as ``name`` with the options of :data:`MEASURE_OPTIONS` its constructor names.

    Examples
    --------
    >>> from fairtalk.lexicons import load_lexicon
    >>> build_measure("offense", MeasureOptions(load_lexicon("gender"), offense_threshold=0.7)).threshold
    0.7
    """
    factory = _factory(name)
    return _built(name, factory, options.arguments(name, _parameters(factory)))


def _target(factory: object) -> str:
    """How a factory reads in a message: ``module:QualifiedName``."""
    if isinstance(factory, (type, FunctionType)):
        return f"{factory.__module__}:{factory.__qualname__}"
    return repr(factory)


def _factory(name: str) -> MeasureFactory:
    """The factory registered as ``name``; a class must be a concrete Measure or CorpusMeasure subclass."""
    factory = MEASURES.get(name)
    if isinstance(factory, type):
        if not issubclass(factory, (Measure, CorpusMeasure)):
            raise SpecError(_MSG_NOT_SUBCLASS.format(name=name, target=_target(factory), got=factory.__qualname__))
        if inspect.isabstract(factory):
            base = "CorpusMeasure" if issubclass(factory, CorpusMeasure) else "Measure"
            missing = ", ".join(sorted(factory.__abstractmethods__))
            raise SpecError(_MSG_ABSTRACT.format(name=name, target=_target(factory), missing=missing, base=base))
    return factory


def may_be_corpus(name: str) -> bool:
    """Whether the measure registered as ``name`` may be a corpus measure: not a :class:`Measure` subclass (a factory may build either).

    Examples
    --------
    >>> may_be_corpus("diversity"), may_be_corpus("offense")
    (True, False)
    """
    factory = _factory(name)
    return not (isinstance(factory, type) and issubclass(factory, Measure))


def _parameters(factory: MeasureFactory) -> frozenset[str]:
    """The parameters ``factory`` takes by name (none where it has no signature)."""
    try:
        parameters = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):
        return frozenset()
    named = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return frozenset(p.name for p in parameters if p.kind in named)


def _built(name: str, factory: MeasureFactory, options: Mapping[str, object]) -> AnyMeasure:
    """``factory(**options)``, checked to be a Measure or CorpusMeasure."""
    measure: object = factory(**options)
    if not isinstance(measure, (Measure, CorpusMeasure)):
        raise SpecError(_MSG_NOT_MEASURE.format(name=name, target=_target(factory), got=type(measure).__name__))
    return measure


def default_measures(
    lexicon: Lexicon | str | os.PathLike[str],
    *,
    distinct: str = "paper",
    offense: str = "profanity_check",
    offense_threshold: float = 0.5,
    sentiment_threshold: float = 0.8,
) -> list[AnyMeasure]:
    """The default suite for an axis, in a fixed order: diversity, offense, sentiment, attribute words, length, refusal, degenerate.

    A lexicon without attribute lists (a user's axis file with no ``# attributes:`` line)
    gets the suite without ``attribute_words``. ``degenerate`` expects answers in the script of
    the axis' group words (:func:`~fairtalk.measures._degenerate.majority_script`): Latin for
    the built-in axes, Cyrillic for a Russian lexicon.

    Parameters
    ----------
    lexicon : Lexicon, or an axis name or lexicon path
        Its ``attributes`` name the attribute lists (career/family for gender,
        pleasant/unpleasant for race). A name or path is loaded with :func:`fairtalk.load_lexicon`.
    distinct : {"paper", "standard"}
        The distinct-n definition.
    offense : str
        ``"profanity_check"`` or ``"hf:MODEL_OR_PATH"``.
    offense_threshold : float
        Offensive at probability ``>=`` this.
    sentiment_threshold : float
        Positive when VADER's compound is ``> t``, negative when ``< -t``.

    Raises
    ------
    SpecError
        ``lexicon`` is none of these, or names no axis.
    """
    from fairtalk.lexicons import Lexicon, load_lexicon

    if isinstance(lexicon, str | os.PathLike):
        lexicon = load_lexicon(lexicon)
    elif not isinstance(lexicon, Lexicon):
        raise SpecError(_MSG_LEXICON_TYPE.format(type=type(lexicon).__name__))
    return build_default(
        MeasureOptions(
            lexicon,
            distinct=distinct,
            offense=offense,
            offense_threshold=offense_threshold,
            sentiment_threshold=sentiment_threshold,
        )
    )


def build_default(options: MeasureOptions) -> list[AnyMeasure]:
    """The default suite (:data:`DEFAULT_SUITE`) built with ``options``; without attribute lists, no ``attribute_words``."""
    names = [name for name in DEFAULT_SUITE if name != "attribute_words" or options.lexicon.attributes]
    return [build_measure(name, options) for name in names]
