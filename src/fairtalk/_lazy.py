"""One lazy loader for a package's public names (``import fairtalk`` stays light), and the type stub it implies.

A package keeps one table of its public names, ``name -> "module:attribute"``. :func:`lazy_names`
turns it into the package's ``__getattr__`` and ``__dir__``; :func:`stub_text` renders the
``__init__.pyi`` that shows a type checker the same names with their real types, so the table is
the one source of truth for both (``tools/write_stub.py`` writes the stub, a test checks it).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, MutableMapping
from importlib import import_module
from importlib.util import find_spec
from typing import Any

__all__ = ["lazy_names", "stub_text"]


def lazy_names(
    package: str, table: Mapping[str, str], namespace: MutableMapping[str, Any]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package``, for the names in ``table``.

    ``table`` maps a public name to ``"module:attribute"``, or to a submodule of ``package``
    that holds a same-named attribute (``"completions"``). A loaded name is cached in
    ``namespace`` (the package's ``globals()``), so each loads once. A public submodule is an
    attribute too, imported on first use, so that ``import fairtalk`` is enough for
    ``fairtalk.models.RayEngine``; any other name raises AttributeError.
    """

    def __getattr__(name: str) -> Any:
        target = table.get(name)
        if target is None:
            if not name.startswith("_") and find_spec(f"{package}.{name}") is not None:
                return import_module(f"{package}.{name}")  # the import binds it in ``namespace``
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, attribute = _target(package, name, target)
        value = getattr(import_module(module), attribute)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(table))

    return __getattr__, __dir__


def stub_text(package: str, table: Mapping[str, str], *, variables: Mapping[str, str], summary: str) -> str:
    """The ``__init__.pyi`` of ``package``: every name of ``table`` re-exported from its module, with its real type.

    Parameters
    ----------
    package
        The package's dotted name (``"fairtalk"``).
    table
        Its lazy names, as given to :func:`lazy_names`.
    variables
        Names the package defines itself, name -> annotation (``{"__version__": "str"}``).
    summary
        The stub's one-line docstring.

    Returns
    -------
    str
        The stub, formatted as ``ruff format`` and ``ruff check`` (isort) leave it, with
        ``__all__`` listing ``variables`` and then ``table``, in their order.

    Examples
    --------
    >>> print(stub_text("pkg", {"Thing": "pkg.things:Thing"}, variables={}, summary="Stub."), end="")
    \"\"\"Stub.\"\"\"
    <BLANKLINE>
    from pkg.things import Thing as Thing
    <BLANKLINE>
    __all__ = [
        "Thing",
    ]
    """
    imports = sorted((_target(package, name, target), name) for name, target in table.items())
    lines = [f'"""{summary}"""', ""]
    lines += [
        f"from {module} import {attribute} as {name}"
        for (module, attribute), name in sorted(imports, key=lambda item: (item[0][0], _member_key(item[0][1])))
    ]
    lines += [""] + [f"{name}: {annotation}" for name, annotation in variables.items()]
    lines += ["", "__all__ = ["] + [f'    "{name}",' for name in (*variables, *table)] + ["]", ""]
    return "\n".join(line for i, line in enumerate(lines) if line or lines[i - 1])


def _target(package: str, name: str, target: str) -> tuple[str, str]:
    """``(module, attribute)`` of a table entry (``"module:attribute"``, or a submodule holding ``name``)."""
    module, sep, attribute = target.partition(":")
    return (module, attribute) if sep else (f"{package}.{target}", name)


def _member_key(name: str) -> tuple[int, str]:
    """The order of imported members in ruff's isort: constants, then classes, then the rest, case-insensitively."""
    kind = 0 if name.isupper() and len(name) > 1 else 1 if name[:1].isupper() else 2
    return kind, name.lower()
