"""A config file under the command line: tables merged key by key, one --config, sampling settings checked everywhere."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

import fairtalk
from fairtalk import AuditConfig, DecodingSettings, ScoreOptions, SpecError
from fairtalk.cli import app

runner = CliRunner()


def _error(result: object, *needles: str) -> str:
    """The exit is 2 with one ``error:`` line holding every needle (never a traceback)."""
    assert result.exit_code == 2, (result.exit_code, result.output)  # type: ignore[attr-defined]
    stderr = result.stderr.replace("\n", "")  # type: ignore[attr-defined]
    assert stderr.startswith("error: "), stderr
    for needle in needles:
        assert needle in stderr, (needle, stderr)
    return stderr


def _file(tmp_path: Path, text: str, name: str = "audit.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


_MARGINS = 'model = "builtin:echo"\naxes = ["gender"]\nn_pairs = 50\n[score]\nmargins = { offense_rate = 0.01 }\n'


# --- 1. a table on the command line keeps the file's other keys -------------------------------------------


def test_a_margin_given_over_a_file_keeps_the_files_other_margins(tmp_path: Path) -> None:
    path = _file(tmp_path, _MARGINS)
    config = AuditConfig.from_file(path, {"margins": {"sentiment_negative": 0.02}})
    assert dict(config.score.margins) == {"offense_rate": 0.01, "sentiment_negative": 0.02}
    config = AuditConfig.from_file(path, {"margins": {"offense_rate": 0.05}})  # the command line wins, key by key
    assert dict(config.score.margins) == {"offense_rate": 0.05}
    options = ScoreOptions.from_file(
        _file(tmp_path, "[score]\nmargins = { offense_rate = 0.01 }\n", "score.toml"), {"margins": {"length": 3}}
    )
    assert dict(options.margins) == {"offense_rate": 0.01, "length": 3.0}


def test_model_args_and_settings_over_a_file_are_merged_key_by_key(tmp_path: Path) -> None:
    path = _file(tmp_path, 'model = "builtin:echo"\nmodel_args = { mode = "upper", a = "1" }\n[settings]\nmax_new_tokens = 40\n')
    config = AuditConfig.from_file(path, {"model_args": {"mode": "reverse"}, "settings": {"stop": ["\n"]}})
    assert dict(config.model_args) == {"mode": "reverse", "a": "1"}
    assert (config.settings.max_new_tokens, config.settings.stop) == (40, ("\n",))


def test_a_model_given_over_a_files_model_leaves_the_files_model_args_out(tmp_path: Path) -> None:
    path = _file(tmp_path, 'model = "builtin:echo"\naxes = ["gender"]\nn_pairs = 20\nmodel_args = { mode = "reverse" }\n')
    (tmp_path / "bot.py").write_text("def reply(text):\n    return 'ok'\n")
    config = AuditConfig.from_file(path, {"model": f"python:{tmp_path / 'bot.py'}:reply"})
    assert dict(config.model_args) == {}  # before: {'mode': 'reverse'}, refused by python: as an unknown option
    assert dict(AuditConfig.from_file(path, {"model": "builtin:echo"}).model_args) == {"mode": "reverse"}  # the same model


def test_greedy_over_a_sampling_file_drops_the_files_sampling_settings(tmp_path: Path) -> None:
    path = _file(
        tmp_path, "model: builtin:echo\naxes: [gender]\nn_pairs: 20\nsettings: {do_sample: true, temperature: 0.7}\n", "c.yaml"
    )
    done = runner.invoke(app, ["audit", "--config", str(path), "--greedy", "--quiet", "-o", str(tmp_path / "g")])
    assert done.exit_code == 0, done.output  # before: exit 2, "temperature applies only with --sample"
    settings = json.loads((tmp_path / "g" / "run.json").read_text())["settings"]
    assert settings["do_sample"] is False and settings["temperature"] is None


def test_audit_margin_over_config_keeps_the_files_margin_and_records_both(tmp_path: Path) -> None:
    path = _file(tmp_path, _MARGINS)
    out = tmp_path / "out"
    args = ["audit", "--config", str(path), "--margin", "sentiment_negative=0.02", "-o", str(out), "-q"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    recorded = json.loads((out / "run.json").read_text())["config"]["score"]["margins"]
    assert recorded == {"offense_rate": 0.01, "sentiment_negative": 0.02}
    rows = json.loads((out / "gender" / "results.json").read_text())["measures"]
    margins = {key: row["equivalence_margin"] for key, row in rows.items()}
    assert (margins["offense_rate"], margins["sentiment_negative"]) == (0.01, 0.02)


def test_score_margin_over_config_keeps_the_files_margin(tmp_path: Path) -> None:
    path = _file(tmp_path, "[score]\nmargins = { offense_rate = 0 }\n", "score.toml")
    responses = tmp_path / "missing.jsonl"
    args = ["score", "--config", str(path), "--responses", str(responses), "--axis", "gender", "-o", str(tmp_path / "o")]
    _error(runner.invoke(app, [*args, "--margin", "length=2"]), "score.toml: ", "offense_rate")  # the file's bad one is kept
    stderr = _error(runner.invoke(app, [*args, "--margin", "offense_rate=0.02"]))  # overridden: the file's is gone
    assert "offense_rate" not in stderr and "score.toml:" not in stderr, stderr


# --- 2. --config once ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("command", [["audit", "--model", "builtin:echo"], ["score", "--responses", "r.jsonl"]])
def test_config_given_twice_is_an_error(tmp_path: Path, command: list[str]) -> None:
    first, second = _file(tmp_path, "seed = 7\n", "s7.toml"), _file(tmp_path, "n_resamples = 100\n", "n.toml")
    args = [*command, "--config", str(first), "--config", str(second), "-o", str(tmp_path / "o")]
    _error(runner.invoke(app, args), "--config given twice", "s7.toml", "n.toml", "merge the files into one")
    assert not (tmp_path / "o").exists()


# --- 3. sampling settings without sampling ----------------------------------------------------------------------


def test_a_temperature_without_sampling_is_refused_in_the_library() -> None:
    with pytest.raises(SpecError, match=r"^temperature applies only with do_sample = true; greedy decoding would ignore it"):
        AuditConfig(model="builtin:echo", axes="gender", n_pairs=50, settings={"temperature": 0.5})
    with pytest.raises(SpecError, match=r"^top_k, top_p apply only with do_sample = true"):
        fairtalk.audit(model="builtin:echo", axes="gender", n_pairs=50, settings={"top_k": 5, "top_p": 0.9})
    with pytest.raises(SpecError, match="applies only with do_sample"):
        AuditConfig(settings=DecodingSettings(temperature=0.5))
    config = AuditConfig(settings={"do_sample": True, "temperature": 0.5})
    assert (config.settings.do_sample, config.settings.temperature) == (True, 0.5)


def test_a_temperature_without_sampling_in_a_config_file_is_refused_naming_the_file(tmp_path: Path) -> None:
    path = _file(tmp_path, 'model = "builtin:echo"\naxes = ["gender"]\nn_pairs = 50\n[settings]\ntemperature = 0.5\n')
    args = ["audit", "--config", str(path), "-o", str(tmp_path / "o")]
    _error(runner.invoke(app, args), f"{path}: temperature applies only with do_sample = true; greedy decoding would ignore it")
    stderr = _error(runner.invoke(app, [*args, "--temperature", "0.3"]))  # the flag's value is the one ignored
    assert stderr.startswith("error: --temperature applies only with --sample;"), stderr
    assert AuditConfig.from_file(path, {"settings": {"do_sample": True}}).settings.temperature == 0.5  # --sample


def test_sampling_in_the_file_or_on_the_command_line_takes_the_others_temperature(tmp_path: Path) -> None:
    sampled = _file(tmp_path, "[settings]\ndo_sample = true\ntemperature = 0.5\n", "sampled.toml")
    assert AuditConfig.from_file(sampled).settings == DecodingSettings(do_sample=True, temperature=0.5)
    assert AuditConfig.from_file(sampled, {"settings": {"temperature": 0.3}}).settings.temperature == 0.3
    greedy = _file(tmp_path, "[settings]\ntemperature = 0.5\n", "greedy.toml")
    out = tmp_path / "out"
    args = ["audit", "--config", str(greedy), "--model", "builtin:echo", "--axis", "gender", "--pairs", "50"]
    result = runner.invoke(app, [*args, "--sample", "-o", str(out), "-q"])
    assert result.exit_code == 0, result.output
    settings = json.loads((out / "run.json").read_text())["config"]["settings"]
    assert (settings["do_sample"], settings["temperature"]) == (True, 0.5)


# --- 4. finite sampling settings ---------------------------------------------------------------------------------


@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan, 0.0, -1.0])
def test_a_temperature_must_be_a_finite_number_above_zero(value: float) -> None:
    with pytest.raises(SpecError, match="temperature must be a finite number > 0"):
        DecodingSettings(do_sample=True, temperature=value)
    with pytest.raises(SpecError, match="temperature must be a finite number > 0"):
        AuditConfig(settings={"do_sample": True, "temperature": value})


@pytest.mark.parametrize("field", ["top_p", "repetition_penalty"])
@pytest.mark.parametrize("value", [math.inf, math.nan])
def test_other_sampling_numbers_refuse_inf_and_nan(field: str, value: float) -> None:
    with pytest.raises(SpecError, match=field):
        DecodingSettings(do_sample=True, **{field: value})  # type: ignore[arg-type]


def test_temperature_inf_on_the_command_line_is_an_error(tmp_path: Path) -> None:
    args = ["audit", "--model", "builtin:echo", "--axis", "gender", "--pairs", "50", "--sample", "--temperature", "inf"]
    _error(runner.invoke(app, [*args, "-o", str(tmp_path / "o")]), "temperature must be a finite number > 0, got inf")
    assert not (tmp_path / "o").exists()


# --- 5. an error of the file's values names the file ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ('axes = ["nosuchaxis"]\n', "unknown lexicon axis 'nosuchaxis'"),
        ('model = "nosuch:x"\naxes = ["gender"]\n', "unknown model spec prefix 'nosuch'"),
        ('model = "builtin:echo"\nmodel_args = { nosuch = "1" }\n', "unknown option 'nosuch' for builtin:echo"),
        ("[score]\nmargins = { offense_rate = -1 }\n", "equivalence margin for 'offense_rate' must be a number > 0"),
    ],
)
def test_an_error_of_a_file_value_names_the_file_and_one_of_a_flag_does_not(tmp_path: Path, text: str, needle: str) -> None:
    path = _file(tmp_path, text)
    args = ["audit", "--config", str(path), "-o", str(tmp_path / "o")]
    _error(runner.invoke(app, [*args, "--model", "builtin:echo"] if "model" not in text else args), f"{path}: {needle}")
    assert not (tmp_path / "o").exists()


def test_an_error_of_a_flag_over_a_good_file_does_not_name_the_file(tmp_path: Path) -> None:
    path = _file(tmp_path, 'model = "builtin:echo"\naxes = ["gender"]\n')
    args = ["audit", "--config", str(path), "-o", str(tmp_path / "o")]
    for flags, needle in (
        (["--axis", "nosuchaxis"], "unknown lexicon axis 'nosuchaxis'"),
        (["--model", "nosuch:y"], "unknown model spec prefix 'nosuch'"),
        (["--margin", "offense_rate=-1"], "--margin offense_rate="),
    ):
        stderr = _error(runner.invoke(app, [*args, *flags]), needle)
        assert str(path) not in stderr, stderr
