"""No import cycles, lazy imports included: each module imports alone in a fresh interpreter, and no module imports one that imports it back."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
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


#: Imports each module it reads on stdin alone: a child forked from this process, which has imported no fairtalk module
#: (only the third-party and standard modules ``argv[1]`` names, which fairtalk modules import at top level), imports it
#: and sends back the last line of its error (null when it imports). Forking saves each module the interpreter's start
#: and numpy's, pandas' and torch's imports; the child holds no fairtalk module but its own, as a fresh interpreter would.
IMPORT_EACH_ALONE = r"""
import importlib, json, os, sys, threading, traceback

for name in json.loads(sys.argv[1]):
    try:
        importlib.import_module(name)
    except Exception:
        pass
assert not [m for m in sys.modules if m.split(".")[0] == "fairtalk"]
assert threading.active_count() == 1  # a fork copies only its own thread
answers = {}
for module in sys.stdin.read().split():
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        quiet = os.open(os.devnull, os.O_WRONLY)
        os.dup2(quiet, 1)
        os.dup2(quiet, 2)
        try:
            importlib.import_module(module)
            error = None
        except BaseException as exc:
            error = traceback.format_exception_only(exc)[-1].strip()
        os.write(write, json.dumps(error).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as answer:
        sent = answer.read()
    _, status = os.waitpid(pid, 0)
    answers[module] = json.loads(sent) if sent else f"exit {os.waitstatus_to_exitcode(status)}"
print(json.dumps(answers))
"""


def _third_party_imports() -> list[str]:
    """Every module other than fairtalk's that a fairtalk module imports at top level (``from a import b``: a, a.b)."""
    names: set[str] = set()
    for path in MODULES.values():
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                names.add(node.module)
                names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return sorted(name for name in names if name.split(".")[0] not in ("fairtalk", "__future__"))


def _import_each_alone(modules: list[str]) -> dict[str, str | None]:
    """Import each module alone (:data:`IMPORT_EACH_ALONE`); the last line of its error, or None when it imports."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC.parent), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [sys.executable, "-c", IMPORT_EACH_ALONE, json.dumps(_third_party_imports())],
        input="\n".join(modules),
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    answers: dict[str, str | None] = json.loads(done.stdout.strip().splitlines()[-1])
    return answers


def _from_a_cycle(error: str) -> bool:
    """An ImportError a cycle makes: a partially initialized module, or a name that is not (yet) in a fairtalk module."""
    if not error.startswith("ImportError"):
        return False
    return "circular import" in error or "partially initialized" in error or "from 'fairtalk" in error


@pytest.mark.slow
def test_every_module_imports_alone_in_a_fresh_interpreter() -> None:
    """``import fairtalk.x.y`` for every module, each alone in a process with no fairtalk module: no ImportError from a cycle."""
    modules = [name for name in MODULES if not name.endswith("__main__")]
    results = _import_each_alone(modules)
    cyclic = {module: error for module, error in results.items() if error is not None and _from_a_cycle(error)}
    assert not cyclic, "\n".join(f"{module}: {error}" for module, error in cyclic.items())
    assert sorted(results) == sorted(modules) and len(results) > 100  # every module was tried


def test_a_module_that_imports_one_that_imports_it_back_fails_alone(tmp_path: Path) -> None:
    """The check itself: a cycle fails its module's import in the child, and a module that imports is None."""
    package = tmp_path / "cyclic"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "a.py").write_text("from cyclic.b import B\nA = 1\n", encoding="utf-8")
    (package / "b.py").write_text("from cyclic.a import A\nB = 2\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", IMPORT_EACH_ALONE, json.dumps(["json"])],
        input="cyclic.a json",
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    answers = json.loads(done.stdout)
    assert answers["json"] is None and _from_a_cycle(answers["cyclic.a"]), answers


def test_a_cycle_is_told_from_a_missing_extra() -> None:
    assert _from_a_cycle(
        "ImportError: cannot import name 'x' from partially initialized module 'fairtalk.a' (most likely due to a circular import)"
    )
    assert not _from_a_cycle("ModuleNotFoundError: No module named 'vllm'")
