"""Tests for progress.py: the one progress type, its reporter, the old forms it still accepts, third-party bars."""

from __future__ import annotations

import dataclasses

import pytest

from fairtalk import SpecError
from fairtalk.progress import ProgressEvent, ProgressReporter, no_third_party_bars, progress_callback


def test_a_stage_reports_its_start_its_steps_and_its_end() -> None:
    seen: list[ProgressEvent] = []
    reporter = ProgressReporter(seen.append)
    reporter.start("seq2seq epoch 1/1", 3, unit="batches")
    reporter.advance(1, loss=2.5)
    reporter.advance(2, loss=2.0)
    reporter.finish()
    assert [(e.done, e.finished) for e in seen] == [(0, False), (1, False), (3, False), (3, True)]
    assert {(e.stage, e.total, e.unit) for e in seen} == {("seq2seq epoch 1/1", 3, "batches")}
    assert seen[2].metrics == (("loss", 2.0),)
    with pytest.raises(dataclasses.FrozenInstanceError):
        seen[0].done = 5  # type: ignore[misc]


def test_without_a_callback_nothing_is_reported() -> None:
    reporter = ProgressReporter(None)
    reporter.start("x")
    reporter.advance(10)
    reporter.finish()
    assert not reporter.enabled


def test_the_old_forms_are_adapted_with_a_future_warning() -> None:
    assert progress_callback(None) is None and progress_callback(False) is None
    with pytest.warns(FutureWarning, match="progress=True no longer draws"):
        assert progress_callback(True) is None
    seen: list[tuple[str, int, int]] = []
    with pytest.warns(FutureWarning, match=r"callable\(label, n_done, n_total\)"):
        adapted = progress_callback(lambda label, done, total: seen.append((label, done, total)))
    assert adapted is not None
    adapted(ProgressEvent("responses", 4, None))
    assert seen == [("responses", 4, 0)]
    new = [].append
    assert progress_callback(new) is new
    with pytest.raises(SpecError, match="progress must be None or a callable"):
        progress_callback(3)


def test_third_party_bars_are_off_inside_the_block_and_restored_after() -> None:
    hub = pytest.importorskip("huggingface_hub.utils")
    transformers_logging = pytest.importorskip("transformers.utils.logging")
    if hub.are_progress_bars_disabled():
        pytest.skip("HF_HUB_DISABLE_PROGRESS_BARS is set here")
    with no_third_party_bars():
        assert hub.are_progress_bars_disabled() and not transformers_logging.is_progress_bar_enabled()
    assert not hub.are_progress_bars_disabled() and transformers_logging.is_progress_bar_enabled()


def test_an_interrupted_generation_is_not_said_done() -> None:
    """Review: the progress line of a run stopped by Ctrl-C ended in "· done"."""
    from collections.abc import Sequence

    import fairtalk
    from fairtalk.models import DecodingSettings, Responder

    class Interrupted(Responder):
        fingerprint = "test:interrupted"

        def respond(self, contexts: Sequence[str], settings: DecodingSettings, *, seeds: Sequence[int]) -> list[str]:
            raise KeyboardInterrupt

    seen: list[ProgressEvent] = []
    pairs = [fairtalk.Pair("p0", "gender", a="he said", b="she said", original_side="a")]
    with pytest.raises(KeyboardInterrupt):
        fairtalk.respond(pairs, model=Interrupted(), progress=seen.append)
    generating = [e for e in seen if e.unit == "responses"]
    assert generating and not any(e.finished for e in generating), seen
    seen.clear()
    fairtalk.respond(pairs, model="builtin:echo", progress=seen.append)
    assert [e.finished for e in seen if e.unit == "responses"][-1] is True
