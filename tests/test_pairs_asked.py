"""Whether the pair count was asked for travels from the caller to the coverage: ``AuditConfig.n_pairs_given``,
``PairsOptions.n_pairs_given``, ``Coverage.limit_given``. Only a count asked for is a shortfall when the corpus has fewer
(the default, 2,000, left is not), whatever its value; a file written before ``limit_given`` reads as it did."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

import fairtalk
from fairtalk import AuditConfig
from fairtalk.lexicons import load_lexicon
from fairtalk.options import DEFAULT_N_PAIRS
from fairtalk.pairs import build_pairs
from fairtalk.records import Coverage

_LINES = ["He likes pizza.", "She likes tea.", "He is tall."]  # 3 pairs
_FAST = {"axes": "gender", "model": "builtin:echo", "measures": "length", "n_resamples": 20}


def test_the_config_says_whether_n_pairs_was_given_however_it_was() -> None:
    assert not AuditConfig().n_pairs_given
    assert not AuditConfig(turns=1, balance=True).n_pairs_given
    assert AuditConfig(n_pairs=DEFAULT_N_PAIRS).n_pairs_given
    assert AuditConfig("builtin:chitchat", ("gender",), None, {}, None, DEFAULT_N_PAIRS).n_pairs_given  # by position
    assert not AuditConfig("builtin:chitchat", ("gender",)).n_pairs_given
    assert AuditConfig.from_mapping({"n-pairs": DEFAULT_N_PAIRS}).n_pairs_given
    assert not AuditConfig.from_mapping({"seed": 2}).n_pairs_given
    given = AuditConfig().updated({"n_pairs": DEFAULT_N_PAIRS})
    assert given.n_pairs_given and given.updated({"seed": 3}).n_pairs_given  # kept by a later update
    assert AuditConfig.resolve(AuditConfig(), {"n_pairs": DEFAULT_N_PAIRS}).n_pairs_given  # the same value, given now
    assert given.pairs.n_pairs_given and not AuditConfig().pairs.n_pairs_given


def test_n_pairs_given_is_no_option_and_leaves_equality_and_the_record_alone() -> None:
    given = AuditConfig(n_pairs=DEFAULT_N_PAIRS)
    assert given == AuditConfig()
    assert "n_pairs_given" not in AuditConfig.keys() and "n_pairs_given" not in given.to_dict()
    with pytest.raises(fairtalk.SpecError, match="n_pairs_given must be true or false"):
        AuditConfig(n_pairs_given="yes")  # type: ignore[call-arg]


def test_build_pairs_with_a_limit_records_it_as_asked_for() -> None:
    lexicon = load_lexicon("gender")
    limited = build_pairs(_LINES, lexicon, limit=DEFAULT_N_PAIRS)
    assert len(list(limited)) == 3
    assert limited.coverage.limit_given is True
    assert limited.coverage.shortfall() == "asked for 2,000 pairs; the corpus gave 3"
    every = build_pairs(_LINES, lexicon)
    list(every)
    assert every.coverage.limit_given is None and every.coverage.shortfall() is None
    assert "limit_given" not in every.coverage.to_dict()  # written only when recorded


def test_an_older_coverage_without_limit_given_reads_as_before() -> None:
    recorded = build_pairs(_LINES, load_lexicon("gender"), limit=DEFAULT_N_PAIRS)
    list(recorded)
    older = {key: value for key, value in recorded.coverage.to_dict().items() if key != "limit_given"}
    read = Coverage.from_dict(older)
    assert read.limit_given is None and read.shortfall() is None  # 2,000 then: taken as the default
    assert dataclasses.replace(read, limit=50).shortfall() == "asked for 50 pairs; the corpus gave 3"
    assert Coverage.from_dict(recorded.coverage.to_dict()) == recorded.coverage


@pytest.mark.parametrize(("options", "short"), [({}, None), ({"n_pairs": DEFAULT_N_PAIRS}, "asked for 2,000 pairs")])
def test_audit_says_a_shortfall_of_pairs_asked_for_only(tmp_path: Path, options: dict[str, int], short: str | None) -> None:
    corpus = tmp_path / "c.txt"
    corpus.write_text("\n".join(_LINES) + "\n", encoding="utf-8")
    run = fairtalk.audit(corpus=str(corpus), **_FAST, **options)  # type: ignore[arg-type]
    coverage = run.axes["gender"].coverage
    assert (coverage.limit, coverage.limit_given) == (DEFAULT_N_PAIRS, bool(options))
    assert coverage.shortfall() == (None if short is None else f"{short}; the corpus gave 3")
    assert _recorded(run.results["gender"]) == coverage  # results.json holds it: the reports read it back


def _recorded(result: fairtalk.AuditResult) -> Coverage:
    """The coverage a result records (``audit.coverage``), read back as the reports read it."""
    audit = result.provenance.audit
    assert audit is not None and audit.coverage is not None
    return Coverage.from_dict(audit.coverage)


def test_an_until_decided_look_is_no_shortfall_even_when_its_first_look_was_given(tmp_path: Path) -> None:
    corpus = tmp_path / "c.txt"
    corpus.write_text("\n".join(_LINES) + "\n", encoding="utf-8")
    run = fairtalk.audit(corpus=str(corpus), **_FAST, n_pairs=DEFAULT_N_PAIRS, until_decided=True, max_pairs=3000)  # type: ignore[arg-type]
    coverage = run.axes["gender"].coverage
    assert (coverage.n_pairs, coverage.limit, coverage.limit_given) == (3, 3, False)
    assert coverage.shortfall() is None and _recorded(run.results["gender"]) == coverage


def test_a_count_other_than_the_default_is_a_shortfall_even_when_the_config_does_not_say_it_was_given(tmp_path: Path) -> None:
    """``dataclasses.replace`` copies ``n_pairs_given=False``: a limit of 500 is still one somebody asked for."""
    corpus = tmp_path / "c.txt"
    corpus.write_text("\n".join(_LINES) + "\n", encoding="utf-8")
    fast = AuditConfig(
        axes=("gender",), model="builtin:echo", score=AuditConfig().score.updated({"measures": "length", "n_resamples": 20})
    )
    config = dataclasses.replace(fast, n_pairs=500, corpus=str(corpus))
    assert not config.n_pairs_given
    run = fairtalk.audit(config=config)
    coverage = run.axes["gender"].coverage
    assert (coverage.limit, coverage.limit_given) == (500, False)
    assert coverage.shortfall() == "asked for 500 pairs; the corpus gave 3"
