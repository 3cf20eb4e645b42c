"""The measure registry: names -> ``"module:Class"`` strings, loaded on first use; plugins by entry point.

Built-in names: ``diversity``, ``offense``, ``sentiment``, ``attribute_words``, ``length``,
``refusal`` and ``regard`` (paper 004). Third-party packages add measures through the ``fairtalk.measures`` entry-point
group (``name = "package.module:Factory"``), or at run time with :func:`register_measure`.
A name registered twice (built-in, entry point or run time) is an error, so a plugin can
never silently shadow a built-in measure.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from functools import lru_cache
from importlib import import_module
from importlib.metadata import EntryPoint, entry_points
from typing import TYPE_CHECKING, Any

from fairtalk.errors import SpecError
from fairtalk.measures.base import CorpusMeasure, Measure

if TYPE_CHECKING:
    from fairtalk.lexicons import Lexicon

__all__ = ["ENTRY_POINT_GROUP", "default_measures", "get_measure", "measure_names", "register_measure"]

#: Entry-point group through which other packages register measures.
ENTRY_POINT_GROUP = "fairtalk.measures"

_BUILTIN: dict[str, str] = {
    "diversity": "fairtalk.measures.diversity:Diversity",
    "offense": "fairtalk.measures.offense:Offense",
    "sentiment": "fairtalk.measures.sentiment:Sentiment",
    "attribute_words": "fairtalk.measures.attribute_words:AttributeWords",
    "length": "fairtalk.measures.length:Length",
    "refusal": "fairtalk.measures.refusal:Refusal",
    "regard": "fairtalk.measures.regard:Regard",
}
#: Measures registered at run time by :func:`register_measure`.
_RUNTIME: dict[str, str | Callable[..., Any]] = {}

_MSG_UNKNOWN = "unknown measure {given!r}"
_MSG_DUPLICATE = "measure {name!r} is already registered ({where})"
_MSG_OPTION = "measure {name!r} does not accept these options: {error}"
_MSG_LOAD = "cannot load measure {name!r} from {target!r}: {error}"
_MSG_NOT_MEASURE = "{target!r} did not build a Measure or CorpusMeasure (got {got})"
_MSG_TARGET = "measure target {target!r} must look like 'package.module:Name'"


@lru_cache(maxsize=1)
def _plugins() -> dict[str, EntryPoint]:
    """Entry points of the ``fairtalk.measures`` group, checked for clashes; read once."""
    found: dict[str, EntryPoint] = {}
    for point in entry_points(group=ENTRY_POINT_GROUP):
        if point.name in _BUILTIN or point.name in found:
            where = "built in" if point.name in _BUILTIN else f"entry point {found[point.name].value!r}"
            raise SpecError(_MSG_DUPLICATE.format(name=point.name, where=where) + f"; entry point {point.value!r}")
        found[point.name] = point
    return found


def _registered() -> dict[str, str | Callable[..., Any] | EntryPoint]:
    table: dict[str, str | Callable[..., Any] | EntryPoint] = dict(_BUILTIN)
    table.update(_plugins())
    table.update(_RUNTIME)
    return table


def measure_names() -> tuple[str, ...]:
    """All registered measure names, sorted.

    Examples
    --------
    >>> {"diversity", "offense", "sentiment", "length"} <= set(measure_names())
    True
    """
    return tuple(sorted(_registered()))


def register_measure(name: str, target: str | Callable[..., Any]) -> None:
    """Register a measure under ``name``: a ``"module:Factory"`` string or a factory callable.

    Raises
    ------
    SpecError
        ``name`` is already registered, or ``target`` is a malformed string.
    """
    if name in _registered():
        raise SpecError(_MSG_DUPLICATE.format(name=name, where="choose another name"))
    if isinstance(target, str) and ":" not in target:
        raise SpecError(_MSG_TARGET.format(target=target))
    _RUNTIME[name] = target


def _load(name: str, target: str | Callable[..., Any] | EntryPoint) -> Callable[..., Any]:
    if callable(target) and not isinstance(target, EntryPoint):
        return target
    try:
        if isinstance(target, EntryPoint):
            return target.load()  # type: ignore[no-any-return]
        module_name, _, attribute = target.partition(":")
        return getattr(import_module(module_name), attribute)  # type: ignore[no-any-return]
    except (ImportError, AttributeError) as exc:
        shown = target.value if isinstance(target, EntryPoint) else target
        raise SpecError(_MSG_LOAD.format(name=name, target=shown, error=exc)) from exc


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
    table = _registered()
    if name not in table:
        raise SpecError(_MSG_UNKNOWN.format(given=name), choices=table, given=name)
    target = table[name]
    factory = _load(name, target)
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
        raise SpecError(_MSG_NOT_MEASURE.format(target=getattr(target, "value", target), got=type(measure).__name__))
    return measure  # type: ignore[no-any-return]


def default_measures(
    lexicon: Lexicon,
    *,
    distinct: str = "paper",
    offense: str = "profanity_check",
    offense_threshold: float = 0.5,
    sentiment_threshold: float = 0.8,
) -> list[Measure | CorpusMeasure]:
    """The default suite for an axis, in a fixed order: diversity, offense, sentiment, attribute words, length, refusal.

    A lexicon without attribute lists (a user's axis file with no ``# attributes:`` line)
    gets the suite without ``attribute_words``.

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
    suite += [get_measure("length"), get_measure("refusal")]
    return suite
