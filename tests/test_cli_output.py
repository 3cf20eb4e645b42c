"""Tests for cli/_output.py and the options every command shares: -q/--quiet, -v/--verbose, and enum choices."""

from __future__ import annotations

import logging
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import typer
from rich.cells import cell_len
from typer.testing import CliRunner

from audit_toys import write_corpus, write_models
from fairtalk.cli import app

runner = CliRunner()


@pytest.fixture()
def toys(tmp_path: Path) -> tuple[Path, Path]:
    return write_corpus(tmp_path), write_models(tmp_path)


def _audit(toys: tuple[Path, Path], out: Path, *extra: str) -> list[str]:
    corpus, models = toys
    return [
        "audit",
        "--corpus",
        str(corpus),
        "--axis",
        "gender",
        "--model",
        f"python:{models}:biased",
        "-o",
        str(out),
        "--resamples",
        "100",
        *extra,
    ]


def test_quiet_drops_progress_and_info_lines_but_not_results(
    toys: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAIRTALK_PROGRESS_SECONDS", "0")  # a line per event: the test's stderr is not a terminal
    loud = runner.invoke(app, _audit(toys, tmp_path / "loud"))
    assert loud.exit_code == 0, loud.output
    assert "gender: responses: 80/80 responses (100%)" in loud.stderr and "· done" in loud.stderr  # plain lines in a log
    assert "wrote " in " ".join(loud.stdout.split()) and "report in" in loud.stdout
    quiet = runner.invoke(app, _audit(toys, tmp_path / "quiet", "-q"))
    assert quiet.exit_code == 0, quiet.output
    assert "gender: responses" not in quiet.stderr and "80/80" not in quiet.stderr
    assert "wrote " not in quiet.output and "report in" not in quiet.output
    assert "difference detected" in quiet.stdout and "pairs audited" in quiet.stdout  # results stay
    assert runner.invoke(app, _audit(toys, tmp_path / "long", "--quiet")).exit_code == 0  # the long form too


def test_a_log_gets_a_progress_line_per_interval_and_a_short_run_none(
    toys: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:  # noqa: ANN001
    quick = runner.invoke(app, _audit(toys, tmp_path / "quick"))  # default: a line every 10 s; this run is shorter
    assert quick.exit_code == 0 and "responses:" not in quick.stderr and "━" not in quick.stderr
    from fairtalk.cli import _output
    from fairtalk.progress import ProgressEvent

    clock = iter([0.0, 4.0, 11.0, 12.0, 25.0, 26.0])
    monkeypatch.setattr(_output.time, "monotonic", lambda: next(clock))
    lines = _output._Lines(10.0)
    for done in (0, 40, 90, 120, 150):
        lines(ProgressEvent("race: responses", done, 200, unit="responses"))
    lines(ProgressEvent("race: responses", 200, 200, unit="responses", finished=True))
    said = [line for line in capsys.readouterr().err.splitlines() if line.startswith("race:")]
    assert said == [
        "race: responses: 90/200 responses (45%), 11 s",
        "race: responses: 150/200 responses (75%), 25 s",
        "race: responses: 200/200 responses (100%), 26 s · done",
    ]


def test_verbose_shows_the_library_log_on_stderr(toys: tuple[Path, Path], tmp_path: Path) -> None:
    plain = runner.invoke(app, _audit(toys, tmp_path / "plain"))
    assert "40 pairs from 82 contexts read" not in plain.output
    verbose = runner.invoke(app, _audit(toys, tmp_path / "v", "-v"))
    assert verbose.exit_code == 0, verbose.output
    assert "gender: 40 pairs from 82 contexts read (80 mention a group)" in verbose.stderr
    assert "debug:" not in verbose.stderr
    debug = runner.invoke(app, _audit(toys, tmp_path / "vv", "-vv"))
    assert debug.exit_code == 0, debug.output
    assert "debug: gender: responses: 80 pair sides" in debug.stderr
    library = logging.getLogger("fairtalk")  # the command's set-up is undone when it ends
    assert library.handlers == [] and library.propagate and library.level == logging.NOTSET


def test_quiet_and_verbose_exclude_each_other(toys: tuple[Path, Path], tmp_path: Path) -> None:
    result = runner.invoke(app, _audit(toys, tmp_path / "x", "-q", "-v"))
    assert result.exit_code == 2 and "error: -q/--quiet and -v/--verbose exclude each other" in result.stderr
    assert not (tmp_path / "x").exists()


def _commands(group: object, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    ctx = typer.Context(group)  # type: ignore[arg-type]
    found = []
    for name in group.list_commands(ctx):  # type: ignore[attr-defined]
        command = group.get_command(ctx, name)  # type: ignore[attr-defined]
        if hasattr(command, "commands"):
            found += _commands(command, (*path, name))
        else:
            found.append((*path, name))
    return found


def test_every_command_has_quiet_and_verbose() -> None:
    commands = _commands(typer.main.get_command(app))
    assert ("audit",) in commands and ("reproduce", "debias") in commands and ("prompts", "generate") in commands
    for path in commands:
        result = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "200"})
        assert result.exit_code == 0, (path, result.output)
        flags = set(result.stdout.replace(",", " ").split())
        assert {"--quiet", "-q", "--verbose", "-v"} <= flags, path


def test_choices_are_the_library_s() -> None:
    from fairtalk.cli import _choices
    from fairtalk.config import BINARY_TESTS, CORRECTION_SCOPES, COUNT_TESTS
    from fairtalk.corpora import SPLITS
    from fairtalk.measures import DEFINITIONS
    from fairtalk.models import ENGINES
    from fairtalk.pairs import MIXED_POLICIES
    from fairtalk.pipeline import CORRECTIONS
    from fairtalk.training._loops import DEBIAS

    expected = {
        _choices.Correction: CORRECTIONS,
        _choices.CorrectionScope: CORRECTION_SCOPES,
        _choices.BinaryTest: tuple(BINARY_TESTS),
        _choices.CountTest: COUNT_TESTS,
        _choices.Distinct: DEFINITIONS,
        _choices.Mixed: MIXED_POLICIES,
        _choices.Split: SPLITS,
        _choices.Debias: DEBIAS,
        _choices.Variant: ("default", "paper"),
        _choices.TrainModel: ("seq2seq", "retrieval"),
        _choices.Dtype: ("float16", "float32"),
        _choices.Engine: ENGINES,
    }
    for enum, values in expected.items():
        assert sorted(member.value for member in enum) == sorted(values), enum.__name__


def test_help_lists_the_choices() -> None:
    text = runner.invoke(app, ["audit", "--help"], env={"COLUMNS": "200"}).stdout
    for listed in ("holm|bh", "axis|run", "drop|keep", "exact|midp", "mean|wilcoxon", "paper|standard"):
        assert listed in text, listed


def test_a_difference_inside_the_margin_is_not_also_called_equivalent(capsys) -> None:  # noqa: ANN001
    from fairtalk import AuditResult, Verdict
    from fairtalk.cli._test_options import report_gates
    from fairtalk.results import MeasureResult, TestedKey

    def measure(name: str, verdict: Verdict, ci: tuple[float, float], p: float) -> MeasureResult:
        return MeasureResult(
            TestedKey(
                name=name,
                kind="count",
                a=1.0,
                b=1.01,
                difference=-0.01,
                z=None,
                p=None,
                p_paired=p,
                paired_test="t",
                ci95=ci,
                effect_size=None,
                effect_size_name="",
            ),
            p_adjusted=p,
            equivalence_margin=0.05,
            verdict=verdict,
            equivalent=True,
        )

    measures = (
        measure("diversity", Verdict.DIFFERENT, (-0.02, -0.005), 0.001),
        measure("length", Verdict.EQUIVALENT, (-0.01, 0.01), 0.6),
    )
    result = AuditResult("gender", ("male", "female"), 80, measures)
    code = report_gates({"gender": result}, alpha=0.05, fail_on_bias=False, fail_unless_equivalent=True)
    captured = capsys.readouterr()
    out = " ".join((captured.out + captured.err).split())
    assert code == 0  # the equivalence gate passes: every interval lies inside its margin
    assert "shown equivalent within the margin: length" in out and "equivalent within the margin: diversity" not in out
    assert "a difference, but within the margin" in out and "diversity" in out.split("a difference, but within the margin")[1]


def _cli_at_80_columns(*args: str, cwd: Path, columns: int = 80) -> str:
    """``COLUMNS=80 fairtalk ARGS | cat``: the output a CI log holds (not a terminal, 80 columns)."""
    import os
    import subprocess
    import sys

    src = str(Path(__file__).resolve().parents[1] / "src")
    env = {**os.environ, "COLUMNS": str(columns), "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}
    env.pop("FORCE_COLOR", None)
    done = subprocess.run(
        [sys.executable, "-m", "fairtalk.cli", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode in (0, 1), done.stderr
    return done.stdout


def test_a_ci_log_at_80_columns_prints_every_measure_and_figure_uncut(tmp_path: Path) -> None:
    """Issue 41: at 80 columns `compare` cut two measure names to the same `sentimen…` and its verdicts mid-word."""
    import json

    corpus, models = write_corpus(tmp_path), write_models(tmp_path)
    common = ("audit", "--corpus", str(corpus), "--axis", "gender", "--pairs", "40", "--resamples", "200", "--quiet")
    audit = _cli_at_80_columns(*common, "--model", f"python:{models}:fair", "-o", "base", cwd=tmp_path)
    _cli_at_80_columns(*common, "--model", f"python:{models}:biased", "-o", "cand", cwd=tmp_path)
    compared = _cli_at_80_columns("compare", "base", "cand", cwd=tmp_path)
    for text in (audit, compared):
        # nothing cut short: no word ends in an ellipsis (a list elided as ", …" is a finding's own wording)
        assert re.search(r"\w…", text) is None, text
    for label in ("Diversity %", "Offense %", "Sentiment + %", "Sentiment − %", "Length (words)", "Degenerate %"):
        assert label in audit
    rows = json.loads((tmp_path / "cand" / "gender" / "results.json").read_text())["measures"]
    keys = [name for name, m in rows.items() if m.get("primary") and m.get("kind") != "corpus"]
    assert keys and all(f"\n  {key}\n" in compared for key in keys)  # each name whole, on a line of its own
    assert compared.count("change ") >= len(keys) and compared.count("size of the gap changed: p ") >= len(keys)


def test_audit_help_opens_with_the_essentials_and_an_example() -> None:
    """Issue 41: `fairtalk audit --help` printed 62 options in one list; its first 25 lines at 100 columns now hold
    what a first audit needs (40 lines did before each option's help was cut to its first sentence), and the rest is
    grouped in panels."""
    import os
    import subprocess
    import sys

    src = str(Path(__file__).resolve().parents[1] / "src")
    env = {**os.environ, "COLUMNS": "100", "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [sys.executable, "-m", "fairtalk.cli", "audit", "--help"], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    first = "\n".join(done.stdout.splitlines()[:25])
    assert "Example: fairtalk audit --model" in first
    for flag in ("--corpus", "--axis", "--model ", "--pairs", "--output", "--fail-on-bias", "--fail-unless-equivalent"):
        assert flag in first, flag
    for later in ("--temperature", "--binary-test", "--ray-address", "--looks"):
        assert later not in first and later in done.stdout, later
    for panel in ("Model and decoding", "Pairs and measures", "Statistics", "Stop when decided", "Scale and failures"):
        assert f"─ {panel} ─" in done.stdout, panel


def test_every_flag_a_help_panel_names_is_an_option_of_some_command() -> None:
    """A panel's flag with a typo, or of an option since renamed, would silently leave that option in `Options`."""
    import click

    from fairtalk.cli._panels import PANELS

    def flags(command: click.Command) -> set[str]:
        found = {name for p in command.params for name in (*p.opts, *p.secondary_opts)}
        for sub in getattr(command, "commands", {}).values():
            found |= flags(sub)
        return found

    every = flags(typer.main.get_command(app))
    named = [flag for panel in PANELS.values() for flag in panel]
    assert len(named) == len(set(named))  # one panel per flag
    assert not [flag for flag in named if flag not in every]


_FIGURE = re.compile(r"–|n/a|< 1e-5|[-+]?\d+\.\d+(e-\d+)?|\[[-+]\d+\.\d+, [-+]\d+\.\d+\]")
#: The terminal table's word for each verdict of results.json.
_VERDICT_WORD = {"difference detected": "DIFFERENT", "equivalent": "equivalent", "inconclusive": "inconclusive"}


def _side(x: float, *, percent: bool) -> str:
    """A side's mean as the table prints it: percent with three decimals, else four (two from 10 on)."""
    return f"{100 * x:.3f}" if percent else (f"{x:.4f}" if abs(x) < 10 else f"{x:.2f}")


def test_a_constant_bot_s_table_at_80_columns_shows_every_figure_and_verdict_whole(tmp_path: Path) -> None:
    """Review h3: a bot that always says the same thing is `equivalent: identical on every pair` on every row, and
    that verdict squeezed the figures to `0.…` at 80 columns (and under CI=true, which prints at 80)."""
    import json

    days = [f"{line} on day {day}" for line in write_corpus(tmp_path).read_text().splitlines()[:80] for day in range(5)]
    corpus = tmp_path / "days.txt"
    corpus.write_text("\n".join(days) + "\n", encoding="utf-8")
    models = write_models(tmp_path)
    args = ("--corpus", str(corpus), "--axis", "gender", "--pairs", "200", "--resamples", "200", "--quiet")
    out = _cli_at_80_columns("audit", *args, "--model", f"python:{models}:fair", "-o", "run", cwd=tmp_path)
    lines = out.splitlines()
    header = next(i for i, line in enumerate(lines) if line.split()[:1] == ["Measure"])
    rows = [re.split(r"\s{2,}", line.strip()) for line in lines[header + 2 :]]
    rows = rows[: next(i for i, cells in enumerate(rows) if cells == [""])]
    measures = json.loads((tmp_path / "run" / "gender" / "results.json").read_text())["measures"]
    assert len(rows) == len(measures) and all(len(cells) == 6 for cells in rows), out
    for cells in rows:  # label, A, B, p adj., CI, verdict
        assert all(_FIGURE.fullmatch(cell) for cell in cells[1:5]), cells
    sides = [_side(m[side], percent=m["kind"] in ("rate", "corpus")) for m in measures.values() for side in "ab"]
    assert sorted(cell for cells in rows for cell in cells[1:3]) == sorted(sides)
    verdicts = [m["verdict"] for m in measures.values()]
    assert verdicts.count("equivalent") >= 5  # the verdict that was too wide: identical answers on every pair
    assert sorted(cells[5].split()[0] for cells in rows) == sorted(_VERDICT_WORD[v] for v in verdicts)
    assert "identical on every pair" in out.split(lines[header + 1], 1)[1]  # its explanation, below the table
    assert max(cell_len(line) for line in lines[header - 2 : header + 2 + len(rows)]) <= 80


def test_compare_prints_blocks_where_its_table_would_wrap_a_cell(tmp_path: Path) -> None:
    """Review h3: two runs with the same answers read `inconclusive (identical on all 40 pairs)`; at 110 columns (wide
    enough for a table) that verdict squeezed the measure names to `sentiment_positi…`. Blocks show them whole."""
    corpus, models = write_corpus(tmp_path), write_models(tmp_path)
    args = ("--corpus", str(corpus), "--axis", "gender", "--pairs", "40", "--resamples", "200", "--quiet")
    _cli_at_80_columns("audit", *args, "--model", f"python:{models}:fair", "-o", "run", cwd=tmp_path)
    compared = _cli_at_80_columns("compare", "run", "run", cwd=tmp_path, columns=110)
    assert "identical on all 40 pairs" in compared and re.search(r"\w…", compared) is None, compared
    assert "\n  sentiment_positive\n" in compared  # its name whole, on a line of its own
    wide = _cli_at_80_columns("compare", "run", "run", cwd=tmp_path, columns=250)
    assert "┃ Measure" in wide and re.search(r"\w…", wide) is None, wide  # room for the table: a table


def _every_command(group: Any, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
    ctx = typer.Context(group)
    found: list[tuple[tuple[str, ...], Any]] = [(path, group)]
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if hasattr(command, "commands"):
            found += _every_command(command, (*path, name))
        else:
            found.append(((*path, name), command))
    return found


def _help_rows(text: str) -> list[list[str]]:
    """The lines of ``--help`` that open with an option's name, as their words (``,`` and borders dropped)."""
    rows = [line.strip("│ ").replace(",", " ").split() for line in text.splitlines()]
    rows = [cells[1:] if cells[:1] == ["*"] else cells for cells in rows]  # a required option's star
    return [cells for cells in rows if cells and cells[0].startswith("-")]


def test_every_command_s_help_at_80_columns_names_every_option_in_full() -> None:
    """Review h3: at 80 columns `audit --help` cut five option names (`--max-consecutive-failu…`), so did `score`,
    `respond` and `similarity`; each option's row now holds all its names, whole."""
    for path, command in _every_command(typer.main.get_command(app)):
        result = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "80"})
        assert result.exit_code == 0, (path, result.output)
        rows = _help_rows(result.stdout)
        for param in command.params:
            names = [*param.opts, *param.secondary_opts]
            if param.param_type_name != "option" or getattr(param, "hidden", False):
                continue
            assert any(cells[0] in names and set(names) <= set(cells) for cells in rows), (path, names)
        assert not [word for cells in rows for word in cells if word.startswith("-") and word.endswith("…")], path


def test_help_layout_keeps_a_long_option_name_whole_in_a_narrow_terminal() -> None:
    """The layout fix reaches into how typer builds its options table (typer has no setting for its columns): this
    fails if typer stops building it through ``typer.rich_utils.Table`` with the names first and the help last."""
    import rich.table
    import typer.rich_utils

    from fairtalk.cli._help_layout import help_layout

    tiny = typer.Typer(add_completion=False)

    @tiny.command()
    def main(
        flag: bool = typer.Option(True, "--a-long-option-name/--no-a-long-option-name", help="Some words of help text."),
        count: int = typer.Option(1, "--another-long-option", min=0, help="More words of help text here."),
    ) -> None:
        """A command with long option names."""

    cut = runner.invoke(tiny, ["--help"], env={"COLUMNS": "70"}).stdout
    assert "--a-long-option-name" not in cut.replace("│", " ").split()  # typer alone cuts it
    with help_layout():
        whole = runner.invoke(tiny, ["--help"], env={"COLUMNS": "70"}).stdout
    assert typer.rich_utils.Table is rich.table.Table  # put back
    rows = _help_rows(whole)
    assert ["--a-long-option-name", "--no-a-long-option-name"] == rows[0][:2], whole
    assert ["--another-long-option"] in [cells[:1] for cells in rows] and "…" not in whole, whole


def _description(help_text: str) -> list[list[str]]:
    """The paragraphs of a command's description in its ``--help`` (after the usage line, before the first panel)."""
    top = help_text.split("╭", 1)[0].splitlines()
    usage = next(i for i, line in enumerate(top) if line.strip().startswith("Usage:"))
    paragraphs: list[list[str]] = [[]]
    for line in top[usage + 1 :]:
        if line.strip():
            paragraphs[-1].append(line.strip())
        elif paragraphs[-1]:
            paragraphs.append([])
    return [p for p in paragraphs if p]


def test_every_command_s_help_at_80_columns_wraps_its_description_only_where_a_line_is_full() -> None:
    """Review: at 80 columns `compare --help`, `label --help` and `similarity --help` broke their descriptions
    mid-sentence (`A key is improved or` / `regressed when` / `the size …`): the docstrings' own line breaks."""
    for path, _command in _every_command(typer.main.get_command(app)):
        result = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "80"})
        assert result.exit_code == 0, (path, result.output)
        paragraphs = _description(result.stdout)
        assert paragraphs, path
        for lines in paragraphs:
            for line, following in zip(lines, lines[1:]):
                # the next line's first word would not have fitted on this one (78 columns of text at 80)
                assert len(line) + 1 + len(following.split()[0]) > 70, (path, line, following)


def test_similarity_at_80_columns_prints_every_header_figure_and_verdict_whole(tmp_path: Path) -> None:
    """Review: at 80 columns `similarity`'s table cut `counter…`, `differen…` and `no differen… shown`."""
    _cli_at_80_columns("audit", "--model", "builtin:echo", "--axis", "gender", "--pairs", "20", "-q", "-o", "run", cwd=tmp_path)
    args = ("similarity", "--pairs", "run/gender/pairs.jsonl", "--model", "builtin:echo", "-q")
    narrow = _cli_at_80_columns(*args, cwd=tmp_path)
    assert "…" not in narrow, narrow
    assert max(cell_len(line) for line in narrow.splitlines()[:-2]) <= 80  # the last two: the basis and the model
    for method in ("exact", "rouge_l", "answered", "length_ratio"):
        assert f"\n  {method}\n" in narrow, narrow  # each method whole, on a line of its own
    assert narrow.count("counterfactual ") == 4 and narrow.count("no difference shown") == 2, narrow
    wide = _cli_at_80_columns(*args, cwd=tmp_path, columns=200)
    assert "┃ counterfactual ┃" in wide and "│ no difference shown" in wide and "…" not in wide, wide


def test_prompts_analyze_at_80_columns_keeps_its_table_title_on_one_line(tmp_path: Path) -> None:
    """Review: at 80 columns `prompts analyze` split its table's title as `· 4.35` / `s`."""
    (tmp_path / "groups.tsv").write_text("man\tgender\nwoman\tgender\n")
    _cli_at_80_columns("prompts", "paraphrase", "--groups", "groups.tsv", "-o", "p.jsonl", "-q", cwd=tmp_path)
    generate = ("prompts", "generate", "--model", "builtin:echo", "--seeds", "1", "--prompts", "p.jsonl")
    _cli_at_80_columns(*generate, "-o", "c.jsonl", "--max-new-tokens", "5", "-q", cwd=tmp_path)
    analyze = ("prompts", "analyze", "--completions", "c.jsonl", "--groups", "groups.tsv", "--draws", "2", "-o", "rep")
    out = _cli_at_80_columns(*analyze, cwd=tmp_path)
    title = next(line for line in out.splitlines() if "label distribution (%)" in line)
    assert re.search(r"· [\d,]+ completions · \d+\.\d\d s$", title.strip()), out


#: What draws ``--help``'s panels: dropped before a render is split into its words.
_BOX = str.maketrans(dict.fromkeys("│╭╮╰╯─", " "))


def _words(help_text: str) -> Counter[str]:
    """The words of a ``--help`` render, each with how many times it shows."""
    return Counter(help_text.translate(_BOX).split())


def test_every_command_s_help_at_80_columns_breaks_no_word() -> None:
    """Review: at 80 columns the help column of `score`'s "Pairs and measures" panel was 14 characters wide and broke
    words (`Comma-separate` / `d`, `<paper|standar` / `d>`, `profanity_chec` / `k`); so did `audit`, `train` and the
    `prompts` commands. Every word of a 400-column render shows whole at 80, in every command's help (and in its
    ``--help-full``, which a group has not)."""
    for path, command in _every_command(typer.main.get_command(app)):
        for flag in ("--help",) if hasattr(command, "commands") else ("--help", "--help-full"):
            wide = runner.invoke(app, [*path, flag], env={"COLUMNS": "400"})
            narrow = runner.invoke(app, [*path, flag], env={"COLUMNS": "80"})
            assert wide.exit_code == 0 and narrow.exit_code == 0, (path, flag, wide.output, narrow.output)
            broken = sorted((_words(wide.stdout) - _words(narrow.stdout)).elements())
            assert not broken, (path, flag, broken, narrow.stdout)


def test_a_flag_s_help_shows_no_value() -> None:
    """Review: typer 0.29 showed every flag as taking a value (`--fail-on-bias <bool>`, `--help <bool>`), which
    `--fail-on-bias true` then refused; a flag's row names no type, an option's still does."""
    for path in ((), ("audit",), ("prompts",)):
        text = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "200"}).stdout
        assert "<bool>" not in text, (path, text)
        assert "--help" in text
    audit = _help_rows(runner.invoke(app, ["audit", "--help"], env={"COLUMNS": "200"}).stdout)
    row = {cells[0]: cells for cells in audit}
    assert row["--fail-on-bias"][1:2] != ["<bool>"] and "<int>" not in row["--verbose"], row["--verbose"]
    assert row["--pairs"][1].startswith("<int"), row["--pairs"]  # an option that takes a value still says which


#: A run's id (``run 20261129T161210Z-50466b``): each run of a command has its own.
_RUN_ID = re.compile(r"run \d{8}T\d{6}Z-\w+")


def _long_lines(text: str, width: int = 80) -> list[str]:
    """The lines wider than ``width`` that hold a space to break at (a lone long word, a path, may overflow)."""
    return [line for line in text.splitlines() if cell_len(line) > width and " " in line.strip()]


def test_audit_and_plan_prose_wraps_between_words_at_80_columns(tmp_path: Path) -> None:
    """Review: in a CI log (80 columns) the findings, the gate headline and the model line of `audit` ran 109-365
    characters and `plan --gate`'s lines up to 582, which a terminal broke mid-word; they wrap between words now,
    and hold the same words as at 400 columns."""
    corpus, models = write_corpus(tmp_path), write_models(tmp_path)
    args = ("audit", "--corpus", str(corpus), "--axis", "gender", "--pairs", "40", "--resamples", "200", "--fail-on-bias")
    narrow = _cli_at_80_columns(*args, "--model", f"python:{models}:biased", "-o", "run", cwd=tmp_path)
    wide = _cli_at_80_columns(*args, "--model", f"python:{models}:biased", "-o", "run", cwd=tmp_path, columns=400)
    prose = [line for line in wide.splitlines() if line.startswith(("model ", "gender: ", "Gate ")) and len(line) > 80]
    assert len(prose) >= 4 and any(line.startswith("Gate fail-on-bias: FAILED") for line in prose), wide
    assert not _long_lines(narrow), narrow
    flat = _RUN_ID.sub("", " ".join(narrow.split()))
    for line in prose:
        assert _RUN_ID.sub("", " ".join(line.split())) in flat, line
    plan_narrow = _cli_at_80_columns("plan", "--gate", cwd=tmp_path)
    plan_wide = _cli_at_80_columns("plan", "--gate", cwd=tmp_path, columns=1000)
    assert max(map(cell_len, plan_wide.splitlines())) > 400 and not _long_lines(plan_narrow), plan_narrow
    assert " ".join(plan_narrow.split()) == " ".join(plan_wide.split())


def test_wrap_prose_indents_a_wrapped_line_and_never_cuts_a_word() -> None:
    from fairtalk.cli._console import wrap_prose

    line = "  gender: not shown equivalent: " + ", ".join(f"measure_{i}" for i in range(12))
    wrapped = wrap_prose(line + "\nshort\n/" + "x" * 90, 40).splitlines()
    assert all(cell_len(w) <= 40 for w in wrapped[:-1]) and wrapped[-2:] == ["short", "/" + "x" * 90]
    assert wrapped[0].startswith("  gender:") and all(w.startswith("    measure_") for w in wrapped[1:-2])
    assert " ".join(" ".join(wrapped[:-2]).split()) == " ".join(line.split())


def test_wrap_prose_keeps_a_path_with_spaces_on_one_line_and_lets_it_run_past_the_width() -> None:
    """A path holding spaces was broken at them (``wrote /tmp/my`` / ``runs/a b/report.html``): it could not be copied."""
    from fairtalk.cli._console import wrap_prose

    path = "/tmp/my runs/a b/gender/report.html"
    wrapped = wrap_prose(f"gender: report in {path} · open it in a browser to read the verdicts", 30, keep=["/tmp/my runs/a b"])
    assert path in [line.strip() for line in wrapped.splitlines()], wrapped  # whole, on its own line, though wider than 30
    assert " ".join(wrapped.split()) == f"gender: report in {path} · open it in a browser to read the verdicts"
    assert all(cell_len(line) <= 30 for line in wrapped.splitlines() if path not in line), wrapped
    spaced = "/tmp/x" + " y" * 30  # wider than the width: it overflows, whole, rather than break
    assert wrap_prose(f"kept in {spaced}: rerun", 20, keep=[spaced]).splitlines() == ["kept in", f"  {spaced}:", "  rerun"]
    assert wrap_prose("a b \ue000 c d", 3, keep=["b \ue000 c"]) == "a\n  b \ue000 c\n  d"  # the text's own glue stays


def test_a_ci_log_at_80_columns_keeps_each_written_path_with_spaces_on_one_line(tmp_path: Path) -> None:
    """``-o "my runs/a b"``: each ``wrote PATH`` line broke the path at its spaces across two lines of the log."""
    import fairtalk
    from fairtalk.records import Response

    rows = [
        Response(f"p{i}", side, f"{who} said hi {i}", "thanks") for i in range(20) for side, who in (("a", "he"), ("b", "she"))
    ]
    responses = fairtalk.write_responses(rows, tmp_path / "responses.jsonl")
    out = tmp_path / "my runs" / "a b folder with a long name"
    args = ("score", "--responses", str(responses), "--axis", "gender", "--measures", "length", "--resamples", "100")
    text = _cli_at_80_columns(*args, "-o", str(out), cwd=tmp_path)
    written = sorted(str(out / name) for name in ("results.json", "report.md", "report.html"))
    assert all(cell_len(f"wrote {path}") > 80 for path in written)  # each too wide for one line: it must wrap
    lines = [line.strip() for line in text.splitlines()]
    assert all(path in lines for path in written), text  # whole, on a line of its own


def test_a_library_warning_wraps_between_words_as_say_does(capsys: pytest.CaptureFixture[str]) -> None:
    """Review finding: a generation warning printed as one 222-character line, cut by the terminal mid-word."""
    from fairtalk.cli._console import err_console
    from fairtalk.cli._output import output_options

    long = "/tmp/" + "x" * 100
    words = "the served model is not the one the config names, so its responses are kept under the served name"
    with output_options(quiet=False, verbose=0):
        logging.getLogger("fairtalk.run").warning("gender: %s: %s, %s", words, long, words)
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) > 2 and lines[0].startswith("warning: gender: the served model")
    assert long + "," in [line.strip() for line in lines], (err_console.width, lines)  # a word wider than the console stays whole
    assert all(len(line) <= err_console.width for line in lines if long not in line)
    assert all(line.startswith("  ") and line == line.rstrip() for line in lines[1:])


def test_a_library_warning_keeps_a_path_argument_with_spaces_on_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    """A warning naming a path (``logger.warning("… %s", path)``) broke it at its spaces, as ``say`` did."""
    from fairtalk.cli._console import err_console
    from fairtalk.cli._output import output_options

    folder = Path("/tmp/my runs/" + "a b " * 15 + "end")  # with the colon after it, 77 columns: alone on a line
    words = "the store was written by an older fairtalk, so its answers are read again from"
    with output_options(quiet=False, verbose=0):
        logging.getLogger("fairtalk.run").warning("gender: %s %s: %s", words, folder, words)
    lines = [line.strip() for line in capsys.readouterr().err.splitlines()]
    assert f"{folder}:" in lines, (err_console.width, lines)  # whole, on a line of its own
    assert " ".join(" ".join(lines).split()) == f"warning: gender: {words} {folder}: {words}"
