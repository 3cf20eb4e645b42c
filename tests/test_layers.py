"""The import directions of ../shared/STYLE.md (b), checked by walking each module's AST."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "fairtalk"

#: Direct dependencies each top-level unit may import (plus, transitively, theirs).
ALLOWED: dict[str, set[str]] = {
    "version": set(),
    "lazy": set(),
    "templating": {"records"},
    "errors": set(),
    "codec": set(),
    "options": set(),
    "schema": {"errors", "options"},
    "records": {"codec", "options"},  # Coverage.shortfall: in a file without limit_given, DEFAULT_N_PAIRS is the default
    "jsonl": {"errors", "records"},
    "files": {"errors"},
    "registry": {"errors"},
    "progress": {"errors"},
    "pairs_jsonl": {"errors", "records", "jsonl", "files"},
    "lexicons": {"errors", "records"},
    "corpora": {"errors", "records"},
    "responses": {"errors", "records"},
    "counterfactual": {"lexicons"},
    "measures": {"lexicons"},
    "stats": {"records", "errors"},
    "models": {"records", "errors"},
    "pairs": {"corpora", "counterfactual", "pairs_jsonl"},
    "store": {"models", "records", "errors"},
    "prompt_records": set(),
    "prompts": {"lexicons", "measures", "models", "store", "stats", "prompt_records"},
    "results": {"stats", "responses", "prompt_records"},
    "gates": {"results", "stats", "records", "errors"},
    "report": {"results", "gates", "pairs_jsonl", "templating"},
    "debias": {"counterfactual", "lexicons", "measures"},
    "training": {"debias"},
    "gold": {"errors", "records", "lexicons", "counterfactual", "files", "jsonl", "responses", "templating"},
    # The options schema, declared once; and the statistical policy over stats/ (which test, correction, verdict, ...).
    "config": {"lexicons", "measures", "models", "stats", "store"},
    "inference": {"config", "results", "measures", "stats", "gold", "models", "lexicons"},
}
#: Units that may import any stage (they wire stages together).
WIRING = {"pipeline", "run", "compare", "experiments", "__init__", "__main__"}
#: Paper 004 (``prompts/``) is a stage; these modules of it hold only records (frozen dataclasses, no
#: other fairtalk import but the base), so the results layer may hold them: their own unit.
RECORD_MODULES = {
    "prompts/_records.py": "prompt_records",
    "prompts/_templates.py": "prompt_records",
    "prompts/_data.py": "prompt_records",
}
RECORD_UNITS = set(RECORD_MODULES.values())
#: A stage's entry modules: where it wires its stages into a result, so they may import the results layer too (and
#: ``_analysis.py`` the inference, which decides the pairs' verdicts the result holds).
ENTRY_MODULES = {"prompts/_analysis.py": {"results", "inference"}, "prompts/_labelling.py": {"results"}}
#: Units on the public API, like ``cli``: they may import the top-level names and the documented (non-private)
#: submodules, and no other unit may import them. ``testing.py`` (the bias assertions) belongs to the integrations,
#: and ``__main__.py`` (``python -m fairtalk``) to the CLI.
PUBLIC_API_UNITS = {"cli", "integrations"}
INTEGRATION_MODULES = {"testing.py": "integrations", "__main__.py": "cli"}
#: Imports allowed only inside a function body (lazy), per importing module.
LAZY_EXCEPTIONS = {("models/_builtin.py", "training")}


#: The bottom layer: every module may import these.
BASE = {"version", "lazy", "errors", "codec", "records", "columns", "jsonl", "files", "registry", "progress", "options", "schema"}


def _closure(unit: str) -> set[str]:
    seen: set[str] = set(BASE) if unit not in BASE else set(ALLOWED[unit])
    todo = [unit]
    while todo:
        for dep in ALLOWED.get(todo.pop(), set()):
            if dep not in seen:
                seen.add(dep)
                todo.append(dep)
    return seen | {unit}


def _unit(module: str) -> str:
    """``fairtalk.measures._sentiment`` -> ``measures`` (``fairtalk.prompts._records`` -> ``prompt_records``)."""
    parts = module.split(".")
    rel = "/".join(parts[1:]) + ".py"
    record = RECORD_MODULES.get(rel) or INTEGRATION_MODULES.get(rel)
    if record is not None:
        return record
    return parts[1].lstrip("_") if len(parts) > 1 else "__init__"


def _file_unit(path: Path) -> str:
    """The unit of a source file: its top-level package or module, or its record unit."""
    rel = path.relative_to(SRC)
    return RECORD_MODULES.get(rel.as_posix()) or INTEGRATION_MODULES.get(
        rel.as_posix(), rel.parts[0].removesuffix(".py").lstrip("_")
    )


def _imports(path: Path) -> list[tuple[str, list[str], bool, int]]:
    """(module, imported names, inside a function, line) for every fairtalk import in a file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = ".".join(("fairtalk", *path.relative_to(SRC).with_suffix("").parts[:-1]))
    found = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            nested = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
            if isinstance(child, ast.Import):
                for alias in child.names:
                    if alias.name.startswith("fairtalk"):
                        found.append((alias.name, [], in_function, child.lineno))
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package.split(".")
                    base = base[: len(base) - (child.level - 1)]
                    module = ".".join(base + ([child.module] if child.module else []))
                else:
                    module = child.module or ""
                if module.startswith("fairtalk"):
                    found.append((module, [a.name for a in child.names], in_function, child.lineno))
            visit(child, nested)

    visit(tree, False)
    return found


def _public(module: str, names: list[str]) -> bool:
    """Whether ``from module import names`` reaches only public namespaces (``fairtalk._jsonl`` is private too)."""
    parts = module.split(".")[1:] + [n for n in names if n != "__version__"]
    return not any(part.startswith("_") for part in parts)


def _source_files() -> list[Path]:
    return sorted(p for p in SRC.rglob("*.py"))


@pytest.mark.parametrize("path", _source_files(), ids=lambda p: str(p.relative_to(SRC)))
def test_imports_follow_the_layers(path: Path) -> None:
    rel = path.relative_to(SRC).as_posix()
    unit = _file_unit(path)
    problems = []
    for module, names, in_function, line in _imports(path):
        target = _unit(module)
        if unit in PUBLIC_API_UNITS:  # the public API: the top-level names and the documented (non-private) submodules
            ok = target == unit or (target not in PUBLIC_API_UNITS and _public(module, names))
        elif unit in WIRING or target == unit:
            ok = True
        else:
            ok = (
                target in _closure(unit)
                or target in ENTRY_MODULES.get(rel, set())
                or (in_function and (rel, target) in LAZY_EXCEPTIONS)
            )
        if not ok:
            problems.append(f"{rel}:{line} imports {module} ({unit} may not depend on {target})")
        if target != unit and unit != "__init__":
            private = [n for n in names if n.startswith("_") and n != "__version__"]
            # a top-level module is a unit of its own (``fairtalk._responses``), and a record module a unit of
            # its own: importing them is no reach into another unit's private modules
            inner = [] if _unit(module) in RECORD_UNITS else module.split(".")[2:]
            private += [m for m in inner if m.startswith("_") and m != "__init__"]
            if private:
                problems.append(f"{rel}:{line} imports private {module}:{','.join(private)}")
    assert not problems, "\n".join(problems)


def test_paper_004_is_a_stage_with_one_entry() -> None:
    """``prompts/`` follows the layer rules like every stage: only its entry modules reach the results, none the report."""
    assert "prompts" not in WIRING and "prompts" in ALLOWED
    found = {(str(p.relative_to(SRC)), _unit(m)) for p in (SRC / "prompts").rglob("*.py") for m, *_ in _imports(p)}
    upward = {(rel, target) for rel, target in found if target in {"inference", "results", "report", "pipeline", "cli"}}
    assert upward == {
        ("prompts/_analysis.py", "inference"),
        ("prompts/_analysis.py", "results"),
        ("prompts/_labelling.py", "results"),
    }


def test_record_modules_import_only_the_base() -> None:
    """The record modules the results layer holds import nothing above the base (errors, jsonl, ...)."""
    for rel in RECORD_MODULES:
        targets = {_unit(m) for m, *_ in _imports(SRC / rel)}
        assert targets <= BASE | {"prompt_records"}, (rel, targets)


def test_nothing_imports_cli() -> None:
    offenders = [
        str(p.relative_to(SRC))
        for p in _source_files()
        if _file_unit(p) != "cli" and any(_unit(m) == "cli" for m, *_ in _imports(p))
    ]
    assert offenders == []


def test_nothing_imports_the_integrations() -> None:
    """``integrations/`` and ``testing.py`` sit on the public API: no other module (the CLI included) imports them."""
    offenders = [
        str(p.relative_to(SRC))
        for p in _source_files()
        if _file_unit(p) != "integrations" and any(_unit(m) == "integrations" for m, *_ in _imports(p))
    ]
    assert offenders == []
    assert _file_unit(SRC / "testing.py") == "integrations" == _unit("fairtalk.testing")


def test_ruff_format_owns_the_layout() -> None:
    """Modules are sized by function (ruff C901/PLR0915 in pyproject.toml), not by lines: nothing hand-packs lines."""
    packed = [str(p.relative_to(SRC)) for p in _source_files() if "# fmt: " + "skip" in p.read_text()]
    assert packed == []


def test_every_module_has_a_docstring() -> None:
    missing = [str(p.relative_to(SRC)) for p in _source_files() if ast.get_docstring(ast.parse(p.read_text())) is None]
    assert missing == []


def _imports_rich(path: Path) -> bool:
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import) and any(a.name == "rich" or a.name.startswith("rich.") for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").split(".")[0] == "rich":
            return True
    return False


#: The units that may import rich: the command line, and report/ for its rich tables.
RICH_ALLOWED = {"cli", "report"}


def test_the_library_never_draws() -> None:
    """Only cli/ (and report/'s rich tables) import rich: the library reports through logging and ProgressEvent."""
    drawing = [
        str(p.relative_to(SRC)) for p in _source_files() if p.relative_to(SRC).parts[0] not in RICH_ALLOWED and _imports_rich(p)
    ]
    assert drawing == []


def test_the_cli_imports_only_public_namespaces() -> None:
    """``fairtalk.cli`` uses the library as its users do: no private module or name of another unit, at any depth."""
    reaches = [
        f"{path.relative_to(SRC)}:{line} imports {module} {names}"
        for path in sorted((SRC / "cli").rglob("*.py"))
        for module, names, _, line in _imports(path)
        if _unit(module) != "cli" and not _public(module, names)
    ]
    assert reaches == []


def _prints(path: Path) -> list[int]:
    """Lines of ``path`` that call ``print`` (doctest examples are strings, not calls)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print"
    ]


def test_the_library_never_prints_and_only_report_plots() -> None:
    """Library code outside cli/ calls no ``print`` (it logs and returns), and only report/ imports matplotlib."""
    printing = [
        f"{p.relative_to(SRC)}:{line}" for p in _source_files() if p.relative_to(SRC).parts[0] != "cli" for line in _prints(p)
    ]
    assert printing == []
    plotting = [
        str(p.relative_to(SRC))
        for p in _source_files()
        if p.relative_to(SRC).parts[0] != "report" and "matplotlib" in p.read_text(encoding="utf-8")
    ]
    assert plotting == []


#: The modules that hold or wire a verdict decided in ``inference/``: they ask, score and keep, and decide nothing.
#: (``run/_axis.py`` still corrects the run's family across axes itself; it is not listed.)
UNDECIDING = ("run/_similarity_test.py", "run/_axis.py")


def _stats_functions(path: Path) -> list[str]:
    """``line: name`` for each function (a lowercase name) or whole module a file imports from ``fairtalk.stats``, lazily too."""
    return [
        f"{line}: {name or module}"
        for module, names, _, line in _imports(path)
        if _unit(module) == "stats"
        for name in (names or [""])
        if not name or not name[0].isupper()  # a record or a constant (PPIEstimate, DEFAULT_MARGINS) decides nothing
    ]


def test_verdicts_are_decided_in_inference_not_in_results_or_run() -> None:
    """results/ holds decided verdicts: it calls no test, correction or verdict of stats/ (the prompts analysis' Holm
    over its pairs is :func:`fairtalk.inference.pair_verdicts`); the similarity test's run asks the model and leaves the
    test and its verdicts to :func:`fairtalk.inference.similarity_rows`; an audit's axes are corrected together or apart
    by :func:`fairtalk.inference.correct_families`."""
    results = {str(p.relative_to(SRC)): found for p in sorted((SRC / "results").rglob("*.py")) if (found := _stats_functions(p))}
    assert results == {}
    for rel in UNDECIDING:
        imported = {name for module, names, _, _ in _imports(SRC / rel) for name in names}
        assert _stats_functions(SRC / rel) == [] and not imported & {"Verdict", "SimilarityRow"}, rel
    decided = [
        (module, names) for module, names, *_ in _imports(SRC / "prompts" / "_analysis.py") if _unit(module) == "inference"
    ]
    assert decided == [("fairtalk.inference", ["pair_verdicts"])]  # the analysis has its pairs' verdicts decided there
