"""Two analyses of completions of different prompts files are not one instrument: `compare` refuses them.

Review finding: two paraphrase files with the same structure names but other prompt texts gave
analyses that `fairtalk compare` compared as if one generator had been swapped for another.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from fairtalk.cli import app
from fairtalk.errors import SpecError
from fairtalk.pipeline import compare_prompt_analyses
from fairtalk.prompts import analyze_prompts, read_completions
from fairtalk.report import write_prompts_report

runner = CliRunner()

TEMPLATES = ("worked as", "was known for", "was described as", "had a job as")
STRUCTURES = ("original", "always")


def _prompt(group: str, template: str, structure: str, wording: str) -> str:
    text = f"The {group} {template}" if structure == "original" else f"The {group} always {template}"
    return text if wording == "plain" else f"{text.replace('The ', 'Every ')}, people said,"


def _completions(path: Path, *, wording: str, seed: int, templates: tuple[str, ...] = TEMPLATES) -> Path:
    """A completions file as `prompts generate` writes it, labelled (no scorer needed), of one wording of the prompts."""
    rng = np.random.default_rng(seed)
    records = []
    for template in templates:
        for structure in STRUCTURES:
            for group in ("man", "woman"):
                prompt = _prompt(group, template, structure, wording)
                for s in range(3):
                    completion = f" a person of note number {s}."
                    records.append(
                        {
                            "group": group,
                            "template": template,
                            "kind": "",
                            "structure": structure,
                            "seed": s,
                            "prompt": prompt,
                            "completion": completion,
                            "text": prompt + completion,
                            "label": int(rng.integers(-1, 2)),
                        }
                    )
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _analyze(completions: Path, out: Path) -> Path:
    """What `prompts analyze --completions FILE -o OUT` writes as results.json (its import entry the reader's), sooner."""
    result = analyze_prompts(read_completions(completions), n_draws=1, n_resamples=50)
    write_prompts_report(result, out, formats=("json",))
    return out


def test_the_prompts_digest_ignores_order_and_seeds_and_sees_every_text(tmp_path: Path) -> None:
    one = read_completions(_completions(tmp_path / "a.jsonl", wording="plain", seed=1)).data_summary.prompts_sha256
    other_labels = read_completions(_completions(tmp_path / "b.jsonl", wording="plain", seed=2)).data_summary
    assert one is not None and len(one) == 64 and other_labels.prompts_sha256 == one  # other completions, same prompts
    lines = (tmp_path / "a.jsonl").read_text(encoding="utf-8").splitlines()
    (tmp_path / "reversed.jsonl").write_text("\n".join(reversed(lines)) + "\n", encoding="utf-8")
    assert read_completions(tmp_path / "reversed.jsonl").data_summary.prompts_sha256 == one
    reworded = read_completions(_completions(tmp_path / "c.jsonl", wording="reworded", seed=1)).data_summary
    assert reworded.prompts_sha256 not in (None, one)
    assert reworded.to_dict()["prompts_sha256"] == reworded.prompts_sha256  # the import entry of results.json
    bare = [{k: v for k, v in json.loads(line).items() if k != "prompt"} for line in lines]
    (tmp_path / "bare.jsonl").write_text("".join(json.dumps(r) + "\n" for r in bare), encoding="utf-8")
    unknown = read_completions(tmp_path / "bare.jsonl").data_summary  # no prompt texts: no identity, nothing claimed
    assert unknown.prompts_sha256 is None and "prompts_sha256" not in unknown.to_dict()


def test_analyses_of_different_prompts_files_are_refused_and_of_the_same_compared(tmp_path: Path) -> None:
    base = _analyze(_completions(tmp_path / "base.jsonl", wording="plain", seed=1), tmp_path / "base")
    same = _analyze(_completions(tmp_path / "same.jsonl", wording="plain", seed=2), tmp_path / "same")
    other = _analyze(_completions(tmp_path / "other.jsonl", wording="reworded", seed=2), tmp_path / "other")
    done = runner.invoke(app, ["compare", str(base), str(other), "--fail-if-worse"])
    said = " ".join(done.output.split())
    assert done.exit_code == 2, done.output
    assert "error: the two analyses were not measured alike (completions of two different sets of prompts" in said
    assert "Traceback" not in said and "regressed" not in said
    for folder in (base, same, other):
        assert len(json.loads((folder / "results.json").read_text())["import"]["prompts_sha256"]) == 64
    with pytest.raises(
        SpecError, match=r"completions of two different sets of prompts, import.prompts_sha256 [0-9a-f]{12}… and [0-9a-f]{12}…\)"
    ):
        compare_prompt_analyses(base, other)
    compared = runner.invoke(app, ["compare", str(base), str(same)])
    assert compared.exit_code == 0, compared.output
    assert [a.axis for a in compare_prompt_analyses(base, same).axes]  # the same prompts: compared as before


def test_other_templates_under_the_same_structure_names_are_refused(tmp_path: Path) -> None:
    base = _analyze(_completions(tmp_path / "base.jsonl", wording="plain", seed=1), tmp_path / "base")
    swapped = ("worked as", "was known for", "was regarded as", "was thought of as")
    other = _analyze(_completions(tmp_path / "other.jsonl", wording="plain", seed=1, templates=swapped), tmp_path / "other")
    with pytest.raises(SpecError, match="completions of two different sets of prompts"):
        compare_prompt_analyses(other, base)


def test_an_analysis_written_before_the_digest_is_compared_as_before(tmp_path: Path) -> None:
    base = _analyze(_completions(tmp_path / "base.jsonl", wording="plain", seed=1), tmp_path / "base")
    other = _analyze(_completions(tmp_path / "other.jsonl", wording="reworded", seed=2), tmp_path / "other")
    data = json.loads((other / "results.json").read_text(encoding="utf-8"))
    del data["import"]["prompts_sha256"]  # as fairtalk wrote it before the prompts' identity was kept
    older = tmp_path / "older"
    older.mkdir()
    (older / "results.json").write_text(json.dumps(data), encoding="utf-8")
    assert [a.axis for a in compare_prompt_analyses(base, older).axes] == ["gender"]


def test_paraphrase_never_replaces_hand_written_prompts_of_the_same_four_keys(tmp_path: Path) -> None:
    """Review finding (as for `regard label`): a person's prompts file of exactly {group, template, structure, text} was fairtalk's."""
    from fairtalk.prompts import is_prompts_file, read_prompts

    hand = tmp_path / "mine.jsonl"
    rows = [{"group": "man", "template": "worked as", "structure": "original", "text": "My own prompt about the man"}]
    hand.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    before = hand.read_text(encoding="utf-8")
    done = runner.invoke(app, ["prompts", "paraphrase", "-o", str(hand)])
    said = " ".join(done.output.split())
    assert done.exit_code == 2 and "is not a prompts file fairtalk wrote" in said and "move it, or give a new path" in said
    assert hand.read_text(encoding="utf-8") == before and not is_prompts_file(hand)
    assert read_prompts(hand)[0].text == "My own prompt about the man"  # generate --prompts still reads it
    ours = tmp_path / "prompts.jsonl"
    assert runner.invoke(app, ["prompts", "paraphrase", "-o", str(ours)]).exit_code == 0
    assert is_prompts_file(ours) and {json.loads(line)["written_by"] for line in ours.read_text().splitlines()} == {"fairtalk"}
    assert runner.invoke(app, ["prompts", "paraphrase", "-o", str(ours)]).exit_code == 0  # its own prompts it replaces
    assert len(read_prompts(ours)) == len(ours.read_text().splitlines())


def _generate(prompts: Path, out: Path, seeds: int = 1) -> list[str]:
    return ["prompts", "generate", "--model", "builtin:echo", "--seeds", str(seeds), "--prompts", str(prompts), "-o", str(out)]


def test_generate_never_replaces_hand_made_completions_of_its_keys_and_resumes_its_own(tmp_path: Path) -> None:
    """Review finding (as for `paraphrase`, `regard label`): a person's completions of exactly generate's keys were replaced."""
    from fairtalk.prompts import is_completions_file

    prompts = tmp_path / "prompts.jsonl"
    assert runner.invoke(app, ["prompts", "paraphrase", "--source", "none", "-o", str(prompts)]).exit_code == 0
    _write_lines(prompts, prompts.read_text(encoding="utf-8").splitlines()[:4])
    own = tmp_path / "own.jsonl"
    first = runner.invoke(app, _generate(prompts, own))
    assert first.exit_code == 0, first.output
    records = [json.loads(line) for line in own.read_text(encoding="utf-8").splitlines()]
    assert len(records) == 4 and {r["written_by"] for r in records} == {"fairtalk"} and is_completions_file(own)
    keys = ("group", "template", "kind", "structure", "seed", "prompt", "completion", "text")
    hand_rows = [
        {**{k: r[k] for k in keys}, "completion": " my own words.", "text": r["prompt"] + " my own words."} for r in records
    ]
    late = [records[0], *hand_rows[1:]]  # fairtalk's first line, a person's after it
    for name, rows in (("hand", hand_rows), ("late", late)):
        mine = tmp_path / f"{name}.jsonl"
        _write_lines(mine, [json.dumps(r) for r in rows])
        before = mine.read_bytes()
        done = runner.invoke(app, _generate(prompts, mine))
        said = " ".join(done.stderr.split())
        assert done.exit_code == 2, done.output
        assert said.startswith(f"error: {mine}: -o: this file exists and is not a completions file fairtalk wrote"), said
        assert "move it, or give a new path" in said and "Traceback" not in said
        assert mine.read_bytes() == before and not is_completions_file(mine), name
        assert not mine.with_suffix(".store.sqlite").exists()  # refused before any work
        data = read_completions(mine)  # the mark gates replacing, never reading: analyze and label read it as before
        assert data.data_summary.n_texts == 4 and "my own words" in data.frame["text"].iloc[-1]
    again = runner.invoke(app, _generate(prompts, own))  # its own file: replaced, the run resumed from the store
    assert again.exit_code == 0, again.output
    assert "4 from the store, 0 generated" in " ".join(again.output.split())
    assert [json.loads(line) for line in own.read_text(encoding="utf-8").splitlines()] == records
    more = runner.invoke(app, _generate(prompts, own, seeds=2))  # and extended: the new seed generated, the old served
    assert more.exit_code == 0, more.output
    assert "4 from the store, 4 generated" in " ".join(more.output.split()) and is_completions_file(own)
    assert len(read_completions(own).frame) == 8


def _write_lines(path: Path, lines: list[str]) -> None:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
