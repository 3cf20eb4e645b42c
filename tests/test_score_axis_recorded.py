"""`respond` records each pair's axis in its responses, and `score` refuses responses of another axis than the one given.

The reviewer's fault: pairs made with a lexicon file of one's own (axis ``france-germany``), answered
by `respond`, were scored with ``--axis gender`` without a word, and the report said "gender": the pair
ids named an axis no built-in or registered name matched, and `respond` dropped the pairs' axis.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import fairtalk
from fairtalk.cli import app
from fairtalk.records import Pair, Response

runner = CliRunner()

LEXICON = "# axis: france-germany\n# groups: french german\nfrench\tgerman\nfrance\tgermany\nparis\tberlin\n"
_TEXTS = ("ok see you tomorrow", "what time is it", "i went to the store", "That is wonderful, I love it!")


def _cli(*args: str) -> tuple[int, str]:
    done = runner.invoke(app, list(args))
    return done.exit_code, " ".join(done.output.split())


def _score(*args: str) -> tuple[int, str]:
    # no scorer check: it would leave length out and warn that it checked nothing; these tests count the axis' warnings
    return _cli("score", *args, "--measures", "length", "--resamples", "50", "--no-scorer-check")


def _records(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _lexicon(tmp_path: Path) -> Path:
    path = tmp_path / "my_axis.tsv"
    path.write_text(LEXICON, encoding="utf-8")
    return path


def _pair_id(axis: str, i: int) -> str:
    return f"{axis}-{i:016x}"  # as `fairtalk pairs` makes them


def _responses(path: Path, ids: list[str], axis: str | None = None) -> Path:
    """A responses file answering pairs ``ids``; each record names ``axis`` (None: no axis field, as an older file)."""
    with path.open("w", encoding="utf-8") as f:
        for i, pair_id in enumerate(ids):
            for side in "ab":
                record = {"pair_id": pair_id, "side": side, "context": f"c {i} {side}", "response": _TEXTS[i % 4]}
                f.write(json.dumps(record if axis is None else {**record, "axis": axis}) + "\n")
    return path


def _corpus(tmp_path: Path) -> Path:
    """A small corpus whose every line names a French or a German word of the lexicon."""
    words = ("paris", "berlin", "france", "germany", "french", "german")
    lines = [f"i spent {k} days in {w} last {m}" for w in words for k in range(1, 8) for m in ("may", "june")]
    path = tmp_path / "corpus.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The reviewer's sequence up to `score`: a lexicon file of one's own, its pairs, and echo's answers to them."""
    tmp_path = tmp_path_factory.mktemp("fg")
    lexicon = _lexicon(tmp_path)
    pairs, responses = tmp_path / "fgp.jsonl", tmp_path / "fgr.jsonl"
    code, output = _cli("pairs", "--corpus", str(_corpus(tmp_path)), "--axis", str(lexicon), "--limit", "40", "-o", str(pairs))
    assert code == 0, output
    code, output = _cli("respond", "--pairs", str(pairs), "--model", "builtin:echo", "-o", str(responses))
    assert code == 0, output
    return lexicon, responses


def test_respond_records_the_pairs_axis_in_every_response(made: tuple[Path, Path]) -> None:
    _, responses = made
    records = _records(responses)
    assert len(records) == 80
    assert all(r["axis"] == "france-germany" and str(r["pair_id"]).startswith("france-germany-") for r in records)
    read = fairtalk.read_responses(str(responses))
    assert all(dict(r.extra)["axis"] == "france-germany" for side in (read.a, read.b) for r in side)


def test_the_reviewers_sequence_scored_on_another_axis_exits_2_naming_the_pairs_axis(
    made: tuple[Path, Path], tmp_path: Path
) -> None:
    _, responses = made
    out = tmp_path / "fgs3"
    code, said = _score("--responses", str(responses), "--axis", "gender", "-o", str(out))
    assert code == 2, said
    assert said.startswith(f"error: {responses}:1:"), said
    assert "answer 'france-germany' pairs" in said and "not 'gender' ones" in said, said
    assert "axis field" in said and "with the lexicon file their pairs were made with (--axis FILE" in said, said
    assert "Traceback" not in said and not (out / "results.json").exists()


@pytest.mark.parametrize("option", ["--axis", "--lexicon"])
def test_the_reviewers_responses_score_with_their_own_lexicon_file(made: tuple[Path, Path], tmp_path: Path, option: str) -> None:
    lexicon, responses = made
    out = tmp_path / "fgs4"
    code, said = _score("--responses", str(responses), option, str(lexicon), "-o", str(out))
    assert code == 0, said
    result = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert result["axis"] == "france-germany" and result["n_pairs"] == 40
    assert not any("ids of the form" in w for w in result["warnings"]), result["warnings"]


def test_a_lexicon_file_under_another_axis_name_is_told_to_score_with_the_file(made: tuple[Path, Path], tmp_path: Path) -> None:
    lexicon, responses = made  # my_axis.tsv's pairs, scored with its words renamed 'gender': their axis is not gender
    code, said = _score("--responses", str(responses), "--axis", "gender", "--lexicon", str(lexicon), "-o", str(tmp_path / "o"))
    assert code == 2, said
    assert "answer 'france-germany' pairs" in said and f"with --lexicon {lexicon} (of axis 'france-germany')" in said


def test_pairs_renamed_with_axis_and_lexicon_score_under_the_same_name(tmp_path: Path) -> None:
    lexicon = _lexicon(tmp_path)
    pairs, responses = tmp_path / "p.jsonl", tmp_path / "r.jsonl"
    code, output = _cli(
        "pairs",
        "--corpus",
        str(_corpus(tmp_path)),
        "--axis",
        "euro",
        "--lexicon",
        str(lexicon),
        "--limit",
        "20",
        "-o",
        str(pairs),
    )
    assert code == 0, output
    code, output = _cli("respond", "--pairs", str(pairs), "--model", "builtin:echo", "-o", str(responses))
    assert code == 0, output
    assert {r["axis"] for r in _records(responses)} == {"euro"}
    code, said = _score("--responses", str(responses), "--axis", "euro", "--lexicon", str(lexicon), "-o", str(tmp_path / "o"))
    assert code == 0, said
    code, said = _score("--responses", str(responses), "--axis", str(lexicon), "-o", str(tmp_path / "o2"))
    assert code == 2 and "answer 'euro' pairs" in said and "not 'france-germany' ones" in said, said


def test_a_recorded_builtin_axis_is_refused_whatever_the_ids(tmp_path: Path) -> None:
    path = _responses(tmp_path / "r.jsonl", [f"p{i}" for i in range(12)], axis="race")  # a user's own ids
    code, said = _score("--responses", str(path), "--axis", "gender", "-o", str(tmp_path / "o"))
    assert code == 2, said
    assert f"{path}:1:" in said and "answer 'race' pairs" in said and "score them on axis 'race'" in said, said


def test_the_line_named_is_the_first_record_naming_another_axis(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    _responses(path, [f"p{i}" for i in range(6)], axis="gender")
    with path.open("a", encoding="utf-8") as f:
        _responses(tmp_path / "more.jsonl", [f"q{i}" for i in range(4)], axis="france-germany")
        f.write((tmp_path / "more.jsonl").read_text(encoding="utf-8"))
    code, said = _score("--responses", str(path), "--axis", "gender", "-o", str(tmp_path / "o"))
    assert code == 2, said
    assert f"{path}:13:" in said and "gender 6 pairs, france-germany 4 pairs" in said, said
    assert "pair 'q0' is of axis 'france-germany', not 'gender'" in said, said


def test_records_naming_the_axis_scored_need_no_known_id(tmp_path: Path) -> None:
    path = _responses(tmp_path / "r.jsonl", [_pair_id("conv", i) for i in range(12)], axis="gender")
    out = tmp_path / "o"
    code, said = _score("--responses", str(path), "--axis", "gender", "-o", str(out))
    assert code == 0, said
    assert json.loads((out / "results.json").read_text(encoding="utf-8"))["warnings"] == []


def test_an_older_file_with_ids_of_an_unknown_axis_is_scored_with_a_warning(tmp_path: Path) -> None:
    path = _responses(tmp_path / "old.jsonl", [_pair_id("france-germany", i) for i in range(12)])  # no axis field
    out = tmp_path / "o"
    code, said = _score("--responses", str(path), "--axis", "gender", "-o", str(out))
    assert code == 0, said
    warnings = json.loads((out / "results.json").read_text(encoding="utf-8"))["warnings"]
    assert len(warnings) == 1, warnings
    assert warnings[0].startswith("12 of 12 pairs have ids of the form `fairtalk pairs` gives"), warnings
    assert "neither 'gender' (the axis scored) nor any axis known here ('france-germany' 12 pairs;" in warnings[0]
    assert "score them with that file (--axis FILE)" in warnings[0] and "warning: 12 of 12 pairs" in said, said
    lexicon = _lexicon(tmp_path)  # the right file: no warning
    code, said = _score("--responses", str(path), "--axis", str(lexicon), "-o", str(tmp_path / "o2"))
    assert code == 0, said
    assert json.loads((tmp_path / "o2" / "results.json").read_text(encoding="utf-8"))["warnings"] == []


def test_the_library_refuses_records_naming_another_axis(tmp_path: Path) -> None:
    lexicon = _lexicon(tmp_path)
    records = [
        Response(f"p{i}", side, f"c {i} {side}", _TEXTS[i % 4], (("axis", "france-germany"),)) for i in range(8) for side in "ab"
    ]
    with pytest.raises(fairtalk.InputError, match="answer 'france-germany' pairs"):
        fairtalk.score(records, axis="gender", measures=["length"], n_resamples=50)
    assert fairtalk.score(records, axis=str(lexicon), measures=["length"], n_resamples=50).axis == "france-germany"


def _fails_on_berlin(context: str) -> str:
    if "berlin" in context:
        raise RuntimeError("content_filter")
    return "ok"


def test_generation_records_the_axis_of_pairs_left_out_and_of_pairs_of_several_axes(tmp_path: Path) -> None:
    pairs = [Pair(f"fg{i}", "france-germany", f"in paris {i}", f"in berlin {i}", "a") for i in range(3)]
    pairs += [Pair(f"g{i}", "gender", f"he said {i}", f"she said {i}", "a") for i in range(3)]
    generation = fairtalk.respond(pairs, model=_fails_on_berlin)
    rs = generation.responses
    assert rs.pair_ids == ("g0", "g1", "g2")
    assert [dict(r.extra)["axis"] for r in (*rs.a, *rs.b)] == ["gender"] * 6
    assert {(r.pair_id, dict(r.extra)["axis"]) for r in rs.left_out} == {(f"fg{i}", "france-germany") for i in range(3)}
    path = fairtalk.write_responses(rs, tmp_path / "r.jsonl")
    assert {(r["pair_id"], r["axis"]) for r in _records(path)} == {(p.id, p.axis) for p in pairs}
    mixed = fairtalk.respond(pairs, model="builtin:echo").responses  # complete pairs of two axes: each record names its own
    assert [dict(r.extra)["axis"] for r in mixed.a] == ["france-germany"] * 3 + ["gender"] * 3
    with pytest.raises(fairtalk.InputError, match="mix the pairs of several axes"):
        fairtalk.score(mixed, axis="gender", measures=["length"], n_resamples=50)
