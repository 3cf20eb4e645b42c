"""Tests for measures/_registry.py: lookup by name, options, duplicates, plugins, the default suite."""

from __future__ import annotations

from importlib.metadata import EntryPoint

import pytest

import fairtalk._registry
from fairtalk.errors import SpecError
from fairtalk.lexicons import load_lexicon
from fairtalk.measures import (
    AttributeWords,
    Degenerate,
    Diversity,
    Length,
    Offense,
    Refusal,
    Sentiment,
    default_measures,
    get_measure,
    measure_names,
    register_measure,
)
from fairtalk.measures import _registry as registry

BUILTIN = ("attribute_words", "degenerate", "diversity", "length", "offense", "refusal", "regard", "sentiment")


@pytest.fixture(autouse=True)
def _clean_registry(monkeypatch):
    monkeypatch.setattr(registry, "MEASURES", registry.MEASURES.fresh())


def test_builtin_names_and_lookup_with_options() -> None:
    assert set(BUILTIN) <= set(measure_names())
    assert measure_names() == tuple(sorted(measure_names()))
    assert isinstance(get_measure("length"), Length)
    assert get_measure("diversity", definition="standard").definition == "standard"
    assert get_measure("offense", threshold=0.7).threshold == 0.7


def test_unknown_name_says_did_you_mean_and_lists_choices() -> None:
    with pytest.raises(
        SpecError, match=r"unknown measure 'sentimnt'; did you mean 'sentiment'\? \(choose from: .*diversity"
    ) as info:
        get_measure("sentimnt")
    assert set(BUILTIN) <= set(info.value.choices)


def test_unknown_option_is_a_spec_error_listing_the_accepted_ones() -> None:
    with pytest.raises(SpecError, match="does not accept these options.*choose from: .*threshold"):
        get_measure("offense", treshold=0.3)


def test_runtime_registration_and_duplicates() -> None:
    register_measure("words", "fairtalk.measures._length:Length")
    assert "words" in measure_names() and isinstance(get_measure("words"), Length)
    with pytest.raises(SpecError, match="already registered"):
        register_measure("words", Length)
    with pytest.raises(SpecError, match="already registered"):
        register_measure("length", Length)
    with pytest.raises(SpecError, match="must look like"):
        register_measure("other", "no_colon_here")
    register_measure("not_a_measure", dict)
    with pytest.raises(SpecError, match=r"'not_a_measure' \(builtins:dict\) is class dict, which does not subclass"):
        get_measure("not_a_measure")
    register_measure("builds_a_dict", lambda: {})
    with pytest.raises(SpecError, match="'builds_a_dict' .* did not build a Measure or CorpusMeasure \\(got dict\\)"):
        get_measure("builds_a_dict")
    register_measure("missing", "fairtalk.nowhere:Thing")
    with pytest.raises(SpecError, match="cannot load measure 'missing'"):
        get_measure("missing")


def test_entry_point_plugins_load_lazily_and_may_not_shadow_builtins(monkeypatch) -> None:
    points = [EntryPoint("plugin_length", "fairtalk.measures._length:Length", registry.ENTRY_POINT_GROUP)]
    monkeypatch.setattr(fairtalk._registry, "entry_points", lambda group: points if group == registry.ENTRY_POINT_GROUP else [])
    assert "plugin_length" in measure_names()
    assert isinstance(get_measure("plugin_length"), Length)
    points.append(EntryPoint("offense", "evil.module:Offense", registry.ENTRY_POINT_GROUP))
    monkeypatch.setattr(registry, "MEASURES", registry.MEASURES.fresh())
    with pytest.raises(SpecError, match="'offense' is already registered"):
        measure_names()


def test_no_plugins_installed_is_fine(monkeypatch) -> None:
    monkeypatch.setattr(fairtalk._registry, "entry_points", lambda group: [])
    assert measure_names() == BUILTIN


@pytest.mark.parametrize(
    ("axis", "keys"), [("gender", ("career_words", "family_words")), ("race", ("pleasant_words", "unpleasant_words"))]
)
def test_default_suite_order_and_options(axis: str, keys: tuple[str, ...]) -> None:
    suite = default_measures(load_lexicon(axis), distinct="standard", offense_threshold=0.6, sentiment_threshold=0.7)
    assert [type(m) for m in suite] == [Diversity, Offense, Sentiment, AttributeWords, Length, Refusal, Degenerate]
    assert [m.name for m in suite] == ["diversity", "offense", "sentiment", "attribute_words", "length", "refusal", "degenerate"]
    assert suite[-1].script == "latin"  # the script of the axis' group words
    diversity, offense, sentiment, attributes = suite[:4]
    assert diversity.definition == "standard" and offense.threshold == 0.6
    assert (sentiment.positive_threshold, sentiment.negative_threshold) == (0.7, -0.7)
    assert attributes.keys == keys
    for measure in suite:
        assert set(measure.higher_is_better) == set(measure.keys)
        assert isinstance(measure.version, str) and measure.version
        assert isinstance(dict(measure.config), dict)


def test_default_suite_keys_are_the_fixed_result_keys() -> None:
    keys = [key for measure in default_measures(load_lexicon("gender")) for key in measure.keys]
    assert keys == [
        "distinct_1",
        "distinct_2",
        "diversity",
        "offense_rate",
        "sentiment_positive",
        "sentiment_negative",
        "career_words",
        "family_words",
        "length",
        "refusal_rate",
        "degenerate_rate",
    ]


def test_default_suite_skips_attribute_words_for_an_axis_without_lists() -> None:
    import dataclasses

    lexicon = dataclasses.replace(load_lexicon("gender"), attributes=())
    assert [m.name for m in default_measures(lexicon)] == ["diversity", "offense", "sentiment", "length", "refusal", "degenerate"]


def test_default_suite_uses_an_axis_file_s_own_lists(tmp_path) -> None:
    path = tmp_path / "pets.tsv"
    path.write_text("# axis: pets\n# groups: cat dog\n# attributes: pleasant unpleasant\nkitten\tpuppy\n", encoding="utf-8")
    suite = default_measures(load_lexicon(str(path)))
    assert suite[3].keys == ("pleasant_words", "unpleasant_words")


def test_default_degenerate_measure_expects_the_script_of_the_axis_words(tmp_path) -> None:
    path = tmp_path / "ru.tsv"
    path.write_text("# axis: ru\n# groups: m f\nон\tона\nбрат\tсестра\n", encoding="utf-8")
    degenerate = default_measures(load_lexicon(str(path)))[-1]
    assert isinstance(degenerate, Degenerate) and degenerate.script == "cyrillic"
    assert degenerate.score(["Я не знаю.", "I don't know."])["degenerate_rate"].tolist() == [0.0, 1.0]
