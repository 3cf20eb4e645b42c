"""One generic ``Registry[T]``: names -> lazily loaded objects, with entry points, duplicate refusal and did-you-mean."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from importlib import import_module
from importlib.metadata import EntryPoint, entry_points
from typing import Any, Generic, TypeAlias, TypeVar, cast

from fairtalk.errors import SpecError

__all__ = ["Registry"]

T = TypeVar("T")

#: What a name may be registered as: a lazy ``"module:attribute"`` string, an entry point, or the object.
Target: TypeAlias = str | EntryPoint | T

_MSG_UNKNOWN = "unknown {kind} {name!r}"
_MSG_DUPLICATE = "{kind} {name!r} is already registered ({first}), so it cannot be registered twice ({second})"
_MSG_TARGET = "{kind} target {target!r} must look like 'package.module:Name'"
_MSG_LOAD = "cannot load {kind} {name!r} from {target!r}: {error}"
_MSG_TYPE = "{kind} {name!r} ({target}) is {got}, which is not {expected}"
_MSG_NAME = "{kind} name must be a non-empty string without ':' or spaces, got {name!r}"


def _shown(target: object) -> str:
    """How a target reads in a message: ``module:attribute``, an entry point's value, or a qualified name."""
    if isinstance(target, str):
        return target
    if isinstance(target, EntryPoint):
        return f"entry point {target.value}"
    module, name = getattr(target, "__module__", None), getattr(target, "__qualname__", None)
    return f"{module}:{name}" if module and name else repr(target)


class Registry(Generic[T]):
    """Names mapped to objects of type ``T`` (classes, factories, readers), loaded on first use.

    Modelled on lm-evaluation-harness's ``api/registry.py``:

    - a name is registered as the object itself, or as a ``"module:attribute"`` string whose
      module is imported only when the name is first looked up (heavy imports stay lazy);
    - third parties register through the entry-point group ``group``, read once, on first use;
    - registering a taken name (built in, entry point or run time) is a :class:`SpecError`;
    - an unknown name is a :class:`SpecError` with "did you mean" and the available names;
    - a loaded object must pass ``check`` (an instance, or a subclass, of ``base``), else a
      :class:`SpecError` says what it is and what was expected.

    Parameters
    ----------
    kind : str
        What the names name, for messages (``"measure"``, ``"model spec prefix"``).
    group : str, optional
        The entry-point group third parties register through (``"fairtalk.measures"``).
    base : type or tuple of types
        What a loaded object must be: an instance of it, or a class that subclasses it
        (``collections.abc.Callable`` for factories). Default ``object``: anything.
    expected : str, optional
        How ``base`` reads in the type error (default: its name).
    builtins : mapping, optional
        The names that ship with fairtalk; :meth:`fresh` starts again from them.

    Examples
    --------
    >>> from collections.abc import Callable
    >>> colours: Registry[Callable[..., str]] = Registry("colour", base=Callable)
    >>> colours.add("red", "builtins:str")
    >>> @colours.register("upper")
    ... def upper(text: str) -> str:
    ...     return text.upper()
    >>> colours.names(), colours.get("upper")("hi")
    (('red', 'upper'), 'HI')
    >>> colours.get("rde")
    Traceback (most recent call last):
    ...
    fairtalk.errors.SpecError: unknown colour 'rde'; did you mean 'red'? (choose from: red, upper)
    """

    def __init__(
        self,
        kind: str,
        *,
        group: str | None = None,
        base: type | tuple[type, ...] = object,
        expected: str | None = None,
        builtins: Mapping[str, str | T] | None = None,
    ) -> None:
        self.kind = kind
        self.group = group
        self.base = base
        self.expected = expected or " or ".join(b.__name__ for b in (base if isinstance(base, tuple) else (base,)))
        self._builtins: dict[str, str | T] = dict(builtins or {})
        self._targets: dict[str, Target[T]] = {}
        self._loaded: dict[str, T] = {}
        self._entry_points_read = group is None
        for name, target in self._builtins.items():
            self._insert(name, target)

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}, group={self.group!r}, names={len(self._targets)})"

    # -- registering ----------------------------------------------------------------------

    def add(self, name: str, target: str | T) -> None:
        """Register ``target`` (the object, or ``"module:attribute"``) under ``name``.

        Raises
        ------
        SpecError
            ``name`` is taken, malformed, or ``target`` is a string without ``:``.
        """
        self._read_entry_points()
        self._insert(name, target)

    def register(self, name: str) -> Callable[[T], T]:
        """Decorator form of :meth:`add`: ``@MEASURES.register("mine")`` above a class or function."""

        def decorate(obj: T) -> T:
            self.add(name, obj)
            return obj

        return decorate

    def _insert(self, name: str, target: Target[T]) -> None:
        if not isinstance(name, str) or not name or ":" in name or any(c.isspace() for c in name):
            raise SpecError(_MSG_NAME.format(kind=self.kind, name=name))
        if isinstance(target, str) and ":" not in target:
            raise SpecError(_MSG_TARGET.format(kind=self.kind, target=target))
        if name in self._targets:
            first = _shown(self._targets[name])
            raise SpecError(_MSG_DUPLICATE.format(kind=self.kind, name=name, first=first, second=_shown(target)))
        self._targets[name] = target

    def _read_entry_points(self) -> None:
        """Add the entry points of ``group`` once; a clash leaves the registry as it was."""
        if self._entry_points_read:
            return
        found: dict[str, EntryPoint] = {}
        for point in entry_points(group=cast(str, self.group)):
            taken = self._targets.get(point.name, found.get(point.name))
            if taken is not None:
                message = _MSG_DUPLICATE.format(kind=self.kind, name=point.name, first=_shown(taken), second=_shown(point))
                raise SpecError(message)
            found[point.name] = point
        for name, point in found.items():
            self._insert(name, point)
        self._entry_points_read = True

    # -- looking up -----------------------------------------------------------------------

    def names(self) -> tuple[str, ...]:
        """Every registered name (built in, entry points, run time), sorted."""
        self._read_entry_points()
        return tuple(sorted(self._targets))

    def __contains__(self, name: object) -> bool:
        self._read_entry_points()
        return name in self._targets

    def unknown(self, name: str, message: str | None = None) -> SpecError:
        """The error for an unknown ``name``: ``message`` (default ``unknown KIND 'NAME'``), did-you-mean, choices."""
        text = message if message is not None else _MSG_UNKNOWN.format(kind=self.kind, name=name)
        return SpecError(text, choices=self.names(), given=name)

    def get(self, name: str, *, message: str | None = None) -> T:
        """The object registered as ``name``, imported on first use and checked against ``base``.

        Parameters
        ----------
        name : str
            A name from :meth:`names`.
        message : str, optional
            The unknown-name message, when the caller's says more (``... in 'hff:gpt2'``).

        Raises
        ------
        SpecError
            Unknown name (with "did you mean" and the choices); a target that cannot be
            imported; a loaded object that is not ``base``.
        """
        if name in self._loaded:
            return self._loaded[name]
        if name not in self:
            raise self.unknown(name, message)
        target = self._targets[name]
        obj = self._load(name, target)
        if not self._conforms(obj):
            got = f"{type(obj).__name__} {obj!r}" if not isinstance(obj, type) else f"class {obj.__qualname__}"
            raise SpecError(_MSG_TYPE.format(kind=self.kind, name=name, target=_shown(target), got=got, expected=self.expected))
        self._loaded[name] = obj
        return obj

    def _load(self, name: str, target: Target[T]) -> T:
        if not isinstance(target, (str, EntryPoint)):
            return target
        try:
            if isinstance(target, EntryPoint):
                return cast(T, target.load())
            module_name, _, attribute = target.partition(":")
            obj: Any = import_module(module_name)
            for part in attribute.split("."):
                obj = getattr(obj, part)
            return cast(T, obj)
        except (ImportError, AttributeError) as exc:
            shown = target.value if isinstance(target, EntryPoint) else target
            raise SpecError(_MSG_LOAD.format(kind=self.kind, name=name, target=shown, error=exc)) from exc

    def _conforms(self, obj: object) -> bool:
        if isinstance(obj, self.base):
            return True
        if isinstance(obj, type):
            try:
                return issubclass(obj, self.base)
            except TypeError:  # a Protocol with data members cannot be checked on a class
                return False
        return False

    def is_loaded(self, name: str) -> bool:
        """Whether ``name`` has been looked up (and its module imported) already."""
        return name in self._loaded

    def fresh(self) -> Registry[T]:
        """A new registry with this one's kind, group, check and built-in names only; entry points unread.

        Tests use it to register names without leaking them into other tests.
        """
        return Registry(self.kind, group=self.group, base=self.base, expected=self.expected, builtins=self._builtins)
