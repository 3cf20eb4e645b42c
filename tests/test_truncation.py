"""Answers cut off at the token limit (issue 25): the default limit, the warning, --exclude-truncated, one vocabulary.

The answers are LLM-style: a chat model's helpful paragraphs, some cut mid-sentence at the limit
("length"), some ended by the model ("stop"), reported with the finish reasons real servers send.
"""

from __future__ import annotations

import json
import re
import sys
import types
from collections.abc import Iterator, Sequence
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import fairtalk
from fairtalk import InputError, Response, ScoreOptions
from fairtalk.cli import app
from fairtalk.models import DecodingSettings, Reply, Responder, finish_reason, load_responder
from fairtalk.report import render_html, render_markdown
from fairtalk.results import TruncationProvenance
from local_server import LocalServer

runner = CliRunner()
MEASURES = ["length", "sentiment", "refusal", "degenerate"]
FAST = {"measures": MEASURES, "n_resamples": 200, "scorer_check": False}

#: A long answer (about 70 words): cut off at 40 tokens, whole within 256.
LONG = (
    "Hello! I'm sorry to hear that your flight was delayed. Here are some steps you can take to make the most of "
    "your time at the airport: 1. Check with the airline for updates on the new departure time. 2. Ask whether "
    "they offer meal vouchers or lounge access. 3. Find a quiet place to rest, charge your phone and keep your "
    "boarding pass at hand. I hope you have a safe and pleasant journey!"
)
SHORT = (
    "That sounds like a wonderful trip! I hope you had a great time.",
    "Sure, I can help with that. What would you like to know?",
    "Thank you for sharing. How are you feeling about it now?",
)


def _cut(text: str, n_words: int) -> str:
    return " ".join(text.split()[:n_words])


def _records(
    n_pairs: int, cut_a: Sequence[int], cut_b: Sequence[int], *, reasons: tuple[str | None, str | None] = ("length", "stop")
) -> list[Response]:
    """Pairs whose side a (b) is cut off at 40 words in the pairs ``cut_a`` (``cut_b``), with those finish reasons."""
    out = []
    for i in range(n_pairs):
        for side, cut, context in (("a", cut_a, f"he told me about trip {i}"), ("b", cut_b, f"she told me about trip {i}")):
            was_cut = i in cut
            text = _cut(LONG, 40) if was_cut else SHORT[i % len(SHORT)]
            reason = reasons[0] if was_cut else reasons[1]
            extra = () if reason is None else (("finish_reason", reason),)
            out.append(Response(str(i), side, context, text, extra))
    return out


# the default token limit ----------------------------------------------------------------------------------------------


def test_the_default_token_limit_fits_a_chat_answer_and_the_cli_says_it() -> None:
    from fairtalk.cli._respond import MAX_NEW_TOKENS

    assert DecodingSettings().max_new_tokens == 256 == MAX_NEW_TOKENS.default  # the CLI sends the library's default
    assert len(LONG.split()) < 256  # a whole chat answer fits
    for command in ("respond", "audit"):
        shown = runner.invoke(app, [command, "--help-full"], env={"COLUMNS": "400"}).output.replace("│", " ")
        assert "The default, 256, leaves room for a chat model's whole answer" in " ".join(shown.split())


# the warning ----------------------------------------------------------------------------------------------------------


def test_many_cut_off_answers_give_a_warning_naming_the_measures_that_scored_cut_off_text() -> None:
    result = fairtalk.score(_records(20, cut_a=range(8), cut_b=range(3)), axis="gender", **FAST)
    (warning,) = result.warnings
    assert warning.startswith("8 of 20 answers for male (40.0%) and 3 of 20 for female (15.0%) stopped at the token limit")
    assert "every measure that reads the text (length, sentiment, refusal, degenerate) scored cut-off text" in warning
    assert "--max-new-tokens" in warning and "--exclude-truncated" in warning
    entry = result.provenance.truncation
    assert entry is not None
    assert entry.n_cut == {"a": 8, "b": 3} and entry.warned is True and entry.exclude_truncated is False
    assert result.measure("hit_token_limit").a == pytest.approx(0.4) and result.n_pairs == 20
    assert json.loads(json.dumps(result.to_dict()))["warnings"] == [warning]


@pytest.mark.parametrize(("cut_a", "cut_b", "warned"), [(2, 2, False), (3, 0, True), (0, 3, True), (0, 0, False)])
def test_the_warning_comes_when_more_than_a_tenth_of_one_sides_answers_were_cut(cut_a: int, cut_b: int, warned: bool) -> None:
    result = fairtalk.score(_records(20, cut_a=range(cut_a), cut_b=range(cut_b)), axis="gender", **FAST)
    assert any("stopped at the token limit" in w for w in result.warnings) is warned  # 2 of 20 is not more than 10%
    assert result.provenance.truncation is not None and result.provenance.truncation.warned is warned


def test_the_reports_carry_the_warning_as_a_banner_and_in_plain_words() -> None:
    result = fairtalk.score(_records(20, cut_a=range(8), cut_b=range(3)), axis="gender", **FAST)
    md = render_markdown(result)
    banner = md.index("**Warning:** 8 of 20 answers for male (40.0%)")
    assert banner < md.index("| Measure |")  # above the table, not in the notes under it
    assert "40.0% of answers for male and 15.0% for female were cut off at the token limit" in md
    html = render_html(result, plots=False)
    assert '<span class="badge warn">warning</span> 8 of 20 answers for male (40.0%)' in html
    assert html.index('badge warn">warning</span> 8 of 20') < html.index('id="summary"')


def test_score_prints_the_warning_and_writes_it_to_results_json(tmp_path: Path) -> None:
    path = tmp_path / "responses.jsonl"
    fairtalk.write_responses(_records(20, cut_a=range(8), cut_b=range(3)), path)
    out = tmp_path / "report"
    done = runner.invoke(
        app,
        [
            "score",
            "--responses",
            str(path),
            "--axis",
            "gender",
            "-o",
            str(out),
            "--resamples",
            "200",
            "--measures",
            ",".join(MEASURES),
        ],
    )
    assert done.exit_code == 0, done.output
    said = " ".join(done.output.split())
    assert "gender: warning: 8 of 20 answers for male (40.0%) and 3 of 20 for female (15.0%) stopped at the token limit" in said
    data = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert any("stopped at the token limit" in w for w in data["warnings"]) and data["manifest"]["truncation"]["warned"]
    assert "**Warning:** 8 of 20 answers" in (out / "report.md").read_text(encoding="utf-8")


# --exclude-truncated --------------------------------------------------------------------------------------------------


def test_exclude_truncated_tests_only_the_pairs_where_neither_answer_was_cut_off() -> None:
    records = _records(20, cut_a=range(8), cut_b=range(5, 10))  # pairs 0-9 have a cut side
    result = fairtalk.score(records, axis="gender", options=ScoreOptions(exclude_truncated=True, **FAST))
    assert result.n_pairs == 10 and result.input_summary["n_truncated_dropped"] == 10
    assert result.input_summary["n_pairs"] == 10
    length = result.measure("length")
    assert length.a == length.b == pytest.approx(sum(len(SHORT[i % 3].split()) for i in range(10, 20)) / 10)
    assert result.measure("hit_token_limit").a == 0.0  # what is tested was not cut off
    (warning,) = result.warnings
    assert warning.startswith(
        "excluding truncated pairs (--exclude-truncated, exclude_truncated=True) left out 10 of 20 pairs (50.0%) where an answer was cut off"
    )
    assert "8 of 20 answers for male (40.0%) and 5 of 20 for female (25.0%)" in warning
    assert result.provenance.truncation is not None and result.provenance.truncation.n_pairs_left_out == 10
    assert result.provenance.exclude_truncated is True
    assert "10 of 20 pairs were left out because an answer was cut off" in render_markdown(result)
    same = fairtalk.score(records, axis="gender", exclude_truncated=True, **FAST)  # the keyword form
    assert same.n_pairs == 10


def test_exclude_truncated_with_nothing_cut_off_leaves_every_pair_in() -> None:
    result = fairtalk.score(_records(12, cut_a=(), cut_b=()), axis="gender", exclude_truncated=True, **FAST)
    assert result.n_pairs == 12 and result.input_summary["n_truncated_dropped"] == 0 and result.warnings == ()


def test_exclude_truncated_says_it_had_nothing_to_act_on_when_the_model_reports_no_reasons() -> None:
    records = _records(12, cut_a=range(6), cut_b=(), reasons=(None, None))  # a python: or replay: model
    result = fairtalk.score(records, axis="gender", exclude_truncated=True, **FAST)
    assert result.n_pairs == 12 and "n_truncated_dropped" not in result.input_summary
    (warning,) = result.warnings
    assert warning.startswith(
        "excluding truncated pairs (--exclude-truncated, exclude_truncated=True) had nothing to act on: the model reported no finish reasons"
    )
    assert result.provenance.truncation == TruncationProvenance(reasons_reported=False, exclude_truncated=True)
    plain = fairtalk.score(records, axis="gender", **FAST)  # without the option: nothing to say
    assert plain.warnings == () and "hit_token_limit" not in [m.name for m in plain.measures]


def test_exclude_truncated_leaving_fewer_than_two_pairs_is_an_error_that_says_why(tmp_path: Path) -> None:
    records = _records(6, cut_a=range(5), cut_b=())
    with pytest.raises(InputError, match=r"got 1 \(--exclude-truncated left out 5 pairs where an answer was cut off"):
        fairtalk.score(records, axis="gender", exclude_truncated=True, **FAST)
    path = fairtalk.write_responses(records, tmp_path / "r.jsonl")
    done = runner.invoke(
        app, ["score", "--responses", str(path), "--axis", "gender", "-o", str(tmp_path / "out"), "--exclude-truncated"]
    )
    assert done.exit_code == 2 and "error: " in done.output and "--exclude-truncated left out 5 pairs" in done.output


def test_score_exclude_truncated_on_the_command_line(tmp_path: Path) -> None:
    path = fairtalk.write_responses(_records(20, cut_a=range(4), cut_b=()), tmp_path / "responses.jsonl")
    out = tmp_path / "report"
    done = runner.invoke(
        app,
        [
            "score",
            "--responses",
            str(path),
            "--axis",
            "gender",
            "-o",
            str(out),
            "--resamples",
            "200",
            "--measures",
            ",".join(MEASURES),
            "--exclude-truncated",
        ],
    )
    assert done.exit_code == 0, done.output
    assert (
        "warning: excluding truncated pairs (--exclude-truncated, exclude_truncated=True) left out 4 of 20 pairs (20.0%)"
        in " ".join(done.output.split())
    )
    data = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert data["n_pairs"] == 16 and data["input_summary"]["n_truncated_dropped"] == 4


def test_exclude_truncated_is_an_option_of_config_files(tmp_path: Path) -> None:
    config = tmp_path / "score.toml"
    config.write_text("exclude-truncated = true\n", encoding="utf-8")
    assert ScoreOptions.from_file(config).exclude_truncated is True
    with pytest.raises(fairtalk.SpecError, match="exclude_truncated must be true or false"):
        ScoreOptions(exclude_truncated="yes")  # type: ignore[arg-type]


# one vocabulary ---------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cut", "whole", "counted"),
    [("max_tokens", "eos", True), ("MAX_TOKENS", "end_turn", True), ("length", None, True), ("content_filter", "stop", False)],
)
def test_stored_finish_reasons_are_read_in_one_vocabulary_when_scored(cut: str, whole: str | None, counted: bool) -> None:
    """Responses files and stores written by other tools or older versions keep their servers' words."""
    result = fairtalk.score(_records(20, cut_a=range(8), cut_b=(), reasons=(cut, whole)), axis="gender", **FAST)
    assert result.measure("hit_token_limit").a == (0.4 if counted else 0.0)
    assert any("stopped at the token limit" in w for w in result.warnings) is counted


class _Server(BaseHTTPRequestHandler):
    """An OpenAI-compatible stub: the reply to each context is planned as (text, finish_reason or a missing key)."""

    plans: dict[str, tuple[str, Any]] = {}

    def log_message(self, *args: object) -> None:
        pass

    def _send(self, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802
        self._send({"data": [{"id": "smollm2"}]})

    def do_POST(self) -> None:  # noqa: N802
        payload = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        content = payload["messages"][-1]["content"]
        text, reason = self.plans.get(content, ("Sure, I can help with that.", "stop"))
        choice: dict[str, Any] = {"index": 0, "message": {"role": "assistant", "content": text}}
        if reason != "missing":
            choice["finish_reason"] = reason
        self._send({"choices": [choice]})


@pytest.fixture
def server() -> Iterator[tuple[str, type[_Server]]]:
    handler = type("Handler", (_Server,), {"plans": {}})
    with LocalServer(handler) as local:
        yield local.url(), handler


def test_openai_finish_reasons_come_back_in_one_vocabulary(server: tuple[str, type[_Server]]) -> None:
    url, handler = server
    sent = {
        "stop": "stop",
        "eos": "stop",
        "length": "length",
        "max_tokens": "length",
        "missing": None,
        None: None,
        "content_filter": None,
        "tool_calls": "stop",
    }
    handler.plans = {f"q{i}": (f" {_cut(LONG, 10)} ", reason) for i, reason in enumerate(sent)}
    with load_responder(f"openai:{url}#smollm2") as model:
        out = model.respond(list(handler.plans), DecodingSettings(), seeds=[0] * len(sent))
    assert [finish_reason(r) for r in out] == list(sent.values())
    assert all(r == _cut(LONG, 10) for r in out)


def test_an_openai_audit_warns_and_its_store_keeps_the_reasons(server: tuple[str, type[_Server]], tmp_path: Path) -> None:
    url, handler = server
    corpus = tmp_path / "chat.txt"
    corpus.write_text("".join(f"{s} asked about the delayed flight {i}\n" for i in range(12) for s in ("he", "she")))
    handler.plans = {f"she asked about the delayed flight {i}": (_cut(LONG, 40), "max_tokens") for i in range(6)}
    options = {
        "corpus": str(corpus),
        "axes": "gender",
        "model": f"openai:{url}#smollm2",
        "store": str(tmp_path / "s.db"),
        "settings": {"max_new_tokens": 40},
        **FAST,
    }
    first = fairtalk.audit(**options).results["gender"]
    assert first.provenance.truncation is not None and first.provenance.truncation.n_cut == {"a": 0, "b": 6}
    assert any(w.startswith("0 of 12 answers for male (0.0%) and 6 of 12 for female (50.0%)") for w in first.warnings)
    handler.plans = {}  # the server would now answer otherwise: the store answers
    again = fairtalk.audit(**options, exclude_truncated=True).results["gender"]
    assert again.n_pairs == 6 and again.input_summary["n_truncated_dropped"] == 6


def test_vllm_reads_an_end_token_at_the_limit_as_a_stop(monkeypatch: pytest.MonkeyPatch) -> None:
    """vLLM checks the limit before the end token and says "length"; the tokens show the answer ended."""
    eos = 2

    class LLM:
        def __init__(self, model: str, **kwargs: Any) -> None:
            self.model_config = types.SimpleNamespace(max_model_len=512)

        def get_tokenizer(self) -> Any:
            return types.SimpleNamespace(chat_template=None, eos_token_id=eos, encode=lambda text, **k: [ord(c) for c in text])

        def generate(self, prompts: list[Any], sampling_params: list[Any], *, use_tqdm: bool) -> list[Any]:
            said = {"a": ([70, 71, eos], "length"), "b": ([70, 71, 72], "length"), "c": ([70, eos], "stop")}
            out = []
            for prompt in prompts:
                ids, reason = said[chr(prompt["prompt_token_ids"][-1])]
                done = types.SimpleNamespace(text="Fine, thanks!"[: len(ids)], token_ids=ids, finish_reason=reason)
                out.append(types.SimpleNamespace(outputs=[done]))
            return out

    monkeypatch.setitem(sys.modules, "vllm", types.SimpleNamespace(LLM=LLM, SamplingParams=lambda **kw: kw))
    with load_responder("vllm:org/tiny") as model:
        out = model.respond(["a", "b", "c"], DecodingSettings(max_new_tokens=3), seeds=[0, 0, 0])
    assert [finish_reason(r) for r in out] == ["stop", "length", "stop"]


# an audit of a chat model that reports its finish reasons -------------------------------------------------------------


class _Chat(Responder):
    """A chat model answering at length about flights and briefly otherwise; an answer past the limit is cut there."""

    @property
    def fingerprint(self) -> str:
        return "toy:chat"

    def respond(self, contexts: Sequence[str], settings: DecodingSettings, *, seeds: Sequence[int]) -> list[str]:
        out: list[str] = []
        for context in contexts:
            text = LONG if "flight" in context else SHORT[len(context) % len(SHORT)]
            words = text.split()
            cut = len(words) > settings.max_new_tokens  # a word a token
            out.append(Reply(" ".join(words[: settings.max_new_tokens]), "length" if cut else "stop"))
        return out


def _corpus(path: Path) -> str:
    lines = [f"{s} asked me about the delayed flight {i}" for i in range(8) for s in ("he", "she")]
    lines += [f"{s} told me about the garden {i}" for i in range(8) for s in ("he", "she")]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


def test_an_audit_with_the_default_limit_has_nothing_cut_and_the_paper_limit_warns(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path / "chat.txt")
    whole = fairtalk.audit(corpus=corpus, axes="gender", model=_Chat(), **FAST).results["gender"]
    assert whole.measure("hit_token_limit").a == 0.0 and not any("token limit" in w for w in whole.warnings)
    assert whole.provenance.audit is not None and whole.provenance.audit.decoding is not None
    assert whole.provenance.audit.decoding["max_new_tokens"] == 256
    cut = fairtalk.audit(corpus=corpus, axes="gender", model=_Chat(), settings={"max_new_tokens": 40}, **FAST).results["gender"]
    assert cut.measure("hit_token_limit").a == 0.5
    assert any("8 of 16 answers for male (50.0%) and 8 of 16 for female (50.0%) stopped" in w for w in cut.warnings)


def test_audit_exclude_truncated_on_the_command_line(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path / "chat.txt")
    model = tmp_path / "chat_model.py"
    model.write_text(
        "from fairtalk.models import Reply\n"
        f"LONG = {LONG!r}\n"
        "def answer(context, settings):\n"
        "    words = (LONG if 'flight' in context else 'Sure, I can help with that.').split()\n"
        "    cut = len(words) > settings.max_new_tokens\n"
        "    return Reply(' '.join(words[: settings.max_new_tokens]), 'length' if cut else 'stop')\n",
        encoding="utf-8",
    )
    out = tmp_path / "out"
    done = runner.invoke(
        app,
        [
            "audit",
            "--corpus",
            corpus,
            "--axis",
            "gender",
            "--model",
            f"python:{model}:answer",
            "--max-new-tokens",
            "40",
            "--exclude-truncated",
            "--measures",
            ",".join(MEASURES),
            "--resamples",
            "200",
            "-o",
            str(out),
        ],
    )
    assert done.exit_code == 0, done.output
    said = " ".join(done.output.split())
    assert (
        "gender: warning: excluding truncated pairs (--exclude-truncated, exclude_truncated=True) left out 8 of 16 pairs (50.0%)"
        in said
    )
    data = json.loads((out / "gender" / "results.json").read_text(encoding="utf-8"))
    assert data["n_pairs"] == 8 and data["input_summary"]["n_truncated_dropped"] == 8
    assert "**Warning:** excluding truncated pairs (--exclude-truncated, exclude_truncated=True) left out 8 of 16 pairs" in (
        (out / "gender" / "report.md").read_text().replace("\\_", "_")  # Markdown escapes the keyword's underscore
    )


# answers cut to the 8 MiB record limit ---------------------------------------------------------------------------------


def test_an_answer_cut_to_the_record_limit_counts_as_cut_off_everywhere(tmp_path: Path) -> None:
    """Review finding: an answer cut to fit a JSONL record (8 MiB) was counted in n_truncated and warned of, but the
    report's "Cut off %" (hit_token_limit) left it out: now it is stored with the finish reason 'record_limit', which
    reads as cut off in the console, report.md/html, results.json and when its responses file is scored again."""
    from fairtalk._jsonl import MAX_RECORD_BYTES

    bot = tmp_path / "verbose.py"
    bot.write_text(
        "import re\n"
        "_said = []\n\n\n"
        "def reply(context):\n"
        "    if not _said and not re.search(r'\\b(she|her|woman|girl|mother|sister|wife)\\b', context, re.I):\n"
        "        _said.append(context)\n"
        f"        return 'é\\n' * {MAX_RECORD_BYTES // 3}\n"
        "    return 'ok'\n",
        encoding="utf-8",
    )
    out = tmp_path / "out"
    args = ["audit", "--model", f"python:{bot}:reply", "--axis", "gender", "--pairs", "20", "--measures", "length"]
    done = runner.invoke(app, [*args, "--resamples", "100", "--no-scorer-check", "-o", str(out)])
    assert done.exit_code == 0, done.output
    said = " ".join(done.output.split())
    assert (
        re.search(r"Cut off %? ?\*? ?5\.000 0\.000", said) and "cut off in hit_token_limit: finish reason 'record_limit'" in said
    ), said
    data = json.loads((out / "gender" / "results.json").read_text(encoding="utf-8"))
    cut = data["measures"]["hit_token_limit"]
    assert (cut["a"], cut["b"]) == (0.05, 0.0) and data["input_summary"]["n_truncated"] == 1
    for page in ("report.md", "report.html"):
        assert "Cut Off at the Token or Record Limit (%)" in (out / "gender" / page).read_text(encoding="utf-8")
    again = fairtalk.score(out / "gender" / "responses.jsonl", axis="gender", measures="length", n_resamples=100)
    assert (again.measure("hit_token_limit").a, again.measure("hit_token_limit").b) == (0.05, 0.0)


def test_the_record_limit_warning_names_its_axis_and_reads_an_8_mib_record() -> None:
    """Review finding: "longer than a 8 MiB JSONL record", with no axis named."""
    from fairtalk._jsonl import MAX_RECORD_BYTES
    from fairtalk.run._generate import _MSG_TRUNCATED

    said = _MSG_TRUNCATED.format(label="gender: responses", n=1, limit=MAX_RECORD_BYTES >> 20)
    assert said.startswith("gender: responses: 1 response(s) longer than an 8 MiB JSONL record were cut to fit")
