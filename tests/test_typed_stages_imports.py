"""No import cycles, lazy imports included: each module imports alone in a fresh interpreter, and no module imports one that imports it back."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "fairtalk"


def _module_name(path: Path) -> str:
    parts = ("fairtalk", *path.relative_to(SRC).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(path): path for path in sorted(SRC.rglob("*.py"))}


def _type_checking_only(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(name: str) -> list[tuple[str, bool, int]]:
    """``(imported module, at top level, line)`` for each fairtalk import of a module that runs (not TYPE_CHECKING ones).

    ``from fairtalk.x import y`` imports ``fairtalk.x.y`` when that is a module, else ``fairtalk.x``.
    """
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: list[tuple[str, bool, int]] = []

    def visit(node: ast.AST, top: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _type_checking_only(child):
                for other in child.orelse:
                    visit(other, top)
                continue
            if isinstance(child, ast.Import):
                found.extend((alias.name, top, child.lineno) for alias in child.names if alias.name.startswith("fairtalk"))
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package.split(".")
                    module = ".".join(base[: len(base) - (child.level - 1)] + ([child.module] if child.module else []))
                else:
                    module = child.module or ""
                if module.startswith("fairtalk"):
                    for alias in child.names:
                        sub = f"{module}.{alias.name}"
                        found.append((sub if sub in MODULES else module, top, child.lineno))
            visit(child, top and not isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda))

    visit(ast.parse(path.read_text(encoding="utf-8")), True)
    return found


def _cycles() -> dict[tuple[str, str], str]:
    """``(importer, imported)`` -> where, for each import (lazy ones too) of a module that imports the importer at top level."""
    imports = {name: _imports(name) for name in MODULES}
    top = {name: {module for module, at_top, _ in found if at_top} for name, found in imports.items()}
    cycles: dict[tuple[str, str], str] = {}
    for name, found in imports.items():
        for module, at_top, line in found:
            if module != name and name in top.get(module, ()):
                where = f"{MODULES[name].relative_to(SRC.parent)}:{line}" + ("" if at_top else " (inside a function)")
                cycles.setdefault((name, module), where)
    return cycles


def _top_level_cycles() -> list[list[str]]:
    """Cycles of any length among top-level imports: the strongly connected components with more than one module."""
    graph = {name: sorted({m for m, at_top, _ in _imports(name) if at_top and m in MODULES and m != name}) for name in MODULES}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def connect(node: str) -> None:  # Tarjan's algorithm; the graph is small, recursion is fine
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph[node]:
            if nxt not in index:
                connect(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for name in graph:
        if name not in index:
            connect(name)
    return components


def test_the_scan_sees_lazy_and_relative_imports() -> None:
    """The scan itself: a lazy import counts, a TYPE_CHECKING one does not, and a module named in ``from`` is that module."""
    imports = _imports("fairtalk.cli._app")
    assert ("fairtalk.cli._output", False) in {(m, top) for m, top, _ in imports}  # inside a function
    assert ("fairtalk.cli._console", True) in {(m, top) for m, top, _ in imports}
    assert "fairtalk" not in {m for m, top, _ in imports if top}  # only under TYPE_CHECKING at top level


def test_no_module_imports_one_that_imports_it_back() -> None:
    """No module imports (even inside a function) a module that imports it back at top level."""
    cycles = _cycles()
    assert not cycles, "\n".join(
        f"{where}: {a} imports {b}, which imports {a} back at top level" for (a, b), where in cycles.items()
    )


def test_no_cycle_among_top_level_imports() -> None:
    assert _top_level_cycles() == []


def _import_alone(module: str) -> tuple[str, str | None]:
    """Import ``module`` in a fresh interpreter; the error's last line when it fails (None when it imports)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC.parent), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True, text=True, env=env, timeout=300)
    if done.returncode == 0:
        return module, None
    lines = done.stderr.strip().splitlines()
    return module, lines[-1] if lines else f"exit {done.returncode}"


def _from_a_cycle(error: str) -> bool:
    """An ImportError a cycle makes: a partially initialized module, or a name that is not (yet) in a fairtalk module."""
    if not error.startswith("ImportError"):
        return False
    return "circular import" in error or "partially initialized" in error or "from 'fairtalk" in error


@pytest.mark.slow
def test_every_module_imports_alone_in_a_fresh_interpreter() -> None:
    """``python -c "import fairtalk.x.y"`` for every module, one interpreter each: no ImportError from a cycle."""
    modules = [name for name in MODULES if not name.endswith("__main__")]
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(_import_alone, modules))
    cyclic = {module: error for module, error in results if error is not None and _from_a_cycle(error)}
    assert not cyclic, "\n".join(f"{module}: {error}" for module, error in cyclic.items())
    assert len(results) > 100  # every module was tried


def test_a_cycle_is_told_from_a_missing_extra() -> None:
    assert _from_a_cycle(
        "ImportError: cannot import name 'x' from partially initialized module 'fairtalk.a' (most likely due to a circular import)"
    )
    assert not _from_a_cycle("ModuleNotFoundError: No module named 'vllm'")
