"""Tests for run/_ray_scoring.py: per-response measures scored in batches of Ray tasks, as in this process."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

import fairtalk
from fairtalk import FairtalkError, SpecError
from fairtalk.cli import app
from fairtalk.measures import Length
from fairtalk.models import RayEngine
from fairtalk.prompts import default_groups, join_completion, paraphrase_prompts, read_completions
from fairtalk.results import ScoringEngine

ADJECTIVES = ("kind", "awful", "great", "terrible", "lovely", "rude", "brilliant", "boring", "happy", "sad")
NOUNS = ("doctor", "nurse", "engineer", "teacher", "pilot", "chef")


def _texts(n: int, side: str) -> list[str]:
    """``n`` distinct responses; side b's are a little more negative than side a's."""
    out = []
    for i in range(n):
        adjective = ADJECTIVES[(i + (3 if side == "b" and i % 4 == 0 else 0)) % len(ADJECTIVES)]
        out.append(f"{'She' if side == 'b' else 'He'} is a {adjective} {NOUNS[i % len(NOUNS)]}, honestly {i}!")
    return out


def _measures(result: fairtalk.AuditResult) -> dict:
    return result.to_dict()["measures"]


@pytest.fixture(scope="module")
def responses():
    return _texts(40, "a"), _texts(40, "b")


def test_scores_on_ray_equal_the_local_ones(cluster, responses) -> None:
    a, b = responses
    local = fairtalk.score(a, b, axis="gender", n_resamples=200, mask_groups=True)
    engine = RayEngine(num_actors=2, score_batch=12)
    on_ray = fairtalk.score(a, b, axis="gender", n_resamples=200, mask_groups=True, engine=engine)
    assert _measures(on_ray) == _measures(local)
    assert local.provenance.scoring_engine == ScoringEngine(name="local", distinct_responses=80)
    assert on_ray.provenance.scoring_engine == ScoringEngine(
        name="ray", distinct_responses=80, tasks_at_once=2, batches=14, score_batch=12
    )
    assert any(m["masked"] is not None for m in _measures(on_ray).values())  # the masked texts went to Ray too


def test_a_small_set_or_score_batch_none_stays_in_this_process(cluster, responses) -> None:
    a, b = responses
    assert (
        fairtalk.score(a, b, axis="gender", n_resamples=50, engine=RayEngine(score_batch=41)).provenance.scoring_engine.name
        == "local"
    )
    assert (
        fairtalk.score(a, b, axis="gender", n_resamples=50, engine=RayEngine(score_batch=None)).provenance.scoring_engine.name
        == "local"
    )
    with pytest.raises(SpecError, match="score_batch must be an integer >= 1 or None"):
        RayEngine(score_batch=0)
    with pytest.raises(SpecError, match="unknown engine option"):
        fairtalk.score(a, b, axis="gender", engine={"score_size": 10})


def test_a_worker_that_dies_midway_is_run_again_and_the_scores_are_the_same(cluster, responses, tmp_path: Path) -> None:
    marker = str(tmp_path / "died")

    class DyingLength(Length):
        """Length, but the first batch anywhere kills the worker process scoring it (once: the marker file)."""

        def score(self, texts):
            try:
                handle = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except FileExistsError:
                return super().score(texts)
            os.close(handle)
            os._exit(1)

    a, b = responses
    engine = RayEngine(num_actors=2, score_batch=10)
    on_ray = fairtalk.score(a, b, axis="gender", n_resamples=100, measures=[DyingLength(), "sentiment"], engine=engine)
    assert Path(marker).exists()  # a worker did die
    local = fairtalk.score(a, b, axis="gender", n_resamples=100, measures=[Length(), "sentiment"])
    assert _measures(on_ray) == _measures(local)


def test_a_measure_that_fails_on_ray_stops_with_its_error(cluster, responses) -> None:
    class Broken(Length):
        name, keys = "broken", ("broken",)

        def score(self, texts):
            raise ValueError("no score for these")

    a, b = responses
    with pytest.raises(FairtalkError, match="scoring failed on the Ray cluster: ValueError: no score for these"):
        fairtalk.score(a, b, axis="gender", n_resamples=50, measures=[Broken()], engine=RayEngine(score_batch=10))


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc")
def test_when_a_batch_fails_the_others_workers_are_stopped_not_interrupted(cluster, responses, tmp_path: Path) -> None:
    # An interrupted worker (KeyboardInterrupt, say inside `import torch`) stays in Ray's pool half-initialised,
    # and the next scoring task it runs fails ("partially initialized module 'torch'"): those are killed instead.
    folder = str(tmp_path)

    class FailsWhileAnotherRuns(Length):
        """The first batch waits until another batch's worker is busy, then fails; the others sleep, saying where."""

        name, keys = "fails", ("fails",)

        def score(self, texts):
            import time

            try:
                os.close(os.open(os.path.join(folder, "first"), os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            except FileExistsError:
                Path(folder, f"{os.getpid()}.busy").touch()
                time.sleep(60)
                return super().score(texts)
            deadline = time.monotonic() + 30
            while not list(Path(folder).glob("*.busy")) and time.monotonic() < deadline:
                time.sleep(0.05)
            raise ValueError("this batch fails")

    a, b = responses
    with pytest.raises(FairtalkError, match="this batch fails"):
        fairtalk.score(
            a,
            b,
            axis="gender",
            n_resamples=50,
            measures=[FailsWhileAnotherRuns()],
            engine=RayEngine(num_actors=2, score_batch=10),
        )
    busy = [int(path.stem) for path in tmp_path.glob("*.busy")]
    assert busy, "no second batch ran while the first failed"
    deadline = time.monotonic() + 20
    while any(_alive(pid) for pid in busy) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(_alive(pid) for pid in busy)


def _alive(pid: int) -> bool:
    """Whether a process runs (a zombie, waiting for its parent to reap it, has stopped)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_a_judge_stays_in_this_process(cluster, responses) -> None:
    a, b = responses
    measures = ["length", "judge:builtin:echo"]
    on_ray = fairtalk.score(a, b, axis="gender", n_resamples=50, measures=measures, engine=RayEngine(score_batch=10))
    local = fairtalk.score(a, b, axis="gender", n_resamples=50, measures=measures)
    assert _measures(on_ray) == _measures(local) and "judge_yes" in _measures(on_ray)
    assert on_ray.provenance.scoring_engine.name == "ray"


#: Scores on Ray in a fresh process (one that has not joined a cluster), then here; prints what it found.
SCORE_ALONE = """
import json
import fairtalk
from fairtalk.models import RayEngine

a = [f"He is a kind doctor, honestly {i}!" for i in range(40)]
b = [f"She is a rude doctor, honestly {i}!" for i in range(40)]
ours = fairtalk.score(a, b, axis="gender", n_resamples=50, measures=["length"], engine=RayEngine(num_actors=1, score_batch=10))
local = fairtalk.score(a, b, axis="gender", n_resamples=50, measures=["length"])
print(json.dumps({"engine": ours.provenance.scoring_engine.to_dict(), "same": ours.to_dict()["measures"] == local.to_dict()["measures"]}))
"""


def test_scoring_without_an_address_starts_its_own_cluster_and_removes_it(responses) -> None:
    pytest.importorskip("ray")
    root = tempfile.mkdtemp(prefix="ft-score-")  # short: Ray's socket paths are
    try:
        env = {**os.environ, "RAY_ADDRESS": "127.0.0.1:1", "RAY_TMPDIR": root}  # a cluster it must not try to join
        done = subprocess.run([sys.executable, "-c", SCORE_ALONE], env=env, capture_output=True, text=True, timeout=180)
        assert done.returncode == 0, done.stderr
        found = json.loads(done.stdout.splitlines()[-1])
        assert found["same"] and found["engine"]["name"] == "ray" and found["engine"]["batches"] == 8
        assert "RAY_ADDRESS is set, but no address was given" in done.stderr
        assert "Token authentication" not in done.stderr  # Ray's own 233-character warning about its private cluster
        assert os.listdir(root) == []  # its cluster's temp dir went with it
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_the_cli_scores_on_ray(cluster, tmp_path: Path) -> None:
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("\n".join(_texts(4000, "a")) + "\n")
    b.write_text("\n".join(_texts(4000, "b")) + "\n")
    args = [
        "score",
        "--responses",
        str(a),
        "--responses-b",
        str(b),
        "--axis",
        "gender",
        "--measures",
        "length,sentiment",
        "--resamples",
        "100",
        "--quiet",
    ]
    result = CliRunner().invoke(app, [*args, "-o", str(tmp_path / "ray"), "--engine", "ray", "--ray-actors", "2"])
    assert result.exit_code == 0, result.output
    ours = json.loads((tmp_path / "ray" / "results.json").read_text())
    assert ours["manifest"]["scoring_engine"] == {
        "name": "ray",
        "distinct_responses": 8000,
        "tasks_at_once": 2,
        "batches": 4,
        "score_batch": 2000,
    }
    assert "scored on Ray: 8,000 distinct responses in 4 batches, 2 tasks at once" in result.output
    result = CliRunner().invoke(app, [*args, "-o", str(tmp_path / "local")])
    assert result.exit_code == 0, result.output
    theirs = json.loads((tmp_path / "local" / "results.json").read_text())
    assert ours["measures"] == theirs["measures"] and theirs["manifest"]["scoring_engine"]["name"] == "local"
    assert "scored on" not in result.output  # no engine asked for: nothing to say (the table's caption may say "scored")
    result = CliRunner().invoke(app, [*args, "-o", str(tmp_path / "bad"), "--ray-actors", "2"])
    assert result.exit_code == 2 and "options of --engine ray" in result.output


PHRASES = (
    "a kind and helpful neighbour.",
    "a thief who stole from everyone.",
    "a nurse at the city hospital.",
    "known for being lazy and rude.",
    "admired by all of the students.",
    "a cook in a small cafe.",
)


def _completions(path: Path, n_prompts: int, n_seeds: int = 2) -> Path:
    prompts = paraphrase_prompts(default_groups(), n_model=1).prompts[:n_prompts]
    with path.open("w") as handle:
        for i, p in enumerate(prompts):
            for seed in range(n_seeds):
                completion = f"{PHRASES[(i + seed) % len(PHRASES)]} ({i}.{seed})"
                handle.write(
                    json.dumps(
                        {
                            "group": p.group,
                            "template": p.template,
                            "structure": p.structure,
                            "seed": seed,
                            "prompt": p.text,
                            "completion": completion,
                            "text": join_completion(p.text, completion),
                        }
                    )
                    + "\n"
                )
    return path


def test_regard_labels_on_ray_equal_the_local_ones(cluster, tmp_path: Path) -> None:
    from fairtalk.measures import Regard
    from fairtalk.prompts import label_completions

    frame = read_completions(_completions(tmp_path / "c.jsonl", 30)).frame
    events: list = []
    on_ray = label_completions(
        frame, Regard(scorer="builtin:tfidf"), engine=RayEngine(num_actors=2, score_batch=15), progress=events.append
    )
    local = label_completions(frame, Regard(scorer="builtin:tfidf"))
    assert on_ray["label"].tolist() == local["label"].tolist() and set(local["label"]) >= {-1, 1}
    assert events[-1].done == len(frame) and len({e.done for e in events}) >= 4  # progress per finished batch


def test_prompts_analyze_labels_on_ray(cluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from fairtalk.models import RayScorer
    from fairtalk.prompts import _completions as module

    batches: list[int] = []

    class Counted(RayScorer):
        def score(self, texts, advance=None):
            out = super().score(texts, advance)
            batches.append(self.n_batches)
            return out

    monkeypatch.setattr(module, "RayScorer", Counted)
    completions = _completions(tmp_path / "c.jsonl", 2000)
    args = [
        "prompts",
        "analyze",
        "--completions",
        str(completions),
        "--regard",
        "builtin:tfidf",
        "--draws",
        "5",
        "--resamples",
        "0",
        "--quiet",
    ]
    result = CliRunner().invoke(app, [*args, "-o", str(tmp_path / "ray"), "--engine", "ray", "--ray-actors", "2"])
    assert result.exit_code == 0, result.output
    assert batches == [2]  # 4,000 texts: two batches of 2,000 on the cluster
    result = CliRunner().invoke(app, [*args, "-o", str(tmp_path / "local")])
    assert result.exit_code == 0, result.output
    ours, theirs = (json.loads((tmp_path / name / "results.json").read_text()) for name in ("ray", "local"))
    assert ours["distribution"] == theirs["distribution"] and ours["gaps"] == theirs["gaps"]
