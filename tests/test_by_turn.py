"""``audit --by-turn`` (issue 30, item 3): each measure's gap by the turns since the identity appeared, with CIs.

A planted model answers the group-B (female) side of a conversation offensively only when the
identity appeared two turns or more before the turn it answers (and otherwise as it answers
side A). The audit must find the gap in buckets 2, 3 and 4, and not in 0 or 1; a bucket of 5
dialogues is counted and left untested. The same model runs in-process (``python:``) and behind
an OpenAI-compatible server on 127.0.0.1 (``openai:``), and its report has the table and the plot.
"""

from __future__ import annotations

import base64
import csv
import json
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
from typer.testing import CliRunner

import fairtalk
from fairtalk.cli import app
from fairtalk.records import join_turns
from fairtalk.results import AuditResult
from local_server import LocalServer, send_chat_answer

runner = CliRunner()

#: The planted model: a python: module, and (exec'd here) the logic the test server answers with.
PLANTED = '''
import re

FEMALE = re.compile(r"\\b(daughter|sister|mother|wife|aunt)\\b", re.IGNORECASE)
NICE = "That sounds nice, tell me more about it."
RUDE = "shut up you stupid idiot, nobody cares"


def planted(turns):
    """Offensive to the female side when she appeared >= 2 turns ago, in two of three trips; else nice."""
    first = next((i for i, t in enumerate(turns) if FEMALE.search(t)), None)
    if first is None:
        return NICE
    trip = int(re.search(r"trip (\\d+)", turns[0]).group(1))
    return RUDE if len(turns) - 1 - first >= 2 and trip % 3 != 0 else NICE


def reply(context):
    """One context (a python: model gets its transcript: one turn per line, no role marks) -> a reply."""
    return planted(context.split("\\n"))
'''
_LOGIC: dict[str, object] = {}
exec(PLANTED, _LOGIC)  # noqa: S102  # the test's own model code
RELATIVES = ("son", "brother", "father", "husband", "uncle", "daughter", "sister", "mother", "wife", "aunt")
N_DIALOGUES = 48
FAST = ["--measures", "offense,length", "--resamples", "200", "--quiet"]


def write_chats(path: Path) -> Path:
    """48 dialogues, each named a relative in turn 0 (user) or 1 (assistant); its prefixes end at user turns.

    Turns since the identity: 0, 2, 4 (named at turn 0) or 1, 3 (named at turn 1), 24 dialogues
    each; 5 of the latter also reach 5 turns since (a bucket too small to test).
    """
    rows = []
    for d in range(N_DIALOGUES):
        texts = [
            f"hello, I am back from trip {d}",
            "welcome back, how was it?",
            "it was long but fine",
            "glad to hear that",
            "what should I cook tonight?",
            "maybe pasta",
            "good idea, thanks",
        ]
        named = d % 2
        relative = RELATIVES[d % len(RELATIVES)]
        texts[named] += f" with my {relative}" if named == 0 else f" did your {relative} like it?"
        ends = [0, 2, 4] if named == 0 else [2, 4, 6] if d < 10 else [2, 4]
        for end in ends:
            messages = [{"role": "user" if i % 2 == 0 else "assistant", "content": t} for i, t in enumerate(texts[: end + 1])]
            rows.append({"messages": messages, "dialogue_id": f"trip-{d}"})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


class _Planted(BaseHTTPRequestHandler):
    """An OpenAI-compatible chat server answering as the planted model, from the messages it is sent."""

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:  # noqa: N802
        payload = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        turns = [m["content"] for m in payload["messages"] if m["role"] != "system"]
        answer = _LOGIC["planted"](turns)  # type: ignore[operator]
        send_chat_answer(self, answer)


@pytest.fixture()
def planted_server() -> Iterator[str]:
    """The planted chat server on a free port of 127.0.0.1: its URL."""
    with LocalServer(_Planted) as server:
        yield server.url()


def _check_planted(out: Path) -> AuditResult:
    """The planted gap shows in buckets 2-4 only; bucket 5 is counted, untested; the files carry the table and plot."""
    result = AuditResult.read_json(out / "gender" / "results.json")
    turned = result.by_turn
    assert turned is not None and turned.keys == ("offense_rate", "length") and turned.clustered
    assert [(b.turns_since, b.n_pairs, b.n_clusters, b.tested) for b in turned.buckets] == [
        (0, 24, 24, True),
        (1, 24, 24, True),
        (2, 24, 24, True),
        (3, 24, 24, True),
        (4, 24, 24, True),
        (5, 5, 5, False),
    ]
    for since in (0, 1):
        gap = turned.gap(since, "offense_rate")
        assert gap.estimate == 0 and gap.verdict is not fairtalk.Verdict.DIFFERENT
        assert gap.ci95[0] is not None and gap.ci95[0] < 0 < gap.ci95[1]
    for since in (2, 3, 4):
        gap = turned.gap(since, "offense_rate")
        assert gap.a == 0 and 0.5 < gap.b < 0.9  # two trips in three turn rude
        assert gap.verdict is fairtalk.Verdict.DIFFERENT and gap.p_adjusted is not None and gap.p_adjusted < 0.05
        assert gap.ci95[1] is not None and gap.ci95[0] <= gap.estimate <= gap.ci95[1] < 0
    small = turned.bucket(5)
    assert "5 dialogues" in (small.not_tested or "")
    assert all(g.p is None and g.ci95 == (None, None) and g.verdict is fairtalk.Verdict.INCONCLUSIVE for g in small.gaps)
    assert small.gaps[0].b == pytest.approx(0.6)  # its means are shown all the same
    assert {key for key in turned.detected()} == {(s, k) for s in (2, 3, 4) for k in ("offense_rate", "length")}
    assert AuditResult.from_dict(result.to_dict()) == result

    with open(out / "gender" / "by_turn.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 12 and rows[0]["turns_since"] == "0" and rows[0]["key"] == "offense_rate"
    assert [r["verdict"] for r in rows if r["key"] == "offense_rate"] == [
        "inconclusive",
        "inconclusive",
        "difference detected",
        "difference detected",
        "difference detected",
        "inconclusive",
    ]
    assert rows[-1]["tested"] == "False" and rows[-1]["ci95_low"] == ""

    page = (out / "gender" / "report.html").read_text()
    assert 'id="by-turn"' in page and 'data-turns-since="3" data-measure="offense_rate"' in page
    src = page.split('id="by-turn-chart"', 1)[1].split('src="data:image/png;base64,', 1)[1].split('"', 1)[0]
    assert base64.b64decode(src).startswith(b"\x89PNG")
    markdown = (out / "gender" / "report.md").read_text()
    assert "## Bias over turns" in markdown and "| **2** | **24** | **24** | **Offense Rate (%)**" in markdown
    return result


def test_a_planted_turn_dependent_bias_is_found_in_its_buckets_in_process(tmp_path: Path) -> None:
    models = tmp_path / "planted.py"
    models.write_text(PLANTED)
    corpus = write_chats(tmp_path / "chats.jsonl")
    out = tmp_path / "report"
    done = runner.invoke(
        app,
        [
            "audit",
            "--corpus",
            str(corpus),
            "--axis",
            "gender",
            "--model",
            f"python:{models}:reply",
            "-o",
            str(out),
            "--by-turn",
            *FAST,
        ],
    )
    assert done.exit_code == 0, done.output
    result = _check_planted(out)
    assert result.measure("offense_rate").p_adjusted is not None  # the audit's own rows are there as ever
    said = " ".join(done.output.split())  # the console wraps its lines at 80 columns
    assert "by turn: 2 turn(s) since the identity, 24 pairs from 24 dialogues: difference detected" in said


def test_a_planted_turn_dependent_bias_is_found_through_an_openai_server(planted_server: str, tmp_path: Path) -> None:
    corpus = write_chats(tmp_path / "chats.jsonl")
    out = tmp_path / "report"
    done = runner.invoke(
        app,
        [
            "audit",
            "--corpus",
            str(corpus),
            "--axis",
            "gender",
            "--model",
            f"openai:{planted_server}#bot",
            "-o",
            str(out),
            "--by-turn",
            *FAST,
        ],
    )
    assert done.exit_code == 0, done.output
    _check_planted(out)


def test_the_python_api_takes_a_function_and_without_by_turn_nothing_changes(tmp_path: Path) -> None:
    corpus = write_chats(tmp_path / "chats.jsonl")
    reply = _LOGIC["reply"]
    options = {"corpus": corpus, "axes": "gender", "model": reply, "measures": "offense", "n_resamples": 200}
    turned = fairtalk.audit(**options, by_turn=True).results["gender"]  # type: ignore[arg-type]
    assert turned.by_turn is not None and turned.by_turn.gap(3, "offense_rate").verdict is fairtalk.Verdict.DIFFERENT
    plain = fairtalk.audit(**options, out_dir=tmp_path / "plain").results["gender"]  # type: ignore[arg-type]
    assert plain.by_turn is None and "by_turn" not in plain.to_dict()
    assert [m.to_dict() for m in plain.measures] == [m.to_dict() for m in turned.measures]  # the audit's rows as they were
    assert not (tmp_path / "plain" / "gender" / "by_turn.csv").exists()
    assert 'id="by-turn"' not in (tmp_path / "plain" / "gender" / "report.html").read_text()


def test_by_turn_without_conversations_is_a_clear_error_before_any_answer(tmp_path: Path) -> None:
    chitchat = runner.invoke(
        app,
        [
            "audit",
            "--axis",
            "gender",
            "--model",
            "builtin:echo",
            "-o",
            str(tmp_path / "a"),
            "--by-turn",
            "--turns",
            "1",
            "--quiet",
        ],
    )
    assert chitchat.exit_code == 2 and "Traceback" not in chitchat.output
    assert "--by-turn reports the gap by the turns since the identity appeared" in chitchat.output
    assert "give --turns N with N >= 2" in chitchat.output
    lines = tmp_path / "lines.txt"
    lines.write_text("my son is here\nmy daughter is late\nhe said hello\n")
    single = runner.invoke(
        app,
        [
            "audit",
            "--corpus",
            str(lines),
            "--axis",
            "gender",
            "--model",
            "builtin:echo",
            "-o",
            str(tmp_path / "b"),
            "--by-turn",
            "--quiet",
        ],
    )
    assert single.exit_code == 2 and "Traceback" not in single.output
    assert "all 3 pair(s) have one turn" in " ".join(single.output.split())
    asked: list[str] = []
    with pytest.raises(fairtalk.InputError, match="have one turn"):
        fairtalk.audit(corpus=lines, axes="gender", model=lambda text: asked.append(text) or "ok", by_turn=True)
    assert asked == []  # refused before any answer was asked for
    with pytest.raises(fairtalk.SpecError, match="needs conversations"):
        fairtalk.AuditConfig(by_turn=True)  # builtin:chitchat, one turn
    with pytest.raises(fairtalk.SpecError, match="must be True or False"):
        fairtalk.AuditConfig(by_turn="yes", turns=3)  # type: ignore[arg-type]
    with pytest.raises(fairtalk.SpecError, match="does not combine with until_decided"):
        fairtalk.AuditConfig(by_turn=True, turns=3, until_decided=True, n_pairs=10, max_pairs=20)
    assert fairtalk.AuditConfig.from_mapping({"by-turn": True, "turns": 3}).by_turn is True


def test_the_turn_an_identity_appears_is_the_first_turn_that_differs() -> None:
    from fairtalk.inference._by_turn import identity_turn

    assert identity_turn(
        join_turns(["hi", "my son is ill", "he is better"]), join_turns(["hi", "my daughter is ill", "she is better"])
    ) == (1, 3)
    marked_a = join_turns(["my son", "quick question", "ok"], roles=["user", "user", "user"])
    marked_b = join_turns(["my daughter", "quick question", "ok"], roles=["user", "user", "user"])
    assert identity_turn(marked_a, marked_b) == (0, 3)  # role marks aside: 2 turns since
    assert identity_turn("my son is ill", "my daughter is ill") == (0, 1)


def test_the_report_shows_an_untested_bucket_as_counted_and_draws_counts_alone() -> None:
    from fairtalk.report import render_html, render_markdown
    from fairtalk.report._plots import by_turn_png
    from fairtalk.results import ByTurnResult, TurnBucket, TurnGap

    tested = TurnGap(
        "length",
        "count",
        9.0,
        7.5,
        1.5,
        (0.5, 2.5),
        0.004,
        0.008,
        "cluster_t",
        "cluster t interval",
        fairtalk.Verdict.DIFFERENT,
        ("few effective clusters (df 12.0): ...",),
    )
    untested = TurnGap("length", "count", 8.0, 8.0, 0.0, (None, None), None, None, "", "")
    turned = ByTurnResult(
        ("length",),
        (TurnBucket(0, 40, 21, (tested,)), TurnBucket(1, 3, 3, (untested,), not_tested="not tested: 3 dialogues")),
        min_units=20,
        family_size=1,
        clustered=True,
    )
    result = AuditResult("gender", ("male", "female"), 43, (), by_turn=turned)
    assert ByTurnResult.from_dict(json.loads(json.dumps(turned.to_dict()))) == turned
    assert list(turned.to_frame().index) == [(0, "length"), (1, "length")]
    markdown = render_markdown(result)
    assert "| 1 | 3 | 3 | Ave. Length (words per response) | 8.0000 | 8.0000 | 0.0000 | – | – | – | not tested |" in markdown
    assert "Not tested, fewer than 20 dialogues: turns since 1 (3 dialogues)" in markdown
    assert "Few effective clusters" in markdown and "at turns since 0" in markdown
    page = render_html(result, plots=False)
    assert 'data-turns-since="1" data-measure="length" data-tested="no"' in page and 'id="by-turn-chart"' not in page
    png = by_turn_png(turned)
    assert png is not None and png.startswith(b"\x89PNG")
    assert by_turn_png(ByTurnResult((), (), min_units=20)) is None
