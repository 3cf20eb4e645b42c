"""Responses and pairs of another axis than the one asked for are refused, naming the axis they belong to and the line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import fairtalk
from fairtalk.cli import app
from fairtalk.records import Response

runner = CliRunner()

_TEXTS = ("ok see you tomorrow", "what time is it", "i went to the store", "That is wonderful, I love it!")


def _pair_id(axis: str, i: int) -> str:
    return f"{axis}-{i:016x}"  # as `fairtalk pairs` makes them: the axis and an 8-byte hash in hex


def _responses(path: Path, ids: list[str]) -> Path:
    with path.open("w", encoding="utf-8") as f:
        for i, pair_id in enumerate(ids):
            text, side_word = _TEXTS[i % len(_TEXTS)], {"a": "he said", "b": "she said"}  # a counterfactual pair
            for side in "ab":
                f.write(
                    json.dumps({"pair_id": pair_id, "side": side, "context": f"{side_word[side]} {i}", "response": text}) + "\n"
                )
    return path


def _score(*args: str):  # noqa: ANN202
    return runner.invoke(app, ["score", *args, "--resamples", "50", "--measures", "length"])


def _said(done) -> str:  # noqa: ANN001
    return " ".join(done.output.split())


def test_gender_responses_scored_as_race_exit_2_naming_their_axis(tmp_path: Path) -> None:
    path = _responses(tmp_path / "rg.jsonl", [_pair_id("gender", i) for i in range(20)])
    done = _score("--responses", str(path), "--axis", "race", "-o", str(tmp_path / "out"))
    assert done.exit_code == 2, done.output
    said = _said(done)
    assert f"{path}:1:" in said and "answer 'gender' pairs" in said and "not 'race' ones" in said, said
    assert "Traceback" not in done.output and not (tmp_path / "out" / "results.json").exists()


def test_responses_mixing_axes_exit_2_at_the_first_record_of_another_axis(tmp_path: Path) -> None:
    ids = [_pair_id("gender", i) for i in range(10)] + [_pair_id("race", i) for i in range(6)]
    path = _responses(tmp_path / "mix.jsonl", ids)
    done = _score("--responses", str(path), "--axis", "gender", "-o", str(tmp_path / "out"))
    assert done.exit_code == 2, done.output
    said = _said(done)
    assert f"{path}:21:" in said and "gender 10 pairs, race 6 pairs" in said, said  # 10 pairs, 2 lines each
    assert _pair_id("race", 0) in said and "of axis 'race', not 'gender'" in said


@pytest.mark.parametrize(
    "ids",
    [
        [_pair_id("gender", i) for i in range(12)],  # of the axis scored
        [f"p{i}" for i in range(12)],  # a user's own ids: no axis named
        [f"race-{i}" for i in range(12)],  # not the form of a pairs id: not taken for one
        [_pair_id("conv", i) for i in range(12)],  # the form of a pairs id, but no axis is named conv: a user's own
    ],
)
def test_responses_of_the_axis_or_of_no_axis_are_scored(tmp_path: Path, ids: list[str]) -> None:
    path = _responses(tmp_path / "r.jsonl", ids)
    done = _score("--responses", str(path), "--axis", "gender", "-o", str(tmp_path / "out"))
    assert done.exit_code == 0, done.output
    assert json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))["n_pairs"] == 12


def test_the_library_refuses_records_of_another_axis_too() -> None:
    records = [Response(_pair_id("gender", i), s, f"{s} said", _TEXTS[i % 4]) for i in range(8) for s in ("a", "b")]
    with pytest.raises(fairtalk.InputError, match="answer 'gender' pairs"):
        fairtalk.score(records, axis="race", measures=["length"], n_resamples=50)
    assert fairtalk.score(records, axis="gender", measures=["length"], n_resamples=50).n_pairs == 8


def _pairs(path: Path, axes: list[str]) -> Path:
    with path.open("w", encoding="utf-8") as f:
        for i, axis in enumerate(axes):
            record = {"id": _pair_id(axis, i), "axis": axis, "a": f"he said {i}", "b": f"she said {i}", "original_side": "a"}
            f.write(json.dumps(record) + "\n")
    return path


def test_similarity_refuses_pairs_of_several_axes_before_any_answer(tmp_path: Path) -> None:
    path = _pairs(tmp_path / "p.jsonl", ["gender"] * 5 + ["race"] * 3)
    done = runner.invoke(app, ["similarity", "--pairs", str(path), "--model", "builtin:echo"])
    assert done.exit_code == 2, done.output
    said = _said(done)
    assert f"{path}:6:" in said and "gender 5 pairs, race 3 pairs" in said, said


def test_ids_of_no_known_axis_are_a_users_own_and_scored(tmp_path: Path) -> None:
    ids = [f"conv-{i + 0xD9892D42B4B548:016x}" for i in range(12)]  # conv-00d9892d42b4b548: no axis is named conv
    path = _responses(tmp_path / "user.jsonl", ids)
    done = _score("--responses", str(path), "--axis", "gender", "-o", str(tmp_path / "out"))
    assert done.exit_code == 0, done.output
    assert json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))["n_pairs"] == 12
    assert fairtalk.score(str(path), axis="gender", measures=["length"], n_resamples=50).n_pairs == 12


def test_pairs_of_a_lexicon_files_axis_are_told_to_score_with_that_file(tmp_path: Path) -> None:
    lexicon = tmp_path / "my.tsv"
    lexicon.write_text("# axis: france-germany\n# groups: france germany\nparis\tberlin\nfrench\tgerman\n", encoding="utf-8")
    path = _responses(tmp_path / "r.jsonl", [_pair_id("france-germany", i) for i in range(12)])
    done = _score("--responses", str(path), "--axis", "gender", "--lexicon", str(lexicon), "-o", str(tmp_path / "out"))
    assert done.exit_code == 2, done.output
    said = _said(done)
    assert "answer 'france-germany' pairs" in said and f"with --lexicon {lexicon} (of axis 'france-germany')" in said, said
    assert "on axis 'france-germany'" not in said
    done = _score("--responses", str(path), "--lexicon", str(lexicon), "-o", str(tmp_path / "out"))
    assert done.exit_code == 0, done.output
