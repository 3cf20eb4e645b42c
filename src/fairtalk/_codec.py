"""One codec for the frozen records: ``to_dict()`` and ``from_dict()`` read from the dataclass declaration.

A record subclasses :class:`Codec` (a slot-less mixin) and gets both methods; its JSON is its
fields, in field order, typed by their annotations:

- writing: a tuple becomes a list, a mapping a dict, an enum its value, a nested record its
  own ``to_dict()``; anything else is written as it is (NaN stays NaN: the JSON writer maps it to null);
- reading: each field is rebuilt from its annotation (``tuple[X, ...]``, fixed tuples,
  ``Mapping[str, X]`` as a read-only mapping (``dict[str, X]`` as a dict), ``X | None``, enums, nested records through their
  ``from_dict()``); ints read into a ``float`` field become floats, integral floats in an ``int``
  field ints, and a scalar of another type is a :class:`TypeError` naming the field. A missing key
  takes the field's default (a key without a default is a :class:`KeyError`); null in a field that
  is not optional reads as its empty value (NaN for a float, an empty tuple or mapping, a fixed
  tuple of nulls), as strict JSON writes NaN as null. Keys the record does not know are ignored.

Where a record's JSON is not just its fields, the declaration says so, and nothing else does:

- ``field(metadata=SKIP)``: the field is not written (read when the dict has it, else its default:
  a key filed outside the record, or data the JSON does not hold);
- ``field(metadata=key("name"))``: the field's JSON key differs from its name;
- ``field(metadata=via(write, read))``: the field has a JSON shape of its own (a list of pairs
  written as an object, say), converted by the two functions;
- ``_codec_keys`` (a class variable): the JSON keys in order, naming fields and read-only properties
  or methods without arguments (derived keys, written but not read back); without it, the fields in order.

The module imports nothing else from fairtalk, so every layer may use it.
"""

from __future__ import annotations

import dataclasses
import enum
import math
import numbers
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Self, TypeVar, Union

__all__ = ["SKIP", "Codec", "from_dict", "key", "to_dict", "via"]

T = TypeVar("T")

#: Field metadata: the field is left out of the JSON.
SKIP: Mapping[str, Any] = types.MappingProxyType({"codec_skip": True})

_MISSING = dataclasses.MISSING
_MSG_TYPE = "field {path!r}: expected {expected}, got {got}"


def key(name: str) -> Mapping[str, Any]:
    """Field metadata: the field's JSON key is ``name``."""
    return types.MappingProxyType({"codec_key": name})


def via(write: Callable[[Any], Any], read: Callable[[Any], Any]) -> Mapping[str, Any]:
    """Field metadata: the field is written as ``write(value)`` and read as ``read(json_value)`` (a shape of its own)."""
    return types.MappingProxyType({"codec_via": (write, read)})


class Codec:
    """The mixin that gives a frozen dataclass ``to_dict()`` and ``from_dict()`` (see the module docstring)."""

    __slots__ = ()

    #: The JSON keys in order (fields and derived read-only properties); empty: the fields in order.
    _codec_keys: ClassVar[tuple[str, ...]] = ()

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict, as declared by the record's fields."""
        return to_dict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        """The record of a :meth:`to_dict` dict."""
        return from_dict(cls, data)


@dataclasses.dataclass(frozen=True, slots=True)
class _Slot:
    """How one JSON key of a record is written and read."""

    name: str
    key: str
    hint: Any
    field: dataclasses.Field[Any] | None  # None: a derived key (written, never read)


_SLOTS: dict[type, tuple[_Slot, ...]] = {}


def _slots(cls: type) -> tuple[_Slot, ...]:
    """The JSON keys of a record class, read from its declaration once."""
    slots = _SLOTS.get(cls)
    if slots is None:
        slots = _SLOTS[cls] = _declared_slots(cls)
    return slots


def _declared_slots(cls: type) -> tuple[_Slot, ...]:
    hints = typing.get_type_hints(cls)
    by_name = {f.name: f for f in dataclasses.fields(cls)}
    written = [f.name for f in by_name.values() if not f.metadata.get("codec_skip")]
    order: tuple[str, ...] = getattr(cls, "_codec_keys", ()) or tuple(written)
    slots = [
        _Slot(name, by_name[name].metadata.get("codec_key", name), hints[name], by_name[name])
        if name in by_name
        else _Slot(name, name, Any, None)
        for name in order
    ]
    skipped = [f for name, f in by_name.items() if name not in order]
    return (*slots, *(_Slot(f.name, f.name, hints[f.name], f) for f in skipped if f.metadata.get("codec_skip")))


def to_dict(record: Any) -> dict[str, Any]:
    """The JSON-ready dict of a record (a dataclass), as its declaration says."""
    return {slot.key: _dump(_value(record, slot)) for slot in _slots(type(record)) if _written(slot)}


def _value(record: Any, slot: _Slot) -> Any:
    value = getattr(record, slot.name)
    if slot.field is None:
        return value() if callable(value) else value  # a derived key may name a method
    converters = slot.field.metadata.get("codec_via")
    return value if converters is None else converters[0](value)


def _written(slot: _Slot) -> bool:
    return slot.field is None or not slot.field.metadata.get("codec_skip")


def _dump(value: Any) -> Any:
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, (tuple, list)):
        return [_dump(item) for item in value]
    if isinstance(value, Mapping):
        return {name: _dump(item) for name, item in value.items()}
    to_dict_method = getattr(value, "to_dict", None)
    if callable(to_dict_method) and not isinstance(value, type):
        return to_dict_method()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return to_dict(value)
    return value


def from_dict(cls: type[T], data: Mapping[str, Any]) -> T:
    """The record of class ``cls`` that :func:`to_dict` wrote as ``data``."""
    if not isinstance(data, Mapping):
        raise TypeError(f"{cls.__name__}: expected an object, got {type(data).__name__}")
    values: dict[str, Any] = {}
    for slot in _slots(cls):
        if slot.field is None or not slot.field.init:
            continue
        if slot.key not in data:
            if slot.field.default is _MISSING and slot.field.default_factory is _MISSING:
                raise KeyError(slot.key)
            continue
        converters = slot.field.metadata.get("codec_via")
        if converters is not None:
            values[slot.name] = converters[1](data[slot.key])
        else:
            values[slot.name] = _load(slot.hint, data[slot.key], f"{cls.__name__}.{slot.key}")
    return cls(**values)


def _load(hint: Any, value: Any, path: str) -> Any:  # noqa: PLR0911 - one return per kind of annotation
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is Any:
        return value
    if origin in (Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        rest = [arg for arg in args if arg is not type(None)]
        return _load(rest[0] if len(rest) == 1 else Any, value, path)
    if value is None:
        return _empty(hint, origin, args)
    if origin is tuple:
        return _load_tuple(args, value, path)
    if origin in (Mapping, dict) or hint in (Mapping, dict):
        inner = args[1] if args else Any
        items = _expect(value, Mapping, "an object", path).items()
        loaded = {name: _load(inner, item, f"{path}.{name}") for name, item in items}
        return loaded if dict in (origin, hint) else types.MappingProxyType(loaded)
    if isinstance(hint, type):
        return _load_class(hint, value, path)
    return value


def _load_tuple(args: tuple[Any, ...], value: Any, path: str) -> tuple[Any, ...]:
    items = _expect(value, (list, tuple), "a list", path)
    if len(args) == 2 and args[1] is Ellipsis:  # noqa: PLR2004 - tuple[X, ...]
        return tuple(_load(args[0], item, f"{path}[{i}]") for i, item in enumerate(items))
    if len(items) != len(args):
        raise ValueError(f"field {path!r}: expected {len(args)} items, got {len(items)}")
    return tuple(_load(arg, item, f"{path}[{i}]") for i, (arg, item) in enumerate(zip(args, items, strict=True)))


def _load_class(hint: type, value: Any, path: str) -> Any:
    if issubclass(hint, enum.Enum):
        return hint(value)
    if hint is bool:
        return _expect(value, bool, "true or false", path)
    if hint in (float, int) and isinstance(value, bool):
        raise TypeError(_MSG_TYPE.format(path=path, expected="a number", got="a boolean"))
    if hint is float:
        return float(_expect(value, numbers.Real, "a number", path))
    if hint is int:
        if isinstance(value, float) and value.is_integer():
            return int(value)
        return _expect(value, numbers.Integral, "an integer", path)
    if hint is str:
        return _expect(value, str, "a string", path)
    reader = getattr(hint, "from_dict", None)
    if callable(reader):
        return reader(_expect(value, Mapping, "an object", path))
    if dataclasses.is_dataclass(hint):
        return from_dict(hint, value)
    return value


def _expect(value: Any, kind: type | tuple[type, ...], expected: str, path: str) -> Any:
    if not isinstance(value, kind):
        raise TypeError(_MSG_TYPE.format(path=path, expected=expected, got=type(value).__name__))
    return value


def _empty(hint: Any, origin: Any, args: tuple[Any, ...]) -> Any:
    """The value null reads as in a field that is not optional."""
    if hint is float:
        return math.nan
    if origin is tuple:
        return () if len(args) == 2 and args[1] is Ellipsis else (None,) * len(args)  # noqa: PLR2004 - tuple[X, ...]
    if origin in (Mapping, dict) or hint in (Mapping, dict):
        return types.MappingProxyType({})
    return None
