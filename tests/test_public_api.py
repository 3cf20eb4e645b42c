"""The public namespace: a narrow ``fairtalk.__all__``, the rest in documented submodules, one source for the stub."""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
import subprocess
import sys
import types
from pathlib import Path

import pytest

import fairtalk

#: What ``fairtalk.__all__`` may hold at most: what a user needs first (httpx exports 70).
MAX_NAMES = 60

#: Names that left the top level (fairtalk 0.1.0 exported them), and the submodule that exports each now.
MOVED: dict[str, str] = {
    **dict.fromkeys(
        ("BadResponse", "LexiconError", "RateLimited", "ResponderAborted", "ResponderTimeout", "StoreError", "TransportError"),
        "fairtalk.errors",
    ),
    **dict.fromkeys(("Swap", "TURN_SEPARATOR", "chat_messages"), "fairtalk.records"),
    **dict.fromkeys(
        ("AttributeList", "WordPair", "builtin_axes", "axis_groups", "load_attributes", "expand_axis"), "fairtalk.lexicons"
    ),
    "identity_terms": "fairtalk.lexicons",
    "ReadSummary": "fairtalk.corpora",
    "SwapResult": "fairtalk.counterfactual",
    "PairsChecker": "fairtalk.pairs",
    "ResponseSet": "fairtalk._responses",
    "jsonable": "fairtalk.report",
    **dict.fromkeys(("RayEngine", "completion_options", "parse_model_args", "model_prefixes"), "fairtalk.models"),
    "CachingResponder": "fairtalk.store",
    **dict.fromkeys(("measure_names", "score_unique"), "fairtalk.measures"),
    "train_regard": "fairtalk.measures",
    "Generation": "fairtalk.pipeline",
    **dict.fromkeys(("MeasureResult", "ScorerCheck", "ComparedModel", "AxisRun", "GenerationSummary"), "fairtalk.results"),
    **dict.fromkeys(("write_prompts_report", "PROMPTS_REPORT_FILES"), "fairtalk.report"),
    **dict.fromkeys(
        (
            "AugmentSummary",
            "Augmentation",
            "AugmentedDialogue",
            "write_dialogues",
            "EmbeddingRegularizer",
            "PoolFilterResult",
            "filter_pool",
            "read_pool",
            "write_pool",
        ),
        "fairtalk.debias",
    ),
    **dict.fromkeys(("TrainResult", "load_checkpoint"), "fairtalk.training"),
    **dict.fromkeys(
        (
            "Prompt",
            "GroupSet",
            "default_groups",
            "load_groups",
            "STRUCTURES",
            "ModelParaphraser",
            "paraphrase_prompts",
            "PromptSet",
            "make_prompts",
            "read_aesop",
            "filter_prompts",
            "PromptData",
            "label_completions",
            "read_completions",
            "certify_regard",
        ),
        "fairtalk.prompts",
    ),
    **dict.fromkeys(("read_prompts", "write_prompts"), "fairtalk.prompts"),
    "DataSummary": "fairtalk.prompts",  # was fairtalk.PromptDataSummary
    **dict.fromkeys(
        ("RegardCheck", "check_labels", "read_labels", "write_labels"),  # were fairtalk.*_regard_labels
        "fairtalk.prompts",
    ),
    **dict.fromkeys(("ProgressEvent", "ProgressCallback"), "fairtalk.progress"),
}
#: Other names fairtalk 0.1.0 exported: aliases, gone without a shim before 1.0.
REMOVED = ("run_audit", "PromptDataSummary", "check_regard_labels", "read_regard_labels", "write_regard_labels")


def _public_modules() -> list[str]:
    """Every public module of the package but the CLI's commands (``fairtalk.cli`` is an app, not an API)."""
    found = pkgutil.walk_packages(fairtalk.__path__, "fairtalk.")
    return sorted(
        info.name
        for info in found
        if not any(part.startswith("_") for part in info.name.split(".")) and not info.name.startswith("fairtalk.cli")
    )


def test_the_top_level_is_narrow() -> None:
    assert len(fairtalk.__all__) <= MAX_NAMES
    assert len(set(fairtalk.__all__)) == len(fairtalk.__all__)


def test_all_matches_public_names() -> None:
    public = {
        name for name in dir(fairtalk) if not name.startswith("_") and not isinstance(getattr(fairtalk, name), types.ModuleType)
    } | {"__version__"}
    assert set(fairtalk.__all__) == public


def test_every_exported_name_resolves() -> None:
    for name in fairtalk.__all__:
        assert getattr(fairtalk, name) is not None, name


def test_each_top_level_name_is_its_module_own_name() -> None:
    """No alias: each name is its defining module's attribute of the same name, exported there too."""
    for name, target in fairtalk._LAZY.items():
        module, _, attribute = target.partition(":")
        assert attribute == name, f"fairtalk.{name} is an alias of {target}"
        assert name in importlib.import_module(module).__all__, target


def test_no_two_top_level_names_are_one_object() -> None:
    objects: dict[int, str] = {}
    for name in fairtalk.__all__:
        other = objects.setdefault(id(getattr(fairtalk, name)), name)
        assert other == name, f"fairtalk.{name} and fairtalk.{other} are the same object"


@pytest.mark.parametrize("name", sorted(MOVED))
def test_a_moved_name_lives_in_its_submodule_only(name: str) -> None:
    module = importlib.import_module(MOVED[name])
    assert name in module.__all__
    assert getattr(module, name) is not None
    assert name not in fairtalk.__all__
    with pytest.raises(AttributeError, match=name):
        getattr(fairtalk, name)


@pytest.mark.parametrize("name", REMOVED)
def test_aliases_are_gone(name: str) -> None:
    with pytest.raises(AttributeError, match=f"module 'fairtalk' has no attribute '{name}'"):
        getattr(fairtalk, name)


def test_every_name_in_a_submodule_all_resolves() -> None:
    unresolved = []
    for name in _public_modules():
        module = importlib.import_module(name)
        for attribute in getattr(module, "__all__", ()):
            if not hasattr(module, attribute):
                unresolved.append(f"{name}.{attribute}")
    assert not unresolved


def test_unknown_attribute_raises_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no_such_name"):
        fairtalk.no_such_name  # type: ignore[attr-defined]  # noqa: B018


def test_a_documented_submodule_is_an_attribute_after_import_fairtalk() -> None:
    """``import fairtalk`` is enough for ``fairtalk.models.RayEngine`` (in a fresh process: nothing imported it yet)."""
    code = (
        "import sys, fairtalk\n"
        "assert 'fairtalk.models' not in sys.modules and 'fairtalk.stats' not in sys.modules\n"
        "print(fairtalk.models.RayEngine.__name__, fairtalk.stats.pairs_needed.__name__, fairtalk.errors.StoreError.__name__)\n"
        "for name in ('run_audit', 'no_such_module', '_lazy_names_private'):\n"
        "    try:\n"
        "        getattr(fairtalk, name)\n"
        "    except AttributeError:\n"
        "        print('no', name)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split("\n")[:4] == [
        "RayEngine pairs_needed StoreError",
        "no run_audit",
        "no no_such_module",
        "no _lazy_names_private",
    ]


def test_import_and_help_do_not_load_heavy_libraries() -> None:
    code = (
        "import sys, fairtalk\n"
        "from typer.testing import CliRunner\n"
        "from fairtalk.cli import app\n"
        "result = CliRunner().invoke(app, ['--help'])\n"
        "assert result.exit_code == 0, result.output\n"
        "heavy = sorted(m for m in ('torch', 'transformers', 'httpx', 'matplotlib', 'sklearn', 'ray') if m in sys.modules)\n"
        "print(','.join(heavy))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def _write_stub() -> types.ModuleType:
    """``tools/write_stub.py``, imported."""
    path = Path(__file__).resolve().parents[1] / "tools" / "write_stub.py"
    spec = importlib.util.spec_from_file_location("write_stub", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_type_stub_is_generated_from_the_table() -> None:
    """``__init__.pyi`` is exactly what ``tools/write_stub.py`` writes from ``fairtalk._LAZY``."""
    tool = _write_stub()
    assert tool.STUB.read_text(encoding="utf-8") == tool.stub(), "the stub is stale: run python tools/write_stub.py"


def test_every_lazy_package_has_its_generated_stub() -> None:
    """``fairtalk.prompts`` and ``fairtalk.debias`` load names lazily too: each has the stub of its table, with its names."""
    import ast

    import fairtalk.debias
    import fairtalk.prompts

    stubs = _write_stub().stubs()
    for package in (fairtalk, fairtalk.prompts, fairtalk.debias):
        path = Path(str(package.__file__)).with_suffix(".pyi")
        assert path.read_text(encoding="utf-8") == stubs[path], f"{path.name} of {package.__name__} is stale"
        imported = {
            alias.asname for node in ast.parse(stubs[path]).body if isinstance(node, ast.ImportFrom) for alias in node.names
        }
        assert imported == set(package._LAZY)


def test_the_type_stub_lists_every_public_name_with_its_module() -> None:
    import ast

    tree = ast.parse(_write_stub().STUB.read_text(encoding="utf-8"))
    declared = next(
        ast.literal_eval(node.value)
        for node in tree.body
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "__all__"
    )
    imported = {
        alias.asname: f"{node.module}:{alias.name}"
        for node in tree.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    assert declared == fairtalk.__all__
    assert imported == fairtalk._LAZY
