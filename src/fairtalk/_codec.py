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
  written as an object, say), converted by the two functions; ``via(write, read, whole=True)``:
  the field's JSON is spread over the parent's object (a key that also holds other fields' values,
  or a value read with the help of other keys), so ``write`` is given the whole record and
  ``read`` the whole object (a missing key is then ``read``'s to handle);
- ``field(metadata=OMIT_DEFAULT)``: the field is written only when it is not its default (a field
  that is None by default: only when set); a missing key reads as the default.
  ``omit_default(when)``: left out at its default only where ``when(record)`` is true (a setting
  that only one kind of record writes, say), else written;
- ``field(metadata=INLINE)``: a nested record whose keys sit in the parent's own object. It is
  read from the parent's whole object (by its class's ``from_dict()``), and written at its place
  in ``_codec_keys``, or key by key where ``_codec_keys`` names them as ``"field.name"`` (each
  with the nested field's own metadata: key, via, omitted at its default);
- ``field(metadata=keyed(name))``: a tuple of records written as an object, each record under its
  ``name`` attribute (a key its own JSON leaves out: ``SKIP``, or not named); read back with each
  entry's key put back under ``name``;
- ``field(metadata=REST)``: a mapping that holds the keys the record does not name (a hand-added
  note, a key a later version wrote): read as every key no other field reads, written back at its
  place, so nothing is lost on a round trip;
- ``field(metadata=ABSENT)``: a ``frozenset[str]`` field (no key of its own) that ``from_dict()``
  fills with the fields whose keys the object lacked; ``to_dict()`` leaves those out while they
  hold their default, so a file is written back as it was read;
- ``_codec_keys`` (a class variable): the JSON keys in order, naming fields, inlined records'
  fields (``"field.name"``) and read-only properties or methods without arguments (derived keys,
  written but not read back); without it, the fields in order. A field it leaves out (and not
  ``SKIP``, ``INLINE`` or ``ABSENT``) is neither written nor read: it takes its default (what the
  record was computed from, say).

Metadata combine with ``|`` (``OMIT_DEFAULT | key("manifest")``). Null in a nested record's field
that has a default reads as that default. A field annotated with a type imported only for type
checking (a pandas DataFrame) is read as it is: such a field declares its shape with ``via``.

The module imports nothing else from fairtalk, so every layer may use it.
"""

from __future__ import annotations

import dataclasses
import enum
import math
import numbers
import sys
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Self, TypeVar, Union

__all__ = [
    "ABSENT",
    "INLINE",
    "OMIT_DEFAULT",
    "REST",
    "SKIP",
    "Codec",
    "from_dict",
    "key",
    "keyed",
    "omit_default",
    "to_dict",
    "via",
]

T = TypeVar("T")

#: Field metadata: the field is left out of the JSON.
SKIP: types.MappingProxyType[str, Any] = types.MappingProxyType({"codec_skip": True})
#: Field metadata: the field is written only when it is not its default.
OMIT_DEFAULT: types.MappingProxyType[str, Any] = types.MappingProxyType({"codec_omit_default": True})
#: Field metadata: a nested record whose keys sit in the parent's own object.
INLINE: types.MappingProxyType[str, Any] = types.MappingProxyType({"codec_inline": True})
#: Field metadata: a mapping of the keys the record does not name, read and written back as they are.
REST: types.MappingProxyType[str, Any] = types.MappingProxyType({"codec_rest": True})
#: Field metadata: the fields a dict read lacked (no key of its own), left out when written back at their default.
ABSENT: types.MappingProxyType[str, Any] = types.MappingProxyType({"codec_absent": True})

_MISSING = dataclasses.MISSING
_MSG_TYPE = "field {path!r}: expected {expected}, got {got}"


def key(name: str) -> types.MappingProxyType[str, Any]:
    """Field metadata: the field's JSON key is ``name``."""
    return types.MappingProxyType({"codec_key": name})


def via(write: Callable[[Any], Any], read: Callable[[Any], Any], *, whole: bool = False) -> types.MappingProxyType[str, Any]:
    """Field metadata: the field is written as ``write(value)`` and read as ``read(json_value)`` (a shape of its own).

    ``whole``: the field's JSON is spread over the parent's object: written as ``write(record)``,
    read as ``read(json_object)``.
    """
    return types.MappingProxyType({"codec_via": (write, read), "codec_whole": whole})


def omit_default(when: Callable[[Any], bool]) -> types.MappingProxyType[str, Any]:
    """Field metadata: the field is left out at its default when ``when(record)`` is true (else written)."""
    return types.MappingProxyType({"codec_omit_default": when})


def keyed(name: str) -> types.MappingProxyType[str, Any]:
    """Field metadata: a tuple of records written as an object, each record's JSON under its attribute ``name``."""
    return types.MappingProxyType({"codec_keyed": name})


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
    written: bool = True
    read: bool = True
    path: tuple[str, ...] = ()  # an inlined record's field: the attributes that lead to its value


_SLOTS: dict[type, tuple[_Slot, ...]] = {}


def _slots(cls: type) -> tuple[_Slot, ...]:
    """The JSON keys of a record class, read from its declaration once."""
    slots = _SLOTS.get(cls)
    if slots is None:
        slots = _SLOTS[cls] = _declared_slots(cls)
    return slots


def _hints(cls: type) -> dict[str, Any]:
    """The fields' annotations; one naming a type imported only for type checking (a DataFrame) reads as Any."""
    try:
        return typing.get_type_hints(cls)
    except NameError:
        pass
    fields = {f.name for f in dataclasses.fields(cls)}
    hints: dict[str, Any] = {}
    for klass in reversed(cls.__mro__):
        namespace = vars(sys.modules[klass.__module__])
        for name, annotation in vars(klass).get("__annotations__", {}).items():
            if name not in fields:
                continue
            try:
                hints[name] = typing.get_type_hints(types.SimpleNamespace(__annotations__={name: annotation}), namespace)[name]
            except NameError:
                hints[name] = Any
    return hints


def _declared_slots(cls: type) -> tuple[_Slot, ...]:
    hints = _hints(cls)
    by_name = {f.name: f for f in dataclasses.fields(cls)}
    written = [f.name for f in by_name.values() if not f.metadata.get("codec_skip") and not f.metadata.get("codec_absent")]
    order: tuple[str, ...] = getattr(cls, "_codec_keys", ()) or tuple(written)
    slots = [_named_slot(name, by_name, hints) for name in order]
    unnamed = [f for name, f in by_name.items() if name not in order]
    read_only = [f for f in unnamed if f.metadata.get("codec_skip") or f.metadata.get("codec_inline")]
    return (*slots, *(_Slot(f.name, f.metadata.get("codec_key", f.name), hints[f.name], f, written=False) for f in read_only))


def _named_slot(name: str, by_name: Mapping[str, dataclasses.Field[Any]], hints: Mapping[str, Any]) -> _Slot:
    if name in by_name:
        f = by_name[name]
        return _Slot(name, f.metadata.get("codec_key", name), hints[name], f, written=not f.metadata.get("codec_skip"))
    head, _, rest = name.partition(".")
    if rest and head in by_name and by_name[head].metadata.get("codec_inline"):  # an inlined record's field
        inner = _named_slot(rest, {f.name: f for f in dataclasses.fields(hints[head])}, _hints(hints[head]))
        return dataclasses.replace(inner, read=False, path=(head, *(inner.path or (inner.name,))))
    return _Slot(name, name, Any, None, read=False)


def to_dict(record: Any) -> dict[str, Any]:
    """The JSON-ready dict of a record (a dataclass), as its declaration says."""
    out: dict[str, Any] = {}
    absent = _absent(record)
    for slot in _slots(type(record)):
        if not slot.written:
            continue
        value = _attribute(record, slot)
        if _omitted(record, slot, value, absent):
            continue
        meta = slot.field.metadata if slot.field is not None else {}
        if meta.get("codec_inline") or meta.get("codec_rest"):
            out.update(_dump(value))
        elif meta.get("codec_keyed"):
            out[slot.key] = {getattr(item, meta["codec_keyed"]): _dump(item) for item in value}
        else:
            out[slot.key] = _dump(_converted(record, value, slot))
    return out


def _absent(record: Any) -> frozenset[str]:
    """The fields whose keys the dict a record was read from lacked (its :data:`ABSENT` field), if it has one."""
    name = _ABSENT_FIELD.get(type(record))
    if name is None:
        fields = [f.name for f in dataclasses.fields(record) if f.metadata.get("codec_absent")]
        name = _ABSENT_FIELD[type(record)] = fields[0] if fields else ""
    return getattr(record, name) if name else frozenset()


_ABSENT_FIELD: dict[type, str] = {}


def _omitted(record: Any, slot: _Slot, value: Any, absent: frozenset[str]) -> bool:
    """Whether a field at its default is left out: declared so, or absent from the dict the record was read from."""
    if slot.field is None or slot.path:
        return slot.field is not None and bool(slot.field.metadata.get("codec_omit_default")) and _is_default(value, slot.field)
    when = slot.field.metadata.get("codec_omit_default")
    if not when and slot.name not in absent:
        return False
    if when and when is not True and not when(record) and slot.name not in absent:
        return False
    return _is_default(value, slot.field)


def _attribute(record: Any, slot: _Slot) -> Any:
    value = record
    for name in slot.path or (slot.name,):
        value = getattr(value, name)
    if slot.field is None and callable(value):
        return value()  # a derived key may name a method
    return value


def _converted(record: Any, value: Any, slot: _Slot) -> Any:
    converters = slot.field.metadata.get("codec_via") if slot.field is not None else None
    if converters is None:
        return value
    return converters[0](record if slot.field is not None and slot.field.metadata.get("codec_whole") else value)


def _is_default(value: Any, field: dataclasses.Field[Any] | None) -> bool:
    if field is None:
        return False
    if field.default is not _MISSING:
        default = field.default
    elif field.default_factory is not _MISSING:
        default = field.default_factory()
    else:
        return False
    return value is default or bool(value == default)


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
    slots = _slots(cls)
    own = [s for s in slots if s.read and s.field is not None and _plain_slot(s)]  # the slots read from a key of their own
    rest, absent = _rest_and_absent(cls, slots)
    if absent:
        values[absent] = frozenset(s.name for s in own if s.key not in data)
    for slot in slots:
        if slot.field is None or not slot.read or not slot.field.init:
            continue
        if slot.name == rest:
            named = {s.key for s in own}
            values[rest] = _load(slot.hint, {k: v for k, v in data.items() if k not in named}, cls.__name__)
        elif not _plain_slot(slot):
            values[slot.name] = _read_spread(slot, slot.field.metadata, data, f"{cls.__name__}.{slot.key}")
        elif slot.key in data:
            value = data[slot.key]
            if value is not None or not _is_record(slot.hint) or not _has_default(slot.field):  # null record: its default
                values[slot.name] = _read(slot, slot.field.metadata, value, f"{cls.__name__}.{slot.key}")
        elif not _has_default(slot.field):
            raise KeyError(slot.key)
    return cls(**values)


def _read_spread(slot: _Slot, meta: Mapping[str, Any], data: Mapping[str, Any], path: str) -> Any:
    """An inlined record, or a value spread over the object (``via(..., whole=True)``), read from the whole object."""
    if meta.get("codec_inline"):
        return _load(slot.hint, data, path)
    return meta["codec_via"][1](data)


def _read(slot: _Slot, meta: Mapping[str, Any], value: Any, path: str) -> Any:
    """A field read from its own key's value."""
    converters = meta.get("codec_via")
    if converters is not None:
        return converters[1](value)
    if meta.get("codec_keyed"):
        return _load_keyed(slot.hint, value, meta["codec_keyed"], path)
    return _load(slot.hint, value, path)


def _rest_and_absent(cls: type, slots: tuple[_Slot, ...]) -> tuple[str, str]:
    """The names of a record's :data:`REST` and :data:`ABSENT` fields ("" for none)."""
    rest = next((s.name for s in slots if s.field is not None and s.field.metadata.get("codec_rest")), "")
    absent = next((f.name for f in dataclasses.fields(cls) if f.metadata.get("codec_absent")), "")
    return rest, absent


def _plain_slot(slot: _Slot) -> bool:
    """A slot read from its own key (not an inlined record, the rest, or a value spread over the object: ``whole``)."""
    meta = slot.field.metadata if slot.field is not None else {}
    return not (meta.get("codec_inline") or meta.get("codec_rest") or meta.get("codec_whole"))


def _is_record(hint: Any) -> bool:
    return isinstance(hint, type) and (dataclasses.is_dataclass(hint) or callable(getattr(hint, "from_dict", None)))


def _has_default(field: dataclasses.Field[Any]) -> bool:
    return field.default is not _MISSING or field.default_factory is not _MISSING


def _load_keyed(hint: Any, value: Any, name: str, path: str) -> tuple[Any, ...]:
    """A :func:`keyed` object read back: each entry a record with its key put back under ``name``."""
    if value is None:
        return ()
    inner = typing.get_args(hint)[0]
    entries = _expect(value, Mapping, "an object", path).items()
    return tuple(
        _load(inner, {**_expect(entry, Mapping, "an object", f"{path}.{k}"), name: k}, f"{path}.{k}") for k, entry in entries
    )


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
