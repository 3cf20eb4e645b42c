"""Two threads of one process given one output: the second is refused as a second process is (the output's lock).

A hold belongs to the thread that took it: an output another thread of this process holds, or
one inside it or holding it, is an OutputError naming this process' pid, while a thread's own
holds nest. The first thread is held inside its lock by an Event the test sets, so the test knows
when the first holds the output, with no sleep standing in for timing (the waits' timeouts only
keep a broken lock from hanging the suite).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

import fairtalk
from audit_toys import write_corpus
from fairtalk.errors import OutputError
from fairtalk.files import check_output_folder, hold_output, output_lock_path, output_scope

#: Longest a test waits for the other thread (a bound against a hang, never a timing).
_WAIT = 60.0
#: What the second thread is told while the first holds the output.
_BUSY = "{target} is being written by another fairtalk run (pid {pid}); wait for it or give another -o"


class Holder:
    """A thread that holds outputs in a scope of its own until the test lets it go."""

    def __init__(self, *targets: Path) -> None:
        self.targets = targets
        self.holding, self.go = threading.Event(), threading.Event()
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, name="first-holder")

    def _run(self) -> None:
        try:
            with output_scope():
                for target in self.targets:
                    hold_output(target)
                self.holding.set()
                self.go.wait(_WAIT)
        except BaseException as exc:  # the test reports it
            self.error = exc
        finally:
            self.holding.set()

    def __enter__(self) -> Holder:
        self.thread.start()
        assert self.holding.wait(_WAIT)
        assert self.error is None, self.error
        return self

    def __exit__(self, *exc: object) -> None:
        self.go.set()
        self.thread.join(_WAIT)
        assert not self.thread.is_alive()
        assert self.error is None, self.error


def _refused(target: Path) -> str:
    """The OutputError this thread gets when it takes ``target`` in a scope of its own."""
    with pytest.raises(OutputError) as caught, output_scope():
        hold_output(target)
    return str(caught.value)


def test_a_second_thread_is_refused_the_output_a_first_thread_holds_naming_it(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with Holder(out):
        assert _refused(out) == _BUSY.format(target=out, pid=os.getpid())
        with pytest.raises(OutputError, match="being written by another fairtalk run"):
            check_output_folder(out)  # a check alone, outside any scope of this thread, is refused too
        assert output_lock_path(out).exists()  # the refusal leaves the first's lock alone
    assert not output_lock_path(out).exists()  # let go when the first's scope ended
    with output_scope():
        hold_output(out)  # free again
        assert output_lock_path(out).exists()


def test_an_output_inside_or_holding_one_another_thread_holds_is_refused(tmp_path: Path) -> None:
    out, nested = tmp_path / "out", tmp_path / "other" / "nested"
    with Holder(out, nested):
        inside = _refused(out / "sub")
        assert inside.startswith(f"{out / 'sub'} is inside ") and f"(pid {os.getpid()})" in inside, inside
        holds = _refused(tmp_path / "other")
        assert holds.startswith(f"{tmp_path / 'other'} holds ") and f"(pid {os.getpid()})" in holds, holds
        with output_scope():
            hold_output(tmp_path / "beside")  # an output apart from the first's goes through
            assert output_lock_path(tmp_path / "beside").exists()


def test_a_thread_s_own_holds_nest(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with output_scope():
        hold_output(out)
        hold_output(out)  # again: passes
        with output_scope():
            hold_output(out)  # an inner scope (audit's write_run checking its folder again): passes
            hold_output(out / "inner")  # inside its own output: passes
        assert output_lock_path(out).exists()  # kept by the outer scope
        assert not output_lock_path(out / "inner").exists()  # let go with the inner scope
        refused: list[str] = []

        def other_thread() -> None:
            try:
                with output_scope():
                    hold_output(out)
            except OutputError as exc:
                refused.append(str(exc))

        thread = threading.Thread(target=other_thread)
        thread.start()
        thread.join(_WAIT)
        assert refused == [_BUSY.format(target=out, pid=os.getpid())]
    assert not output_lock_path(out).exists()


def test_a_hold_goes_to_the_scope_of_the_thread_that_takes_it(tmp_path: Path) -> None:
    out = tmp_path / "out"
    opened, entered, taken = threading.Event(), threading.Event(), threading.Event()
    errors: list[BaseException] = []

    def second() -> None:  # opens its scope before this thread's, takes out after, and ends its scope
        try:
            with output_scope():
                opened.set()
                assert entered.wait(_WAIT)
                hold_output(out)
                taken.set()
        except BaseException as exc:
            errors.append(exc)
        finally:
            opened.set()

    thread = threading.Thread(target=second)
    thread.start()
    assert opened.wait(_WAIT)
    with output_scope():  # the innermost scope of the process now, but not the second thread's
        entered.set()
        thread.join(_WAIT)
        assert taken.is_set() and not errors, errors
        assert not output_lock_path(out).exists()  # let go with the second's scope, not kept by this one
        hold_output(out)  # free for this thread
        assert output_lock_path(out).exists()
    assert not output_lock_path(out).exists()


#: The first audit's model holds its thread inside the lock until the test says go.
_STARTED, _GO = threading.Event(), threading.Event()


def waiting_reply(text: str) -> str:
    """The first audit's model: says it started, then waits for the test's go."""
    _STARTED.set()
    _GO.wait(_WAIT)
    return f"ok {text}"


def test_two_threads_auditing_into_one_folder_the_second_is_refused_before_any_work(tmp_path: Path) -> None:
    corpus, out = write_corpus(tmp_path), tmp_path / "report"
    options = {"corpus": corpus, "axes": "gender", "n_pairs": 10, "measures": "length", "n_resamples": 200, "out_dir": out}
    runs: list[object] = []
    errors: list[BaseException] = []

    def first() -> None:
        try:
            runs.append(fairtalk.audit(model=waiting_reply, **options))
        except BaseException as exc:
            errors.append(exc)
        finally:
            _STARTED.set()

    _STARTED.clear()
    _GO.clear()
    thread = threading.Thread(target=first, name="first-audit")
    thread.start()
    try:
        assert _STARTED.wait(_WAIT) and not errors, errors
        with pytest.raises(OutputError) as caught:
            fairtalk.audit(model="builtin:echo", **options)  # without the lock: runs, and writes the folder
        assert str(caught.value) == _BUSY.format(target=out, pid=os.getpid())
        assert not out.exists() or not any(out.iterdir())  # nothing of a run there yet
    finally:
        _GO.set()
        thread.join(_WAIT)
    assert not errors and len(runs) == 1, errors
    assert (out / "run.json").is_file() and not output_lock_path(out).exists()
