"""The measure registry (:data:`MEASURES`, a :class:`~fairtalk.registry.Registry`): names -> factories loaded on first use.

Built-in names: ``diversity``, ``offense``, ``sentiment``, ``attribute_words``, ``length``,
``refusal``, ``degenerate`` and ``regard`` (paper 004). Third-party packages add measures through the ``fairtalk.measures`` entry-point
group (``name = "package.module:Factory"``), or at run time with :func:`register_measure`.
A name registered twice (built-in, entry point or run time) is an error, so a plugin can
never silently shadow a built-in measure.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from fairtalk.errors import SpecError
from fairtalk.measures.base import CorpusMeasure, Measure
from fairtalk.registry import Registry

if TYPE_CHECKING:
    from fairtalk.lexicons import Lexicon

__all__ = [
    "ENTRY_POINT_GROUP",
    "MEASURES",
    "check_measure_names",
    "default_measures",
    "get_measure",
    "measure_names",
    "register_measure",
]

#: Entry-point group through which other packages register measures.
ENTRY_POINT_GROUP = "fairtalk.measures"

#: Measure name -> a factory (a class, or a function) that builds the measure from keyword options.
MEASURES: Registry[Callable[..., Any]] = Registry(
    "measure",
    group=ENTRY_POINT_GROUP,
    base=Callable,  # type: ignore[arg-type]
    expected="a measure class or factory",
    builtins={
        "diversity": "fairtalk.measures.diversity:Diversity",
        "offense": "fairtalk.measures.offense:Offense",
        "sentiment": "fairtalk.measures.sentiment:Sentiment",
        "attribute_words": "fairtalk.measures.attribute_words:AttributeWords",
        "length": "fairtalk.measures.length:Length",
        "refusal": "fairtalk.measures.refusal:Refusal",
        "degenerate": "fairtalk.measures.degenerate:Degenerate",
        "regard": "fairtalk.measures.regard:Regard",
    },
)

_MSG_OPTION = "measure {name!r} does not accept these options: {error}"
_MSG_NOT_MEASURE = "measure {name!r} did not build a Measure or CorpusMeasure (got {got})"


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


def register_measure(name: str, target: str | Callable[..., Any]) -> None:
    """Register a measure under ``name``: a ``"module:Factory"`` string or a factory callable.

    The measure is then selectable by name everywhere: :func:`get_measure`,
    ``score(measures=[name])`` and ``fairtalk score/audit --measures NAME``.

    Raises
    ------
    SpecError
        ``name`` is already registered, or ``target`` is a malformed string.
    """
    MEASURES.add(name, target)


def get_measure(name: str, **options: Any) -> Measure | CorpusMeasure:
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
    factory = MEASURES.get(name)
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
    measure = factory(**options)
    if not isinstance(measure, (Measure, CorpusMeasure)):
        raise SpecError(_MSG_NOT_MEASURE.format(name=name, got=type(measure).__name__))
    return measure


def default_measures(
    lexicon: Lexicon,
    *,
    distinct: str = "paper",
    offense: str = "profanity_check",
    offense_threshold: float = 0.5,
    sentiment_threshold: float = 0.8,
) -> list[Measure | CorpusMeasure]:
    """The default suite for an axis, in a fixed order: diversity, offense, sentiment, attribute words, length, refusal, degenerate.

    A lexicon without attribute lists (a user's axis file with no ``# attributes:`` line)
    gets the suite without ``attribute_words``. ``degenerate`` expects answers in the script of
    the axis' group words (:func:`~fairtalk.measures.degenerate.majority_script`): Latin for
    the built-in axes, Cyrillic for a Russian lexicon.

    Parameters
    ----------
    lexicon : Lexicon
        Its ``attributes`` name the attribute lists (career/family for gender,
        pleasant/unpleasant for race).
    distinct : {"paper", "standard"}
        The distinct-n definition.
    offense : str
        ``"profanity_check"`` or ``"hf:MODEL_OR_PATH"``.
    offense_threshold : float
        Offensive at probability ``>=`` this.
    sentiment_threshold : float
        Positive when VADER's compound is ``> t``, negative when ``< -t``.
    """
    suite = [
        get_measure("diversity", definition=distinct),
        get_measure("offense", scorer=offense, threshold=offense_threshold),
        get_measure("sentiment", positive_threshold=sentiment_threshold, negative_threshold=-sentiment_threshold),
    ]
    if lexicon.attributes:
        suite.append(get_measure("attribute_words", lexicon=lexicon))
    from fairtalk.measures.degenerate import majority_script

    script = majority_script(word for pair in lexicon.pairs for word in (pair.a, pair.b))
    suite += [get_measure("length"), get_measure("refusal"), get_measure("degenerate", script=script)]
    return suite
