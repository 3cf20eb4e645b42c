"""``fairtalk.testing``: the bias assertions, on real audits of a fair and a biased reply function."""

from __future__ import annotations

import dataclasses
import json
import math
import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from pathlib import Path

import pytest
from tests.integrations._toys import SMALL, biased, fair, silent

import fairtalk
from fairtalk.errors import SpecError
from fairtalk.gates import evaluate
from fairtalk.report import junit_xml, write_junit
from fairtalk.testing import WRAP_WIDTH, BiasAssertionError, assert_no_bias, assert_not_worse, audit_options


def _unwrapped(message: object) -> list[str]:
    """The lines of a failure message before wrapping: a line indented four spaces continues the one before."""
    lines: list[str] = []
    for line in str(message).splitlines():
        if line.startswith("    ") and lines:
            lines[-1] += " " + line.strip()
        else:
            lines.append(line)
    return lines


def test_a_fair_model_passes_and_its_report_is_where_asked(tmp_path: Path) -> None:
    run = assert_no_bias(fair, **SMALL, out_dir=tmp_path / "out")
    assert run.detected() == ()
    page = (tmp_path / "out" / "gender" / "report.md").read_text(encoding="utf-8")
    assert "Gate fail-on-bias: passed" in page


def test_a_biased_model_fails_naming_each_measure_its_gap_interval_p_and_the_report(tmp_path: Path) -> None:
    with pytest.raises(BiasAssertionError) as caught:
        assert_no_bias(biased, **SMALL, out_dir=tmp_path / "out")
    error = caught.value
    assert isinstance(error, AssertionError)
    assert error.failing == ("gender/offense_rate", "gender/length")
    assert error.report == tmp_path / "out" / "index.html" and error.report.is_file()
    lines = _unwrapped(error)
    assert (
        lines[0].startswith("fairtalk: bias detected in python:")
        and "(fail-on-bias, alpha 0.05; pairs per axis: gender 20)" in lines[0]
    )
    assert re.fullmatch(
        r"  gender/offense_rate: A 0% vs B \d+(\.\d+)?%, gap -\d+\.\d\d pp \(95% CI \[-\d+\.\d\d pp, -\d+\.\d\d pp\]\), "
        r"adjusted p [\d.e-]+ \(\w+\), margin ±2\.00 pp, equivalence p [\d.]+: difference detected",
        lines[1],
    ), lines[1]
    assert lines[-1] == f"report: {tmp_path / 'out' / 'index.html'}"
    page = (tmp_path / "out" / "gender" / "report.md").read_text(encoding="utf-8")
    assert "## Gate requested" in page and "Gate fail-on-bias: FAILED" in page, "the report states the gate it raised on"
    assert "fail-on-bias" in error.report.read_text(encoding="utf-8")


def test_the_interval_is_called_the_95_percent_one_it_is_whatever_the_alpha(tmp_path: Path) -> None:
    """Review finding: with alpha 0.1 the assertion called results.json's ``ci95`` bounds a "90% CI"."""
    config = fairtalk.AuditConfig.from_mapping({"alpha": 0.1})
    with pytest.raises(BiasAssertionError) as caught:
        assert_no_bias(biased, **SMALL, config=config, out_dir=tmp_path)
    lines = _unwrapped(caught.value)
    assert "(fail-on-bias, alpha 0.1; pairs per axis: gender 20)" in lines[0], lines[0]
    low, high = json.loads((tmp_path / "gender" / "results.json").read_text(encoding="utf-8"))["measures"]["offense_rate"]["ci95"]
    assert f"(95% CI [{100 * low:+.2f} pp, {100 * high:+.2f} pp])" in lines[1], lines[1]
    assert "90% CI" not in str(caught.value)


def test_a_margin_makes_the_gate_equivalence(tmp_path: Path) -> None:
    """With a margin the gate is fail-unless-equivalent: 20 pairs cannot show a ±0.01 equivalence."""
    with pytest.raises(BiasAssertionError, match="(?s)measures not shown equivalent .*fail-unless-equivalent") as caught:
        assert_no_bias(fair, **SMALL, margin={"offense_rate": 0.01}, out_dir=tmp_path)
    assert "gender/offense_rate" in caught.value.failing
    assert "margin ±1.00 pp" in "\n".join(_unwrapped(caught.value))
    # Review finding: a key answered identically on every pair read only "equivalence p …: inconclusive",
    # not what the exact rule that decided it needs (the gate's reason, as the JUnit file gives it).
    line = next(line for line in _unwrapped(caught.value) if line.startswith("  gender/offense_rate:"))
    assert re.search(r": not shown equivalent: identical on all 20 pairs .*; equivalence needs \d+ \w+ all identical", line), line
    assert assert_no_bias(fair, **SMALL, margin={"offense_rate": 0.01}, gate="fail-on-bias", out_dir=tmp_path / "b")


def test_the_failure_message_gives_the_figures_as_the_junit_file_of_the_same_audit(tmp_path: Path) -> None:
    """Review finding: the message said "gap -0.4833 (95% CI -0.609 to -0.3597)" where the JUnit file says "-48.33 pp"."""
    with pytest.raises(BiasAssertionError) as caught:
        assert_no_bias(biased, **SMALL, out_dir=tmp_path)
    result = fairtalk.AuditResult.read_json(tmp_path / "gender" / "results.json")
    failures = {case.get("name"): case.find("failure") for case in ET.fromstring(junit_xml({"gender": result})).iter("testcase")}
    for key in ("offense_rate", "length"):
        junit = failures[key]
        assert junit is not None
        found = re.search(r"gap ([^,]+), (95% CI \[.*?\]), .*margin (±[^,]+)", junit.get("message", ""))
        assert found is not None, junit.get("message")
        gap, interval, margin = found.groups()
        line = next(line for line in _unwrapped(caught.value) if line.startswith(f"  gender/{key}:"))
        assert f"gap {gap} ({interval})" in line and f"margin {margin}," in line, (line, junit.get("message"))
    assert "gap -" in str(caught.value) and " pp (95% CI [-" in "\n".join(_unwrapped(caught.value))


@pytest.mark.parametrize("gate", ["fail-if-worse", "nope", 5])
def test_an_unknown_gate_is_a_spec_error_before_any_work(gate: object) -> None:
    """Review finding: ``gate="nope"`` raised a raw ValueError where ``audit(gates=["fail"])`` raises a SpecError."""
    calls: list[str] = []
    with pytest.raises(SpecError, match=r"assert_no_bias takes fail-on-bias or fail-unless-equivalent") as caught:
        assert_no_bias(calls.append, gate=gate)  # type: ignore[arg-type]
    assert f"unknown gate {gate!r}" in str(caught.value) and "assert_not_worse" in str(caught.value)
    assert calls == []


@pytest.mark.parametrize("margin", ["offense_rate=0.02", 0.02, [("offense_rate", 0.02)]])
def test_a_margin_that_is_no_mapping_is_a_spec_error_saying_what_is_accepted(margin: object) -> None:
    """Review finding: ``margin="offense_rate=0.02"`` gave "TypeError: 'str' object is not a mapping"."""
    calls: list[str] = []
    for check in (assert_no_bias, lambda model, **kw: assert_not_worse(model, model, **kw)):
        with pytest.raises(SpecError, match=r"margin must be a mapping of result keys .*\{'offense_rate': 0\.02\} for 2 pp"):
            check(calls.append, axes="gender", n_pairs=20, margin=margin)
    assert calls == []


@pytest.mark.parametrize(
    ("margin", "said"),
    [
        ({"offense_rate": -0.02}, "non-inferiority margin of 'offense_rate' must be a finite number > 0 .* got -0.02"),
        ({"offense_rate": "x"}, "non-inferiority margin of 'offense_rate' must be a finite number > 0 .* got 'x'"),
        ({"offense_rate": math.nan}, "must be a finite number > 0 .* got nan"),
        ({"offense_rate": math.inf}, "must be a finite number > 0 .* got inf"),
        ({"offense_rate": True}, "must be a finite number > 0 .* got True"),
        ({"offense_rate": 2.0}, "offense_rate's margin is a fraction: 2 would allow any difference; for 2 pp give 0.02"),
        ({"length_mean": 0.1}, "unknown margin key 'length_mean'.*; did you mean 'length'\\?"),
        ({"distinct_1": 0.1}, "unknown margin key 'distinct_1': no key the comparison of gender tests"),
    ],
)
def test_assert_not_worse_checks_its_margins_before_either_audit(margin: dict[str, object], said: str) -> None:
    """Review finding: a bad margin was found only after both audits (400 model calls), some as a raw ValueError or TypeError.

    ``distinct_1`` is a key the audit gives but the comparison does not test (a corpus-level measure).
    """
    calls: list[str] = []

    def model(text: str) -> str:
        calls.append(text)
        return "ok"

    with pytest.raises(SpecError, match=said):
        assert_not_worse(model, model, axes="gender", n_pairs=20, margin=margin)
    assert calls == [], "no audit ran"


def test_assert_not_worse_checks_margin_keys_against_the_measures_given() -> None:
    """A key is known or not by the measures of the audits: ``length`` with offense alone is refused before any audit."""
    calls: list[str] = []
    with pytest.raises(SpecError, match="unknown margin key 'length'.*choose from: offense_rate\\)"):
        assert_not_worse(calls.append, calls.append, axes="gender", n_pairs=20, measures="offense", margin={"length": 0.1})
    assert calls == []


def test_options_layer_over_a_config() -> None:
    config = fairtalk.AuditConfig.from_mapping({"axes": "race", "n_pairs": 50, "margins": {"length": 0.5}})
    resolved = audit_options(config, n_pairs=20, margin={"offense_rate": 0.01}, measures="offense")
    assert resolved.axes == ("race",) and resolved.n_pairs == 20 and resolved.score.measures == ("offense",)
    assert dict(resolved.score.margins) == {"length": 0.5, "offense_rate": 0.01}
    assert audit_options(None) == fairtalk.AuditConfig()


def production(text: str) -> str:
    """The baseline of the comparisons: another model, with ``fair``'s answers."""
    return "that is lovely, i am so happy for you"


def test_not_worse_fails_identical_answers_on_20_pairs_saying_how_many_more_and_fails_a_regression(
    tmp_path: Path,
) -> None:
    """A model's answers identical to the baseline's on 20 pairs show nothing: the gate says how many more it needs."""
    with pytest.raises(BiasAssertionError) as same:
        assert_not_worse(fair, production, **SMALL, out_dir=tmp_path / "same")
    assert same.value.failing == ("gender/offense_rate", "gender/length")
    assert re.search(
        r"  gender/offense_rate: baseline gap .*, margin ±2\.00 pp: inconclusive; not shown non-inferior: the same gap on "
        r"all \d+ (pairs|dialogues) in both runs, too few for the exact identical-answers bound \(it needs 299 \w+, \d+ more",
        "\n".join(_unwrapped(same.value)),
    ), str(same.value)
    assert (tmp_path / "same" / "comparison" / "report.md").is_file()
    with pytest.raises(BiasAssertionError) as caught:
        assert_not_worse(biased, fair, **SMALL, out_dir=tmp_path / "worse")
    text = "\n".join(_unwrapped(caught.value))
    assert text.startswith("fairtalk: python:") and "is not shown non-inferior to python:" in text
    assert re.search(
        r"gender/offense_rate: baseline gap \+0\.00 pp \(95% CI \[-[\d.]+ pp, \+[\d.]+ pp\]\), candidate gap -\d+\.\d\d pp "
        r"\(95% CI \[-[\d.]+ pp, -[\d.]+ pp\]\), change -\d+\.\d\d pp \(95% CI .*\), adjusted p [\d.e-]+, "
        r"margin ±2\.00 pp: regressed; not shown non-inferior \(\|candidate gap\| < \|baseline gap\| \+ margin ±2\.00 pp\)",
        text,
    ), text
    comparison = fairtalk.ModelComparison.read_json(tmp_path / "worse" / "comparison" / "results.json")
    junit = ET.parse(write_junit(comparison, tmp_path / "worse.xml")).getroot()
    (case,) = [case for case in junit.iter("testcase") if case.get("name") == "offense_rate"]
    message = case.find("failure").get("message", "")  # type: ignore[union-attr]
    change = re.search(r"change (\S+ pp) ", message)
    assert change is not None and f"change {change.group(1)} (95% CI" in text, (message, text)
    assert caught.value.report == tmp_path / "worse" / "comparison" / "report.md"
    assert text.endswith(f"report: {caught.value.report}")


def test_not_worse_refuses_the_candidate_as_its_own_baseline(tmp_path: Path) -> None:
    """Review finding: ``assert_not_worse(f, f)`` passed; one model cannot be shown not worse than itself.

    On 40 pairs at ±0.2 the identical-answers bound is met: another model with the same answers passes.
    """
    options = {"axes": "gender", "n_pairs": 40, "measures": ("offense",), "margin": {"offense_rate": 0.2}}
    assert assert_not_worse(fair, production, **options, out_dir=tmp_path / "two").same_run is None
    with pytest.raises(BiasAssertionError) as same:
        assert_not_worse(fair, fair, **options, out_dir=tmp_path / "one")
    assert same.value.failing == ("run",)
    assert (
        "the baseline and the candidate are two runs of the same model python:tests.integrations._toys:fair with the same "
        "decoding settings: a model cannot be shown not worse than itself"
    ) in "\n".join(_unwrapped(same.value))


def test_a_failure_the_labels_decided_ends_with_the_gates_reason_not_the_scorers_verdict(tmp_path: Path) -> None:
    """Review finding: with gold labels showing side a offensive on every pair, the message's key line ended
    "…: inconclusive" (the scorer's verdict) under a head line saying "bias detected"."""
    pairs = fairtalk.build_pairs(
        fairtalk.read_corpus("builtin:chitchat", split="heldout"), fairtalk.load_lexicon("gender"), limit=20, seed=0
    )
    gold = tmp_path / "gold.jsonl"
    rows = [{"pair_id": p.id, "side": side, "offense_rate": int(side == "a"), "annotator": "ana"} for p in pairs for side in "ab"]
    gold.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    config = fairtalk.AuditConfig().updated({"gold": str(gold)})
    with pytest.raises(BiasAssertionError) as caught:
        assert_no_bias(fair, **SMALL, config=config, out_dir=tmp_path / "out")
    assert caught.value.failing == ("gender/offense_rate",)
    (decision,) = evaluate(fairtalk.AuditRun.read_json(tmp_path / "out" / "run.json"), "fail-on-bias").failures
    assert decision.on == "labels"
    line = next(line for line in _unwrapped(caught.value) if line.startswith("  gender/offense_rate: A 0% vs B 0%, gap +0.00 pp"))
    assert line.endswith(f": {decision.reason}") and "the labels show a difference the scorer missed" in line, line


def test_an_empty_margin_selects_fail_unless_equivalent_with_the_default_margins(tmp_path: Path) -> None:
    """Review finding: ``margin={}`` is falsy, so the documented "margin → fail-unless-equivalent" picked fail-on-bias."""
    with pytest.raises(BiasAssertionError, match="(?s)measures not shown equivalent .*fail-unless-equivalent") as caught:
        assert_no_bias(fair, **SMALL, margin={}, out_dir=tmp_path)
    assert "margin ±2.00 pp" in "\n".join(_unwrapped(caught.value))  # offense_rate's default margin


def test_the_message_is_wrapped_and_a_whole_run_failure_is_said_once(tmp_path: Path) -> None:
    """Review finding: lines of 180-420 characters, and the empty answers' reason twice (its own line and the headline)."""
    with pytest.raises(BiasAssertionError) as caught:
        assert_no_bias(silent, **SMALL, out_dir=tmp_path)
    message = str(caught.value)
    # the report's path is never broken (it may be longer than the width on its own, as under xdist)
    long = [
        line
        for line in message.splitlines()
        if len(line) > WRAP_WIDTH and " " in line.strip() and not line.startswith("report: ")
    ]
    assert not long, long
    assert caught.value.failing == ("gender/length", "gender")
    assert " ".join(message.split()).count("the sides' empty answers differ") == 1, message
    lines = _unwrapped(caught.value)
    assert lines[1].startswith("  gender/length: ") and lines[2].startswith("Gate fail-on-bias: FAILED")
    assert lines[-1] == f"report: {tmp_path / 'index.html'}"


@pytest.fixture
def tmpdir_of_tempfile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder of its own as tempfile's, where the assertions' temporary folders go."""
    import tempfile

    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def _left(folder: Path) -> list[Path]:
    """What the assertions left in ``folder``: not the registry of held outputs that every fairtalk command shares."""
    return sorted(p for p in folder.iterdir() if not p.name.startswith("fairtalk-outputs-"))


def test_no_temporary_folder_is_left_by_a_passing_call_or_one_an_error_stops(tmpdir_of_tempfile: Path) -> None:
    """Review finding: each call without out_dir left a fairtalk-* folder in /tmp, on passing calls too."""
    assert_no_bias(fair, **SMALL)
    assert _left(tmpdir_of_tempfile) == []
    assert_not_worse(fair, biased, **SMALL)
    assert _left(tmpdir_of_tempfile) == []
    with pytest.raises(fairtalk.FairtalkError):  # an error (a model that cannot load) names no folder: none is kept
        assert_no_bias("python:nope.py:reply", **SMALL)
    assert _left(tmpdir_of_tempfile) == []


def test_a_failing_call_keeps_the_temporary_folder_its_message_names(tmpdir_of_tempfile: Path) -> None:
    with pytest.raises(BiasAssertionError) as caught:
        assert_no_bias(biased, **SMALL)
    (kept,) = _left(tmpdir_of_tempfile)
    assert caught.value.report == kept / "index.html" and caught.value.report.is_file()
    assert f"report: {kept / 'index.html'}" in str(caught.value)
    with pytest.raises(BiasAssertionError) as worse:
        assert_not_worse(biased, fair, **SMALL)
    assert worse.value.report.is_file() and worse.value.report.parent.parent.parent == tmpdir_of_tempfile
    assert f"report: {worse.value.report}" in str(worse.value)


def _strings(value: object) -> list[str]:
    """Every string a result holds: its dataclass fields, mappings and sequences, walked down (paths as strings)."""
    if isinstance(value, (str, Path)):
        return [str(value)]
    if isinstance(value, Mapping):
        return [s for k, v in value.items() for s in (*_strings(k), *_strings(v))]
    if isinstance(value, (list, tuple)):
        return [s for item in value for s in _strings(item)]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return [s for f in dataclasses.fields(value) for s in _strings(getattr(value, f.name))]
    return []


def test_what_a_passing_call_returns_names_nothing_in_its_removed_temporary_folder(tmpdir_of_tempfile: Path) -> None:
    """Review finding: after a passing call without out_dir, the run's out_dir named the temporary folder the call had
    removed; a user reading it found no report there."""
    run = assert_no_bias(fair, **SMALL)
    assert _left(tmpdir_of_tempfile) == []
    assert run.config["out_dir"] is None  # as fairtalk.audit records a run that wrote no report
    assert not [s for s in _strings(run) if str(tmpdir_of_tempfile) in s]
    assert run.results["gender"].n_pairs == 20  # the rest of the run is whole
    comparison = assert_not_worse(fair, biased, **SMALL)
    assert _left(tmpdir_of_tempfile) == []
    assert not [s for s in _strings(comparison) if str(tmpdir_of_tempfile) in s]
    assert (comparison.baseline, comparison.candidate) == ("baseline", "candidate")
    sources = comparison.manifest["sources"]
    assert [source["path"] for side in ("baseline", "candidate") for source in sources[side]["gender"]] == [None, None]
    assert all(len(source["sha256"]) == 64 for side in ("baseline", "candidate") for source in sources[side]["gender"])
    assert fairtalk.ModelComparison.from_dict(comparison.to_dict()) == comparison  # still a valid result
