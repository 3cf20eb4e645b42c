"""A ``python:`` model reads a multi-turn context as its transcript: one turn per line, no separator, no role marks.

docs/how-to/conversations.md promises it ("other models the transcript, one turn per line"), as
``builtin:echo``, ``hf:`` without a chat template and ``openai:`` completion mode do. A single-turn
context reaches the function byte for byte as before, so its fingerprint, and the run store's
answers for it, are unchanged.
"""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from fairtalk.cli import app
from fairtalk.models import DecodingSettings, as_responder, batched, load_responder
from fairtalk.records import ASSISTANT_MARK, TURN_SEPARATOR, USER_MARK, join_turns

S = DecodingSettings()
runner = CliRunner()
ALTERNATING = join_turns(["hi, my son is ill", "oh no, how is he?", "he is better"])
MARKED = join_turns(["quick question", "my mom says hi"], roles=["user", "user"])
SINGLE = ["how was your weekend?", "two\nlines already", "\u00e9t\u00e9 \u2014 ok", " padded "]
CONTROL = (TURN_SEPARATOR, USER_MARK, ASSISTANT_MARK)


def test_every_call_path_gets_the_transcript_one_turn_per_line() -> None:
    seen: list[str] = []

    def single(text: str) -> str:
        seen.append(text)
        return text

    @batched
    def many(texts: list[str]) -> list[str]:
        seen.extend(texts)
        return list(texts)

    async def waits(text: str) -> str:
        seen.append(text)
        return text

    contexts = [ALTERNATING, MARKED]
    want = ["hi, my son is ill\noh no, how is he?\nhe is better", "quick question\nmy mom says hi"]
    for fn in (single, many, waits):
        model = as_responder(fn)
        for answers in (
            model.respond(contexts, S, seeds=[0, 0]),
            model.respond_each(contexts, S, seeds=[0, 0]),
            [item for _, item in sorted(model.respond_stream(contexts, S, seeds=[0, 0]))],
        ):
            assert answers == want, fn.__name__
        assert seen == want * 3, fn.__name__
        seen.clear()


def test_a_single_turn_context_reaches_the_function_byte_for_byte(tmp_path: Path) -> None:
    seen: list[str] = []

    def reply(text: str) -> str:
        seen.append(text)
        return "ok"

    as_responder(reply).respond(SINGLE, S, seeds=[0] * len(SINGLE))
    assert seen == SINGLE
    bot = tmp_path / "bot.py"
    bot.write_text("def reply(text):\n    return text\n")
    model = load_responder(f"python:{bot}:reply")
    # The fingerprint (the run store's key) holds what it held before: a store of single-turn answers still serves.
    head, _, settings = model.fingerprint.partition(" ")
    assert head == f"python:{bot}:reply" and sorted(json.loads(settings)) == ["batched", "code"]


def test_an_audit_of_conversations_sends_and_reports_no_control_characters(tmp_path: Path) -> None:
    log = tmp_path / "inputs.jsonl"
    bot = tmp_path / "bot.py"
    bot.write_text(
        "import json\n"
        f"LOG = {str(log)!r}\n"
        "def reply(text):\n"
        "    with open(LOG, 'a', encoding='utf-8') as f:\n"
        "        f.write(json.dumps(text) + '\\n')\n"
        "    return text\n"
    )
    corpus = tmp_path / "chats.jsonl"
    rows = []
    for i, (a, b) in enumerate([("son", "daughter"), ("brother", "sister"), ("father", "mother")] * 4):
        user_user = [{"role": "user", "content": f"trip {i}: my {a} called"}, {"role": "user", "content": "he is late"}]
        alternating = [
            {"role": "user", "content": f"visit {i}: my {b} is here"},
            {"role": "assistant", "content": "nice!"},
            {"role": "user", "content": "she brought cake"},
        ]
        rows += [{"messages": user_user}, {"messages": alternating}]
    corpus.write_text("".join(json.dumps(row) + "\n" for row in rows))
    out = tmp_path / "out"
    done = runner.invoke(
        app,
        ["audit", "--model", f"python:{bot}:reply", "--corpus", f"jsonl:{corpus}", "--axis", "gender", "-o", str(out)]
        + ["--measures", "offense,length", "--resamples", "200", "--quiet"],
    )
    assert done.exit_code == 0, done.output
    inputs = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert any(text.count("\n") == 2 for text in inputs) and any(text.count("\n") == 1 for text in inputs)
    assert not [text for text in inputs if any(c in text for c in CONTROL)]
    for name in ("report.md", "results.json"):
        written = (out / "gender" / name).read_text(encoding="utf-8")
        assert not [c for c in CONTROL if c in written or json.dumps(c)[1:-1] in written], name


def test_a_store_of_answers_given_to_the_raw_context_serves_no_multi_turn_answer_but_every_single_turn_one(
    tmp_path: Path,
) -> None:
    """Before the transcript, a python: function got the raw context, and the store keyed its answer on that.

    The store keys a ``python:`` model's answers on the transcript it gets, so such an old answer to a
    multi-turn context is asked again, never served as the answer to the transcript; a single-turn
    context's key is what it was.
    """
    from fairtalk.store import CachingResponder, RunStore, context_hash

    asked: list[str] = []

    def reply(text: str) -> str:
        asked.append(text)
        return "new: " + text

    model = as_responder(reply)
    with RunStore(tmp_path / "store.sqlite") as store:
        run = store.run_id(model.fingerprint, S)
        old = [(context_hash(c), 0, c, f"old: {c}", None) for c in (ALTERNATING, SINGLE[0])]  # keyed on the raw context
        store.write(run, old)
        answers = CachingResponder(model, store).respond([ALTERNATING, SINGLE[0]], S, seeds=[0, 0])
    assert answers == ["new: hi, my son is ill\noh no, how is he?\nhe is better", f"old: {SINGLE[0]}"]
    assert asked == ["hi, my son is ill\noh no, how is he?\nhe is better"]  # before: nothing asked, the old answer served
