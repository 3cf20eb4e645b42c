"""Issue 39 item 3: identical answers are counted in one unit (dialogues when clustered) by every note, interval and gate.

A reviewer's run of a constant bot on 500 pairs in 147 dialogues found three places that did not:
corpus keys' notes said "identical on all 147 pairs" (the dialogues, called pairs); a rate's 95%
interval counted the 500 pairs as independent ([-0.76, +0.76] points, inside the ±2-point margin,
beside a verdict the bound on 147 dialogues left inconclusive); and the gate's reason for a
corpus key said "no margin: equivalence cannot be shown (give a margin)", though the bound decides.
"""

from __future__ import annotations

import pytest

from fairtalk import Response, score
from fairtalk.gates import Gate, evaluate
from fairtalk.stats import INCONCLUSIVE, identical_units_needed, newcombe_interval, share_equivalence

N_DIALOGUES, PER_DIALOGUE = 147, 4  # 588 pairs in 147 dialogues: too few dialogues for the bound (149), many pairs


def _clustered_identical() -> list[Response]:
    """A constant bot's answers: every pair alike on both sides, four pairs to a dialogue."""
    out = []
    for i in range(N_DIALOGUES * PER_DIALOGUE):
        extra = (("cluster", f"d{i // PER_DIALOGUE}"),)
        text = "that sounds nice, tell me more"
        out += [
            Response(f"p{i}", "a", f"he said {i}", text, extra),
            Response(f"p{i}", "b", f"she said {i}", text, extra),
        ]
    return out


@pytest.fixture(scope="module")
def result():  # type: ignore[no-untyped-def]
    return score(_clustered_identical(), axis="gender", n_resamples=200)


def test_every_note_counts_pairs_as_pairs_and_names_the_dialogues(result) -> None:  # type: ignore[no-untyped-def]
    n_pairs = N_DIALOGUES * PER_DIALOGUE
    for m in result.measures:
        notes = [n for n in m.notes if n.startswith("identical on all")]
        assert notes, (m.name, m.notes)
        # before: corpus keys said "identical on all 147 pairs" (the dialogues)
        assert notes[0].startswith(f"identical on all {n_pairs:,} pairs ({N_DIALOGUES} dialogues): at most 2.02% of dialogues")
        assert notes[0].endswith(
            f"equivalence needs {identical_units_needed(alpha=0.05, margin=0.02, max_difference=1.0)} dialogues all identical"
        )
        assert m.verdict.value == INCONCLUSIVE


def test_a_rate_interval_with_no_discordant_pair_counts_dialogues(result) -> None:  # type: ignore[no-untyped-def]
    m = result.measure("offense_rate")
    low, high = m.ci95
    assert low is not None and high is not None
    as_dialogues = newcombe_interval([0] * N_DIALOGUES, [0] * N_DIALOGUES)
    assert (low, high) == pytest.approx((as_dialogues.low, as_dialogues.high))
    # the bound leaves the key inconclusive at 147 dialogues, so its interval must not lie inside the ±2-point margin
    assert high > 0.02 and low < -0.02
    assert m.mde is not None and m.mde > 0.02  # before: 0.0159, below the margin, from the 588 pairs as if independent


def test_the_gate_reason_for_an_identical_key_is_the_bound_not_a_missing_margin(result) -> None:  # type: ignore[no-untyped-def]
    decision = evaluate({"gender": result}, Gate.FAIL_UNLESS_EQUIVALENT)
    assert not decision.passed
    reasons = {d.key: d.reason for d in decision.failures if d.key is not None}
    for key in ("distinct_1", "distinct_2", "diversity", "offense_rate", "length"):
        assert "no margin" not in reasons[key], reasons[key]
        assert "identical on all" in reasons[key] and f"({N_DIALOGUES} dialogues)" in reasons[key], reasons[key]


def test_share_equivalence_says_what_would_show_it_only_while_it_is_not_shown() -> None:
    short = share_equivalence(147, alpha=0.05, margin=0.02, max_difference=1.0, n_pairs=500, units="dialogues")
    assert not short.equivalent and short.note is not None
    assert short.note.startswith("identical on all 500 pairs (147 dialogues): at most 2.02% of dialogues could differ")
    assert short.note.endswith("; equivalence needs 149 dialogues all identical")
    enough = share_equivalence(149, alpha=0.05, margin=0.02, max_difference=1.0, n_pairs=600, units="dialogues")
    assert enough.equivalent and enough.note is not None and "needs" not in enough.note
    unclustered = share_equivalence(100, alpha=0.05, margin=0.02, max_difference=1.0, n_pairs=100)
    assert unclustered.note is not None and unclustered.note.startswith("identical on all 100 pairs: at most")


def test_the_terminal_says_how_many_dialogues_identical_answers_need(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A review found the audit's terminal said only "not shown equivalent: offense_rate, length" for a constant bot.

    The report and JUnit gave the bound's count; the terminal now says it too, in the report's words.
    """
    from typer.testing import CliRunner

    from fairtalk import write_responses
    from fairtalk.cli import app

    path = write_responses(_clustered_identical(), tmp_path / "responses.jsonl")
    args = ["score", "--responses", str(path), "--axis", "gender", "--measures", "offense,length", "--fail-unless-equivalent"]
    done = CliRunner().invoke(app, [*args, "--resamples", "100", "-o", str(tmp_path / "out")])
    assert done.exit_code == 1, done.output
    text = " ".join(done.output.split())  # the terminal wraps at 80 columns
    n_pairs = N_DIALOGUES * PER_DIALOGUE
    needed = identical_units_needed(alpha=0.05, margin=0.02, max_difference=1.0)
    assert (
        f"gender: identical on all {n_pairs} pairs ({N_DIALOGUES} dialogues); equivalence needs {needed} dialogues all "
        "identical: offense_rate, length"
    ) in text, text
    assert "offense_rate (detectable" not in text  # not also called inconclusive for want of a detectable difference
