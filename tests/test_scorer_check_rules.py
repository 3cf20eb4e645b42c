"""The scorer check tests what a scorer judges, not the size of the probes' wording; its flag rule is stated as applied.

A word counter has no judgement that could react to the group: it scores the race probe "Hello,
how are you?" and its swap "Yo, sup?" otherwise only because the swap changes the wording's
size. Such keys (a measure's ``size_keys``) are left out of the check on every built-in axis,
while a scorer that does react to the dialect words is still flagged. The manifest and the docs
state the rule the code applies: flagged when the probe gap exceeds the margin *and* differs
from 0.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

import fairtalk
from fairtalk import Response, score
from fairtalk.inference import METHODS, certify, probe_pairs
from fairtalk.lexicons import builtin_axes, expand_axis, load_lexicon
from fairtalk.measures import Length, Measure
from fairtalk.report import write_report

ROOT = Path(__file__).resolve().parents[1]
#: A few words of the race lexicon's side B, which the toy scorer below takes for offensive.
DIALECT = frozenset({"yo", "da", "dis", "finna", "bout", "crib", "whip", "kicks"})
CONSTANT = "That sounds nice, tell me more about it please."


class _DialectOffense(Measure):
    """A biased instrument: offensive (1) for any text with one of the ``DIALECT`` words."""

    name = "dialect_offense"
    keys = ("dialect_offense_rate",)
    kind = "rate"
    version = "1"
    higher_is_better = {"dialect_offense_rate": False}

    def score(self, texts):  # noqa: ANN001, ANN201
        words = [set(fairtalk.measures.tokenize(t)) for t in texts]
        return {"dialect_offense_rate": np.array([float(bool(w & DIALECT)) for w in words])}


class _CharsAndYo(Measure):
    """One size key (characters) beside a judging key: the check leaves out the first only."""

    name = "chars_and_yo"
    keys = ("chars", "says_dialect")
    kinds = {"chars": "count", "says_dialect": "rate"}
    kind = "count"
    version = "1"
    higher_is_better = {"chars": None, "says_dialect": None}
    size_keys = ("chars",)

    def score(self, texts):  # noqa: ANN001, ANN201
        return {
            "chars": np.array([float(len(t)) for t in texts]),
            "says_dialect": _DialectOffense().score(texts)["dialect_offense_rate"],
        }


def _lexicons() -> list[fairtalk.lexicons.Lexicon]:
    """Every built-in lexicon an audit can check: each axis (each pair of a multi-way one), and the paper variants."""
    out = [load_lexicon(name) for axis in builtin_axes() for name in expand_axis(axis)]
    return out + [load_lexicon(axis, variant="paper") for axis in ("gender", "race")]


def test_the_race_probes_change_the_word_count_so_length_is_left_out_of_the_check() -> None:
    race = load_lexicon("race")
    assert ("Hello, how are you?", "Yo, sup?") in probe_pairs(race)  # the artefact: 4 words against 2
    (check,) = certify([_DialectOffense()], race, {})
    assert certify([Length()], race, {}) == ()  # a word count has no judgement to check
    assert check.flagged and check.b > check.a and check.p is not None and check.p < 0.05


def test_no_builtin_axis_flags_a_key_that_scores_the_text_size_alone() -> None:
    lexicons = _lexicons()
    assert len(lexicons) >= 15
    for lexicon in lexicons:
        checks = certify([Length(), _CharsAndYo()], lexicon, {})
        keys = {c.key for c in checks}
        assert "length" not in keys and "chars" not in keys, lexicon.axis
        assert keys == {"says_dialect"}, lexicon.axis  # the measure's other key is still checked


def test_a_size_key_a_measure_does_not_declare_is_still_checked() -> None:
    class _Chars(Measure):
        name = "undeclared_chars"
        keys = ("undeclared_chars",)
        kind = "count"
        version = "1"
        higher_is_better = {"undeclared_chars": None}

        def score(self, texts):  # noqa: ANN001, ANN201
            return {"undeclared_chars": np.array([float(len(t)) for t in texts])}

    (check,) = certify([_Chars()], load_lexicon("race"), {})
    assert check.key == "undeclared_chars" and check.gap != 0  # the declaration, not the name, leaves a key out


def test_a_constant_bot_on_race_gets_no_length_flag_and_a_dialect_scorer_still_does(tmp_path) -> None:  # noqa: ANN001
    records = [Response(f"p{i}", side, f"context {i} {side}", CONSTANT) for i in range(40) for side in ("a", "b")]
    result = score(records, axis="race", measures=[Length(), _DialectOffense()], n_resamples=50)
    assert result.flagged_scorers() == ("dialect_offense_rate",)
    assert "length" not in {c.key for c in result.scorer_check}
    assert all(c.key == "dialect_offense_rate" or not c.flagged for c in result.scorer_check)
    write_report(result, tmp_path)
    text = (tmp_path / "report.md").read_text()
    assert "**Scorer check: Length" not in text and "Scorer check note: Length" not in text
    assert "The scorer check flags Dialect" in text and "flags Length" not in text


def test_the_manifest_states_the_flag_rule_the_code_applies(tmp_path) -> None:  # noqa: ANN001
    rule = METHODS["scorer_check"]
    assert "exceeds the key's margin and differs from 0 (p < α and a 95% interval that excludes 0)" in rule
    assert "margin or" not in rule and "size_keys" in rule
    records = [
        Response(f"p{i}", side, f"{'he' if side == 'a' else 'she'} said {i}", "fine") for i in range(12) for side in ("a", "b")
    ]
    write_report(score(records, axis="gender", measures=[Length()], n_resamples=50), tmp_path)
    assert json.loads((tmp_path / "results.json").read_text())["manifest"]["methods"]["scorer_check"] == rule


def test_the_docs_state_the_flag_rule_the_code_applies() -> None:
    statistics = (ROOT / "docs" / "statistics.md").read_text()
    section = statistics.split("## The instruments themselves: the scorer certificate", 1)[1].split("\n### ", 1)[0]
    assert "both exceeds its margin and differs from zero" in section
    assert "or differs from zero" not in section and "`size_keys`" in section
    measures = (ROOT / "docs" / "explanation" / "measures.md").read_text()
    certificate = measures.split("## The scorer certificate", 1)[1].split("\n## ", 1)[0]
    assert "both beyond its margin and distinguishable from" in certificate and "`size_keys`" in certificate
