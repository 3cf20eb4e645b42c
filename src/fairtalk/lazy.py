"""One lazy loader for a package's public names: each name imports its module on first use (``import fairtalk`` stays light)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, MutableMapping
from importlib import import_module
from typing import Any

__all__ = ["lazy_names"]


def lazy_names(package: str, table: Mapping[str, str],
               namespace: MutableMapping[str, Any]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:  # fmt: skip
    """The ``__getattr__`` and ``__dir__`` of ``package``, for the names in ``table``.

    ``table`` maps a public name to ``"module:attribute"``, or to a submodule of ``package``
    that holds a same-named attribute (``"completions"``). A loaded name is cached in
    ``namespace`` (the package's ``globals()``), so each loads once.
    """

    def __getattr__(name: str) -> Any:
        target = table.get(name)
        if target is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, sep, attribute = target.partition(":")
        if not sep:
            module, attribute = f"{package}.{target}", name
        value = getattr(import_module(module), attribute)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(table))

    return __getattr__, __dir__
