"""Tests for measures/_attribute_words.py: lemma/surface matching, hyphens, phrases, lists."""

from __future__ import annotations

import pytest

from fairtalk.errors import SpecError
from fairtalk.lexicons import load_attributes, load_lexicon
from fairtalk.measures import AttributeWords, Measure


def _counts(measure: AttributeWords, text: str) -> dict[str, float]:
    return {key: float(values[0]) for key, values in measure.score([text]).items()}


def test_gender_lists_count_lemmatised_career_and_family_words() -> None:
    measure = AttributeWords(lexicon=load_lexicon("gender"))
    assert measure.keys == ("career_words", "family_words")
    assert _counts(measure, "The Engineers and the nurse went to two WEDDINGS.") == {
        "career_words": 2.0,
        "family_words": 1.0,
    }
    # surface forms in the list match even where the lemma differs (married -> marry, also listed)
    assert _counts(measure, "She married my cousin; they marry often")["family_words"] == 3.0


def test_race_lists_and_surface_or_lemma_matching() -> None:
    measure = AttributeWords(lexicon=load_lexicon("race"))
    assert measure.keys == ("pleasant_words", "unpleasant_words")
    counts = _counts(measure, "We enjoyed the vacations, no accidents, thanks!")
    assert counts == {"pleasant_words": 3.0, "unpleasant_words": 1.0}


def test_hyphenated_entries_match_hyphenated_closed_and_open_forms() -> None:
    measure = AttributeWords({"family": ["care-giver", "in-law", "grand-daughter", "sister"]})
    assert _counts(measure, "My in-laws and the care-giver")["family_words"] == 2.0
    assert _counts(measure, "a caregiver, a care giver")["family_words"] == 2.0
    assert _counts(measure, "her grand-daughters")["family_words"] == 1.0
    assert _counts(measure, "my sister-in-law")["family_words"] == 1.0  # parts of an unlisted compound


def test_builtin_family_list_has_matchable_hyphenated_entries() -> None:
    measure = AttributeWords(["family"])
    assert _counts(measure, "in-law care-giver grand-daughter")["family_words"] == 3.0


def test_phrases_match_consecutive_tokens_by_surface_or_lemma() -> None:
    measure = AttributeWords({"work": ["job interview", "salary"]})
    assert _counts(measure, "Two job interviews, one JOB INTERVIEW, a job. Salaries!")["work_words"] == 3.0


def test_counts_per_response_and_lists_sharing_a_word() -> None:
    measure = AttributeWords({"a": ["family", "dog"], "b": ["family"]})
    scores = measure.score(["family dog dogs", "", "nothing here", "Family!"])
    assert scores["a_words"].tolist() == [3.0, 0.0, 0.0, 1.0]
    assert scores["b_words"].tolist() == [1.0, 0.0, 0.0, 1.0]


def test_lists_from_attribute_list_objects_names_and_files(tmp_path) -> None:
    path = tmp_path / "hobby.txt"
    path.write_text("# attribute: hobby\nchess\nsurfing\n", encoding="utf-8")
    measure = AttributeWords([load_attributes("career"), "unpleasant", path])
    assert measure.keys == ("career_words", "unpleasant_words", "hobby_words")
    assert _counts(measure, "the lawyer plays chess, damn")["hobby_words"] == 1.0
    lists = measure.config["lists"]
    assert lists["career"]["sha256"] == load_attributes("career").sha256 and lists["career"]["n_words"] > 50


def test_token_lemmas_are_cached() -> None:
    measure = AttributeWords({"career": ["engineer"]})
    measure.score(["engineers engineers engineers"])
    assert measure._lemmas == {"engineers": "engineer"}


def test_protocol_fields_and_validation() -> None:
    measure = AttributeWords({"career": ["engineer"]})
    assert isinstance(measure, Measure) and measure.kind == "count"
    assert dict(measure.higher_is_better) == {"career_words": None}
    assert "simplemma" in measure.version
    with pytest.raises(SpecError, match="needs attribute lists"):
        AttributeWords()
    with pytest.raises(SpecError, match="given twice"):
        AttributeWords(["career", "career"])
    with pytest.raises(SpecError, match="must be letters"):
        AttributeWords({"bad name": ["x"]})
