"""The source files a user's model is made of, for the fingerprint of a ``python:`` model.

A ``python:`` model is the function *and* every module of the user's own code that it
imports, directly or through other modules: editing a helper changes the answers, so it
must change the fingerprint, or the run store would serve the old model's answers.

The user's code is everything under the *roots*: the model file's folder and, when it is a
package, the folder above its package chain (for ``python:path/to/bot.py:fn``), or the folder
holding the top-level package or module (for ``python:mypkg.bot:fn``); then the folders on
``sys.path`` that are not site-packages or the standard library. Installed packages
(site-packages), the standard library and the whole fairtalk package are outside it even when
they sit under a root (where fairtalk's source folder is on ``sys.path``). The files are found two ways, and the union is hashed:

- statically: every ``import`` and ``from ... import`` in the source (inside functions
  too, so lazy imports count), resolved inside the roots, transitively;
- dynamically: every module under the roots that appeared in ``sys.modules`` while the
  model loaded (``importlib.import_module`` with a computed name, for instance).

What code cannot show (environment variables, data files, a remote deployment) is for
``--model-version TAG``.
"""

from __future__ import annotations

import ast
import hashlib
import os
import sys
import sysconfig
from collections.abc import Iterable
from pathlib import Path

__all__ = ["MAX_FILES", "UserCode", "user_roots"]

#: At most this many files are hashed (a model file in a huge folder stays cheap to load).
MAX_FILES = 2000


def _fairtalk_root() -> Path:
    """The folder of the ``fairtalk`` package itself (``…/src/fairtalk`` in a source checkout or an editable install)."""
    package = sys.modules.get(__name__.partition(".")[0])  # imported before any module of it
    file = getattr(package, "__file__", None)
    return Path(file).resolve().parent if isinstance(file, str) else Path(__file__).resolve().parents[2]


def _excluded_prefixes() -> tuple[Path, ...]:
    """Folders that never count as user code: the standard library, site-packages, the whole fairtalk package.

    fairtalk is excluded whole (it once was only ``fairtalk/models``): where its source folder is
    on ``sys.path`` (a source checkout, an editable install), a user's module that imports fairtalk
    no longer has fairtalk's own files hashed into its code fingerprint. That changed, once, the
    fingerprint of such models only, in such setups (a store then generates their answers again).
    """
    found: set[Path] = set()
    for name in ("stdlib", "platstdlib", "purelib", "platlib"):
        path = sysconfig.get_paths().get(name)
        if path:
            found.add(Path(path).resolve())
    for entry in sys.path:
        if entry and ("site-packages" in entry or "dist-packages" in entry):
            found.add(Path(entry).resolve())
    found.add(_fairtalk_root())
    return tuple(found)


def _outside_excluded(path: Path, excluded: tuple[Path, ...]) -> bool:
    return not any(path == prefix or path.is_relative_to(prefix) for prefix in excluded)


def _search_path_roots(excluded: tuple[Path, ...]) -> list[Path]:
    """The folders on ``sys.path`` that hold the user's code: not site-packages, the standard library or fairtalk."""
    roots = []
    for entry in sys.path:
        if not isinstance(entry, str):
            continue
        try:
            path = Path(entry or os.getcwd()).resolve()
        except (OSError, RuntimeError):
            continue
        if path.is_dir() and path != path.parent and _outside_excluded(path, excluded):
            roots.append(path)
    return roots


def user_roots(module_file: Path, module_name: str | None) -> tuple[Path, ...]:
    """The folders whose modules are the user's code, for a model defined in ``module_file``, first match first.

    A file spec's root is its folder, then, when that folder is a package (it has an
    ``__init__.py``), the folder above the top of its package chain (so that
    ``from mypkg.sub import tools`` inside ``mypkg/bot.py`` resolves); a module spec's root is
    the folder that holds its top-level package (``a.b.c`` in ``/src/a/b/c.py`` -> ``/src``).
    The folders on ``sys.path`` outside site-packages, the standard library and fairtalk
    follow, as Python searches them for an absolute import.
    """
    folder = module_file.resolve().parent
    roots = [folder]
    if module_name is None:
        top = folder
        while (top / "__init__.py").is_file() and top.parent != top:
            top = top.parent
        roots.append(top)
    else:
        depth = module_name.count(".") + (1 if module_file.name == "__init__.py" else 0)
        root = folder
        for _ in range(depth):
            root = root.parent
        roots = [root]
    roots += _search_path_roots(_excluded_prefixes())
    return tuple(dict.fromkeys(roots))


class UserCode:
    """The user's source files reachable from one module, and their combined hash."""

    def __init__(self, roots: Iterable[Path]) -> None:
        self.roots = tuple(Path(r).resolve() for r in roots)
        self._excluded = _excluded_prefixes()
        self.files: dict[Path, str] = {}

    def contains(self, path: Path) -> bool:
        """Under a root, and not in an excluded folder (unless the root itself lies deeper inside it)."""
        root = next((r for r in self.roots if path.is_relative_to(r)), None)
        if root is None:
            return False
        return not any(
            path.is_relative_to(prefix) and not (root.is_relative_to(prefix) and root != prefix) for prefix in self._excluded
        )

    def _resolve(self, dotted: str, base: Path | None) -> list[Path]:
        """Files an import of ``dotted`` runs, searched in ``base`` (relative) or in the roots."""
        parts = [p for p in dotted.split(".") if p]
        out: list[Path] = []
        for start in [base] if base is not None else list(self.roots):
            if out and base is None:
                break  # an absolute import is found in the first root that has it, as on sys.path
            folder = start
            for i, part in enumerate(parts):
                package = folder / part / "__init__.py"
                module = folder / f"{part}.py"
                if package.is_file():
                    out.append(package)
                    folder = folder / part
                elif module.is_file():
                    out.append(module)
                    break
                elif (folder / part).is_dir() and i < len(parts) - 1:
                    folder = folder / part  # a namespace package
                else:
                    break
        return out

    def _imports(self, path: Path) -> list[Path]:
        try:
            tree = ast.parse(path.read_bytes(), filename=str(path))
        except (OSError, SyntaxError, ValueError):
            return []
        found: list[Path] = []
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    found += self._resolve(alias.name, None)
            elif isinstance(node, ast.ImportFrom):
                base = None
                if node.level:
                    base = path.parent
                    for _ in range(node.level - 1):
                        base = base.parent
                module = node.module or ""
                found += self._resolve(module, base) if module else []
                prefix = f"{module}." if module else ""
                for alias in node.names:  # ``from pkg import submodule``
                    if alias.name != "*":
                        found += self._resolve(prefix + alias.name, base)
        return found

    def add(self, path: Path, *, always: bool = False) -> None:
        """Add ``path`` (even outside the user's code with ``always``) and the user modules it imports."""
        first = path.resolve()
        todo = [first]
        while todo and len(self.files) < MAX_FILES:
            current = todo.pop()
            if current in self.files or not current.is_file():
                continue
            if not (always and current == first) and not self.contains(current):
                continue
            try:
                self.files[current] = hashlib.sha256(current.read_bytes()).hexdigest()
            except OSError:
                continue
            todo += [p.resolve() for p in self._imports(current)]

    def add_loaded(self, module_names: Iterable[str]) -> None:
        """Add the user modules among ``module_names`` (those that appeared in ``sys.modules``)."""
        for name in module_names:
            file = getattr(sys.modules.get(name), "__file__", None)
            if isinstance(file, str) and file.endswith(".py"):
                self.add(Path(file))

    @property
    def digest(self) -> str:
        """A hash of every file's path (relative to its root) and content."""
        h = hashlib.sha256()
        for path in sorted(self.files):
            root = next((r for r in self.roots if path.is_relative_to(r)), path.parent)
            h.update(path.relative_to(root).as_posix().encode() + b"\0" + self.files[path].encode() + b"\0")
        return h.hexdigest()[:16]
