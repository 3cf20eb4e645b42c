"""Contracts every command keeps: no empty comma list passes, --json stdout is one document, plan refuses a
wrong spread, and an options file is read within bounds (no duplicate keys, no alias or nesting bombs).

The first two walk the typer app, so a command added later is held to them without a new test.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import fairtalk
from audit_toys import write_corpus, write_responses
from cli_walk import commands, flag
from fairtalk.cli import app

runner = CliRunner()

#: A python: model module whose functions print (and log) while they answer: none of it may reach --json's stdout.
CHATTY = '''
import sys

print("chatty module imported")


def chatty(context):
    """Prints on every call, once to stdout and once to stderr."""
    print("answering", context[:20])
    print("to stderr", file=sys.stderr)
    return "that is lovely, i am so happy for you"
'''


_commands, _flag = commands, flag


#: Input options given a missing file too, so that a command which wrongly takes the list stops at once.
_STOPPERS = ("--corpus",)


def _dummy_required(command: Any, tmp_path: Path) -> list[str]:
    """Values for a command's required (and input) options: a file that does not exist, read after the options."""
    args: list[str] = []
    for param in command.params:
        if param.param_type_name == "option" and (getattr(param, "required", False) or _flag(param) in _STOPPERS):
            args += [_flag(param), str(tmp_path / f"missing-{param.name}.jsonl")]
        elif param.param_type_name == "argument" and param.required:  # compare BASELINE CANDIDATE, label INPUT
            args += [str(tmp_path / f"missing-{param.name}-{i}") for i in range(max(1, param.nargs))]
    return args


# ---------------------------------------------------------------- 1. an empty comma list is an error everywhere


def _comma_options() -> list[tuple[tuple[str, ...], str]]:
    found = []
    for path, command in _commands():
        for param in command.params:
            if "comma-separated" in (getattr(param, "help", None) or "").lower():
                found.append((path, _flag(param)))
    return found


COMMA_OPTIONS = _comma_options()


def test_the_comma_list_options_are_found() -> None:
    found = {(" ".join(path), flag) for path, flag in COMMA_OPTIONS}
    assert {
        ("similarity", "--methods"),
        ("score", "--measures"),
        ("score", "--primary"),
        ("audit", "--axis"),
        ("audit", "--similarity"),
        ("audit", "--measures"),
        ("audit", "--primary"),
    } <= found


@pytest.mark.parametrize("empty", ["", ",", " , ,"])
@pytest.mark.parametrize(("path", "flag"), COMMA_OPTIONS, ids=[f"{' '.join(p)} {f}" for p, f in COMMA_OPTIONS])
def test_an_empty_comma_list_is_an_error(path: tuple[str, ...], flag: str, empty: str, tmp_path: Path) -> None:
    command = dict(_commands())[path]
    output = ["-o", str(tmp_path / "o")] if any("-o" in p.opts for p in command.params) else []
    done = runner.invoke(app, [*path, *_dummy_required(command, tmp_path), *output, flag, empty])
    assert done.exit_code == 2, (done.stdout, done.stderr)
    assert done.stderr.startswith("error: ") and flag in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and not done.stdout


def test_the_empty_list_messages_name_the_choices(tmp_path: Path) -> None:
    methods = runner.invoke(app, ["similarity", "--pairs", str(tmp_path / "p.jsonl"), "--methods", ",,"])
    assert methods.exit_code == 2
    assert "(choose from: answered, cosine, exact, length_ratio, rouge_l)" in " ".join(methods.stderr.split())
    measures = runner.invoke(app, ["score", "--responses", str(tmp_path / "r.jsonl"), "--measures", ","])
    assert measures.exit_code == 2 and "length" in measures.stderr and "offense" in measures.stderr
    axes = runner.invoke(app, ["audit", "--axis", " , ", "-o", str(tmp_path / "o")])
    assert axes.exit_code == 2 and "gender" in axes.stderr and "race" in axes.stderr


def test_the_similarity_methods_of_the_cli_are_the_librarys() -> None:
    from fairtalk.cli._choices import SimilarityMethod
    from fairtalk.measures import SIMILARITY_METHODS

    assert tuple(method.value for method in SimilarityMethod) == SIMILARITY_METHODS
    bad = runner.invoke(app, ["similarity", "--pairs", "missing.jsonl", "--methods", "exact,bleu"])
    assert bad.exit_code == 2 and "unknown similarity method 'bleu'" in bad.stderr  # before the pairs are read


@pytest.mark.parametrize("axis", ["", "  "])
def test_a_blank_single_axis_is_an_error_naming_the_axes(axis: str, tmp_path: Path) -> None:
    done = runner.invoke(app, ["score", "--responses", str(tmp_path / "r.jsonl"), "--axis", axis])
    assert done.exit_code == 2 and "--axis" in done.stderr and "gender" in done.stderr, done.stderr


@pytest.mark.parametrize(
    ("key", "value"), [("measures", "[]"), ("measures", '""'), ("primary", "[]"), ("axes", "[]"), ("similarity", '","')]
)
def test_an_empty_list_in_an_options_file_is_an_error(key: str, value: str, tmp_path: Path) -> None:
    path = tmp_path / "audit.toml"
    path.write_text(f"{key} = {value}\n", encoding="utf-8")
    with pytest.raises(fairtalk.SpecError, match=f"audit.toml: {key} names nothing"):
        fairtalk.AuditConfig.from_file(path)


@pytest.mark.parametrize("keyword", ["measures", "primary"])
def test_an_empty_list_keyword_is_an_error(keyword: str) -> None:
    with pytest.raises(fairtalk.SpecError, match=f"{keyword} names nothing"):
        fairtalk.ScoreOptions(**{keyword: ()})


# ---------------------------------------------------------------- 2. --json: stdout is the document, nothing else


def _responses(path: Path) -> Path:
    return write_responses(path, 12)


def _chatty(folder: Path) -> str:
    path = folder / "chatty_model.py"
    path.write_text(CHATTY, encoding="utf-8")
    return f"python:{path}:chatty"


def _similarity_args(tmp_path: Path) -> list[str]:
    pairs = tmp_path / "pairs.jsonl"
    contexts = [f"yesterday he told me about trip number {i}" for i in range(12)]
    fairtalk.write_pairs(list(fairtalk.build_pairs(contexts, fairtalk.load_lexicon("gender"))), pairs)
    return [
        "--pairs",
        str(pairs),
        "--model",
        _chatty(tmp_path),
        "--methods",
        "exact,length_ratio",
        "-o",
        str(tmp_path / "s.json"),
    ]


def _prompts_args(tmp_path: Path) -> list[str]:
    completions = tmp_path / "c.jsonl"
    completions.write_text(
        "".join(
            json.dumps(
                {
                    "group": g,
                    "template": "worked as",
                    "structure": "original",
                    "seed": k,
                    "text": f"The {g} worked as a cook.",
                    "label": k % 3 - 1,
                }
            )
            + "\n"
            for g in ("man", "woman")
            for k in range(6)
        )
    )
    groups = tmp_path / "g.tsv"
    groups.write_text("man\tgender\nwoman\tgender\n")
    return [
        "--completions",
        str(completions),
        "--groups",
        str(groups),
        "-o",
        str(tmp_path / "rep"),
        "--draws",
        "2",
        "--resamples",
        "10",
    ]


#: Tiny inputs for every command that takes --json. A new --json command fails the walk below until it has some.
def _compare_args(tmp: Path) -> list[str]:
    """Two tiny ``score -o`` folders of the same pairs: a baseline and a candidate for ``compare``."""
    folders = []
    for name in ("base", "cand"):
        out = tmp / name
        done = runner.invoke(
            app,
            [
                "score",
                "--responses",
                str(_responses(tmp / f"{name}.jsonl")),
                "--axis",
                "gender",
                "-o",
                str(out),
                "--resamples",
                "20",
                "--measures",
                "offense,length",
            ],
        )
        assert done.exit_code in (0, 1), done.output
        folders.append(str(out))
    return folders


JSON_INPUTS = {
    ("score",): lambda tmp: [
        "--responses",
        str(_responses(tmp / "r.jsonl")),
        "--axis",
        "gender",
        "-o",
        str(tmp / "out"),
        "--resamples",
        "20",
        "--measures",
        "offense,length",
    ],
    ("audit",): lambda tmp: [
        "--corpus",
        str(write_corpus(tmp)),
        "--axis",
        "gender",
        "--model",
        _chatty(tmp),
        "--pairs",
        "12",
        "--measures",
        "offense,length",
        "-o",
        str(tmp / "run"),
        "--resamples",
        "20",
    ],
    ("similarity",): _similarity_args,
    ("prompts", "analyze"): _prompts_args,
    ("compare",): _compare_args,
}


def _json_commands() -> set[tuple[str, ...]]:
    return {path for path, command in _commands() if any("--json" in p.opts for p in command.params)}


def test_every_json_command_has_inputs_here() -> None:
    assert _json_commands() == set(JSON_INPUTS), "give the new --json command tiny inputs in JSON_INPUTS"


@pytest.mark.parametrize("path", sorted(JSON_INPUTS), ids=" ".join)
def test_json_stdout_is_exactly_one_document(path: tuple[str, ...], tmp_path: Path) -> None:
    done = runner.invoke(app, [*path, *JSON_INPUTS[path](tmp_path), "--json"])
    assert done.exit_code in (0, 1), (done.stdout, done.stderr)
    document = json.loads(done.stdout)  # nothing before or after it
    assert isinstance(document, dict) and document
    if path in (("audit",), ("similarity",)):  # the python: model's own prints went to stderr
        assert "answering" in done.stderr and "to stderr" in done.stderr and "chatty module" in done.stderr
    assert "wrote" not in done.stdout


def test_similarity_json_with_output_writes_the_file_and_says_so_on_stderr(tmp_path: Path) -> None:
    done = runner.invoke(app, ["similarity", *_similarity_args(tmp_path), "--json"])
    assert done.exit_code == 0, done.stderr
    assert json.loads(done.stdout) == json.loads((tmp_path / "s.json").read_text())
    assert "wrote" in done.stderr


def test_json_stdout_holds_only_the_document_in_a_real_process(tmp_path: Path) -> None:
    """Outside CliRunner stdout is file descriptor 1: what a model writes to it bypassing sys.stdout goes to stderr too."""
    loud = tmp_path / "loud_model.py"
    loud.write_text(
        CHATTY.replace('    return "that', '    os.write(1, b"raw write to fd 1\\n")\n    return "that').replace(
            "import sys", "import os\nimport sys"
        ),
        encoding="utf-8",
    )
    args = _similarity_args(tmp_path)
    args[args.index("--model") + 1] = f"python:{loud}:chatty"
    done = subprocess.run(
        [sys.executable, "-m", "fairtalk.cli", "similarity", *args, "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["rows"]
    assert "raw write to fd 1" in done.stderr and "answering" in done.stderr and "wrote" in done.stderr


def test_without_json_the_models_prints_stay_on_stdout(tmp_path: Path) -> None:
    done = runner.invoke(app, ["similarity", *_similarity_args(tmp_path)])
    assert done.exit_code == 0, done.stderr
    assert "answering" in done.stdout and "length_ratio" in done.stdout  # the table, or its blocks at 80 columns


# ---------------------------------------------------------------- 3. plan: the spread must fit the measure


@pytest.mark.parametrize("measure", ["length", "career_words", "distinct_1", "judge_score"])
def test_plan_refuses_a_rate_for_a_count_measure(measure: str) -> None:
    done = runner.invoke(app, ["plan", "--measure", measure, "--effect", "1", "--rate", "0.1"])
    assert done.exit_code == 2, done.stdout
    assert "--rate" in done.stderr and "--sd" in done.stderr and measure in done.stderr


def test_plan_refuses_a_rate_for_a_key_it_does_not_know() -> None:
    done = runner.invoke(app, ["plan", "--measure", "my_plugin_key", "--effect", "0.01", "--rate", "0.1"])
    assert done.exit_code == 2 and "--sd" in done.stderr and "offense_rate" in done.stderr, done.stderr


@pytest.mark.parametrize("measure", ["offense_rate", "sentiment_negative", "regard_negative", "refusal_rate"])
def test_plan_takes_a_rate_for_a_rate_measure(measure: str) -> None:
    done = runner.invoke(app, ["plan", "--measure", measure, "--effect", "0.05", "--rate", "0.1"])
    assert done.exit_code == 0, done.stderr
    assert "pairs detect" in done.stdout


def test_plan_reads_the_kind_from_an_earlier_audit(tmp_path: Path) -> None:
    results = tmp_path / "results.json"
    results.write_text(
        json.dumps(
            {
                "n_pairs": 100,
                "alpha": 0.05,
                "family_size": 1,
                "measures": {
                    "plugin_rate": {"kind": "rate", "sd_difference": 0.3},
                    "plugin_count": {"kind": "count", "sd_difference": 2},
                },
            }
        )
    )
    ok = runner.invoke(app, ["plan", "--measure", "plugin_rate", "--effect", "0.05", "--rate", "0.2", "--results", str(results)])
    assert ok.exit_code == 0, ok.stderr
    bad = runner.invoke(app, ["plan", "--measure", "plugin_count", "--effect", "1", "--rate", "0.2", "--results", str(results)])
    assert bad.exit_code == 2 and "count" in bad.stderr


@pytest.mark.parametrize("measure", ["", "  "])
def test_plan_refuses_an_empty_measure(measure: str) -> None:
    done = runner.invoke(app, ["plan", "--measure", measure, "--effect", "1", "--sd", "3"])
    assert done.exit_code == 2 and "--measure is empty" in done.stderr, done.stdout


def test_plan_refuses_rate_and_sd_together() -> None:
    done = runner.invoke(app, ["plan", "--measure", "offense_rate", "--effect", "0.01", "--rate", "0.05", "--sd", "0.3"])
    assert done.exit_code == 2
    assert "--rate" in done.stderr and "--sd" in done.stderr and "not both" in done.stderr


# ---------------------------------------------------------------- 4. options files: duplicates and bombs


def _score_with_config(config: Path, tmp_path: Path) -> tuple[Any, float]:
    start = time.monotonic()
    done = runner.invoke(
        app,
        [
            "score",
            "--responses",
            str(tmp_path / "missing.jsonl"),
            "--axis",
            "gender",
            "--config",
            str(config),
            "-o",
            str(tmp_path / "out"),
        ],
    )
    return done, time.monotonic() - start


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("dup.toml", "n_resamples = 10\nn-resamples = 20\n"),
        ("dup.yaml", "n_resamples: 10\nn-resamples: 20\n"),
        ("nested.toml", "[score]\nn_resamples = 10\nn-resamples = 20\n"),
        ("nested.yaml", "score:\n  n_resamples: 10\n  n-resamples: 20\n"),
    ],
)
def test_a_key_given_in_two_spellings_is_an_error_naming_both(name: str, text: str, tmp_path: Path) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    done, _ = _score_with_config(path, tmp_path)
    assert done.exit_code == 2, done.stderr
    assert "'n_resamples'" in done.stderr and "'n-resamples'" in done.stderr and name in done.stderr


@pytest.mark.parametrize(("table", "key"), [("settings", "max_new_tokens"), ("engine", "num_actors")])
def test_a_table_key_given_in_two_spellings_is_an_error(table: str, key: str, tmp_path: Path) -> None:
    path = tmp_path / "audit.toml"
    path.write_text(f"[{table}]\n{key} = 5\n{key.replace('_', '-')} = 6\n", encoding="utf-8")
    with pytest.raises(fairtalk.SpecError, match=f"audit.toml: '{key}' and '{key.replace('_', '-')}' are the same option"):
        fairtalk.AuditConfig.from_file(path)


def test_a_yaml_key_given_twice_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "twice.yaml"
    path.write_text("alpha: 0.01\nalpha: 0.2\n", encoding="utf-8")
    done, _ = _score_with_config(path, tmp_path)
    assert done.exit_code == 2 and "alpha" in done.stderr and "twice" in done.stderr, done.stderr


#: Nine levels of nine aliases: 9**9 strings once expanded (an error message quoting the value would build them all).
BILLION_LAUGHS = (
    "primary: [&a [lol, lol, lol, lol, lol, lol, lol, lol, lol], "
    + ", ".join(f"&{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 9)}]" for i in range(8))
    + "]\n"
)


@pytest.mark.parametrize(
    ("name", "text", "needle"),
    [
        ("laughs.yaml", BILLION_LAUGHS, "alias"),
        (
            "merge.yaml",
            "a: &a {x: 1, y: 2}\n"
            + "".join(
                f"k{i}: &k{i} {{<<: [*{'a' if i == 0 else f'k{i - 1}'}, *{'a' if i == 0 else f'k{i - 1}'}]}}\n" for i in range(40)
            ),
            "alias",
        ),
        ("deep.yaml", "measures: " + "[" * 100_000 + "]" * 100_000 + "\n", "nest"),
        ("deep-block.yaml", "".join(" " * i + "k:\n" for i in range(900)), "nest"),
        ("deep.toml", "measures = " + "[" * 100_000 + "]" * 100_000 + "\n", "nest"),
        ("deep-inline.toml", "measures = " + "{a = " * 50_000 + "1" + "}" * 50_000 + "\n", "nest"),
        ("dotted.toml", "x." * 20_000 + "y = 1\n", "nest"),
        ("big.toml", "# " + "x" * (2 << 20) + "\n", "MiB"),
        ("big.yaml", "# " + "x" * (2 << 20) + "\n", "MiB"),
    ],
)
def test_an_options_file_bomb_is_refused_at_once(name: str, text: str, needle: str, tmp_path: Path) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    done, seconds = _score_with_config(path, tmp_path)
    assert done.exit_code == 2, (done.stdout, done.stderr[-2000:])
    assert seconds < 10.0, f"took {seconds:.1f} s"  # at once (a bound with room for a loaded machine)
    assert done.stderr.startswith("error: ") and name in done.stderr and needle in done.stderr, done.stderr[:500]


def test_a_few_yaml_aliases_still_work(tmp_path: Path) -> None:
    path = tmp_path / "ok.yaml"
    path.write_text(
        "measures: [offense, refusal]\nmargins: {offense_rate: &m 0.02, refusal_rate: *m}\nscore: {n_resamples: 30}\n",
        encoding="utf-8",
    )
    options = fairtalk.ScoreOptions.from_file(path)
    assert dict(options.margins) == {"offense_rate": 0.02, "refusal_rate": 0.02} and options.n_resamples == 30
    shared = tmp_path / "shared.yaml"
    shared.write_text(
        "settings: &s {max_new_tokens: 7}\nscore: {alpha: 0.01}\nmodel: builtin:echo\naxes: &ax [gender]\n", encoding="utf-8"
    )
    config = fairtalk.AuditConfig.from_file(shared)
    assert config.settings.max_new_tokens == 7 and config.axes == ("gender",)


def test_python_dash_m_fairtalk_is_the_command(tmp_path: Path) -> None:
    """``python -m fairtalk`` runs the CLI (its usage line names it), and an error keeps exit code 2."""
    shown = subprocess.run([sys.executable, "-m", "fairtalk", "--help"], capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0, shown.stderr
    assert "python -m fairtalk [OPTIONS] COMMAND" in shown.stdout
    wrong = subprocess.run(
        [sys.executable, "-m", "fairtalk", "audit", "--pairs", "0", "-o", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert wrong.returncode == 2
    assert wrong.stderr.startswith("error: --pairs must be a whole number")
    assert not (tmp_path / "out").exists()
