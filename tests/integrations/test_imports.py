"""The integrations are optional: ``import fairtalk`` (and using it) imports none of their packages."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("inspect_ai", "mlflow", "junitparser", "fairtalk.integrations", "fairtalk.testing")


def test_import_fairtalk_pulls_no_integration_package() -> None:
    code = (
        "import sys, fairtalk\n"
        "fairtalk.audit, fairtalk.AuditConfig, fairtalk.score\n"
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r} or m.startswith({HEAVY!r})))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_the_plugin_and_the_facades_import_without_their_packages() -> None:
    """pytest loads the plugin in every session: it, and the public modules, import no inspect_ai or mlflow."""
    code = (
        "import sys\n"
        "import fairtalk.integrations, fairtalk.integrations.pytest_plugin, fairtalk.integrations._inspect_task\n"
        "import fairtalk.integrations.mlflow, fairtalk.testing\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('inspect_ai', 'mlflow', 'junitparser')))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_the_core_dependencies_name_none_of_them() -> None:
    from importlib.metadata import requires

    core = [r for r in requires("fairtalk") or [] if "extra ==" not in r]
    assert not [
        r
        for r in core
        if r.split()[0].split(">")[0].split("=")[0].lower()
        in ("inspect-ai", "inspect_ai", "mlflow", "mlflow-skinny", "junitparser")
    ]
