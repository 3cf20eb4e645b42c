"""The one progress type of the library: stages report :class:`ProgressEvent` values to a :data:`ProgressCallback`.

Library code never draws or prints. A long stage (generation, training, scoring) reports
how far it got by calling the ``progress`` callback it was given with a frozen
:class:`ProgressEvent`; messages go through :mod:`logging` (loggers under ``"fairtalk"``).
The command line turns both into rich progress bars and log lines on stderr.

Events of one stage share its ``stage`` label: the first has ``done=0``, later ones count
finished steps, and the last has ``finished=True``. ``total`` is None when the stage does
not know its length in advance (loading a model: :meth:`ProgressReporter.stage`). A stage may
go long without an event (a model that takes minutes to load or to answer its first batch): the
command line repeats its last state on a timer, so a log still gets a line every few seconds.

Examples
--------
>>> seen = []
>>> reporter = ProgressReporter(seen.append)
>>> reporter.start("gender: responses", total=4, unit="responses")
>>> reporter.advance(4)
>>> reporter.finish()
>>> [(e.stage, e.done, e.total, e.finished) for e in seen]
[('gender: responses', 0, 4, False), ('gender: responses', 4, 4, False), ('gender: responses', 4, 4, True)]
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import re
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from fairtalk.errors import SpecError

__all__ = ["ProgressCallback", "ProgressEvent", "ProgressReporter", "loading_label", "no_third_party_bars", "progress_callback"]

_MSG_PROGRESS = "progress must be None or a callable(ProgressEvent), got {type}"
_MSG_BOOL = (
    "progress=True no longer draws a progress bar (the library never draws; the fairtalk command line does): "
    "pass a callable that receives ProgressEvent values, or None; the bool form stops working in fairtalk 0.3"
)
_MSG_THREE_ARGS = (
    "a progress callable(label, n_done, n_total) is deprecated: pass a callable(ProgressEvent) "
    "(event.stage, event.done, event.total); the three-argument form stops working in fairtalk 0.3"
)


@dataclass(frozen=True, slots=True)
class ProgressEvent:
    """How far one stage of a run has got.

    Attributes
    ----------
    stage : str
        What is being done (``"gender: responses"``, ``"seq2seq epoch 1/2"``).
    done : int
        Steps finished so far in this stage.
    total : int or None
        Steps the stage has (None when unknown).
    unit : str
        What a step is (``"responses"``, ``"batches"``).
    finished : bool
        True on the stage's last event.
    metrics : tuple of (str, float)
        Running figures of the stage (a training loss), as ``(name, value)`` pairs.
    """

    stage: str
    done: int
    total: int | None = None
    unit: str = "steps"
    finished: bool = False
    metrics: tuple[tuple[str, float], ...] = ()


#: What a library function's ``progress=`` takes: called with each :class:`ProgressEvent`.
ProgressCallback = Callable[[ProgressEvent], object]


def _takes_three(function: Callable[..., object]) -> bool:
    """Whether ``function`` needs three positional arguments (the old ``(label, n_done, n_total)`` form)."""
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):  # builtins without a signature: the one-argument form
        return False
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    required = [p for p in positional if p.default is p.empty]
    return len(required) >= 3


def progress_callback(progress: object) -> ProgressCallback | None:
    """The callback a library function's ``progress=`` argument means (validated once, at the boundary).

    None and False mean no progress reports. Two old forms still work, each with a
    FutureWarning: ``True`` (which used to draw a bar inside the library; now nothing is
    drawn) and a callable ``(label, n_done, n_total)``, which is adapted.

    Raises
    ------
    SpecError
        ``progress`` is neither None, a bool nor a callable.
    """
    if progress is None or progress is False:
        return None
    if progress is True:
        warnings.warn(_MSG_BOOL, FutureWarning, stacklevel=3)
        return None
    if not callable(progress):
        raise SpecError(_MSG_PROGRESS.format(type=type(progress).__name__))
    if _takes_three(progress):
        warnings.warn(_MSG_THREE_ARGS, FutureWarning, stacklevel=3)
        legacy = progress

        def adapted(event: ProgressEvent) -> None:
            legacy(event.stage, event.done, event.total or 0)

        return adapted
    return progress


class ProgressReporter:
    """Send the events of one stage after another to a callback (or nowhere, without one)."""

    __slots__ = ("_callback", "_done", "_stage", "_total", "_unit")

    def __init__(self, callback: ProgressCallback | None) -> None:
        self._callback = callback
        self._stage, self._done, self._unit = "", 0, "steps"
        self._total: int | None = None

    @property
    def enabled(self) -> bool:
        """Whether anyone listens (a stage may skip work it does only to report)."""
        return self._callback is not None

    def start(self, stage: str, total: int | None = None, *, unit: str = "steps") -> None:
        """Begin a stage of ``total`` steps (None when unknown)."""
        self._stage, self._done, self._total, self._unit = stage, 0, total, unit
        self._emit(False, ())

    def advance(self, n: int = 1, **metrics: float) -> None:
        """Record ``n`` more finished steps of the current stage, with its running figures."""
        self._done += n
        self._emit(False, tuple(metrics.items()))

    def finish(self) -> None:
        """Mark the current stage done."""
        self._emit(True, ())

    @contextlib.contextmanager
    def stage(self, stage: str) -> Iterator[None]:
        """A stage of unknown length around a block (``"loading model builtin:smollm2"``): started, and finished if it succeeds.

        A block that raises leaves the stage unfinished: its error, not a "done", is what follows.

        Examples
        --------
        >>> seen = []
        >>> with ProgressReporter(seen.append).stage("loading model builtin:echo"):
        ...     pass
        >>> [(e.stage, e.total, e.finished) for e in seen]
        [('loading model builtin:echo', None, False), ('loading model builtin:echo', None, True)]
        """
        self.start(stage)
        yield
        self.finish()

    def _emit(self, finished: bool, metrics: tuple[tuple[str, float], ...]) -> None:
        if self._callback is not None:
            self._callback(ProgressEvent(self._stage, self._done, self._total, self._unit, finished, metrics))


_USERINFO = re.compile(r"//[^/?#@]*@")


def loading_label(model: str | None, *, fingerprint: str | None = None) -> str:
    """The label of the stage that loads a model, without secrets: by its spec, its ``fingerprint``, or the default.

    A spec loses its ``?options`` and a URL's ``user:password@``; a model already built (a
    responder, a function) is named by the first word of its ``fingerprint``.

    Examples
    --------
    >>> loading_label("openai:http://me:pw@127.0.0.1:8000/v1#m?timeout=60")
    'loading model openai:http://127.0.0.1:8000/v1#m'
    >>> loading_label(None)
    'loading the default model'
    >>> loading_label(None, fingerprint='python:bot:reply {"code":"9f2c"}')
    'loading model python:bot:reply'
    """
    if fingerprint is not None:
        return "loading model " + _USERINFO.sub("//", fingerprint.split(" ")[0])
    if model is None:
        return "loading the default model"
    return "loading model " + _USERINFO.sub("//", model.split("?")[0])


@contextlib.contextmanager
def no_third_party_bars() -> Iterator[None]:
    """For the block, no tqdm bars from transformers or huggingface_hub (downloads, "Loading checkpoint shards").

    The library never draws, and neither do the libraries it drives: an adapter loads its model
    inside this block. Bars that were on are switched back on after it; the packages that are
    not installed are left alone.
    """
    restore: list[Callable[[], object]] = []
    with contextlib.suppress(ImportError):
        hub_utils = importlib.import_module("huggingface_hub.utils")  # untyped: an Any
        if not hub_utils.are_progress_bars_disabled():
            hub_utils.disable_progress_bars()
            restore.append(hub_utils.enable_progress_bars)
    with contextlib.suppress(ImportError):
        transformers_logging = importlib.import_module("transformers.utils.logging")
        if transformers_logging.is_progress_bar_enabled():
            transformers_logging.disable_progress_bar()
            restore.append(transformers_logging.enable_progress_bar)
    try:
        yield
    finally:
        for switch_on in reversed(restore):
            switch_on()
