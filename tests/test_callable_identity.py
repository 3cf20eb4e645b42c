"""A callable given as ``model=fn`` is identified by its state too: two models are never one, one store never serves another."""

from __future__ import annotations

import functools
import gc
import os
import subprocess
import sys
import textwrap
import weakref
from pathlib import Path

import pytest

import fairtalk
from audit_toys import write_corpus
from fairtalk import Pair, SpecError
from fairtalk.compare import compare_runs, same_model_configs
from fairtalk.config import AuditConfig
from fairtalk.errors import ResponderAborted
from fairtalk.models import as_responder, identity_unknown
from fairtalk.store import CachingResponder, RunStore
from identity_toys import Bot, CallbackBot, Counting, LockedBot, Memo, SlottedCounting, WordsBot, make_bot, plain, styled


def _pairs(n: int = 4) -> list[Pair]:
    return [Pair(f"p{i}", "gender", f"he likes tea {i}", f"she likes tea {i}", "a") for i in range(n)]


def _answers(generation: fairtalk.Generation) -> set[str]:
    return {r.response for r in (*generation.responses.a, *generation.responses.b)}


@pytest.mark.parametrize(
    ("first", "second", "answers"),
    [
        (Bot(2).reply, Bot(9).reply, ("w w", " ".join(["w"] * 9))),
        (functools.partial(styled, style="nice"), functools.partial(styled, style="rude"), ("that is nice", "that is rude")),
        (make_bot("."), make_bot(" you idiot"), ("That sounds nice.", "That sounds nice you idiot")),
    ],
    ids=["bound-methods", "partials", "closures"],
)
def test_two_callables_of_one_code_with_different_state_get_their_own_answers_from_one_store(
    tmp_path: Path, first: object, second: object, answers: tuple[str, str]
) -> None:
    store = tmp_path / "runs.sqlite"
    one = fairtalk.respond(_pairs(), model=first, store=store)
    two = fairtalk.respond(_pairs(), model=second, store=store)
    assert (_answers(one), _answers(two)) == ({answers[0]}, {answers[1]})
    assert two.summary.n_cached == 0 and two.summary.n_generated == 8
    assert one.summary.model.split(" ")[0] == two.summary.model.split(" ")[0]  # one name, two fingerprints
    assert one.summary.model != two.summary.model
    again = fairtalk.respond(_pairs(), model=first, store=store)  # the same state: resumed from the store
    assert (again.summary.n_cached, again.summary.n_generated, _answers(again)) == (8, 0, {answers[0]})


def test_a_plain_functions_fingerprint_is_what_it_was(tmp_path: Path) -> None:
    """The fingerprints fairtalk gave before state was read (pinned), so stores from then are still reused."""
    (tmp_path / "bot.py").write_text(
        "def reply(text):\n    return text[::-1]\n\n\nclass Bot:\n    def reply(self, text):\n        return text\n"
    )
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(tmp_path)!r})
        import bot
        from fairtalk.models import as_responder
        print(as_responder(bot.reply).fingerprint)
        print(as_responder(bot.Bot().reply).fingerprint)
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    assert out.splitlines() == [
        'python:bot:reply {"batched":false,"code":"d73807168a8b1dc0"}',
        'python:bot:Bot.reply {"batched":false,"code":"d73807168a8b1dc0"}',  # an instance with no attributes: no state
    ]
    assert '"state"' not in as_responder(plain).fingerprint


def test_the_state_is_read_the_same_in_every_process(tmp_path: Path) -> None:
    """Not from id() or addresses, nor in a set's order (which changes with the string hash seed)."""
    script = textwrap.dedent("""
        import functools
        from fairtalk.models import as_responder
        def styled(text, style, words):
            return style
        class Bot:
            def __init__(self):
                self.words = {"tea", "milk", "cake", "jam"}
                self.helper = functools.partial(styled, style="x", words=frozenset({"a", "b", "c"}))
            def reply(self, text):
                return text
        print(as_responder(Bot().reply).fingerprint)
        print(as_responder(lambda text, s={"p", "q", "r"}: text if text in {"a", "b", "c"} else "").fingerprint)
    """)
    outs = [
        subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, check=True, env={**os.environ, "PYTHONHASHSEED": seed}
        ).stdout
        for seed in ("1", "2")
    ]
    assert outs[0] == outs[1] and outs[0].count('"state":"') == 2 and "unknown" not in outs[0]


def test_a_callable_whose_state_cannot_be_read_says_so_and_is_not_served_from_a_store(tmp_path: Path) -> None:
    model = as_responder(LockedBot("a").reply)
    assert identity_unknown(model.fingerprint) and model.fingerprint.endswith('"state":"unknown"}')
    assert model.unknown_state is not None and "LockedBot instance.lock: a _thread.lock" in model.unknown_state
    store = tmp_path / "runs.sqlite"
    with pytest.raises(SpecError, match=r"its state cannot be read .*give model_version=TAG"):
        fairtalk.respond(_pairs(), model=LockedBot("a").reply, store=store)
    assert not store.exists()  # the store it would have created is not left behind
    assert _answers(fairtalk.respond(_pairs(), model=LockedBot("b").reply)) == {"b"}  # no store, or its own in memory
    one = fairtalk.respond(_pairs(), model=LockedBot("a").reply, store=store, model_version="a-1")  # the user names it
    two = fairtalk.respond(_pairs(), model=LockedBot("b").reply, store=store, model_version="b-1")
    assert (_answers(one), _answers(two), two.summary.n_cached) == ({"a"}, {"b"}, 0)
    assert not identity_unknown(one.summary.model) and one.summary.model.endswith(" version=a-1")
    with RunStore(":memory:") as shared:  # a store in memory that already holds answers may hold another model's
        CachingResponder(as_responder(LockedBot("a").reply), shared).respond(["hi"], fairtalk.DecodingSettings(), seeds=[0])
        with pytest.raises(SpecError, match="cannot be told from another one"):
            CachingResponder(as_responder(LockedBot("b").reply), shared)


def test_state_outside_attributes_is_unknown_and_a_reference_back_is_read() -> None:
    """An instance of a dict subclass holds its state where attributes are not: unknown, not stateless."""
    assert as_responder(WordsBot(hi="yo").reply).unknown_state is not None
    one, other, again = (as_responder(CallbackBot(word).reply).fingerprint for word in ("a", "b", "a"))
    assert not identity_unknown(one) and one != other and one == again


def test_two_models_of_unknown_identity_are_never_called_the_same(tmp_path: Path) -> None:
    """The rule of one model cannot tell them apart, so it does not say they are one; a version names them."""

    corpus = write_corpus(tmp_path)

    def run(name: str, model: object, **options: object) -> Path:
        folder = tmp_path / name
        fairtalk.audit(
            corpus=corpus, model=model, axes="gender", n_pairs=8, measures="length", n_resamples=200, out_dir=folder, **options
        )
        return folder

    locked = LockedBot("a").reply
    assert compare_runs(run("u1", locked), run("u2", locked)).same_run is None  # compared on their answers
    versioned = compare_runs(run("v1", locked, model_version="v1"), run("v2", locked, model_version="v1")).same_run
    assert versioned is not None and versioned.startswith("two runs of the same model python:")
    assert compare_runs(run("k1", Bot(2).reply), run("k2", Bot(9).reply)).same_run is None  # one code, two models
    configs = [AuditConfig(model=make_bot(s)) for s in (".", "!")]  # objects: no spec to compare before the runs
    assert same_model_configs(*configs) is None


def test_fairtalks_own_files_are_never_hashed_as_a_models_code(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Review: with fairtalk's source folder on sys.path (a checkout, an editable install), only ``fairtalk/models`` was
    left out, so a model module importing fairtalk had fairtalk's own files in its code hash: an edit to fairtalk
    changed the model's fingerprint (and hashing them took seconds). Its own helper module still counts."""
    import importlib.util

    package = Path(fairtalk.__file__).resolve().parent
    monkeypatch.syspath_prepend(str(package.parent))  # the source folder on sys.path, as in a checkout
    (tmp_path / "helper_of_fairbot.py").write_text("def shout(text):\n    return text.upper()\n", encoding="utf-8")
    bot = tmp_path / "fairbot_importing_fairtalk.py"
    bot.write_text(
        "import fairtalk\nfrom fairtalk.stats import paired_test\nimport helper_of_fairbot\n\n\n"
        "def reply(text):\n    return helper_of_fairbot.shout(text)\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    spec = importlib.util.spec_from_file_location(bot.stem, bot)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, bot.stem, module)
    spec.loader.exec_module(module)
    monkeypatch.setitem(sys.modules, "helper_of_fairbot", sys.modules["helper_of_fairbot"])  # dropped again after
    read: list[Path] = []
    read_bytes = Path.read_bytes

    def recording(self: Path) -> bytes:
        read.append(self.resolve())
        return read_bytes(self)

    monkeypatch.setattr(Path, "read_bytes", recording)
    fingerprint = as_responder(module.reply).fingerprint
    assert '"code":"' in fingerprint
    assert tmp_path.resolve() / "helper_of_fairbot.py" in read  # the user's own code is read and hashed
    assert not [p for p in read if p.is_relative_to(package)], sorted({str(p) for p in read})[:5]


def test_a_bot_counting_its_calls_resumes_from_the_store_after_an_interruption(tmp_path: Path) -> None:
    """Review finding: a bot counting its calls got a new fingerprint after its first run, so its rerun used no stored answer."""
    store = tmp_path / "runs.sqlite"
    bot = Counting(stop=25)
    with pytest.raises(ResponderAborted, match="24 answers of this run are kept"):
        fairtalk.respond(_pairs(30), model=bot.reply, store=store)
    again = fairtalk.respond(_pairs(30), model=bot.reply, store=store)
    assert (again.summary.n_cached, again.summary.n_generated) == (24, 36)
    third = fairtalk.respond(_pairs(30), model=bot.reply, store=store)
    assert (third.summary.n_cached, third.summary.n_generated) == (60, 0)


@pytest.mark.parametrize("make", [Counting, Memo, SlottedCounting], ids=["counting", "memo", "slotted"])
def test_a_bot_whose_state_changes_as_it_answers_is_one_model_within_a_process(tmp_path: Path, make: type) -> None:
    store = tmp_path / "runs.sqlite"
    bot = make()
    one = fairtalk.respond(_pairs(), model=bot.reply, store=store)
    two = fairtalk.respond(_pairs(), model=bot.reply, store=store)
    assert (one.summary.n_generated, two.summary.n_cached, two.summary.n_generated) == (8, 8, 0)
    assert one.summary.model == two.summary.model
    other = make()  # a new object is read afresh: its state has not changed yet, so it is the same model
    assert as_responder(other.reply).fingerprint == as_responder(make().reply).fingerprint


def test_the_state_is_read_when_fairtalk_first_meets_the_object_and_a_change_to_it_is_not_re_read() -> None:
    """The stated rule (docs/reference/models.md): a new configuration is a new object, or a model_version."""
    bot = Bot(2)
    first = as_responder(bot.reply).fingerprint
    bot.words = 9  # the same object, changed: not re-read
    assert as_responder(bot.reply).fingerprint == first
    assert as_responder(Bot(9).reply).fingerprint != first  # a new object with that configuration is another model
    assert as_responder(Bot(2).reply).fingerprint == first
    nice = functools.partial(styled, style="nice")
    assert as_responder(nice).fingerprint == as_responder(nice).fingerprint
    assert as_responder(functools.partial(styled, style="rude")).fingerprint != as_responder(nice).fingerprint


def test_the_object_read_is_not_kept_alive() -> None:
    """The registry holds a weak reference where one can be made: a bot freed is gone, its entry with it."""
    bot = Bot(3)
    as_responder(bot.reply)
    ref = weakref.ref(bot)
    del bot
    gc.collect()
    assert ref() is None
