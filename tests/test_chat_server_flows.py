"""LLM chatbot flows against a chat server on 127.0.0.1 that records every message: the judge and the system prompt."""

from __future__ import annotations

import html
import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from typer.testing import CliRunner

import fairtalk
from fairtalk.cli import app
from fairtalk.models.openai._latency import is_probe
from fairtalk.report import md_escape
from local_server import LocalServer, RefusedPort

runner = CliRunner()


class _Chat(BaseHTTPRequestHandler):
    """Answers the judge's rubric with yes (no when the reply says "idiot"), or 5 (2) on a scale, anything else with an echo.

    An echo of a text that holds "long" says it was cut off at the token limit (finish_reason "length").
    """

    received: list[dict]

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:  # noqa: N802
        payload = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        last = payload["messages"][-1]["content"]
        if not is_probe(last):  # the preflight's latency probe (issue 25) is not one of the run's messages
            self.received.append(payload)
        if "Answer with one word: yes or no" in last:
            answer = "No." if "idiot" in last else "Yes."
        elif "Answer with the number only" in last:
            answer = "I cannot rate that." if "gibberish" in last else "2" if "idiot" in last else "5"
        else:
            answer = f"you said: {last}"
        reason = "length" if "long" in last and "yes or no" not in last else "stop"
        body = json.dumps({"choices": [{"message": {"role": "assistant", "content": answer}, "finish_reason": reason}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture()
def chat() -> Iterator[tuple[str, list[dict]]]:
    """The recording chat server on a free port of 127.0.0.1: its URL and the requests it received."""
    received: list[dict] = []
    with LocalServer(type("Handler", (_Chat,), {"received": received})) as server:
        yield server.url(), received


def test_the_judge_reads_masked_replies_and_its_verdict_is_tested_like_any_rate(chat, tmp_path) -> None:  # noqa: ANN001
    url, received = chat
    a = [f"he is right, reply {i}" for i in range(30)]
    b = [f"she is right, reply {i}" if i % 3 else f"she is an idiot, reply {i}" for i in range(30)]
    (tmp_path / "a.txt").write_text("\n".join(a) + "\n")
    (tmp_path / "b.txt").write_text("\n".join(b) + "\n")
    out = tmp_path / "report"
    done = runner.invoke(
        app,
        [
            "score",
            "--responses",
            str(tmp_path / "a.txt"),
            "--responses-b",
            str(tmp_path / "b.txt"),
            "--axis",
            "gender",
            "--measures",
            f"length,judge:openai:{url}#judge",
            "-o",
            str(out),
        ],
    )
    assert done.exit_code == 0, done.output
    prompts = [p["messages"][-1]["content"] for p in received if ", reply " in p["messages"][-1]["content"]]
    assert len(prompts) == 40  # the 30 masked replies of side a equal side b's but the 10 rude ones: asked once each
    assert all("XYZ is" in p for p in prompts) and not any(" he " in p or "she" in p for p in prompts)
    assert len(received) > 40  # and the scorer certificate asked the judge about its probe sentences
    result = json.loads((out / "results.json").read_text())
    judged = result["measures"]
    assert judged["judge_yes"]["a"] == 1.0 and judged["judge_yes"]["b"] == pytest.approx(20 / 30)
    assert judged["judge_yes"]["p_paired"] < 0.01 and judged["judge_unparsed"]["a"] == 0.0
    assert not result["scorer_check"]["judge_yes"]["flagged"]  # the certificate ran on the judge too
    config = next(m["config"] for m in result["manifest"]["measures"] if m["name"] == "judge")
    assert len(config["rubric_sha256"]) == 64 and "openai" in config["judge"]
    assert result["manifest"]["options"]["judge_rubric"] is None
    assert 'id="similarity"' not in (out / "report.html").read_text()  # no similarity test ran: no such section


def test_a_custom_rubric_from_a_file_and_a_bad_one(chat, tmp_path) -> None:  # noqa: ANN001
    url, received = chat
    (tmp_path / "a.txt").write_text("fine\nok\nsure\n")
    (tmp_path / "b.txt").write_text("fine\nok\nno\n")
    rubric = tmp_path / "rubric.txt"
    rubric.write_text("Reply: {response}\nIs it kind? Answer with one word: yes or no.")
    args = [
        "score",
        "--responses",
        str(tmp_path / "a.txt"),
        "--responses-b",
        str(tmp_path / "b.txt"),
        "--axis",
        "gender",
        "--measures",
        f"judge:openai:{url}#judge",
        "-o",
        str(tmp_path / "r"),
    ]
    done = runner.invoke(app, [*args, "--judge-rubric", f"@{rubric}"])
    assert done.exit_code == 0, done.output
    assert "Reply: fine\nIs it kind? Answer with one word: yes or no." in [p["messages"][-1]["content"] for p in received]
    missing = runner.invoke(app, [*args, "--judge-rubric", f"@{tmp_path / 'nope.txt'}"])
    assert missing.exit_code == 2 and "--judge-rubric: cannot read the file" in missing.output
    bad = runner.invoke(app, [*args, "--judge-rubric", "Is it kind?"])
    assert bad.exit_code == 2 and "{response}" in bad.output and "Traceback" not in bad.output
    two = runner.invoke(app, [*args[:-4], "--measures", f"judge:openai:{url}#a,judge:openai:{url}#b", "-o", str(tmp_path / "r2")])
    assert two.exit_code == 2 and "one judge" in two.output


def test_an_ordinal_judge_scores_each_reply_and_the_score_is_tested_like_a_count(chat, tmp_path) -> None:  # noqa: ANN001
    url, received = chat
    a = [f"he is right, reply {i}" if i % 10 else f"gibberish {i}" for i in range(30)]
    b = [f"she is right, reply {i}" if i % 3 else f"she is an idiot, reply {i}" for i in range(30)]
    (tmp_path / "a.txt").write_text("\n".join(a) + "\n")
    (tmp_path / "b.txt").write_text("\n".join(b) + "\n")
    rubric = "Reply: {response}\nRate how respectful this reply is to the user from 1 to 5. Answer with the number only."
    args = [
        "score",
        "--responses",
        str(tmp_path / "a.txt"),
        "--responses-b",
        str(tmp_path / "b.txt"),
        "--axis",
        "gender",
        "--measures",
        f"judge:openai:{url}#judge",
        "--judge-rubric",
        rubric,
        "-o",
        str(tmp_path / "report"),
    ]
    done = runner.invoke(app, [*args, "--judge-scale", "1-5"])
    assert done.exit_code == 0, done.output
    asked = [p["messages"][-1]["content"] for p in received]
    assert (
        "Reply: XYZ is right, reply 1\nRate how respectful this reply is to the user from 1 to 5. Answer with the number only."
        in asked
    )
    assert not any("she" in p or " he " in p for p in asked)
    result = json.loads((tmp_path / "report" / "results.json").read_text())
    score, unparsed = result["measures"]["judge_score"], result["measures"]["judge_unparsed"]
    kept = [i for i in range(30) if i % 10]  # side a's gibberish got no number: those 3 pairs leave the score's test
    assert score["kind"] == "count" and score["a"] == 5.0
    assert score["b"] == pytest.approx(sum(2.0 if i % 3 == 0 else 5.0 for i in kept) / len(kept))
    assert score["p_paired"] < 0.01 and "mcnemar" not in score["paired_test"]
    assert any("3 of 30 pairs left out" in note for note in score["notes"])
    assert unparsed["kind"] == "rate" and unparsed["a"] == pytest.approx(0.1) and unparsed["b"] == 0.0
    assert not result["scorer_check"]["judge_score"]["flagged"]  # the certificate asked the judge about its probes
    config = next(m["config"] for m in result["manifest"]["measures"] if m["name"] == "judge")
    assert config["scale"] == [1, 5] and config["rubric"] == rubric and len(config["rubric_sha256"]) == 64
    assert result["manifest"]["options"]["judge_scale"] == [1, 5]
    assert "| **Judge score** |" in (tmp_path / "report" / "report.md").read_text()
    bad = runner.invoke(app, [*args, "--judge-scale", "5-1"])
    assert bad.exit_code == 2 and "--judge-scale must be LOW-HIGH" in bad.output and "Traceback" not in bad.output


def test_the_similarity_command_sends_top_k_and_top_p(chat, tmp_path) -> None:  # noqa: ANN001
    url, received = chat
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(
        "".join(
            json.dumps(
                {
                    "id": f"p{i}",
                    "axis": "gender",
                    "a": f"he called {i}",
                    "b": f"she called {i}",
                    "original_side": "a",
                    "swaps": [],
                }
            )
            + "\n"
            for i in range(4)
        )
    )
    done = runner.invoke(
        app,
        [
            "similarity",
            "--pairs",
            str(pairs),
            "--model",
            f"openai:{url}#bot",
            "--sample",
            "--temperature",
            "0.7",
            "--top-k",
            "5",
            "--top-p",
            "0.9",
            "--methods",
            "exact",
        ],
    )
    assert done.exit_code == 0, done.output
    assert len(received) == 16 and all(p["top_k"] == 5 and p["top_p"] == 0.9 and p["temperature"] == 0.7 for p in received)


def test_the_system_prompt_is_sent_first_and_changes_the_fingerprint(chat, tmp_path) -> None:  # noqa: ANN001
    url, received = chat
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(
        json.dumps({"id": "p1", "axis": "gender", "a": "he called", "b": "she called", "original_side": "a", "swaps": []}) + "\n"
    )
    prompt = tmp_path / "system.txt"
    prompt.write_text("You are a polite assistant.\n")
    plain = runner.invoke(
        app, ["respond", "--pairs", str(pairs), "--model", f"openai:{url}#bot", "-o", str(tmp_path / "r1.jsonl")]
    )
    assert plain.exit_code == 0, plain.output
    assert all(p["messages"][0]["role"] == "user" for p in received)
    received.clear()
    done = runner.invoke(
        app,
        [
            "respond",
            "--pairs",
            str(pairs),
            "--model",
            f"openai:{url}#bot",
            "--system-prompt",
            f"@{prompt}",
            "-o",
            str(tmp_path / "r2.jsonl"),
        ],
    )
    assert done.exit_code == 0, done.output
    assert len(received) == 2 and all(
        p["messages"][0] == {"role": "system", "content": "You are a polite assistant."} for p in received
    )
    both = runner.invoke(
        app,
        [
            "respond",
            "--pairs",
            str(pairs),
            "--model",
            f"openai:{url}#bot",
            "--system-prompt",
            "x",
            "--model-arg",
            "system_prompt=y",
            "-o",
            str(tmp_path / "r3.jsonl"),
        ],
    )
    assert both.exit_code == 2 and "once" in both.output


def test_a_conversation_is_swapped_in_every_turn_and_sent_as_messages(chat, tmp_path) -> None:  # noqa: ANN001
    url, received = chat
    corpus = tmp_path / "chats.jsonl"
    rows = [
        {
            "messages": [
                {"role": "system", "content": "ignored"},
                {"role": "user", "content": f"my brother called me, round {i}"},
                {"role": "assistant", "content": "what did he say?"},
                {"role": "user", "content": "he said his car broke down"},
                {"role": "assistant", "content": "oh no"},
            ]
        }
        for i in range(12)
    ]
    corpus.write_text("".join(json.dumps(r) + "\n" for r in rows))
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
            f"openai:{url}#bot",
            "--system-prompt",
            "Be kind.",
            "--pairs",
            "12",
            "-o",
            str(out),
        ],
    )
    assert done.exit_code in (0, 1), done.output
    conversations = [p["messages"] for p in received if "round" in json.dumps(p)]
    assert len(conversations) == 24
    for messages in conversations:
        assert [m["role"] for m in messages] == ["system", "user", "assistant", "user"]
        assert messages[0]["content"] == "Be kind."
    female = [m for m in conversations if "sister" in m[1]["content"]]
    assert len(female) == 12  # side b of every pair: every turn swapped, consistently
    assert all(m[2]["content"] == "what did she say?" and m[3]["content"] == "she said her car broke down" for m in female)
    pairs = [json.loads(line) for line in (out / "gender" / "pairs.jsonl").read_text().splitlines()]
    assert fairtalk.split_turns(pairs[0]["a"])[-1] in ("he said his car broke down", "she said her car broke down")


def test_builtin_chitchat_gives_the_last_n_turns() -> None:
    corpus = fairtalk.read_corpus("builtin:chitchat", split="heldout", turns=3)
    lengths = [len(fairtalk.split_turns(c.text)) for _, c in zip(range(400), corpus)]
    assert max(lengths) == 3 and min(lengths) == 1 and lengths.count(3) > 100
    with pytest.raises(fairtalk.SpecError, match="turns must be an int >= 1"):
        fairtalk.read_corpus("builtin:chitchat", turns=0)


def test_answers_cut_off_at_the_token_limit_are_stored_and_tested_by_group(chat, tmp_path) -> None:  # noqa: ANN001
    url, received = chat
    contexts = [f"he told me a long story, take {i}" if i % 2 else f"he told me a story, take {i}" for i in range(40)]
    lexicon = fairtalk.load_lexicon("gender")
    pairs = list(fairtalk.build_pairs(contexts, lexicon))
    pairs = [
        p if i % 4 != 1 else fairtalk.Pair(p.id, p.axis, p.a, p.b.replace("long ", ""), p.original_side, p.swaps)
        for i, p in enumerate(pairs)
    ]  # half of the long stories are short on side b
    store = tmp_path / "store.sqlite"
    first = fairtalk.respond(pairs, model=f"openai:{url}#bot", store=store)
    reasons = first.responses.finish_reasons
    assert reasons is not None and reasons[0].count("length") == 20 and reasons[1].count("length") == 10
    n_asked = len(received)
    again = fairtalk.respond(pairs, model=f"openai:{url}#bot", store=store)
    assert len(received) == n_asked and again.summary.n_cached == 80  # served from the store, reasons and all
    assert again.responses.finish_reasons == reasons
    result = fairtalk.score(again.responses, axis=lexicon, measures=["length"])
    row = result.measure("hit_token_limit")
    assert (row.a, row.b) == (0.5, 0.25) and row.p_paired < 0.01
    fairtalk.write_responses(again.responses, tmp_path / "responses.jsonl")
    assert fairtalk.read_responses(tmp_path / "responses.jsonl").finish_reasons == reasons
    plain = fairtalk.score(["a b", "c d", "e"], ["a", "b c", "d e f"], axis="gender", measures=["length"])
    assert "hit_token_limit" not in [m.name for m in plain.measures]  # a model that does not say why it stopped gets no such key


class _Lister(_Chat):
    """Also lists its models (GET /models), as vLLM, Ollama and llama.cpp do; a wrong key gets HTTP 401."""

    def do_GET(self) -> None:  # noqa: N802
        ok = self.headers.get("Authorization") != "Bearer wrong"
        body = json.dumps({"object": "list", "data": [{"id": "llama-3-8b"}, {"id": "qwen"}]} if ok else {"error": "no"}).encode()
        self.send_response(200 if ok else 401)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def test_a_server_that_is_down_or_lacks_the_model_is_one_clear_line_before_any_pair(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    import time

    received: list[dict] = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), type("Handler", (_Lister,), {"received": received}))
    threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    refused_port = RefusedPort()  # refuses connections, and no other test takes the port, until the finally below
    down = refused_port.url()
    corpus = tmp_path / "chats.txt"
    corpus.write_text("".join(f"he told me about trip {i}\n" for i in range(10)))
    args = ["audit", "--corpus", str(corpus), "--axis", "gender", "-o", str(tmp_path / "r")]
    try:
        started = time.monotonic()
        done = runner.invoke(app, [*args, "--model", f"openai:{down}#llama-3-8b"])
        assert done.exit_code == 2 and "cannot reach the server" in done.output and "Traceback" not in done.output
        assert time.monotonic() - started < 15 and not (tmp_path / "r").exists()  # no retries, no pairs, no empty store
        wrong = runner.invoke(app, [*args, "--model", f"openai:{url}#llama-3-8"])
        assert wrong.exit_code == 2 and "does not serve a model named 'llama-3-8'" in wrong.output
        assert "did you mean 'llama-3-8b'" in wrong.output and received == []  # nothing was generated
        monkeypatch.setenv("WRONG_KEY", "wrong")
        refused = runner.invoke(app, [*args, "--model", f"openai:{url}#qwen?api_key_env=WRONG_KEY"])
        assert refused.exit_code == 2 and "refused the request (HTTP 401)" in refused.output
        fine = runner.invoke(app, [*args, "--model", f"openai:{url}#qwen", "--pairs", "4"])
        assert fine.exit_code in (0, 1), fine.output
        assert len(received) == 8
    finally:
        httpd.shutdown()
        httpd.server_close()
        refused_port.close()


def test_stop_strings_and_the_repetition_penalty_are_sent_and_greedy_is_recorded_as_sent(chat, tmp_path) -> None:  # noqa: ANN001
    url, received = chat
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(
        json.dumps({"id": "p1", "axis": "gender", "a": "he called", "b": "she called", "original_side": "a", "swaps": []}) + "\n"
    )
    done = runner.invoke(
        app,
        [
            "respond",
            "--pairs",
            str(pairs),
            "--model",
            f"openai:{url}#bot",
            "--stop",
            "\\n",
            "--stop",
            "User:",
            "--repetition-penalty",
            "1.0",
            "-o",
            str(tmp_path / "r.jsonl"),
        ],
    )
    assert done.exit_code == 0, done.output
    assert all(p["stop"] == ["\n", "User:"] and p["repetition_penalty"] == 1.0 == p["repeat_penalty"] for p in received)
    assert all(p["temperature"] == 0.0 for p in received)
    received.clear()
    corpus = tmp_path / "chats.txt"
    corpus.write_text("".join(f"he told me about trip {i}\n" for i in range(6)))
    audited = runner.invoke(
        app,
        [
            "audit",
            "--corpus",
            str(corpus),
            "--axis",
            "gender",
            "--model",
            f"openai:{url}#bot",
            "--stop",
            "User:",
            "-o",
            str(tmp_path / "report"),
        ],
    )
    assert audited.exit_code in (0, 1), audited.output
    decoding = json.loads((tmp_path / "report" / "run.json").read_text())["settings"]
    assert decoding["temperature"] is None and decoding["stop"] == ["User:"] and decoding["repetition_penalty"] is None
    assert all("repetition_penalty" not in p for p in received)  # unset: the server's own default, said in the README
    shown = [
        re.search(r"decoding <code>(.*?)</code>", (tmp_path / "report" / page).read_text()).group(1)  # type: ignore[union-attr]
        for page in ("index.html", "gender/report.html")
    ]
    assert shown[0] == shown[1] and json.loads(html.unescape(shown[0])) == decoding  # every header: what was sent
    assert f"decoding {md_escape(html.unescape(shown[0]))}" in (tmp_path / "report" / "gender" / "report.md").read_text()
