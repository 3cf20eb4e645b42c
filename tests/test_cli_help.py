"""``--help`` shows each option's first sentence; ``--help-full`` and the docs' CLI reference show its whole help.

The brief's first complaint: a newcomer met a wall of options (``COLUMNS=80 fairtalk audit --help`` was 281 lines,
``--junit`` alone 20). Each option's help is declared once; ``--help`` shows its first sentence
(:func:`~fairtalk.cli._help_layout.short_help`), at most two lines at 80 columns (three where it lists an option's
choices, four for the axes), and ends naming ``--help-full``. A review of that cut found the choices gone from the
short helps (``--axis``, ``--methods``), first sentences wrong out of their context (``plan --power``), and groups
without ``--help-full``: the tests below the line-count one hold each.
"""

from __future__ import annotations

import html
import re
import sys
from pathlib import Path
from typing import Any

import pytest
import typer
import typer.main
from typer.testing import CliRunner

from fairtalk.cli import app
from fairtalk.cli._axes import AUDIT_AXES, AUDIT_AXIS_NAMES, AXES, AXIS_NAMES, WORD_AXES, axis_names_text, fill_axes
from fairtalk.cli._help_layout import HELP_FULL, help_layout, short_help

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[1]

#: The most lines ``COLUMNS=80 fairtalk audit --help`` may take (it took 281; about 140 now).
AUDIT_HELP_LINES = 150
#: The same for ``score`` (182 before, about 95 now).
SCORE_HELP_LINES = 105
#: The first line of an option's row in a ``--help`` panel: a required option's star, its names, then its help.
_ROW = re.compile(r"( ?\*? *)(-\S*(?: \S+)*)( {2,}|$)")
#: The notes typer adds after an option's help (not part of it).
_NOTE = re.compile(r"\[(default|required|env var)\b")
#: A short help listing an option's choices (``…: exact, rouge_l, cosine, …``): it may take a third line.
_LISTS_CHOICES = re.compile(r"[\w:.-]+(?:, [\w:.-]+){3,}")
#: A short help ending on a reference to text it no longer holds ("…by these methods.", "…the following:").
_DANGLING = re.compile(r"(\bthese \w+|\bthe following|\bbelow|\babove|:)\.?$")
#: The placeholders an option's help names the axes with.
_AXIS_PLACEHOLDERS = (AXES, AUDIT_AXES, WORD_AXES, AXIS_NAMES, AUDIT_AXIS_NAMES)


def _groups(group: Any, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """The path of every command group of the app, the app's own (``()``) first."""
    ctx = typer.Context(group)
    found = [path]
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if hasattr(command, "commands"):
            found += _groups(command, (*path, name))
    return found


def _commands(group: Any, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
    """Every leaf command of the app, with its path (``("prompts", "generate")``)."""
    ctx = typer.Context(group)
    found: list[tuple[tuple[str, ...], Any]] = []
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if hasattr(command, "commands"):
            found += _commands(command, (*path, name))
        else:
            found.append(((*path, name), command))
    return found


COMMANDS = _commands(typer.main.get_command(app))


def _filled(text: str) -> str:
    """A declared help with the axes of the registry in place of its placeholders (as every render shows it)."""
    return fill_axes(text)


def _declared(command: Any) -> dict[str, str]:
    """Each shown option of ``command`` (by its first name) and its help as declared, placeholders filled."""
    return {
        next((name for name in param.opts if name.startswith("--")), param.opts[0]): _filled(param.help)
        for param in command.params
        if param.param_type_name == "option" and not param.hidden and param.help
    }


def _flat(text: str) -> str:
    """A render's words, its borders and line breaks taken out."""
    return " ".join(text.replace("│", " ").split())


def _help(path: tuple[str, ...], flag: str = "--help", columns: int = 80) -> str:
    result = runner.invoke(app, [*path, flag], env={"COLUMNS": str(columns)})
    assert result.exit_code == 0, (path, flag, result.output)
    return result.stdout


def _option_help_lines(text: str) -> dict[str, list[str]]:
    """Each option row of a ``--help`` render (by its first name): the lines of its help, typer's notes left out."""
    rows: dict[str, list[str]] = {}
    current: str | None = None
    column = 0
    for line in text.splitlines():
        if not line.startswith("│"):
            current = None
            continue
        inner = line[1:].rstrip("│").rstrip()
        row = _ROW.match(inner)
        if row is not None and len(row.group(1)) <= 4:  # names start a row; a value put below them is indented more
            current, column = row.group(2).split()[0], row.end()
            rows[current] = []
        if current is not None and (part := inner[column:].strip()) and not _NOTE.match(part):
            rows[current].append(part)
    return rows


def _most_lines(command: Any, name: str) -> int:
    """The lines ``name``'s short help may take at 80 columns: 2, 3 where it lists choices, 4 for the axes' names."""
    param = next((p for p in command.params if name in p.opts), None)
    if param is None:  # --help
        return 2
    if any(mark in (param.help or "") for mark in _AXIS_PLACEHOLDERS):
        return 4  # the axis registry's names (nine built in), which a plugin's axes lengthen
    return 3 if _LISTS_CHOICES.search(short_help(param.help or "")) else 2


def test_help_at_80_columns_gives_each_option_two_lines_at_most() -> None:
    """`audit --help` was 281 lines at 80 columns and `--junit`'s help 20 of them: each option now has two at most.

    An option whose short help lists its choices (``--methods``) may take three, the axes' names four.
    """
    for path, command in COMMANDS:
        text = _help(path)
        rows = _option_help_lines(text)
        assert set(_declared(command)) <= set(rows), (path, sorted(set(_declared(command)) - set(rows)))
        long = {name: lines for name, lines in rows.items() if len(lines) > _most_lines(command, name)}
        assert not long, (path, long)
        if path == ("audit",):
            assert len(text.splitlines()) <= AUDIT_HELP_LINES, text
        if path == ("score",):
            assert len(text.splitlines()) <= SCORE_HELP_LINES, text


def test_help_shows_each_option_s_first_sentence_and_says_how_to_get_the_rest() -> None:
    for path, command in COMMANDS:
        shown = _flat(_help(path, columns=400))
        declared = _declared(command)
        for name, text in declared.items():
            assert " ".join(short_help(text).split()) in shown, (path, name)
            if short_help(text) != text:
                assert " ".join(text.split()) not in shown, (path, name)
        if any(short_help(text) != text for text in declared.values()):
            assert shown.endswith(f"Each option's full help: fairtalk {' '.join(path)} {HELP_FULL}"), (path, shown[-200:])
    junit = _flat(_help(("audit",)))
    assert "Also write a JUnit XML file: one testsuite per axis, one testcase per measure." in junit
    assert "never an earlier run's pass" not in junit


@pytest.mark.parametrize("columns", [80, 400])
def test_help_full_shows_every_option_s_declared_help_whole(columns: int) -> None:
    for path, command in COMMANDS:
        text = _help(path, HELP_FULL, columns)
        rows = {name: " ".join(lines) for name, lines in _option_help_lines(text).items()}
        declared = _declared(command)
        assert set(declared) <= set(rows), (path, sorted(set(declared) - set(rows)))
        missing = [name for name, help_text in declared.items() if not rows[name].startswith(" ".join(help_text.split()))]
        assert not missing, (path, missing)
        assert "Each option's full help" not in text, path


def test_help_full_needs_no_required_option_and_does_not_run_the_command(tmp_path: Path) -> None:
    result = runner.invoke(app, ["similarity", HELP_FULL, "-o", str(tmp_path / "out.json")])
    assert result.exit_code == 0, result.output
    assert "Pairs JSONL" in result.stdout and not (tmp_path / "out.json").exists()


def test_each_short_help_is_a_whole_sentence() -> None:
    """The first sentence ends at the first full stop before a space, so it must hold none of its own (``etc. ``)."""
    for path, command in COMMANDS:
        for name, text in _declared(command).items():
            short = short_help(text)
            assert short == text or short.endswith("."), (path, name, short)
            for opening, closing in ("()", "[]", "{}"):
                assert short.count(opening) == short.count(closing), (path, name, short)
            assert short.count("`") % 2 == 0 and short.count('"') % 2 == 0, (path, name, short)


def test_short_help_cuts_at_the_first_sentence_end_only() -> None:
    assert short_help("One. Two.") == "One."
    assert short_help("A scale (e.g. 1-5) here. Rest.") == "A scale (e.g. 1-5) here."
    assert short_help("A file (i.e. FILE.jsonl) to read. Rest.") == "A file (i.e. FILE.jsonl) to read."
    assert short_help("No full stop at all") == "No full stop at all"
    assert short_help("A value of 0.5 or 1.0 here.") == "A value of 0.5 or 1.0 here."


def test_the_cli_reference_page_shows_every_option_s_whole_help() -> None:
    """The docs' generated CLI reference holds the full texts (and the axes of every placeholder, pool-filter's too)."""
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import mkdocs_hooks
    finally:
        sys.path.remove(str(ROOT / "tools"))
    page = _flat(html.unescape(mkdocs_hooks.cli_reference()))
    for placeholder in (AXES, AUDIT_AXES, WORD_AXES, AXIS_NAMES, AUDIT_AXIS_NAMES):
        assert placeholder not in page
    for path, command in COMMANDS:
        missing = [name for name, text in _declared(command).items() if " ".join(text.split()) not in page]
        assert not missing, (path, missing)


def test_a_default_goes_on_the_last_line_of_a_wrapped_help_where_it_fits() -> None:
    """typer put `[default: …]` on a line of its own under every help that wrapped: a line per option."""
    tiny = typer.Typer(add_completion=False)

    @tiny.command()
    def main(
        count: int = typer.Option(7, "--count", help="A help text long enough to wrap onto a second line at sixty."),
    ) -> None:
        """A command."""

    with help_layout():
        text = runner.invoke(tiny, ["--help"], env={"COLUMNS": "60"}).stdout
    rows = _option_help_lines(text)
    assert len(rows["--count"]) == 2 and rows["--count"][-1].endswith("[default: 7]"), text


def test_every_axis_option_s_short_help_names_the_axes() -> None:
    """The short help had cut `--axis` to "An axis or a lexicon file.", while docs/reference/axes.md says it lists them."""
    names = axis_names_text(bare=True).split(", ")
    assert {"gender", "race", "religion", "orientation", "age"} <= set(names)
    seen = 0
    for path, command in COMMANDS:
        shown = _flat(_help(path, columns=400))
        for param in command.params:
            if not any(mark in (param.help or "") for mark in _AXIS_PLACEHOLDERS):
                continue
            seen += 1
            short = short_help(fill_axes(param.help))
            missing = [name for name in names if name not in short]
            assert not missing, (path, param.opts, short)
            assert " ".join(short.split()) in shown, (path, param.opts)
    assert seen >= 9, seen  # pairs, swap, score, audit, augment, train, pool-filter, label, reproduce debias


@pytest.mark.parametrize(
    ("path", "option", "choices"),
    [
        (("similarity",), "--methods", "exact, rouge_l, cosine, answered, length_ratio"),
        (("audit",), "--similarity", "exact, rouge_l, cosine, answered, length_ratio"),
        (("label",), "--measure", "offense_rate, refusal_rate, degenerate_rate, sentiment, regard, NAME_yes, NAME_score:1-5"),
        (("pairs",), "--corpus", "FORMAT:PATH (text, tsv, csv, jsonl, parquet, twitter, parlai)"),
        (("audit",), "--corpus", "FORMAT:PATH (text, tsv, csv, jsonl, parquet, twitter, parlai)"),
        (("augment",), "--corpus", "FORMAT:PATH (jsonl, twitter, parlai)"),
    ],
)
def test_a_free_string_option_s_short_help_lists_its_choices(path: tuple[str, ...], option: str, choices: str) -> None:
    """Their choices were only in a later sentence, so `--help` showed "…by these methods." and no method."""
    rows = {name: " ".join(lines) for name, lines in _option_help_lines(_help(path, columns=400)).items()}
    assert choices in rows[option], (path, option, rows[option])
    if option == "--corpus" and path != ("augment",):  # the corpus formats fairtalk reads, every one named
        from fairtalk.corpora import corpus_formats

        assert set(corpus_formats()) - {"builtin"} == set(choices.split("(")[1].rstrip(")").split(", "))


def test_no_short_help_ends_on_a_reference_to_what_it_cut() -> None:
    found = []
    for path, command in COMMANDS:
        for name, text in _declared(command).items():
            short = short_help(text)
            if short != text and _DANGLING.search(short):
                found.append((path, name, short))
    assert not found, found
    assert _DANGLING.search("Also test answer divergence against a no-effect baseline, by these methods.")


def test_plan_s_alpha_and_power_say_what_they_are_in_a_plan() -> None:
    """plan reports no minimum detectable effect and, with --gate, tests equivalence: the shared first sentences misled."""
    rows = {name: " ".join(lines) for name, lines in _option_help_lines(_help(("plan",), columns=400)).items()}
    assert rows["--power"].startswith("Power planned for: of detecting --effect, or with --gate of showing equivalence.")
    assert rows["--alpha"].startswith("Significance level of the planned test (with --gate, the equivalence test).")
    assert "minimum detectable effect" not in rows["--power"] and "adjusted p-values" not in rows["--alpha"]
    score = {name: " ".join(lines) for name, lines in _option_help_lines(_help(("score",), columns=400)).items()}
    assert score["--power"].startswith("Power at which the minimum detectable effect is reported.")


@pytest.mark.parametrize("path", _groups(typer.main.get_command(app)))
def test_every_group_takes_help_full(path: tuple[str, ...]) -> None:
    """`fairtalk prompts --help-full` was "error: No such option: --help-full", exit 2, though the docs promise it."""
    result = runner.invoke(app, [*path, HELP_FULL], env={"COLUMNS": "80"})
    assert result.exit_code == 0, (path, result.output)
    assert "Commands" in result.stdout, result.stdout
    prog = " ".join(("fairtalk", *path))
    assert result.stdout.rstrip().endswith(f"Each command's full help: {prog} COMMAND {HELP_FULL}"), result.stdout[-300:]


def test_every_model_option_s_short_help_names_the_kinds_of_spec() -> None:
    """`audit --help` said "Model spec (default: the first built-in model that loads)": python:, openai:, hf: unnamed."""
    from fairtalk.models import model_prefixes

    kinds = ("python:FILE.py:FUNCTION", "openai:URL#MODEL", "hf:NAME", "builtin:NAME")
    seen = []
    for path, command in COMMANDS:
        declared = _declared(command).get("--model")
        if declared is None:
            continue
        seen.append(path)
        rows = {name: " ".join(lines) for name, lines in _option_help_lines(_help(path, columns=400)).items()}
        short = short_help(declared)
        assert " ".join(short.split()) in rows["--model"], (path, rows["--model"])
        assert all(kind in short for kind in kinds), (path, short)
        assert all(f"{prefix}:" in short for prefix in model_prefixes()), (path, short)
    assert {("audit",), ("respond",), ("similarity",), ("prompts", "generate")} <= set(seen), seen
    declared_once = {short_help(_declared(command)["--model"]) for path, command in COMMANDS if path in seen}
    assert len(declared_once) == 1, declared_once


def test_the_baseline_model_option_points_at_the_spec_kinds() -> None:
    """`--baseline-model` is a model spec too: its short help says so and names the common kinds."""
    command = dict(COMMANDS)[("audit",)]
    short = short_help(_declared(command)["--baseline-model"])
    assert "a spec as for --model" in short and all(kind in short for kind in ("python:", "openai:", "hf:")), short
