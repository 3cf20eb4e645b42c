"""The counterfactual similarity test against its no-effect baseline: a model that ignores the group, and one that does not."""

from __future__ import annotations

import hashlib
import json
import re

import pytest

import fairtalk
from fairtalk.models import DecodingSettings, Responder

REPLIES = (
    "Sounds good.",
    "I am not sure about that one.",
    "Tell me more!",
    "Ha, nice.",
    "Why do you say so?",
    "That happened to me too.",
    "Great, thanks for sharing.",
    "Oh no, sorry to hear.",
)
GROUP = re.compile(r"\b(he|she|him|her|his|hers|man|woman|men|women|boy|girl|brother|sister|father|mother|husband|wife)\b", re.I)


def _pick(context: str, seed: int) -> str:
    """A sampling model: the reply depends on the seed and the context with its group words hidden."""
    digest = hashlib.sha256(f"{seed}|{GROUP.sub('X', context)}".encode()).digest()
    return REPLIES[digest[0] % len(REPLIES)]


class _Toy(Responder):
    """Samples with the per-item seed (greedy: seed 0); ``polite`` adds "Sir."/"Ma'am." by the context's group."""

    def __init__(self, polite: bool) -> None:
        self.polite = polite

    @property
    def fingerprint(self) -> str:
        return f"toy polite={self.polite}"

    def respond(self, contexts, settings, *, seeds):  # noqa: ANN001, ANN201
        out = []
        for context, seed in zip(contexts, seeds):
            reply = _pick(context, seed if settings.do_sample else 0)
            if self.polite:
                female = re.search(r"\b(she|her|woman|girl|sister|mother|wife)\b", context, re.I)
                reply += " Ma'am." if female else " Sir."
            out.append(reply)
        return out


def _pairs(n: int = 80) -> list[fairtalk.Pair]:
    contexts = [f"yesterday he told me about trip number {i}" for i in range(n)]
    return list(fairtalk.build_pairs(contexts, fairtalk.load_lexicon("gender")))


@pytest.fixture(scope="module")
def pairs() -> list[fairtalk.Pair]:
    return _pairs()


def test_a_model_that_ignores_the_group_diverges_as_much_as_its_baseline(pairs) -> None:  # noqa: ANN001
    sampled = DecodingSettings(do_sample=True, max_new_tokens=8)
    result = fairtalk.similarity_test(pairs, model=_Toy(polite=False), settings=sampled, seed=3)
    assert result.n_pairs == 80 and result.detected() == ()
    assert [row.method for row in result.rows] == ["exact", "rouge_l", "answered", "length_ratio"]
    for row in result.rows[:2]:
        assert row.counterfactual > 0.5 and row.baseline > 0.5  # sampling alone changes most answers
    for row in result.rows:
        assert abs(row.difference) < 0.15 and (row.p_adjusted is None or row.p_adjusted > 0.05)


class _Curt(_Toy):
    """Declines a quarter of women's questions, and answers the others at twice the length."""

    def respond(self, contexts, settings, *, seeds):  # noqa: ANN001, ANN201
        out = []
        for context, reply in zip(contexts, super().respond(contexts, settings, seeds=seeds)):
            number = int(context.rsplit(" ", 1)[-1])
            if re.search(r"\bshe\b", context):
                reply = "I'm not sure." if number % 4 == 0 else f"{reply} {reply}"
            out.append(reply)
        return out


def test_answering_one_side_only_and_longer_answers_are_measured_per_pair(pairs) -> None:  # noqa: ANN001
    result = fairtalk.similarity_test(pairs, model=_Curt(polite=False), settings=DecodingSettings(max_new_tokens=8))
    rows = {row.method: row for row in result.rows}
    # side B declines every fourth question; side A declines when it draws REPLIES[1] (its doubled form on side B
    # is a loop, which the refusal reading leaves to degenerate_rate: answered)
    one_sided = sum((i % 4 == 0) != (_pick(pair.a, 0) == REPLIES[1]) for i, pair in enumerate(pairs))
    assert one_sided >= 15 and rows["answered"].counterfactual == one_sided / 80
    assert rows["answered"].baseline == 0.0 and rows["answered"].detected()
    assert rows["length_ratio"].baseline == 0.0 and rows["length_ratio"].counterfactual > 0.4
    assert rows["length_ratio"].detected()


def test_a_model_that_says_sir_or_maam_by_group_is_detected(pairs) -> None:  # noqa: ANN001
    greedy = DecodingSettings(max_new_tokens=8)
    result = fairtalk.similarity_test(pairs, model=_Toy(polite=True), settings=greedy, methods=("exact", "rouge_l"))
    assert set(result.detected()) == {"exact", "rouge_l"}
    exact = result.to_frame().loc["exact"]
    assert exact["baseline"] == 0.0 and exact["counterfactual"] == 1.0  # greedy: asked twice, the same answer
    assert json.loads(json.dumps(result.to_dict()))["rows"][0]["method"] == "exact"


def test_too_few_pairs_is_a_clean_error() -> None:
    with pytest.raises(fairtalk.InputError, match="at least 2 pairs"):
        fairtalk.similarity_test(_pairs(1), model=_Toy(polite=False))


def test_the_similarity_command_prints_the_verdict_and_writes_json(tmp_path) -> None:  # noqa: ANN001
    from typer.testing import CliRunner

    from fairtalk.cli import app

    pairs = tmp_path / "pairs.jsonl"
    fairtalk.write_pairs(_pairs(20), pairs)
    out = tmp_path / "similarity.json"
    done = CliRunner().invoke(app, ["similarity", "--pairs", str(pairs), "--model", "builtin:echo", "-o", str(out)])
    assert done.exit_code == 0, done.output
    rows = json.loads(out.read_text())["rows"]
    detected = {row["method"]: row["detected"] for row in rows}  # echo repeats the group words, at the same length
    assert detected == {"exact": True, "rouge_l": True, "answered": False, "length_ratio": False}
    bad = CliRunner().invoke(app, ["similarity", "--pairs", str(pairs), "--model", "builtin:echo", "--methods", "bleu"])
    assert bad.exit_code == 2 and "unknown similarity method 'bleu'" in bad.output


@pytest.mark.parametrize("columns", ["80", "200"])
def test_the_similarity_header_says_what_each_method_shows(tmp_path, columns) -> None:  # noqa: ANN001
    """Review finding: the header said "divergence = 1 - similarity" above length_ratio 2.092 and answered (a share)."""
    from typer.testing import CliRunner

    from fairtalk.cli import app

    pairs = tmp_path / "pairs.jsonl"
    fairtalk.write_pairs(_pairs(20), pairs)
    done = CliRunner().invoke(app, ["similarity", "--pairs", str(pairs), "--model", "builtin:echo"], env={"COLUMNS": columns})
    assert done.exit_code == 0, done.output
    said = " ".join(done.output.split())
    assert "divergence = 1 - similarity" not in said
    assert (
        "divergence: 1 − similarity (exact, rouge_l); answered: the share of pairs answered on one side only; "
        "length_ratio: the mean absolute log ratio of the two answers' lengths"
    ) in said


def test_audit_runs_the_similarity_test_per_axis_and_writes_it(tmp_path) -> None:  # noqa: ANN001
    from typer.testing import CliRunner

    from fairtalk.cli import app

    corpus = tmp_path / "chats.txt"
    corpus.write_text("".join(f"yesterday he told me about trip number {i}\n" for i in range(40)))
    out = tmp_path / "report"
    done = CliRunner().invoke(
        app,
        [
            "audit",
            "--corpus",
            str(corpus),
            "--axis",
            "gender",
            "--model",
            "builtin:echo",
            "--similarity",
            "exact,rouge_l",
            "-o",
            str(out),
        ],
    )
    assert done.exit_code in (0, 1), done.output
    assert "similarity (exact): counterfactual answers differ more than the baseline" in " ".join(done.output.split())
    written = json.loads((out / "gender" / "similarity.json").read_text())
    assert written["n_pairs"] == 40 and {r["method"] for r in written["rows"]} == {"exact", "rouge_l"}
    run = json.loads((out / "run.json").read_text())
    assert run["config"]["similarity"] == ["exact", "rouge_l"]
    index = (out / "index.html").read_text()
    assert "against the no-effect baseline" in index and "differs from the baseline" in index
    assert 'href="gender/similarity.json"' in index
    page, markdown = (out / "gender" / "report.html").read_text(), (out / "gender" / "report.md").read_text()
    assert 'id="similarity"' in page and "differs from the baseline" in page  # the axis' own report shows it too
    assert 'id="in-plain-words"' in page and "gender in plain words" in index  # and the plain-language summary
    assert "the answer changes in 100.0% of pairs, against" not in page  # greedy and deterministic: no sampling noise
    assert "With greedy decoding the model answers the same context identically (20 of 20" in page
    assert "changes the answer in 100.0% of pairs (40 of 40): more than zero" in page
    assert "## Counterfactual answers against the no-effect baseline" in markdown
    assert "| exact | 1.000 | 0.000 | +1.000 |" in markdown
    bad = CliRunner().invoke(
        app,
        [
            "audit",
            "--corpus",
            str(corpus),
            "--axis",
            "gender",
            "--model",
            "builtin:echo",
            "--similarity",
            "bleu",
            "-o",
            str(tmp_path / "r2"),
        ],
    )
    assert bad.exit_code == 2 and "unknown --similarity method 'bleu'" in bad.output


def _flaky(context: str) -> str:
    """Fails on questions 3 and 13 both ways, 5 and 15 about him, and every fourth about her."""
    number = int(context.rsplit(" ", 1)[-1])
    she = re.search(r"\bshe\b", context) is not None
    if number in (3, 13) or (she and number % 4 == 0) or (not she and number in (5, 15)):
        raise RuntimeError("backend 500")
    return "Sounds good."


def test_pairs_left_out_because_a_side_failed_are_counted_in_a_warning() -> None:
    pairs = _pairs(20)
    assert all(re.search(r"\bshe\b", pair.b) and not re.search(r"\bshe\b", pair.a) for pair in pairs)
    result = fairtalk.similarity_test(pairs, model=_flaky, settings=DecodingSettings(max_new_tokens=8))
    assert result.n_pairs == 11 and all(row.n_pairs == 11 for row in result.rows)
    expected = (
        "9 of 20 pairs left out: a side failed (side a only 2, side b only 5, both 2); "
        "the test is on the pairs answered on both sides"
    )
    assert [w for w in result.warnings if "left out" in w] == [expected]
    assert expected in result.to_dict()["warnings"]


def test_the_similarity_command_says_how_many_pairs_a_failed_side_left_out(tmp_path) -> None:  # noqa: ANN001
    from typer.testing import CliRunner

    from fairtalk.cli import app

    pairs = tmp_path / "pairs.jsonl"
    fairtalk.write_pairs(_pairs(20), pairs)  # side b says "she"
    bot = tmp_path / "herfails.py"
    bot.write_text(
        "import re\n"
        "def reply(text):\n"
        "    if re.search(r'\\bshe\\b', text) and int(text.rsplit(' ', 1)[-1]) % 2 == 0:\n"
        "        raise RuntimeError('backend 500')\n"
        "    return 'Sounds good.'\n"
    )
    args = ["similarity", "--pairs", str(pairs), "--model", f"python:{bot}:reply"]
    expected = "10 of 20 pairs left out: a side failed (side a only 0, side b only 10, both 0)"
    done = CliRunner().invoke(app, args)
    assert done.exit_code == 0, done.output
    assert f"warning: {expected}" in " ".join(done.output.split()) and "10 pairs" in done.output
    done = CliRunner().invoke(app, [*args, "--json"])
    result = json.loads(done.stdout)
    assert result["n_pairs"] == 10 and any(w.startswith(expected) for w in result["warnings"])


def test_a_method_where_every_pair_matches_its_baseline_is_left_out_of_the_holm_family(pairs) -> None:  # noqa: ANN001
    """As the audit leaves out keys where every pair scores the same: ``answered`` (both sides always answer) and
    ``length_ratio`` ("Sir." and "Ma'am." are one word each) test nothing, and the family is the other two."""
    greedy = DecodingSettings(max_new_tokens=8)
    methods = ("exact", "rouge_l", "answered", "length_ratio")
    result = fairtalk.similarity_test(pairs, model=_Toy(polite=True), settings=greedy, methods=methods)
    rows = {row.method: row for row in result.rows}
    for method in ("answered", "length_ratio"):
        row = rows[method]
        assert row.counterfactual == row.baseline == 0.0 and row.p_adjusted is None, method
        assert row.note is not None and "left out of the Holm family" in row.note
    adjusted = fairtalk.stats.adjust_pvalues([rows["exact"].p, rows["rouge_l"].p], method="holm")  # 2 tests, not 4
    assert [rows["exact"].p_adjusted, rows["rouge_l"].p_adjusted] == pytest.approx(adjusted.tolist())
    assert set(result.detected()) == {"exact", "rouge_l"}
