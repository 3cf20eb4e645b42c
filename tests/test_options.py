"""Tests for audit/_options.py and audit/_config.py: ScoreOptions and AuditConfig, from keywords, mappings and files."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

import fairtalk
from audit_toys import write_corpus, write_models
from fairtalk import AuditConfig, InputError, ScoreOptions, SpecError, audit, score

TOML = """
model = "builtin:echo"
axes = ["gender"]
n-pairs = 30
seed = 3

[settings]
max_new_tokens = 12

[score]
alpha = 0.01
n_resamples = 200
margins = { offense_rate = 0.02 }
"""


def test_score_options_are_frozen_normalised_and_validated_once() -> None:
    options = ScoreOptions(measures="offense, length", primary=["offense_rate"], margins={"offense_rate": 1})
    assert options.measures == ("offense", "length") and options.primary == ("offense_rate",)
    assert dict(options.margins) == {"offense_rate": 1.0}
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.alpha = 0.1  # type: ignore[misc]
    for bad, fragment in (
        ({"alpha": 1.0}, "alpha must be between 0 and 1"),
        ({"seed": True}, "seed must be an integer"),
        ({"binary_test": "fisher"}, "unknown binary_test 'fisher'"),
        ({"margins": {"x": 0}}, "equivalence margin for 'x'"),
        ({"n_resamples": 0}, "n_resamples must be at least 1"),
        ({"clusters": "yes"}, "clusters must be true or false"),
    ):
        with pytest.raises(SpecError, match=fragment):
            ScoreOptions(**bad)
    # error messages name the options as the caller spelt them (the CLI passes its flags)
    with pytest.raises(SpecError, match="--resamples must be at least 1, got 0"):
        ScoreOptions.from_mapping({"n_resamples": 0}, names={"n_resamples": "--resamples"})


def test_unknown_keys_get_did_you_mean() -> None:
    with pytest.raises(SpecError, match="unknown score option 'n_resample'; did you mean 'n_resamples'"):
        ScoreOptions.from_mapping({"n_resample": 10})
    with pytest.raises(SpecError, match="unknown audit option 'n_pair'; did you mean 'n_pairs'"):
        AuditConfig.from_mapping({"n_pair": 10})
    with pytest.raises(SpecError, match="unknown decoding setting 'max_tokens'"):
        AuditConfig.from_mapping({"settings": {"max_tokens": 3}})
    with pytest.raises(SpecError, match="'alpha' is given twice"):
        AuditConfig.from_mapping({"alpha": 0.1, "score": {"alpha": 0.2}})


def test_audit_config_from_a_toml_file(tmp_path: Path) -> None:
    path = tmp_path / "audit.toml"
    path.write_text(TOML, encoding="utf-8")
    config = AuditConfig.from_file(path)
    assert (config.model, config.axes, config.n_pairs, config.seed) == ("builtin:echo", ("gender",), 30, 3)
    assert config.settings.max_new_tokens == 12 and config.score.alpha == 0.01
    assert dict(config.score.margins) == {"offense_rate": 0.02}
    assert config.effective_split == "heldout"
    assert config.updated({"corpus": "text:x.txt"}).effective_split == "all"
    document = config.to_dict()
    assert json.loads(json.dumps(document)) == document
    assert document["score"]["n_resamples"] == 200 and document["settings"]["max_new_tokens"] == 12
    bad = tmp_path / "bad.toml"
    bad.write_text('modle = "builtin:echo"\n', encoding="utf-8")
    with pytest.raises(SpecError, match=r"bad.toml: unknown audit option 'modle'; did you mean 'model'"):
        AuditConfig.from_file(bad)
    broken = tmp_path / "broken.toml"
    broken.write_text("model = \n", encoding="utf-8")
    with pytest.raises(InputError, match="broken.toml.*malformed TOML"):
        AuditConfig.from_file(broken)
    with pytest.raises(SpecError, match="options files are TOML"):
        AuditConfig.from_file(tmp_path / "audit.ini")


def test_yaml_files_need_pyyaml(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "score.yaml"
    path.write_text("alpha: 0.01\nmeasures: [length]\n", encoding="utf-8")
    pytest.importorskip("yaml")
    assert ScoreOptions.from_file(path) == ScoreOptions(alpha=0.01, measures=("length",))
    monkeypatch.setitem(__import__("sys").modules, "yaml", None)
    with pytest.raises(SpecError, match="needs PyYAML.*write it as TOML"):
        ScoreOptions.from_file(path)


def test_options_and_conflicting_keywords_are_an_error(tmp_path: Path) -> None:
    records = [
        fairtalk.Response(str(i), side, f"{'he' if side == 'a' else 'she'} said", text)
        for i, (a, b) in enumerate([("a b", "a"), ("c d e", "c"), ("f", "g h")])
        for side, text in (("a", a), ("b", b))
    ]
    options = ScoreOptions(measures=["length"], n_resamples=50, seed=1)
    by_object = score(records, axis="gender", options=options)
    by_keywords = score(records, axis="gender", measures=["length"], n_resamples=50, seed=1)
    assert by_object.to_dict()["measures"] == by_keywords.to_dict()["measures"]
    assert score(records, axis="gender", options=options, seed=1).n_pairs == 3  # the same value is no conflict
    with pytest.raises(SpecError, match=r"give options= or keyword options, not both with different values \(seed\)"):
        score(records, axis="gender", options=options, seed=2)
    with pytest.raises(SpecError, match=r"not both with different values \(n_pairs\)"):
        audit(AuditConfig(axes="gender"), n_pairs=5)


def test_audit_takes_a_config_and_records_it(tmp_path: Path) -> None:
    corpus, models = write_corpus(tmp_path), write_models(tmp_path)
    config = AuditConfig(corpus=corpus, axes="gender", model=f"python:{models}:fair", score=ScoreOptions(n_resamples=100))
    run = audit(config)
    again = audit(corpus=corpus, axes="gender", model=f"python:{models}:fair", n_resamples=100)
    assert run.results["gender"].to_dict()["measures"] == again.results["gender"].to_dict()["measures"]
    assert run.to_dict()["config"] == config.to_dict() == again.to_dict()["config"]
    assert run.to_dict()["config"]["corpus"] == str(corpus)


def test_resamples_too_few_for_alpha_are_refused_where_a_corpus_key_is_tested(tmp_path: Path) -> None:
    """Review finding: with 10 resamples (smallest permutation p 1/11 > 0.05) no corpus key could ever be detected, and
    --fail-on-bias passed a run whose diversity differed plainly; alpha below 1/1001 was out of reach whatever was given
    (the permutations were capped at 1,000)."""
    with pytest.raises(SpecError, match=r"n_resamples 10 is too few for alpha 0.05: .* 1/11 = 0.0909.*give at least 20"):
        ScoreOptions(n_resamples=10)
    assert ScoreOptions(n_resamples=20).n_resamples == 20  # 1/21 < 0.05
    with pytest.raises(
        SpecError,
        match=r"n_resamples 2000 \(the default\) is too few for alpha 0.0001: .*give at least 10000 resamples \(--resamples",
    ):
        ScoreOptions(alpha=0.0001)
    assert ScoreOptions(alpha=0.0001, n_resamples=10_000).n_resamples == 10_000
    assert ScoreOptions(measures="offense,length", n_resamples=10).n_resamples == 10  # no corpus key to test
    with pytest.raises(SpecError, match="too few"):
        ScoreOptions(measures="offense,diversity", n_resamples=10)
    config = tmp_path / "few.toml"
    config.write_text("n_resamples = 10\n", encoding="utf-8")
    with pytest.raises(SpecError, match="too few"):
        AuditConfig.from_file(config)


def test_permutations_reach_alpha_beyond_their_usual_cap() -> None:
    from fairtalk.stats import MAX_PERMUTATIONS, least_resamples, permutations_for

    assert permutations_for(2000, 0.05) == MAX_PERMUTATIONS == 1000
    assert permutations_for(5000, 0.0005) == least_resamples(0.0005) == 2000
    assert 1 / (permutations_for(5000, 0.0005) + 1) < 0.0005
