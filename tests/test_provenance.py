"""The typed ``Provenance`` of an ``AuditResult``: what ``results.json``'s ``manifest`` holds, read and written unchanged."""

from __future__ import annotations

import dataclasses
import json
import warnings
from pathlib import Path

import pytest
from typer.testing import CliRunner

import fairtalk
from audit_toys import write_corpus
from fairtalk import Response
from fairtalk.cli import app
from fairtalk.report import render_html, render_markdown
from fairtalk.results import (
    AuditProvenance,
    AuditResult,
    LexiconProvenance,
    Provenance,
    ScoringEngine,
    ScoringSettings,
    SequentialProvenance,
    TruncationProvenance,
    is_requested_model,
)

runner = CliRunner()
FAST = {"measures": ["length", "diversity"], "n_resamples": 100, "scorer_check": False}
LONG = " ".join(f"word{i}" for i in range(40))


def _records(n_pairs: int = 20, n_cut: int = 8) -> list[Response]:
    """Pairs whose side a is cut off at the token limit in the first ``n_cut`` pairs (so the truncation entry is full)."""
    out = []
    for i in range(n_pairs):
        cut = i < n_cut
        out.append(
            Response(
                str(i),
                "a",
                f"he said {i}",
                LONG if cut else f"short answer {i}",
                (("finish_reason", "length" if cut else "stop"),),
            )
        )
        out.append(Response(str(i), "b", f"she said {i}", f"another answer {i} here", (("finish_reason", "stop"),)))
    return out


def _sequential() -> SequentialProvenance:
    return SequentialProvenance(
        design="group-sequential",
        spending="obrien-fleming",
        correction="holm",
        max_pairs=40,
        n_pairs_available=60,
        planned_looks=(20, 40),
        fractions=(0.5, 1.0),
        looks=1,
        n_pairs=20,
        z_boundaries=(2.8,),
        nominal_alpha=0.005,
        nominal_alpha_equivalence=0.0025,
        stopped="all decided",
        decided_at={"length": 1},
        undecided=(),
    )


def test_a_scored_results_json_reads_into_typed_sections_and_writes_back_byte_for_byte(tmp_path: Path) -> None:
    result = fairtalk.score(_records(), axis="gender", **FAST)
    path = result.write(tmp_path / "results.json")
    written = path.read_text(encoding="utf-8")
    back = AuditResult.read_json(path)
    provenance = back.provenance
    assert isinstance(provenance.lexicon, LexiconProvenance) and provenance.lexicon.source == "builtin:gender"
    assert provenance.measure_names == ("length", "diversity", "token_limit")
    assert isinstance(provenance.options, ScoringSettings) and provenance.options.distinct == "paper"
    assert provenance.scoring_engine == ScoringEngine(
        name="local", distinct_responses=provenance.scoring_engine.distinct_responses
    )
    assert isinstance(provenance.truncation, TruncationProvenance) and provenance.truncation.n_cut == {"a": 8, "b": 0}
    assert provenance.truncation.warned is True and provenance.audit is None and provenance.extra == {}
    assert back.provenance == result.provenance
    assert back.write(tmp_path / "again.json").read_text(encoding="utf-8") == written
    # the manifest keys are those fairtalk wrote before Provenance, in that order
    assert list(json.loads(written)["manifest"]) == [
        "fairtalk_version",
        "python",
        "libraries",
        "lexicon",
        "measures",
        "options",
        "seed",
        "alpha",
        "correction",
        "n_resamples",
        "n_permutations",
        "mask_groups",
        "drop_empty",
        "exclude_truncated",
        "binary_test",
        "count_test",
        "clustered",
        "power",
        "margins",
        "primary",
        "methods",
        "input",
        "scoring_engine",
        "truncation",
    ]


def test_an_until_decided_audit_round_trips_its_audit_and_sequential_sections(tmp_path: Path) -> None:
    run = fairtalk.audit(
        corpus=write_corpus(tmp_path),
        axes="gender",
        model="builtin:echo",
        until_decided=True,
        n_pairs=20,
        max_pairs=40,
        **FAST,
    )
    result = run.results["gender"]
    audit = result.provenance.audit
    assert isinstance(audit, AuditProvenance) and audit.run_id == run.run_id and audit.extra == {}
    assert isinstance(audit.sequential, SequentialProvenance) and result.provenance.sequential is audit.sequential
    data = result.to_dict()
    assert list(data["manifest"])[-1] == "audit" and list(data["manifest"]["audit"])[-1] == "sequential"
    text = json.dumps(data)
    back = AuditResult.from_dict(json.loads(text))
    assert back.provenance == result.provenance and json.dumps(back.to_dict()) == text


def test_keys_it_does_not_name_are_kept_in_extra_and_written_back() -> None:
    manifest = {
        "seed": 3,
        "scoring_engine": {"name": "local", "distinct_responses": 4, "gpu": "none"},
        "truncation": {"reasons_reported": False, "exclude_truncated": False, "later": [1, 2]},
        "audit": {
            "run_id": "r1",
            "corpus": "c",
            "split": "all",
            "model": "m",
            "decoding": {"stop": []},
            "seed": 0,
            "n_pairs_requested": 2,
            "mixed": "drop",
            "balance": False,
            "coverage": {},
            "name": "repro",
            "sequential": {"looks": 1},
        },
        "note": "added by hand",
    }
    provenance = Provenance.from_dict(manifest)
    assert provenance.extra == {"note": "added by hand"}
    assert provenance.scoring_engine is not None and provenance.scoring_engine.extra == {"gpu": "none"}
    assert provenance.truncation is not None and provenance.truncation.extra == {"later": (1, 2)}
    assert provenance.audit is not None and provenance.audit.extra == {"name": "repro"}
    assert provenance.sequential is not None and provenance.sequential.looks == 1
    assert json.dumps(provenance.to_dict()) == json.dumps(manifest)


@pytest.mark.unvalidated_files  # malformed on purpose
def test_a_section_that_is_no_object_is_refused_naming_the_file_and_the_section(tmp_path: Path) -> None:
    data = fairtalk.score(_records(), axis="gender", **FAST).to_dict()
    data["manifest"]["truncation"] = "cut"
    path = tmp_path / "results.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(
        fairtalk.InputError, match=r"results\.json: field 'manifest\.truncation' must be an object, got the string 'cut'"
    ):
        AuditResult.read_json(path)  # the file model types every section
    with pytest.raises(TypeError, match=r"field 'Provenance\.truncation': expected an object, got str"):
        Provenance.from_dict(data["manifest"])


def test_manifest_is_deprecated_read_only_and_the_mapping_it_always_was() -> None:
    result = fairtalk.score(_records(), axis="gender", **FAST)
    with pytest.warns(FutureWarning, match=r"AuditResult\.provenance.*stops working in fairtalk 0\.3"):
        manifest = result.manifest
    assert dict(manifest) == result.to_dict()["manifest"] == result.provenance.to_dict()
    with pytest.raises(TypeError):
        manifest["seed"] = 1  # type: ignore[index]
    with pytest.raises((AttributeError, TypeError)):  # frozen: no setter
        result.manifest = {}  # type: ignore[misc]


def _audited(result: AuditResult) -> AuditResult:
    """The result as an until-decided audit made it, its distinct-n definition ``standard``."""
    provenance = dataclasses.replace(
        result.provenance,
        options=ScoringSettings(distinct="standard"),
        audit=AuditProvenance(
            model="builtin:echo", decoding={"do_sample": False, "max_new_tokens": 40}, seed=0, sequential=_sequential()
        ),
    )
    return dataclasses.replace(result, provenance=provenance)


def test_the_reports_read_the_typed_provenance_and_never_the_deprecated_mapping() -> None:
    result = _audited(fairtalk.score(_records(), axis="gender", **FAST))
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)  # a reader of result.manifest fails here
        text, page = render_markdown(result), render_html(result, plots=False)
    for shown in (text, " ".join(page.split())):
        assert "Distinct-n definition: standard" in shown
        assert "until decided: stopped at look 1 of 2 (20 of at most 40 pairs): every primary measure decided" in shown
        assert "system prompt none · greedy, max" in shown
        assert "were cut off at the token limit" in shown
    # a key the record does not name is shown in the manifest table, never read as a setting
    stray = dataclasses.replace(result, provenance=Provenance(extra={"distinct": "standard"}))
    assert "Distinct-n definition" not in render_markdown(stray) and "distinct" in render_html(stray, plots=False)


def test_the_cli_writes_and_reports_without_reading_the_deprecated_mapping(tmp_path: Path) -> None:
    path = tmp_path / "responses.jsonl"
    fairtalk.write_responses(_records(), path)
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        done = runner.invoke(
            app, ["score", "--responses", str(path), "--axis", "gender", "-o", str(tmp_path / "out"), "--measures", "length"]
        )
    assert done.exit_code == 0, done.output
    written = (tmp_path / "out" / "results.json").read_text(encoding="utf-8")
    back = AuditResult.read_json(tmp_path / "out" / "results.json")
    assert back.provenance.input is not None and back.provenance.input.sources is not None
    assert [s.path for s in back.provenance.input.sources] == [str(path)]
    assert back.write(tmp_path / "again.json").read_text(encoding="utf-8") == written


@pytest.mark.parametrize(
    ("asked", "served"),
    [
        ("gpt-4o", "gpt-4o-2024-08-06"),
        ("gpt-4", "gpt-4-0613"),
        ("gemini-1.5-pro", "gemini-1.5-pro-002"),
        ("claude-3-5-sonnet", "claude-3-5-sonnet-20241022"),
        ("mistral-7b-instruct", "mistral-7b-instruct-v0.2"),
        ("mistral-large-latest", "mistral-large-2411"),
        ("llama-3.1-8b-instruct", "llama-3.1-8b-instruct"),
    ],
)
def test_the_model_asked_for_with_a_version_after_a_dash_is_the_model_asked_for(asked: str, served: str) -> None:
    assert is_requested_model(asked, served)


@pytest.mark.parametrize(
    ("asked", "served"),
    [
        ("gpt-4o", "gpt-4o-mini"),  # review finding: any "-" suffix counted as the model asked for
        ("gpt-4o", "gpt-4o-mini-2024-07-18"),
        ("gpt-4", "gpt-4-32k"),
        ("gpt-4", "gpt-4-1106-preview"),
        ("llama-3.1", "llama-3.1-8b"),
        ("llama-3.1-8b", "llama-3.1-8b-instruct"),
        ("gpt-4o", "gpt-4o2024"),
        ("gpt-4o", "gpt-4o-"),
        ("mistral-large-latest", "mistral-large-mini"),
    ],
)
def test_another_suffix_after_the_model_asked_for_names_another_model(asked: str, served: str) -> None:
    assert not is_requested_model(asked, served)
