"""Reports that agree with themselves (issue 25): every DIFFERENT row named, the index badge, the certificate, the header."""

from __future__ import annotations

import dataclasses
import html
import json
import re
from pathlib import Path

import numpy as np
import pytest
from report_fixtures import SAMPLED, build_result, build_run
from typer.testing import CliRunner

import fairtalk
from fairtalk.cli import app
from fairtalk.inference import certify
from fairtalk.measures import Measure
from fairtalk.models import Responder
from fairtalk.report import plain_summary, render_html, render_index, render_markdown, write_run
from fairtalk.report._decoding import system_prompt_hash
from fairtalk.results import (
    AuditProvenance,
    AuditResult,
    MeasureResult,
    Provenance,
    TestedKey,
)

runner = CliRunner()
SYSTEM = "You are a customer-support assistant for Acme. Answer in one sentence."


def _verdicts(
    result: AuditResult, verdict: str, *, different: tuple[str, ...] = (), secondary: tuple[str, ...] = ()
) -> AuditResult:
    """``result`` with every measure's verdict set to ``verdict``, the ``different`` ones detected; ``secondary`` not primary."""
    measures = []
    for m in result.measures:
        detected = m.name in different
        measures.append(
            dataclasses.replace(
                m,
                verdict="difference detected" if detected else verdict,
                primary=m.name not in secondary,
                p_adjusted=0.001 if detected else 0.5,
                equivalent=verdict == "equivalent" and not detected,
                equivalence_margin=0.02 if m.kind == "rate" else 0.1,
            )
        )
    return dataclasses.replace(result, measures=tuple(measures))


def _token_limit_row() -> MeasureResult:
    return MeasureResult(
        TestedKey(
            name="hit_token_limit",
            kind="rate",
            a=0.30,
            b=0.10,
            difference=2 / 3,
            z=None,
            p=None,
            p_paired=0.0005,
            paired_test="mcnemar_exact",
            ci95=(0.1, 0.3),
            effect_size=None,
            effect_size_name="",
        ),
        p_adjusted=0.001,
        verdict="difference detected",
        primary=False,
    )


def _secondary_only() -> AuditResult:
    """No primary measure differs; the secondary ``hit_token_limit`` row is DIFFERENT (the run of issue 25)."""
    base = _verdicts(build_result(hostile=False), "inconclusive")
    return dataclasses.replace(base, measures=(*base.measures, _token_limit_row()))


# 1. the summary names every DIFFERENT row, primary or not ----------------------------------------------------------


def test_the_summary_names_a_secondary_difference_and_says_it_is_outside_the_gate() -> None:
    result = _secondary_only()
    assert result.detected() == ()  # the gate sees nothing ...
    sentences = plain_summary(result)
    token = next(s for s in sentences if s.startswith("Cut Off at the Token or Record Limit"))  # ... the summary still names it
    assert "(a secondary measure, outside the gate)" in token and "30.0% (male) vs 10.0% (female)" in token
    assert not any(s.startswith("No measure differs") for s in sentences)
    assert any(s.startswith("No primary measure (those the gate looks at) differs") for s in sentences)
    markdown = render_markdown(result)
    assert "Cut Off at the Token or Record Limit is higher for male (a secondary measure, outside the gate)" in markdown
    page = render_html(result, plots=False)
    assert (
        '<span class="badge warn">1 secondary difference, outside the gate</span> Cut Off at the Token or Record Limit (%)'
        in page
    )
    assert '<span class="badge ok">no significant difference</span>' not in page  # nothing was shown equivalent


def test_a_primary_difference_and_all_equivalent_keep_their_badges() -> None:
    different = _verdicts(build_result(hostile=False), "inconclusive", different=("offense_rate",))
    assert '<span class="badge bias">1 significant difference</span>' in render_html(different, plots=False)
    calm = dataclasses.replace(_verdicts(build_result(hostile=False), "equivalent"), input_summary={})  # no pair lost
    assert '<span class="badge ok">no significant difference</span>' in render_html(calm, plots=False)
    assert plain_summary(calm)[0] == "No measure differs between male and female after the multiple-testing correction."


def _write_pairs(path: Path, pairs: list[tuple[str, str]]) -> Path:
    with path.open("w", encoding="utf-8") as f:
        for i, (a, b) in enumerate(pairs):
            f.write(json.dumps({"pair_id": f"p{i}", "side": "a", "context": f"he said {i}", "response": a}) + "\n")
            f.write(json.dumps({"pair_id": f"p{i}", "side": "b", "context": f"she said {i}", "response": b}) + "\n")
    return path


def test_the_terminal_never_says_no_difference_below_a_different_row(tmp_path: Path) -> None:
    kind, rude = "That is wonderful, I love it, great job!", "I hate you, you stupid idiot, this is awful and terrible."
    neutral = ("ok see you tomorrow", "what time is it", "i went to the store", "maybe later", "he said hi")
    responses = _write_pairs(tmp_path / "r.jsonl", [(kind, rude)] * 40 + [(t, t) for t in neutral * 4])
    done = runner.invoke(
        app,
        [
            "score",
            "--responses",
            str(responses),
            "--axis",
            "gender",
            "-o",
            str(tmp_path / "out"),
            "--primary",
            "refusal_rate",
            "--resamples",
            "200",
        ],
    )
    assert done.exit_code == 0, done.output
    data = json.loads((tmp_path / "out" / "results.json").read_text())
    different = [k for k, m in data["measures"].items() if m["verdict"] == "difference detected"]
    assert "offense_rate" in different and not any(data["measures"][k]["primary"] for k in different)
    assert "DIFFERENT" in done.output  # the table marks them ...
    assert "no difference detected on any axis" not in done.output  # ... so the last line must not deny it
    unwrapped = re.sub(r"\n +", " ", done.output)  # a finding the console wrapped, on one line again
    line = next(s for s in unwrapped.splitlines() if "outside the gate:" in s)
    assert all(key in line for key in different)
    assert "no difference detected in the primary measures" in done.output


# 2. the index badge reads "inconclusive" when nothing was decided ---------------------------------------------------


def _verdict_cell(page: str) -> str:
    cell = re.search(r'<td class="verdict">(.*?)</td>', page, re.S)
    assert cell is not None
    return cell.group(1)


def test_the_index_badge_is_inconclusive_when_nothing_was_decided() -> None:
    cell = _verdict_cell(render_index(build_run(_verdicts(build_result(hostile=False), "inconclusive"))))
    assert '<span class="badge warn">inconclusive</span>' in cell and "badge ok" not in cell
    assert "no difference detected; 0 of 8 shown equivalent" in cell


def test_the_index_badge_is_green_only_when_every_primary_measure_is_shown_equivalent() -> None:
    calm = dataclasses.replace(_verdicts(build_result(hostile=False), "equivalent"), input_summary={})  # no pair lost
    cell = _verdict_cell(render_index(build_run(calm)))
    assert '<span class="badge ok">none</span> all 8 shown equivalent' in cell
    some = _verdicts(build_result(hostile=False), "equivalent")
    some = dataclasses.replace(
        some, measures=(dataclasses.replace(some.measures[0], verdict="inconclusive", equivalent=False), *some.measures[1:])
    )
    assert '<span class="badge warn">inconclusive</span>' in _verdict_cell(render_index(build_run(some)))
    cell = _verdict_cell(render_index(build_run(_secondary_only())))
    assert "secondary, outside the gate</span> Cut Off at the Token or Record Limit (%)" in cell
    biased = _verdicts(build_result(hostile=False), "inconclusive", different=("offense_rate",))
    assert '<span class="badge bias">1 of 8</span> Offense Rate (%)' in _verdict_cell(render_index(build_run(biased)))


# 3. the certificate flags a scorer only when its gap is beyond the margin and distinguishable from 0 ---------------


class _OneProbeIn30(Measure):
    """Reacts to one probe of 30 ("She is at the door."): a gap of 1 in 30, p = 1.0."""

    kind = "rate"
    version = "1"

    def __init__(self, key: str) -> None:
        self.key = key

    @property
    def name(self) -> str:
        return self.key

    @property
    def keys(self) -> tuple[str, ...]:
        return (self.key,)

    @property
    def higher_is_better(self) -> dict[str, bool | None]:
        return {self.key: None}

    def score(self, texts):  # noqa: ANN001, ANN201
        return {self.keys[0]: np.array([float(t == "She is at the door.") for t in texts])}


def test_four_one_in_thirty_gaps_give_notes_not_red_banners() -> None:
    keys = ("offense_rate", "sentiment_positive", "sentiment_negative", "refusal_rate")
    checks = certify([_OneProbeIn30(k) for k in keys], fairtalk.load_lexicon("gender"), {})
    assert len(checks) == 4 and all(c.p == 1.0 and abs(c.gap) > c.margin and not c.flagged for c in checks)
    result = dataclasses.replace(build_result(hostile=False), scorer_check=checks)
    assert result.flagged_scorers() == ()
    markdown = render_markdown(result)
    assert "**Scorer check" not in markdown  # no banner
    assert markdown.count("Scorer check note: ") == 4 and "not distinguishable from 0 (p 1.000" in markdown
    page = render_html(result, plots=False)
    assert 'class="badge bias">scorer check' not in page and page.count('class="badge note">scorer check') == 4
    assert not any("scorer check flags" in s for s in plain_summary(result))


# 4. --turns, the system prompt's hash and the decoding in every report header -------------------------------------


def _header_of(text: str) -> str:
    found = re.search(r"turns \d+ · system prompt [^<\n]*", html.unescape(text))
    assert found is not None, text[:2000]
    return found.group(0)


def test_turns_system_prompt_hash_and_decoding_are_in_every_header(tmp_path: Path) -> None:
    fingerprint = 'hf:smollm2 {"dtype":"auto","system_prompt":' + json.dumps(SYSTEM) + "}"
    audit = {"model": fingerprint, "decoding": SAMPLED, "seed": 5}
    result = dataclasses.replace(build_result(hostile=False), provenance=Provenance(audit=AuditProvenance(**audit)))
    run = build_run(result, config={"turns": 3, "model_args": {}}, model=fingerprint)
    write_run(run, tmp_path / "out", formats=("md", "html"))
    expected = (
        f"turns 3 · system prompt sha256 {system_prompt_hash(SYSTEM)} · sampled (temperature 0.7, top_p 0.9, "
        "per-answer seeds from seed 5), max_new_tokens 256"
    )
    for page in ("index.html", "gender/report.html", "gender/report.md"):
        text = (tmp_path / "out" / page).read_text(encoding="utf-8").replace("\\_", "_")
        assert _header_of(text) == expected, page
    assert len(system_prompt_hash(SYSTEM)) == 12


class _Assistant(Responder):
    """A chat model with a system prompt in its fingerprint (as ``hf:`` and ``openai:`` have)."""

    @property
    def fingerprint(self) -> str:
        return "toy:assistant " + json.dumps({"system_prompt": SYSTEM})

    def respond(self, contexts, settings, *, seeds):  # noqa: ANN001, ANN201
        return ["Sure! " + " ".join(c.split()[:4]) for c in contexts]


def test_an_audit_writes_the_same_header_into_every_page(tmp_path: Path) -> None:
    corpus = tmp_path / "toy.txt"
    corpus.write_text("".join(f"{s} told me about trip {i}\n" for i in range(12) for s in ("he", "she")))
    fairtalk.audit(
        corpus=str(corpus),
        axes="gender",
        model=_Assistant(),
        out_dir=str(tmp_path / "out"),
        n_resamples=50,
        measures=["length", "refusal", "degenerate"],
    )
    expected = f"turns 1 · system prompt sha256 {system_prompt_hash(SYSTEM)} · greedy, max_new_tokens 256"
    for page in ("index.html", "gender/report.html", "gender/report.md"):
        text = (tmp_path / "out" / page).read_text(encoding="utf-8").replace("\\_", "_")
        assert _header_of(text).startswith(expected), page


def test_a_scored_result_without_an_audit_has_no_run_header() -> None:
    result = build_result(hostile=False)
    assert "system prompt" not in render_markdown(result) and 'id="run-header"' not in render_html(result, plots=False)


# the degenerate rate in the plain summary ----------------------------------------------------------------------------


@pytest.mark.parametrize(("a", "b", "said"), [(0.0, 0.0, False), (0.125, 0.05, True)])
def test_the_summary_says_how_many_answers_loop_or_are_garbage(a: float, b: float, said: bool) -> None:
    row = MeasureResult(
        TestedKey(
            name="degenerate_rate",
            kind="rate",
            a=a,
            b=b,
            difference=None,
            z=None,
            p=None,
            p_paired=0.4,
            paired_test="mcnemar_exact",
            ci95=(-0.02, 0.17),
            effect_size=None,
            effect_size_name="",
        ),
        p_adjusted=0.5,
    )
    result = dataclasses.replace(build_result(hostile=False), measures=(*build_result(hostile=False).measures, row))
    sentences = [s for s in plain_summary(result) if "loop or are garbage" in s]
    if said:
        assert sentences == [
            "12.5% of answers for male and 5.0% for female loop or are garbage (empty, repeated "
            "words, a letter run, another script); every other measure scores them like normal "
            "answers, so read those rows with this in mind."
        ]
    else:
        assert sentences == []
    assert "Degenerate Rate (%)" in render_markdown(result)


def test_the_index_row_reads_the_labels_beside_the_scorers_verdicts() -> None:
    """Review: under a gate failed on the labels, the row said "none / all 8 shown equivalent"."""
    from fairtalk.report._table import measure_label
    from fairtalk.stats import PPIEstimate

    result = _verdicts(build_result(hostile=False), "equivalent")
    rate = next(m for m in result.measures if m.kind == "rate" and m.primary)
    shown = PPIEstimate(0.9, (0.8, 1.0), 0.01, 0.05, 100, 100, 0.0, 0.0, 0.9, (0.8, 1.0), float("nan"))
    measures = tuple(dataclasses.replace(m, ppi=shown) if m is rate else m for m in result.measures)
    cell = _verdict_cell(render_index(build_run(dataclasses.replace(result, measures=measures))))
    label = measure_label(rate.name)
    assert f"{label} (shown by the labels)" in cell and '<span class="badge bias">1 of 8</span>' in cell
    assert f'<span class="badge bias">not shown equivalent on the labels</span> {label}' in cell
    assert "all 8 shown equivalent" not in cell and "badge ok" not in cell
    wide = PPIEstimate(0.0, (-0.5, 0.5), 0.5, 0.25, 100, 100, 0.0, 0.0, 0.0, (-0.5, 0.5), float("nan"))
    measures = tuple(dataclasses.replace(m, ppi=wide) if m is rate else m for m in result.measures)
    cell = _verdict_cell(render_index(build_run(dataclasses.replace(result, measures=measures))))
    assert "all 8 shown equivalent (1 the labels could not confirm)" in cell


def test_the_index_and_the_terminal_write_counts_with_thousands_separators() -> None:
    """index.html said "gender 13806" and the console header "1470 pairs", where the lines beside them say 13,806 and 1,470."""
    from fairtalk.report import rich_table

    result = dataclasses.replace(build_result(hostile=False), n_pairs=1470, n_clusters=1234)
    run = build_run(result)
    (axis,) = run.axes.values()
    coverage = dataclasses.replace(axis.coverage, n_read=13806, n_matched=1606)
    page = render_index(dataclasses.replace(run, axes={result.axis: dataclasses.replace(axis, coverage=coverage)}))
    assert f"{result.axis} 13,806 (1,606 mention a group" in page, page
    assert '<td class="num">1,470</td>' in page and "2,940 generated" in page
    title = str(rich_table(result).title)
    assert title.endswith("1,470 pairs, 1,234 dialogues"), title


def test_report_md_and_html_headers_write_counts_with_thousands_separators() -> None:
    """report.md and report.html said "1470 pairs" and "1234 dialogues among the 1470 pairs" beside "1,470 pairs taken"."""
    result = dataclasses.replace(build_result(hostile=False), n_pairs=1470, n_clusters=1234)
    markdown = render_markdown(result)
    assert "1,470 pairs · α = " in markdown and "- 1,234 dialogues among the 1,470 pairs:" in markdown
    assert "1470 pairs" not in markdown
    page = render_html(result)
    assert "1,470 pairs from 1,234 dialogues" in page and "1,234 dialogues among the 1,470 pairs:" in page
    assert "1470 pairs" not in page
