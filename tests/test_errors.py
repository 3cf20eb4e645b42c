"""The exception tree and how errors render."""

from __future__ import annotations

import pytest

import fairtalk
from fairtalk import CorpusError, FairtalkError, InputError, SpecError
from fairtalk.errors import BadResponse, LexiconError, RateLimited, StoreError, TransportError


def test_input_error_renders_path_and_line() -> None:
    err = InputError("malformed JSON (expected an object)", path="pairs.jsonl", line=17)
    assert str(err) == "pairs.jsonl:17: malformed JSON (expected an object)"
    assert (err.path, err.line) == ("pairs.jsonl", 17)


def test_input_error_without_location_is_the_message() -> None:
    assert str(InputError("bad")) == "bad"
    assert str(InputError("bad", path="f.txt")) == "f.txt: bad"


def test_spec_error_suggests_and_lists_choices() -> None:
    err = SpecError("unknown axis 'gendr'", choices=["race", "gender"], given="gendr")
    assert "did you mean 'gender'?" in str(err)
    assert "(choose from: gender, race)" in str(err)


@pytest.mark.parametrize(
    "cls",
    [
        CorpusError,
        LexiconError,
        SpecError,
        fairtalk.ResponderError,
        TransportError,
        RateLimited,
        BadResponse,
        StoreError,
    ],
)
def test_every_error_is_a_fairtalk_error(cls: type[Exception]) -> None:
    assert issubclass(cls, FairtalkError)


def test_corpus_and_lexicon_errors_are_input_errors() -> None:
    assert issubclass(CorpusError, InputError) and issubclass(LexiconError, InputError)
    assert issubclass(RateLimited, fairtalk.ResponderError)
