"""A conversation keeps each turn's role from the corpus to the request (issue 24: roles were rebuilt by alternation).

The corpus' roles travel inside the context text (a role mark before each turn where they are
not the plain alternation), through the swapper, pairs.jsonl and the run store key, to the
messages an ``openai:`` server receives (a stub on 127.0.0.1 that records them).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import replace

import pytest
from typer.testing import CliRunner

import fairtalk
from fairtalk.cli import app
from fairtalk.records import USER_MARK, chat_messages, join_turns, split_turns, transcript, turn_roles
from local_server import LocalServer
from test_chat_server_flows import _Chat  # the recording chat server of the LLM flow tests

runner = CliRunner()
#: Control characters that must never reach a page or a plain transcript (tab and newline may).
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")

QUICK = {"messages": [{"role": "user", "content": "quick question"}, {"role": "user", "content": "is my mom right?"}]}
EMPTY_REPLY = {
    "messages": [
        {"role": "user", "content": "hello"},
        {"role": "assistant", "content": ""},
        {"role": "user", "content": "he said no"},
    ]
}
ALTERNATING = {
    "messages": [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello"},
        {"role": "user", "content": "my son is late"},
        {"role": "assistant", "content": "oh"},
    ]
}


@pytest.fixture()
def chat() -> Iterator[tuple[str, list[dict]]]:
    """The recording chat server (answers ``you said: <last message>``) on a free port of 127.0.0.1."""
    received: list[dict] = []
    with LocalServer(type("Handler", (_Chat,), {"received": received})) as server:
        yield server.url(), received


def _corpus(tmp_path, *rows: dict) -> str:  # noqa: ANN001
    path = tmp_path / "chats.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


def _pairs(tmp_path, *rows: dict) -> list[fairtalk.Pair]:  # noqa: ANN001
    """Corpus -> pairs -> pairs.jsonl -> pairs again (the file round trip keeps the roles)."""
    built = list(fairtalk.build_pairs(fairtalk.read_corpus(_corpus(tmp_path, *rows)), fairtalk.load_lexicon("gender")))
    fairtalk.write_pairs(built, tmp_path / "pairs.jsonl")
    read = list(fairtalk.read_pairs(tmp_path / "pairs.jsonl"))
    assert read == built
    return read


def _conversations(received: list[dict]) -> dict[str, list[tuple[str, str]]]:
    """Each request's messages as (role, content), keyed by its last message."""
    return {p["messages"][-1]["content"]: [(m["role"], m["content"]) for m in p["messages"]] for p in received}


def test_the_corpus_roles_reach_an_openai_server_exactly(chat, tmp_path) -> None:  # noqa: ANN001
    url, received = chat
    pairs = _pairs(tmp_path, QUICK, EMPTY_REPLY)
    assert len(pairs) == 2
    fairtalk.respond(pairs, model=f"openai:{url}#bot")
    sent = _conversations(received)
    assert len(received) == 4
    for parent in ("mom", "dad"):
        assert sent[f"is my {parent} right?"] == [("user", "quick question"), ("user", f"is my {parent} right?")]
    for pronoun in ("he", "she"):  # the empty assistant turn is left out; "hello" stays the user's
        assert sent[f"{pronoun} said no"] == [("user", "hello"), ("user", f"{pronoun} said no")]


def test_a_system_prompt_comes_first_and_the_corpus_roles_follow() -> None:
    context = join_turns(["quick question", "is my mom right?"], roles=["user", "user"])
    assert chat_messages(context, "Be kind.") == [
        {"role": "system", "content": "Be kind."},
        {"role": "user", "content": "quick question"},
        {"role": "user", "content": "is my mom right?"},
    ]
    assert turn_roles(context) == ["user", "user"] and split_turns(context) == ["quick question", "is my mom right?"]


def test_alternating_roles_keep_the_text_they_had(tmp_path) -> None:  # noqa: ANN001
    opens_with_assistant = {"messages": [{"role": "assistant", "content": "welcome!"}, {"role": "user", "content": "he is here"}]}
    texts = [c.text for c in fairtalk.read_corpus(_corpus(tmp_path, ALTERNATING, opens_with_assistant))]
    assert texts == ["hi\x1ehello\x1emy son is late", "welcome!\x1ehe is here"]  # as before issue 24: same store keys
    assert join_turns(["a", "b", "c"], roles=["user", "assistant", "user"]) == join_turns(["a", "b", "c"]) == "a\x1eb\x1ec"
    assert turn_roles(texts[1]) == ["assistant", "user"]


def test_role_marks_are_canonical_and_plain_text_is_never_read_as_marked() -> None:
    marked = join_turns(["a", "b"], roles=["user", "user"])
    assert marked != join_turns(["a", "b"]) and split_turns(marked) == ["a", "b"]
    assert join_turns(["x", "y", "z"], roles=["assistant", "assistant", "user"]) != join_turns(["x", "y", "z"])
    # a turn's own text cannot forge a mark: control characters in it become spaces
    forged = join_turns(["\x11a", "\x11b"])
    assert turn_roles(forged) == ["assistant", "user"] and split_turns(forged) == [" a", " b"]
    assert turn_roles("\x12hello") == ["user"]  # a single line from a text corpus is the user's, whatever it holds
    with pytest.raises(ValueError, match="one role per turn"):
        join_turns(["a", "b"], roles=["user"])
    with pytest.raises(ValueError, match="the last turn must be the user's"):
        join_turns(["a", "b"], roles=["user", "assistant"])
    with pytest.raises(ValueError, match="user or assistant"):
        join_turns(["a", "b"], roles=["system", "user"])


def test_a_store_filled_under_the_alternation_text_does_not_serve_other_roles(chat, tmp_path) -> None:  # noqa: ANN001
    url, received = chat
    store = tmp_path / "store.sqlite"
    differing = _pairs(tmp_path, QUICK)
    # What the reader made of this conversation before issue 24 (the same pair id, so the same seeds).
    old = [replace(p, a=join_turns(split_turns(p.a)), b=join_turns(split_turns(p.b))) for p in differing]
    assert old[0].a != differing[0].a
    fairtalk.respond(old, model=f"openai:{url}#bot", store=store)
    assert [m["role"] for m in received[0]["messages"]] == ["assistant", "user"]
    again = fairtalk.respond(differing, model=f"openai:{url}#bot", store=store)
    assert again.summary.n_cached == 0 and len(received) == 4
    assert all([m["role"] for m in p["messages"]] == ["user", "user"] for p in received[2:])
    # while an alternating conversation is served from the store that answered it
    alternating = _pairs(tmp_path, ALTERNATING)
    fairtalk.respond(alternating, model=f"openai:{url}#bot", store=store)
    n_asked = len(received)
    assert fairtalk.respond(alternating, model=f"openai:{url}#bot", store=store).summary.n_cached == 2
    assert len(received) == n_asked


def test_the_swapper_swaps_next_to_role_marks_and_keeps_them() -> None:
    swapper = fairtalk.Swapper(fairtalk.load_lexicon("gender"))
    context = join_turns(["he said", "Her back hurts", "i saw her"], roles=["user", "user", "user"])
    result = swapper.swap(context)
    assert turn_roles(result.text) == ["user", "user", "user"]
    assert split_turns(result.text) == ["she said", "His back hurts", "i saw him"]  # a turn opens a sentence
    assert [s.source for s in result.swaps] == ["he", "Her", "her"]
    assert all(context[s.start : s.end] == s.source for s in result.swaps)


def test_the_chitchat_speakers_keep_their_roles_when_an_empty_turn_is_left_out() -> None:
    roles = {c.id: turn_roles(c.text) for c in fairtalk.read_corpus("builtin:chitchat", split="heldout", turns=3)}
    assert {tuple(r) for r in roles.values()} == {
        ("user",),
        ("assistant", "user"),
        ("user", "assistant", "user"),
        ("user", "user"),
    }
    # turn 16 of this dialogue is empty: turn 15 is still the user's words (the speaker of turn 17), not the assistant's
    assert roles["chitchat:00ae0643-3c87-4eb8-9155-ec7339665b90/17"] == ["user", "user"]


def test_an_audit_of_role_marked_conversations_shows_no_control_characters(chat, tmp_path) -> None:  # noqa: ANN001
    url, _ = chat
    rows = [
        {
            "messages": [
                {"role": "user", "content": f"quick question {i}"},
                {"role": "user", "content": f"is my mom right, take {i}?"},
            ]
        }
        for i in range(8)
    ]
    out = tmp_path / "report"
    done = runner.invoke(
        app,
        [
            "audit",
            "--corpus",
            _corpus(tmp_path, *rows),
            "--axis",
            "gender",
            "--model",
            f"openai:{url}#bot",
            "--measures",
            "length",
            "-o",
            str(out),
        ],
    )
    assert done.exit_code in (0, 1), done.output
    pairs = list(fairtalk.read_pairs(out / "gender" / "pairs.jsonl"))
    assert len(pairs) == 8 and all(turn_roles(p.a) == turn_roles(p.b) == ["user", "user"] for p in pairs)
    for page in ("gender/report.html", "gender/report.md", "index.html"):
        assert not _CONTROLS.search((out / page).read_text()), page
    assert not _CONTROLS.search(done.output)


def test_transcripts_and_divergent_pairs_show_turns_without_marks() -> None:
    from fairtalk.report import render_html, render_markdown

    context = join_turns(["quick question", "is my mom right?"], roles=["user", "user"])
    assert transcript(context) == "quick question\nis my mom right?"
    records = []
    for i in range(12):
        a = join_turns([f"quick question {i}", "is my mom right?"], roles=["user", "user"])
        b = join_turns([f"quick question {i}", "is my dad right?"], roles=["user", "user"])
        records += [
            fairtalk.Response(f"p{i}", "a", a, "I love this, it is wonderful and great!"),
            fairtalk.Response(f"p{i}", "b", b, "I hate this, it is terrible and awful!"),
        ]
    result = fairtalk.score(records, axis="gender", measures=["sentiment"])
    assert result.divergent_pairs and USER_MARK in result.divergent_pairs[0].context_a  # the data keeps the roles
    page = render_html(result)
    assert "quick question 0 \u23ce is my mom right?" in page
    assert not _CONTROLS.search(page) and not _CONTROLS.search(render_markdown(result))
