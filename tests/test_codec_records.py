"""Records outside ``results/`` on the codec (issue 37): each writes what its hand-written ``to_dict`` wrote, key order included.

Each record is built as the code builds it, and its dict is compared with the dict the old
method wrote (spelled out here from the code before the change), through JSON text too.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest

from fairtalk.errors import InputError
from fairtalk.models import DecodingSettings
from fairtalk.models.openai._latency import Latency, choose
from fairtalk.prompts import FilterResult, Prompt, RegardCheck, check_labels, filter_prompts
from fairtalk.training import Vocab, load_checkpoint, shipped_checkpoint


def _same_json(new: dict[str, Any], old: dict[str, Any]) -> None:
    """The same keys in the same order, and the same JSON text."""
    assert list(new) == list(old)
    assert json.dumps(new) == json.dumps(old)


# Latency: run.json's tuning record ---------------------------------------------------------------------------------------


def _old_latency_dict(latency: Latency) -> dict[str, Any]:
    return {
        "seconds": round(latency.seconds, 4),
        "n_tokens": latency.n_tokens,
        "n_at_once": latency.n_at_once,
        "seconds_at_once": None if latency.seconds_at_once is None else round(latency.seconds_at_once, 4),
        "parallel": latency.parallel,
    }


# as _measure builds them: two probes alone, then N_AT_ONCE at once when it matters
_LATENCIES = [Latency(min(0.123456789, 0.2), 16), Latency(2.0412345, 7, max(6.12, 6.0000049)), Latency(0.5, 16, 0.6)]


@pytest.mark.parametrize("latency", _LATENCIES)
def test_latency_is_written_as_before_and_read_back(latency: Latency) -> None:
    data = latency.to_dict()
    assert list(data) == ["seconds", "n_tokens", "n_at_once", "seconds_at_once", "parallel"]
    _same_json(data, _old_latency_dict(latency))
    again = Latency.from_dict(json.loads(json.dumps(data)))
    assert again.to_dict() == data  # the seconds as the record keeps them: four decimals
    assert again == Latency(round(latency.seconds, 4), latency.n_tokens, data["seconds_at_once"], latency.n_at_once)


def test_the_tuning_record_holds_the_measure_as_before() -> None:
    latency = _LATENCIES[1]
    _, record = choose(
        latency,
        url="http://127.0.0.1:1/v1",
        max_new_tokens=40,
        timeout=None,
        max_concurrency=None,
        n_replicas=1,
        default_timeout=30,
        default_concurrency=8,
    )
    assert list(record) == ["measured", "max_new_tokens", "timeout", "max_concurrency", "chosen"]
    _same_json(record["measured"], _old_latency_dict(latency))
    assert record["measured"] == {"seconds": 2.0412, "n_tokens": 7, "n_at_once": 3, "seconds_at_once": 6.12, "parallel": 1}


# RegardCheck: ``fairtalk regard check``'s JSON ---------------------------------------------------------------------------


def _old_regard_check_dict(check: RegardCheck) -> dict[str, Any]:
    return {
        "n": check.n,
        "agreement": check.agreement,
        "macro_f1": check.macro_f1,
        "f1": check.f1,
        "labels": ["negative", "neutral", "positive", "other"],  # list(LABEL_NAMES)
        "confusion": check.confusion,
        "rates": check.rates,
        "gaps": check.gaps,
        "instrument": check.instrument,
    }


def _regard_check() -> RegardCheck:
    rows = [(-1, "a"), (0, "a"), (1, "a"), (2, "a"), (-1, "b"), (1, "b"), (0, "b"), (1, "b")]
    gold = [{"id": str(i), "label": label, "group": group} for i, (label, group) in enumerate(rows)]
    predicted = {"0": -1, "1": 1, "2": 1, "3": 2, "4": 0, "5": 1, "6": 0, "7": -1}
    return check_labels(gold, predicted, n_boot=50)


def test_regard_check_is_written_as_before_and_read_back(tmp_path: Path) -> None:
    check = _regard_check()
    data = check.to_dict()
    keys = ["n", "agreement", "macro_f1", "f1", "labels", "confusion", "rates", "gaps", "instrument"]
    assert list(data) == keys
    _same_json(data, _old_regard_check_dict(check))
    assert data["labels"] == ["negative", "neutral", "positive", "other"]
    assert RegardCheck.from_dict(json.loads(json.dumps(data))) == check
    check.write(tmp_path / "check.json")
    written = json.loads((tmp_path / "check.json").read_text())
    assert list(written) == ["schema_version", *keys] and RegardCheck.from_dict(written) == check


# FilterResult: the paraphrase filters' counts ----------------------------------------------------------------------------


def _filter_result() -> FilterResult:
    prompts = [
        Prompt("man", "worked as", "s1", "the man worked as"),
        Prompt("woman", "worked as", "s1", "the woman worked as"),
        Prompt("man", "worked as", "s2", "man, who worked as"),
        Prompt("woman", "worked as", "s2", "the person worked as"),
        Prompt("man", "worked as", "s3", ""),
    ]
    return filter_prompts(prompts)


def test_filter_result_is_written_as_before_and_read_back_with_its_prompts() -> None:
    result = _filter_result()
    data = result.to_dict()
    old = {
        "n_in": result.n_in,
        "n_kept": result.n_kept,
        "dropped": dict(result.counts),
        "n_cells": result.n_cells,
        "n_balanced_cells": result.n_balanced_cells,
    }
    assert list(data) == ["n_in", "n_kept", "dropped", "n_cells", "n_balanced_cells"]
    _same_json(data, old)
    assert data["dropped"] == {"empty": 1, "group_missing": 1, "duplicate": 0, "question": 0, "unbalanced": 1}
    kept = [asdict(prompt) for prompt in result.kept]  # the counts do not hold the prompts: they are given
    assert FilterResult.from_dict({**json.loads(json.dumps(data)), "kept": kept}) == result


# DecodingSettings: the run's settings and the run store's cache key -------------------------------------------------------


_SETTINGS = [
    DecodingSettings(),
    DecodingSettings(do_sample=True, temperature=0.7, top_k=50, top_p=0.9, stop=("\n", "User:"), repetition_penalty=1.1),
    DecodingSettings(max_new_tokens=40, num_beams=4),
]


@pytest.mark.parametrize("settings", _SETTINGS)
def test_decoding_settings_are_written_as_before_and_read_back(settings: DecodingSettings) -> None:
    data = settings.to_dict()
    old = asdict(settings)
    old["stop"] = list(settings.stop)
    keys = ["do_sample", "temperature", "top_k", "top_p", "max_new_tokens", "num_beams", "repetition_penalty", "stop"]
    assert list(data) == keys
    _same_json(data, old)
    assert DecodingSettings.from_dict(json.loads(json.dumps(data))) == settings == DecodingSettings(**data)


def test_the_cache_key_of_decoding_settings_is_unchanged() -> None:
    """The run store's keys hold the digest: stores written before must keep theirs."""
    assert DecodingSettings().digest == "831e159d8741dfaf"
    assert _SETTINGS[1].key == (
        '{"do_sample":true,"max_new_tokens":256,"num_beams":1,"repetition_penalty":1.1,"stop":["\\n","User:"],'
        '"temperature":0.7,"top_k":50,"top_p":0.9}'
    )


# Vocab: the vocabulary file of a checkpoint ------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["seq2seq", "retrieval"])
def test_a_shipped_vocabulary_is_saved_byte_for_byte(kind: str, tmp_path: Path) -> None:
    shipped = shipped_checkpoint(kind) / "vocab.json"
    vocab = load_checkpoint(shipped_checkpoint(kind)).vocab
    assert list(vocab.to_dict()) == ["version", "tokens", "min_count", "max_size", "n_texts"]
    vocab.save(tmp_path / "vocab.json")
    assert (tmp_path / "vocab.json").read_bytes() == shipped.read_bytes()
    again = Vocab.from_dict(json.loads(shipped.read_bytes()))
    assert again == vocab and (again.min_count, again.max_size, again.n_texts) == (vocab.min_count, vocab.max_size, vocab.n_texts)


def test_a_built_vocabulary_round_trips() -> None:
    vocab = Vocab.build(["he is here", "she is there", "he is"], min_count=1, max_size=10)
    data = vocab.to_dict()
    assert data == {
        "version": 1,
        "tokens": ["<pad>", "<unk>", "<bos>", "<eos>", "is", "he", "here", "she", "there"],
        "min_count": 1,
        "max_size": 10,
        "n_texts": 3,
    }
    again = Vocab.from_dict(data)
    assert again == vocab and again.index == vocab.index and (again.max_size, again.n_texts) == (10, 3)


_SPECIALS = ["<pad>", "<unk>", "<bos>", "<eos>"]


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        ([], "expected an object with a 'tokens' list"),
        ({"tokens": "x"}, "expected an object with a 'tokens' list"),
        ({"tokens": ["a", 1]}, "tokens must be strings"),
        ({"tokens": ["a"]}, "a vocabulary starts with ('<pad>', '<unk>', '<bos>', '<eos>')"),
        ({"tokens": [*_SPECIALS, "a", "a"]}, "duplicate token in vocabulary"),
        ({"tokens": _SPECIALS, "min_count": "x"}, "invalid literal for int() with base 10: 'x'"),
        (
            {"tokens": _SPECIALS, "min_count": None},
            "int() argument must be a string, a bytes-like object or a real number, not 'NoneType'",
        ),
        (
            {"tokens": _SPECIALS, "max_size": [1]},
            "int() argument must be a string, a bytes-like object or a real number, not 'list'",
        ),
    ],
)
def test_a_bad_vocabulary_file_is_named_with_the_same_message(data: Any, reason: str) -> None:
    with pytest.raises(InputError) as caught:
        Vocab.from_dict(data, path="p.json")
    assert str(caught.value) == f"p.json: not a fairtalk vocabulary file ({reason})"
    assert caught.value.path == "p.json"


def test_vocabulary_counts_are_read_as_int_reads_them() -> None:
    """Vocabulary files were read with ``int()``: what it accepted still reads."""
    vocab = Vocab.from_dict({"tokens": _SPECIALS, "min_count": "3", "max_size": 2.7, "n_texts": True})
    assert (vocab.min_count, vocab.max_size, vocab.n_texts) == (3, 2, 1)
    assert Vocab.from_dict({"tokens": _SPECIALS}).to_dict() == {
        "version": 1,
        "tokens": _SPECIALS,
        "min_count": 1,
        "max_size": 0,
        "n_texts": 0,
    }
