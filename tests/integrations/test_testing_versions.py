"""``assert_not_worse``'s own version for each model: two objects of one code whose state cannot be read.

Review finding: the baseline and the candidate took one ``model_version`` (the config's), so two
instances of one class holding different weights got one store fingerprint: the store served the
baseline's answers to the candidate, and the comparison called them one model.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from tests.integrations._toys import SMALL, biased, fair

import fairtalk
from fairtalk.errors import SpecError
from fairtalk.integrations.pytest_plugin import FairtalkAudit
from fairtalk.store import RunStore
from fairtalk.testing import BiasAssertionError, assert_no_bias, assert_not_worse


class Bot:
    """A model whose state fairtalk cannot read (a lock stands for a torch model): its fingerprint says ``unknown``."""

    def __init__(self, rude: bool, calls: list[str] | None = None) -> None:
        self.rude = rude
        self.lock = threading.Lock()
        self.calls = calls if calls is not None else []

    def __call__(self, text: str) -> str:
        self.calls.append(text)
        return biased(text) if self.rude else fair(text)


def _versions(store: Path) -> set[str]:
    """The model versions the store keys answers by."""
    with RunStore(store) as runs:
        return {row.fingerprint.rpartition(" version=")[2] for row in runs.iter_responses()}


def test_each_side_gets_its_own_version_so_the_store_serves_neither_the_others_answers(tmp_path: Path) -> None:
    store = tmp_path / "store.sqlite"
    config = fairtalk.AuditConfig(store=str(store))
    with pytest.raises(BiasAssertionError) as caught:
        assert_not_worse(
            Bot(rude=True),
            Bot(rude=False),
            **SMALL,
            config=config,
            out_dir=tmp_path / "out",
            baseline_version="prod-2026-10",
            candidate_version="next",
        )
    assert caught.value.failing == ("gender/offense_rate", "gender/length"), str(caught.value)
    assert "regressed" in str(caught.value)
    comparison = fairtalk.ModelComparison.read_json(tmp_path / "out" / "comparison" / "results.json")
    assert comparison.same_run is None
    baseline, candidate = comparison.models
    assert baseline is not None and baseline.endswith(" version=prod-2026-10")
    assert candidate is not None and candidate.endswith(" version=next")
    assert _versions(store) == {"prod-2026-10", "next"}


@pytest.mark.parametrize("store", [True, False], ids=["a store file", "no store"])
def test_one_version_for_two_objects_it_cannot_tell_apart_is_a_spec_error_before_any_answer(tmp_path: Path, store: bool) -> None:
    calls: list[str] = []
    config = fairtalk.AuditConfig(store=str(tmp_path / "store.sqlite") if store else None, model_version="v1")
    with pytest.raises(SpecError) as caught:
        assert_not_worse(Bot(True, calls), Bot(False, calls), **SMALL, config=config, out_dir=tmp_path / "out")
    message = str(caught.value)
    assert "two objects whose state fairtalk cannot read" in message and "Bot object.lock" in message, message
    assert "both given the model version 'v1'" in message and "baseline_version=TAG, candidate_version=" in message
    assert calls == [] and not (tmp_path / "out").exists()


def test_an_unreadable_model_without_its_version_and_a_store_names_the_side_before_any_answer(tmp_path: Path) -> None:
    calls: list[str] = []
    config = fairtalk.AuditConfig(store=str(tmp_path / "store.sqlite"))
    with pytest.raises(SpecError) as caught:
        assert_not_worse(Bot(True, calls), "builtin:echo", **SMALL, config=config, out_dir=tmp_path / "out", baseline_version="b")
    assert "give candidate_version=TAG" in str(caught.value) and "test_testing_versions:Bot " in str(caught.value)
    assert calls == [] and not (tmp_path / "out").exists()


def test_the_same_object_on_both_sides_is_one_model_whatever_its_version(tmp_path: Path) -> None:
    bot = Bot(rude=False)
    config = fairtalk.AuditConfig(model_version="v1")
    with pytest.raises(BiasAssertionError) as caught:
        assert_not_worse(bot, bot, **SMALL, config=config, out_dir=tmp_path / "out")
    assert "run" in caught.value.failing
    assert "a model cannot be shown not worse than itself" in str(caught.value)


@pytest.mark.parametrize("value", ["", "a\nb", 3])
def test_a_bad_version_names_its_parameter(value: object) -> None:
    for name in ("baseline_version", "candidate_version"):
        with pytest.raises(SpecError, match=f"^{name} must be a non-empty line of printable text, got "):
            assert_not_worse(fair, biased, **SMALL, **{name: value})  # type: ignore[arg-type]
    with pytest.raises(SpecError, match="^model_version must be a non-empty line"):
        assert_no_bias(fair, **SMALL, model_version=value)  # type: ignore[arg-type]


def test_assert_no_bias_takes_the_models_version_for_its_store(tmp_path: Path) -> None:
    store = tmp_path / "store.sqlite"
    run = assert_no_bias(
        Bot(rude=False), **SMALL, config=fairtalk.AuditConfig(store=str(store)), model_version="v7", out_dir=tmp_path / "a"
    )
    assert run.model.endswith(" version=v7")
    assert _versions(store) == {"v7"}


def test_the_fixture_passes_each_sides_version_on(tmp_path: Path) -> None:
    fixture = FairtalkAudit(fairtalk.AuditConfig(store=str(tmp_path / "store.sqlite")), tmp_path / "reports")
    with pytest.raises(BiasAssertionError) as caught:
        fixture.assert_not_worse(Bot(True), Bot(False), **SMALL, baseline_version="old", candidate_version="new")
    assert caught.value.failing == ("gender/offense_rate", "gender/length")
    assert fixture.assert_no_bias(Bot(False), **SMALL, model_version="old").model.endswith(" version=old")
