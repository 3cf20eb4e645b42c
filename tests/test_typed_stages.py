"""Issue 26, typed end to end: the pairs stage's summaries stay records, ``audit()`` takes explicit options, one JSONL writer."""

from __future__ import annotations

import gzip
import inspect
import io
import json
from pathlib import Path

import pytest

import fairtalk
from audit_toys import write_corpus
from fairtalk import AuditConfig, Pair, Response, ScoreOptions, SpecError, Swapper
from fairtalk._jsonl import json_line, read_objects, write_records
from fairtalk.debias import AugmentedDialogue, write_dialogues
from fairtalk.pairs import PairsChecker
from fairtalk.records import Coverage, PairsCheck
from typecheck import type_errors

LONE = "\udcff"
REPLACED = "\ufffd"


# -- the pairs stage's summaries are records, from where they are made on ---------------------------------------


def test_coverage_and_check_are_records_shared_by_every_layer() -> None:
    assert fairtalk.Coverage is Coverage and fairtalk.PairsCheck is PairsCheck
    pairs = fairtalk.build_pairs(["he is here", "she is here", "the weather"], fairtalk.load_lexicon("gender"))
    kept = list(pairs)
    assert isinstance(pairs.coverage, Coverage) and pairs.coverage.n_read == 3 and pairs.coverage.n_pairs == len(kept)
    check = fairtalk.check_pairs(kept, Swapper(fairtalk.load_lexicon("gender")))
    assert isinstance(check, PairsCheck) and check.n_pairs == len(kept)


def test_to_dict_is_the_json_form_and_from_dict_reads_it_back() -> None:
    pairs = fairtalk.build_pairs(["he is here", "she is here", "my son and his dad"], fairtalk.load_lexicon("gender"))
    kept = list(pairs)
    coverage, check = pairs.coverage, fairtalk.check_pairs(kept, Swapper(fairtalk.load_lexicon("gender")))
    as_json = json.loads(json.dumps(coverage.to_dict()))
    assert as_json["n_read"] == 3 and as_json["n_by_group"] == dict(coverage.n_by_group)
    assert Coverage.from_dict(as_json) == coverage
    on_disk = json.loads(check.to_json())
    assert on_disk == {"schema_version": 1, **json.loads(json.dumps(check.to_dict()))}  # the file is versioned
    assert on_disk["leftover_share"] == check.leftover_share
    assert PairsCheck.from_dict(on_disk) == check


def test_the_checker_writes_the_check_it_returns(tmp_path: Path) -> None:
    checker = PairsChecker(Swapper(fairtalk.load_lexicon("gender")))
    for pair in fairtalk.build_pairs(["he left", "she stayed"], fairtalk.load_lexicon("gender")):
        checker.add(pair)
    check = checker.write(tmp_path / "pairs_check.json")
    assert (tmp_path / "pairs_check.json").read_text(encoding="utf-8") == check.to_json()
    assert check == checker.result()


def test_an_audit_records_the_coverage_and_check_of_its_pairs(tmp_path: Path) -> None:
    """What the run and its report hold is the records' JSON form, exactly."""
    corpus = write_corpus(tmp_path)
    run = fairtalk.audit(
        corpus=corpus,
        axes="gender",
        model="builtin:echo",
        n_pairs=12,
        n_resamples=100,
        measures="length",
        out_dir=tmp_path / "out",
    )
    pair_set = fairtalk.build_pairs(fairtalk.read_corpus(corpus), Swapper(fairtalk.load_lexicon("gender")), limit=12)
    pairs = list(pair_set)
    axis = run.axes["gender"]
    assert axis.coverage.to_dict() == pair_set.coverage.to_dict()
    assert axis.result.to_dict()["manifest"]["audit"]["coverage"] == json.loads(json.dumps(pair_set.coverage.to_dict()))
    check = fairtalk.check_pairs(pairs, Swapper(fairtalk.load_lexicon("gender")))
    assert axis.pairs_check is not None and axis.pairs_check.to_dict() == check.to_dict()
    assert (tmp_path / "out" / "gender" / "pairs_check.json").read_text(encoding="utf-8") == check.to_json()


# -- audit() takes its options by name, and only those ----------------------------------------------------------


def test_audit_takes_every_option_by_keyword_and_nothing_else() -> None:
    from fairtalk.config import AuditOverrides

    parameters = inspect.signature(fairtalk.audit).parameters
    assert list(parameters) == ["config", "progress", "gates", "overrides"]
    assert parameters["overrides"].kind is inspect.Parameter.VAR_KEYWORD  # typed: Unpack[AuditOverrides]
    assert set(AuditOverrides.__annotations__) == set(AuditConfig.keys()) | set(ScoreOptions.keys())
    documented = fairtalk.audit.__doc__ or ""
    assert all(name in documented for name in (*parameters, *AuditConfig.keys(), *ScoreOptions.keys()))


def test_a_misspelt_option_is_refused_before_any_work() -> None:
    with pytest.raises(TypeError, match="alpah"):
        fairtalk.audit(axes="gender", alpah=0.1)  # type: ignore[call-arg]


def test_an_option_left_out_keeps_the_configs_value(tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path)
    config = AuditConfig(
        corpus=str(corpus),
        axes=("gender",),
        model="builtin:echo",
        n_pairs=10,
        score=ScoreOptions(alpha=0.01, n_resamples=100, measures=("length",)),
    )
    with pytest.raises(SpecError, match="alpha"):
        fairtalk.audit(config, alpha=0.05)  # given differently: an error, as before
    run = fairtalk.audit(config, alpha=0.01, n_pairs=10)  # the same value: fine
    assert run.config["score"]["alpha"] == 0.01 and run.config["n_pairs"] == 10
    assert run.config["split"] is None and run.config["max_errors"] is None  # left out: AuditConfig's defaults
    overrides = inspect.signature(fairtalk.audit).parameters["overrides"]  # **overrides: Unpack[AuditOverrides]
    assert overrides.kind is inspect.Parameter.VAR_KEYWORD
    with pytest.raises(TypeError, match="audit\\(\\) got an unexpected keyword argument 'alpah'"):
        fairtalk.audit(config, alpah=0.05)  # type: ignore[call-arg]


def test_a_misspelt_option_fails_type_checking(tmp_path: Path) -> None:
    source = "import fairtalk\n\nfairtalk.audit(axes='gender', alpah=0.1)\nfairtalk.audit(axes='gender', alpha=0.1)\n"
    errors, out = type_errors(source, tmp_path)
    assert len(errors) == 1 and ':3: error: Unexpected keyword argument "alpah"' in errors[0], out


# -- one JSONL writer: a lone surrogate is written, and read back, by every path --------------------------------


def test_json_line_replaces_a_lone_surrogate_as_replace_surrogates_does() -> None:
    assert json_line({"a": f"x{LONE}", LONE: 1}) == json.dumps({"a": f"x{REPLACED}", REPLACED: 1}, ensure_ascii=False) + "\n"
    assert json_line({"a": "é"}) == '{"a": "é"}\n'
    strict = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")  # a real UTF-8 stream: a surrogate would not encode
    assert write_records(strict, [{"t": LONE}, {"t": "ok"}]) == 2


def _read_back(path: Path) -> list[dict[str, object]]:
    raw = path.read_bytes()
    assert LONE.encode("utf-8", "surrogatepass") not in raw and b"\\udcff" not in raw  # replaced, not escaped
    return [record for _, record in read_objects(path)]


def test_write_records_to_a_file(tmp_path: Path) -> None:
    path = tmp_path / "records.jsonl"
    with path.open("w", encoding="utf-8") as handle:
        write_records(handle, [{"text": f"a{LONE}b"}])
    assert _read_back(path) == [{"text": f"a{REPLACED}b"}]


def test_write_responses_to_a_path_and_to_a_stream(tmp_path: Path) -> None:
    responses = [Response("1", "a", f"he said {LONE}", f"ok {LONE}"), Response("1", "b", "she said", "ok")]
    path = fairtalk.write_responses(responses, tmp_path / "responses.jsonl")
    assert [r["response"] for r in _read_back(path)] == [f"ok {REPLACED}", "ok"]
    back = fairtalk.read_responses(path)
    assert back.a[0].context == f"he said {REPLACED}"
    stream = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", newline="\n")
    fairtalk.write_responses(responses, stream)
    stream.flush()
    assert json.loads(stream.buffer.getvalue().decode("utf-8").splitlines()[0])["response"] == f"ok {REPLACED}"  # type: ignore[attr-defined]


def test_write_pairs(tmp_path: Path) -> None:
    pair = Pair("p1", "gender", a=f"he {LONE}", b=f"she {LONE}", original_side="a")
    path = tmp_path / "pairs.jsonl"
    assert fairtalk.write_pairs([pair], path) == 1
    assert _read_back(path)[0]["a"] == f"he {REPLACED}"
    assert next(fairtalk.read_pairs(path)).b == f"she {REPLACED}"


@pytest.mark.parametrize("name", ["augmented.jsonl", "augmented.jsonl.gz"])
def test_write_dialogues(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    dialogues = [AugmentedDialogue(f"he {LONE}", "hi", False), AugmentedDialogue("she", f"hi {LONE}", True)]
    assert write_dialogues(dialogues, path) == 2
    if name.endswith(".gz"):
        plain = tmp_path / "plain.jsonl"
        plain.write_bytes(gzip.decompress(path.read_bytes()))
        path = plain
    records = _read_back(path)
    assert [r["context"] for r in records] == [f"he {REPLACED}", "she"] and records[1]["response"] == f"hi {REPLACED}"
    assert [c.text for c in fairtalk.read_corpus(f"jsonl:{path}")] == [f"he {REPLACED}", "she"]


def test_the_pairs_check_of_a_pair_with_a_lone_surrogate(tmp_path: Path) -> None:
    checker = PairsChecker(Swapper(fairtalk.load_lexicon("gender")))
    checker.add(Pair("p1", "gender", a=f"he {LONE}", b=f"she {LONE} he", original_side="a"))  # a leftover: quoted
    checker.write(tmp_path / "pairs_check.json")
    on_disk = json.loads((tmp_path / "pairs_check.json").read_text(encoding="utf-8"))
    assert on_disk["leftover_examples"] == [{"pair_id": "p1", "swapped": f"she {REPLACED} he"}]
