"""The measure contract (issue 26): Measure and CorpusMeasure are base classes, checked by the registry; one options table.

What a measure must declare is abstract; what it may declare (``kinds``, ``unscored_keys``,
``config``, ``raw_scores``) has a default on the base, so no stage probes for it. Measures built
by name get each option of ``MEASURE_OPTIONS`` their constructor names, a plugin's too.
``score()`` takes its options as explicit keywords, and hands typed rows from scoring to the family.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest

import fairtalk
import fairtalk._registry
import fairtalk.measures._registry as registry
from fairtalk import ScoreOptions, SpecError
from fairtalk.inference import KeyTest
from fairtalk.measures import (
    MEASURE_OPTIONS,
    CorpusMeasure,
    Degenerate,
    Diversity,
    Judge,
    Length,
    Measure,
    MeasureOptions,
    TokenLimit,
    build_measure,
    default_measures,
    score_unique,
)
from fairtalk.run import build_measures
from fairtalk.run._score import prepare_scores
from typecheck import type_errors

A = ["I SAID NO", "fine thanks", "I SAID NO", "great", "I SAID NO", "ok then", "sure", "I SAID NO"]
B = ["i said no", "fine thanks", "i said no", "great", "i said no", "ok then", "sure", "i said yes"]


class Shouting(Measure):
    """A complete user measure: a rate, with a raw score (the share of words in capitals)."""

    name = "shouting"
    keys = ("shouting_rate",)
    kind = "rate"
    version = "1"
    higher_is_better: Mapping[str, bool | None] = {"shouting_rate": False}

    def raw_scores(self, texts: Sequence[str]) -> np.ndarray:
        return np.array([sum(w.isupper() and len(w) > 1 for w in t.split()) / max(len(t.split()), 1) for t in texts])

    def score(self, texts: Sequence[str]) -> Mapping[str, np.ndarray]:
        return {"shouting_rate": (self.raw_scores(texts) > 0).astype(float)}


class Quiet(Measure):
    """The same scores as Shouting, without a raw score: the base's default (None)."""

    name = "quiet"
    keys = ("quiet_rate",)
    kind = "rate"
    version = "1"
    higher_is_better: Mapping[str, bool | None] = {"quiet_rate": False}

    def score(self, texts: Sequence[str]) -> Mapping[str, np.ndarray]:
        return {"quiet_rate": Shouting().score(texts)["shouting_rate"]}


class Configured(Measure):
    """A plugin whose constructor names known options (and one, ``scorer``, that is offense's only)."""

    built: ClassVar[list[dict[str, Any]]] = []
    name = "configured"
    keys = ("configured_rate",)
    kind = "rate"
    version = "1"
    higher_is_better: Mapping[str, bool | None] = {"configured_rate": None}

    def __init__(self, *, threshold: float = 0.5, script: str = "latin", scorer: str = "own", definition: str = "-") -> None:
        self.settings = {"threshold": threshold, "script": script, "scorer": scorer, "definition": definition}
        Configured.built.append(self.settings)

    @property
    def config(self) -> Mapping[str, object]:
        return dict(self.settings)

    def score(self, texts: Sequence[str]) -> Mapping[str, np.ndarray]:
        return {"configured_rate": np.array([float(len(t) > 8) for t in texts])}


class Duck:
    """Every member of a measure, but not a subclass: refused."""

    name, keys, kind, version = "duck", ("duck",), "count", "1"
    higher_is_better: ClassVar[dict[str, bool | None]] = {"duck": None}

    def score(self, texts: Sequence[str]) -> Mapping[str, np.ndarray]:
        return {"duck": np.zeros(len(texts))}


@pytest.fixture
def plugins(monkeypatch: pytest.MonkeyPatch) -> None:
    """A fresh measure registry, so that the names registered here do not leak."""
    monkeypatch.setattr(registry, "MEASURES", registry.MEASURES.fresh())
    Configured.built.clear()


def _cyrillic(tmp_path: Path) -> fairtalk.Lexicon:
    path = tmp_path / "ru.tsv"
    path.write_text("# axis: ru\n# groups: m f\nон\tона\nбрат\tсестра\n", encoding="utf-8")
    return fairtalk.load_lexicon(str(path))


# -- the base classes -----------------------------------------------------------------------------


def test_a_measure_that_leaves_out_a_declaration_cannot_be_built() -> None:
    class NoVersion(Measure):
        name, keys, kind = "x", ("x",), "rate"
        higher_is_better: Mapping[str, bool | None] = {"x": None}

        def score(self, texts: Sequence[str]) -> Mapping[str, np.ndarray]:
            return {"x": np.zeros(len(texts))}

    class NoPrepare(CorpusMeasure):
        name, keys, version = "y", ("y",), "1"
        higher_is_better: Mapping[str, bool | None] = {"y": None}

    with pytest.raises(TypeError, match="abstract.*version"):
        NoVersion()  # type: ignore[abstract]
    with pytest.raises(TypeError, match="abstract.*prepare"):
        NoPrepare()  # type: ignore[abstract]


def test_the_optional_parts_have_defaults_on_the_base() -> None:
    quiet = Quiet()
    assert dict(quiet.kinds) == {"quiet_rate": "rate"} and quiet.kind_of("quiet_rate") == "rate"
    assert tuple(quiet.unscored_keys) == () and dict(quiet.config) == {}
    assert quiet.raw_scores(["A B"]) is None and Shouting().raw_scores(["NO way"]).tolist() == [0.5]
    assert Diversity().kind == "corpus" and Diversity().kind_of("distinct_1") == "corpus"
    judge = Judge(lambda prompts: ["4"] * len(prompts), scale=(1, 5))
    assert judge.kind_of("judge_score") == "count" and judge.kind_of("judge_unparsed") == "rate"
    assert set(judge.unscored_keys) == {"judge_score", "judge_unparsed"}


def test_every_built_in_measure_subclasses_its_base() -> None:
    for name in registry.DEFAULT_SUITE + ("regard",):
        factory = registry.MEASURES.get(name)
        assert isinstance(factory, type) and issubclass(factory, Measure | CorpusMeasure), name
    assert issubclass(Diversity, CorpusMeasure) and not issubclass(Diversity, Measure)
    assert issubclass(Judge, Measure) and issubclass(TokenLimit, Measure)
    for measure in default_measures(fairtalk.load_lexicon("gender")):
        assert isinstance(measure, Measure | CorpusMeasure)
    with pytest.raises(TypeError, match="finish reasons"):
        TokenLimit().score(["text"])


# -- the registry checks the base class ------------------------------------------------------------


def test_a_plugin_class_that_is_not_a_measure_is_a_spec_error_naming_it(
    plugins: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / "duck_plugin.py").write_text("class Duck:\n    name = 'duck'\n\n\nclass Half:\n    pass\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    points = [EntryPoint("duck", "duck_plugin:Duck", registry.ENTRY_POINT_GROUP)]
    monkeypatch.setattr(fairtalk._registry, "entry_points", lambda group: points if group == registry.ENTRY_POINT_GROUP else [])
    with pytest.raises(SpecError, match=r"measure 'duck' \(duck_plugin:Duck\) is class Duck, which does not subclass"):
        fairtalk.get_measure("duck")
    with pytest.raises(SpecError, match="does not subclass fairtalk.measures.Measure"):
        fairtalk.score(A, B, axis="gender", measures=["duck"], n_resamples=50)


def test_a_plugin_that_leaves_out_a_declaration_is_a_spec_error_naming_what(plugins: None) -> None:
    class Unfinished(Measure):
        name, kind = "unfinished", "rate"

        def score(self, texts: Sequence[str]) -> Mapping[str, np.ndarray]:
            return {}

    registry.register_measure("unfinished", Unfinished)
    message = r"measure 'unfinished' \(.*Unfinished\) does not define higher_is_better, keys, version, which every Measure must"
    with pytest.raises(SpecError, match=message):
        fairtalk.get_measure("unfinished")


def test_duck_typed_measure_objects_are_refused_at_the_boundary() -> None:
    with pytest.raises(SpecError, match="subclasses fairtalk.measures.Measure or CorpusMeasure\\), got Duck"):
        ScoreOptions(measures=[Duck()])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="takes a Measure"):
        score_unique(Duck(), ["a"])  # type: ignore[arg-type]


# -- one options table ----------------------------------------------------------------------------


def test_a_plugin_measure_receives_the_options_its_constructor_names(plugins: None, tmp_path: Path) -> None:
    registry.register_measure("configured", Configured)
    result = fairtalk.score(
        A, B, axis=_cyrillic(tmp_path), measures="configured,length", offense_threshold=0.3, distinct="standard", n_resamples=50
    )
    assert Configured.built == [{"threshold": 0.3, "script": "cyrillic", "scorer": "own", "definition": "standard"}]
    config = next(m.config for m in result.provenance.measures or () if m.name == "configured")
    assert config == {"threshold": 0.3, "script": "cyrillic", "scorer": "own", "definition": "standard"}


def test_named_and_default_measures_get_the_same_options(tmp_path: Path) -> None:
    options = MeasureOptions(_cyrillic(tmp_path), distinct="standard", offense_threshold=0.6, sentiment_threshold=0.7)
    named = build_measures(list(registry.DEFAULT_SUITE[:3] + registry.DEFAULT_SUITE[4:]), options)
    default = build_measures(None, options)
    assert [(m.name, dict(m.config)) for m in named] == [(m.name, dict(m.config)) for m in default]
    degenerate = named[-1]
    assert isinstance(degenerate, Degenerate) and degenerate.script == "cyrillic"  # the axis' script, named or not
    assert build_measure("regard", options).config["scorer"] == "builtin"  # offense's scorer is offense's only
    assert set(MEASURE_OPTIONS) == {
        "definition",
        "scorer",
        "threshold",
        "positive_threshold",
        "negative_threshold",
        "lexicon",
        "script",
    }


def test_score_options_hand_typed_options_to_measures() -> None:
    lexicon = fairtalk.load_lexicon("gender")
    options = ScoreOptions(offense="hatesonar", offense_threshold=0.4, sentiment_threshold=0.6).measure_options(lexicon)
    assert options == MeasureOptions(lexicon, offense="hatesonar", offense_threshold=0.4, sentiment_threshold=0.6)
    assert options.arguments("offense", {"scorer", "threshold"}) == {"scorer": "hatesonar", "threshold": 0.4}
    assert options.arguments("sentiment", {"positive_threshold", "negative_threshold"}) == {
        "positive_threshold": 0.6,
        "negative_threshold": -0.6,
    }


# -- score(): explicit keywords, typed rows ------------------------------------------------------


def test_score_takes_its_options_as_typed_keywords() -> None:
    parameters = inspect.signature(fairtalk.score).parameters  # **overrides: Unpack[ScoreOverrides]
    assert parameters["overrides"].kind is inspect.Parameter.VAR_KEYWORD and not set(ScoreOptions.keys()) & set(parameters)
    with pytest.raises(TypeError, match="alpah"):
        fairtalk.score(A, B, axis="gender", alpah=0.1)  # type: ignore[call-arg]
    with pytest.raises(SpecError, match="alpha"):  # given twice, differently: as before
        fairtalk.score(A, B, axis="gender", options=ScoreOptions(alpha=0.01), alpha=0.05)
    assert ScoreOptions(measures="length,refusal", primary="length").measures == ("length", "refusal")


def test_scored_rows_are_typed_and_a_measure_without_raw_scores_ranks_no_pairs() -> None:
    rs = fairtalk.read_responses(fairtalk.responses_from_texts(A, B))
    options = ScoreOptions(measures=[Shouting(), Quiet(), "length"], n_resamples=50, scorer_check=False)
    scored = prepare_scores(rs, axis="gender", options=options)
    assert all(isinstance(row, KeyTest) for row in scored.rows)
    assert [row.tested.name for row in scored.rows] == ["shouting_rate", "quiet_rate", "length"]
    first = scored.rows[0].tested
    assert first.kind == "rate" and first.a == 0.5 and first.b == 0.0
    assert {d.measure for d in scored.divergent} == {"shouting"}  # Quiet declares no raw score


def test_the_options_type_check_as_they_are_accepted(tmp_path: Path) -> None:
    source = (
        "import fairtalk\nimport fairtalk.measures\n\n"
        "fairtalk.score(['a'], ['b'], axis='gender', alpah=0.1)\n"
        "fairtalk.score(['a'], ['b'], axis='gender', alpha=0.1, measures='length,refusal', primary='length')\n"
        "fairtalk.ScoreOptions(measures='a,b', judge_scale='1-5', primary='x,y')\n"
        "fairtalk.ScoreOptions(measures=['length', fairtalk.measures.Length()])\n"
    )
    errors, out = type_errors(source, tmp_path)
    assert len(errors) == 1 and ':4: error: Unexpected keyword argument "alpah"' in errors[0], out


def test_length_is_a_measure_like_any_other() -> None:
    assert Length().kinds == {"length": "count"} and Length().raw_scores(["a"]) is None
