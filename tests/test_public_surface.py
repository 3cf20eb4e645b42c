"""The tests use fairtalk as its users do: through the package namespaces, not the private ``_modules``.

Every ``tests/**/*.py`` is walked as an AST: an ``import`` or ``from ... import`` of a private fairtalk module or
name, a string target such as ``monkeypatch.setattr("fairtalk.x._y.name", ...)`` or
``importlib.import_module("fairtalk.x._y")``, and an attribute chain ``fairtalk.x._y`` are each a reach past the
public namespaces. Such a reach fails unless :data:`ALLOWED` lists its module, with the reason the test must be
white-box there. A name a test needs that users need too belongs in its package's ``__all__`` instead.
"""

from __future__ import annotations

import ast
import fnmatch
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent

#: The private modules tests may reach, and why: one entry a package, ``{a,b}`` listing its modules (``fnmatch``
#: patterns otherwise). Keep it short: a name users need goes in its package's ``__all__`` instead.
ALLOWED: dict[str, str] = {
    "fairtalk._{codec,jsonl,registry,responses,templating,LAZY}": "base modules with no public namespace yet (STYLE (b) "
    "names them jsonl.py, registry.py, ...); test_public_api checks the lazy table _LAZY itself",
    "fairtalk.cli._*": "the CLI is an app, not an API (fairtalk.cli exports only `app`): its own tables and renderers",
    "*._MSG_*": "error-message templates are private module constants that tests match on (STYLE (c) 5)",
    "fairtalk.inference._by_turn": "its identity_turn helper, tested alone",
    "fairtalk.integrations._inspect_{task,model}": "needs the optional inspect_ai extra, which the namespace never imports",
    "fairtalk.experiments._reproduce": "monkeypatches the reproduction's training budget (QUICK_TRAINING) to stay fast",
    "fairtalk.run._{audit,axis,generate,measures,score,sequential,similarity_test}": "the wiring's steps (generate, cached_model, prepare_scores, nested_pairs, judge_measure; the stage signatures)"
    " monkeypatched or unit-tested",
    "fairtalk.store._sqlite": "checks the SQLite batch size",
    "fairtalk.compare._runs": "the comparison's reading of the corpus' dialogues from its two runs, unit-tested",
    "fairtalk.stats._power": "the rate planner's search and its terms checked against the code before them, term by "
    "term (test_rate_planner_search)",
    "fairtalk.lexicons._{format,load}": "the lexicon line parser, and the loader monkeypatched for entry points",
    "fairtalk.measures._{registry,refusal,degenerate,regard,regard_model,regard_finetuned,attribute_words}": "scorer "
    "loading, registries and attribute_words' cache bound monkeypatched; rule tables and the regard classifier's "
    "features and file format",
    "fairtalk.models.{_builtin,_hf,_registry,_sentence_retrieval,_streaming,openai._latency,openai._responder,"
    "vllm._engine}": "adapter registries and loaders monkeypatched; streaming, latency probe and vLLM internals",
    "fairtalk.prompts._{aesop,completions,gold,paraphrase,published,robustness}": "paper 004 helpers tested one by "
    "one (detokenize, LABEL_BLOCK, plural, clean_reply, SHAPES, COLUMNS, cell_sums)",
    "fairtalk.report._{comparison,decoding,html,index,planted,plots,prompt_analysis,table}": "renderer helpers (clip, cells, "
    "decoding text, p formats) tested alone, and writers monkeypatched to fail midway",
    "fairtalk.training._{data,decoding,loops,nets,vocab}": "the reference models' internals (tokenizer, positions, "
    "batches, shipped checkpoints, the debias presets)",
}


def _expand(entry: str) -> list[str]:
    """``a.{b,c}.d`` -> ``["a.b.d", "a.c.d"]`` (one level of braces, which fnmatch lacks)."""
    head, brace, rest = entry.partition("{")
    if not brace:
        return [entry]
    choices, _, tail = rest.partition("}")
    return [pattern for choice in choices.split(",") for pattern in _expand(head + choice + tail)]


#: Calls whose first argument names a module or attribute by its dotted path.
_TARGET_CALLS = {"setattr", "delattr", "patch", "import_module", "find_spec", "testmod"}


def _is_private(part: str) -> bool:
    return part.startswith("_") and not (part.startswith("__") and part.endswith("__"))


def _private_target(dotted: str) -> str | None:
    """``fairtalk.x._y.name`` -> itself when a part after ``fairtalk`` is private, else None."""
    parts = dotted.split(".")
    if parts[0] != "fairtalk" or not any(_is_private(p) for p in parts[1:]):
        return None
    return dotted


def _dotted(node: ast.expr) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return ".".join([node.id, *reversed(parts)])
    return None


def _string(node: ast.expr) -> str | None:
    """A constant string, or an f-string with ``*`` for each placeholder."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value.partition(":")[0]
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "*" for v in node.values).partition(":")[0]
    return None


def _import_targets(node: ast.Import | ast.ImportFrom) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level or not node.module:
        return []
    return [f"{node.module}.{alias.name}" for alias in node.names]


def _call_targets(node: ast.Call) -> list[str]:
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    if name not in _TARGET_CALLS or not node.args:
        return []
    text = _string(node.args[0])
    return [text] if text else []


def private_reaches(path: Path) -> list[tuple[int, str]]:
    """(line, dotted target) of every reach into a private fairtalk module or name in one test file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: dict[tuple[int, str], None] = {}
    inner: set[int] = set()  # attribute nodes inside a longer chain: only the whole chain counts
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            inner.add(id(node.value))
    for node in ast.walk(tree):
        targets: list[str] = []
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            targets = _import_targets(node)
        elif isinstance(node, ast.Call):
            targets = _call_targets(node)
        elif isinstance(node, ast.Attribute) and id(node) not in inner:
            targets = [t for t in [_dotted(node)] if t]
        for target in targets:
            private = _private_target(target)
            if private is not None:
                found[(getattr(node, "lineno", 0), private)] = None
    return sorted(found)


def allowed_by(target: str) -> str | None:
    """The :data:`ALLOWED` pattern (one module of an entry) that lets a test reach ``target``, or None."""
    parts = target.split(".")
    prefixes = [".".join(parts[: i + 1]) for i in range(1, len(parts))]
    for entry in ALLOWED:
        for pattern in _expand(entry):
            if any(fnmatch.fnmatchcase(prefix, pattern) for prefix in prefixes):
                return pattern
    return None


def _test_files() -> list[Path]:
    return sorted(TESTS.rglob("*.py"))


def test_no_test_reaches_a_private_module_outside_the_allowlist() -> None:
    problems = [
        f"{path.relative_to(TESTS.parent)}:{line}: {target}"
        for path in _test_files()
        for line, target in private_reaches(path)
        if allowed_by(target) is None
    ]
    assert not problems, (
        "tests import fairtalk through its package namespaces (add the name to the package's __all__), "
        "or list the module in ALLOWED with the reason:\n" + "\n".join(problems)
    )


def test_every_allowlisted_module_is_used() -> None:
    """A module no test reaches any more leaves the list (so that the list only shrinks)."""
    used = {allowed_by(target) for path in _test_files() for _, target in private_reaches(path)}
    assert {pattern for entry in ALLOWED for pattern in _expand(entry)} - used == set()


def test_the_allowlist_stays_short() -> None:
    assert len(ALLOWED) <= 16


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("from fairtalk.prompts._templates import build_prompts", ["fairtalk.prompts._templates.build_prompts"]),
        ("from fairtalk.prompts import build_prompts", []),
        ("import fairtalk.report._html as html", ["fairtalk.report._html"]),
        ("from fairtalk.report import _index", ["fairtalk.report._index"]),
        ("from fairtalk import __version__", []),
        ('monkeypatch.setattr("fairtalk.run._generate.generate", f)', ["fairtalk.run._generate.generate"]),
        ('importlib.import_module(f"fairtalk.gold._{name}")', ["fairtalk.gold._*"]),
        ("x = fairtalk.models._registry.MODELS", ["fairtalk.models._registry.MODELS"]),
        ("x = fairtalk.stats.pairs_needed.__name__", []),
    ],
)
def test_the_walk_sees_each_form(tmp_path: Path, source: str, expected: list[str]) -> None:
    path = tmp_path / "test_example.py"
    path.write_text(source + "\n", encoding="utf-8")
    assert [target for _, target in private_reaches(path)] == expected
