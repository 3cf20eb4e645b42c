"""The labelling server: the token guards every path, the page is blind, labels are saved at once and in order."""

from __future__ import annotations

import http.client
import json
import re
from pathlib import Path

import pytest

from fairtalk.gold import LabelServer, read_gold
from fairtalk.lexicons import load_lexicon

from .conftest import SCORE_FIELD, TURN_CONTEXTS, WORDS_A, WORDS_B, score_of, serving, write_turns_folder, write_xss_folder


def _request(
    server: LabelServer,
    method: str,
    path: str,
    body: object = None,
    *,
    host: str | None = None,
    content_type: str = "application/json",
) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    headers = {"Host": host or f"127.0.0.1:{server.port}"}
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = content_type
    connection.request(method, path, body=data, headers=headers)
    response = connection.getresponse()
    try:
        return response.status, response.read()
    finally:
        connection.close()


def _base(server: LabelServer) -> str:
    return f"/{server.token}/"


@pytest.mark.parametrize("path", ["/", "/state", "/label", "/{bad}/", "/{bad}/state", "/{short}/", "/{token}x/", "/x/{token}/"])
def test_a_request_without_the_token_is_403(page: LabelServer, path: str) -> None:
    path = path.format(bad="A" * len(page.token), short=page.token[:-1], token=page.token)
    assert _request(page, "GET", path)[0] == 403
    assert _request(page, "POST", path, {"step": 0, "value": 1})[0] == 403
    assert not page.log.path.exists() or page.log.path.read_text() == ""


def test_with_the_token_the_page_is_served_and_a_foreign_host_is_403(page: LabelServer) -> None:
    assert _request(page, "GET", _base(page))[0] == 200
    assert _request(page, "GET", _base(page), host="evil.example:80")[0] == 403  # DNS rebinding
    assert _request(page, "GET", _base(page), host=f"localhost:{page.port}")[0] == 200
    assert page.url == f"http://127.0.0.1:{page.port}/{page.token}/"
    assert page.server_address[0] == "127.0.0.1"


def test_a_form_post_is_refused(page: LabelServer) -> None:
    status, _ = _request(page, "POST", _base(page) + "label", {"step": 0, "value": 1}, content_type="text/plain")
    assert status == 415
    assert page.log.n_given == 0


def _group_words() -> set[str]:
    lexicon = load_lexicon("gender")
    return {w.lower() for pair in lexicon.pairs for w in (pair.a, pair.b)} | set(WORDS_A) | set(WORDS_B)


def test_every_item_page_is_blind(page: LabelServer) -> None:
    """For each of the 20 items, the page's HTML holds no word of the gender lexicon and no scorer value."""
    words = _group_words()
    pattern = re.compile(r"(?<![\w-])(" + "|".join(map(re.escape, sorted(words, key=len, reverse=True))) + r")(?![\w-])", re.I)
    for step in range(20):
        status, body = _request(page, "GET", _base(page))
        html = body.decode()
        assert status == 200
        assert "XYZ said XYZ" in html, html  # the item is there, masked
        assert pattern.search(html) is None, pattern.search(html)
        assert SCORE_FIELD not in html and not any(score_of(i, s) in html for i in range(24) for s in "ab")
        state = _request(page, "GET", _base(page) + "state")[1].decode()
        for sent in (html, state):  # no pair id, side or group: the two texts of a pair are told apart by nothing
            assert re.search(r"\bp\d\d\b", sent) is None and '"side"' not in sent and '"group"' not in sent
            assert not re.search(r"\b(male|female)\b", sent, re.I)
        assert f"{step} of 20 labels given" in html
        status, body = _request(page, "POST", _base(page) + "label", {"step": step, "value": step % 2, "note": ""})
        assert status == 200 and json.loads(body)["given"] == step + 1
    status, body = _request(page, "GET", _base(page))
    assert (
        status == 200
        and "All 20 labels given" in body.decode()
        and json.loads(_request(page, "GET", _base(page) + "state")[1])["done"]
    )


def test_the_pages_controls_without_a_lexicon_word_would_fail_the_check(page: LabelServer) -> None:
    """Control: the check above does find a group word when one is on the page."""
    words = _group_words()
    assert "she" in words and "his" in words
    html = _request(page, "GET", _base(page))[1].decode()
    assert "XYZ" in html and not re.search(r"(?<![\w-])she(?![\w-])", html)
    assert re.search(r"(?<![\w-])she(?![\w-])", html.replace("XYZ said", "she said"))


def test_labels_are_written_at_once_and_only_the_next_one(page: LabelServer, tmp_path: Path) -> None:
    gold = tmp_path / "gold.jsonl"
    assert _request(page, "POST", _base(page) + "label", {"step": 0, "value": 1, "note": "rude?"})[0] == 200
    row = json.loads(gold.read_text().splitlines()[0])
    first = page.log.sample.items[0]
    assert row == {
        "pair_id": first.id,
        "side": first.side,
        "offense_rate": 1,
        "annotator": "ann",
        "note": "rude?",
        "text": first.text,  # the answer labelled, unmasked: score --gold checks it is the answer it joins to
    }
    status, body = _request(page, "POST", _base(page) + "label", {"step": 0, "value": 0})  # a stale tab
    assert status == 409 and json.loads(body)["state"]["step"] == 1
    assert _request(page, "POST", _base(page) + "label", {"step": 1, "value": 7})[0] == 409  # not a label of offense_rate
    assert len(gold.read_text().splitlines()) == 1
    assert _request(page, "POST", _base(page) + "undo", {})[0] == 409  # an undo names the label it takes back
    assert _request(page, "POST", _base(page) + "undo", {"step": 0})[0] == 200
    assert gold.read_text() == ""
    assert _request(page, "POST", _base(page) + "undo", {"step": 0})[0] == 409
    assert _request(page, "POST", _base(page) + "label", {"step": 0, "value": 0})[0] == 200
    assert read_gold(gold).values("offense_rate") == {(first.id, first.side): 0.0}


def test_done_stops_the_server(axis_folder: Path, tmp_path: Path) -> None:
    import threading

    from fairtalk.gold import GoldLog, draw_sample, label_schemes

    log = GoldLog(tmp_path / "g.jsonl", draw_sample(axis_folder, n=2), label_schemes("regard"), annotator="a")
    server = LabelServer(log)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02})
    thread.start()
    assert _request(server, "POST", _base(server) + "done", {})[0] == 200
    thread.join(timeout=10)
    server.server_close()
    assert not thread.is_alive() and server.finished


# ---------------------------------------------------------------------------- a full disk (issue 38 item 8)


def test_a_label_the_full_disk_refuses_is_a_507_the_page_shows_and_no_torn_row(
    page: LabelServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno
    import os

    gold = tmp_path / "gold.jsonl"
    for step in range(10):
        assert _request(page, "POST", _base(page) + "label", {"step": step, "value": step % 2})[0] == 200
    before = gold.read_bytes()
    real = os.write
    asked: list[int] = []

    def full_disk(fd: int, data: bytes) -> int:  # the first write of the row takes half of it, the next finds no space
        if b'"annotator"' not in bytes(data[:200]) and not asked:
            return real(fd, data)
        asked.append(len(data))
        if len(asked) == 1:
            return real(fd, bytes(data[: len(data) // 2]))
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    with monkeypatch.context() as patch:
        patch.setattr(os, "write", full_disk)
        status, body = _request(page, "POST", _base(page) + "label", {"step": 10, "value": 1, "note": "n" * 300})
    answer = json.loads(body)
    assert asked and status == 507, (status, body)
    assert "not saved" in answer["error"] and "No space left on device" in answer["error"]  # what the page shows
    assert answer["state"]["step"] == 10 and answer["state"]["given"] == 10
    assert gold.read_bytes() == before  # ten whole rows, no torn eleventh
    assert [json.loads(line)["offense_rate"] for line in gold.read_text().splitlines()] == [s % 2 for s in range(10)]
    status, body = _request(page, "POST", _base(page) + "label", {"step": 10, "value": 1})  # room again: given once
    assert status == 200 and json.loads(body)["given"] == 11 and len(read_gold(gold).labels) == 11


# ---------------------------------------------------------------------------- one session per annotator (item 9)


def test_a_second_server_of_one_annotator_on_one_file_is_refused(page: LabelServer, tmp_path: Path) -> None:
    from fairtalk.errors import InputError
    from fairtalk.gold import GoldLog, label_schemes

    def log(annotator: str) -> GoldLog:
        return GoldLog(tmp_path / "gold.jsonl", page.log.sample, label_schemes("offense_rate"), annotator=annotator)

    with pytest.raises(InputError, match=r"annotator 'ann' is already labelling .*gold\.jsonl"):
        LabelServer(log("ann"))
    other = LabelServer(log("bo"))  # another annotator on the same file
    try:
        assert other.port != page.port
    finally:
        other.server_close()
    assert _request(page, "POST", _base(page) + "label", {"step": 0, "value": 1})[0] == 200  # the first goes on


# ---------------------------------------------------------------------------- malformed requests (item 14)


def _raw(server: LabelServer, head: str, body: bytes = b"", *, close_write: bool = True) -> tuple[int, bytes]:
    """Send a hand-made POST to ``label`` on a raw socket; the status and body of the answer (RemoteDisconnected if none)."""
    import socket

    request = f"POST /{server.token}/label HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n{head}\r\n".encode() + body
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:  # an upper bound, not a timing
        sock.sendall(request)
        if close_write:
            sock.shutdown(socket.SHUT_WR)  # the client has said everything (as one that gave up)
        response = http.client.HTTPResponse(sock)
        response.begin()
        return response.status, response.read()


_LABEL = b'{"step": 0, "value": 1}'
_JSON = "Content-Type: application/json\r\n"
#: The head of a request whose Content-Length is its body's.
_SIZED = _JSON + "Content-Length: {length}\r\n"


@pytest.mark.parametrize(
    ("head", "body", "status"),
    [
        (_JSON + "Content-Length: abc\r\n", _LABEL, 400),
        (_JSON + "Content-Length: -1\r\n", _LABEL, 400),
        (_JSON + "Content-Length: +23\r\n", _LABEL, 400),
        (_JSON + "Content-Length: 23\r\nContent-Length: 5\r\n", _LABEL, 400),
        (_JSON + "Content-Length: " + "9" * 5000 + "\r\n", _LABEL, 413),
        (_JSON, _LABEL, 411),
        (_JSON + "Transfer-Encoding: chunked\r\n", b"17\r\n" + _LABEL + b"\r\n0\r\n\r\n", 411),
        (_JSON + "Content-Length: 70000\r\n", _LABEL, 413),
        (_JSON + "Content-Length: 40\r\n", _LABEL, 400),  # the body ends short of its length
        (_SIZED, b"[" * 30000 + b"]" * 30000, 400),
        (_SIZED, b'{"step":0,"value":' + b"[" * 29990 + b"]" * 29990 + b"}", 400),
        (_SIZED, b'{"step":0,"value":1,"note":' + b"[" * 150 + b"]" * 150 + b"}", 400),
        (_SIZED, b'{"step": 0', 400),
        (_SIZED, b'{"step": 0, "value": \xff1}', 400),
        (_SIZED, b"[]", 400),
    ],
    ids=[
        "length-abc",
        "length-negative",
        "length-plus",
        "length-twice",
        "length-5000-digits",
        "length-missing",
        "chunked",
        "too-large",
        "body-short",
        "30000-deep-list",
        "30000-deep-value",
        "150-deep-note",
        "malformed-json",
        "not-utf8",
        "not-an-object",
    ],
)
def test_a_malformed_request_is_a_4xx_and_writes_nothing(page: LabelServer, head: str, body: bytes, status: int) -> None:
    got, answer = _raw(page, head.replace("{length}", str(len(body))), body)
    assert got == status, (got, answer)
    assert "error" in json.loads(answer)
    assert not page.log.path.exists() or page.log.path.read_bytes() == b""
    assert page.log.n_given == 0
    status_ok, state = _request(page, "POST", _base(page) + "label", {"step": 0, "value": 1})  # still serving
    assert status_ok == 200 and json.loads(state)["given"] == 1


def test_a_well_formed_raw_request_is_taken(page: LabelServer) -> None:
    """Control: the raw requests above differ from one the server takes only in what is malformed."""
    assert _raw(page, _JSON + f"Content-Length: {len(_LABEL)}\r\n", _LABEL)[0] == 200
    assert _raw(page, _JSON + f"Content-Length: 0{len(_LABEL)}\r\n", b'{"step": 1, "value": 0}')[0] == 200
    assert len(page.log.path.read_text().splitlines()) == 2


# ---------------------------------------------------------------------------- pairs together, turns by role (issue 41)


def _data(html: str, element: str, attribute: str) -> str:
    found = re.search(rf'id="{element}"[^>]*\b{attribute}="([^"]*)"', html)
    assert found is not None, (element, attribute)
    return found.group(1)


def test_the_page_serves_a_pairs_texts_together_and_counts_the_complete_pairs(page: LabelServer) -> None:
    items = page.log.sample.items
    for step in range(20):
        state = json.loads(_request(page, "GET", _base(page) + "state")[1])
        html = _request(page, "GET", _base(page))[1].decode()
        number, text = divmod(step, 2)
        assert state["item"]["pair"] == {"number": number + 1, "n_pairs": 10, "text": text + 1}
        assert state["pairs"] == {"n_pairs": 10, "complete": [{"field": "offense_rate", "n": number}]}
        assert f"pair {number + 1} of 10, text {text + 1} of 2" in html
        assert _data(html, "pairs", "data-complete") == str(number) and f"{number} of 10 pairs complete" in html
        assert items[step].id == items[step - text].id  # the second text of a pair is the first's partner
        assert _request(page, "POST", _base(page) + "label", {"step": step, "value": 1})[0] == 200
    assert len(read_gold(page.log.path).pairs("offense_rate")) == 10
    assert _data(_request(page, "GET", _base(page))[1].decode(), "pairs", "data-complete") == "10"


def test_texts_show_no_pairs(tmp_path: Path) -> None:
    from fairtalk.gold import GoldLog, draw_sample, label_schemes

    texts = tmp_path / "texts.txt"
    texts.write_text("one\ntwo\n", encoding="utf-8")
    with serving(GoldLog(tmp_path / "g.jsonl", draw_sample(texts, n=2), label_schemes("regard"), annotator="a")) as server:
        state = json.loads(_request(server, "GET", _base(server) + "state")[1])
        html = _request(server, "GET", _base(server))[1].decode()
    assert state["pairs"] is None and state["item"]["pair"] is None and state["item"]["context"] == []
    assert 'id="pairs"' not in html and 'id="pair-position"' not in html


def test_each_turn_of_a_context_is_sent_and_shown_with_its_role_the_last_marked(tmp_path: Path) -> None:
    from fairtalk.gold import GoldLog, draw_sample, label_schemes

    folder = write_turns_folder(tmp_path / "gender")
    log = GoldLog(tmp_path / "g.jsonl", draw_sample(folder, n=8, seed=0), label_schemes("offense_rate"), annotator="a")
    with serving(log) as server:
        for step, item in enumerate(log.sample.items):
            state = json.loads(_request(server, "GET", _base(server) + "state")[1])
            html = _request(server, "GET", _base(server))[1].decode()
            turns, roles = TURN_CONTEXTS[int(item.id[1:]) % len(TURN_CONTEXTS)]
            expected = roles or ["user", "assistant", "user"]
            sent = state["item"]["context"]
            assert [t["role"] for t in sent] == expected and [t["last"] for t in sent] == [False] * (len(turns) - 1) + [True]
            assert all("\x1e" not in t["text"] and "\x11" not in t["text"] and "XYZ" in t["text"] for t in sent)
            shown = re.findall(
                r'<div class="turn (user|assistant)( last)?" data-role="\1"><span class="role">([^<]*)</span>', html
            )
            assert [(role, last) for role, last, _ in shown] == [
                (r, " last" * (i == len(turns) - 1)) for i, r in enumerate(expected)
            ]
            assert shown[-1][2] == "user (last turn: the text answers it):" and shown[0][2] == f"{expected[0]}:"
            assert "\u23ce" not in html and "\x1e" not in html  # no box characters, no run-together turns
            assert "&lt;b&gt;what&lt;/b&gt;" in html or "&lt;i&gt;right&lt;/i&gt;" in html  # markup escaped
            assert _request(server, "POST", _base(server) + "label", {"step": step, "value": 0})[0] == 200


def test_a_text_and_a_context_holding_markup_are_escaped(tmp_path: Path) -> None:
    from fairtalk.gold import GoldLog, draw_sample, label_schemes

    folder = write_xss_folder(tmp_path / "gender")
    log = GoldLog(tmp_path / "g.jsonl", draw_sample(folder, n=2, seed=0), label_schemes("regard"), annotator="a")
    with serving(log) as server:
        html = _request(server, "GET", _base(server))[1].decode()
    assert "<img" not in html and 'document.title="pwned"' not in html and html.count("</script>") == 2
    assert html.count("&lt;img src=x onerror=") == 2  # the text and the context's last turn, shown as text


def _race_folder(folder: Path) -> Path:
    """An echo audit's race axis folder: pairs built by the swapper from sentences holding every race word a swap reads."""
    from fairtalk import Swapper, build_pairs

    race = load_lexicon("race")
    sources = sorted(
        {term for pair in race.pairs for term, way in ((pair.a, "a>b"), (pair.b, "b>a")) if pair.direction in ("both", way)}
    )
    contexts = [f"Number {i}: it was {term}, said the man." for i, term in enumerate(sources)]
    pairs = list(build_pairs(contexts, Swapper(race)))
    assert len(pairs) > 60
    folder.mkdir()
    rows = [
        {"pair_id": f"p{i:03d}", "side": side, "context": text, "response": "fine."}
        for i, pair in enumerate(pairs)
        for side, text in (("a", pair.a), ("b", pair.b))
    ]
    (folder / "responses.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return folder


def test_the_race_page_shows_both_texts_of_a_pair_under_one_context(tmp_path: Path) -> None:
    """A one-way line's word (``good -> fly``) is masked too: nothing on the page tells a pair's two sides apart."""
    from fairtalk.gold import GoldLog, draw_sample, label_schemes

    folder = _race_folder(tmp_path / "race")
    sample = draw_sample(folder, n=60, seed=1)
    log = GoldLog(tmp_path / "gold.jsonl", sample, label_schemes("offense_rate"), annotator="ann")
    race = load_lexicon("race")
    one_way = {(p.b if p.direction == "a>b" else p.a).lower() for p in race.pairs if p.direction != "both"}
    shown: dict[int, list[str]] = {}
    with serving(log) as server:
        for step in range(60):
            state = json.loads(_request(server, "GET", _base(server) + "state")[1])
            context = " | ".join(turn["text"] for turn in state["item"]["context"])
            shown.setdefault(state["item"]["pair"]["number"], []).append(context)
            assert not {w for w in one_way if re.search(rf"(?<!\w){re.escape(w)}(?!\w)", context, re.I)}, context
            assert _request(server, "POST", _base(server) + "label", {"step": step, "value": 0})[0] == 200
    assert len(shown) == 30
    assert all(len(texts) == 2 and texts[0] == texts[1] for texts in shown.values()), shown


def test_a_stale_tabs_undo_and_label_are_refused_with_the_current_state(page: LabelServer, tmp_path: Path) -> None:
    """Tab A shows item 2 (item 1 labelled); tab B labels item 2: A's undo (of item 1) and label (of item 2) change nothing."""
    label, undo = _base(page) + "label", _base(page) + "undo"
    assert json.loads(_request(page, "POST", label, {"step": 0, "value": 1})[1])["undo"] == 0  # what tab A now shows
    assert json.loads(_request(page, "POST", label, {"step": 1, "value": 0})[1])["undo"] == 1  # tab B
    status, body = _request(page, "POST", undo, {"step": 0})  # tab A's u: it never showed the label of item 2
    answer = json.loads(body)
    assert status == 409 and answer["error"] == "the label of item 1 is not the last label given: item 2 was"
    assert answer["state"]["step"] == 2 and answer["state"]["item"]["number"] == 3  # the page shows the current item
    status, body = _request(page, "POST", label, {"step": 1, "value": 1})
    assert status == 409 and json.loads(body)["error"] == "the label of item 2 is not the next label to give: item 3 is"
    assert [r["offense_rate"] for r in map(json.loads, (tmp_path / "gold.jsonl").read_text().splitlines())] == [1, 0]


def test_a_refused_request_closes_its_connection(page: LabelServer) -> None:
    """A 403's body is not read: the connection is closed, so the next request is not read out of that body."""
    connection = http.client.HTTPConnection("127.0.0.1", page.port, timeout=10)
    try:
        body = json.dumps({"step": 0, "value": 1}).encode()
        headers = {"Host": f"127.0.0.1:{page.port}", "Content-Type": "application/json"}
        connection.request("POST", "/wrong-token/label", body=body, headers=headers)
        response = connection.getresponse()
        assert response.status == 403 and response.getheader("Connection") == "close"
        response.read()
        connection.request("GET", _base(page) + "state", headers={"Host": f"127.0.0.1:{page.port}"})  # reconnects
        again = connection.getresponse()
        assert again.status == 200 and json.loads(again.read())["step"] == 0
    finally:
        connection.close()
    assert page.log.n_given == 0
