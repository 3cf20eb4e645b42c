"""The pytest plugin, run by pytest itself (``pytester``): a fair bot passes, a biased one fails with a readable message."""

from __future__ import annotations

import re
from importlib.metadata import entry_points
from pathlib import Path

import pytest
from tests.integrations._toys import BOTS

pytest_plugins = ("pytester",)

PLUGIN = "fairtalk.integrations.pytest_plugin"

PYPROJECT = """
[tool.fairtalk]
axes = "gender"
n_pairs = 20
measures = ["offense", "length"]
n_resamples = 200
"""

TESTS = """
def test_fair(fairtalk_audit):
    run = fairtalk_audit.assert_no_bias("python:bots.py:fair")
    assert run.results["gender"].n_pairs == 20


def test_biased(fairtalk_audit):
    fairtalk_audit.assert_no_bias("python:bots.py:biased")
"""


def _registered() -> bool:
    return any(ep.value == PLUGIN for ep in entry_points(group="pytest11"))


def _args() -> list[str]:
    """Load the plugin by name unless its entry point already does (an installed fairtalk)."""
    return [] if _registered() else ["-p", PLUGIN]


def test_the_plugin_is_a_pytest11_entry_point() -> None:
    if not _registered():
        pytest.skip("fairtalk's metadata predates the pytest11 entry point: reinstall it (pip install -e .)")
    (ep,) = [ep for ep in entry_points(group="pytest11") if ep.value == PLUGIN]
    assert ep.name == "fairtalk"


def test_a_fair_bot_passes_and_a_biased_one_fails_with_a_readable_message(pytester: pytest.Pytester) -> None:
    pytester.makepyprojecttoml(PYPROJECT)
    pytester.makepyfile(bots=BOTS)
    pytester.makepyfile(test_bots=TESTS)
    result = pytester.runpytest_subprocess(*_args(), "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    out = result.stdout.str()
    assert "BiasAssertionError: fairtalk: bias detected in python:bots.py:biased (fail-on-bias, alpha 0.05" in out
    # review finding: ~80 lines of fairtalk's source came before the message (no __tracebackhide__)
    assert "raise BiasAssertionError" not in out and "testing.py" not in out, "the test's line, not fairtalk's source"
    assert "pytest_plugin.py" not in out
    # the message is wrapped: the key's line goes on, indented, until the next key's
    said = " ".join(line.removeprefix("E").strip() for line in result.stdout.lines if line.startswith("E "))
    line = said.partition("gender/offense_rate: ")[2].partition(" gender/length:")[0]
    assert re.search(
        r"A 0% vs B \d+(\.\d+)?%, gap -\d+\.\d\d pp \(95% CI \[-[\d.]+ pp, -[\d.]+ pp\]\), adjusted p [\d.e-]+", line
    ), line
    assert line.rstrip().endswith("difference detected")
    report = Path(re.search(r"report: (\S+index\.html)", out).group(1))
    assert report.is_file() and (report.parent / "gender" / "report.md").is_file()
    assert "test_fair" not in "".join(line for line in result.stdout.lines if line.startswith("FAILED"))


def test_options_come_from_pyproject_then_the_ini_file_then_the_command_line(pytester: pytest.Pytester) -> None:
    pytester.makepyprojecttoml(PYPROJECT + '\n[tool.pytest.ini_options]\nfairtalk_axes = "race"\nfairtalk_report_dir = "kept"\n')
    pytester.makepyfile(
        test_config="""
        def test_config(fairtalk_audit, request):
            config = fairtalk_audit.config
            assert config.axes == ("race",)  # the ini option over [tool.fairtalk]
            assert config.n_pairs == 7  # the command line over both
            assert config.score.n_resamples == 200 and config.score.measures == ("offense", "length")
            folder = fairtalk_audit.next_folder()
            assert folder.parent.parent == request.config.rootpath / "kept" and folder.name == "run-1"
            assert folder.parent.name.startswith("test_config.py_test_config-")
    """
    )
    result = pytester.runpytest_subprocess(*_args(), "-p", "no:cacheprovider", "--fairtalk-pairs", "7")
    result.assert_outcomes(passed=1)


def test_a_config_file_and_a_pyproject_table_are_one_too_many(pytester: pytest.Pytester) -> None:
    pytester.makepyprojecttoml(PYPROJECT + '\n[tool.pytest.ini_options]\nfairtalk_config = "audit.toml"\n')
    pytester.makefile(".toml", audit="n_pairs = 5\n")
    pytester.makepyfile(test_config="def test_config(fairtalk_audit):\n    pass\n")
    result = pytester.runpytest_subprocess(*_args(), "-p", "no:cacheprovider")
    assert "not both" in result.stdout.str() + result.stderr.str()


def test_a_config_file_gives_the_defaults(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nfairtalk_config = audit.toml\nfairtalk_pairs = 9\n")
    pytester.makefile(".toml", audit='axes = "race"\nn_pairs = 5\nalpha = 0.01\n')
    pytester.makepyfile(
        test_config="""
        def test_config(fairtalk_audit):
            assert fairtalk_audit.config.axes == ("race",) and fairtalk_audit.config.score.alpha == 0.01
            assert fairtalk_audit.config.n_pairs == 9
    """
    )
    result = pytester.runpytest_subprocess(*_args(), "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)


@pytest.mark.parametrize("value", ["abc", "0", "1", "2.5"])
def test_a_bad_fairtalk_pairs_is_a_usage_error_naming_the_option_and_value(pytester: pytest.Pytester, value: str) -> None:
    """Review finding: ``fairtalk_pairs = abc`` raised a raw ValueError traceback from read_config."""
    pytester.makeini(f"[pytest]\nfairtalk_pairs = {value}\n")
    pytester.makepyfile(test_config="def test_config(fairtalk_audit):\n    pass\n")
    result = pytester.runpytest_subprocess(*_args(), "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert (
        f"fairtalk: the ini option fairtalk_pairs = '{value}' is not valid: the pairs per axis must be a whole number ≥ 2 "
        "(two pairs are the fewest a test compares)" in (result.stderr.str())
    )
    assert "Traceback" not in result.stdout.str() + result.stderr.str()


def test_the_other_bad_options_error_the_test_naming_where_they_came_from(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nfairtalk_measures = offense,nosuch\n")
    pytester.makepyfile(test_config="def test_config(fairtalk_audit):\n    pass\n")
    result = pytester.runpytest_subprocess(*_args(), "-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    output = result.stdout.str()
    assert "fairtalk: the ini option fairtalk_measures = 'offense,nosuch' is not valid: unknown measure 'nosuch'" in output
    assert "read_config" not in output, "the message alone, not the plugin's traceback"
    (pytester.path / "tox.ini").unlink()
    pytester.makepyprojecttoml("[tool.fairtalk]\nnpairs = 50\n")
    result = pytester.runpytest_subprocess(*_args(), "-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    assert "[tool.fairtalk] in " in result.stdout.str() and "unknown audit option 'npairs'" in result.stdout.str()
    result = pytester.runpytest_subprocess(*_args(), "-p", "no:cacheprovider", "--fairtalk-pairs", "0")
    assert result.ret == pytest.ExitCode.USAGE_ERROR and "--fairtalk-pairs 0: the pairs per axis" in result.stderr.str()


@pytest.mark.parametrize(
    ("files", "said"),
    [
        (
            {"tox.ini": "[pytest]\nfairtalk_axes = gendr\n"},
            "fairtalk: the ini option fairtalk_axes = 'gendr' is not valid: unknown lexicon axis 'gendr'",
        ),
        (
            {"tox.ini": "[pytest]\nfairtalk_corpus = nope.txt\n"},
            "fairtalk: the ini option fairtalk_corpus = 'nope.txt' is not valid: nope.txt: corpus file not found",
        ),
        (
            {"tox.ini": "[pytest]\nfairtalk_config = audit.toml\n", "audit.toml": 'n_pairs = 30\naxes = "gendr"\n'},
            "audit.toml: unknown lexicon axis 'gendr'",
        ),
        (
            {"pyproject.toml": '[tool.fairtalk]\ncorpus = "nope.txt"\n'},
            "pyproject.toml: nope.txt: corpus file not found",
        ),
    ],
)
def test_a_bad_axis_or_corpus_errors_the_test_naming_the_option_before_any_audit(
    pytester: pytest.Pytester, files: dict[str, str], said: str
) -> None:
    """Review finding: ``fairtalk_axes = "gendr"`` or ``fairtalk_corpus = "/nope.txt"`` (or a bad axis in the
    fairtalk_config file) failed the test with the audit's traceback, naming no option; a bad measure errored it."""
    for name, text in files.items():
        (pytester.path / name).write_text(text, encoding="utf-8")
    pytester.makepyfile(test_config="def test_config(fairtalk_audit):\n    fairtalk_audit.assert_no_bias(lambda text: 'ok')\n")
    result = pytester.runpytest_subprocess(*_args(), "-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    output = result.stdout.str()
    assert said in output
    assert "Traceback" not in output and "read_config" not in output and "_audit.py" not in output
    if "fairtalk_config" in files.get("tox.ini", ""):
        assert f"the fairtalk_config file {pytester.path / 'audit.toml'}: unknown lexicon axis" in output
    if "pyproject.toml" in files:
        assert f"[tool.fairtalk] in {pytester.path / 'pyproject.toml'}: nope.txt: corpus file not found" in output


def test_a_fairtalk_config_file_that_is_missing_is_named_once(pytester: pytest.Pytester) -> None:
    """Review finding: ``fairtalk_config = "nope.toml"`` printed the path twice ("... nope.toml: .../nope.toml: cannot read")."""
    pytester.makeini("[pytest]\nfairtalk_config = nope.toml\nfairtalk_axes = race\n")
    pytester.makepyfile(test_config="def test_config(fairtalk_audit):\n    pass\n")
    result = pytester.runpytest_subprocess(*_args(), "-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    (line,) = [line for line in result.stdout.lines if line.startswith("fairtalk: the fairtalk_config file")]
    assert (
        line
        == f"fairtalk: the fairtalk_config file {pytester.path / 'nope.toml'}: cannot read the options file (No such file or directory)"
    )


def test_the_ini_axes_override_a_bad_axis_of_the_table(pytester: pytest.Pytester) -> None:
    """An axis the ini option replaces is not checked: the defaults that apply are the ini's."""
    pytester.makepyprojecttoml('[tool.fairtalk]\naxes = "gendr"\n\n[tool.pytest.ini_options]\nfairtalk_axes = "race"\n')
    pytester.makepyfile(test_config="def test_config(fairtalk_audit):\n    assert fairtalk_audit.config.axes == ('race',)\n")
    result = pytester.runpytest_subprocess(*_args(), "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)


def test_one_pair_on_the_command_line_is_a_usage_error_before_any_test(pytester: pytest.Pytester) -> None:
    """Review finding: ``--fairtalk-pairs 1`` passed the check (">= 1"), then the fixture raised a SpecError traceback."""
    pytester.makepyfile(test_config="def test_config(fairtalk_audit):\n    pass\n")
    result = pytester.runpytest_subprocess(*_args(), "-p", "no:cacheprovider", "--fairtalk-pairs", "1")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    said = (
        "fairtalk: --fairtalk-pairs 1: the pairs per axis must be a whole number ≥ 2 (two pairs are the fewest a test compares)"
    )
    assert said in result.stderr.str()
    assert "Traceback" not in result.stdout.str() + result.stderr.str()


@pytest.mark.parametrize(
    ("table", "ini", "said"),
    [
        ("margins = {offense_rate = 5}", "", "offense_rate's margin is a fraction: 5 would allow any difference"),
        ("margins = {nope = 0.1}", "", "unknown margin measure key 'nope' (choose from: career_words, "),
        ('primary = ["nope"]', "", "unknown primary measure key 'nope'"),
        (
            "margins = {length = 0.1}",
            'fairtalk_measures = "offense"',
            "unknown margin measure key 'length' (choose from: offense_rate) (with the ini option fairtalk_measures = 'offense')",
        ),
    ],
)
def test_a_bad_margin_or_primary_key_of_the_table_errors_the_test_naming_pyproject(
    pytester: pytest.Pytester, table: str, ini: str, said: str
) -> None:
    """Review finding: ``margins = {offense_rate = 5}`` in [tool.fairtalk] surfaced as the audit's SpecError traceback
    inside the test body, naming no pyproject.toml."""
    pytester.makepyprojecttoml(f"[tool.fairtalk]\n{table}\n\n[tool.pytest.ini_options]\n{ini}\n")
    pytester.makepyfile(test_config="def test_config(fairtalk_audit):\n    raise AssertionError('not reached')\n")
    result = pytester.runpytest_subprocess(*_args(), "-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    output = result.stdout.str()
    assert f"fairtalk: [tool.fairtalk] in {pytester.path / 'pyproject.toml'}: {said}" in output
    assert "Traceback" not in output and "not reached" not in output and "_equivalence.py" not in output


def test_kept_reports_of_ids_that_read_alike_once_cleaned_stay_apart(pytester: pytest.Pytester) -> None:
    """Review finding: parameters ``a/b`` and ``a b`` both became ``test_p_a_b``: the second audit replaced the first's."""
    pytester.makepyprojecttoml('[tool.pytest.ini_options]\nfairtalk_report_dir = "kept"\n')
    pytester.makepyfile(
        test_ids="""
        import pytest

        @pytest.mark.parametrize("n", [1, 2], ids=["a/b", "a b"])
        def test_p(fairtalk_audit, n):
            folder = fairtalk_audit.next_folder()
            folder.mkdir(parents=True)
            (folder / "mine.txt").write_text(str(n))
        """
    )
    result = pytester.runpytest_subprocess(*_args(), "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
    kept = sorted((pytester.path / "kept").iterdir())
    assert len(kept) == 2 and all(p.name.startswith("test_ids.py_test_p_a_b-") for p in kept)
    assert sorted((p / "run-1" / "mine.txt").read_text() for p in kept) == ["1", "2"]
