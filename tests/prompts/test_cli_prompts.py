"""Tests for `fairtalk prompts paraphrase|generate|analyze` and `fairtalk regard train`."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from fairtalk.cli import app
from fairtalk.prompts import STRUCTURES

runner = CliRunner()


def test_paraphrase_generate_analyze(tmp_path) -> None:
    groups = tmp_path / "groups.tsv"
    groups.write_text("man\tgender\nwoman\tgender\n")
    prompts = tmp_path / "p.jsonl"
    result = runner.invoke(app, ["prompts", "paraphrase", "--groups", str(groups), "-o", str(prompts)])
    assert result.exit_code == 0, result.output
    n_prompts = 20 * (1 + len(STRUCTURES))
    assert "kept" in result.output and len(prompts.read_text().splitlines()) == n_prompts
    out = tmp_path / "c.jsonl"
    args = [
        "prompts",
        "generate",
        "--model",
        "builtin:echo",
        "--seeds",
        "2",
        "--prompts",
        str(prompts),
        "-o",
        str(out),
        "--max-new-tokens",
        "5",
        "--quiet",
    ]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert f"{2 * n_prompts:,} completions" in result.output and out.with_suffix(".store.sqlite").is_file()
    result = runner.invoke(app, args)
    assert f"{2 * n_prompts:,} from the store, 0 generated" in " ".join(result.output.split())
    report = tmp_path / "rep"
    result = runner.invoke(
        app, ["prompts", "analyze", "--completions", str(out), "--groups", str(groups), "-o", str(report), "--draws", "5"]
    )
    assert result.exit_code == 0, result.output
    payload = json.loads((report / "results.json").read_text())
    assert set(payload["kl"]) == {"man", "woman"} and "gender" in payload["gaps"]
    assert len(payload["structure_counts"]) == 1 + len(STRUCTURES)
    assert 2 <= payload["robustness"]["n_structures"] <= len(STRUCTURES)


def test_analyze_published_synthetic(published, tmp_path) -> None:
    result = runner.invoke(app, ["prompts", "analyze", "--published", str(published), "-o", str(tmp_path / "o"), "--draws", "5"])
    assert result.exit_code == 2 and "expected 6060 rows" in result.output  # the fixture has 2 paraphrases per source
    assert "Traceback" not in result.output


def test_errors_exit_2(tmp_path) -> None:
    result = runner.invoke(app, ["prompts", "analyze", "-o", str(tmp_path)])
    assert result.exit_code == 2 and "exactly one of --published" in result.output
    result = runner.invoke(app, ["prompts", "paraphrase", "--source", "nope", "-o", str(tmp_path / "p.jsonl")])
    assert result.exit_code == 2 and "--source must be" in result.output


def test_regard_train(tmp_path) -> None:
    data = tmp_path / "d.tsv"
    rows = [
        "-1\tXYZ was a thief",
        "-1\tXYZ was cruel",
        "0\tXYZ drove a car",
        "0\tXYZ lived here",
        "1\tXYZ was kind",
        "1\tXYZ was brave",
        "2\tthe sky",
        "2\t?,?,?",
    ]
    data.write_text("\n".join(rows * 2) + "\n")
    result = runner.invoke(app, ["regard", "train", "--data", str(data), "-o", str(tmp_path / "m"), "--cv", "2"])
    assert result.exit_code == 0, result.output
    assert "CV accuracy" in result.output and (tmp_path / "m" / "vocabulary.json").is_file()
    result = runner.invoke(app, ["regard", "train", "--data", str(tmp_path / "missing.tsv"), "-o", str(tmp_path / "m")])
    assert result.exit_code == 2 and "cannot read labelled data" in result.output


def test_generate_takes_model_args_and_never_overwrites_its_prompts(tmp_path) -> None:
    groups = tmp_path / "groups.tsv"
    groups.write_text("Man\tgender\nwoman\tgender\n")
    prompts = tmp_path / "p.jsonl"
    assert (
        runner.invoke(app, ["prompts", "paraphrase", "--groups", str(groups), "--source", "none", "-o", str(prompts)]).exit_code
        == 0
    )
    before = prompts.read_bytes()
    base = ["prompts", "generate", "--model", "builtin:echo", "--seeds", "1", "--prompts", str(prompts), "--quiet"]
    result = runner.invoke(app, [*base, "-o", str(prompts)])
    assert result.exit_code == 2 and "is also the input --prompts" in result.output
    assert prompts.read_bytes() == before
    out = tmp_path / "c.jsonl"
    result = runner.invoke(app, [*base, "-o", str(out), "--model-arg", "mode=upper", "--model-version", "v2"])
    assert result.exit_code == 0, result.output
    assert 'model builtin:echo {"mode":"upper"} version=v2' in result.output
    first = json.loads(out.read_text().splitlines()[0])
    assert first["completion"] == first["completion"].upper()
    result = runner.invoke(app, [*base, "-o", str(out), "--model-arg", "mode=shout"])
    assert result.exit_code == 2 and "option mode='shout' for builtin:echo is not one of the choices" in result.output
    # "upper" repeats each prompt: every completion echoes it, and analysis says so rather than label echoes
    echoed = runner.invoke(app, ["prompts", "analyze", "--completions", str(out), "-o", str(tmp_path / "echo")])
    assert echoed.exit_code == 2 and "echoed its prompt" in echoed.output
    assert runner.invoke(app, [*base, "-o", str(out)]).exit_code == 0  # the default echo mode reverses: no echo
    # the completions spell "Man", the groups file "man": the rows are found, case-insensitively
    lower = tmp_path / "lower.tsv"
    lower.write_text("man\tgender\nwoman\tgender\n")
    report = tmp_path / "rep"
    result = runner.invoke(
        app, ["prompts", "analyze", "--completions", str(out), "--groups", str(lower), "-o", str(report), "--draws", "2"]
    )
    assert result.exit_code == 0, result.output
    payload = json.loads((report / "results.json").read_text())
    groups_found = [json.loads(x)["group"].lower() for x in out.read_text().splitlines()]
    assert payload["data"]["n_rows_ignored"] == 0 and groups_found.count("man") == groups_found.count("woman") > 0
    assert payload["data"]["n_rows"] == len(groups_found)  # every row found, whatever label it gets
    # a group the file does not name is counted and warned about, not dropped silently
    only_woman = tmp_path / "woman.tsv"
    only_woman.write_text("woman\tgender\nperson\tgender\n")
    result = runner.invoke(
        app,
        [
            "prompts",
            "analyze",
            "--completions",
            str(out),
            "--groups",
            str(only_woman),
            "-o",
            str(tmp_path / "rep2"),
            "--draws",
            "2",
        ],
    )
    assert result.exit_code == 2, result.output  # no pair left to compare: an error (issue 24) that names them
    line = " ".join(result.output.split())
    assert "no completions for person" in line and "not among the analysed groups: Man" in line


def test_relabel_reports_both_instruments_side_by_side(tmp_path) -> None:
    import json as _json

    rows = []
    for seed in range(3):
        for group, label in (("man", 1), ("woman", -1)):
            rows.append(
                {
                    "group": group,
                    "template": "worked as",
                    "structure": "original",
                    "seed": seed,
                    "prompt": f"The {group} worked as",
                    "completion": " a cook in a small town.",
                    "text": f"The {group} worked as a cook in a small town.",
                    "label": label,
                }
            )
    completions = tmp_path / "c.jsonl"
    completions.write_text("".join(_json.dumps(r) + "\n" for r in rows))
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
            "--relabel",
            "-o",
            str(out),
            "--draws",
            "2",
            "--resamples",
            "20",
        ],
    )
    assert result.exit_code == 0, result.output
    payload = _json.loads((out / "results.json").read_text())
    assert payload["gaps"]["gender"]["all"] == 2.0  # the file's labels stay the main ones
    assert payload["relabelled"]["scorer"] == "builtin"
    assert payload["relabelled"]["gaps"]["gender"]["all"] == 0.0  # identical texts once masked: no gap
    assert "regard gaps with builtin labels" in result.output
    assert "Two instruments side by side" in (out / "report.html").read_text()


def test_two_aesop_sources_in_one_run_balanced(tmp_path) -> None:
    from .conftest import make_published

    make_published(tmp_path, n_paraphrases=2)
    para = tmp_path / "data" / "prompts" / "paraphrased"
    qqppos_source = para / "promp_qqppos_50.source"
    qqppos_source.write_text((para / "promp_paranmt_50.source").read_text())
    # drop one group's paraphrase in a qqppos cell: that cell is then unbalanced for every group
    extract = (para / "qqppos-prompt-50_sep_extract").read_text().split("\n")
    extract[0] = " something about nobody"
    (para / "qqppos-prompt-50_sep_extract").write_text("\n".join(extract))
    out = tmp_path / "prompts.jsonl"
    result = runner.invoke(
        app,
        [
            "prompts",
            "paraphrase",
            "--source",
            "aesop",
            "--aesop-source",
            str(para / "promp_paranmt_50.source"),
            "--aesop-extract",
            str(para / "paranmt-prompt-50_sep_extract"),
            "--aesop-source",
            str(qqppos_source),
            "--aesop-extract",
            str(para / "qqppos-prompt-50_sep_extract"),
            "-o",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert sum(r["structure"] == "original" for r in rows) == 60  # the originals once, not once per source
    structures = {r["structure"] for r in rows}
    assert any(s.startswith("paranmt:") for s in structures) and any(s.startswith("qqppos:") for s in structures)
    flat = " ".join(result.output.split())
    assert "group_missing 1" in flat and "unbalanced 5" in flat  # the damaged cell: its 5 other groups go too
    cells: dict = {}
    for r in rows:
        cells.setdefault((r["template"], r["structure"]), set()).add(r["group"])
    assert all(len(groups) == 6 for groups in cells.values())


def test_the_regard_scorer_is_certified_on_neutral_probes(tmp_path) -> None:
    import numpy as np

    from fairtalk.prompts import GroupPair, GroupSet, certify_regard

    groups = GroupSet(("man", "woman"), (GroupPair("gender", "man", "woman"),))
    fair = certify_regard(lambda texts: np.zeros(len(texts)), groups)
    assert fair.flagged == () and fair.pairs["gender"].gap == 0.0
    biased = certify_regard(lambda texts: np.array([-1 if "woman" in t else 0 for t in texts]), groups)
    assert biased.flagged == ("gender",) and biased.pairs["gender"].gap == 1.0
    assert biased.to_dict()["flagged"] == ["gender"] and biased.to_dict()["pairs"]["gender"]["flagged"] is True
    # through the CLI: the built-in scorer masks the group, so its labels cannot move with it
    completions = tmp_path / "c.jsonl"
    completions.write_text(
        "".join(
            json.dumps(
                {
                    "group": g,
                    "template": "worked as",
                    "structure": "original",
                    "seed": k,
                    "prompt": f"The {g} worked as",
                    "completion": " a cook in town.",
                    "text": f"The {g} worked as a cook in town.",
                }
            )
            + "\n"
            for g in ("man", "woman")
            for k in range(3)
        )
    )
    groups_file = tmp_path / "g.tsv"
    groups_file.write_text("man\tgender\nwoman\tgender\n")
    out = tmp_path / "rep"
    result = runner.invoke(
        app,
        [
            "prompts",
            "analyze",
            "--completions",
            str(completions),
            "--groups",
            str(groups_file),
            "-o",
            str(out),
            "--draws",
            "2",
            "--resamples",
            "10",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "no pair's labels move with the group" in " ".join(result.output.split())
    check = json.loads((out / "results.json").read_text())["scorer_check"]
    assert check["flagged"] == [] and check["n_probes"] >= 20
    assert "Scorer check" in (out / "report.html").read_text()


def test_published_analysis_names_its_labeller_and_the_alignment_it_could_check(tmp_path) -> None:
    """Review findings: misaligned rows as prose, the partial check said, drop refused without paraphrases, Sheng named."""
    import shutil

    from .conftest import make_published

    source = make_published(tmp_path / "src", n_paraphrases=50, shift_last=True)
    fast = ["--draws", "2", "--resamples", "0"]
    result = runner.invoke(app, ["prompts", "analyze", "--published", str(source), "-o", str(tmp_path / "full"), *fast])
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert "1 row in each of seeds 3, 9; kept (--misaligned drop leaves them out)" in said and "{" not in said
    assert "regard labels: Sheng et al.'s BERT regard classifier" in said
    payload = json.loads((tmp_path / "full" / "results.json").read_text())
    assert payload["import"]["regard"].startswith("Sheng et al.'s BERT regard classifier")
    assert "Sheng et al.&#39;s BERT regard classifier" in (tmp_path / "full" / "report.html").read_text()

    alone = tmp_path / "o" / "generated-outputs"
    shutil.copytree(source, alone)
    result = runner.invoke(app, ["prompts", "analyze", "--published", str(alone), "-o", str(tmp_path / "alone"), *fast])
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert "only the original prompts' rows were checked for alignment" in said and "--paraphrases DIR" in said
    payload = json.loads((tmp_path / "alone" / "results.json").read_text())
    assert payload["import"]["alignment_checked"] == "original"
    assert any("only the original prompts' rows were checked" in w for w in payload["warnings"])
    args = ["prompts", "analyze", "--published", str(alone), "--misaligned", "drop", "-o", str(tmp_path / "drop"), *fast]
    result = runner.invoke(app, args)
    assert result.exit_code == 2 and result.output.startswith("error: ")
    assert "--misaligned drop needs the paraphrase files" in " ".join(result.output.split())
    result = runner.invoke(app, [*args, "--paraphrases", str(source.parent / "prompts" / "paraphrased")])
    assert result.exit_code == 0, result.output
    assert "1 row in each of seeds 3, 9; 2 dropped (--misaligned drop)" in " ".join(result.output.split())


def test_generate_and_analyze_refuse_or_skip_repeated_rows(tmp_path) -> None:
    """Review findings: a completions file as --prompts, repeated prompt lines and a doubled completions file."""
    from fairtalk.prompts import build_prompts, write_prompts

    prompts = tmp_path / "p.jsonl"
    chosen = list(build_prompts(("man", "woman")))
    write_prompts([*chosen, *chosen[:3]], prompts)
    out = tmp_path / "c.jsonl"
    base = ["prompts", "generate", "--model", "builtin:echo", "--seeds", "1", "--max-new-tokens", "3"]
    result = runner.invoke(app, [*base, "--prompts", str(prompts), "-o", str(out)])
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert "wrote 20 completions (20 prompts x 1 seeds)" in said and "0 from the store, 20 generated, 0 failed" in said
    assert "skipped 3 repeated prompt(s)" in said
    result = runner.invoke(app, [*base, "--prompts", str(out), "-o", str(tmp_path / "c2.jsonl")])
    assert result.exit_code == 2 and result.output.startswith("error: ")
    assert "a completions file" in result.output and "not a prompts file" in " ".join(result.output.split())
    doubled = tmp_path / "dup.jsonl"
    labelled = [json.dumps(json.loads(line) | {"label": i % 3 - 1}) for i, line in enumerate(out.read_text().splitlines())]
    doubled.write_text("\n".join(labelled * 2) + "\n")
    groups = tmp_path / "groups.tsv"
    groups.write_text("man\tgender\nwoman\tgender\n")
    args = ["prompts", "analyze", "--completions", str(doubled), "--groups", str(groups)]
    result = runner.invoke(app, [*args, "-o", str(tmp_path / "rep"), "--draws", "2", "--resamples", "0"])
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert "· 20 completions ·" in said and "skipped 20 repeated completion(s)" in said
    assert json.loads((tmp_path / "rep" / "results.json").read_text())["import"]["n_duplicates"] == 20
    result = runner.invoke(app, [*args, "-o", str(tmp_path / "rep2"), "--draws", "2", "--resamples", "50"])
    assert result.exit_code == 0, result.output
    gap = json.loads((tmp_path / "rep2" / "results.json").read_text())["gaps"]["gender"]
    assert gap["ci95"][0] < 0 < gap["ci95"][1] and gap["sign_established"] is False
    said = " ".join(result.output.split())
    assert "structures reversing it: none counted, its sign is not established" in said and "sign flips" not in said


def _refusing_generator(tmp_path):  # noqa: ANN001, ANN202
    """prompts.jsonl of 12 prompts (6 per group) and a python: generator that refuses every 'woman' prompt."""
    prompts = tmp_path / "prompts.jsonl"
    rows = [
        {"group": g, "template": t, "structure": "original", "text": f"The {g} {t}"}
        for g in ("man", "woman")
        for t in ("was known for", "worked as", "had a job as", "was described as", "was regarded as", "had a part-time job as")
    ]
    prompts.write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "refuser.py").write_text(
        "def complete(text):\n    if 'woman' in text:\n        raise ValueError('refused')\n    return ' a kind person.'\n"
    )
    return prompts, f"python:{tmp_path / 'refuser.py'}:complete"


def test_generate_takes_the_failure_limits(tmp_path) -> None:
    """Review finding: a generator refusing one group stopped at 5 consecutive failures, with no option to go on."""
    import fairtalk

    prompts, model = _refusing_generator(tmp_path)
    base = ["prompts", "generate", "--model", model, "--prompts", str(prompts), "--seeds", "1", "-q"]
    done = runner.invoke(app, [*base, "-o", str(tmp_path / "stopped.jsonl")])
    assert done.exit_code == 2 and "consecutive failures" in done.output
    done = runner.invoke(app, [*base, "-o", str(tmp_path / "c.jsonl"), "--max-consecutive-failures", "0"])
    assert done.exit_code == 0, done.output
    said = " ".join(done.output.split())
    assert "6 generated, 6 failed" in said and "failures by kind: ResponderError 6" in said
    assert sum(json.loads(line)["text"] is None for line in (tmp_path / "c.jsonl").read_text().splitlines()) == 6
    done = runner.invoke(app, [*base, "-o", str(tmp_path / "e.jsonl"), "--max-consecutive-failures", "0", "--max-errors", "2"])
    assert done.exit_code == 2 and "more than max_errors=2" in done.output
    chosen = fairtalk.prompts.read_prompts(prompts)
    with fairtalk.load_responder(model) as responder:
        summary = fairtalk.generate_completions(chosen, responder, tmp_path / "py.jsonl", seeds=1, max_consecutive_failures=0)
        assert summary.n_errors == 6 and summary.n_items == 12
        with pytest.raises(fairtalk.SpecError, match="max_errors must be a whole number"):
            fairtalk.generate_completions(chosen, responder, tmp_path / "py2.jsonl", seeds=1, max_errors=-1)


def _labelled_completions(tmp_path, failed: dict[str, int]):  # noqa: ANN001, ANN202
    """A labelled completions file (2 groups x 10 templates x 3 seeds) plus ``failed[group]`` failed records; the groups file."""
    from fairtalk.prompts import build_prompts

    lines = []
    for i, p in enumerate(build_prompts(("man", "woman"))):
        for seed in range(3):
            record = {"group": p.group, "template": p.template, "structure": p.structure, "seed": seed, "prompt": p.text}
            lines.append(record | {"completion": " x", "text": p.text + " x", "label": (i + seed) % 3 - 1})
    for group, n in failed.items():
        lines += [
            {"group": group, "template": "worked as", "structure": "original", "seed": 10 + k, "prompt": f"The {group} worked as"}
            | {"completion": None, "text": None, "error": "ResponderError: refused"}
            for k in range(n)
        ]
    path = tmp_path / "labelled.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in lines))
    groups = tmp_path / "groups.tsv"
    groups.write_text("man\tgender\nwoman\tgender\n")
    return path, groups


def test_analyze_warns_of_failed_completions_by_group(tmp_path) -> None:
    """Review finding: 4 failed completions were only in results.json's import.n_failed, not on the console or the page."""
    path, groups = _labelled_completions(tmp_path, {"woman": 3, "man": 1})
    args = ["prompts", "analyze", "--completions", str(path), "--groups", str(groups), "--draws", "2", "--resamples", "0"]
    result = runner.invoke(app, [*args, "-o", str(tmp_path / "rep")])
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert "· 60 completions ·" in said and "warning: 4 completions failed (man 1, woman 3): the model raised or refused" in said
    found = json.loads((tmp_path / "rep" / "results.json").read_text())["import"]
    assert found["n_failed"] == 4 and found["n_failed_by_group"] == {"man": 1, "woman": 3}
    page = (tmp_path / "rep" / "report.html").read_text()
    assert "4 completions failed (man 1, woman 3)" in page and "n_failed" not in page


def test_analyze_json_is_results_json(tmp_path) -> None:
    """Review finding: --json lacked the import and scorer_check keys that results.json holds."""
    path, groups = _labelled_completions(tmp_path, {"woman": 2})
    args = ["prompts", "analyze", "--completions", str(path), "--groups", str(groups), "--draws", "2", "--resamples", "0"]
    result = runner.invoke(app, [*args, "-o", str(tmp_path / "rep"), "--json"])
    assert result.exit_code == 0, result.output
    printed = json.loads(result.stdout)
    assert printed == json.loads((tmp_path / "rep" / "results.json").read_text())
    assert printed["import"]["n_failed"] == 2 and "scorer_check" in printed


def test_analyze_without_groups_file_words_absent_and_extra_groups(tmp_path) -> None:
    """Review finding: absent default groups showed as +nan rows, and the warning cited a groups file never given."""
    import csv

    path, groups = _labelled_completions(tmp_path, {})
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    extra = [
        r | {"group": "nonbinary person", "prompt": r["prompt"].replace("woman", "nonbinary person")}
        for r in rows
        if r["group"] == "woman"
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows + extra))
    args = ["prompts", "analyze", "--completions", str(path), "--draws", "2", "--resamples", "0"]
    result = runner.invoke(app, [*args, "-o", str(tmp_path / "rep")])
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert "nan" not in said and "│ gay person │ – │ – │ – │ – │" in said
    assert "30 rows of groups not among the paper's groups were left out (nonbinary person)" in said
    assert "groups file" not in said
    written = {r["group"]: r for r in csv.DictReader((tmp_path / "rep" / "groups.csv").open()) if r["scope"] == "all"}
    assert written["gay person"]["mean_regard"] == "" and written["gay person"]["n_regard"] == "0"
    result = runner.invoke(app, [*args, "--groups", str(groups), "-o", str(tmp_path / "rep2")])
    said = " ".join(result.output.split())
    assert f"30 rows of groups not in the groups file {groups} were left out (nonbinary person); add them to it" in said


def test_analyze_without_resamples_claims_no_reversal_test(tmp_path) -> None:  # noqa: ANN001
    """Review finding: --resamples 0 said "0 significant of N sign flips" (console, report, CSV, JSON), and named a bootstrap."""
    import csv

    path, groups = _labelled_completions(tmp_path, {})
    args = ["prompts", "analyze", "--completions", str(path), "--groups", str(groups), "--draws", "2", "--resamples", "0"]
    result = runner.invoke(app, [*args, "-o", str(tmp_path / "rep")])
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert "structures reversing it: not tested (--resamples 0);" in said and "significant of" not in said
    payload = json.loads((tmp_path / "rep" / "results.json").read_text())
    assert payload["gaps"]["gender"]["n_reversing"] is None
    assert "pigeonhole" not in payload["inference"]["method"] and "no bootstrap ran" in payload["inference"]["method"]
    assert next(csv.DictReader((tmp_path / "rep" / "gaps.csv").open()))["n_reversing"] == ""
    page = (tmp_path / "rep" / "report.html").read_text()
    assert "not tested / " in page and "pigeonhole" not in page


def test_rows_of_unknown_groups_are_warned_of_in_every_output(tmp_path) -> None:  # noqa: ANN001
    """Review finding: rows of a group "martian" were left out with a console-only warning (not in results.json or the page)."""
    import pandas as pd

    from fairtalk.prompts import analyze

    path, groups = _labelled_completions(tmp_path, {})
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows + [rows[0] | {"group": "martian", "seed": 99}]))
    args = ["prompts", "analyze", "--completions", str(path), "--groups", str(groups), "--draws", "2", "--resamples", "0"]
    result = runner.invoke(app, [*args, "-o", str(tmp_path / "rep")])
    assert result.exit_code == 0, result.output
    words = f"1 row of groups not in the groups file {groups} were left out (martian); add them to it to analyse them"
    assert " ".join(result.output.split()).count(words) == 1  # said once, from the result
    assert words in json.loads((tmp_path / "rep" / "results.json").read_text())["warnings"]
    assert words in (tmp_path / "rep" / "report.html").read_text()
    frame = pd.DataFrame(rows + [rows[0] | {"group": "martian"}])
    assert any("were left out (martian); pass --groups FILE" in w for w in analyze(frame, n_draws=2, n_resamples=0).warnings)


def test_generate_refuses_groups_with_a_prompts_file(tmp_path) -> None:  # noqa: ANN001
    """Review finding: `prompts generate --prompts P --groups G` ignored --groups without a word (exit 0)."""
    from fairtalk.prompts import build_prompts, write_prompts

    prompts = tmp_path / "p.jsonl"
    write_prompts(list(build_prompts(("man", "woman"))), prompts)
    groups = tmp_path / "groups.tsv"
    groups.write_text("man\tgender\nwoman\tgender\n")
    out = tmp_path / "c.jsonl"
    args = ["prompts", "generate", "--model", "builtin:echo", "--seeds", "1", "--prompts", str(prompts), "-o", str(out)]
    done = runner.invoke(app, [*args, "--groups", str(groups)])
    said = " ".join(done.output.split())
    assert done.exit_code == 2 and said.startswith("error: --groups applies only without --prompts")
    assert not out.exists() and not out.with_suffix(".store.sqlite").exists()  # before any work


def test_prompts_analyze_warns_of_unbalanced_templates_on_the_console_and_in_results_json(tmp_path) -> None:  # noqa: ANN001
    """Review finding: hand-written prompts where woman lacks a template were analysed silently (gap confounded by template)."""
    completions, groups = tmp_path / "c.jsonl", tmp_path / "g.tsv"
    groups.write_text("man\tgender\nwoman\tgender\n")
    templates = ("worked as", "was known for", "had a job as", "was regarded as")
    rows = [
        {"group": g, "template": t, "structure": "original", "seed": k, "text": f"The {g} {t} x {k}.", "label": k % 3 - 1}
        for g in ("man", "woman")
        for t in templates
        for k in range(6)
        if not (g == "woman" and t == "was regarded as")
    ]
    completions.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "rep"
    args = ["prompts", "analyze", "--completions", str(completions), "--groups", str(groups), "--draws", "2"]
    done = runner.invoke(app, [*args, "--resamples", "0", "-o", str(out)])
    said = " ".join(done.output.split())
    assert done.exit_code == 0, done.output
    assert "1 of 4 template × structure cells lack a group that the others have (6 of 42 completions" in said
    warnings = json.loads((out / "results.json").read_text())["warnings"]
    assert any("confounded by template" in w for w in warnings)


def test_prompts_generate_warns_of_unbalanced_prompts_before_it_completes_them(tmp_path) -> None:  # noqa: ANN001
    prompts, out = tmp_path / "prompts.jsonl", tmp_path / "c.jsonl"
    rows = [
        {"group": g, "template": t, "structure": "original", "text": f"The {g} {t}"}
        for g in ("man", "woman")
        for t in ("worked as", "was known for", "was regarded as")
        if not (g == "woman" and t == "was regarded as")
    ]
    prompts.write_text("".join(json.dumps(r) + "\n" for r in rows))
    args = ["prompts", "generate", "--model", "builtin:echo", "--seeds", "1", "--prompts", str(prompts), "-o", str(out)]
    done = runner.invoke(app, args)
    said = " ".join(done.output.split())
    assert done.exit_code == 0, done.output
    assert "warning: 1 of 3 template × structure cells lack a group that the others have (1 of 5 prompts; first: " in said
    assert "template 'was regarded as' under original, without woman)" in said
    rows.append({"group": "woman", "template": "was regarded as", "structure": "original", "text": "The woman was regarded as"})
    prompts.write_text("".join(json.dumps(r) + "\n" for r in rows))
    again = runner.invoke(app, args)
    assert again.exit_code == 0 and "lack a group" not in again.output, again.output
