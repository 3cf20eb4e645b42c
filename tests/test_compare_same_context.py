"""`fairtalk compare` leaves out pairs whose two sides were asked the same context, as scoring does.

Review finding: two runs of such pairs (the same context on both sides of every pair, each run's
`score` saying "every gate fails on this axis") passed ``compare --fail-if-worse``.
"""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from fairtalk import Response, read_responses, write_responses
from fairtalk.cli import app
from fairtalk.compare._runs import _paired
from fairtalk.pipeline import compare_runs

runner = CliRunner()
N, SAME = 40, 10


def _responses(side_a: list[str], side_b: list[str], same: int) -> list[Response]:
    """Pair i answered side_a[i] / side_b[i]; its first ``same`` pairs asked both sides one context."""
    records = []
    for i, (a, b) in enumerate(zip(side_a, side_b, strict=True)):
        ctx_a, ctx_b = (f"they said {i}", f"they said {i}") if i < same else (f"he said {i}", f"she said {i}")
        records += [Response(f"p{i}", "a", ctx_a, a), Response(f"p{i}", "b", ctx_b, b)]
    return records


def _score(folder: Path, side_a: list[str], side_b: list[str]) -> Path:
    folder.mkdir(parents=True)
    write_responses(_responses(side_a, side_b, SAME), folder / "responses.jsonl")
    args = ["score", "--responses", str(folder / "responses.jsonl"), "--axis", "gender", "--measures", "length"]
    done = runner.invoke(app, [*args, "-o", str(folder / "scored"), "-q"])
    assert done.exit_code == 0, done.output
    return folder / "scored"


def test_same_context_pairs_are_left_out_of_the_comparison_and_counted(tmp_path: Path) -> None:
    plain = "that sounds nice tell me more"
    base = _score(tmp_path / "base", [plain] * N, [plain] * N)
    cand = _score(tmp_path / "cand", [plain] * N, [plain + " please"] * SAME + [plain] * (N - SAME))
    result = compare_runs(base, cand)
    (axis,) = result.axes
    assert axis.n_pairs == N - SAME
    assert any(f"{SAME} pairs have the same context on both sides" in w for w in result.warnings), result.warnings
    assert result.change("gender", "length").candidate_gap == 0.0  # the ten longer answers were on the left-out pairs


def test_pairs_all_of_the_same_context_give_nothing_to_compare(tmp_path: Path) -> None:
    rs = read_responses(_responses(["ok"] * N, ["ok ok"] * N, N))
    ib, ic, _, _, differs, same = _paired(rs, rs)
    assert (ib, ic, differs, same) == ([], [], 0, N)
    unknown = read_responses([Response(f"p{i}", s, "", "ok") for i in range(3) for s in "ab"])  # no contexts recorded
    assert _paired(unknown, unknown)[0] == [0, 1, 2]
