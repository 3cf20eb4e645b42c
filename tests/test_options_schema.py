"""The options schema: each option declared once (ScoreOptions, AuditConfig), and every other form of it held to it.

The keyword TypedDicts of ``score()``/``audit()``, the choices of the library's constants, and the
CLI's flags (their defaults and help texts) are checked against the fields here, so that editing
one of them alone fails a test.
"""

from __future__ import annotations

import json
import typing
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest
import typer

from cli_walk import commands as walk_commands
from fairtalk import AuditConfig, ScoreOptions, SpecError
from fairtalk.config import (
    BINARY_TESTS,
    CORRECTION_SCOPES,
    CORRECTIONS,
    COUNT_TESTS,
    AuditOverrides,
    RunOverrides,
    ScoreOverrides,
    field_info,
    option_default,
    option_help,
    options_schema,
)
from fairtalk.measures import DEFINITIONS, SIMILARITY_METHODS
from fairtalk.models import RayEngine
from fairtalk.options import RUN_FIELDS, SCORE_FIELDS
from fairtalk.pairs import MIXED_POLICIES
from fairtalk.prompts import PromptOptions
from fairtalk.stats import SPENDING_FUNCTIONS


def test_the_keyword_typeddicts_have_exactly_the_fields() -> None:
    assert list(ScoreOverrides.__annotations__) == list(ScoreOptions.keys())
    assert list(RunOverrides.__annotations__) == list(AuditConfig.keys())
    assert set(AuditOverrides.__annotations__) == {*AuditConfig.keys(), *ScoreOptions.keys()}
    assert not ScoreOverrides.__required_keys__ and not AuditOverrides.__required_keys__  # total=False


@pytest.mark.parametrize(
    ("cls", "key", "choices"),
    [
        (ScoreOptions, "correction", CORRECTIONS),
        (ScoreOptions, "distinct", DEFINITIONS),
        (ScoreOptions, "binary_test", tuple(BINARY_TESTS)),
        (ScoreOptions, "count_test", COUNT_TESTS),
        (AuditConfig, "mixed", MIXED_POLICIES),
        (AuditConfig, "correction_scope", CORRECTION_SCOPES),
        (AuditConfig, "spending", SPENDING_FUNCTIONS),
    ],
)
def test_the_literal_choices_are_the_librarys(cls: type, key: str, choices: tuple[str, ...]) -> None:
    assert set(typing.get_args(field_info(cls, key).annotation)) == set(choices)
    with pytest.raises(SpecError, match=f"unknown {key} 'nope'") as caught:
        cls(**{key: "nope"})
    assert caught.value.choices == tuple(sorted(choices)) and "\n" not in str(caught.value)


def test_every_option_has_help_and_its_default_is_valid() -> None:
    for cls in (ScoreOptions, AuditConfig):
        built = cls()
        for key in cls.keys():
            assert option_help(cls, key).strip(), f"{cls.__name__}.{key} has no description"
            if key not in ("score", "settings", "margins", "model_args"):  # normalised into their own types
                assert getattr(built, key) == option_default(cls, key), key
    assert SIMILARITY_METHODS  # the similarity methods are checked by its validator (tests/test_cli_contracts.py)


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"alpha": 0}, r"alpha must be between 0 and 1 \(exclusive\) and at least 1e-10, got 0"),
        ({"alpha": 1e-320}, r"alpha must be between 0 and 1 \(exclusive\) and at least 1e-10, got 1e-320"),
        ({"power": float("nan")}, r"power must be between 0 and 1 \(exclusive\) and at most 0.9999, got nan"),
        ({"power": 0.999999999999}, r"power must be between 0 and 1 \(exclusive\) and at most 0.9999, got 0.999999999999"),
        ({"offense_threshold": 1.5}, r"offense_threshold must be a number in \[0, 1\], got 1.5"),
        ({"seed": 1.0}, "seed must be an integer >= 0, got 1.0"),
        ({"n_divergent": -1}, "n_divergent must be at least 0, got -1"),
        ({"mask_groups": 1}, "mask_groups must be true or false, got 1"),
        ({"offense": ""}, "offense must be a scorer name"),
    ],
)
def test_a_bad_scoring_option_is_one_line_naming_it_and_its_range(given: dict[str, object], message: str) -> None:
    with pytest.raises(SpecError, match=f"^{message}") as caught:
        ScoreOptions(**given)  # type: ignore[arg-type]
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"batch_size": 0}, "--batch-size must be a positive int, got 0"),
        ({"looks": 1, "until_decided": True, "max_pairs": 10, "n_pairs": 5}, "--looks must be a whole number ≥ 2, got 1"),
        ({"until_decided": "yes"}, "--until-decided must be True or False, got 'yes'"),
        ({"max_pairs": 10}, "--max-pairs applies only with --until-decided"),
        ({"corpus": 3}, "--corpus must be a path, got 3"),
    ],
)
def test_a_bad_run_option_is_named_as_the_caller_spells_it(given: dict[str, object], message: str) -> None:
    names = {key: "--" + key.replace("_", "-") for key in (*AuditConfig.keys(), *given)}
    with pytest.raises(SpecError, match=f"^{message}"):
        AuditConfig.from_mapping(given, names=names)


def test_an_unknown_keyword_is_a_type_error_as_python_s() -> None:
    with pytest.raises(TypeError, match="ScoreOptions\\(\\) got an unexpected keyword argument 'alpah'"):
        ScoreOptions(alpah=0.1)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="score\\(\\) got an unexpected keyword argument 'n_pairs'"):
        __import__("fairtalk").score(["a", "b"], ["c", "d"], axis="gender", n_pairs=3)


# -- the command line: every flag of a field has the field's default and help ------------------------------------


def _commands() -> dict[str, Any]:
    """``fairtalk score`` and ``fairtalk audit`` as the click commands typer builds (typer's own click)."""
    from fairtalk.cli import app

    group: Any = typer.main.get_command(app)
    return {name: group.commands[name] for name in ("score", "audit")}


def _schema_params(command: Any, fields: tuple[str, ...]) -> dict[str, Any]:
    """The options of ``command`` that set a field of ``fields`` (a parameter is named as its field)."""
    return {p.name: p for p in command.params if p.param_type_name == "option" and p.name in fields}


def test_every_flag_of_a_field_has_exactly_its_default_and_help() -> None:
    from fairtalk.cli._choices import plain
    from fairtalk.cli._schema import cli_default, cli_help

    checked = 0
    for name, command in _commands().items():
        fields = (*SCORE_FIELDS, *(RUN_FIELDS if name == "audit" else ()))
        for key, param in _schema_params(command, fields).items():
            assert plain(param.default) == cli_default(key), (name, key, param.default)
            assert param.help == cli_help(key), (name, key)
            checked += 1
    assert checked == len(SCORE_FIELDS) * 2 + len(RUN_FIELDS)  # every field has its flag (score: the scoring ones)


def test_the_cli_forms_are_the_fields_but_where_declared() -> None:
    from fairtalk.cli._schema import CLI_FORMS, cli_default, cli_help

    for fields in (SCORE_FIELDS, RUN_FIELDS):
        for key, field in fields.items():
            default = field.get_default(call_default_factory=True)
            if key not in CLI_FORMS:
                assert cli_help(key) == field.description
                assert cli_default(key) == (
                    ",".join(default)
                    if isinstance(default, tuple)
                    else None
                    if isinstance(default, dict | MappingProxyType)
                    else default
                )
    assert set(CLI_FORMS) <= set(RUN_FIELDS)


def test_every_scoring_option_is_reachable_from_the_cli_and_from_a_config_file(tmp_path: Path) -> None:
    for name, command in _commands().items():
        assert set(_schema_params(command, tuple(SCORE_FIELDS))) == set(SCORE_FIELDS), name
    assert set(_schema_params(_commands()["audit"], tuple(RUN_FIELDS))) == set(RUN_FIELDS)
    # a config file's keys are the field names: each one is read (a value other than its default comes back)
    changed = {
        "measures": ["length"],
        "seed": 7,
        "alpha": 0.01,
        "correction": "bh",
        "mask_groups": True,
        "drop_empty": True,
        "distinct": "standard",
        "offense": "hatesonar",
        "offense_threshold": 0.25,
        "sentiment_threshold": 0.5,
        "n_resamples": 99,
        "n_divergent": 3,
        "binary_test": "midp",
        "count_test": "wilcoxon",
        "clusters": False,
        "margins": {"length": 2.0},
        "primary": ["length"],
        "power": 0.9,
        "scorer_check": False,
        "judge_rubric": "Rude? {response}",
        "judge_scale": [1, 5],
        "exclude_truncated": True,
        "gold": "gold.jsonl",
    }
    assert set(changed) == set(SCORE_FIELDS)
    path = tmp_path / "score.toml"
    lines = [f"{key} = {json.dumps(value)}" for key, value in changed.items() if key != "margins"]
    path.write_text("\n".join([*lines, "margins = { length = 2.0 }"]) + "\n", encoding="utf-8")
    read = ScoreOptions.from_file(path).to_dict()
    for key, value in changed.items():
        assert read[key] == value and value != option_default(ScoreOptions, key), key


@pytest.mark.parametrize(
    ("cls", "key", "value", "message"),
    [
        (PromptOptions, "n_draws", -3, "n_draws must be an integer >= 1, got -3"),
        (PromptOptions, "n_best", 2.5, "n_best must be an integer >= 1, got 2.5"),
        (PromptOptions, "smoothing", float("nan"), "smoothing must be a number >= 0, got nan"),
        (PromptOptions, "alpha", 7, "alpha must be between 0 and 1 (exclusive) and at least 1e-10, got 7"),
        (RayEngine, "num_actors", 0, "RayEngine: num_actors must be an integer >= 1 or None, got 0"),
        (RayEngine, "max_retries", True, "RayEngine: max_retries must be an integer >= 0, got True"),
        (RayEngine, "num_gpus", -1, "RayEngine: num_gpus must be a number >= 0 or None, got -1"),
        (RayEngine, "num_cpus", float("inf"), "RayEngine: num_cpus must be a number > 0, got inf"),
        (RayEngine, "score_batch", 1.5, "RayEngine: score_batch must be an integer >= 1 or None, got 1.5"),
    ],
)
def test_prompt_and_ray_numbers_are_parsed_by_the_one_schema(cls: type, key: str, value: object, message: str) -> None:
    """PromptOptions and RayEngine declare their bounds as schema fields: a bad number gets the schema's own wording.

    The same field on a bare schema class words the same error (RayEngine only names itself first).
    """
    info = field_info(cls, key)  # a field of the schema, with its bounds
    probe: Any = options_schema(kw_only=True)(type("Probe", (), {"__annotations__": {key: info.annotation}, key: info}))
    with pytest.raises(SpecError) as schema:
        probe(**{key: value})
    with pytest.raises(SpecError) as caught:
        cls(**{key: value})
    assert str(caught.value) == message
    assert str(caught.value).removeprefix("RayEngine: ") == str(schema.value)


def test_compare_and_plan_declare_alpha_with_the_scoring_option_s_field() -> None:
    """Review: `compare --alpha` and `plan --alpha` wrote their own default and help; both take the field's help,
    bounds and (compare) default, and plan's help says where its own default comes from.

    A later review: the field's first sentence ("…for the adjusted p-values") misled in plan, whose --gate plans an
    equivalence test; plan gives its own first sentence in place of the field's (``score_option(lead=...)``)."""
    from fairtalk.cli import app
    from fairtalk.cli._plan import _ALPHA
    from fairtalk.cli._schema import cli_default, cli_help

    group: Any = typer.main.get_command(app)
    audit = next(p for p in group.commands["audit"].params if p.name == "alpha")
    for name, default in (("compare", cli_default("alpha")), ("plan", None)):
        alpha = next(p for p in group.commands[name].params if p.name == "alpha")
        if name == "plan":
            assert alpha.help.startswith("Significance level of the planned test (with --gate, the equivalence test).")
            assert cli_help("alpha") not in alpha.help, alpha.help
        else:
            assert alpha.help.startswith(cli_help("alpha")) and alpha.help != cli_help("alpha"), (name, alpha.help)
        assert alpha.default == default and alpha.metavar == audit.metavar, (name, alpha.default, alpha.metavar)
    assert _ALPHA == SCORE_FIELDS["alpha"].default and f"else {_ALPHA:g}" in alpha.help


# -- every other command: a flag that means a field is declared from it, and checked in audit's words --------------

#: Flags of ``audit``/``score`` that other commands declare by hand because there they mean something else, with why.
_OWN_MEANING: dict[str, dict[str, str]] = {
    "--seed": {
        name: "seeds what this command draws (samples, answers, training, draws), not the scoring's bootstrap"
        for name in (
            "augment",
            "label",
            "pairs",
            "prompts analyze",
            "prompts paraphrase",
            "regard train",
            "reproduce debias",
            "reproduce planted",
            "respond",
            "similarity",
            "swap",
            "train",
        )
    },
    "--output": {
        name: "the command's own output file or folder"
        for name in (
            "augment",
            "compare",
            "label",
            "pairs",
            "pool-filter",
            "prompts analyze",
            "prompts generate",
            "prompts paraphrase",
            "regard check",
            "regard label",
            "regard train",
            "reproduce debias",
            "reproduce planted",
            "respond",
            "similarity",
            "train",
        )
    },
    "--axis": {
        name: "one axis (or the axes to compare or mask), not the audit's list with its default"
        for name in ("augment", "compare", "label", "pairs", "pool-filter", "reproduce debias", "swap", "train")
    },
    "--corpus": {
        name: "a corpus read in other formats (or for training), with no default or another"
        for name in ("augment", "pairs", "reproduce debias", "train")
    },
    "--split": {name: "defaults to all (the audit's default is heldout)" for name in ("augment", "pairs")},
    "--pairs": {
        "respond": "a pairs file, not a count",
        "similarity": "a pairs file, not a count",
        "reproduce debias": "held-out pairs to audit, default: all of them",
        "reproduce planted": "held-out pairs to audit, default: all of them",
    },
    "--model": {"respond": "required (no default model)", "prompts generate": "required, a completion model"},
    "--store": {
        name: "no default store (the audit's is OUTPUT/store.sqlite)" for name in ("respond", "similarity", "prompts generate")
    },
    "--batch-size": {"train": "dialogues per training step", "prompts generate": "completions per call, default 32"},
    "--margin": {"compare": "a non-inferiority margin, defaulting to the baseline audit's"},
    "--gold": {
        "plan": "a half-width, not a gold file",
        "prompts analyze": "regard labels of completions",
        "regard check": "regard labels of a check set",
    },
    "--engine": {"prompts analyze": "where the regard scorer labels, not where the model runs"},
    "--resamples": {"prompts analyze": "PromptOptions' template × seed bootstrap (default 1000; 0: none)"},
    "--balance": {"prompts paraphrase": "keeps template × structure cells holding every group (default on)"},
}


#: Options that take a field's help but give their own first sentence (``score_option(lead=...)``), with why.
_OWN_LEAD: dict[tuple[str, str], str] = {
    ("plan", "--alpha"): "plan plans a test (with --gate an equivalence test); it adjusts no p-values",
    ("plan", "--power"): "plan plans for a power; it reports no minimum detectable effect",
}


def test_a_flag_of_a_field_is_declared_from_the_field_in_every_command() -> None:
    """Review: `similarity --alpha` and `prompts analyze --alpha` (and more) declared their own default, help and range.

    Each option of another command that spells a flag of ``audit``/``score``'s fields takes the field's help (a
    note may follow) and default (a different default only with a note), unless ``_OWN_MEANING`` says why not.
    """
    from fairtalk.cli._help_layout import short_help
    from fairtalk.cli._schema import cli_default, cli_help

    commands = {" ".join(path): command for path, command in walk_commands()}
    of_fields = {
        flag: param.name
        for name in ("audit", "score")
        for param in commands[name].params
        if param.param_type_name == "option" and (param.name in SCORE_FIELDS or param.name in RUN_FIELDS)
        for flag in param.opts
        if flag.startswith("--")
    }
    checked, explained = [], set()
    for name, command in commands.items():
        for param in (p for p in command.params if p.param_type_name == "option" and name not in ("audit", "score")):
            flag = next((f for f in param.opts if f in of_fields), None)
            if flag is None:
                continue
            if name in _OWN_MEANING.get(flag, {}):
                explained.add((flag, name))
                continue
            key, help_text = of_fields[flag], param.help or ""
            if (name, flag) in _OWN_LEAD:  # its own first sentence, then the field's others
                rest = cli_help(key)[len(short_help(cli_help(key))) :].strip()
                assert short_help(help_text) != short_help(cli_help(key)) and rest in help_text, (name, flag, help_text)
            else:
                assert help_text.startswith(cli_help(key)), (name, flag, help_text)
            assert param.default == cli_default(key) or help_text != cli_help(key), (name, flag, param.default)
            checked.append((name, flag))
    assert explained == {(flag, name) for flag, names in _OWN_MEANING.items() for name in names}  # none stale
    for expected in (("similarity", "--alpha"), ("prompts analyze", "--alpha"), ("pool-filter", "--offense-threshold")):
        assert expected in checked


@pytest.mark.parametrize("value", ["0", "1", "nan", "-0.1", "1e-300"])
@pytest.mark.parametrize(
    "command",
    [
        ["audit", "--model", "builtin:echo", "--axis", "gender", "--pairs", "5"],
        ["similarity", "--pairs", "missing-pairs.jsonl"],
        ["prompts", "analyze", "--completions", "missing-completions.jsonl"],
        ["compare", "missing-baseline", "missing-candidate"],
    ],
)
def test_every_alpha_out_of_its_range_is_refused_in_audit_s_words(tmp_path: Path, command: list[str], value: str) -> None:
    """Review: `similarity --alpha 1` and `prompts analyze --alpha 0` ran (typer's own [0, 1] range), and NaN was
    refused as "less than or equal to 1"; each is now the scoring option's error, before any work."""
    from typer.testing import CliRunner

    out = tmp_path / "out"
    flags = ["--alpha", value] if command[0] == "compare" else ["-o", str(out), "--alpha", value]
    done = CliRunner().invoke(_cli_app(), [*command, *flags])
    shown = {"0": "0.0", "1": "1.0", "-0.1": "-0.1", "nan": "nan", "1e-300": "1e-300"}[value]
    assert done.exit_code == 2, done.output
    assert f"error: --alpha must be between 0 and 1 (exclusive) and at least 1e-10, got {shown}" in done.stderr
    assert "Traceback" not in done.output and not out.exists()


@pytest.mark.parametrize(
    ("command", "message"),
    [
        (["pairs", "--corpus", "missing.txt", "--turns", "0"], "--turns must be an int >= 1"),
        (
            ["pool-filter", "--pool", "missing.txt", "--offense-threshold", "nan"],
            "--offense-threshold must be a number in [0, 1], got nan",
        ),
        (
            ["pool-filter", "--pool", "missing.txt", "--offense-threshold", "2"],
            "--offense-threshold must be a number in [0, 1], got 2.0",
        ),
        (
            ["respond", "--model", "builtin:echo", "--pairs", "missing.jsonl", "--max-errors", "-1"],
            "--max-errors must be 0 or more, or None, got -1",
        ),
        (["plan", "--gate", "--power", "1"], "--power must be between 0 and 1 (exclusive) and at most 0.9999, got 1.0"),
    ],
)
def test_other_options_of_a_field_are_refused_in_audit_s_words(tmp_path: Path, command: list[str], message: str) -> None:
    """`pairs --turns 0` and `pool-filter --offense-threshold 2` said the library's words (no flag), NaN and 2 too."""
    from typer.testing import CliRunner

    out = ["-o", str(tmp_path / "out.txt")] if command[0] in ("pool-filter", "respond", "pairs") else []
    done = CliRunner().invoke(_cli_app(), [*command, *out])
    assert done.exit_code == 2, done.output
    assert f"error: {message}" in done.stderr and "Traceback" not in done.output
    assert not (tmp_path / "out.txt").exists()


def _cli_app() -> Any:
    from fairtalk.cli import app

    return app
