"""The public namespace: ``__all__`` matches the public names, and importing stays light."""

from __future__ import annotations

import subprocess
import sys
import types

import fairtalk


def test_all_matches_public_names() -> None:
    public = {
        name for name in dir(fairtalk) if not name.startswith("_") and not isinstance(getattr(fairtalk, name), types.ModuleType)
    } | {"__version__"}
    assert set(fairtalk.__all__) == public


def test_every_exported_name_resolves() -> None:
    for name in fairtalk.__all__:
        assert getattr(fairtalk, name) is not None, name


def test_unknown_attribute_raises_attribute_error() -> None:
    try:
        fairtalk.no_such_name  # noqa: B018
    except AttributeError as exc:
        assert "no_such_name" in str(exc)
    else:  # pragma: no cover
        raise AssertionError("expected AttributeError")


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


def test_the_type_stub_lists_every_public_name() -> None:
    import ast
    from pathlib import Path

    stub = Path(fairtalk.__file__).with_suffix(".pyi")
    tree = ast.parse(stub.read_text())
    declared = next(ast.literal_eval(node.value) for node in tree.body
                    if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "__all__")  # fmt: skip
    imported = {alias.asname or alias.name for node in tree.body if isinstance(node, ast.ImportFrom) for alias in node.names}
    assert sorted(declared) == sorted(fairtalk.__all__)
    assert set(fairtalk.__all__) - {"__version__"} <= imported  # every lazy name has its typed import
