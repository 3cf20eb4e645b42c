"""``prompts analyze --gold``: completion ids kept and joined to the label page's gold file; gaps corrected by PPI."""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from typer.testing import CliRunner

from bench_scripts import load_bench
from fairtalk.cli import app
from fairtalk.errors import InputError
from fairtalk.gold import GoldLog, draw_sample, label_scheme, read_gold
from fairtalk.prompts import GroupPair, GroupSet, analyze_prompts, gold_regard, read_completions
from fairtalk.prompts._gold import WARN_UNKNOWN
from fairtalk.results import PromptAnalysis
from fairtalk.stats import ppi_mean

runner = CliRunner()
GROUPS = GroupSet(("man", "woman"), (GroupPair("gender", "man", "woman"),))
TEMPLATES = ("worked as", "was known for", "had a job as", "was regarded as")
#: Twelve templates: enough for the 10 disagreeing templates PPI++ needs (fewer: the labels alone).
MANY_TEMPLATES = (*TEMPLATES, *(f"template {k}" for k in range(4, 12)))


def _truth(group: str, template: int, structure: int, seed: int) -> int:
    """A person's label: the same spread of regard in both groups (no true gap)."""
    return (-1, 0, 1, 0, 1, 2, -1, 0, 1, 0)[(3 * template + 5 * structure + seed) % 10]


def _scorer(group: str, truth: int) -> int:
    """A scorer that calls the woman's positive completions neutral: it fakes a man − woman gap."""
    return 0 if group == "woman" and truth == 1 else truth


def write_completions(
    path: Path, *, explicit_ids: bool = False, n_seeds: int = 10, templates: Sequence[str] = TEMPLATES
) -> dict[str, int]:
    """A labelled completions file (the scorer's labels), a failed completion first; returns each id's true label."""
    lines = [
        json.dumps(
            {
                "group": "man",
                "template": "worked as",
                "structure": "original",
                "seed": 99,
                "prompt": "x",
                "completion": None,
                "text": None,
                "error": "TransportError: down",
            }
        )
    ]
    truth: dict[str, int] = {}
    for g in ("man", "woman"):
        for t, template in enumerate(templates):
            for s, structure in enumerate(("original", "paranmt:0")):
                for seed in range(n_seeds):
                    y = _truth(g, t, s, seed)
                    rid = f"c{len(lines)}" if explicit_ids else str(len(lines) + 1)
                    record = {
                        "group": g,
                        "template": template,
                        "structure": structure,
                        "seed": seed,
                        "prompt": f"The {g} {template}",
                        "completion": f" a thing {len(lines)}.",
                        "text": f"The {g} {template} a thing {len(lines)}.",
                        "label": _scorer(g, y),
                    }
                    if explicit_ids:
                        record = {"id": rid, **record}
                    lines.append(json.dumps(record))
                    truth[rid] = y
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return truth


def label_with_page_code(completions: Path, gold: Path, truth: dict[str, int], n: int = 60, annotator: str = "ann") -> None:
    """Label a sample the way the page does: draw_sample, then GoldLog.add for every step (the person's true label)."""
    log = GoldLog(gold, draw_sample(completions, n=n, seed=1), [label_scheme("regard")], annotator=annotator)
    for step in log.steps:
        log.add(step.index, truth[step.item.id])


@pytest.mark.parametrize("explicit_ids", [False, True])
def test_the_label_pages_gold_file_joins_to_the_completions_it_came_from(tmp_path, explicit_ids) -> None:
    completions, gold = tmp_path / "c.jsonl", tmp_path / "gold.jsonl"
    truth = write_completions(completions, explicit_ids=explicit_ids)
    label_with_page_code(completions, gold, truth)
    frame = read_completions(completions).frame
    labels = read_gold(gold).regard_labels()
    assert len(labels) == 60 and set(labels) <= set(frame["id"])  # every labelled id is a completion of the file
    texts = dict(zip(frame["id"], frame["text"]))
    for row in map(json.loads, gold.read_text().splitlines()):  # the same completion: the text the page labelled
        assert texts[row["id"]] == row["text"]
        assert labels[row["id"]] == (truth[row["id"]],)
    if not explicit_ids:  # line numbers of the file the user gave (line 1 is the failed completion, not read)
        assert frame["id"].iloc[0] == "2"


def test_read_completions_refuses_a_repeated_or_malformed_id(tmp_path) -> None:
    path = tmp_path / "c.jsonl"
    row = {"group": "man", "template": "t", "structure": "s", "seed": 0, "text": "The man t x."}
    path.write_text(json.dumps({"id": "a", **row}) + "\n" + json.dumps({"id": "a", **row, "seed": 1}) + "\n")
    with pytest.raises(InputError, match="id 'a' appears twice"):
        read_completions(path)
    path.write_text(json.dumps({"id": "a", **row}) + "\n" + json.dumps({"id": "a", **row}) + "\n")  # an identical copy
    assert read_completions(path).data_summary.excluded == {"duplicate": 1}
    path.write_text(json.dumps({"id": [1], **row}) + "\n")
    with pytest.raises(InputError, match='"id" must be a string or an integer'):
        read_completions(path)


def _analysis(tmp_path: Path, n: int = 60, templates: Sequence[str] = TEMPLATES) -> tuple[PromptAnalysis, dict[str, int]]:
    completions, gold = tmp_path / "c.jsonl", tmp_path / "gold.jsonl"
    truth = write_completions(completions, templates=templates)
    label_with_page_code(completions, gold, truth, n=n)
    result = analyze_prompts(
        read_completions(completions),
        groups=GROUPS,
        n_draws=2,
        n_resamples=50,
        gold=read_gold(gold).regard_labels(),
        gold_source=str(gold),
    )
    return result, truth


def test_labels_that_disagree_with_the_scorer_move_the_gap_towards_the_truth(tmp_path) -> None:
    result, truth = _analysis(tmp_path, n=300, templates=MANY_TEMPLATES)
    assert result.gold is not None
    ppi = result.gold.gaps["gender"]
    scorer_gap = result.gaps["gender"].all
    assert scorer_gap is not None and scorer_gap > 0.15  # the scorer's fake gap
    assert ppi.scorer_estimate == pytest.approx(scorer_gap)  # beside the gap the analysis reports
    assert ppi.estimate < scorer_gap - 0.1  # the labels pull it down ...
    assert ppi.ci95[0] < 0.0 < ppi.ci95[1]  # ... to the truth, 0
    assert ppi.n_disagreements == 12 and ppi.method == "PPI++ (delta method, t interval on templates)"
    assert ppi.n_labels == 300 and ppi.effective_labels > ppi.n_labels  # the scorer still helps
    woman, man = result.gold.regard["woman"], result.gold.regard["man"]
    assert woman.estimate > woman.scorer_estimate + 0.1 and woman.lam > 0
    # the scorer is right on every man's completion: no disagreement to estimate its error, so the labels alone
    assert man.n_disagreements == 0 and man.lam == 0.0 and man.estimate == man.labels_estimate
    assert man.method.startswith("labels only (0 disagreements < 10: 0 of 12 labelled templates")
    rates = result.gold.rates["woman"]
    assert set(rates) == {"negative", "neutral", "positive"}
    assert rates["positive"].estimate > rates["positive"].scorer_estimate  # the scorer hid the woman's positives


def test_a_share_with_every_completion_counted_is_ppi_mean_by_template(tmp_path) -> None:
    """With --include-other a label's share is a plain mean: PPI++ is ppi_mean's, clustered by template, and so is the rule.

    The scorer calls the woman's positives neutral: PPI++ gives it weight 0.2 on the neutral share, which buys less than
    one label over the labels' own t interval (the old figure, against their Korn-Graubard interval, said "worth 933"):
    gold_regard and ppi_mean both say so, with the same widths and worth, and show the labels alone."""
    completions, gold = tmp_path / "c.jsonl", tmp_path / "gold.jsonl"
    truth = write_completions(completions, templates=MANY_TEMPLATES)
    label_with_page_code(completions, gold, truth, n=300)
    frame = read_completions(completions).frame
    labels = read_gold(gold).regard_labels()
    found = gold_regard(frame, labels, groups=["man", "woman"], pairs=GROUPS.pairs, include_other=True)
    woman = frame[frame["group"] == "woman"]
    got = found.rates["woman"]["neutral"]  # the share the scorer errs on, in every template: PPI++
    y = np.array([float(labels[i][0] == 0) if i in labels else np.nan for i in woman["id"]])
    scored, templates = (woman["label"] == 0).astype(float), woman["template"].to_numpy()
    expected = ppi_mean(scored, y, clusters=templates, min_disagreements=0)  # PPI++'s own, by neither rule
    ruled = ppi_mean(scored, y, clusters=templates)
    assert got.n_disagreements == 12 and expected.lam == pytest.approx(0.2002, abs=1e-4)
    assert got.labels_alone and got.lam == 0.0 and math.isnan(got.effective_labels) and got.ci95 == got.labels_ci95
    assert ruled.labels_alone and math.isnan(ruled.effective_labels) and math.isnan(expected.effective_labels)
    # twelve templates: PPI++'s interval is on Student's t with 11 degrees of freedom, not the normal
    width = 2 * stats.t.ppf(0.975, 11) * expected.se
    said = f"weight 0.2 on the scorer, {width:.4g} wide against 0.07155, worth 150.4 of 150 labels; 12 of 12 labelled "
    assert said in got.method and said in ruled.method, (got.method, ruled.method)
    assert got.method.startswith("labels only (PPI++'s interval was no narrower by one label than the labels' delta-method")


def test_a_gap_counts_a_template_that_moves_both_groups_alike_once() -> None:
    """The scorer errs by template, alike in both groups: within a template the errors cancel in the gap."""
    rng = np.random.default_rng(3)
    rows, labels = [], {}
    for g in ("man", "woman"):
        for t in range(12):
            for k in range(60):
                y = int(rng.choice([-1, 0, 1]))
                f = 1 if (y == 0 and rng.random() < (t + 2) / 14) else y  # template t errs on (t+2)/14 of the neutral
                rid = f"{g}-{t}-{k}"
                rows.append({"id": rid, "group": g, "template": f"t{t}", "structure": "original", "seed": k, "label": f})
                if k < 20:
                    labels[rid] = (y,)
    found = gold_regard(pd.DataFrame(rows), labels, groups=["man", "woman"], pairs=GROUPS.pairs)
    man, woman, gap = found.regard["man"], found.regard["woman"], found.gaps["gender"]
    # PPI++ throughout: every template shows the scorer's error, in each group
    assert not any(e.too_few_disagreements for e in (man, woman, gap)) and gap.n_disagreements == 12
    assert gap.estimate == pytest.approx(man.estimate - woman.estimate)
    assert gap.se < 0.9 * np.hypot(man.se, woman.se)  # not the sum of two independent variances


def test_unknown_ids_and_labels_outside_regard_are_counted_in_warnings(tmp_path) -> None:
    completions = tmp_path / "c.jsonl"
    truth = write_completions(completions)
    frame = read_completions(completions).frame
    labels: dict[str, tuple[int, ...]] = {rid: (y,) for rid, y in list(truth.items())[::4]}
    labels.update({"nope": (1,), "9999": (0,), next(iter(labels)): (7,)})
    found = gold_regard(frame, labels, groups=["man", "woman"], pairs=GROUPS.pairs)
    assert WARN_UNKNOWN.format(n=2, first="9999") in found.warnings
    assert any("1 label(s) outside regard's -1, 0, 1, 2 (first: 7" in w for w in found.warnings)
    assert "gender" in found.gaps
    with pytest.raises(InputError, match="--gold joins labels to completions by id"):
        gold_regard(frame.drop(columns="id"), labels, groups=["man", "woman"], pairs=GROUPS.pairs)


def test_results_json_holds_a_ppi_per_gap_and_reads_back(tmp_path) -> None:
    result, _ = _analysis(tmp_path)
    written = result.to_dict()
    ppi = written["gaps"]["gender"]["ppi"]
    assert {"estimate", "ci95", "p", "n_labels", "scorer_estimate", "effective_labels"} <= set(ppi)
    assert written["regard"]["woman"]["ppi"]["n_labels"] == 30 and written["gold"]["clusters"] == "template"
    back = PromptAnalysis.from_dict(json.loads(json.dumps(written)))
    assert back == result and back.gold is not None and back.gold.gaps["gender"].ci95 == result.gold.gaps["gender"].ci95
    plain = analyze_prompts(result.frame, groups=GROUPS, n_draws=2, n_resamples=50).to_dict()  # no labels: as before
    assert "gold" not in plain and "ppi" not in plain["gaps"]["gender"] and "ppi" not in plain["regard"]["man"]


def test_cli_prompts_analyze_with_gold_end_to_end(tmp_path) -> None:
    completions, gold = tmp_path / "c.jsonl", tmp_path / "gold.jsonl"
    truth = write_completions(completions)
    label_with_page_code(completions, gold, truth)
    with gold.open("a") as handle:  # an id the completions lack and a label outside regard's four
        handle.write(json.dumps({"id": "12345", "label": 1, "annotator": "ann"}) + "\n")
        handle.write(json.dumps({"id": "3", "label": 5, "annotator": "bo"}) + "\n")
    groups = tmp_path / "g.tsv"
    groups.write_text("man\tgender\nwoman\tgender\n")
    out = tmp_path / "rep"
    result = runner.invoke(
        app,
        [
            "prompts",
            "analyze",
            "--completions",
            str(completions),
            "--groups",
            str(groups),
            "--gold",
            str(gold),
            "-o",
            str(out),
            "--draws",
            "2",
            "--resamples",
            "50",
        ],
    )
    assert result.exit_code == 0, result.output
    payload = json.loads((out / "results.json").read_text())
    ppi, gap = payload["gaps"]["gender"]["ppi"], payload["gaps"]["gender"]["all"]
    assert ppi["n_labels"] == 60 and ppi["estimate"] < gap - 0.1 and ppi["scorer_estimate"] == pytest.approx(gap)
    assert any("1 labelled id(s) are not among the analysed completions" in w for w in payload["warnings"])
    assert any("outside regard's" in w for w in payload["warnings"])
    output = " ".join(result.output.split())
    assert "labelled by 60 human labels" in output and "regard gap gender:" in output and "not among the analysed" in output
    gaps = pd.read_csv(out / "gaps.csv")
    assert gaps.loc[0, "ppi_estimate"] == pytest.approx(ppi["estimate"]) and gaps.loc[0, "ppi_n_labels"] == 60
    assert "ppi_estimate" in pd.read_csv(out / "groups.csv").columns
    for name in ("groups", "gaps"):  # review finding: the counts were written as 20.0
        for row in csv.DictReader((out / f"{name}.csv").open(encoding="utf-8")):
            for column in ("ppi_n_labels", "ppi_n_disagreements"):
                assert row[column] == "" or row[column].isdigit(), (name, column, row[column])
        assert any(r["ppi_n_labels"] for r in csv.DictReader((out / f"{name}.csv").open(encoding="utf-8")))
    html = (out / "report.html").read_text()
    assert "Corrected by human labels" in html and f"{ppi['estimate']:.3f}" in html
    refused = runner.invoke(
        app, ["prompts", "analyze", "--published", str(tmp_path), "--gold", str(gold), "-o", str(tmp_path / "x")]
    )
    assert refused.exit_code == 2 and "it needs --completions" in " ".join(refused.output.split())
    responses = tmp_path / "r.jsonl"
    responses.write_text(json.dumps({"pair_id": "p1", "side": "a", "offense_rate": 1}) + "\n")
    wrong = runner.invoke(
        app,
        [
            "prompts",
            "analyze",
            "--completions",
            str(completions),
            "--groups",
            str(groups),
            "--gold",
            str(responses),
            "-o",
            str(tmp_path / "y"),
        ],
    )
    assert wrong.exit_code == 2 and "labels an audit's responses" in " ".join(wrong.output.split())
    assert "Traceback" not in wrong.output


def _label_as_the_scorer(completions: Path, gold: Path, n: int = 60) -> None:
    """A gold file whose labels all agree with the scorer (which varies): no disagreement to estimate its error from."""
    frame = read_completions(completions).frame
    label_with_page_code(completions, gold, dict(zip(frame["id"], frame["label"].astype(int))), n=n)


def test_labels_that_all_agree_with_the_scorer_give_the_labels_own_interval_and_one_warning(tmp_path) -> None:
    """Issue 39: with fewer than 10 disagreeing templates the estimates are the labels' alone, never PPI++'s narrow one."""
    completions, gold = tmp_path / "c.jsonl", tmp_path / "gold.jsonl"
    write_completions(completions, templates=MANY_TEMPLATES)
    _label_as_the_scorer(completions, gold, n=120)
    found = gold_regard(
        read_completions(completions).frame, read_gold(gold).regard_labels(), groups=["man", "woman"], pairs=GROUPS.pairs
    )
    estimates = [found.gaps["gender"], *found.regard.values(), *(e for r in found.rates.values() for e in r.values())]
    for e in estimates:
        assert e.n_disagreements == 0 and e.too_few_disagreements and e.lam == 0.0 and math.isnan(e.effective_labels)
        assert e.method.startswith("labels only (0 disagreements < 10: 0 of 12 labelled templates disagree")
        assert e.estimate == e.labels_estimate and e.ci95 == e.labels_ci95 and e.se_scorer == 0.0
    gap = found.gaps["gender"]
    assert gap.ci95[1] - gap.ci95[0] > 0.1  # the labels' own width, not the scorer's
    few = [w for w in found.warnings if "disagree with the scorer" in w]
    assert few == [
        "gold: too few labelled templates disagree with the scorer to estimate its error (fewer than 10) for "
        "regard gap gender (0 disagree), mean regard man (0 disagree), mean regard woman (0 disagree), "
        f"{sum(map(len, found.rates.values()))} label share(s) (0 disagree): those estimates and intervals are the "
        "labels' alone, with no effective-labels figure"
    ]


def test_cli_prompts_analyze_with_gold_that_never_disagrees_warns_once_and_shows_the_labels_interval(tmp_path) -> None:
    completions, gold, groups, out = tmp_path / "c.jsonl", tmp_path / "gold.jsonl", tmp_path / "g.tsv", tmp_path / "rep"
    write_completions(completions)
    _label_as_the_scorer(completions, gold)
    groups.write_text("man\tgender\nwoman\tgender\n")
    args = ["prompts", "analyze", "--completions", str(completions), "--groups", str(groups), "--gold", str(gold)]
    result = runner.invoke(app, [*args, "-o", str(out), "--draws", "2", "--resamples", "50"])
    assert result.exit_code == 0, result.output
    output = " ".join(result.output.split())
    assert output.count("too few labelled templates disagree with the scorer") == 1  # once, naming the counts
    assert "regard gap gender (0 disagree)" in output and "labels worth" not in output
    assert "regard gap gender:" in output and "labels only: 0 disagreements with the scorer" in output
    payload = json.loads((out / "results.json").read_text())
    ppi = payload["gaps"]["gender"]["ppi"]
    assert ppi["effective_labels"] is None and ppi["n_disagreements"] == 0 and ppi["lam"] == 0.0
    assert ppi["method"].startswith("labels only (0 disagreements < 10: 0 of 4 labelled templates")
    assert ppi["ci95"] == ppi["labels_ci95"] and ppi["estimate"] == ppi["labels_estimate"]
    assert PromptAnalysis.from_dict(payload).gold == PromptAnalysis.from_dict(json.loads(json.dumps(payload))).gold
    gaps = pd.read_csv(out / "gaps.csv")
    assert gaps.loc[0, "ppi_n_disagreements"] == 0 and str(gaps.loc[0, "ppi_method"]).startswith("labels only")
    assert pd.isna(gaps.loc[0, "ppi_effective_labels"])
    html = (out / "report.html").read_text()
    assert "labels only (0 disagreements &lt; 10" in html and "too few labelled templates disagree" in html


def test_a_group_with_too_few_labels_or_only_other_gets_a_warning_not_an_error(tmp_path) -> None:
    completions = tmp_path / "c.jsonl"
    truth = write_completions(completions)
    frame = read_completions(completions).frame
    man = [rid for rid, g in zip(frame["id"], frame["group"]) if g == "man"]
    woman = [rid for rid, g in zip(frame["id"], frame["group"]) if g == "woman"]
    labels = {rid: (truth[rid],) for rid in man[:20]} | {woman[0]: (1,)}
    found = gold_regard(frame, labels, groups=["man", "woman"], pairs=GROUPS.pairs)
    assert set(found.regard) == {"man"} and found.gaps == {} and found.n_labels == 21
    assert any("group woman has 1 labelled completion(s)" in w for w in found.warnings)
    assert "gold: no labelled gap for gender: a group of it has no labelled estimate" in found.warnings
    only_other = labels | {rid: (2,) for rid in woman[:10]}
    found = gold_regard(frame, only_other, groups=["man", "woman"], pairs=GROUPS.pairs)
    assert "woman" not in found.regard and any("group woman has 10 labelled" in w for w in found.warnings)


def _ppi_prompts_bench() -> ModuleType:
    return load_bench("ppi_prompts")


@pytest.mark.slow
def test_the_interval_clustered_by_template_covers_the_gap_a_group_biased_scorer_misses() -> None:
    bench = _ppi_prompts_bench()
    by_units = {s.units: s for s in bench.simulate(bench.Design(), reps=150, seed=1, errors=("varying",))}
    templates = by_units["templates"]
    assert templates.reps == 150
    assert templates.ppi_superpopulation >= 0.90  # 150 reps: SE 0.016 at 0.95; measured 0.962 (2,000 reps)
    # about half the replicates hold fewer than 10 templates that disagree with the scorer: their gap is the labels'
    # alone (issue 39), so the interval is narrower than the labels-only one by less than PPI++ alone would make it
    # (400 replicates, seed 0: 0.42 against 0.51, labels alone in 53%; PPI++ throughout was 0.32)
    assert 0.2 < templates.labels_alone < 0.8 and by_units["completions"].labels_alone == 0.0
    assert templates.ppi_width < 0.9 * templates.labels_width
    assert templates.scorer_bias > 0.03  # the scorer's error fakes +0.053 of gap on a true +0.060


def _no_negative_labels(n_templates: int = 12, per_template: int = 40, n_labelled: int = 5) -> tuple[pd.DataFrame, dict]:
    """Labels that hold no "negative", while the scorer calls some labelled (and unlabelled) completions negative.

    One labelled completion per template and group is neutral to the person and negative to the
    scorer: in 12 templates, so 12 disagree and the share is PPI++'s unless ``n_templates`` is below 10.
    """
    rows, labels = [], {}
    for g in ("man", "woman"):
        for t in range(n_templates):
            for k in range(per_template):
                y = (0, 1, 2)[(t + k) % 3]  # no negative in truth (and some "other")
                f = -1 if k in (0, 7) else y  # k = 0 is labelled: a disagreement; k = 7 is not
                rid = f"{g}-{t}-{k}"
                rows.append({"id": rid, "group": g, "template": f"t{t}", "structure": "s", "seed": k, "label": f})
                if k < n_labelled:
                    labels[rid] = (y,)
    return pd.DataFrame(rows), labels


def test_a_label_no_labelled_completion_holds_gets_an_exact_interval_inside_0_1_not_a_point() -> None:
    """Issue 39: a labels-only share of 0 had a zero-width interval (its standard error ~1e-16); now Korn-Graubard's.

    (PPI++'s weight on the scorer is 0 for these labels, and its root ``θ`` of ~1e-13 left the
    "other" completions a spread of ~1e-16: the labels-only fallback took that as the standard error.)
    """
    frame, labels = _no_negative_labels(n_templates=8)  # 8 templates: fewer than 10 disagree, the labels alone
    found = gold_regard(frame, labels, groups=["man", "woman"], pairs=GROUPS.pairs)
    for group in ("man", "woman"):
        share = found.rates[group]["negative"]
        assert share.too_few_disagreements and share.estimate == 0.0 and share.labels_estimate == 0.0
        n_counted = sum(1 for rid, (y,) in labels.items() if rid.startswith(group) and y != 2)
        # the exact (Clopper-Pearson) upper bound with the completions as if independent: shares up to it are
        # compatible with 0 of 40; the interval must hold them (the effective sample is never larger)
        assert share.ci95[0] == 0.0 and share.ci95[1] >= 1 - 0.025 ** (1 / n_counted)
        assert share.ci95[1] < 0.2 and share.se > 0 and share.ci95 == share.labels_ci95
        assert share.p == 1.0  # a share of 0 observed: nothing against "the share is 0"
        assert "Korn-Graubard interval (Clopper-Pearson on the effective sample size, degrees of freedom by templates)" in (
            share.method
        )
        for name, other in found.rates[group].items():  # every share's interval inside [0, 1]
            assert 0.0 <= other.ci95[0] < other.ci95[1] <= 1.0, name
    assert found.gaps["gender"].method.endswith("delta-method t interval on templates")  # the gap's is unchanged


def test_a_label_one_labelled_completion_holds_gets_a_lower_bound_above_0() -> None:
    """One event among the labels: the delta-method interval went below 0; the exact one stays inside (0, 1)."""
    frame, labels = _no_negative_labels(n_templates=8)
    first = next(rid for rid in labels if rid.startswith("woman-"))
    labels[first] = (-1,)
    share = gold_regard(frame, labels, groups=["man", "woman"], pairs=GROUPS.pairs).rates["woman"]["negative"]
    n_counted = sum(1 for rid, (y,) in labels.items() if rid.startswith("woman") and y != 2)
    assert share.too_few_disagreements and share.estimate == pytest.approx(1 / n_counted)
    assert 0.0 < share.ci95[0] < share.estimate < share.ci95[1] < 1.0
    assert share.p == 0.0  # a share of 0 could not give a labelled negative


def test_a_ppi_share_whose_labels_hold_no_event_takes_their_exact_interval_not_a_point() -> None:
    """With 12 disagreeing templates the share would be PPI++'s; its weight on the scorer is 0 (the labels hold no negative).

    Today's code gave the interval (-3.2e-14, -2.6e-14) with p 2e-10, "worth 1e28 labels": the
    spread of rounding. It is the labels' own estimate, so it takes their interval, and buys no label: no figure (it
    said "worth 60" for 60).
    """
    frame, labels = _no_negative_labels(n_templates=12)
    share = gold_regard(frame, labels, groups=["man", "woman"], pairs=GROUPS.pairs).rates["man"]["negative"]
    assert not share.too_few_disagreements and share.n_disagreements == 12 and share.lam == 0.0
    assert share.method == (
        "labels only (PPI++'s interval was no narrower: weight 0 on the scorer, so its estimate is the labels' own, worth "
        "their 60 labels; 12 of 12 labelled templates disagree with the scorer), Korn-Graubard interval (Clopper-Pearson "
        "on the effective sample size, degrees of freedom by templates)"
    )
    assert share.estimate == 0.0 and share.ci95 == share.labels_ci95 and share.p == 1.0 and share.no_narrower
    assert share.ci95[0] == 0.0 and 0.05 < share.ci95[1] < 0.2 and math.isnan(share.effective_labels)


def test_cli_prompts_analyze_with_gold_that_holds_no_negative_gives_an_exact_share_interval(tmp_path) -> None:
    completions, gold, groups, out = tmp_path / "c.jsonl", tmp_path / "gold.jsonl", tmp_path / "g.tsv", tmp_path / "rep"
    truth = write_completions(completions)
    # the person never says "negative"; the scorer does, on the completions truly negative in write_completions
    label_with_page_code(completions, gold, {rid: max(0, y) for rid, y in truth.items()})
    groups.write_text("man\tgender\nwoman\tgender\n")
    args = ["prompts", "analyze", "--completions", str(completions), "--groups", str(groups), "--gold", str(gold)]
    result = runner.invoke(app, [*args, "-o", str(out), "--draws", "2", "--resamples", "50"])
    assert result.exit_code == 0, result.output
    payload = json.loads((out / "results.json").read_text())
    for group in ("man", "woman"):
        share = payload["gold"]["rates"][group]["negative"]
        assert share["estimate"] == 0.0 and share["p"] == 1.0
        low, high = share["ci95"]
        assert low == 0.0 and 0.05 < high < 0.5  # not the point [0, 0]
        assert "Korn-Graubard interval" in share["method"]


def test_the_rare_share_bench_finds_no_point_interval_and_none_outside_0_1() -> None:
    """bench/ppi_prompts.py --rare at a small size: a 1% negative share, 50 labels a group (today: 4 in 10 were points)."""
    bench = _ppi_prompts_bench()
    summary = bench.simulate_rare(bench.RareDesign(share=0.01, n_labels=50), reps=10, seed=3)
    assert summary.n_intervals == 20 and summary.labels_alone == 1.0  # 10 templates: the labels' alone
    assert summary.labels_zero_width == 0.0 and summary.labels_outside == 0.0 and summary.shown_outside == 0.0
    assert summary.labels_width > 0.02


def test_cli_prompts_analyze_refuses_labels_given_on_another_completions_file(tmp_path) -> None:
    """Review finding: ids are line numbers, so labels of another file's completions joined silently to other texts."""
    completions, candidate, gold = tmp_path / "c.jsonl", tmp_path / "cand.jsonl", tmp_path / "gold.jsonl"
    truth = write_completions(completions)
    write_completions(candidate)  # the same layout (ids are line numbers) with other texts
    candidate.write_text(candidate.read_text().replace("a thing", "another thing"))
    label_with_page_code(candidate, gold, truth, n=12)
    groups = tmp_path / "g.tsv"
    groups.write_text("man\tgender\nwoman\tgender\n")
    args = ["prompts", "analyze", "--completions", str(completions), "--groups", str(groups), "--gold", str(gold)]
    result = runner.invoke(app, [*args, "-o", str(tmp_path / "rep"), "--draws", "2", "--resamples", "0"])
    output = " ".join(result.output.split())
    assert result.exit_code == 2 and "error:" in output and "Traceback" not in output, result.output
    first = json.loads(gold.read_text().splitlines()[0])
    assert f"12 labelled id(s) hold another text than the analysed completion of that id (first: id {first['id']}" in output
    assert not (tmp_path / "rep" / "results.json").exists()
    # the library refuses them too, before any labelling
    frame = read_completions(completions).frame
    with pytest.raises(InputError, match="12 labelled id"):
        gold_regard(
            frame, read_gold(gold).regard_labels(), groups=["man", "woman"], pairs=GROUPS.pairs, texts=read_gold(gold).texts()
        )
    # labels of this file's own texts join as before
    own = tmp_path / "own.jsonl"
    label_with_page_code(completions, own, truth, n=12)
    found = gold_regard(
        frame, read_gold(own).regard_labels(), groups=["man", "woman"], pairs=GROUPS.pairs, texts=read_gold(own).texts()
    )
    assert found.n_labels == 12
    # texts that differ only by surrounding whitespace are the same text, as `regard check` reads them (review finding)
    padded = [(rid, f"  {text}\n") for rid, text in read_gold(own).texts()]
    found = gold_regard(frame, read_gold(own).regard_labels(), groups=["man", "woman"], pairs=GROUPS.pairs, texts=padded)
    assert found.n_labels == 12


def _few_labels() -> tuple[pd.DataFrame, dict[str, tuple[int, ...]], GroupSet]:
    """A handful of labels (review finding, issue 39 item 1): man 2 in 2 templates, woman 2 in one, straight 2 alike, gay 8 alike."""
    rows = [
        {"id": f"{g}-{t}-{k}", "group": g, "template": f"t{t}", "structure": "s", "seed": k, "label": k % 3 - 1}
        for g in ("man", "woman", "straight person", "gay person")
        for t in range(12)
        for k in range(10)
    ]
    labels = {"man-0-0": (0,), "man-1-0": (1,), "woman-0-0": (1,), "woman-0-1": (1,)}
    labels |= {f"straight person-{t}-0": (1,) for t in range(2)} | {f"gay person-{t}-0": (1,) for t in range(8)}
    pairs = (GroupPair("gender", "man", "woman"), GroupPair("orientation", "straight person", "gay person"))
    return pd.DataFrame(rows), labels, GroupSet(("man", "woman", "straight person", "gay person"), pairs)


def test_few_labels_give_intervals_that_agree_with_their_p_and_stay_in_range() -> None:
    """The review: [-0.684, +1.000] beside p 0.0421; [-5.853, +6.853] for a mean regard; ±inf; a gap to -2.363."""
    frame, labels, groups = _few_labels()
    found = gold_regard(frame, labels, groups=list(groups.groups), pairs=groups.pairs)
    straight, gay = found.regard["straight person"], found.regard["gay person"]
    # every labelled completion +1: the exact bound, and the p of the same bound (the level where it first leaves 0 out)
    assert straight.method.endswith(
        "exact bound (every labelled completion counted alike: Clopper-Pearson on the share that could differ)"
    )
    assert straight.ci95[0] < 0 < straight.p - 0.05 and straight.p == pytest.approx(2 * 0.5**2)
    assert gay.ci95[0] > 0 and gay.p == pytest.approx(2 * 0.5**8) and gay.p < 0.05  # eight: the bound leaves 0 out, p below .05
    man = found.regard["man"]  # two templates: t(1)'s interval reached ±6.85, cut to the mean regard's [-1, 1]
    assert man.ci95 == (-1.0, 1.0) and man.method.endswith("; cut to [-1, +1]") and man.p > 0.05
    woman = found.regard["woman"]  # both labels in one template: no interval (it was ±inf, p 1)
    assert all(math.isnan(x) for x in (*woman.ci95, woman.p, *woman.labels_ci95)) and woman.estimate == 1.0
    assert woman.method == "not estimable (2 labels, all in one template): no interval"
    assert all(math.isnan(e.ci95[0]) for e in found.rates["woman"].values())
    assert found.gaps["gender"].method == "not estimable (4 labels, woman's all in one template): no interval"
    assert any("group woman's 2 labelled completion(s) all lie in one template" in w for w in found.warnings)
    finite = [(e, 1.0) for e in found.regard.values()] + [(e, 2.0) for e in found.gaps.values()]
    finite = [(e, r) for e, r in finite if not math.isnan(e.ci95[0])]
    assert len(finite) == 4
    for e, bound in finite:  # one test: 0 inside the interval exactly when p is at least .05, inside the measure's range
        assert (e.ci95[0] <= 0.0 <= e.ci95[1]) == (e.p >= 0.05), e
        assert -bound <= e.ci95[0] <= e.estimate <= e.ci95[1] <= bound and -bound <= e.labels_ci95[0] <= e.labels_ci95[1] <= bound


def test_cli_prompts_analyze_with_few_labels_says_not_estimable_and_writes_null_with_its_reason(tmp_path) -> None:
    completions, gold, groups_file, out = tmp_path / "c.jsonl", tmp_path / "gold.jsonl", tmp_path / "g.tsv", tmp_path / "rep"
    write_completions(completions, templates=MANY_TEMPLATES)
    frame = read_completions(completions).frame
    man = frame[frame["group"] == "man"].drop_duplicates("template").head(2)  # two templates
    woman = frame[(frame["group"] == "woman") & (frame["template"] == "worked as")].head(2)  # one template
    rows = [
        {"id": r.id, "label": 1 - k % 2, "annotator": "ann", "note": "", "text": r.text} for k, r in enumerate(man.itertuples())
    ]
    rows += [{"id": r.id, "label": 1, "annotator": "ann", "note": "", "text": r.text} for r in woman.itertuples()]
    gold.write_text("".join(json.dumps(row) + "\n" for row in rows))
    groups_file.write_text("man\tgender\nwoman\tgender\n")
    args = ["prompts", "analyze", "--completions", str(completions), "--groups", str(groups_file), "--gold", str(gold)]
    result = runner.invoke(app, [*args, "-o", str(out), "--draws", "2", "--resamples", "0"])
    assert result.exit_code == 0, result.output
    output = " ".join(result.output.split())
    assert "mean regard woman: +1.000, not estimable (2 labels, all in one template): no interval;" in output
    assert "regard gap gender: " in output and "not estimable (4 labels, woman's all in one template)" in output
    assert "inf" not in output and "nan" not in output
    assert "mean regard man: +0.500 [95% CI -1.000, +1.000], p" in output  # t(1)'s ±6 cut to the range
    payload = json.loads((out / "results.json").read_text())
    for ppi in (payload["regard"]["woman"]["ppi"], payload["gaps"]["gender"]["ppi"]):
        assert ppi["ci95"] == [None, None] and ppi["p"] is None and ppi["method"].startswith("not estimable (")
    assert PromptAnalysis.from_dict(payload).gold is not None


def _poor_scorer(seed: int, wrong: float, n_labelled: int) -> tuple[pd.DataFrame, dict]:
    """12 templates x 40 completions per group; the scorer gives a uniform label on a share ``wrong``; ``n_labelled`` of
    each template and group labelled: enough disagreeing templates for PPI++, too few labels for it to help."""
    rng = np.random.default_rng(seed)
    rows, labels = [], {}
    for g in ("man", "woman"):
        for t in range(12):
            for k in range(40):
                y = int(rng.choice([-1, 0, 1, 2], p=[0.25, 0.3, 0.35, 0.1]))
                f = int(rng.choice([-1, 0, 1, 2])) if rng.random() < wrong else y
                rid = f"{g}-{t}-{k}"
                rows.append({"id": rid, "group": g, "template": f"t{t}", "structure": "s", "seed": k, "label": f})
                if k < n_labelled:
                    labels[rid] = (y,)
    return pd.DataFrame(rows), labels


def test_a_ppi_interval_no_narrower_than_the_labels_alone_gives_way_to_theirs() -> None:
    """Review finding (as score --gold's): with 2 labels per template and group and a scorer wrong on half the answers,
    the gap's PPI++ interval was 1.222 wide beside the labels' 1.162, "48 labels worth 43". Now every estimate shown is
    no wider than the labels-only interval beside it, and its effective-labels figure, where given, is more than its labels."""
    frame, labels = _poor_scorer(seed=1, wrong=0.5, n_labelled=2)
    found = gold_regard(frame, labels, groups=["man", "woman"], pairs=GROUPS.pairs)
    gap = found.gaps["gender"]
    assert gap.n_disagreements is not None and gap.n_disagreements >= 10 and not gap.too_few_disagreements
    assert gap.ci95[1] - gap.ci95[0] <= gap.labels_ci95[1] - gap.labels_ci95[0]
    assert gap.no_narrower and gap.lam == 0.0 and math.isnan(gap.effective_labels) and gap.ci95 == gap.labels_ci95
    assert gap.method.startswith("labels only (PPI++'s interval was no narrower: 1.222 wide against the labels' 1.162")
    assert any(
        w.startswith("gold: PPI++'s interval was no narrower than the labels' alone for regard gap gender")
        for w in found.warnings
    )
    for seed, wrong, n_labelled in ((0, 0.8, 2), (0, 0.8, 3), (1, 0.5, 2), (5, 0.8, 3), (2, 0.3, 5)):
        found = gold_regard(*_poor_scorer(seed, wrong, n_labelled), groups=["man", "woman"], pairs=GROUPS.pairs)
        shares = [e for rates in found.rates.values() for e in rates.values()]
        for e in (*found.gaps.values(), *found.regard.values(), *shares):
            width, labels_width = e.ci95[1] - e.ci95[0], e.labels_ci95[1] - e.labels_ci95[0]
            assert width <= labels_width + 1e-12, (seed, wrong, n_labelled, e.method)
            if math.isfinite(e.effective_labels):
                assert e.effective_labels >= e.n_labels + 1 and not e.labels_alone, (seed, wrong, n_labelled, e.method)
            else:
                assert e.labels_alone and e.lam == 0.0 and e.ci95 == e.labels_ci95, (seed, wrong, n_labelled, e.method)


def test_one_disagreement_is_worded_in_the_singular(tmp_path) -> None:
    """Review finding: "1 disagreements" (and "(1 disagree)") in the method, the warning and on the terminal."""
    completions, gold, groups, out = tmp_path / "c.jsonl", tmp_path / "gold.jsonl", tmp_path / "g.tsv", tmp_path / "rep"
    write_completions(completions)
    frame = read_completions(completions).frame
    truth = dict(zip(frame["id"], frame["label"].astype(int)))
    first = next(iter(truth))
    truth[first] = 1 if truth[first] != 1 else -1  # one labelled completion (one template) disagrees with the scorer
    label_with_page_code(completions, gold, truth, n=len(truth))
    groups.write_text("man\tgender\nwoman\tgender\n")
    args = ["prompts", "analyze", "--completions", str(completions), "--groups", str(groups), "--gold", str(gold)]
    result = runner.invoke(app, [*args, "-o", str(out), "--draws", "2", "--resamples", "50"])
    assert result.exit_code == 0, result.output
    output = " ".join(result.output.split())
    assert "regard gap gender (1 disagrees)" in output and "labels only: 1 disagreement with the scorer" in output
    assert "1 disagreements" not in output and "(1 disagree)" not in output
    ppi = json.loads((out / "results.json").read_text())["gaps"]["gender"]["ppi"]
    assert ppi["n_disagreements"] == 1 and ppi["method"].startswith("labels only (1 disagreement < 10: 1 of ")


def test_cli_prompts_analyze_gives_a_scorer_with_no_weight_no_figure(tmp_path) -> None:
    """Review finding (issue 39): a scorer that calls every completion neutral gets PPI++ weight 0 (its regard does not
    vary), so its estimate is the labels' own; the terminal said "120 labels worth 120 labels alone", results.json 120.0,
    method "PPI++ with weight 0 on the scorer". Now the estimates are the labels' alone, with no figure anywhere."""
    completions, gold, groups, out = tmp_path / "c.jsonl", tmp_path / "gold.jsonl", tmp_path / "g.tsv", tmp_path / "rep"
    truth = write_completions(completions, templates=MANY_TEMPLATES)
    lines = completions.read_text().splitlines()
    completions.write_text("".join(json.dumps({**json.loads(line), "label": 0}) + "\n" for line in lines))  # all neutral
    label_with_page_code(completions, gold, truth, n=240)
    groups.write_text("man\tgender\nwoman\tgender\n")
    args = ["prompts", "analyze", "--completions", str(completions), "--groups", str(groups), "--gold", str(gold)]
    result = runner.invoke(app, [*args, "-o", str(out), "--draws", "2", "--resamples", "50"])
    assert result.exit_code == 0, result.output
    output = " ".join(result.output.split())
    assert "labels worth" not in output and "regard gap gender:" in output, output
    assert "gold: PPI++'s interval was no narrower than the labels' alone for regard gap gender, mean regard man" in output
    payload = json.loads((out / "results.json").read_text())
    estimates = [payload["gaps"]["gender"]["ppi"], *(payload["regard"][g]["ppi"] for g in ("man", "woman"))]
    for ppi in estimates:
        assert ppi["n_disagreements"] == 12 and ppi["lam"] == 0.0 and ppi["effective_labels"] is None, ppi
        assert ppi["ci95"] == ppi["labels_ci95"] and ppi["estimate"] == ppi["labels_estimate"]
        assert ppi["method"].startswith("labels only (PPI++'s interval was no narrower: weight 0 on the scorer, so its ")
        assert ppi["method"].endswith(
            "12 of 12 labelled templates disagree with the scorer), delta-method t interval on templates"
        )
    assert pd.isna(pd.read_csv(out / "gaps.csv").loc[0, "ppi_effective_labels"])


def test_a_scorer_that_buys_less_than_one_label_gets_no_figure_and_the_labels_alone() -> None:
    """A scorer wrong on 80% of completions, 5 labels per template and group: PPI++ gives it weight 0.116 on the woman's
    mean regard, and its interval is 60.98 labels' worth for 60: printed "60 labels worth 61 labels alone". A figure is
    given only from one label more than the labels; under that, the estimate is the labels' alone and says why."""
    found = gold_regard(*_poor_scorer(6, 0.8, 5), groups=["man", "woman"], pairs=GROUPS.pairs)
    woman = found.regard["woman"]
    assert woman.n_disagreements == 12 and woman.lam == 0.0 and math.isnan(woman.effective_labels) and woman.no_narrower
    assert woman.ci95 == woman.labels_ci95 and woman.estimate == woman.labels_estimate and woman.se_scorer == 0.0
    assert woman.method == (
        "labels only (PPI++'s interval was no narrower by one label than the labels' delta-method t interval on the same "
        "templates: weight 0.116 on the scorer, 0.5061 wide against 0.5102, worth 60.98 of 60 labels; 12 of 12 labelled "
        "templates disagree with the scorer), delta-method t interval on templates"
    )
    gap = found.gaps["gender"]  # the gap's PPI++ buys 66 labels: kept, with its figure
    assert gap.method == "PPI++ (delta method, t interval on templates)" and 126 < gap.effective_labels < 127
    assert any("for mean regard man, mean regard woman, " in w for w in found.warnings)


def _analyze_with_gold(tmp_path: Path, completions: Path, gold: Path) -> tuple[int, str]:
    groups = tmp_path / "g.tsv"
    groups.write_text("man\tgender\nwoman\tgender\n")
    args = ["prompts", "analyze", "--completions", str(completions), "--groups", str(groups), "--gold", str(gold)]
    result = runner.invoke(app, [*args, "-o", str(tmp_path / "rep"), "--draws", "2", "--resamples", "0"])
    return result.exit_code, " ".join(result.output.split())


def test_cli_prompts_analyze_refuses_fairtalks_own_labels_as_gold(tmp_path) -> None:
    """Review finding: `regard label` output given as --gold ran as "labelled by N human labels (prediction-powered)"."""
    completions, texts, labels = tmp_path / "c.jsonl", tmp_path / "texts.jsonl", tmp_path / "labels.jsonl"
    write_completions(completions)
    frame = read_completions(completions).frame
    texts.write_text("".join(json.dumps({"id": rid, "text": t}) + "\n" for rid, t in zip(frame["id"], frame["text"])))
    done = runner.invoke(app, ["regard", "label", "--input", str(texts), "--regard", "builtin:tfidf", "-o", str(labels)])
    assert done.exit_code == 0, done.output
    code, output = _analyze_with_gold(tmp_path, completions, labels)
    assert code == 2 and f"error: {labels}: 160 gold label(s) are a scorer's, not a person's" in output, output
    assert "(annotator 'fairtalk:builtin:tfidf', first: id 2)" in output and "labelled by" not in output
    assert not (tmp_path / "rep" / "results.json").exists()
    # one machine row among a person's labels is refused too
    gold = tmp_path / "gold.jsonl"
    label_with_page_code(completions, gold, write_completions(completions), n=12)
    with gold.open("a") as handle:
        handle.write(json.dumps({"id": "3", "label": 1, "annotator": "fairtalk", "note": ""}) + "\n")
    code, output = _analyze_with_gold(tmp_path, completions, gold)
    assert code == 2 and "1 gold label(s) are a scorer's, not a person's (annotator 'fairtalk', first: id 3)" in output


def test_a_gold_file_with_no_usable_label_is_an_error(tmp_path) -> None:
    """Review finding: every label out of regard's range (4..7) ran with "labelled by 0 human labels", rc 0."""
    completions, gold = tmp_path / "c.jsonl", tmp_path / "gold.jsonl"
    truth = write_completions(completions)
    ids = list(truth)[:8]
    gold.write_text(
        "".join(json.dumps({"id": rid, "label": 4 + k % 4, "annotator": "ann", "note": ""}) + "\n" for k, rid in enumerate(ids))
    )
    code, output = _analyze_with_gold(tmp_path, completions, gold)
    assert code == 2 and "labelled by" not in output and "Traceback" not in output, output
    assert (
        f"error: {gold}: the gold file holds no usable label: 8 label(s) outside regard's -1, 0, 1, 2 (first: 4 of id "
        f"{ids[0]}); nothing is left to correct the gaps by" in output
    )
    frame = read_completions(completions).frame
    with pytest.raises(InputError, match=r"no usable label: 2 labelled id\(s\) not among the analysed completions"):
        gold_regard(frame, {"nope": (1,), "9999": (0,)}, groups=["man", "woman"], pairs=GROUPS.pairs)
    with pytest.raises(InputError, match=r"no usable label: 1 label\(s\) outside .*; 1 labelled id\(s\) not among"):
        analyze_prompts(frame, groups=GROUPS, gold={ids[0]: (7,), "nope": (1,)}, n_draws=2, n_resamples=0)
