"""The inspect_ai task ``fairtalk/counterfactual``, run offline by inspect itself on its ``mockllm/model``.

The mock model answers through a function (``custom_outputs``) with its token usage set, so that it
never fetches a tokenizer: the fair or the biased reply of ``_toys``.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

inspect_ai = pytest.importorskip("inspect_ai")

from inspect_ai.log import read_eval_log  # noqa: E402
from inspect_ai.model import ModelOutput, ModelUsage, get_model  # noqa: E402
from tests.integrations._toys import _FEMALE, biased, fair, raiser, silent  # noqa: E402

import fairtalk  # noqa: E402
from fairtalk.gates import evaluate  # noqa: E402
from fairtalk.integrations._inspect_task import METRIC_SUFFIXES, WHY_NO_OUTPUT, counterfactual, pair_sides, why_lost  # noqa: E402

ARGS = {"n_pairs": 20, "measures": "offense,length", "n_resamples": 200}


def _mock(reply):
    def answer(messages, tools, tool_choice, config):
        output = ModelOutput.from_content("mockllm", reply(messages[-1].text))
        output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return output

    return get_model("mockllm/model", custom_outputs=answer)


def _metrics(log_dir: Path) -> dict[str, float]:
    (path,) = log_dir.glob("*.eval")
    log = read_eval_log(str(path))  # read back from the file, as the log viewer does
    assert log.status == "success", log.error
    (scores,) = log.results.scores
    return {name: metric.value for name, metric in scores.metrics.items()}


def _eval(command: list[str], cwd: Path, option: str) -> tuple[subprocess.CompletedProcess[str], str]:
    """``inspect eval fairtalk/counterfactual`` on builtin:echo with ``-T option``: the process, and its output."""
    done = subprocess.run(
        [*command, "eval", "fairtalk/counterfactual", "--model", "fairtalk/builtin:echo", "-T", option],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
        check=False,
    )
    return done, done.stdout + done.stderr


def test_the_registered_task_finds_the_gap_of_a_biased_model(tmp_path: Path) -> None:
    """By its registered name, through the entry point: the metrics are the audit's paired tests."""
    (log,) = inspect_ai.eval(
        "fairtalk/counterfactual", task_args=ARGS, model=_mock(biased), log_dir=str(tmp_path), display="none"
    )
    assert log.eval.task == "fairtalk/counterfactual"
    assert len(log.samples) == 40 and {s.metadata["side"] for s in log.samples} == {"a", "b"}
    sample = log.samples[0]
    assert set(sample.scores["response_scores"].value) == {"offense_rate", "length"}
    metrics = _metrics(tmp_path)
    assert metrics["n_pairs"] == 20
    assert {f"{key}_{suffix}" for key in ("offense_rate", "length") for suffix in METRIC_SUFFIXES} <= set(metrics)
    assert metrics["offense_rate_detected"] == 1.0 and metrics["offense_rate_p_adjusted"] < 0.05
    assert metrics["offense_rate_ci_low"] <= metrics["offense_rate_gap"] <= metrics["offense_rate_ci_high"] < 0
    # the same pairs and answers through fairtalk.audit give the same gap, interval and p
    run = fairtalk.audit(model=biased, axes="gender", n_pairs=20, measures=("offense", "length"), n_resamples=200)
    offense = run.results["gender"].measure("offense_rate")
    assert metrics["offense_rate_gap"] == pytest.approx(offense.a - offense.b)
    assert (metrics["offense_rate_ci_low"], metrics["offense_rate_ci_high"]) == pytest.approx(offense.ci95)
    assert metrics["offense_rate_p"] == pytest.approx(offense.p_paired)


def test_a_fair_model_shows_no_difference(tmp_path: Path) -> None:
    (log,) = inspect_ai.eval(counterfactual(**ARGS), model=_mock(fair), log_dir=str(tmp_path), display="none")
    metrics = _metrics(tmp_path)
    assert metrics["offense_rate_gap"] == 0 and metrics["offense_rate_detected"] == 0
    assert metrics["length_detected"] == 0
    # Review finding: the guide said every key gets KEY_p_adjusted; a key not tested (identical answers) has none
    assert "offense_rate_p_adjusted" not in metrics and "length_p_adjusted" not in metrics and "length_ci_low" not in metrics
    guide = " ".join((Path(__file__).parents[2] / "docs" / "how-to" / "integrations.md").read_text(encoding="utf-8").split())
    assert "a key that was not tested (answers identical on every pair, say;" in guide
    assert "has no `KEY_p_adjusted` and `KEY_detected` 0, and a key with no interval no `KEY_ci_low` and `KEY_ci_high`" in guide


def test_answers_empty_on_one_side_are_counted_and_fail_the_gate_as_the_audit_fails_it(tmp_path: Path) -> None:
    """Review finding: a bot answering "" to most female contexts showed offense_rate_gap 0, detected 0 and nothing of
    the empty answers, while ``fairtalk audit --fail-on-bias`` failed it on them."""
    inspect_ai.eval(counterfactual(**ARGS), model=_mock(silent), log_dir=str(tmp_path), display="none")
    metrics = _metrics(tmp_path)
    run = fairtalk.audit(model=silent, axes="gender", n_pairs=20, measures=("offense", "length"), n_resamples=200)
    empties = run.results["gender"].empties
    assert empties is not None and empties.lost_b > 5 and empties.lost_a == 0
    assert (metrics["n_empty_a"], metrics["n_empty_b"], metrics["n_empty_both"]) == (0, empties.lost_b, 0)
    assert metrics["n_lost_a"] == metrics["n_lost_b"] == metrics["n_lost_unknown"] == 0
    assert metrics["offense_rate_detected"] == 0  # the measure sees nothing: the empty answers are the finding
    assert metrics["empty_fails_gate"] == 1 and metrics["lost_fails_gate"] == 0 and metrics["fail_on_bias_passed"] == 0
    assert not evaluate(run, "fail-on-bias").passed  # as the audit decides
    # a fair model: every count 0, the gate passes
    inspect_ai.eval(counterfactual(**ARGS), model=_mock(fair), log_dir=str(tmp_path / "fair"), display="none")
    fair_metrics = _metrics(tmp_path / "fair")
    assert all(fair_metrics[name] == 0 for name in ("n_empty_b", "n_lost_b", "empty_fails_gate", "lost_fails_gate"))


#: What inspect's providers answer in place of a request the model's API refused (OpenAI's, Anthropic's 400 and 413).
TOO_LONG = "This model's maximum context length is 4096 tokens. However, your messages resulted in 5000 tokens."


def _refused_for_women(messages, tools, tool_choice, config):
    """The model's API refuses every context that mentions a woman, as inspect's providers hand that on: an output
    whose text is the error's, with ``error`` set; the others are answered alike."""
    text = messages[-1].text
    if _FEMALE.search(text):
        output = ModelOutput.from_content("mockllm", TOO_LONG, stop_reason="model_length", error=TOO_LONG)
    else:
        output = ModelOutput.from_content("mockllm", fair(text))
    output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
    return output


def test_an_output_standing_in_for_a_refused_request_is_a_lost_side_not_the_models_answer(tmp_path: Path) -> None:
    """Review finding: an output with an ``error`` (inspect's stand-in for a prompt too long, a content filter's block)
    was scored as the model's answer, its error text measured; the audit counts such a request (a 4xx) as lost."""
    (log,) = inspect_ai.eval(
        counterfactual(**ARGS),
        model=get_model("mockllm/model", custom_outputs=_refused_for_women),
        log_dir=str(tmp_path),
        display="none",
    )
    metrics = _metrics(tmp_path)
    run = fairtalk.audit(model=raiser, axes="gender", n_pairs=20, measures=("offense", "length"), n_resamples=200)
    losses = run.results["gender"].losses  # the same sides fail
    assert losses is not None and losses.lost_b > 5 and losses.lost_a == 0
    assert (metrics["n_lost_a"], metrics["n_lost_b"], metrics["n_lost_both"]) == (0, losses.lost_b, 0)
    assert metrics["n_empty_b"] == 0 and metrics["n_pairs"] == run.results["gender"].n_pairs
    assert metrics["lost_fails_gate"] == 1 and metrics["fail_on_bias_passed"] == 0
    refused = [s.scores["response_scores"] for s in log.samples if s.output.error]
    assert len(refused) == losses.lost_b and all(score.answer is None and score.value == {} for score in refused)
    assert {score.metadata["lost"] for score in refused} == {f"the model's request failed: {TOO_LONG}"}


def test_an_empty_completion_is_an_empty_answer_even_where_there_is_nothing_to_test(tmp_path: Path) -> None:
    """An empty completion is the text "", scored and counted empty, never lost; with fewer than two pairs
    (``--limit 2``) the counts were left out (no ``n_empty_*``), so one pair answered with nothing showed nothing."""
    (log,) = inspect_ai.eval(counterfactual(**ARGS), model=_mock(lambda text: ""), log_dir=str(tmp_path), display="none", limit=2)
    metrics = _metrics(tmp_path)
    assert metrics["n_pairs"] == 1 and metrics["fail_on_bias_passed"] == 0
    assert (metrics["n_empty_a"], metrics["n_empty_b"], metrics["n_empty_both"], metrics["empty_fails_gate"]) == (1, 1, 1, 1)
    assert metrics["n_lost_a"] == metrics["n_lost_b"] == metrics["n_lost_both"] == metrics["n_lost_unknown"] == 0
    assert metrics["lost_fails_gate"] == 0
    for sample in log.samples:
        score = sample.scores["response_scores"]
        assert score.answer == "" and score.value == {"offense_rate": 0.0, "length": 0.0}
        assert "lost" not in score.metadata


def test_why_a_side_is_lost_no_output_or_an_error_not_an_empty_completion() -> None:
    assert why_lost(ModelOutput(model="m")) == WHY_NO_OUTPUT  # no choice: the sample failed before an answer
    assert why_lost(ModelOutput.from_content("m", "")) is None  # an empty completion is an answer
    assert why_lost(ModelOutput.from_content("m", "   ", stop_reason="max_tokens")) is None
    assert why_lost(ModelOutput.from_content("m", "no", error="blocked")) == "the model's request failed: blocked"


def _anti_jewish(text: str) -> str:
    """Offensive whenever the text mentions Jews: the second pair of religion, not the first (christian vs muslim)."""
    if re.search(r"\b(jew|jews|jewish|synagogue|judaism|rabbi|torah)\b", text, re.IGNORECASE):
        return "shut up you stupid idiot, i hate it"
    return "that is lovely, i am so happy for you"


def test_sides_whose_samples_failed_are_counted_lost_under_inspects_default_settings(tmp_path: Path) -> None:
    """Review finding: under inspect's defaults (fail on the first sample error) a model failing on one side aborted the
    eval with a traceback and no metrics; the task now counts the side lost and the gate decides, as the audit does."""
    inspect_ai.eval(counterfactual(**ARGS), model=_mock(raiser), log_dir=str(tmp_path), display="none")
    metrics = _metrics(tmp_path)  # the eval succeeded
    run = fairtalk.audit(model=raiser, axes="gender", n_pairs=20, measures=("offense", "length"), n_resamples=200)
    losses = run.results["gender"].losses
    assert losses is not None and losses.lost_b > 5 and losses.lost_a == 0
    assert (metrics["n_lost_a"], metrics["n_lost_b"], metrics["n_lost_both"]) == (0, losses.lost_b, 0)
    assert metrics["n_pairs"] == run.results["gender"].n_pairs
    assert metrics["lost_fails_gate"] == 1 and metrics["fail_on_bias_passed"] == 0
    assert not evaluate(run, "fail-on-bias").passed  # as the audit decides


def _no_questions(text: str) -> str:
    """Fails on any context holding a question mark: both sides of such a pair fail."""
    if "?" in text:
        raise RuntimeError("the model failed")
    return fair(text)


def _down(text: str) -> str:
    raise RuntimeError("the model is down")


def test_pairs_lost_on_both_sides_are_counted_and_a_run_where_every_sample_failed_fails_the_gate(tmp_path: Path) -> None:
    """Review finding: pairs failed on both sides vanished (n_pairs 82, every n_lost_* 0 where the CLI counted 18 lost on
    both sides), and a run where every sample failed printed no metrics at all, no ``fail_on_bias_passed`` 0."""
    args = {**ARGS, "n_pairs": 40}
    inspect_ai.eval(counterfactual(**args), model=_mock(_no_questions), log_dir=str(tmp_path / "q"), display="none")
    metrics = _metrics(tmp_path / "q")
    run = fairtalk.audit(
        model=_no_questions,
        axes="gender",
        n_pairs=40,
        measures=("offense", "length"),
        n_resamples=200,
        max_consecutive_failures=0,
    )
    losses = run.results["gender"].losses
    assert losses is not None and losses.both > 2 and losses.a_only == losses.b_only == 0
    assert (metrics["n_lost_a"], metrics["n_lost_b"], metrics["n_lost_both"]) == (losses.both,) * 3
    assert metrics["n_pairs"] == run.results["gender"].n_pairs == 40 - losses.both
    assert metrics["fail_on_bias_passed"] == (1 if evaluate(run, "fail-on-bias").passed else 0)
    inspect_ai.eval(counterfactual(**ARGS), model=_mock(_down), log_dir=str(tmp_path / "down"), display="none")
    metrics = _metrics(tmp_path / "down")
    assert metrics["n_pairs"] == 0 and metrics["n_lost_both"] == 20
    assert metrics["fail_on_bias_passed"] == 0 and metrics["lost_fails_gate"] == 1


def test_a_bare_multiway_axis_is_refused_naming_its_pairs_and_a_pair_of_it_finds_the_gap(tmp_path: Path) -> None:
    """Review finding: ``-T axis=religion`` asked christian vs muslim only, so a bot insulting Jews passed
    (``fail_on_bias_passed`` 1) where ``fairtalk audit --axis religion --fail-on-bias`` fails it."""
    with pytest.raises(fairtalk.SpecError) as caught:
        counterfactual(axis="religion", **ARGS)
    said = str(caught.value)
    assert said.startswith("fairtalk/counterfactual: -T axis=religion has 6 groups and this task compares two: choose a pair")
    assert "religion:christian-jewish" in said and "religion:A-B" in said and "fairtalk audit --axis religion" in said
    with pytest.raises(fairtalk.SpecError, match="axis=religion has 6 groups"):
        list(pair_sides("religion", n_pairs=2))  # the dataset of make_metric's users too
    inspect_ai.eval(
        counterfactual(axis="religion:christian-jewish", **ARGS), model=_mock(_anti_jewish), log_dir=str(tmp_path), display="none"
    )
    metrics = _metrics(tmp_path)
    assert metrics["offense_rate_detected"] == 1 and metrics["fail_on_bias_passed"] == 0


@pytest.mark.parametrize(
    ("axis", "said"),
    [
        (["gender", "race"], "-T axis=gender,race: one axis per task"),
        (5, "-T axis=5: must be an axis name"),
        (" ", "-T axis=' ': must be an axis name"),
    ],
)
def test_an_axis_that_is_not_one_name_is_one_clear_error(axis: object, said: str) -> None:
    """Review finding: ``-T axis=gender,race`` (a list, as inspect parses it) ended in a traceback."""
    with pytest.raises(fairtalk.SpecError) as caught:
        counterfactual(axis=axis, **ARGS)  # type: ignore[arg-type]
    assert str(caught.value).startswith(f"fairtalk/counterfactual: {said}"), str(caught.value)


def test_a_run_cut_to_one_pair_fails_the_gate_as_nothing_to_check(tmp_path: Path) -> None:
    """Review finding: ``--limit 2`` (one pair) reported ``n_pairs`` 1 and no ``fail_on_bias_passed``; an audit with
    nothing to check fails its gate."""
    inspect_ai.eval(counterfactual(**ARGS), model=_mock(fair), log_dir=str(tmp_path), display="none", limit=2)
    metrics = _metrics(tmp_path)
    assert metrics["n_pairs"] == 1 and metrics["fail_on_bias_passed"] == 0


def test_corpus_measures_are_taken_at_the_default_resamples_and_too_few_are_refused_in_task_options() -> None:
    """Review finding: the scorer checked its options with 1 resample, so once too few resamples for alpha were refused,
    every task naming a corpus measure (diversity) was refused with "n_resamples 1 is too few", the user having given
    none."""
    task = counterfactual(n_pairs=4, measures="offense,diversity")
    assert len(task.dataset) == 8
    with pytest.raises(fairtalk.SpecError, match=r"-T n_resamples 10 is too few for -T alpha 0.05"):
        counterfactual(n_pairs=4, measures="offense,diversity", n_resamples=10)
    assert len(counterfactual(n_pairs=4, measures="offense,length", n_resamples=10).dataset) == 8  # no corpus key


def test_the_dataset_is_both_sides_of_each_pair() -> None:
    sides = list(pair_sides("gender", n_pairs=3))
    assert [s.side for s in sides] == ["a", "b"] * 3
    assert len({s.pair_id for s in sides}) == 3 and all(s.cluster for s in sides)
    assert all(a.pair_id == b.pair_id and a.text != b.text for a, b in zip(sides[::2], sides[1::2]))


def test_a_bad_task_option_is_a_spec_error_that_inspect_prints_without_a_traceback(tmp_path: Path) -> None:
    import sys

    # Review finding: -T n_pairs=1 "succeeded" with no result (its only metric n_pairs 1): the CLI refuses fewer than 2
    for n in (0, 1):
        with pytest.raises(fairtalk.SpecError, match=rf"-T n_pairs={n}: must be a whole number ≥ 2 \(two pairs are the fewest"):
            counterfactual(n_pairs=n)
    with pytest.raises(fairtalk.SpecError, match=r"-T n_resamples=0: must be a whole number ≥ 1$"):
        counterfactual(n_resamples=0)
    with pytest.raises(fairtalk.SpecError, match="unknown lexicon axis 'nope'"):
        counterfactual(axis="nope", n_pairs=2)
    inspect_cli = Path(sys.executable).with_name("inspect")
    command = [str(inspect_cli)] if inspect_cli.exists() else [sys.executable, "-m", "inspect_ai"]
    done, output = _eval(command, tmp_path, "n_pairs=1")
    said = "fairtalk/counterfactual: -T n_pairs=1: must be a whole number ≥ 2 (two pairs are the fewest a test compares)"
    assert done.returncode != 0 and said in " ".join(output.split())  # inspect wraps the line
    assert "Traceback" not in output, output
    # Review finding: inspect makes -T axis=gender,race a list, which ended in a traceback
    done, output = _eval(command, tmp_path, "axis=gender,race")
    assert done.returncode != 0 and "fairtalk/counterfactual: -T axis=gender,race: one axis per task" in " ".join(output.split())
    assert "Traceback" not in output, output
