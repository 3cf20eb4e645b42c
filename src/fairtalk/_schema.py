"""The options schema's machinery: frozen pydantic dataclasses whose errors are :class:`~fairtalk.errors.SpecError`.

A base module (every layer may import it): :class:`~fairtalk.config.ScoreOptions` and
:class:`~fairtalk.config.AuditConfig` (``config/``), :class:`~fairtalk.prompts.PromptOptions`
(``prompts/``) and :class:`~fairtalk.models.RayEngine` (``models/ray``) are all built with
:func:`options_schema`, so a bounded integer or number is parsed, and a bad one told what it
must be, in one place and in one wording (``seed must be an integer >= 0, got -1``;
``alpha must be between 0 and 1 (exclusive), got 7``; ``num_gpus must be a number >= 0 or
None, got -1``).

Each option of an audit is declared once, as a field of :class:`~fairtalk.pipeline.ScoreOptions` or
:class:`~fairtalk.pipeline.AuditConfig`: its type there (``Literal[...]`` for choices), its
default, bounds (``Field(ge=...)``) and help text (``Field(description=...)``) in
:mod:`fairtalk.options`, which the CLI builds its flags from (``fairtalk.cli._schema``) without
importing the stages. :func:`options_schema` makes a class such a value: a
frozen pydantic dataclass, strict (no ``"yes"`` for a flag, no ``True`` for a number), whose
errors a user causes are one-line SpecErrors naming the option (as the caller spells it:
``names`` maps a field to a flag) and the valid values or range.
"""

from __future__ import annotations

import dataclasses
import functools
import typing
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from pydantic import ConfigDict, Field, ValidationError, ValidationInfo
from pydantic.dataclasses import dataclass as pydantic_dataclass
from pydantic.fields import FieldInfo
from pydantic_core import ArgsKwargs

from fairtalk.errors import SpecError
from fairtalk.options import MUST

__all__ = ["field_info", "keys_of", "label", "option_default", "option_help", "options_schema"]

T = TypeVar("T")

_MSG_MUST = "{name} must be {phrase}, got {value!r}"
_MSG_CHOICE = "unknown {name} {given!r}"
_MSG_UNEXPECTED = "{cls}() got an unexpected keyword argument {key!r}"
#: Strict: a flag is True or False, a number is no bool; arbitrary types: measures, lexicons, models.
_CONFIG = ConfigDict(strict=True, arbitrary_types_allowed=True, extra="forbid")


@typing.dataclass_transform(frozen_default=True, field_specifiers=(Field,))
def options_schema(*, kw_only: bool, what: str | None = None) -> Callable[[type[T]], type[T]]:
    """A class decorator: a frozen, slotted, strict pydantic dataclass whose validation errors are SpecErrors.

    Its ``names`` InitVar (field -> the caller's spelling), when it has one, labels the errors;
    validators read it with :func:`label`. ``what`` prefixes each error (``RayEngine: ...``).
    """

    def wrap(cls: type[T]) -> type[T]:
        built: Any = pydantic_dataclass(frozen=True, slots=True, kw_only=kw_only, config=_CONFIG)(cls)

        @functools.wraps(built.__init__)
        def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
            names = kwargs.get("names")
            try:
                self.__pydantic_validator__.validate_python(
                    ArgsKwargs(args, kwargs), self_instance=self, context={"names": names}
                )
            except ValidationError as exc:
                raise _spec_error(exc, built, names, what) from None

        built.__init__ = __init__
        return typing.cast("type[T]", built)

    return wrap


def label(info: ValidationInfo, key: str | None = None) -> str:
    """How the caller spells the option ``key`` (the field being validated by default): its flag from the CLI."""
    name = key if key is not None else str(info.field_name)
    names = (info.context or {}).get("names") or {}
    return str(names.get(name, name))


def field_info(cls: type, key: str) -> FieldInfo:
    """The pydantic field ``key`` of an options class: its default, bounds and ``description``."""
    fields: dict[str, FieldInfo] = cls.__pydantic_fields__  # type: ignore[attr-defined]
    return fields[key]


def option_default(cls: type, key: str) -> Any:
    """The default of the option ``key`` (a default factory's value when it has one)."""
    info = field_info(cls, key)
    return info.get_default(call_default_factory=True)


def option_help(cls: type, key: str) -> str:
    """The help text of the option ``key`` (its ``description``)."""
    return field_info(cls, key).description or ""


def _phrase(info: FieldInfo) -> str:
    """What a field's value must be, from its bounds (or its declared ``must`` phrase)."""
    extra = info.json_schema_extra
    if isinstance(extra, dict) and isinstance(extra.get(MUST), str):
        return str(extra[MUST])
    bounds = {kind: getattr(m, kind) for m in info.metadata for kind in ("gt", "ge", "lt", "le") if hasattr(m, kind)}
    if typing.get_origin(info.annotation) is None and info.annotation is bool:
        return "true or false"
    members = typing.get_args(info.annotation) if typing.get_origin(info.annotation) is not None else (info.annotation,)
    kind = "an integer" if int in members and float not in members else "a number"
    or_none = " or None" if type(None) in members else ""
    if "gt" in bounds and "lt" in bounds:
        return f"between {bounds['gt']} and {bounds['lt']} (exclusive)"
    if "ge" in bounds and "le" in bounds:
        return f"a number in [{bounds['ge']}, {bounds['le']}]"
    if "ge" in bounds:
        return f"{kind} >= {bounds['ge']}{or_none}"
    if "gt" in bounds:
        return f"{kind} > {bounds['gt']}{or_none}"
    return f"of type {getattr(info.annotation, '__name__', info.annotation)}"


def _literal_choices(annotation: Any) -> tuple[str, ...]:
    """The strings of a ``Literal[...]`` (inside an Optional too)."""
    if typing.get_origin(annotation) is typing.Literal:
        return tuple(str(a) for a in typing.get_args(annotation))
    return tuple(c for arg in typing.get_args(annotation) for c in _literal_choices(arg))


def _spec_error(exc: ValidationError, cls: type, names: Mapping[str, str] | None, what: str | None) -> Exception:
    """The first error of a ValidationError as the SpecError (or TypeError, for an unknown keyword) it stands for."""
    error = exc.errors(include_url=False)[0]
    where = [part for part in error["loc"] if isinstance(part, str)]
    key = where[0] if where else ""
    if error["type"] == "unexpected_keyword_argument":
        return TypeError(_MSG_UNEXPECTED.format(cls=cls.__name__, key=key))
    name = (names or {}).get(key, key)
    prefix = f"{what}: " if what is not None else ""
    fields: dict[str, FieldInfo] = getattr(cls, "__pydantic_fields__", {})
    info = fields.get(key)
    if info is None:  # not a field's error (a validator's ValueError): its own words
        return SpecError(prefix + (f"{name}: {error['msg']}" if name else str(error["msg"])))
    value = error.get("input")
    if error["type"] == "literal_error":
        return SpecError(
            prefix + _MSG_CHOICE.format(name=name, given=value), choices=_literal_choices(info.annotation), given=str(value)
        )
    return SpecError(prefix + _MSG_MUST.format(name=name, phrase=_phrase(info), value=value))


def keys_of(cls: type) -> tuple[str, ...]:
    """The option names of an options class, in declaration order."""
    return tuple(f.name for f in dataclasses.fields(cls))
