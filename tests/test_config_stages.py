"""The audit's options nested by stage: each stage of a run receives its own frozen sub-config, never the whole config."""

from __future__ import annotations

import dataclasses
import inspect
import typing
from collections.abc import Callable
from types import ModuleType
from typing import Any

import pytest

import fairtalk.run._audit as run_audit
import fairtalk.run._axis as run_axis
import fairtalk.run._sequential as run_sequential
from fairtalk import AuditConfig, ScoreOptions
from fairtalk.config import GenerationOptions, InferenceOptions, OutputOptions, PairsOptions, SequentialOptions
from fairtalk.models import RayEngine

SUB_CONFIGS = {
    "pairs": PairsOptions,
    "generation": GenerationOptions,
    "inference": InferenceOptions,
    "sequential": SequentialOptions,
    "output": OutputOptions,
}
#: The functions of run/ that wire stages together: they alone take the whole AuditConfig.
WIRING = {"audit", "run_axes", "run_sequential"}


def _functions(module: ModuleType) -> dict[str, Callable[..., Any]]:
    return {
        name: fn
        for name, fn in inspect.getmembers(module, inspect.isfunction)
        if fn.__module__ == module.__name__ and name not in {"dataclass", "field"}
    }


def _config() -> AuditConfig:
    return AuditConfig(
        corpus="builtin:chitchat",
        axes="gender",
        n_pairs=7,
        mixed="keep",
        balance=True,
        batch_size=8,
        engine="ray",
        max_errors=3,
        out_dir="out",
        settings={"do_sample": True, "temperature": 0.5},
        correction_scope="run",
        similarity="exact",
        until_decided=True,
        max_pairs=20,
        looks=3,
        spending="pocock",
        score={"alpha": 0.01, "correction": "bh", "seed": 3},
    )


def test_each_stage_is_handed_its_own_sub_config() -> None:
    config = _config()
    assert config.pairs == PairsOptions(
        corpus="builtin:chitchat", split="heldout", turns=1, n_pairs=7, mixed="keep", balance=True, seed=3
    )
    generation = config.generation
    assert (generation.batch_size, generation.max_errors, generation.seed, generation.engine) == (8, 3, 3, RayEngine())
    assert generation.settings is config.settings and generation.model is None and generation.store is None
    assert config.inference == InferenceOptions(score=config.score, correction_scope="run", similarity=("exact",), by_turn=False)
    assert config.sequential == SequentialOptions(
        until_decided=True, n_pairs=7, max_pairs=20, looks=3, spending="pocock", alpha=0.01, correction="bh"
    )
    assert config.output == OutputOptions(out_dir="out")
    for name, cls in SUB_CONFIGS.items():
        part = getattr(config, name)
        assert type(part) is cls
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(part, dataclasses.fields(part)[0].name, None)


def test_the_sub_configs_cover_the_flat_options_and_leave_what_is_recorded_alone() -> None:
    """Every flat option reaches its stage (the axes are the run's lexicons, loaded by the wiring); nothing is renamed."""
    covered = {f.name for cls in SUB_CONFIGS.values() for f in dataclasses.fields(cls)} | {"until_decided"}
    flat = set(AuditConfig.keys()) - {"axes"}
    assert flat - covered == set()
    recorded = _config().to_dict()
    assert list(recorded) == list(AuditConfig.keys())  # run.json's config: the flat keys, no sub-config in it
    assert not set(recorded) & set(SUB_CONFIGS)
    assert recorded["score"] == _config().score.to_dict()


@pytest.mark.parametrize("module", [run_axis, run_sequential, run_audit], ids=lambda m: m.__name__)
def test_no_stage_function_takes_the_whole_config(module: ModuleType) -> None:
    """Only the wiring functions take an AuditConfig; the stage functions name their sub-config's type."""
    for name, fn in _functions(module).items():
        hints = typing.get_type_hints(fn)
        if name in WIRING:
            assert hints.get("config") in (AuditConfig, AuditConfig | None), name
            continue
        assert AuditConfig not in hints.values(), f"{module.__name__}.{name} takes the whole AuditConfig"


@pytest.mark.parametrize(
    ("fn", "expected"),
    [
        (run_axis.audit_axis, {"pairing": PairsOptions, "generation": GenerationOptions, "inference": InferenceOptions}),
        (run_axis.axis_pairs, {"pairing": PairsOptions}),
        (run_axis.finish_axes, {"inference": InferenceOptions}),
        (run_sequential.nested_pairs, {"pairing": PairsOptions}),
        (run_sequential._decide, {"sequential": SequentialOptions, "inference": InferenceOptions}),
        (run_sequential._add_repeated, {"sequential": SequentialOptions}),
        (run_sequential._final_work, {"sequential": SequentialOptions}),
        (run_sequential._record, {"sequential": SequentialOptions}),
        (run_audit._cached_model, {"generation": GenerationOptions}),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_a_stage_function_names_its_sub_config(fn: Callable[..., Any], expected: dict[str, type]) -> None:
    hints = typing.get_type_hints(fn)
    assert {key: hints[key] for key in expected} == expected
    options = {value for value in hints.values() if value in (*SUB_CONFIGS.values(), ScoreOptions)}
    assert options == set(expected.values())  # no other sub-config than the one(s) it needs
