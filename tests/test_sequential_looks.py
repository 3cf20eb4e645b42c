"""`--until-decided` across its looks: each pair side asked once per run, looks the corpus cannot hold refused, the keys that held it back."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

import fairtalk
from audit_toys import write_big_corpus as _big_corpus
from audit_toys import write_corpus
from fairtalk import SpecError
from fairtalk.cli import app

runner = CliRunner()
FAST = {"n_resamples": 200}
_FEMALE = ("she", "her", "mother", "girl", "sister")

#: A ``python:`` model that logs every context it is asked, and fails on about a third of the contexts naming a woman.
_CRASHY = """
import hashlib
import os

_FEMALE = ("she", "her", "mother", "girl", "sister")


def crashy(context):
    with open(os.environ["CALLS_LOG"], "a", encoding="utf-8") as log:
        log.write(hashlib.sha256(context.encode()).hexdigest() + "\\n")
    if any(word in context.split() for word in _FEMALE) and hashlib.sha256(context.encode()).digest()[0] % 3 == 0:
        raise RuntimeError("backend exploded")
    return "that is lovely, i am so happy for you"
"""


def _fails(context: str) -> bool:
    return any(word in context.split() for word in _FEMALE) and hashlib.sha256(context.encode()).digest()[0] % 3 == 0


class Crashy:
    """A callable model that counts the contexts it is asked and fails on about a third of those naming a woman."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def __call__(self, context: str) -> str:
        self.asked.append(context)
        if _fails(context):
            raise RuntimeError("backend exploded")
        return "that is lovely, i am so happy for you"


def _audit(corpus: Path, model: object, **options: object) -> fairtalk.AuditRun:
    settings: dict[str, object] = {
        "axes": "gender",
        "until_decided": True,
        "n_pairs": 10,
        "max_pairs": 40,
        "measures": "offense",
        "max_consecutive_failures": 0,
        **FAST,
    }
    return fairtalk.audit(corpus=str(corpus), model=model, **{**settings, **options})  # type: ignore[arg-type]


def test_a_side_that_failed_at_one_look_is_not_asked_again_in_the_run(tmp_path: Path) -> None:
    """It once was asked again at every later look (954 calls for 800 sides); a rerun still retries it, once."""
    corpus, store = _big_corpus(tmp_path), tmp_path / "store.sqlite"
    model = Crashy()
    run = _audit(corpus, model, store=store)
    record = run.results["gender"].provenance.sequential
    assert record is not None and record.looks == 4 and record.stopped == "budget spent"  # identical answers: 4 looks
    asked = Counter(model.asked)
    failed = {context for context in asked if _fails(context)}
    assert failed and max(asked.values()) == 1 and len(model.asked) == 80  # each of the 40 pairs' sides once
    generation = run.axes["gender"].generation
    assert (generation.n_generated, generation.n_cached, generation.n_errors) == (80 - len(failed), 0, len(failed))
    assert generation.n_pairs_with_errors == len(failed) and run.results["gender"].n_pairs == 40 - len(failed)
    assert dict(generation.error_counts) == {"ResponderError": len(failed)}

    again = Crashy()  # a rerun asks the store's failures again, each once, and is answered the rest by the store
    rerun = _audit(corpus, again, store=store)
    assert Counter(again.asked) == Counter(failed)
    generation = rerun.axes["gender"].generation
    assert (generation.n_generated, generation.n_cached, generation.n_errors) == (0, 80 - len(failed), len(failed))


def test_cli_counts_each_side_once_across_the_looks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    models, calls = tmp_path / "crashy.py", tmp_path / "calls.log"
    models.write_text(_CRASHY, encoding="utf-8")
    monkeypatch.setenv("CALLS_LOG", str(calls))
    args = ["audit", "--corpus", str(_big_corpus(tmp_path)), "--axis", "gender", "--model", f"python:{models}:crashy"]
    args += ["--measures", "offense", "--until-decided", "--pairs", "10", "--max-pairs", "40", "--resamples", "200"]
    done = runner.invoke(app, [*args, "-o", str(tmp_path / "out"), "--max-consecutive-failures", "0"])
    assert done.exit_code == 0, done.output
    logged = Counter(calls.read_text(encoding="utf-8").split())
    assert sum(logged.values()) == 80 and max(logged.values()) == 1  # 40 pairs, each side asked once
    results = json.loads((tmp_path / "out" / "gender" / "results.json").read_text(encoding="utf-8"))
    assert results["manifest"]["audit"]["sequential"]["looks"] == 4
    n_failed = 40 - results["n_pairs"]
    said = " ".join(done.output.split())
    assert f"gender: {80 - n_failed} generated, 0 from the store, {n_failed} failed ({n_failed} pairs left out" in said


@pytest.mark.parametrize(
    ("n_pairs", "looks", "message"),
    [
        (
            450,
            40,
            "looks=40 (--looks 40): axis gender: {corpus} gives 480 pairs, fewer than max_pairs=1,000 (--max-pairs): "
            "from n_pairs=450 (--pairs) to its 480 pairs the looks after the first add at most 30 pairs, at least one "
            "each, so at most 31 looks fit; give looks=31 (--looks 31) or fewer",
        ),
        (
            500,
            2,
            "looks=2 (--looks 2): axis gender: {corpus} gives 480 pairs, no more than the first look's n_pairs=500 "
            "(--pairs), so no look after the first can add a pair; leave looks (--looks) out",
        ),
    ],
)
def test_looks_the_corpus_cannot_hold_are_refused_before_any_answer(
    tmp_path: Path, n_pairs: int, looks: int, message: str
) -> None:
    """--looks 20 between 150 and 4000 pairs on a corpus of 162 once ran 13 one-pair looks, silently."""
    corpus, model = _big_corpus(tmp_path), Crashy()
    with pytest.raises(SpecError) as caught:
        _audit(corpus, model, n_pairs=n_pairs, max_pairs=1000, looks=looks)
    assert message.format(corpus=corpus) in str(caught.value)
    assert model.asked == []


def test_looks_that_fit_in_the_corpus_run_between_the_first_look_and_its_pairs(tmp_path: Path) -> None:
    run = _audit(_big_corpus(tmp_path), lambda context: "ok", n_pairs=470, max_pairs=1000, looks=3, measures="length")
    record = run.results["gender"].provenance.sequential
    assert record is not None and record.planned_looks == (470, 475, 480) and record.n_pairs_available == 480


def test_cli_refuses_looks_the_corpus_cannot_hold_with_exit_2_and_writes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "out"
    args = ["audit", "--corpus", str(write_corpus(tmp_path)), "--axis", "gender", "--model", "builtin:echo", "-o", str(out)]
    done = runner.invoke(app, [*args, "--until-decided", "--pairs", "30", "--max-pairs", "4000", "--looks", "60"])
    assert done.exit_code == 2, done.output
    said = " ".join(done.stderr.split())
    assert said.startswith("error: looks=60 (--looks 60): axis gender: ") and "looks fit; give looks=" in said
    assert "fewer than max_pairs=4,000 (--max-pairs)" in said and not out.exists()


def test_a_key_identical_on_every_pair_holds_the_run_back_and_the_record_and_console_say_why(tmp_path: Path) -> None:
    """docs/statistics.md once said "not tested" keys do not hold the run back; an identical key does, until its bound decides."""
    run = _audit(_big_corpus(tmp_path), lambda context: "that is lovely", measures="offense,length", margins={"length": 0.5})
    record = run.results["gender"].provenance.sequential
    assert record is not None and record.stopped == "budget spent" and record.undecided == ("offense_rate", "length")
    why = dict(record.undecided_why or {})
    assert set(why) == {"offense_rate", "length"} and all(text.startswith("identical on every pair") for text in why.values())
    assert run.results["gender"].measure("offense_rate").not_tested is None  # no test ran, yet it is no "not tested" key
    assert record.to_dict()["undecided_why"] == why

    corpus = _big_corpus(tmp_path)
    args = ["audit", "--corpus", str(corpus), "--axis", "gender", "--model", "builtin:echo", "-o", str(tmp_path / "out")]
    done = runner.invoke(app, [*args, "--until-decided", "--pairs", "20", "--max-pairs", "40", "--measures", "offense"])
    assert done.exit_code == 0, done.output
    said = " ".join(done.output.split())
    assert "budget spent, still undecided: offense_rate" in said
    assert "gender: offense_rate held the run back: identical on every pair, so there is no difference to test" in said


def test_the_report_pages_and_index_say_why_each_undecided_key_held_the_run_back(tmp_path: Path) -> None:
    """Review finding: index.html and report.md/html said only "budget spent, still undecided: offense_rate"."""
    import html

    out = tmp_path / "out"
    args = ["audit", "--corpus", str(_big_corpus(tmp_path)), "--axis", "gender", "--model", "builtin:echo", "-o", str(out)]
    done = runner.invoke(app, [*args, "--until-decided", "--pairs", "20", "--max-pairs", "40", "--measures", "offense"])
    assert done.exit_code == 0, done.output
    why = json.loads((out / "gender" / "results.json").read_text())["manifest"]["audit"]["sequential"]["undecided_why"]
    reason = f"offense_rate held the run back: {why['offense_rate']}."
    assert reason.startswith("offense_rate held the run back: identical on every pair")
    markdown = (out / "gender" / "report.md").read_text()
    item = next(line for line in markdown.split("\n\n") if line.startswith("- offense\\_rate held the run back"))
    assert " ".join(item.split()) == "- " + reason.replace("_", "\\_") and max(map(len, item.splitlines())) <= 80
    page = html.unescape((out / "gender" / "report.html").read_text())
    assert f'<ul class="meta" id="undecided"><li>{reason}</li></ul>' in page
    index = html.unescape((out / "index.html").read_text())
    assert f"<p>{reason}</p>" in index


def test_a_run_the_corpus_capped_advises_a_larger_corpus_not_more_pairs(tmp_path: Path) -> None:
    """Review finding: with a 30-pair corpus and --max-pairs 30, undecided_why still said "more pairs, or a wider margin,
    decide it", though the corpus had no more pairs."""
    path = tmp_path / "thirty.txt"
    lines = [f"{s} {p} at {h} o'clock" for s in ("he", "my father") for p in ("made dinner", "was late") for h in range(1, 9)]
    path.write_text("\n".join(lines[:30]) + "\n", encoding="utf-8")
    capped = _audit(path, lambda context: "that is lovely", n_pairs=10, max_pairs=30, looks=3)
    record = capped.results["gender"].provenance.sequential
    assert record is not None and record.n_pairs_available == 30 and record.n_pairs == 30
    assert record.stopped == "budget spent" and record.undecided == ("offense_rate",)
    why = dict(record.undecided_why or {})["offense_rate"]
    assert why.startswith("identical on every pair") and "more pairs, or" not in why
    assert why.endswith("(the corpus has no more pairs: a larger corpus, or a wider margin, decide it)")
    budget = _audit(_big_corpus(tmp_path), lambda context: "that is lovely", n_pairs=10, max_pairs=30, looks=3)
    record = budget.results["gender"].provenance.sequential  # max_pairs, not the corpus, stopped it: more pairs can
    assert record is not None and dict(record.undecided_why or {})["offense_rate"].endswith(
        "(more pairs, or a wider margin, decide it)"
    )
