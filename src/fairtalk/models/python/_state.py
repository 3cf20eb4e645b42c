"""The state that makes a callable given as ``model=fn`` the model it is, digested for its fingerprint.

Two callables with one code can be two models: ``Bot(2).reply`` and ``Bot(9).reply``,
``partial(styled, style="nice")`` and ``partial(styled, style="rude")``, ``make_bot(".")`` and
``make_bot("!")``. Their fingerprint therefore holds a digest of that state, read the same way
in every run, never from ``id()`` or a memory address:

- a ``functools.partial``: its function (with its own state), its arguments and keywords;
- a bound method: its instance's attributes (``vars`` and ``__slots__``);
- a callable object: its attributes;
- a function made at run time (a nested function, a lambda): its closure's cells and default
  arguments. A module-level function has no state beyond its module's code, which the
  fingerprint hashes already: its fingerprint is what it was.

Values are read recursively: plain data (``None``, bools, numbers, strings, bytes, lists,
tuples, dicts, sets, enums, paths, compiled patterns, dates), classes, modules, functions, and
objects of classes written in Python, by their attributes. Anything else (a torch model, an
open file, a lock, an object of a C extension), a state nested deeper than :data:`MAX_DEPTH`,
or one larger than :data:`MAX_NODES` values cannot be known that way: the state is then :class:`Unknown`,
saying where, and the fingerprint says ``"state":"unknown"``.

One object is one model within a process: :func:`remembered_state` reads a callable's state the
first time fairtalk meets it and gives that digest ever after, so a model that counts its calls
(``self.calls += 1``) or memoizes into ``self.cache`` keeps its fingerprint, and a run it was
interrupted in resumes from the store. The object is the bound method's instance (with its
function), the partial, the callable object, or the function with its closure. An object that
takes weak references is forgotten when it is freed (``weakref.finalize``); one that does not (a
class with ``__slots__`` and no ``__weakref__``) is kept alive by the registry, so that its
``id`` is never another object's: a few model objects per process, never freed. Changing an
attribute of the same object between two runs is therefore not seen: make a new object for a
new configuration, or give ``model_version``. A new process meets a new object and reads it afresh.
"""

from __future__ import annotations

import datetime
import decimal
import enum
import fractions
import functools
import hashlib
import importlib.machinery
import os
import re
import sys
import threading
import types
import uuid
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["MAX_DEPTH", "MAX_NODES", "Unknown", "callable_state", "remembered_state"]

#: Values read at most (beyond them the state is unknown): a word list of that size still fits.
MAX_NODES = 200_000
#: Objects nested at most.
MAX_DEPTH = 24
#: Types whose ``repr`` is their whole value, without an address.
_REPR_TYPES: tuple[type, ...] = (
    complex,
    range,
    slice,
    datetime.date,
    datetime.time,
    datetime.timedelta,
    datetime.timezone,
    decimal.Decimal,
    fractions.Fraction,
    uuid.UUID,
    re.Pattern,
)
_EXTENSIONS = tuple(importlib.machinery.EXTENSION_SUFFIXES)
_HEAPTYPE = 1 << 9


@dataclass(frozen=True, slots=True)
class Unknown:
    """A state that cannot be read the same way in every run: ``reason`` says which value, and why."""

    reason: str


class _Unknowable(Exception):
    """Raised inside the walk: the value at ``where`` cannot be read as its value."""


def callable_state(fn: Callable[..., Any]) -> str | Unknown | None:
    """A digest of the state that makes ``fn`` the model it is; None when it has none beyond its code.

    Examples
    --------
    >>> import functools, textwrap
    >>> callable_state(textwrap.dedent) is None
    True
    >>> a = callable_state(functools.partial(textwrap.indent, prefix="> "))
    >>> b = callable_state(functools.partial(textwrap.indent, prefix="# "))
    >>> len(a), a == b
    (16, False)
    """
    walk = _Walk()
    try:
        if not walk.top(fn):
            return None
    except _Unknowable as exc:
        return Unknown(str(exc))
    except Exception as exc:  # noqa: BLE001 - reading a value ran the user's code (__fspath__, a property), which raised
        return Unknown(f"reading its state raised {type(exc).__name__}: {exc}")
    return walk.digest.hexdigest()[:16]


#: The state read of each callable object met in this process, by the ids of the objects that make it
#: (see :func:`_holders`), with those objects it must keep alive so that no other object takes their ids.
_REMEMBERED: dict[tuple[int, ...], tuple[tuple[object, ...], str | Unknown | None]] = {}
_REMEMBERING = threading.Lock()


def _holders(fn: Callable[..., Any]) -> tuple[object, ...]:
    """The objects that make ``fn`` the callable it is, the one it lives as long as first.

    A bound method is made anew at each ``bot.reply``: it is its instance and its function (a
    builtin method: its object and its name); anything else is itself.
    """
    if isinstance(fn, types.MethodType):
        return (fn.__self__, fn.__func__)
    if isinstance(fn, types.BuiltinMethodType) and fn.__self__ is not None and not isinstance(fn.__self__, types.ModuleType):
        return (fn.__self__, fn.__name__)
    return (fn,)


def _forget(key: tuple[int, ...]) -> None:
    with _REMEMBERING:
        _REMEMBERED.pop(key, None)


def remembered_state(fn: Callable[..., Any]) -> str | Unknown | None:
    """:func:`callable_state` of ``fn`` as read the first time this process met its object (see the module's notes).

    Examples
    --------
    >>> class Counting:
    ...     def __init__(self):
    ...         self.calls = 0
    ...     def reply(self, text):
    ...         self.calls += 1
    ...         return text
    >>> bot = Counting()
    >>> first = remembered_state(bot.reply)
    >>> bot.reply("hi") and remembered_state(bot.reply) == first, callable_state(bot.reply) == first
    (True, False)
    """
    holders = _holders(fn)
    key = tuple(id(h) for h in holders)
    with _REMEMBERING:
        found = _REMEMBERED.get(key)
    if found is not None:
        return found[1]
    state = callable_state(fn)
    owner, rest = holders[0], holders[1:]
    try:
        weakref.finalize(owner, _forget, key)
    except TypeError:  # no weak reference to it: kept alive, so that its id stays its own
        rest = holders
    with _REMEMBERING:
        found = _REMEMBERED.setdefault(key, (rest, state))
    return found[1]


def _pure_python(cls: type) -> bool:
    """Whether ``cls`` and its bases (``object`` aside) are classes written in Python: their attributes are their state."""
    for base in cls.__mro__[:-1]:
        if not base.__flags__ & _HEAPTYPE or base.__module__ == "builtins" or base.__module__ in sys.builtin_module_names:
            return False
        module = sys.modules.get(base.__module__)
        file = getattr(module, "__file__", None)
        if module is None or (isinstance(file, str) and file.endswith(_EXTENSIONS)):
            return False
    return True


def _name(value: Any) -> str:
    """``module:qualname`` of a class or function (a builtin's module may be None)."""
    return f"{getattr(value, '__module__', None) or '?'}:{getattr(value, '__qualname__', type(value).__qualname__)}"


def _made_at_run_time(fn: types.FunctionType) -> bool:
    """A nested function or a lambda: its defaults, like its closure, are set when it is made, not by its module."""
    return "<locals>" in fn.__qualname__ or fn.__name__ == "<lambda>"


class _Walk:
    """One digest of values read recursively, each framed (its length first) so that no two readings run together."""

    def __init__(self) -> None:
        self.digest = hashlib.sha256()
        self.nodes = 0
        self.path: list[int] = []  # id() of the objects being read: to find a reference back, never digested

    def feed(self, *tokens: str | bytes) -> None:
        for token in tokens:
            data = token.encode("utf-8", "surrogatepass") if isinstance(token, str) else token
            self.digest.update(len(data).to_bytes(8, "little") + data)

    def top(self, fn: Any) -> bool:
        """Digest the state of the callable ``fn``; False when it has none (nothing was digested)."""
        if isinstance(fn, functools.partial):
            self.value(fn, "the partial")
            return True
        if isinstance(fn, types.FunctionType):
            return self.function_state(fn, fn.__qualname__, top=True)
        if isinstance(fn, types.MethodType):
            has_state = (
                self.function_state(fn.__func__, fn.__qualname__, top=True)
                if isinstance(fn.__func__, types.FunctionType)
                else False
            )
            owner = fn.__self__
            if isinstance(owner, type) or (not _attributes(owner) and _pure_python(type(owner))):
                return has_state
            self.value(owner, f"{type(owner).__qualname__} instance")
            return True
        if isinstance(fn, types.BuiltinFunctionType | types.BuiltinMethodType):
            owner = fn.__self__
            if owner is None or isinstance(owner, types.ModuleType):
                return False
            self.value(owner, f"the object of {fn.__qualname__}")
            return True
        if not _attributes(fn) and _pure_python(type(fn)):
            return False
        self.value(fn, f"{type(fn).__qualname__} object")
        return True

    def function_state(self, fn: types.FunctionType, where: str, *, top: bool = False) -> bool:
        """Digest a function's closure cells and, when made at run time, its defaults; False when it has neither."""
        cells = fn.__closure__ or ()
        run_time = _made_at_run_time(fn)
        defaults = (fn.__defaults__ or (), fn.__kwdefaults__ or {}) if run_time else ((), {})
        if top and not cells and not defaults[0] and not defaults[1]:
            return False
        if not top and run_time:  # a module-level function's code is its module's, which the fingerprint hashes
            self.feed("code", _code_digest(fn.__code__))
        for name, cell in zip(fn.__code__.co_freevars, cells):
            self.feed("cell", name)
            try:
                contents = cell.cell_contents
            except ValueError:  # a cell not yet filled
                self.feed("empty")
                continue
            self.value(contents, f"{where}: {name}")
        self.value(defaults[0], f"{where}: defaults")
        self.value(defaults[1], f"{where}: keyword defaults")
        return True

    def value(self, value: Any, where: str) -> None:
        """Digest ``value`` as what it is; _Unknowable naming ``where`` when it cannot be read as such."""
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise _Unknowable(f"{where}: more than {MAX_NODES:,} values")
        if value is None or isinstance(value, bool | int | float | str | bytes) and type(value) in _PLAIN:
            self.feed(type(value).__name__, value if isinstance(value, bytes) else repr(value))
            return
        if isinstance(value, enum.Enum):
            self.feed("enum", _name(type(value)), value.name)
            return
        if isinstance(value, _REPR_TYPES):
            self.feed("repr", _name(type(value)), repr(value))
            return
        if isinstance(value, os.PathLike):
            path: str | bytes = os.fspath(value)
            self.feed("path", _name(type(value)), path)
            return
        if isinstance(value, type):
            self.feed("class", _name(value))
            return
        if isinstance(value, types.ModuleType):
            self.feed("module", value.__name__)
            return
        if id(value) in self.path:  # an object that holds itself (a callback bound to it): by how far back it is
            self.feed("back", str(len(self.path) - self.path.index(id(value))))
            return
        if len(self.path) >= MAX_DEPTH:
            raise _Unknowable(f"{where}: nested more than {MAX_DEPTH} deep")
        self.path.append(id(value))
        try:
            self.composite(value, where)
        finally:
            self.path.pop()

    def composite(self, value: Any, where: str) -> None:
        """A container, a function, a method, a partial, or an object of a class written in Python."""
        kind = type(value)
        if kind in (list, tuple) or (isinstance(value, tuple) and hasattr(value, "_fields")):
            self.feed("seq", _name(kind), str(len(value)))
            for i, item in enumerate(value):
                self.value(item, f"{where}[{i}]")
        elif kind in (dict, set, frozenset) or kind.__module__ == "collections" and kind.__name__ == "OrderedDict":
            self.mapping(value, where)
        elif isinstance(value, functools.partial):
            self.feed("partial")
            self.value(value.func, f"{where}: func")
            self.value(value.args, f"{where}: args")
            self.value(value.keywords, f"{where}: keywords")
        elif isinstance(value, types.FunctionType):
            self.feed("function", _name(value))
            self.function_state(value, where)
        elif isinstance(value, types.MethodType):
            self.feed("method", _name(value.__func__))
            self.value(value.__func__, f"{where}: function")
            self.value(value.__self__, f"{where}: its instance")
        elif isinstance(value, types.BuiltinFunctionType | types.BuiltinMethodType):
            self.feed("builtin", _name(value))
            if value.__self__ is not None and not isinstance(value.__self__, types.ModuleType):
                self.value(value.__self__, f"{where}: its object")
        elif _pure_python(kind):
            self.feed("object", _name(kind))
            for name, attribute in _attributes(value):
                self.feed("attribute", name)
                self.value(attribute, f"{where}.{name}")
        elif callable(getattr(value, "__wrapped__", None)):  # functools.lru_cache and other wrappers written in C
            self.feed("wrapped", _name(kind))
            self.value(value.__wrapped__, f"{where}: the function it wraps")
        else:
            raise _Unknowable(f"{where}: a {kind.__module__}.{kind.__qualname__}, which has no value to read")

    def mapping(self, value: Any, where: str) -> None:
        """A dict or a set (their items sorted by each one's own digest), or an OrderedDict (in its order)."""
        kind = type(value)
        if kind in (set, frozenset):
            items = [(self.sub(item, f"{where} item"), None) for item in value]
            self.feed("set", kind.__name__, str(len(items)), *sorted(digest for digest, _ in items))
            return
        if kind is dict:  # equal dicts are one state, whatever their order (one built from a set's changes by run)
            pairs = sorted(self.sub(key, f"{where} key") + self.sub(item, f"{where}[{key!r}]") for key, item in value.items())
            self.feed("dict", str(len(pairs)), *pairs)
            return
        self.feed("dict", _name(kind), str(len(value)))
        for key, item in value.items():
            self.value(key, f"{where} key")
            self.value(item, f"{where}[{key!r}]")

    def sub(self, value: Any, where: str) -> str:
        """The digest of ``value`` alone (a set's item, whose place in the set is no part of it)."""
        inner = _Walk()
        inner.nodes, inner.path = self.nodes, self.path
        inner.value(value, where)
        self.nodes = inner.nodes
        return inner.digest.hexdigest()


_PLAIN = frozenset({type(None), bool, int, float, str, bytes})


def _attributes(obj: Any) -> list[tuple[str, Any]]:
    """An object's attributes: its ``__dict__`` (in order) and its filled ``__slots__``."""
    found = list(getattr(obj, "__dict__", {}).items()) if isinstance(getattr(obj, "__dict__", None), dict) else []
    for cls in type(obj).__mro__:
        slots = cls.__dict__.get("__slots__", ())
        for slot in (slots,) if isinstance(slots, str) else slots:
            if slot in ("__dict__", "__weakref__"):
                continue
            private = slot.startswith("__") and not slot.endswith("__")
            name = f"_{cls.__name__.lstrip('_')}{slot}" if private else slot
            try:
                found.append((name, getattr(obj, name)))
            except AttributeError:  # a slot not set
                continue
    return found


def _code_digest(code: types.CodeType) -> str:
    """A function's code as its bytes and constants (nested code too): two lambdas of one line differ by it."""
    digest = hashlib.sha256(code.co_code)
    for const in code.co_consts:
        part = _constant(const)
        digest.update(len(part).to_bytes(8, "little") + part.encode("utf-8", "surrogatepass"))
    digest.update(repr(code.co_names).encode())
    return digest.hexdigest()[:16]


def _constant(const: object) -> str:
    """A code constant as text the same in every run (a frozenset's order changes with the string hash seed)."""
    if isinstance(const, types.CodeType):
        return _code_digest(const)
    if isinstance(const, tuple | frozenset):
        parts = [_constant(item) for item in const]
        return f"{type(const).__name__}({', '.join(sorted(parts) if isinstance(const, frozenset) else parts)})"
    return f"{type(const).__name__}:{const!r}"
