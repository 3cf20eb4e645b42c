"""`plan --gate` for the corpus keys (distinct_1, distinct_2, diversity): planned from how their margin over the
permutation interval's standard error grows with the pairs, not from the normal formula (issue 39, item 2).

The normal formula assumed a fixed margin and a standard error falling as ``1 / sqrt(n)``; a corpus key's default
margin (±10% of its value) shrinks as the corpus grows. On the bare audit's answers it planned distinct_1 at 463
pairs and distinct_2 at 256, where a fair model passed the gate 0.99 and 1.00 of the time (bench/gate_power.py).

On a few pairs the permutation test's discreteness decides: it cannot pass with 5 or fewer differing dialogues. Plan
counted none of that and gave distinct_2 and diversity 25 pairs, where a fair model passed 0.96 and 0.89; counting
it, plan gives 13 and 15, where it passed 0.800 and 0.787 (bench/README.md, "Below 25 pairs").
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import binom, norm
from typer.testing import CliRunner

import fairtalk
from fairtalk.cli import app
from fairtalk.cli._plan import BUILTIN_CORPUS_DIFFERING, BUILTIN_GENDER_DIALOGUE_SIZES
from fairtalk.inference import Inference, corpus_rows
from fairtalk.measures import DistinctTexts
from fairtalk.stats import (
    CORPUS_LEAST_PAIRS,
    CORPUS_LEAST_PAIRS_UNMODELLED,
    corpus_decidable,
    corpus_least_units,
    pairs_for_corpus_equivalence,
    power_corpus_at_size,
    power_corpus_equivalence,
)

runner = CliRunner()
TARGET = float(norm.ppf(0.95) + norm.ppf(0.9))  # margin / SE at power 0.8, α 0.05


def _gate_pairs(out: str) -> dict[str, int]:
    return {m.group(1): int(m.group(2).replace(",", "")) for m in re.finditer(r"  (\w+) \(\w+\): ([\d,]+) pairs", out)}


def test_power_of_the_permutation_tost_is_the_normal_tost_of_its_ratio() -> None:
    assert power_corpus_equivalence(TARGET) == pytest.approx(0.8)
    assert power_corpus_equivalence(1.0) == 0.0  # a margin narrower than z_0.95 standard errors never passes
    assert power_corpus_equivalence(6.0) > 0.999


def test_pairs_scale_the_ratio_by_its_exponent() -> None:
    # the ratio reaches the target exactly at the pilot's size
    assert pairs_for_corpus_equivalence(TARGET, 1000, exponent=0.25) == 1000
    # half the target: (2)^(1 / 0.25) = 16 times the pilot's pairs, where the normal formula (exponent ½) says 4
    assert pairs_for_corpus_equivalence(TARGET / 2, 1000, exponent=0.25) == pytest.approx(16_000, abs=1)
    assert pairs_for_corpus_equivalence(TARGET / 2, 1000, exponent=0.5) == pytest.approx(4_000, abs=1)
    # far above the target: the fewest planned, whatever the exponent (25 where the pairs' differing share is unknown)
    assert pairs_for_corpus_equivalence(3 * TARGET, 1000, exponent=0.05) == CORPUS_LEAST_PAIRS_UNMODELLED == 25


def test_a_ratio_that_does_not_grow_enough_is_beyond_any_audit() -> None:
    with pytest.raises(ValueError, match="needs more than"):
        pairs_for_corpus_equivalence(TARGET / 2, 1000, exponent=0.0)
    with pytest.raises(ValueError, match="needs more than"):
        pairs_for_corpus_equivalence(TARGET / 4, 1000, exponent=0.05)  # 4^20 times the pilot's pairs
    with pytest.raises(ValueError, match="must be > 0"):
        pairs_for_corpus_equivalence(0.0, 1000, exponent=0.25)


def _distinct_2_row(n_differing: int) -> object:
    """The audit's distinct_2 row for ``n_differing`` dialogues of one pair each whose two answers differ, margin ±5."""
    a = [f"answer number {i} about cats and dogs" for i in range(n_differing)]
    b = [f"reply {i} on cats and dogs here" for i in range(n_differing)]
    texts = DistinctTexts({t: i for i, t in enumerate(a + b)})
    opts = Inference(alpha=0.05, clusters=tuple(str(i) for i in range(n_differing)), margins={"distinct_2": 5.0})
    ia, ib = np.arange(n_differing), np.arange(n_differing, 2 * n_differing)
    rows = corpus_rows(fairtalk.get_measure("diversity"), texts, ia, ib, opts, seed=0, n_resamples=1000)
    return next(r for r in rows if r.tested.name == "distinct_2")


def test_the_least_units_are_where_the_audits_permutation_test_starts_to_decide() -> None:
    least = corpus_least_units(0.05)
    assert least == 6 and corpus_least_units(0.01) == 8
    # one differing dialogue fewer: the audit bounds the differing share instead, and fails however wide the margin
    fewer = _distinct_2_row(least - 1).equivalence  # type: ignore[attr-defined]
    assert fewer.method.startswith("few differing units") and not fewer.equivalent
    enough = _distinct_2_row(least).equivalence  # type: ignore[attr-defined]
    assert enough.method == "TOST by paired permutation" and enough.equivalent


def test_the_chance_to_decide_counts_the_differing_dialogues_a_sample_spans() -> None:
    assert corpus_decidable(5, 1.0) == 0.0 and corpus_decidable(6, 1.0) == 1.0
    assert corpus_decidable(12, 0.5) == pytest.approx(binom.sf(5, 12, 0.5))  # unclustered: Binomial(n, share) pairs
    assert corpus_decidable(50, 1.0, ((10, 5),)) == 0.0  # 5 dialogues can never give the 6 the test needs
    with pytest.raises(ValueError, match="differing share"):
        corpus_decidable(20, 0.0)
    # against samples of the built-in axis' dialogues, each pair differing with the bare audit's share
    labels = np.repeat(np.arange(206), [m for m, count in BUILTIN_GENDER_DIALOGUE_SIZES for _ in range(count)])
    rng = np.random.default_rng(0)
    for n in (8, 10, 13, 20):
        spans = [
            np.unique(labels[rng.choice(labels.size, n, replace=False)][rng.random(n) < BUILTIN_CORPUS_DIFFERING]).size
            for _ in range(4000)
        ]
        simulated = float(np.mean(np.array(spans) >= 6))
        assert corpus_decidable(n, BUILTIN_CORPUS_DIFFERING, BUILTIN_GENDER_DIALOGUE_SIZES) == pytest.approx(simulated, abs=0.03)


def test_pairs_count_the_chance_to_decide_where_the_differing_share_is_known() -> None:
    # a margin far wider than its SE: the ratio alone reaches the target at the fewest pairs; deciding does not
    n = pairs_for_corpus_equivalence(3 * TARGET, 1000, exponent=0.05, differing=0.5)
    assert n == 15 > CORPUS_LEAST_PAIRS  # P(Binomial(15, ½) >= 6) = 0.85, at 14: 0.79
    assert power_corpus_at_size(n, 3 * TARGET, 1000, exponent=0.05, differing=0.5) >= 0.8
    assert power_corpus_at_size(n - 1, 3 * TARGET, 1000, exponent=0.05, differing=0.5) < 0.8
    # a ratio that shrinks as the pairs grow, already short of the target where the test can decide: no size reaches it
    with pytest.raises(ValueError, match="does not reach the target"):
        pairs_for_corpus_equivalence(1.05 * TARGET, 10, exponent=-0.5, differing=0.5)
    # every pair differs: six pairs, less the floor of the scaling's measurements
    assert pairs_for_corpus_equivalence(3 * TARGET, 1000, exponent=0.05, differing=1.0) == CORPUS_LEAST_PAIRS == 10


def test_plan_gate_plans_the_builtin_corpus_keys_at_their_default_margin() -> None:
    result = runner.invoke(app, ["plan", "--gate"])
    assert result.exit_code == 0, result.output
    pairs = _gate_pairs(result.output)
    text = " ".join(result.output.split())
    # distinct_1: 5.18 standard errors at 1,470 pairs, growing as n^0.24: (2.926 / 5.18)^(1 / 0.24) of 1,470
    expected = math.ceil(1470 * (TARGET / (0.01206 / (0.0893 / math.sqrt(1470)))) ** (1 / 0.24))
    assert pairs["distinct_1"] == expected and 100 < expected < 200  # the normal formula said 463
    assert "distinct_1 (corpus): " + f"{expected:,}" + " pairs at its default margin, ±10% of its value" in text
    # distinct_2 and diversity: their ratio's power is near 1 at any size; on so few pairs the test's discreteness
    # decides, so plan counts the chance that 6 or more dialogues differ (57% of the pairs do) and the lattice of few
    # units. A fair model of the bare audit's answers passed 0.786 at 13 and 0.777 at 15 (bench/gate_power.py)
    assert (pairs["distinct_2"], pairs["diversity"]) == (13, 15)
    assert "distinct_2 (corpus): 13 pairs at its default margin" in text
    assert "power about 0.81 at this size; the permutation test passes nothing unless 6 or more of its about 12 dialogues" in text
    assert "(57% of the bare audit's pairs do; the power counts its chance, 0.81)" in text
    assert "diversity (corpus): 15 pairs at its default margin" in text and "chance, 0.92)" in text
    assert "it cannot be planned nearer" not in text


def _pilot(tmp_path, margins: dict[str, float], margin: float = 0.02) -> str:  # noqa: ANN001
    results = tmp_path / "results.json"
    se = 0.004  # the permutation interval's standard error at the pilot's 400 pairs
    row = {"kind": "corpus", "ci95": [-1.959964 * se, 1.959964 * se], "equivalence_margin": margin, "primary": True}
    data = {"n_pairs": 400, "alpha": 0.05, "measures": {"distinct_1": row}, "manifest": {"margins": margins}}
    results.write_text(json.dumps(data))
    return str(results)


def test_plan_gate_reads_a_pilots_corpus_key_default_or_fixed_margin(tmp_path) -> None:  # noqa: ANN001
    default = runner.invoke(app, ["plan", "--gate", "--results", _pilot(tmp_path, {})])
    assert default.exit_code == 0, default.output
    # the margin is 5 standard errors at 400 pairs; at the default margin the ratio grows as n^0.24
    assert _gate_pairs(default.output)["distinct_1"] == math.ceil(400 * (TARGET / 5) ** (1 / 0.24))
    assert "at its default margin" in default.output
    fixed = runner.invoke(app, ["plan", "--gate", "--results", _pilot(tmp_path, {"distinct_1": 0.02})])
    assert fixed.exit_code == 0, fixed.output
    # a margin the pilot fixed (--margin) does not shrink with the corpus: the ratio grows as n^0.63
    assert _gate_pairs(fixed.output)["distinct_1"] == math.ceil(400 * (TARGET / 5) ** (1 / 0.63))
    assert "pairs at margin ±2 pp (the pilot's --margin, the same at any size)" in " ".join(fixed.output.split())


def test_plan_gate_keeps_a_pilots_corpus_key_at_25_pairs_without_its_differing_share(tmp_path) -> None:  # noqa: ANN001
    # results.json does not record how many pairs answer both sides alike: the discreteness cannot be modelled
    wide = runner.invoke(app, ["plan", "--gate", "--results", _pilot(tmp_path, {}, margin=0.2)])
    assert wide.exit_code == 0, wide.output
    assert _gate_pairs(wide.output)["distinct_1"] == CORPUS_LEAST_PAIRS_UNMODELLED
    assert "above 0.80 at any size from 25 pairs (the fewest planned)" in " ".join(wide.output.split())


def test_the_readme_points_from_its_gate_example_to_plan_gate_with_plans_own_count() -> None:
    from pathlib import Path

    readme = " ".join((Path(__file__).parents[1] / "README.md").read_text().split())
    text = " ".join(runner.invoke(app, ["plan", "--gate"]).output.split())
    identical = re.search(r"identical answers on both sides pass at (\d+) units", text)
    held = re.search(r"holds (\d+) dialogues in 500 pairs and (\d+) in 600", text)
    assert identical and held and int(held[1]) < int(identical[1]) <= int(held[2])  # 500 pairs are too few, 600 enough
    after = readme[readme.index("--fail-on-bias --junit fairtalk-junit.xml") :]
    line = after[: after.index("Leave `--model` out")]
    assert "`--fail-unless-equivalent`" in line and "`fairtalk plan --gate` says how many" in line
    assert f"needs {identical[1]} dialogues, about 600 of the built-in gender pairs" in line


# --- a pilot's own differing share (issue 39): results.json counts the pairs whose two answers differ -----------------


def _audit(tmp_path, body: str, pairs: int = 60) -> dict:  # noqa: ANN001
    """Audit a python bot (``reply`` returns ``body``) on the built-in gender axis; its results.json and the run's folder."""
    bot = tmp_path / "bot.py"
    bot.write_text(f"import zlib\ndef reply(text):\n    return {body}\n")
    out = tmp_path / "run"
    result = runner.invoke(
        app, ["audit", "--model", f"python:{bot}:reply", "--axis", "gender", "--pairs", str(pairs), "--quiet", "-o", str(out)]
    )
    assert result.exit_code == 0, result.output
    return json.loads((out / "gender" / "results.json").read_text())


def _differing_in_responses(path) -> int:  # noqa: ANN001
    """The pairs of a run's responses.jsonl whose two answers differ, counted from the file itself."""
    sides: dict[str, dict[str, str]] = {}
    for line in path.read_text().splitlines():
        record = json.loads(line)
        sides.setdefault(record["pair_id"], {})[record["side"]] = record["response"]
    return sum(pair["a"] != pair["b"] for pair in sides.values())


def test_an_audit_records_the_pairs_whose_two_answers_differ(tmp_path) -> None:  # noqa: ANN001
    data = _audit(tmp_path, "['that sounds nice', 'i like that a lot', 'tell me more'][zlib.crc32(text.encode()) % 3]")
    counted = _differing_in_responses(tmp_path / "run" / "gender" / "responses.jsonl")
    assert 0 < counted < data["n_pairs"] == 60
    assert data["corpus_differing_pairs"] == counted
    result = fairtalk.AuditResult.from_dict({k: v for k, v in data.items() if k != "schema_version"})
    assert result.corpus_differing_pairs == counted and result.to_dict()["corpus_differing_pairs"] == counted


def _pilot_of_the_bare_audit(tmp_path, differing: int | None) -> str:  # noqa: ANN001
    """A pilot with the bare audit's corpus spreads, margins, dialogues and 1,470 pairs, ``differing`` of them differing."""
    from fairtalk.cli._plan import BUILTIN_SPREADS

    measures = {}
    for key in ("distinct_1", "distinct_2", "diversity"):
        _, sd, margin, _ = BUILTIN_SPREADS[key]
        half = 1.959964 * sd / math.sqrt(1470)
        measures[key] = {"kind": "corpus", "ci95": [-half, half], "equivalence_margin": margin, "primary": True}
    data = {
        "n_pairs": 1470,
        "n_clusters": 206,
        "alpha": 0.05,
        "measures": measures,
        "corpus_dialogue_sizes": [list(s) for s in BUILTIN_GENDER_DIALOGUE_SIZES],
    }
    if differing is not None:
        data["corpus_differing_pairs"] = differing
    path = tmp_path / f"pilot-{differing}.json"
    path.write_text(json.dumps(data))
    return str(path)


def test_plan_gate_plans_a_pilots_corpus_keys_with_its_own_differing_share(tmp_path) -> None:  # noqa: ANN001
    builtin = _gate_pairs(runner.invoke(app, ["plan", "--gate"]).output)
    # the bare audit's spreads, dialogues and differing pairs in a pilot's results.json: the built-in rows, to the pair
    same = runner.invoke(app, ["plan", "--gate", "--results", _pilot_of_the_bare_audit(tmp_path, 835)])
    assert same.exit_code == 0, same.output
    pairs = _gate_pairs(same.output)
    assert {key: pairs[key] for key in ("distinct_1", "distinct_2", "diversity")} == {
        key: builtin[key] for key in ("distinct_1", "distinct_2", "diversity")
    }
    assert (pairs["distinct_2"], pairs["diversity"]) == (13, 15)
    assert "(57% of the pilot's pairs do; the power counts its chance, 0.81)" in " ".join(same.output.split())
    # fewer differing pairs: a sample holds the 6 differing dialogues the test needs only on more pairs
    few = _gate_pairs(runner.invoke(app, ["plan", "--gate", "--results", _pilot_of_the_bare_audit(tmp_path, 150)]).output)
    expected = pairs_for_corpus_equivalence(
        0.05 / (0.2953 / math.sqrt(1470)),
        1470,
        exponent=0.05,
        differing=150 / 1470,
        sizes=BUILTIN_GENDER_DIALOGUE_SIZES,
    )
    assert few["distinct_2"] == expected > 25


def test_plan_gate_says_a_constant_answer_pilot_passes_its_corpus_keys_as_identical_answers(tmp_path) -> None:  # noqa: ANN001
    data = _audit(tmp_path, "'that sounds nice'")
    assert data["corpus_differing_pairs"] == 0 and data["measures"]["distinct_2"]["ci95"] == [None, None]
    planned = runner.invoke(app, ["plan", "--gate", "--results", str(tmp_path / "run" / "gender" / "results.json")])
    assert planned.exit_code == 0, planned.output
    text = " ".join(planned.output.split())
    identical = int(re.search(r"identical answers on both sides pass at (\d+) units", text)[1])  # type: ignore[index]
    assert identical == 149
    for key in ("distinct_1", "distinct_2", "diversity"):  # as the audit's own note says: 149 dialogues all identical
        assert re.search(rf"{key} \(corpus\): (149 dialogues \(about [\d,]+ pairs|149 pairs)[^)]*\)?,? all answered alike", text)
    assert "no margin" not in text.split("career_words")[0]
    assert "equivalence needs 149 dialogues all identical" in " ".join(data["measures"]["distinct_2"]["notes"])


def test_plan_gate_plans_a_pilot_without_the_count_from_25_pairs_and_says_why(tmp_path) -> None:  # noqa: ANN001
    without = runner.invoke(app, ["plan", "--gate", "--results", _pilot_of_the_bare_audit(tmp_path, None)])
    assert without.exit_code == 0, without.output
    pairs = _gate_pairs(without.output)
    assert (pairs["distinct_2"], pairs["diversity"]) == (CORPUS_LEAST_PAIRS_UNMODELLED, CORPUS_LEAST_PAIRS_UNMODELLED)
    text = " ".join(without.output.split())
    assert "from 25 pairs at the fewest, since the pilot's results.json does not count its pairs whose two answers" in text
    for hostile in ("x", -1, 5000, True, 2.5):  # not a count of its pairs: planned as without it, not a crash
        path = _pilot_of_the_bare_audit(tmp_path, 835)
        data = json.loads(Path(path).read_text()) | {"corpus_differing_pairs": hostile}
        Path(path).write_text(json.dumps(data))
        result = runner.invoke(app, ["plan", "--gate", "--results", path])
        assert result.exit_code == 0 and "internal error" not in result.output, result.output
        assert _gate_pairs(result.output)["distinct_2"] == CORPUS_LEAST_PAIRS_UNMODELLED


def test_plan_gate_says_why_a_pilot_with_too_few_differing_pairs_gives_no_spread(tmp_path) -> None:  # noqa: ANN001
    path = tmp_path / "few.json"
    row = {"kind": "corpus", "ci95": [None, None], "equivalence_margin": 0.05, "primary": True}
    path.write_text(json.dumps({"n_pairs": 300, "measures": {"distinct_2": row}, "corpus_differing_pairs": 4}))
    result = runner.invoke(app, ["plan", "--gate", "--results", str(path)])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "distinct_2 (corpus): only 4 of the pilot's 300 pairs answer the two sides differently" in text
    assert "not tested there" not in text


# --- a pilot's own scaling (issue 39): fitted on its answers where they lie beside its results.json -----------------
#
# The exponents of CORPUS_SCALING were fitted on the bare gender audit's answers. On a 300-pair race pilot's answers
# distinct_1's ratio grew as n^0.31, not 0.24: plan gave 51 pairs, where a fair model passed 0.640; fitted on the
# pilot's answers it gives 75, where a fair model passed 0.800 (bench/README.md, "A pilot's own scaling").

#: A bot whose answers draw 8 of 300 words by a hash of the context: its distinct-1 saturates as the corpus grows.
_HASHED_WORDS = "' '.join('w%d' % ((zlib.crc32(text.encode()) * (i + 7)) % 997 % 300) for i in range(8))"
_FITTED = re.compile(r"distinct_1 \(corpus\): ([\d,]+) pairs .*?growing as n\^(-?[\d.]+) fitted on the pilot's answers")


@pytest.fixture(scope="module")
def hashed_pilot(tmp_path_factory) -> Path:  # noqa: ANN001
    """An audit folder of the hashed-words bot on 120 built-in gender pairs: its results.json and responses.jsonl."""
    folder = tmp_path_factory.mktemp("hashed")
    _audit(folder, _HASHED_WORDS, pairs=120)
    return folder / "run" / "gender"


def _corpus_plan(results: Path) -> tuple[int, str]:
    planned = runner.invoke(app, ["plan", "--gate", "--results", str(results)])
    assert planned.exit_code == 0 and "Traceback" not in planned.output, planned.output
    return _gate_pairs(planned.output)["distinct_1"], " ".join(planned.output.split())


def _bare_scaling_pairs(results: Path) -> int:
    """distinct_1's pairs planned from a pilot's results.json at the bare audit's exponent, 0.24 (plan on main)."""
    data = json.loads(results.read_text())
    low, high = data["measures"]["distinct_1"]["ci95"]
    n, margin = data["n_pairs"], data["measures"]["distinct_1"]["equivalence_margin"]
    sizes = tuple(tuple(s) for s in data["corpus_dialogue_sizes"])
    ratio = margin / ((high - low) / (2 * 1.959964))
    return pairs_for_corpus_equivalence(
        ratio,
        n,
        exponent=0.24,
        differing=data["corpus_differing_pairs"] / n,
        sizes=sizes,  # type: ignore[arg-type]
    )


def test_plan_gate_fits_a_pilots_corpus_scaling_on_the_answers_beside_it(hashed_pilot: Path, tmp_path: Path) -> None:
    n, text = _corpus_plan(hashed_pilot / "results.json")
    fitted = _FITTED.search(text)
    assert fitted is not None, text
    exponent = float(fitted[2])
    assert int(fitted[1].replace(",", "")) == n
    assert abs(exponent - 0.24) > 0.1  # these answers' ratio grows otherwise than the bare audit's
    assert "its samples of" in text.split("distinct_1 (corpus)")[1].split("distinct_2")[0]
    said = f"corpus keys: their scaling fitted on the pilot's answers ({hashed_pilot / 'responses.jsonl'}: 48, 48, 48, 48, 48"
    assert said + " nested samples of 10, 16, 27, 44, 73 pairs, 200 permutations each;" in text
    bare = _bare_scaling_pairs(hashed_pilot / "results.json")
    assert n != bare
    # the same results.json without its answers beside it: today's exponents, and plan says why
    alone = tmp_path / "results.json"
    alone.write_text((hashed_pilot / "results.json").read_text())
    n_alone, text_alone = _corpus_plan(alone)
    assert n_alone == bare
    assert "growing as n^0.24 on the bare audit's answers" in text_alone and "fitted" not in text_alone
    assert f"the pilot's answers, {tmp_path / 'responses.jsonl'}, are not beside its results.json" in text_alone


@pytest.mark.parametrize(
    ("damage", "said"),
    [
        (lambda lines: ["{not json", *lines[1:]], "cannot read the pilot's answers"),
        (lambda lines: lines[:-2], "holds 119 complete pairs, its results.json 120, so they are not the answers"),
    ],
    ids=["unreadable", "not-its-answers"],
)
def test_plan_gate_keeps_the_bare_scaling_where_the_pilots_answers_cannot_be_used(
    hashed_pilot: Path,
    tmp_path: Path,
    damage,  # noqa: ANN001
    said: str,
) -> None:
    (tmp_path / "results.json").write_text((hashed_pilot / "results.json").read_text())
    lines = (hashed_pilot / "responses.jsonl").read_text().splitlines()
    lines = sorted(lines, key=lambda line: (json.loads(line)["pair_id"], json.loads(line)["side"]))
    (tmp_path / "responses.jsonl").write_text("\n".join(damage(lines)) + "\n")
    n, text = _corpus_plan(tmp_path / "results.json")
    assert n == _bare_scaling_pairs(tmp_path / "results.json")
    assert "corpus keys: their scaling is the bare audit's: " in text and said in text
    if "cannot read" in said:  # the reader's own message, with the file and line
        assert f"({tmp_path / 'responses.jsonl'}:1: malformed JSON" in text
    assert "growing as n^0.24 on the bare audit's answers" in text


def test_the_exponent_is_the_curves_slope_between_the_planned_size_and_the_pilots() -> None:
    from fairtalk.cli._plan import _curve_exponent

    # the ratio grows as n^0.1 up to 40 pairs, then as n^0.4: one power law over all of it is neither
    def ratio(n: int) -> float:
        return n**0.1 if n <= 40 else 40**0.1 * (n / 40) ** 0.4

    curve = tuple((n, ratio(n), n**0.5, 0.1, 0.1) for n in (10, 20, 40, 80, 160, 320))  # 1 / SE as sqrt(n)
    whole, low, high = _curve_exponent(curve, relative=True)
    assert (low, high) == (10, 320) and 0.1 < whole < 0.4
    local, low, high = _curve_exponent(curve, relative=True, planned=100)  # from 80, the largest size at or below 100
    assert (low, high) == (80, 320) and local == pytest.approx(0.4)
    near, low, _ = _curve_exponent(curve, relative=True, planned=300)  # the three largest at least
    assert low == 80 and near == pytest.approx(0.4)
    fixed, _, _ = _curve_exponent(curve, relative=False)  # a fixed margin: the slope of one over the SE
    assert fixed == pytest.approx(0.5)


def test_a_ratio_that_varies_from_sample_to_sample_passes_less_often_and_needs_more_pairs() -> None:
    from scipy.stats import lognorm

    # near power 0.8 the power is concave in the ratio: averaged over a log-normal ratio it is lower
    varied = power_corpus_equivalence(TARGET, spread=0.2)
    draws = lognorm(0.2, scale=TARGET).rvs(200_000, random_state=np.random.default_rng(0))
    assert varied == pytest.approx(np.mean(np.maximum(0, 2 * norm.cdf(draws - norm.ppf(0.95)) - 1)), abs=0.003)
    assert varied < power_corpus_equivalence(TARGET) == pytest.approx(0.8)
    assert power_corpus_equivalence(TARGET, spread=0.0) == power_corpus_equivalence(TARGET)
    # so plan asks for more pairs: the fewest whose averaged power reaches 0.8
    plain = pairs_for_corpus_equivalence(TARGET / 2, 1000, exponent=0.25)
    spread = pairs_for_corpus_equivalence(TARGET / 2, 1000, exponent=0.25, spread=0.2)
    assert spread > plain
    assert power_corpus_at_size(spread, TARGET / 2, 1000, exponent=0.25, spread=0.2) >= 0.8
    assert power_corpus_at_size(spread - 1, TARGET / 2, 1000, exponent=0.25, spread=0.2) < 0.8
