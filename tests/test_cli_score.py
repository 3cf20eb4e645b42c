"""`fairtalk score`: end to end on small synthetic responses; exit codes 0/1/2; the report files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fairtalk.cli import app

runner = CliRunner()

_KIND = ("That is wonderful, I love it, great job!", "I hate you, you stupid idiot, this is awful and terrible.")
_NEUTRAL = ("ok see you tomorrow", "what time is it", "i went to the store", "maybe later", "he said hi")


def _write(path, pairs):  # noqa: ANN001, ANN202
    with path.open("w", encoding="utf-8") as f:
        for i, (a, b) in enumerate(pairs):
            f.write(json.dumps({"pair_id": f"p{i}", "side": "a", "context": f"he said {i}", "response": a}) + "\n")
            f.write(json.dumps({"pair_id": f"p{i}", "side": "b", "context": f"she said {i}", "response": b}) + "\n")
    return path


@pytest.fixture
def biased(tmp_path):  # noqa: ANN001, ANN201
    """Side A gets kind replies, side B insults: every sentiment/offense test should reject."""
    return _write(tmp_path / "biased.jsonl", [_KIND] * 40 + [(t, t) for t in _NEUTRAL * 4])


@pytest.fixture
def unbiased(tmp_path):  # noqa: ANN001, ANN201
    """Both sides answer identically: no difference anywhere."""
    texts = _NEUTRAL + _KIND
    return _write(tmp_path / "unbiased.jsonl", [(texts[i % len(texts)],) * 2 for i in range(60)])


def _score(*args: str, input: str | None = None):  # noqa: ANN202, A002
    return runner.invoke(app, ["score", *args, "--resamples", "200"], input=input)


def test_biased_responses_fail_the_gate(biased, tmp_path) -> None:
    out = tmp_path / "report"
    done = _score("--responses", str(biased), "--axis", "gender", "-o", str(out), "--fail-on-bias")
    assert done.exit_code == 1, done.output
    for name in ("results.json", "results.csv", "report.md", "report.html"):
        assert (out / name).is_file()
        assert f"wrote {out / name}" in " ".join(done.output.split())
    data = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert data["axis"] == "gender" and data["n_pairs"] == 60
    assert data["measures"]["sentiment_positive"]["p_adjusted"] < 0.05
    assert "offense_rate" in done.output and "difference detected (adjusted p < 0.05)" in done.output


def test_biased_without_the_flag_exits_zero(biased, tmp_path) -> None:
    done = _score("--responses", str(biased), "--axis", "gender", "-o", str(tmp_path / "r"))
    assert done.exit_code == 0, done.output


def test_unbiased_responses_pass_the_gate(unbiased, tmp_path) -> None:
    done = _score("--responses", str(unbiased), "--axis", "gender", "-o", str(tmp_path / "r"), "--fail-on-bias")
    assert done.exit_code == 0, done.output
    assert "no difference detected" in done.output


def test_two_file_layout(tmp_path) -> None:
    (tmp_path / "a.txt").write_text("\n".join([_KIND[0]] * 30) + "\n", encoding="utf-8")
    (tmp_path / "b.txt").write_text("\n".join([_KIND[1]] * 30) + "\n", encoding="utf-8")
    out = tmp_path / "r"
    done = _score(
        "--responses",
        str(tmp_path / "a.txt"),
        "--responses-b",
        str(tmp_path / "b.txt"),
        "--axis",
        "gender",
        "-o",
        str(out),
        "--fail-on-bias",
        "--correction",
        "bh",
    )
    assert done.exit_code == 1, done.output
    assert json.loads((out / "results.json").read_text())["correction"] == "bh"


@pytest.mark.parametrize("jsonl_side", ["a", "b"])
def test_a_jsonl_file_in_the_two_file_layout_is_refused(biased, tmp_path, jsonl_side) -> None:
    """--responses-b takes plain text: a JSONL file beside it would have its records scored as answers."""
    text = tmp_path / "b.txt"
    text.write_text("\n" + "\n".join([_KIND[0]] * 120) + "\n", encoding="utf-8")
    first, second = (biased, text) if jsonl_side == "a" else (text, biased)
    out = tmp_path / "r"
    done = _score("--responses", str(first), "--responses-b", str(second), "--axis", "gender", "-o", str(out))
    assert done.exit_code == 2, done.output
    assert "error: --responses-b takes plain-text answers, one per line" in done.stderr
    assert "goes alone in --responses" in done.stderr and str(biased.name) in done.stderr
    assert not (out / "results.json").exists()


def test_missing_file_is_a_clean_error(tmp_path) -> None:
    done = _score("--responses", str(tmp_path / "nope.jsonl"), "--axis", "gender", "-o", str(tmp_path / "r"))
    assert done.exit_code == 2
    assert "error:" in done.stderr and "nope.jsonl" in done.stderr
    assert "Traceback" not in done.output


def test_malformed_file_names_the_line(tmp_path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"pair_id": "p0", "side": "a", "context": "c", "response": "r"}\n{not json\n', encoding="utf-8")
    done = _score("--responses", str(bad), "--axis", "gender", "-o", str(tmp_path / "r"))
    assert done.exit_code == 2
    assert f"{bad}:2:" in done.stderr.replace("\n", "")
    assert "Traceback" not in done.output


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("--axis", "nosuchaxis"), "nosuchaxis"),
        ((), "--axis"),
    ],
)
def test_bad_options_are_clean_errors(unbiased, tmp_path, args, needle) -> None:
    done = _score("--responses", str(unbiased), "-o", str(tmp_path / "r"), *args)
    assert done.exit_code == 2, done.output
    assert "error:" in done.stderr and needle in done.stderr
    assert "Traceback" not in done.output
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize(
    ("args", "choices"),
    [
        (("--correction", "bonferroni"), "'bonferroni' is not one of 'holm', 'bh'"),
        (("--distinct", "weird"), "'weird' is not one of 'paper', 'standard'"),
        (("--binary-test", "fisher"), "'fisher' is not one of 'score', 'exact', 'midp'"),
        (("--count-test", "median"), "'median' is not one of 'mean', 'wilcoxon'"),
    ],
)
def test_a_typo_in_a_choice_exits_2_naming_the_choices(unbiased, tmp_path, args, choices) -> None:
    done = _score("--responses", str(unbiased), "--axis", "gender", "-o", str(tmp_path / "r"), *args)
    assert done.exit_code == 2, done.output
    flat = " ".join(done.stderr.replace("│", " ").split())  # click's boxed errors wrap
    assert f"Invalid value for '{args[0]}'" in flat and choices in flat
    assert "Traceback" not in done.output
    assert not (tmp_path / "r").exists()


def _results(out) -> dict:  # noqa: ANN001
    return json.loads((out / "results.json").read_text(encoding="utf-8"))


def test_tests_are_chosen_by_the_options(biased, tmp_path) -> None:
    default = tmp_path / "default"
    assert _score("--responses", str(biased), "--axis", "gender", "-o", str(default)).exit_code == 0
    measures = _results(default)["measures"]
    assert measures["offense_rate"]["paired_test"] == "score" and measures["offense_rate"]["ci_method"] == "score"
    assert measures["length"]["paired_test"] in ("paired_t", "signflip_exact")
    assert measures["length"]["estimate_name"] == "mean difference"
    other = tmp_path / "other"
    done = _score(
        "--responses", str(biased), "--axis", "gender", "-o", str(other), "--binary-test", "midp", "--count-test", "wilcoxon"
    )
    assert done.exit_code == 0, done.output
    measures = _results(other)["measures"]
    assert measures["offense_rate"]["paired_test"] == "mcnemar_midp" and measures["offense_rate"]["ci_method"] == "newcombe"
    assert measures["length"]["paired_test"].startswith("wilcoxon")
    assert measures["length"]["estimate_name"] == "hodges-lehmann" and measures["length"]["ci_method"] == "hodges-lehmann"


def test_primary_keys_form_the_family_and_the_gate(biased, tmp_path) -> None:
    out = tmp_path / "r"
    done = _score("--responses", str(biased), "--axis", "gender", "-o", str(out), "--primary", "length", "--fail-on-bias")
    data = _results(out)
    assert data["family_size"] == 1
    assert [k for k, m in data["measures"].items() if m["primary"]] == ["length"]
    assert data["measures"]["offense_rate"]["p_adjusted"] < 0.05  # detected, but secondary: not the gate
    assert done.exit_code == (1 if data["measures"]["length"]["p_adjusted"] < 0.05 else 0), done.output


def test_equivalence_gate_and_margins(unbiased, tmp_path) -> None:
    tight = tmp_path / "tight"
    done = _score("--responses", str(unbiased), "--axis", "gender", "-o", str(tight), "--fail-unless-equivalent")
    assert done.exit_code == 1, done.output  # 60 identical pairs cannot show a rate within ±2 points
    assert "not shown equivalent" in done.output
    assert _results(tight)["measures"]["offense_rate"]["verdict"] == "inconclusive"
    wide = tmp_path / "wide"
    done = _score(
        "--responses",
        str(unbiased),
        "--axis",
        "gender",
        "-o",
        str(wide),
        "--primary",
        "offense_rate",
        "--margin",
        "offense_rate=0.2",
        "--fail-unless-equivalent",
    )
    assert done.exit_code == 0, done.output
    row = _results(wide)["measures"]["offense_rate"]
    assert row["equivalence_margin"] == 0.2 and row["equivalent"] is True and row["verdict"] == "equivalent"


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("--margin", "offense_rate"), "expected MEASURE=VALUE"),
        (("--margin", "offense_rate=-1"), "finite number > 0"),
        (("--margin", "offense_rate=inf"), "finite number > 0"),
        (("--margin", "nosuch=0.1"), "nosuch"),
        (("--primary", "nosuch"), "nosuch"),
        (
            ("--margin", "offense_rate=2"),
            "offense_rate's margin is a fraction: 2 would allow any difference; for 2 pp give 0.02",
        ),
        (("--margin", "offense_rate=1"), "offense_rate's margin is a fraction: 1 would allow any difference"),
    ],
)
def test_bad_inference_options_are_clean_errors(unbiased, tmp_path, args, needle) -> None:
    done = _score("--responses", str(unbiased), "--axis", "gender", "-o", str(tmp_path / "r"), *args)
    assert done.exit_code == 2, done.output
    assert "error:" in done.stderr and needle in done.stderr
    assert "Traceback" not in done.output


def test_measures_are_selectable_and_unknown_ones_are_clean_errors(biased, tmp_path) -> None:
    out = tmp_path / "r"
    done = _score("--responses", str(biased), "--axis", "gender", "-o", str(out), "--measures", "offense,length")
    assert done.exit_code == 0, done.output
    assert set(_results(out)["measures"]) == {"offense_rate", "length"}
    bad = _score("--responses", str(biased), "--axis", "gender", "-o", str(tmp_path / "b"), "--measures", "ofense")
    assert bad.exit_code == 2 and "ofense" in bad.stderr and "Traceback" not in bad.output


@pytest.fixture
def shouting(monkeypatch):  # noqa: ANN001, ANN201
    """A plugin measure, registered for this test only."""
    import fairtalk.measures._registry as registry
    from audit_toys import Shouting

    monkeypatch.setattr(registry, "MEASURES", registry.MEASURES.fresh())
    registry.register_measure("shouting", Shouting)
    return Shouting


def test_a_plugin_measure_is_selectable_with_measures(shouting, tmp_path) -> None:
    path = _write(tmp_path / "shout.jsonl", [("I SAID NO", "i said no")] * 20 + [(t, t) for t in _NEUTRAL * 4])
    out = tmp_path / "r"
    done = _score("--responses", str(path), "--axis", "gender", "-o", str(out), "--measures", "shouting,length", "--fail-on-bias")
    assert done.exit_code == 1, done.output
    data = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert set(data["measures"]) == {"shouting_rate", "length"}
    assert data["measures"]["shouting_rate"]["p_adjusted"] < 0.05
    divergent = data["divergent_pairs"]
    assert divergent and {d["measure"] for d in divergent} == {"shouting"}  # ranked by its own raw_scores


def test_an_unknown_measure_says_did_you_mean(shouting, tmp_path) -> None:
    path = _write(tmp_path / "r.jsonl", [(t, t) for t in _NEUTRAL * 4])
    done = _score("--responses", str(path), "--axis", "gender", "-o", str(tmp_path / "r"), "--measures", "shoutng")
    assert done.exit_code == 2
    assert "unknown measure 'shoutng'; did you mean 'shouting'?" in done.stderr
    assert "shouting" in done.stderr.split("choose from:")[1]


def test_conflicting_duplicate_responses_are_an_input_error(unbiased, tmp_path) -> None:
    """A second, different answer for a pair's side would decide the gate by file order: exit 2, nothing written."""
    extra = json.dumps({"pair_id": "p3", "side": "b", "context": "she said 3", "response": "you stupid idiot"})
    with unbiased.open("a", encoding="utf-8") as f:
        f.write(extra + "\n")
    out = tmp_path / "r"
    done = _score("--responses", str(unbiased), "--axis", "gender", "-o", str(out), "--fail-unless-equivalent")
    assert done.exit_code == 2, done.output
    assert "error:" in done.output and "Traceback" not in done.output
    assert "1 conflicting duplicate record(s): pair 'p3' side b at line 121" in done.output.replace("\n", "")
    assert not (out / "results.json").exists()


def test_a_rate_margin_of_1_or_more_is_refused_from_a_config_and_the_library(biased, tmp_path) -> None:
    """A rate's margin is a fraction: "5" meant 5 points would pass any gap; a count's margin is in its units."""
    import fairtalk
    from fairtalk.errors import SpecError

    config = tmp_path / "c.toml"
    config.write_text("margins = { offense_rate = 5 }\n", encoding="utf-8")
    out = tmp_path / "r"
    args = ("--responses", str(biased), "--axis", "gender", "-o", str(out), "--fail-unless-equivalent", "--config", str(config))
    done = _score(*args)
    assert done.exit_code == 2, done.output
    assert "offense_rate's margin is a fraction: 5 would allow any difference; for 5 pp give 0.05" in done.stderr
    assert not (out / "results.json").exists()
    with pytest.raises(SpecError, match="offense_rate's margin is a fraction: 2 would"):
        fairtalk.score(biased, axis="gender", margins={"offense_rate": 2})
    ok = fairtalk.score(biased, axis="gender", measures="length", margins={"length": 5}, n_resamples=50)
    assert ok.measure("length").equivalence_margin == 5


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ("", "error: standard input: need at least 2 complete pairs to compare the sides, got 0"),
        ('{"x": 1}\n', "error: standard input:1: missing field 'pair_id'"),
    ],
)
def test_errors_in_standard_input_name_it_not_a_temporary_file(tmp_path, given: str, message: str) -> None:
    done = runner.invoke(app, ["score", "--responses", "-", "--axis", "gender", "-o", str(tmp_path / "r")], input=given)
    assert done.exit_code == 2, done.output
    assert message in done.stderr and "fairtalk-stdin-" not in done.stderr


def test_results_json_records_standard_input_not_its_temporary_copy(biased, tmp_path) -> None:
    import hashlib

    given = biased.read_text(encoding="utf-8")
    out = tmp_path / "r"
    done = _score("--responses", "-", "--axis", "gender", "-o", str(out), "--measures", "length", input=given)
    assert done.exit_code == 0, done.output
    sources = json.loads((out / "results.json").read_text())["manifest"]["input"]["sources"]
    assert sources == [{"path": "standard input", "sha256": hashlib.sha256(given.encode()).hexdigest()}]
    for name in ("results.json", "report.html", "report.md"):
        assert "fairtalk-stdin-" not in (out / name).read_text(encoding="utf-8"), name


@pytest.mark.parametrize(
    ("flag", "value", "message"),
    [
        ("--alpha", "nan", "--alpha must be between 0 and 1 (exclusive) and at least 1e-10, got nan"),
        ("--alpha", "2", "--alpha must be between 0 and 1 (exclusive) and at least 1e-10, got 2.0"),
        ("--alpha", "inf", "--alpha must be between 0 and 1 (exclusive) and at least 1e-10, got inf"),
        ("--power", "nan", "--power must be between 0 and 1 (exclusive) and at most 0.9999, got nan"),
        ("--offense-threshold", "nan", "--offense-threshold must be a number in [0, 1], got nan"),
    ],
)
def test_a_fraction_option_that_is_not_a_number_in_its_range_says_what_it_must_be(
    biased, tmp_path, flag: str, value: str, message: str
) -> None:
    for command in (
        ["score", "--responses", str(biased), "--axis", "gender"],
        ["audit", "--model", "builtin:echo", "--axis", "gender", "--pairs", "5"],
    ):
        done = runner.invoke(app, [*command, "-o", str(tmp_path / "r"), flag, value])
        assert done.exit_code == 2, (command, done.output)
        assert f"error: {message}" in done.stderr, (command, done.stderr)
        assert "less than or equal" not in done.stderr and not (tmp_path / "r").exists()


def test_the_help_shows_each_fraction_option_s_interval() -> None:
    shown = " ".join(runner.invoke(app, ["score", "--help"], env={"COLUMNS": "200"}).output.split())
    for interval in ("<float in [1e-10, 1)>", "<float in (0, 0.9999]>", "<float in [0, 1]>"):
        assert interval in shown, interval


def test_pairs_with_the_same_context_on_both_sides_are_left_out_and_counted_in_a_warning(unbiased, tmp_path) -> None:
    rows = [json.loads(line) for line in unbiased.read_text().splitlines()]
    for row in rows:
        if int(row["pair_id"][1:]) < 15:  # 15 of the 60 pairs ask both sides "he said i"
            row["context"] = row["context"].replace("she said", "he said")
    same = tmp_path / "same.jsonl"
    same.write_text("".join(json.dumps(row) + "\n" for row in rows))
    expected = "15 of 60 pairs have the same context on both sides: they are not counterfactual pairs"
    result = _score("--responses", str(same), "--axis", "gender", "-o", str(tmp_path / "out"), "--measures", "length")
    assert result.exit_code == 0, result.output
    assert f"warning: {expected}" in " ".join(result.output.split())
    warnings = json.loads((tmp_path / "out" / "results.json").read_text())["warnings"]
    assert [w for w in warnings if w.startswith(expected)] and expected in (tmp_path / "out" / "report.md").read_text()
    data = json.loads((tmp_path / "out" / "results.json").read_text())
    assert (data["n_pairs"], data["input_summary"]["n_same_context_dropped"]) == (45, 15)  # left out of the tests
    assert "the tests compare the 45 pairs whose sides differ" in " ".join(result.output.split())
    clean = _score("--responses", str(unbiased), "--axis", "gender", "-o", str(tmp_path / "clean"), "--measures", "length")
    assert clean.exit_code == 0 and "same context" not in clean.output


@pytest.mark.parametrize(("gate", "fixture"), [("--fail-on-bias", "biased"), ("--fail-on-bias", "unbiased")])
def test_score_json_holds_the_gate_requested_and_its_outcome_is_the_exit_code(
    gate: str, fixture: str, request: pytest.FixtureRequest, tmp_path
) -> None:
    """Review finding: `score --json` did not carry the gate's outcome that `audit --json` holds in `gates`."""
    responses = request.getfixturevalue(fixture)
    done = _score("--responses", str(responses), "--axis", "gender", "-o", str(tmp_path / "r"), gate, "--json", "-q")
    assert done.exit_code in (0, 1), done.output
    document = json.loads(done.stdout)
    (outcome,) = document["gates"]
    assert outcome["gate"] == gate.removeprefix("--") and outcome["passed"] is (done.exit_code == 0)
    assert outcome["passed"] is (fixture == "unbiased")
    assert outcome["headline"].startswith(f"Gate {outcome['gate']}: {'passed' if outcome['passed'] else 'FAILED'}")
    assert {k: v for k, v in document.items() if k != "gates"} == json.loads((tmp_path / "r" / "results.json").read_text())
    done = _score("--responses", str(responses), "--axis", "gender", "-o", str(tmp_path / "plain"), "--json", "-q")
    assert done.exit_code == 0 and "gates" not in json.loads(done.stdout)


def test_score_report_states_the_gate_requested_and_only_then(biased, tmp_path) -> None:
    """Review finding: report.md and report.html of `score -o DIR --fail-on-bias` did not say whether the gate passed."""
    done = _score("--responses", str(biased), "--axis", "gender", "-o", str(tmp_path / "g"), "--fail-on-bias", "-q")
    assert done.exit_code == 1, done.output
    md = (tmp_path / "g" / "report.md").read_text(encoding="utf-8")
    assert "## Gate requested" in md and "**Gate fail-on-bias: FAILED — " in md
    assert "On this axis (gender): FAILED." in md and "- offense\\_rate: FAILED — difference detected" in md
    html = (tmp_path / "g" / "report.html").read_text(encoding="utf-8")
    assert 'data-gate="fail-on-bias" data-passed="false"' in html and "Gate fail-on-bias: FAILED" in html
    done = _score("--responses", str(biased), "--axis", "gender", "-o", str(tmp_path / "n"), "-q")
    assert done.exit_code == 0, done.output
    md = (tmp_path / "n" / "report.md").read_text(encoding="utf-8")
    html = (tmp_path / "n" / "report.html").read_text(encoding="utf-8")
    assert "Gate requested" not in md and "Gate fail-" not in md and "data-gate" not in html and "Gate fail-" not in html


def test_a_config_files_bad_margin_key_and_audit_options_are_errors_naming_the_file(biased, tmp_path) -> None:
    """score --config: a misspelt margin key names the file (as audit's does); an audit's run option says whose it is."""
    config = tmp_path / "c.toml"
    config.write_text("[margins]\noffense_ratee = 0.02\n", encoding="utf-8")
    out = tmp_path / "r"
    done = _score("--responses", str(biased), "--axis", "gender", "-o", str(out), "--config", str(config))
    assert done.exit_code == 2, done.output
    assert f"error: {config}: unknown margin measure key 'offense_ratee'; did you mean 'offense_rate'?" in done.stderr
    given = _score(
        "--responses", str(biased), "--axis", "gender", "-o", str(out), "--config", str(config), "--margin", "length=3"
    )
    assert given.exit_code == 2 and f"error: {config}: unknown margin measure key 'offense_ratee'" in given.stderr
    config.write_text("n_pairs = 100\nalpha = 0.01\n", encoding="utf-8")
    done = _score("--responses", str(biased), "--axis", "gender", "-o", str(out), "--config", str(config))
    assert done.exit_code == 2, done.output
    assert f"error: {config}: 'n_pairs' is an audit option, not a score option" in done.stderr
    assert not (out / "results.json").exists()


def test_the_report_is_titled_score_and_names_the_responses_it_read(biased, tmp_path) -> None:
    """Review finding: score's pages were titled "fairtalk audit: gender" and nothing named the responses file."""
    import hashlib

    out = tmp_path / "r"
    done = _score("--responses", str(biased), "--axis", "gender", "--measures", "length", "-o", str(out))
    assert done.exit_code == 0, done.output
    sha = hashlib.sha256(biased.read_bytes()).hexdigest()
    line = f"scored from {biased} (sha256 {sha[:12]}…)"
    assert line in " ".join(done.output.split())
    md = (out / "report.md").read_text(encoding="utf-8")
    assert md.startswith("# fairtalk score: gender (male vs female)\n")
    assert line.replace("_", "\\_") in md  # as Markdown escapes it
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "<title>fairtalk score: gender (male vs female)</title>" in html and "<h1>fairtalk score: gender" in html
    assert line in html and "fairtalk audit" not in html


@pytest.mark.parametrize("how", ["same", "dotted", "symlink", "hardlink"])
def test_one_file_as_both_sides_of_the_two_file_layout_is_refused(tmp_path, monkeypatch, how) -> None:
    """Review finding: a.txt as --responses and --responses-b passed --fail-unless-equivalent (every pair identical)."""
    monkeypatch.chdir(tmp_path)
    Path("a.txt").write_text("\n".join(_NEUTRAL * 60) + "\n", encoding="utf-8")
    other = {"same": "a.txt", "dotted": "./a.txt", "symlink": "link.txt", "hardlink": "hard.txt"}[how]
    if how == "symlink":
        Path("link.txt").symlink_to(tmp_path / "a.txt")
    elif how == "hardlink":
        Path("hard.txt").hardlink_to("a.txt")
    args = ("--responses", "a.txt", "--responses-b", other, "--axis", "gender", "-o", "out", "--fail-unless-equivalent")
    done = _score(*args)
    assert done.exit_code == 2, done.output
    assert f"error: --responses-b {other} is the same file as --responses a.txt" in " ".join(done.stderr.split())
    assert not Path("out").exists()
