"""Model specs parsed once: ``PREFIX:TARGET[?key=value&...]``, and the typed options adapters declare.

Every adapter describes its options as a frozen dataclass (``OpenAIOptions``,
``PythonOptions``, ...). The registry parses the spec string here, merges the options
written in it with those given as keywords or as ``--model-arg KEY=VALUE``, coerces each
value to the type its field declares (``"8"`` -> ``8``, ``"true"`` -> ``True``), and builds
the dataclass, whose ``__post_init__`` checks the ranges. An optional number or switch takes
``none`` (or ``null``) for "no value" (``timeout=none``: no limit); a string option takes every
string literally. An empty value (``?timeout=``) is always an error, never the default. An option the adapter does not
declare is a :class:`~fairtalk.errors.SpecError` listing the ones it does.

The query part starts at the first ``?`` and is URL-decoded (``%20`` for a space, ``+``
too); values given with ``--model-arg`` are taken literally.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, TypeVar
from urllib.parse import parse_qsl

from fairtalk.errors import SpecError
from fairtalk.models._credentials import hide_credentials

__all__ = ["ModelSpec", "build_options", "option_names", "parse_model_args", "parse_model_spec"]

T = TypeVar("T")

_MSG_NO_PREFIX = "malformed model spec {spec!r} (expected PREFIX:VALUE, e.g. hf:gpt2{prefixes}){hint}"
#: Added to :data:`_MSG_NO_PREFIX` when the spec names a Python file without ``python:`` (``mybot.py:reply``).
_HINT_PYTHON = "; did you mean {spec!r}? (a Python function is python:FILE.py:FUNCTION)"
_MSG_QUERY = "malformed options {query!r} in model spec {spec!r} (expected ?key=value&key=value{hint})"
#: Said when the options hold a ``#``: a server URL with a query of its own before ``#MODEL``.
_HINT_URL_QUERY = "; a server URL with a query of its own goes in base_url: openai:MODEL?base_url=URL"
_MSG_REPEATED = "option {name!r} is given twice in {where}"
_MSG_BOTH = "option {name!r} is given both in the model spec and as a model argument"
_MSG_MODEL_ARG = "malformed --model-arg {arg!r} (expected KEY=VALUE, e.g. timeout=60)"
_MSG_UNKNOWN = "unknown option {name!r} for {spec}"
_MSG_NO_OPTIONS = "{spec} takes no options, got {name!r}"
_MSG_TYPE = "option {name}={value!r} for {spec} is not {kind}"
_MSG_CHOICE = "option {name}={value!r} for {spec} is not one of the choices"
_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})
_MSG_EMPTY = "option {name}= for {spec} is empty; give {kind}{none} (or leave the option out for its default)"
#: Words that mean "no value" for an optional number or switch (``timeout=none``); a string option takes them
#: literally, and an empty value is never taken for "no value".
_NONE = frozenset({"none", "null"})
_KINDS = {bool: "true or false", int: "an integer", float: "a number", str: "a non-empty string"}
#: The numeric types an option may have -> the value types that are not parsed as one.
_REFUSED: dict[type, tuple[type, ...]] = {int: (bool, float), float: (bool,)}


@dataclass(frozen=True, slots=True)
class ModelSpec:
    """A parsed model spec: ``prefix``, ``target`` (what follows ``prefix:``, without the options) and ``options``.

    Examples
    --------
    >>> spec = parse_model_spec("openai:http://127.0.0.1:8000/v1#m?timeout=60&api_key_env=MY_KEY")
    >>> spec.prefix, spec.target, dict(spec.options)
    ('openai', 'http://127.0.0.1:8000/v1#m', {'timeout': '60', 'api_key_env': 'MY_KEY'})
    """

    prefix: str
    target: str
    options: Mapping[str, str] = dataclasses.field(default_factory=lambda: MappingProxyType({}))

    @property
    def name(self) -> str:
        """``prefix:target``, the spec without its options (used in messages)."""
        return f"{self.prefix}:{self.target}"


def _pairs_to_dict(pairs: Iterable[tuple[str, str]], where: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in pairs:
        if key in out:
            raise SpecError(_MSG_REPEATED.format(name=key, where=where))
        out[key] = value
    return out


def _malformed(spec: str, query: str) -> SpecError:
    """The error for options that are no ``key=value&...``, without a credential a URL's query holds."""
    hint = _HINT_URL_QUERY if "#" in query else ""
    return SpecError(_MSG_QUERY.format(query=hide_credentials("?" + query)[1:], spec=hide_credentials(spec), hint=hint))


def _no_prefix(spec: object, prefixes: Sequence[str]) -> SpecError:
    """The error for a spec with no ``PREFIX:``: the ``prefixes``, and ``python:`` for a Python file given without it."""
    hint = ""
    if isinstance(spec, str):
        spec = hide_credentials(spec)
        path, query, options = spec.partition("?")
        file, _, function = path.partition(":")
        if file.endswith(".py") and (not function or function.isidentifier()):
            hint = _HINT_PYTHON.format(spec=f"python:{file}:{function or 'FUNCTION'}{query}{options}")
    listed = f", with PREFIX one of: {', '.join(prefixes)}" if prefixes else ""
    return SpecError(_MSG_NO_PREFIX.format(spec=spec, prefixes=listed, hint=hint))


def parse_model_spec(spec: str, *, prefixes: Sequence[str] = ()) -> ModelSpec:
    """Split a spec into prefix, target and its ``?key=value`` options (SpecError when malformed).

    ``prefixes``: the registered ones, which the error for a spec with no prefix lists (the
    registry gives them: it parses specs with this module).
    """
    if not isinstance(spec, str):
        raise _no_prefix(spec, prefixes)
    prefix, sep, rest = spec.partition(":")
    if not sep or not prefix or not prefix.isidentifier():
        raise _no_prefix(spec, prefixes)
    target, qsep, query = rest.partition("?")
    if not qsep:
        return ModelSpec(prefix, target)
    try:
        pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=True)
    except ValueError:
        raise _malformed(spec, query) from None
    if any(not key.isidentifier() for key, _ in pairs):
        raise _malformed(spec, query)
    return ModelSpec(prefix, target, MappingProxyType(_pairs_to_dict(pairs, f"model spec {prefix}:{target}")))


def parse_model_args(args: Iterable[str]) -> dict[str, str]:
    """``["timeout=60", "batched=true"]`` -> ``{"timeout": "60", "batched": "true"}`` (values taken literally).

    Examples
    --------
    >>> parse_model_args(["system_prompt=Be brief. Answer=yes", "timeout=60"])
    {'system_prompt': 'Be brief. Answer=yes', 'timeout': '60'}
    """
    pairs = []
    for arg in args:
        key, sep, value = arg.partition("=")
        key = key.strip()
        if not sep or not key.isidentifier():
            raise SpecError(_MSG_MODEL_ARG.format(arg=arg))
        pairs.append((key, value))
    return _pairs_to_dict(pairs, "--model-arg")


def merge_spec_options(spec: ModelSpec, given: Mapping[str, object]) -> dict[str, object]:
    """The spec's own options plus ``given``; a name in both is a SpecError."""
    for name in given:
        if name in spec.options:
            raise SpecError(_MSG_BOTH.format(name=name))
    return {**spec.options, **given}


def option_names(options_type: type) -> tuple[str, ...]:
    """The option names an options dataclass declares."""
    return tuple(f.name for f in dataclasses.fields(options_type) if f.init)


def _coerce(name: str, value: object, hint: Any, spec: str) -> object:
    """``value`` as the type ``hint`` names; strings from a spec or the CLI are parsed."""
    args = typing.get_args(hint)
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType) and type(None) in args:
        return _coerce_optional(name, value, args, spec)
    if isinstance(value, str) and not value.strip() and hint in (bool, int, float):
        raise SpecError(_MSG_EMPTY.format(name=name, spec=spec, kind=_KINDS[hint], none=""))
    if origin is typing.Literal:
        return _coerce_choice(name, value, args, spec)
    if hint is bool:
        return _coerce_bool(name, value, spec)
    if hint in _REFUSED:
        return _coerce_number(name, value, hint, spec)
    if hint is str:
        return _coerce_str(name, value, spec)
    return value


def _coerce_optional(name: str, value: object, args: tuple[Any, ...], spec: str) -> object:
    """``value`` for an optional option (``X | None``): None, a "no value" word for a non-string, or coerced as ``X``."""
    (inner,) = [a for a in args if a is not type(None)] or (str,)
    if value is None:
        return None
    if isinstance(value, str):
        text = value.strip().lower()
        if not text:  # ``?api_key_env=`` or ``?timeout=``: a slip, never a silent default
            none = "" if inner is str else ", or none"
            raise SpecError(_MSG_EMPTY.format(name=name, spec=spec, kind=_kind_words(inner), none=none))
        if text in _NONE and inner is not str:
            return None
    return _coerce(name, value, inner, spec)


def _kind_words(hint: Any) -> str:
    """What an option of type ``hint`` takes, in words, for the message about an empty value."""
    return _KINDS.get(hint) or (
        f"one of {', '.join(map(str, typing.get_args(hint)))}" if typing.get_origin(hint) is typing.Literal else "a value"
    )


def _coerce_choice(name: str, value: object, choices: tuple[Any, ...], spec: str) -> object:
    """``value`` when it is one of a ``Literal`` option's choices, else a SpecError listing them."""
    if value not in choices:
        raise SpecError(_MSG_CHOICE.format(name=name, value=value, spec=spec), choices=map(str, choices), given=str(value))
    return value


def _coerce_bool(name: str, value: object, spec: str) -> bool:
    """``value`` as a switch: a bool, or a word (or 0/1) of :data:`_TRUE` or :data:`_FALSE`."""
    if isinstance(value, bool):
        return value
    flag = str(value).strip().lower() if isinstance(value, (str, int)) else None
    if flag in _TRUE:
        return True
    if flag in _FALSE:
        return False
    raise SpecError(_MSG_TYPE.format(name=name, value=value, spec=spec, kind="true or false"))


def _coerce_number(name: str, value: object, hint: type, spec: str) -> object:
    """``value`` as an int or float: parsed, but never from a bool (nor an int from a float)."""
    if isinstance(value, _REFUSED[hint]):
        raise SpecError(_MSG_TYPE.format(name=name, value=value, spec=spec, kind=_KINDS[hint]))
    try:
        return hint(value)
    except (TypeError, ValueError):
        raise SpecError(_MSG_TYPE.format(name=name, value=value, spec=spec, kind=_KINDS[hint])) from None


def _coerce_str(name: str, value: object, spec: str) -> str:
    """``value`` when it is a string, taken literally; anything else is a SpecError."""
    if not isinstance(value, str):
        raise SpecError(_MSG_TYPE.format(name=name, value=value, spec=spec, kind="a string"))
    return value


def build_options(options_type: type[T], given: Mapping[str, object], *, spec: str) -> T:
    """An ``options_type`` instance from string or typed values; unknown names are a SpecError.

    Examples
    --------
    >>> from dataclasses import dataclass
    >>> @dataclass(frozen=True)
    ... class Options:
    ...     timeout: float = 30.0
    ...     batched: bool | None = None
    >>> build_options(Options, {"timeout": "60", "batched": "yes"}, spec="python:bot.py:reply")
    Options(timeout=60.0, batched=True)
    """
    names = option_names(options_type)
    hints = typing.get_type_hints(options_type)
    values: dict[str, object] = {}
    for name, value in given.items():
        if name not in names:
            if not names:
                raise SpecError(_MSG_NO_OPTIONS.format(spec=spec, name=name))
            raise SpecError(_MSG_UNKNOWN.format(name=name, spec=spec), choices=names, given=name)
        values[name] = _coerce(name, value, hints[name], spec)
    try:
        return options_type(**values)
    except SpecError:
        raise
    except (TypeError, ValueError) as exc:
        raise SpecError(f"{spec}: {exc}") from exc
