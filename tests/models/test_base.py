"""Tests for models/_base.py: DecodingSettings validation, batching helper, per-item error isolation, the Responder base."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from fairtalk import ResponderError, SpecError
from fairtalk.models import DecodingSettings, Responder, length_batches, make_fingerprint, respond_each_checked


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"temperature": 0}, "temperature must be a finite number > 0"),
        ({"top_k": 0}, "top_k must be a positive integer"),
        ({"top_p": 1.5}, "top_p must be in"),
        ({"max_new_tokens": 0}, "max_new_tokens must be a positive integer"),
        ({"num_beams": 0}, "num_beams must be a positive integer"),
        ({"num_beams": 2, "do_sample": True}, "num_beams > 1 needs do_sample=False"),
        ({"do_sample": "yes"}, "do_sample must be True or False"),
    ],
)
def test_settings_validation(kwargs: dict, message: str) -> None:
    with pytest.raises(SpecError, match=message):
        DecodingSettings(**kwargs)


def test_settings_key_ignores_sampling_knobs_when_greedy() -> None:
    assert DecodingSettings(temperature=0.5).digest == DecodingSettings().digest
    assert DecodingSettings(do_sample=True, temperature=0.5).digest != DecodingSettings(do_sample=True).digest
    assert DecodingSettings(max_new_tokens=5).digest != DecodingSettings().digest
    assert DecodingSettings().to_dict()["max_new_tokens"] == 256  # room for a chat answer (issue 25; paper 001: 40)


def test_length_batches_sorts_and_covers() -> None:
    lengths = [3, 10, 1, 7, 7]
    groups = list(length_batches(lengths, 2))
    assert groups == [[1, 3], [4, 0], [2]]
    assert sorted(i for g in groups for i in g) == list(range(5))


def test_helpers() -> None:
    assert make_fingerprint("x", "y") == "x:y"
    assert make_fingerprint("x", "y", b=1, a=None) == 'x:y {"b":1}'


class _Flaky(Responder):
    """Batched model that fails a whole batch when any context contains 'bad'."""

    calls = 0

    @property
    def fingerprint(self) -> str:
        return "test:flaky"

    def respond(self, contexts: Sequence[str], settings: DecodingSettings, *, seeds: Sequence[int]) -> list[str]:
        self.calls += 1
        if any("bad" in c for c in contexts):
            raise ResponderError("bad item in batch")
        return [c.upper() for c in contexts]


def test_bisection_isolates_failing_items() -> None:
    model = _Flaky()
    assert isinstance(model, Responder)
    contexts = ["a", "b", "bad1", "c", "d", "bad2", "e"]
    out = model.respond_each(contexts, DecodingSettings(), seeds=[0] * 7)
    assert [o if isinstance(o, str) else "ERR" for o in out] == ["A", "B", "ERR", "C", "D", "ERR", "E"]
    assert str(out[2]) == "bad item in batch"
    with model as m:
        assert m is model
    assert repr(model) == "_Flaky('test:flaky')"


def test_seed_count_must_match() -> None:
    with pytest.raises(SpecError, match="got 2 contexts but 1 seeds"):
        _Flaky().respond_each(["a", "b"], DecodingSettings(), seeds=[0])
    with pytest.raises(SpecError, match="got 2 contexts but 1 seeds"):
        respond_each_checked(_Flaky(), ["a", "b"], DecodingSettings(), seeds=[0])


def test_stop_and_repetition_penalty_are_settings_and_unset_ones_keep_older_store_keys() -> None:
    assert (
        DecodingSettings(max_new_tokens=40).digest == "1c8f4a4aa81cc0f0"
    )  # the key of greedy decoding (40 tokens) before these fields existed
    both = DecodingSettings(stop=["\n"], repetition_penalty=1.0)
    assert both.stop == ("\n",) and both.digest != DecodingSettings().digest
    assert DecodingSettings(**both.to_dict()) == both
    assert DecodingSettings().sent()["temperature"] is None  # greedy: no temperature is sent, none is recorded
    assert DecodingSettings(do_sample=True, temperature=0.7).sent()["temperature"] == 0.7
    for bad in ({"stop": "\n"}, {"stop": [""]}, {"repetition_penalty": 0}, {"repetition_penalty": True}):
        with pytest.raises(SpecError):
            DecodingSettings(**bad)


class _Minimal(Responder):
    """Only the two abstract members: every capability comes from the base class."""

    @property
    def fingerprint(self) -> str:
        return "test:minimal"

    def respond(self, contexts: Sequence[str], settings: DecodingSettings, *, seeds: Sequence[int]) -> list[str]:
        return [c[::-1] for c in contexts]


def test_every_optional_capability_has_a_default_on_the_base() -> None:
    model = _Minimal()
    settings = DecodingSettings()
    assert model.respond_each(["ab", "cd"], settings, seeds=[0, 0]) == ["ba", "dc"]
    assert not model.supports_stream
    assert list(model.respond_stream(["ab", "cd"], settings, seeds=[0, 0])) == [(0, "ba"), (1, "dc")]
    assert model.preflight() is None
    assert model.input_paths == () and model.n_actors is None
    assert model.in_flight is None and model.max_concurrency is None and model.retry_counts is None
    assert dict(model.tuning) == {}
    with model as same:
        assert same is model
    model.close()


def test_the_base_is_abstract_and_a_duck_typed_class_is_not_a_responder() -> None:
    class _NoRespond(Responder):
        @property
        def fingerprint(self) -> str:
            return "x"

    with pytest.raises(TypeError, match="abstract"):
        _NoRespond()  # type: ignore[abstract]

    class _Duck:  # the members of a Responder, but not its base class: the registry refuses it
        fingerprint = "duck"

        def respond(self, contexts: Sequence[str], settings: DecodingSettings, *, seeds: Sequence[int]) -> list[str]:
            return list(contexts)

        def close(self) -> None:
            pass

    assert not isinstance(_Duck(), Responder)


def test_overriding_respond_stream_makes_a_model_stream() -> None:
    class _Streams(_Minimal):
        def respond_stream(self, contexts, settings, *, seeds):  # noqa: ANN001, ANN201
            yield None
            yield from enumerate(c.upper() for c in contexts)

    assert _Streams().supports_stream and not _Minimal().supports_stream
    assert list(_Streams().respond_stream(["ab"], DecodingSettings(), seeds=[0])) == [None, (0, "AB")]


def test_a_wrong_number_of_results_is_an_error() -> None:
    class _Short(_Minimal):
        def respond_each(self, contexts, settings, *, seeds):  # noqa: ANN001, ANN201
            return []

    with pytest.raises(ResponderError, match="test:minimal returned 0 results for 1 contexts"):
        respond_each_checked(_Short(), ["a"], DecodingSettings(), seeds=[0])
