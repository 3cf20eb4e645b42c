"""The similarity test on LLM-style answers: what greedy decoding, ignored sampling and skewed lengths do to its verdicts.

Under greedy decoding a deterministic model answers a context asked twice identically, so the
baseline is zero and the test is one against zero change: it is worded so, never as "sampling
noise", and the baseline is not asked for every pair (only a determinism check). A model that
is not deterministic under greedy decoding is said to be so. Under sampling, a model or server
that answers re-asks identically (it ignores sampling or the seed) is warned about in the
result, its JSON, the CLI and the plain summary. A row's verdict never contradicts its interval.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import fairtalk
from fairtalk.cli import app
from fairtalk.report import plain_summary
from fairtalk.results import Verdict

runner = CliRunner()

MODELS = r'''
import hashlib
import re

GROUP = re.compile(r"\b(he|she|him|her|his|hers|man|woman|men|women|boy|girl|brother|sister|father|mother|husband|wife)\b", re.I)
FEMALE = re.compile(r"\b(she|her|hers|woman|women|girl|sister|mother|wife)\b", re.I)
OPENERS = ("Thanks for reaching out!", "That sounds like quite an adventure.", "I'm glad you shared this with me.",
           "What a lovely thing to remember.")
BODIES = ("Trips like that often come with a few surprises, and it seems this one was no exception.",
          "It is wonderful when a journey leaves you with stories worth telling to your friends.",
          "Planning ahead usually helps, but some of the best moments are the ones nobody planned.",
          "Every trip teaches us something new about the places we visit and about ourselves.")
CLOSERS = ("Is there anything else I can help you plan?", "Would you like a few tips for your next trip?",
           "Let me know if you want to talk more about it.", "How did the rest of the week go for you?")


def _llm(context, seed):
    """A chat answer of about 35 words: picked by the seed and the context with its group words hidden."""
    h = hashlib.sha256(f"{seed}|{GROUP.sub('X', context)}".encode()).digest()
    return f"{OPENERS[h[0] % 4]} {BODIES[h[1] % 4]} {CLOSERS[h[2] % 4]}"


def _number(context):
    return int(context.rsplit(" ", 1)[-1])


def polite(context):
    """Greedy and deterministic: the same answer every time, ending with Sir or Ma'am by the group."""
    return _llm(context, 0) + (" Ma'am." if FEMALE.search(context) else " Sir.")


def neutral(context):
    """Greedy and deterministic, and blind to the group."""
    return _llm(context, 0)


def ignores_seed(context, seed, settings):
    """Asked to sample, answers greedily all the same (a server that ignores sampling and the seed)."""
    return _llm(context, 0)


def sampler(context, seed, settings):
    """Samples with the per-item seed (greedy: one answer per context), blind to the group."""
    return _llm(context, seed if settings.do_sample else 0)


def flaky(context, seed):
    """Greedy, but not deterministic: the answer changes with the request (a server that samples anyway)."""
    return _llm(context, seed)


def few_changes(context):
    """Greedy and deterministic; the answer changes with the group in 5 contexts only."""
    answer = _llm(context, 0)
    return answer + " Take care!" if FEMALE.search(context) and _number(context) % 16 == 0 else answer


def skewed(context):
    """Greedy and deterministic: for women one word more in 7 contexts, one curt word in 1, the same in 2."""
    answer, n = _llm(context, 0), _number(context)
    if not FEMALE.search(context) or n >= 8:
        return answer
    return "Hmm." if n == 7 else answer + " Indeed."
'''


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("llm") / "llm_models.py"
    path.write_text(MODELS, encoding="utf-8")
    return f"python:{path}"


def _pairs(n: int = 80) -> list[fairtalk.Pair]:
    contexts = [f"yesterday he told me about trip number {i}" for i in range(n)]
    return list(fairtalk.build_pairs(contexts, fairtalk.load_lexicon("gender")))


def _words(sentences: list[str]) -> str:
    return " ".join(" ".join(sentences).split())


GREEDY = fairtalk.DecodingSettings(max_new_tokens=64)
SAMPLED = fairtalk.DecodingSettings(do_sample=True, temperature=0.7, max_new_tokens=64)
GROUPS = ("male", "female")


def _summary(similarity: fairtalk.SimilarityResult) -> str:
    audit = fairtalk.score(["fine"] * 10, ["fine"] * 10, axis="gender", measures=["length"], n_resamples=50)
    return _words(plain_summary(audit, similarity))


def test_a_greedy_model_that_says_sir_or_maam_is_reported_as_a_determinism_test(models: str) -> None:
    result = fairtalk.similarity_test(_pairs(), model=f"{models}:polite", settings=GREEDY, methods=("exact", "rouge_l"))
    assert set(result.detected()) == {"exact", "rouge_l"}
    assert not result.sampled and result.baseline_kind == "zero" and result.warnings == ()
    check = result.reask_check
    assert check["kind"] == "determinism" and check["deterministic"] is True and check["n_differing"] == 0
    assert check["n_contexts"] == 20 and check["n_reasks"] == 40
    assert result.summary["baseline"]["n_items"] == 40  # a determinism check, not 2 answers for each of 80 pairs
    exact = {row.method: row for row in result.rows}["exact"]
    assert exact.baseline == 0.0 and exact.counterfactual == 1.0 and exact.verdict is Verdict.DIFFERENT
    text = _summary(result)
    assert "With greedy decoding the model answers the same context identically (20 of 20 contexts asked again" in text
    assert "Swapping the group (male ↔ female) changes the answer in 100.0% of pairs (80 of 80)" in text
    assert "tested against zero change" in text and "sampling noise" not in text
    written = json.loads(json.dumps(result.to_dict()))
    assert written["baseline_kind"] == "zero" and written["sampled"] is False
    assert fairtalk.SimilarityResult.from_dict(written) == result


def test_a_greedy_model_that_ignores_the_group_changes_nothing_and_says_no_sampling_noise(models: str) -> None:
    result = fairtalk.similarity_test(_pairs(), model=f"{models}:neutral", settings=GREEDY)
    assert result.detected() == () and result.baseline_kind == "zero" and result.warnings == ()
    assert all(row.counterfactual == 0.0 and row.baseline == 0.0 and row.verdict is Verdict.INCONCLUSIVE for row in result.rows)
    text = _summary(result)
    assert "Swapping the group (male ↔ female) never changes the answer in these 80 pairs" in text
    assert "sampling noise" not in text and "more than" not in text


def test_a_model_not_deterministic_under_greedy_decoding_is_said_to_be_and_its_baseline_measured(models: str) -> None:
    result = fairtalk.similarity_test(_pairs(), model=f"{models}:flaky", settings=GREEDY)
    assert result.baseline_kind == "measured" and not result.reask_check["deterministic"]
    assert result.summary["baseline"]["n_items"] == 160  # every pair's baseline, the check's answers reused
    assert len(result.warnings) == 1 and "not deterministic under greedy decoding" in result.warnings[0]
    assert result.detected() == ()
    text = _summary(result)
    assert text.startswith("Warning: the model is not deterministic under greedy decoding")
    assert "sampling noise" not in text and "the variation between two asks of one context" in text


def test_a_server_that_ignores_sampling_is_warned_about(models: str) -> None:
    result = fairtalk.similarity_test(_pairs(), model=f"{models}:ignores_seed", settings=SAMPLED, seed=1)
    check = result.reask_check
    assert result.sampled and result.baseline_kind == "measured"
    assert check["kind"] == "sampling" and check["ignored"] is True and check["n_identical"] == check["n_checked"] == 80
    assert len(result.warnings) == 1 and "seems to ignore sampling or the seed" in result.warnings[0]
    assert json.loads(json.dumps(result.to_dict()))["warnings"] == list(result.warnings)
    text = _summary(result)
    assert text.startswith("Warning: sampling was asked for, but 80 of 80 contexts asked twice")
    assert "sampling noise" not in text


def test_a_genuinely_seeded_sampler_gets_no_warning(models: str) -> None:
    result = fairtalk.similarity_test(_pairs(), model=f"{models}:sampler", settings=SAMPLED, seed=1)
    check = result.reask_check
    assert check["kind"] == "sampling" and check["ignored"] is False and check["n_checked"] == 80
    assert check["n_identical"] < 10 and result.warnings == () and result.detected() == ()
    rows = {row.method: row for row in result.rows}
    assert rows["exact"].baseline > 0.8  # sampling changes nearly every answer
    assert "the model's own sampling noise" in _summary(result)


def test_a_verdict_never_contradicts_its_interval(models: str) -> None:
    """7 pairs one word longer and 1 curt: the exact sign-flip test rejects, the t interval holds 0 (the old 'differs')."""
    result = fairtalk.similarity_test(_pairs(10), model=f"{models}:skewed", settings=GREEDY, methods=("length_ratio",))
    (row,) = result.rows
    low, high = row.ci95
    assert row.p_adjusted is not None and row.p_adjusted < 0.05 and low is not None and low < 0 < high
    assert not row.detected() and row.verdict is Verdict.DISAGREE and result.detected() == ()
    assert "95% interval includes 0" in (row.note or "")
    # the other way round: 5 of 80 answers change, the t interval excludes 0 but the exact test (p 0.0625) does not
    few = fairtalk.similarity_test(_pairs(), model=f"{models}:few_changes", settings=GREEDY, methods=("exact",))
    (row,) = few.rows
    assert row.counterfactual == 5 / 80 and row.ci95[0] is not None and row.ci95[0] > 0 and row.p_adjusted > 0.05
    assert not row.detected() and row.verdict is Verdict.DISAGREE and "95% interval excludes 0" in (row.note or "")
    for sim in (result, few):
        for r in sim.rows:
            lo, hi = r.ci95
            if r.detected() and lo is not None and hi is not None:
                assert not lo <= 0 <= hi
    text = _summary(few)
    assert "changes the answer in 6.2% of pairs (5 of 80)" in text and "interval disagree" in text


def test_the_similarity_command_warns_when_sampling_is_ignored(models: str, tmp_path: Path) -> None:
    pairs = tmp_path / "pairs.jsonl"
    fairtalk.write_pairs(_pairs(40), pairs)
    out = tmp_path / "s.json"
    args = ["similarity", "--pairs", str(pairs), "--methods", "exact,rouge_l", "-o", str(out)]
    done = runner.invoke(app, [*args, "--model", f"{models}:ignores_seed", "--sample", "--temperature", "0.7"])
    assert done.exit_code == 0, done.output
    said = _words([done.output])
    assert "warning: sampling was asked for, but 40 of 40 contexts asked twice" in said
    written = json.loads(out.read_text())
    assert written["reask_check"]["ignored"] is True and written["warnings"]
    greedy = runner.invoke(app, [*args, "--model", f"{models}:polite"])
    assert greedy.exit_code == 0, greedy.output
    said = _words([greedy.output])
    assert "Greedy decoding: the model answered 20 of 20 contexts asked again identically" in said
    assert "the baseline is zero" in said and "sampling noise" not in said and "warning" not in said


def test_audit_words_the_similarity_test_the_same_way(models: str, tmp_path: Path) -> None:
    corpus = tmp_path / "chats.txt"
    corpus.write_text("".join(f"yesterday he told me about trip number {i}\n" for i in range(40)))
    base = ["audit", "--corpus", str(corpus), "--axis", "gender", "--measures", "length", "--similarity", "exact"]
    greedy = runner.invoke(app, [*base, "--model", f"{models}:polite", "-o", str(tmp_path / "g")])
    assert greedy.exit_code in (0, 1), greedy.output
    page = _words([(tmp_path / "g" / "gender" / "report.md").read_text()])
    assert "With greedy decoding the model answers the same context identically" in page
    assert "sampling noise" not in page and "tested against zero change" in page
    sampled = runner.invoke(app, [*base, "--model", f"{models}:ignores_seed", "--sample", "-o", str(tmp_path / "s")])
    assert sampled.exit_code in (0, 1), sampled.output
    assert "seems to ignore sampling or the seed" in _words([sampled.output])
    page = _words([(tmp_path / "s" / "gender" / "report.md").read_text()])
    assert "Warning: sampling was asked for" in page
    assert json.loads((tmp_path / "s" / "gender" / "similarity.json").read_text())["reask_check"]["ignored"] is True


def test_audit_shows_a_row_whose_test_and_interval_disagree_as_not_counted(models: str, tmp_path: Path) -> None:
    corpus = tmp_path / "chats.txt"
    corpus.write_text("".join(f"yesterday he told me about trip number {i}\n" for i in range(10)))
    out = tmp_path / "r"
    done = runner.invoke(
        app,
        [
            "audit",
            "--corpus",
            str(corpus),
            "--axis",
            "gender",
            "--measures",
            "length",
            "--similarity",
            "length_ratio",
            "--model",
            f"{models}:skewed",
            "-o",
            str(out),
        ],
    )
    assert done.exit_code in (0, 1), done.output
    said = _words([done.output])
    assert "similarity (length_ratio): counterfactual answers are not counted as differing (the test and its 95% CI" in said
    row = json.loads((out / "gender" / "similarity.json").read_text())["rows"][0]
    assert row["verdict"] == Verdict.DISAGREE.value and row["detected"] is False
    for page in (out / "gender" / "report.html", out / "index.html"):
        assert '<span class="badge warn" title="the paired test rejects' in page.read_text()
        assert "not counted: test and CI disagree" in page.read_text()
    markdown = (out / "gender" / "report.md").read_text()
    assert "| not counted: test and CI disagree |" in markdown and "- length_ratio: the paired test rejects" in markdown
    assert "The test and its 95% interval disagree on length log-ratio" in _words([markdown])
