"""fairtalk's pytest plugin (entry point ``pytest11``): the ``fairtalk_audit`` fixture and its options.

Installed with fairtalk, pytest loads it by itself. The fixture audits a model with the
project's defaults and asserts on the result::

    def test_my_bot_is_fair(fairtalk_audit):
        fairtalk_audit.assert_no_bias("python:bot.py:reply", axes="gender")

The defaults, lowest first: ``[tool.fairtalk]`` in the rootdir's ``pyproject.toml`` (any
:class:`~fairtalk.AuditConfig` key: ``n_pairs``, ``axes``, ``measures``, ``margins``, ...) or,
instead, the file the ini option ``fairtalk_config`` names (TOML or YAML, as
``fairtalk audit --config``; relative to the ini file); then the ini options ``fairtalk_pairs``, ``fairtalk_axes``, ``fairtalk_measures``, ``fairtalk_corpus``
(in ``pytest.ini`` or ``[tool.pytest.ini_options]``), and ``--fairtalk-pairs N`` on the command line.
Each audit writes its report under the test's ``tmp_path`` (or ``fairtalk_report_dir``/TEST-HASH,
to keep reports as a CI artifact), and a failure's message names it. A bad pairs option stops
the run before any test as a usage error; a bad other option errors each test that uses the
fixture, with a message naming the option, its value and why (the axes and the corpus are resolved
here, each lexicon loaded and the corpus opened, and the primary keys and margins checked against the
measures, as the audit would). A failing assertion shows the
test's line and its message, not this plugin's frames (``__tracebackhide__``).

This module imports nothing heavy: fairtalk's pipeline loads when a test first uses the fixture.
"""

from __future__ import annotations

import hashlib
import os
import re
import tomllib
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from fairtalk import AuditConfig, AuditRun, ModelComparison
    from fairtalk.testing import Gate, ModelLike

__all__ = ["FairtalkAudit", "fairtalk_audit", "pytest_addoption", "pytest_configure", "read_config"]

#: The ini options, name -> help; each is an audit option of the same meaning.
INI_OPTIONS = {
    "fairtalk_pairs": "fairtalk: pairs per axis of each audit (n_pairs)",
    "fairtalk_axes": "fairtalk: axes to audit, comma-separated (axes)",
    "fairtalk_measures": "fairtalk: measures, comma-separated (measures)",
    "fairtalk_corpus": "fairtalk: the corpus spec (corpus)",
    "fairtalk_config": "fairtalk: a TOML or YAML file of audit options, as `fairtalk audit --config`",
    "fairtalk_report_dir": "fairtalk: keep each test's reports in this folder (default: the test's tmp_path)",
}
#: What each ini option sets in the audit config.
_INI_KEYS = {"fairtalk_pairs": "n_pairs", "fairtalk_axes": "axes", "fairtalk_measures": "measures", "fairtalk_corpus": "corpus"}
_MSG_TABLE = "[tool.fairtalk] in {path} must be a table of audit options"
_MSG_BOTH = "fairtalk: give the audit options in [tool.fairtalk] of {path} or in the fairtalk_config file, not both"
_MSG_INI = "fairtalk: the ini option {name} = {value!r} is not valid: {why}"
_MSG_OPTION = "fairtalk: --fairtalk-pairs {value}: {why}"
_MSG_BAD_TABLE = "fairtalk: [tool.fairtalk] in {path}: {why}"
_MSG_BAD_FILE = "fairtalk: the fairtalk_config file {path}: {why}"
_MSG_PAIRS = "the pairs per axis must be a whole number ≥ 2 (two pairs are the fewest a test compares)"
#: The options an audit resolves only when it runs (each axis' lexicon, the corpus): read_config resolves them itself,
#: so a bad one errors each test naming the option, not midway through an audit.
_RESOLVED = ("axes", "corpus")
#: The fewest pairs per axis an audit takes (as ``n_pairs`` must be: two pairs are the fewest a test compares).
_MIN_PAIRS = 2
#: The ini options that change what the file's primary keys and margins are checked against.
_SCORING_INI = ("fairtalk_axes", "fairtalk_measures")


def pytest_addoption(parser: pytest.Parser) -> None:
    """Register the ini options and ``--fairtalk-pairs``."""
    for name, help_text in INI_OPTIONS.items():
        parser.addini(name, help_text, default=None)
    group = parser.getgroup("fairtalk")
    group.addoption(
        "--fairtalk-pairs",
        type=int,
        default=None,
        dest="fairtalk_pairs",
        help="pairs per axis of each fairtalk audit (overrides fairtalk_pairs)",
    )


def _ini_pairs(config: pytest.Config) -> int | None:
    """The ini option ``fairtalk_pairs`` as a number (None: not set); a UsageError names a bad one."""
    value = config.getini("fairtalk_pairs")
    if not value:
        return None
    text = str(value).strip()
    if not text.isdigit() or int(text) < _MIN_PAIRS:
        raise pytest.UsageError(_MSG_INI.format(name="fairtalk_pairs", value=str(value), why=_MSG_PAIRS))
    return int(text)


def _option_pairs(config: pytest.Config) -> int | None:
    """``--fairtalk-pairs`` (None: not given); a UsageError names a number below 2."""
    pairs = config.getoption("fairtalk_pairs")
    if pairs is not None and int(pairs) < _MIN_PAIRS:
        raise pytest.UsageError(_MSG_OPTION.format(value=pairs, why=_MSG_PAIRS))
    return None if pairs is None else int(pairs)


def pytest_configure(config: pytest.Config) -> None:
    """Check the pairs options before any test runs (the other options need fairtalk: the fixture checks them)."""
    _ini_pairs(config)
    _option_pairs(config)


def _pyproject_table(rootpath: Path) -> dict[str, object]:
    """``[tool.fairtalk]`` of ``rootpath/pyproject.toml`` (empty when there is none)."""
    path = rootpath / "pyproject.toml"
    if not path.is_file():
        return {}
    with path.open("rb") as handle:
        table = tomllib.load(handle).get("tool", {}).get("fairtalk", {})
    if not isinstance(table, dict):
        raise pytest.UsageError(_MSG_TABLE.format(path=path))
    return dict(table)


def _check_scoring(audit_config: AuditConfig) -> None:
    """Check the primary and margin keys and the margins against the axes' measures, as the audit checks them first.

    The measures are built for their keys and kinds only (a judge without its model); a SpecError
    names a key no measure gives, or a rate's margin of 1 or more (:func:`fairtalk.stats.check_margins`).
    """
    from fairtalk.run import audit_score_options
    from fairtalk.testing import config_lexicons

    audit_score_options(audit_config.score, config_lexicons(audit_config))  # the audit's own check, before any answer


def _check_resolved(audit_config: AuditConfig, keys: Iterable[str]) -> None:
    """Resolve ``keys`` of :data:`_RESOLVED` as the audit will: load each axis' lexicon, open the corpus.

    Raises the audit's own error (a SpecError for an unknown axis, a CorpusError for a corpus that cannot be read).
    """
    from fairtalk import read_corpus
    from fairtalk.testing import config_lexicons

    if "axes" in keys:
        config_lexicons(audit_config)
    if "corpus" in keys:
        pairing = audit_config.pairs
        read_corpus(pairing.corpus, split=pairing.split, turns=pairing.turns)


def _file_config(config: pytest.Config, table: Mapping[str, object]) -> tuple[AuditConfig, Callable[[object], str]]:
    """The defaults of ``[tool.fairtalk]`` or the ``fairtalk_config`` file, and how a message names where they came from."""
    from fairtalk import AuditConfig
    from fairtalk.errors import FairtalkError

    file_name = config.getini("fairtalk_config")
    if file_name:
        path = (config.inipath.parent if config.inipath is not None else config.rootpath) / str(file_name)

        def where(exc: object) -> str:  # the file's own errors begin with its path: said once
            return _MSG_BAD_FILE.format(path=path, why=str(exc).removeprefix(f"{path}: "))

    else:
        path = config.rootpath / "pyproject.toml"

        def where(exc: object) -> str:
            return _MSG_BAD_TABLE.format(path=path, why=exc)

    try:
        return (AuditConfig.from_file(path) if file_name else AuditConfig.from_mapping(table)), where
    except (FairtalkError, ValueError) as exc:
        raise pytest.UsageError(where(exc)) from exc


def read_config(config: pytest.Config) -> AuditConfig:
    """The audit defaults of this pytest run: ``[tool.fairtalk]`` or ``fairtalk_config``, the ini options, ``--fairtalk-pairs``.

    The axes and the corpus are resolved here (each lexicon loaded, the corpus opened), as the
    audit would: a bad one is a UsageError naming the option (or file) that gave it.
    """
    from fairtalk import AuditConfig
    from fairtalk.errors import FairtalkError

    table = _pyproject_table(config.rootpath)
    if config.getini("fairtalk_config") and table:
        raise pytest.UsageError(_MSG_BOTH.format(path=config.rootpath / "pyproject.toml"))
    audit_config, where = _file_config(config, table)
    given = {ini: str(value) for ini in _INI_KEYS if (value := config.getini(ini))}
    defaults = AuditConfig()
    from_file = [
        key
        for key in _RESOLVED
        if key not in {_INI_KEYS[ini] for ini in given} and getattr(audit_config, key) != getattr(defaults, key)
    ]
    try:
        _check_resolved(audit_config, from_file)
    except (FairtalkError, ValueError) as exc:
        raise pytest.UsageError(where(exc)) from exc
    for ini, value in given.items():
        key = _INI_KEYS[ini]
        try:
            audit_config = audit_config.updated({key: _ini_pairs(config) if key == "n_pairs" else value})
            _check_resolved(audit_config, [key])
        except (FairtalkError, ValueError) as exc:
            raise pytest.UsageError(_MSG_INI.format(name=ini, value=value, why=exc)) from exc
    _check_file_scoring(audit_config, where, {ini: value for ini, value in given.items() if ini in _SCORING_INI})
    pairs = _option_pairs(config)  # a UsageError for fewer than 2, as pytest_configure already said
    return audit_config if pairs is None else audit_config.updated({"n_pairs": pairs})


def _check_file_scoring(audit_config: AuditConfig, where: Callable[[object], str], ini: Mapping[str, str]) -> None:
    """:func:`_check_scoring` on the defaults; a UsageError names the file (primary keys and margins come only from it).

    Where the ini options changed the measures or the axes, the message names them too.
    """
    from fairtalk.errors import FairtalkError

    try:
        _check_scoring(audit_config)
    except (FairtalkError, ValueError) as exc:
        also = "; ".join(f"{name} = {value!r}" for name, value in ini.items())
        raise pytest.UsageError(where(exc) + (f" (with the ini option {also})" if also else "")) from exc


class FairtalkAudit:
    """The ``fairtalk_audit`` fixture: audits with the run's defaults (``config``), each into its own report folder.

    Call it (``fairtalk_audit(model, axes="gender")``) for the :class:`~fairtalk.AuditRun`, or use
    :meth:`assert_no_bias` and :meth:`assert_not_worse` (see :mod:`fairtalk.testing`).
    """

    def __init__(self, config: AuditConfig, folder: Path) -> None:
        self.config = config
        self.folder = folder
        self._count = 0

    def next_folder(self) -> Path:
        """A new report folder for the next audit (``run-1``, ``run-2``, ...)."""
        self._count += 1
        return self.folder / f"run-{self._count}"

    def __call__(
        self,
        model: ModelLike,
        *,
        axes: str | Sequence[str] | None = None,
        n_pairs: int | None = None,
        measures: str | Sequence[str] | None = None,
        margin: Mapping[str, float] | None = None,
        model_version: str | None = None,
    ) -> AuditRun:
        """Audit ``model`` with the defaults and these options; the report goes to :meth:`next_folder`."""
        from fairtalk import audit
        from fairtalk.testing import audit_options

        options = audit_options(
            self.config, axes=axes, n_pairs=n_pairs, measures=measures, margin=margin, model_version=model_version
        )
        return audit(options.updated({"model": model, "out_dir": os.fspath(self.next_folder())}))

    def assert_no_bias(
        self,
        model: ModelLike,
        *,
        axes: str | Sequence[str] | None = None,
        n_pairs: int | None = None,
        measures: str | Sequence[str] | None = None,
        margin: Mapping[str, float] | None = None,
        gate: Gate | None = None,
        model_version: str | None = None,
    ) -> AuditRun:
        """:func:`fairtalk.testing.assert_no_bias` with the run's defaults."""
        __tracebackhide__ = True  # a failure shows the test's line and the message, not the plugin's source
        from fairtalk.testing import assert_no_bias

        return assert_no_bias(
            model,
            axes=axes,
            n_pairs=n_pairs,
            measures=measures,
            margin=margin,
            gate=gate,
            config=self.config,
            out_dir=self.next_folder(),
            model_version=model_version,
        )

    def assert_not_worse(
        self,
        candidate: ModelLike,
        baseline: ModelLike,
        *,
        axes: str | Sequence[str] | None = None,
        n_pairs: int | None = None,
        measures: str | Sequence[str] | None = None,
        margin: Mapping[str, float] | None = None,
        baseline_version: str | None = None,
        candidate_version: str | None = None,
    ) -> ModelComparison:
        """:func:`fairtalk.testing.assert_not_worse` with the run's defaults."""
        __tracebackhide__ = True  # a failure shows the test's line and the message, not the plugin's source
        from fairtalk.testing import assert_not_worse

        return assert_not_worse(
            candidate,
            baseline,
            axes=axes,
            n_pairs=n_pairs,
            measures=measures,
            margin=margin,
            config=self.config,
            out_dir=self.next_folder(),
            baseline_version=baseline_version,
            candidate_version=candidate_version,
        )


def _report_folder(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """``fairtalk_report_dir``/TEST-HASH when the ini option is set (relative to the rootdir), else ``tmp_path/fairtalk``.

    TEST is the test's node id with each run of other characters than ``A-Za-z0-9_.-`` as ``_``,
    HASH the first 8 hex digits of the node id's SHA-256: two ids that read alike once cleaned
    (parameters ``a/b`` and ``a b``) keep their reports apart.
    """
    kept = request.config.getini("fairtalk_report_dir")
    if not kept:
        return tmp_path / "fairtalk"
    nodeid = request.node.nodeid
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", nodeid).strip("_") or "test"
    digest = hashlib.sha256(nodeid.encode("utf-8")).hexdigest()[:8]
    return request.config.rootpath / str(kept) / f"{name}-{digest}"


@pytest.fixture
def fairtalk_audit(request: pytest.FixtureRequest, tmp_path: Path) -> FairtalkAudit:
    """Audit a model in a test with the project's fairtalk defaults; ``.assert_no_bias(model)`` fails on bias.

    A bad option errors the test with its message alone (no traceback of this plugin).
    """
    try:
        defaults = read_config(request.config)
    except pytest.UsageError as exc:
        message = str(exc)
    else:
        return FairtalkAudit(defaults, _report_folder(request, tmp_path))
    pytest.fail(message, pytrace=False)  # outside the except: no chained tracebacks either
