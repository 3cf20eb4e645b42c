"""The options schema: each option declared once (ScoreOptions, AuditConfig), and every other form of it held to it.

The keyword TypedDicts of ``score()``/``audit()``, the choices of the library's constants, and the
CLI's flags (their defaults and help texts) are checked against the fields here, so that editing
one of them alone fails a test.
"""

from __future__ import annotations

import typing

import pytest

from fairtalk import AuditConfig, ScoreOptions, SpecError
from fairtalk.measures.diversity import DEFINITIONS
from fairtalk.measures.similarity import SIMILARITY_METHODS
from fairtalk.pairs import MIXED_POLICIES
from fairtalk.pipeline._config import AuditOverrides, RunOverrides
from fairtalk.pipeline._family import CORRECTION_SCOPES
from fairtalk.pipeline._measure_tests import BINARY_TESTS, COUNT_TESTS
from fairtalk.pipeline._options import CORRECTIONS, ScoreOverrides
from fairtalk.pipeline._schema import field_info, option_default, option_help
from fairtalk.stats.sequential import SPENDING_FUNCTIONS


def test_the_keyword_typeddicts_have_exactly_the_fields() -> None:
    assert list(ScoreOverrides.__annotations__) == list(ScoreOptions.keys())
    assert list(RunOverrides.__annotations__) == list(AuditConfig.keys())
    assert set(AuditOverrides.__annotations__) == {*AuditConfig.keys(), *ScoreOptions.keys()}
    assert not ScoreOverrides.__required_keys__ and not AuditOverrides.__required_keys__  # total=False


@pytest.mark.parametrize(
    ("cls", "key", "choices"),
    [
        (ScoreOptions, "correction", CORRECTIONS),
        (ScoreOptions, "distinct", DEFINITIONS),
        (ScoreOptions, "binary_test", tuple(BINARY_TESTS)),
        (ScoreOptions, "count_test", COUNT_TESTS),
        (AuditConfig, "mixed", MIXED_POLICIES),
        (AuditConfig, "correction_scope", CORRECTION_SCOPES),
        (AuditConfig, "spending", SPENDING_FUNCTIONS),
    ],
)
def test_the_literal_choices_are_the_librarys(cls: type, key: str, choices: tuple[str, ...]) -> None:
    assert set(typing.get_args(field_info(cls, key).annotation)) == set(choices)
    with pytest.raises(SpecError, match=f"unknown {key} 'nope'") as caught:
        cls(**{key: "nope"})
    assert caught.value.choices == tuple(sorted(choices)) and "\n" not in str(caught.value)


def test_every_option_has_help_and_its_default_is_valid() -> None:
    for cls in (ScoreOptions, AuditConfig):
        built = cls()
        for key in cls.keys():
            assert option_help(cls, key).strip(), f"{cls.__name__}.{key} has no description"
            if key not in ("score", "settings", "margins", "model_args"):  # normalised into their own types
                assert getattr(built, key) == option_default(cls, key), key
    assert SIMILARITY_METHODS  # the similarity methods are checked by its validator (tests/test_cli_contracts.py)


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"alpha": 0}, r"alpha must be between 0 and 1 \(exclusive\), got 0"),
        ({"power": float("nan")}, r"power must be between 0 and 1 \(exclusive\), got nan"),
        ({"offense_threshold": 1.5}, r"offense_threshold must be a number in \[0, 1\], got 1.5"),
        ({"seed": 1.0}, "seed must be an integer >= 0, got 1.0"),
        ({"n_divergent": -1}, "n_divergent must be at least 0, got -1"),
        ({"mask_groups": 1}, "mask_groups must be true or false, got 1"),
        ({"offense": ""}, "offense must be a scorer name"),
    ],
)
def test_a_bad_scoring_option_is_one_line_naming_it_and_its_range(given: dict[str, object], message: str) -> None:
    with pytest.raises(SpecError, match=f"^{message}") as caught:
        ScoreOptions(**given)  # type: ignore[arg-type]
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"batch_size": 0}, "--batch-size must be a positive int, got 0"),
        ({"looks": 1, "until_decided": True, "max_pairs": 10, "n_pairs": 5}, "--looks must be an int >= 2 or None, got 1"),
        ({"until_decided": "yes"}, "--until-decided must be True or False, got 'yes'"),
        ({"max_pairs": 10}, "--max-pairs applies only with --until-decided"),
        ({"corpus": 3}, "--corpus must be a path, got 3"),
    ],
)
def test_a_bad_run_option_is_named_as_the_caller_spells_it(given: dict[str, object], message: str) -> None:
    names = {key: "--" + key.replace("_", "-") for key in (*AuditConfig.keys(), *given)}
    with pytest.raises(SpecError, match=f"^{message}"):
        AuditConfig.from_mapping(given, names=names)


def test_an_unknown_keyword_is_a_type_error_as_python_s() -> None:
    with pytest.raises(TypeError, match="ScoreOptions\\(\\) got an unexpected keyword argument 'alpah'"):
        ScoreOptions(alpah=0.1)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="score\\(\\) got an unexpected keyword argument 'n_pairs'"):
        __import__("fairtalk").score(["a", "b"], ["c", "d"], axis="gender", n_pairs=3)
