"""Functions are models: ``respond``, ``audit`` and ``similarity_test`` take a plain, a batched and an async function."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

import fairtalk
from audit_toys import write_corpus
from fairtalk import Pair, ResponderError, SpecError
from fairtalk.errors import ResponderTimeout
from fairtalk.models import DecodingSettings, Responder, as_responder, batched, load_responder
from fairtalk.store import RunStore

S = DecodingSettings()


def _pairs(n: int = 10) -> list[Pair]:
    return [Pair(f"p{i}", "gender", f"he likes tea {i}", f"she likes tea {i}", "a") for i in range(n)]


def shout(text: str) -> str:
    """One context -> one reply."""
    return text.upper()


@batched
def shout_all(texts: list[str]) -> list[str]:
    """A list of contexts -> one reply each, in order."""
    shout_all.calls.append(len(texts))  # type: ignore[attr-defined]
    return [t.upper() for t in texts]


shout_all.calls = []  # type: ignore[attr-defined]

_LOCK = threading.Lock()
_AT_ONCE = {"now": 0, "most": 0}


async def shout_later(text: str) -> str:
    """An async model: awaited several contexts at once."""
    with _LOCK:
        _AT_ONCE["now"] += 1
        _AT_ONCE["most"] = max(_AT_ONCE["most"], _AT_ONCE["now"])
    await asyncio.sleep(0.02)
    with _LOCK:
        _AT_ONCE["now"] -= 1
    return text.upper()


@pytest.mark.parametrize("model", [shout, shout_all, shout_later], ids=["plain", "batched", "async"])
def test_respond_takes_every_form_of_function(model: object) -> None:
    generation = fairtalk.respond(_pairs(), model=model)
    by_side = {(r.pair_id, r.side): r.response for r in (*generation.responses.a, *generation.responses.b)}
    assert by_side[("p3", "a")] == "HE LIKES TEA 3" and by_side[("p3", "b")] == "SHE LIKES TEA 3"
    assert generation.summary.n_generated == 20 and generation.summary.n_errors == 0
    assert generation.summary.model.startswith(f"python:{__name__}:{model.__name__} ")  # type: ignore[attr-defined]


def test_a_batched_function_is_called_per_batch_and_an_async_one_concurrently() -> None:
    shout_all.calls.clear()  # type: ignore[attr-defined]
    fairtalk.respond(_pairs(), model=shout_all, batch_size=8)
    assert shout_all.calls == [8, 8, 4]  # type: ignore[attr-defined]
    _AT_ONCE["most"] = 0
    generation = fairtalk.respond(_pairs(), model=shout_later, model_args={"max_concurrency": 4})
    assert 1 < _AT_ONCE["most"] <= 4
    assert generation.summary.max_concurrency == 4 and generation.summary.max_in_flight == _AT_ONCE["most"]
    assert as_responder(shout_all).batched and not as_responder(shout).batched
    assert as_responder(shout, batched=True).batched  # the option says so too, as python:...?batched=true does


def test_a_functions_answers_are_resumed_from_the_store(tmp_path: Path) -> None:
    store = tmp_path / "runs.sqlite"
    first = fairtalk.respond(_pairs(), model=shout_later, store=store)
    again = fairtalk.respond(_pairs(), model=shout_later, store=store)
    assert first.summary.n_generated == 20 and (again.summary.n_cached, again.summary.n_generated) == (20, 0)
    assert again.summary.model == first.summary.model
    with RunStore(store) as kept:
        assert kept.count() == 20


def test_a_functions_fingerprint_is_the_same_in_another_process(tmp_path: Path) -> None:
    (tmp_path / "bot.py").write_text("def reply(text):\n    return text[::-1]\n")
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(tmp_path)!r})
        import bot
        from fairtalk.models import as_responder
        print(as_responder(bot.reply).fingerprint)
    """)
    runs = [subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True) for _ in range(2)]
    assert runs[0].stdout == runs[1].stdout and runs[0].stdout.startswith('python:bot:reply {"batched":false,"code":"')
    (tmp_path / "bot.py").write_text("def reply(text):\n    return text\n")  # an edit changes the fingerprint
    edited = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert edited.stdout != runs[0].stdout
    assert load_responder(f"python:{tmp_path / 'bot.py'}:reply").fingerprint.split(" ")[1] == edited.stdout.split(" ")[1].strip()


def test_audit_takes_a_function(tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path)
    for model in (shout, shout_all, shout_later):
        run = fairtalk.audit(corpus=corpus, axes="gender", model=model, n_pairs=10, measures="length", n_resamples=200)
        assert run.model.startswith(f"python:{__name__}:{model.__name__} ")
        generation = run.axes["gender"].generation
        assert (generation.n_pairs, generation.n_generated, generation.n_errors) == (10, 20, 0)
        assert run.config["model"] == run.model  # run.json names the function by its fingerprint


def test_similarity_test_takes_a_function() -> None:
    result = fairtalk.similarity_test(_pairs(), model=shout, methods=("exact",))
    assert result.model.startswith(f"python:{__name__}:shout ")


def test_what_is_not_a_model_is_a_clear_spec_error() -> None:
    with pytest.raises(SpecError, match="model must be a spec string, a Responder or a function .*got int"):
        fairtalk.respond(_pairs(2), model=42)  # type: ignore[arg-type]
    with pytest.raises(SpecError, match="got the class Pair: pass an instance"):
        as_responder(Pair)
    with pytest.raises(SpecError, match="need a model spec or a function, not a Responder object"):
        as_responder(load_responder("builtin:echo"), timeout=3)
    with pytest.raises(SpecError, match="unknown option 'colour' for a function model"):
        as_responder(shout, colour="red")
    assert isinstance(as_responder(shout), Responder)


def test_an_async_functions_failures_and_timeouts_are_per_item() -> None:
    async def picky(text: str) -> str:
        if "bad" in text:
            raise ValueError("no")
        if "slow" in text:
            await asyncio.sleep(5)
        return text

    model = as_responder(picky, timeout=0.2)
    out = model.respond_each(["ok", "bad", "slow"], S, seeds=[0, 0, 0])
    assert out[0] == "ok"
    assert isinstance(out[1], ResponderError) and "raised ValueError: no" in str(out[1])
    assert isinstance(out[2], ResponderTimeout) and "the call was cancelled" in str(out[2])
    with pytest.raises(ResponderError, match="raised ValueError: no"):
        model.respond(["bad"], S, seeds=[0])


def test_an_async_function_gets_its_seed_and_a_lambda_is_named_by_its_line() -> None:
    async def seeded(text: str, seed: int) -> str:
        return f"{text}/{seed}"

    assert as_responder(seeded).respond(["a", "b"], S, seeds=[3, 4]) == ["a/3", "b/4"]
    line = sys._getframe().f_lineno
    first = as_responder(lambda t: t)
    second = as_responder(lambda t: t + "!")
    assert (
        first.fingerprint.split(" ")[0]
        == f"python:{__name__}:test_an_async_function_gets_its_seed_and_a_lambda_is_named_by_its_line.<locals>.<lambda>@{line + 1}"
    )
    assert first.fingerprint != second.fingerprint  # two lambdas of one file are two models
