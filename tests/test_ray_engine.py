"""Tests for models/ray/_engine.py: generation on a local Ray cluster (one for the module)."""

from __future__ import annotations

import importlib.util
import json
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

import fairtalk
from fairtalk import AuditConfig, FairtalkError, Pair, SpecError
from fairtalk.cli import app
from fairtalk.errors import ResponderAborted
from fairtalk.models import RayEngine, resolve_engine
from fairtalk.progress import ProgressEvent
from fairtalk.prompts import default_groups, paraphrase_prompts, write_prompts

HAVE_RAY = importlib.util.find_spec("ray") is not None
needs_ray = pytest.mark.skipif(not HAVE_RAY, reason="ray is not installed (pip install 'fairtalk[ray]')")
runner = CliRunner()

SUBJECTS = ("he", "she", "my father", "my mother", "the boy", "the girl")
PREDICATES = (
    "is coming over tonight",
    "likes to play football",
    "made dinner for us",
    "works at the bank",
    "told me a funny story",
    "is learning to drive",
    "lost the keys again",
    "bought a new bike",
)
SWAP = {
    "he": "she",
    "she": "he",
    "my father": "my mother",
    "my mother": "my father",
    "the boy": "the girl",
    "the girl": "the boy",
}

#: A batched python: model; its first batch anywhere kills the process running it (once: the marker file).
DYING_MODEL = """
import os
import time

MARKER = {marker!r}


def reply(contexts):
    try:
        handle = os.open(MARKER, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        pass
    else:
        os.close(handle)
        os._exit(1)
    time.sleep({pause})
    return [context.upper() for context in contexts]


reply.batched = True
"""


def _pairs(n_rounds: int = 1) -> list[Pair]:
    pairs = []
    for k in range(n_rounds):
        for s in SUBJECTS:
            for p in PREDICATES:
                a = f"{s} {p} {k}" if k else f"{s} {p}"
                pairs.append(Pair(f"g{len(pairs)}", "gender", a, f"{SWAP[s]} {a[len(s) + 1 :]}", "a"))
    return pairs


def _rows(store: Path) -> list[tuple[bytes, int, int]]:
    """(context hash, seed, how many rows) per key: exactly-once means every count is 1."""
    with sqlite3.connect(store) as db:
        return db.execute("SELECT context_hash, seed, COUNT(*) FROM responses GROUP BY run_id, context_hash, seed").fetchall()


# -- options, without Ray --------------------------------------------------------------------------


def test_engine_names_tables_and_bad_values() -> None:
    assert resolve_engine("local") is None and resolve_engine(None) is None
    assert resolve_engine("ray") == RayEngine()
    assert resolve_engine({"name": "ray", "num-actors": 3}) == RayEngine(num_actors=3)
    with pytest.raises(SpecError, match=r"unknown engine 'rey'; did you mean 'ray'"):
        resolve_engine("rey")
    with pytest.raises(SpecError, match=r"unknown engine option 'actors'"):
        resolve_engine({"actors": 3})
    for bad in (
        {"num_actors": 0},
        {"max_restarts": -1},
        {"num_cpus": 0},
        {"address": ""},
        {"num_gpus": -1},
        {"connect_timeout": 0},
        {"connect_timeout": float("nan")},
        {"connect_timeout": True},
    ):
        with pytest.raises(SpecError):
            RayEngine(**bad)  # type: ignore[arg-type]


def test_reaching_a_cluster_waits_30_s_by_default_and_is_an_option() -> None:
    assert RayEngine().connect_timeout == 30.0
    assert resolve_engine({"connect-timeout": 3}) == RayEngine(connect_timeout=3)
    with pytest.raises(SpecError, match=r"connect_timeout must be a number > 0"):
        RayEngine(connect_timeout=-1)


def test_the_config_records_the_engine_and_reads_it_back() -> None:
    config = AuditConfig.from_mapping({"engine": {"address": "ray://user:secret@head:10001", "num_actors": 4}})
    recorded = config.to_dict()["engine"]
    assert recorded["name"] == "ray" and recorded["num_actors"] == 4 and "secret" not in recorded["address"]
    assert AuditConfig().to_dict()["engine"] == "local"
    assert AuditConfig.from_mapping({"engine": AuditConfig(engine="ray").to_dict()["engine"]}).engine == RayEngine()


def test_the_command_line_engine_options_combine_with_a_config_file_s() -> None:
    from fairtalk.cli._respond import engine_option

    assert engine_option(None, None, None) is None
    assert engine_option("ray", "auto", 3) == RayEngine(address="auto", num_actors=3)
    assert engine_option(None, None, 4, base=RayEngine(address="head:6379")) == RayEngine(address="head:6379", num_actors=4)
    assert engine_option("local", None, None, base=RayEngine()) is None
    with pytest.raises(SpecError, match="options of --engine ray"):
        engine_option(None, "auto", None)


def _one_pair_jsonl() -> str:
    """One pair as pairs JSONL (an empty input is now its own error, before the engine is looked at)."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = f"{folder}/pairs.jsonl"
        fairtalk.write_pairs(_pairs()[:1], path)
        with open(path, encoding="utf-8") as handle:
            return handle.read()


def test_without_ray_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    with pytest.raises(FairtalkError, match=r"--engine ray needs Ray: pip install 'fairtalk\[ray\]'"):
        fairtalk.respond(_pairs()[:2], model="builtin:echo", engine="ray")
    result = runner.invoke(
        app, ["respond", "--pairs", "-", "--model", "builtin:echo", "--engine", "ray"], input=_one_pair_jsonl()
    )
    assert result.exit_code == 2 and "pip install 'fairtalk[ray]'" in result.output


def test_models_ray_does_not_run_are_refused_before_any_work() -> None:
    with pytest.raises(SpecError, match=r"engine ray runs .* not openai: .*max_concurrency"):
        RayEngine().responder("openai:http://127.0.0.1:9/v1#m")
    with pytest.raises(SpecError, match=r"not replay:"):
        RayEngine().responder("replay:answers.jsonl")
    with pytest.raises(SpecError, match=r"give the model as a spec string"):
        fairtalk.respond(_pairs()[:2], model=fairtalk.load_responder("builtin:echo"), engine="ray")
    result = runner.invoke(
        app, ["respond", "--pairs", "-", "--model", "builtin:echo", "--ray-actors", "2"], input=_one_pair_jsonl()
    )
    assert result.exit_code == 2 and "options of --engine ray" in result.output


# -- on a local cluster ------------------------------------------------------------------------------


@needs_ray
def test_echo_on_ray_equals_the_local_run_and_stores_each_answer_once(cluster, tmp_path: Path) -> None:
    pairs = _pairs(3)
    local = fairtalk.respond(pairs, model="builtin:echo", store=tmp_path / "local.sqlite")
    store = tmp_path / "ray.sqlite"
    on_ray = fairtalk.respond(pairs, model="builtin:echo", store=store, batch_size=16, engine=RayEngine(num_actors=2))
    assert list(on_ray.responses) == list(local.responses)
    assert on_ray.summary.model == local.summary.model  # the store's key: the same fingerprint
    assert on_ray.summary.n_generated == 2 * len(pairs) and on_ray.summary.n_errors == 0
    assert len(_rows(store)) == 2 * len(pairs) and {n for *_, n in _rows(store)} == {1}
    again = fairtalk.respond(pairs, model="builtin:echo", store=store)  # in this process: every answer reused
    assert (again.summary.n_cached, again.summary.n_generated) == (2 * len(pairs), 0)


@needs_ray
def test_an_interrupted_ray_run_resumes_from_the_store(cluster, tmp_path: Path) -> None:
    pairs, store = _pairs(4), tmp_path / "store.sqlite"
    model = tmp_path / "slow.py"  # 50 ms a batch of 8: the run spans several commits, so it is stopped midway
    (tmp_path / "died").touch()  # nobody dies here
    model.write_text(DYING_MODEL.format(marker=str(tmp_path / "died"), pause=0.05), encoding="utf-8")
    spec = f"python:{model}:reply"
    seen = []

    def stop_midway(event: ProgressEvent) -> None:
        seen.append(event.done)
        if event.done >= 60:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        fairtalk.respond(pairs, model=spec, store=store, batch_size=8, engine="ray", progress=stop_midway)
    n_kept = len(_rows(store))
    assert 60 <= seen[-1] <= n_kept < 2 * len(pairs)  # what was counted as done before the interruption was committed
    resumed = fairtalk.respond(pairs, model=spec, store=store, batch_size=8, engine="ray")
    assert (resumed.summary.n_cached, resumed.summary.n_generated) == (n_kept, 2 * len(pairs) - n_kept)
    assert {n for *_, n in _rows(store)} == {1} and len(_rows(store)) == 2 * len(pairs)
    assert list(resumed.responses) == list(fairtalk.respond(pairs, model="builtin:echo?mode=upper").responses)


@needs_ray
@pytest.mark.parametrize("max_restarts", [0, 2], ids=["given-up", "restarted"])
def test_a_worker_that_dies_midway_loses_nothing(cluster, tmp_path: Path, max_restarts: int) -> None:
    model = tmp_path / "dying.py"
    model.write_text(DYING_MODEL.format(marker=str(tmp_path / "died"), pause=0.01), encoding="utf-8")
    pairs, store = _pairs(2), tmp_path / "store.sqlite"
    engine = RayEngine(num_actors=2, max_restarts=max_restarts)
    run = fairtalk.respond(pairs, model=f"python:{model}:reply", store=store, batch_size=8, engine=engine)
    assert (tmp_path / "died").exists()  # one actor's process did die
    assert run.summary.n_generated == 2 * len(pairs) and run.summary.n_errors == 0
    assert all(r.response == r.context.upper() for pair in run.responses for r in pair)
    assert len(_rows(store)) == 2 * len(pairs) and {n for *_, n in _rows(store)} == {1}
    local = fairtalk.respond(pairs, model=f"python:{model}:reply", store=store)  # same fingerprint in this process
    assert local.summary.n_cached == 2 * len(pairs)


@needs_ray
def test_an_actor_killed_midway_hands_its_batches_to_the_other(cluster, tmp_path: Path) -> None:
    model = tmp_path / "slow.py"
    (tmp_path / "died").touch()  # nobody dies on their own here
    model.write_text(DYING_MODEL.format(marker=str(tmp_path / "died"), pause=0.05), encoding="utf-8")
    pairs, store = _pairs(2), tmp_path / "store.sqlite"
    with RayEngine(num_actors=2, max_restarts=0).responder(f"python:{model}:reply", batch_size=4) as responder:
        killed = []

        def kill_one(event: ProgressEvent) -> None:
            if event.done and not killed:
                killed.append(responder.actors[0])  # type: ignore[attr-defined]
                cluster.kill(responder.actors[0])  # type: ignore[attr-defined]

        run = fairtalk.respond(pairs, model=responder, store=store, progress=kill_one)
        assert killed and responder.n_actors == 1  # type: ignore[attr-defined]
    assert run.summary.n_generated == 2 * len(pairs) and run.summary.n_errors == 0
    assert len(_rows(store)) == 2 * len(pairs) and {n for *_, n in _rows(store)} == {1}


@needs_ray
def test_when_every_actor_dies_the_run_stops_and_keeps_what_it_stored(cluster, tmp_path: Path) -> None:
    model = tmp_path / "doomed.py"
    model.write_text("import os\n\ndef reply(context):\n    os._exit(3)\n", encoding="utf-8")
    store = tmp_path / "store.sqlite"
    fairtalk.respond(_pairs()[:3], model="builtin:echo", store=store)  # the store holds another model's answers
    with pytest.raises(ResponderAborted, match=r"every Ray actor died .*re-run to resume"):
        fairtalk.respond(_pairs()[:4], model=f"python:{model}:reply", store=store, engine=RayEngine(num_actors=2, max_restarts=0))
    with pytest.raises(SpecError, match=r"file not found"):  # the loader's own error, raised by the driver
        RayEngine(num_actors=1).responder(f"python:{tmp_path / 'missing.py'}:reply")


@needs_ray
def test_a_tiny_transformer_answers_the_same_on_ray(cluster, tmp_path: Path) -> None:
    pytest.importorskip("transformers")
    path = _tiny_gpt2(tmp_path / "gpt2")
    pairs, store = _pairs()[:24], tmp_path / "store.sqlite"
    spec, args = f"hf:{path}", {"device": "cpu", "batch_size": "4"}
    on_ray = fairtalk.respond(
        pairs,
        model=spec,
        model_args=args,
        store=store,
        batch_size=8,
        engine="ray",
        settings=fairtalk.DecodingSettings(max_new_tokens=6),
    )
    local = fairtalk.respond(
        pairs, model=spec, model_args=args, store=tmp_path / "local.sqlite", settings=fairtalk.DecodingSettings(max_new_tokens=6)
    )
    assert list(on_ray.responses) == list(local.responses) and on_ray.summary.model == local.summary.model
    assert any(r.response for pair in on_ray.responses for r in pair)
    assert len(_rows(store)) == 2 * len(pairs) and {n for *_, n in _rows(store)} == {1}
    resumed = fairtalk.respond(
        pairs, model=spec, model_args=args, store=store, settings=fairtalk.DecodingSettings(max_new_tokens=6)
    )
    assert (resumed.summary.n_cached, resumed.summary.n_generated) == (2 * len(pairs), 0)


@needs_ray
def test_the_cli_runs_respond_and_audit_on_ray(cluster, tmp_path: Path) -> None:
    corpus = tmp_path / "toy.txt"
    corpus.write_text("\n".join(f"{s} {p}" for s in SUBJECTS for p in PREDICATES) + "\n", encoding="utf-8")
    pairs = tmp_path / "pairs.jsonl"
    assert runner.invoke(app, ["pairs", "--corpus", str(corpus), "--axis", "gender", "-o", str(pairs)]).exit_code == 0
    out = tmp_path / "responses.jsonl"
    result = runner.invoke(
        app,
        [
            "respond",
            "--pairs",
            str(pairs),
            "--model",
            "builtin:echo",
            "-o",
            str(out),
            "--store",
            str(tmp_path / "r.sqlite"),
            "--engine",
            "ray",
            "--ray-actors",
            "2",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "on 2 Ray actor(s)" in result.output and out.read_text().count("\n") == 48
    report = tmp_path / "report"
    result = runner.invoke(
        app,
        [
            "audit",
            "--corpus",
            str(corpus),
            "--axis",
            "gender",
            "--model",
            "builtin:echo",
            "-o",
            str(report),
            "--measures",
            "length",
            "--resamples",
            "100",
            "--quiet",
            "--engine",
            "ray",
            "--ray-actors",
            "2",
        ],
    )
    assert result.exit_code == 0, result.output
    recorded = json.loads((report / "run.json").read_text())["config"]["engine"]
    assert recorded["name"] == "ray" and recorded["num_actors"] == 2
    # 48 pair sides: too few to score on Ray, and the run says so rather than ignoring the engine silently
    said = " ".join(result.output.split())  # the console wraps its lines at 80 columns
    assert "gender: scored in this process: " in said and "fewer than two Ray batches" in said


def _tiny_gpt2(path: Path) -> Path:
    """A randomly initialised two-layer GPT-2 and a word-level tokenizer over the test's words."""
    import torch
    import transformers
    from tokenizers import Tokenizer, models, pre_tokenizers

    words = sorted({w for s in SUBJECTS + PREDICATES for w in s.split()} | {"0", "1"})
    vocab = {t: i for i, t in enumerate(["[PAD]", "[UNK]", "[BOS]", "[EOS]", *words])}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    fast = transformers.PreTrainedTokenizerFast(
        tokenizer_object=tok, pad_token="[PAD]", unk_token="[UNK]", bos_token="[BOS]", eos_token="[EOS]"
    )
    fast.save_pretrained(path)
    torch.manual_seed(0)
    config = transformers.GPT2Config(
        vocab_size=len(fast),
        n_positions=64,
        n_layer=2,
        n_head=2,
        n_embd=32,
        bos_token_id=fast.bos_token_id,
        eos_token_id=fast.eos_token_id,
        pad_token_id=fast.pad_token_id,
    )
    transformers.GPT2LMHeadModel(config).save_pretrained(path)
    return path


@needs_ray
def test_prompts_generate_runs_on_ray_and_resumes_locally(cluster, tmp_path: Path) -> None:
    prompts = tmp_path / "prompts.jsonl"
    chosen = paraphrase_prompts(default_groups(), n_model=1).prompts[:40]
    write_prompts(chosen, prompts)
    out, store = tmp_path / "ray.jsonl", tmp_path / "completions.sqlite"
    args = [
        "prompts",
        "generate",
        "--model",
        "builtin:echo",
        "--prompts",
        str(prompts),
        "--seeds",
        "3",
        "--store",
        str(store),
        "--batch-size",
        "8",
    ]
    result = runner.invoke(app, [*args, "-o", str(out), "--engine", "ray", "--ray-actors", "2"])
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())  # the console wraps its lines at 80 columns
    assert "on 2 Ray actor(s)" in said and "0 from the store, 120 generated, 0 failed" in said
    assert len(_rows(store)) == 120 and {n for *_, n in _rows(store)} == {1}
    local = tmp_path / "local.jsonl"
    result = runner.invoke(app, [*args, "-o", str(local)])
    assert result.exit_code == 0, result.output
    assert "120 from the store, 0 generated" in " ".join(result.output.split()) and local.read_text() == out.read_text()
    result = runner.invoke(app, [*args, "-o", str(local), "--ray-actors", "2"])
    assert result.exit_code == 2 and "options of --engine ray" in result.output


# -- reaching a cluster: bounded, and checked in a fresh process (this one may have joined Ray already) ---------

#: Generates with a model (None: the defaults, tried in turn) on the engine given as JSON options, with the Ray
#: client's gRPC faked when asked; prints how long it took and the error.
CONNECT = """
import json, sys, time, types
import ray
import fairtalk
from fairtalk import FairtalkError, Pair
from fairtalk.models import RayEngine

asked = json.loads(sys.argv[1])
if asked["fake_grpc"]:
    sys.modules.setdefault("grpc", types.ModuleType("grpc"))
engine = RayEngine(**asked["engine"])
start = time.monotonic()
try:
    fairtalk.respond([Pair("p", "gender", "he came", "she came", "a")], model=asked["model"], engine=engine)
    error = None
except FairtalkError as exc:
    error = str(exc)
print(json.dumps({"elapsed": time.monotonic() - start, "error": error, "initialized": ray.is_initialized()}))
"""


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A local TCP port that accepts connections and never answers (something that is not a Ray cluster)."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(16)
        yield server.getsockname()[1]


def _fairtalk(*args: str, cwd: Path, timeout: float = 120) -> tuple[subprocess.CompletedProcess[str], float]:
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "fairtalk.cli", *args], cwd=cwd, capture_output=True, text=True, timeout=timeout)
    return done, time.monotonic() - start


@needs_ray
@pytest.mark.parametrize(
    ("scheme", "model"),
    [("", "builtin:echo"), ("", None), ("ray://", "builtin:echo")],
    ids=["gcs", "gcs-default-models", "ray-client"],
)
def test_an_address_where_no_cluster_answers_fails_within_connect_timeout(
    silent_port: int, tmp_path: Path, scheme: str, model: str | None
) -> None:
    address = f"{scheme}127.0.0.1:{silent_port}"
    asked = {"engine": {"address": address, "connect_timeout": 3}, "model": model, "fake_grpc": bool(scheme)}
    done = subprocess.run(
        [sys.executable, "-c", CONNECT, json.dumps(asked)], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    outcome = json.loads(done.stdout.splitlines()[-1])
    assert outcome["error"] == (
        f"no Ray cluster answered at {address} within 3 s (no answer); check "
        "the address (--ray-address), or leave it out to start a local cluster"
    )
    # once, however many default models there are to try
    assert 3 <= outcome["elapsed"] < 3 + 2 and not outcome["initialized"]


@needs_ray
def test_the_cli_says_one_error_line_and_exits_2_when_the_address_is_unreachable(silent_port: int, tmp_path: Path) -> None:
    fairtalk.write_pairs(_pairs()[:4], tmp_path / "pairs.jsonl")
    refused, elapsed = _fairtalk(
        "respond",
        "--pairs",
        "pairs.jsonl",
        "--model",
        "builtin:echo",
        "-o",
        "out.jsonl",
        "--engine",
        "ray",
        "--ray-address",
        "127.0.0.1:1",
        cwd=tmp_path,
    )
    assert refused.returncode == 2, refused.stderr
    assert refused.stderr.splitlines() == [refused.stderr.strip()] and refused.stderr.startswith(
        "error: no Ray cluster answered at 127.0.0.1:1 within 30 s (ConnectionRefusedError"
    )
    assert elapsed < 30 and not (tmp_path / "out.jsonl").exists()
    (tmp_path / "toy.txt").write_text("\n".join(f"{s} {p}" for s in SUBJECTS for p in PREDICATES) + "\n")
    (tmp_path / "audit.toml").write_text("[engine]\nconnect_timeout = 3\n")
    silent, elapsed = _fairtalk(
        "audit",
        "--config",
        "audit.toml",
        "--corpus",
        "toy.txt",
        "--axis",
        "gender",
        "--model",
        "builtin:echo",
        "--measures",
        "length",
        "-o",
        "report",
        "--engine",
        "ray",
        "--ray-address",
        f"127.0.0.1:{silent_port}",
        cwd=tmp_path,
    )
    assert silent.returncode == 2, silent.stderr
    assert silent.stderr.strip() == (
        f"error: no Ray cluster answered at 127.0.0.1:{silent_port} within 3 s (no "
        "answer); check the address (--ray-address), or leave it out to start a local "
        "cluster"
    )
    assert 3 <= elapsed < 3 + 10  # the timeout, plus starting Python and fairtalk


@needs_ray
def test_a_ray_client_address_without_the_ray_client_names_its_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "grpc", None)  # import grpc -> ImportError: what `pip install ray` lacks
    with pytest.raises(FairtalkError, match=r"^a ray:// address needs the Ray client: pip install 'ray\[client\]'$"):
        fairtalk.respond(_pairs()[:2], model="builtin:echo", engine=RayEngine(address="ray://127.0.0.1:1"))
    result = runner.invoke(
        app,
        ["respond", "--pairs", "-", "--model", "builtin:echo", "--engine", "ray", "--ray-address", "ray://127.0.0.1:1"],
        input=_one_pair_jsonl(),
    )
    assert result.exit_code == 2 and "error: a ray:// address needs the Ray client: pip install 'ray[client]'" in result.output
