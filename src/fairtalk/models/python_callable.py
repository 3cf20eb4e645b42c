"""``python:module:function`` or ``python:path/to/file.py:function``: a user's callable as a model.

The callable is either *single* (``str -> str``, called once per context) or
*batched* (``list[str] -> list[str]``). Which one is decided by, in order: the
``batched=`` option, a ``batched`` attribute on the function (``fn.batched = True``),
else single. If the function has a ``seed`` parameter (single) or ``seeds``
parameter (batched), or a ``settings`` parameter, those are passed as keywords.

- Exceptions the callable raises become :class:`~fairtalk.errors.ResponderError` for
  that item (a batched call is bisected to find the failing items).
- A single function answers item by item through ``respond_stream``: the run store commits
  each answer, and counts each failure toward its ``max_consecutive_failures``, as it finishes
  (a function that hangs costs that many timeouts, not one per item of a batch).
- Each call runs on a worker thread and may take at most ``timeout`` seconds (per item
  for a single function, per batch for a batched one; default 300; ``none``, ``inf`` or a
  timeout beyond ``threading.TIMEOUT_MAX / 2`` mean no limit). A call that takes
  longer fails its items with :class:`~fairtalk.errors.ResponderTimeout`; it cannot be
  killed, so it is abandoned and the next call gets a fresh thread.
- ``sys.exit()`` or ``KeyboardInterrupt`` inside the callable stops the run with
  :class:`~fairtalk.errors.ResponderAborted`, which says so (what was answered stays in the
  run store when the run has a store file).
- A file spec's folder is put on ``sys.path`` (as when running a script), so the file can
  import its neighbours. The fingerprint hashes the model's source *and* every module of
  the user's own code it imports (see ``_user_code``), so editing a helper invalidates the
  stored answers.
"""

from __future__ import annotations

import concurrent.futures
import hashlib
import importlib
import importlib.util
import inspect
import queue
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from fairtalk.errors import (
    BadResponse,
    ResponderAborted,
    ResponderError,
    ResponderTimeout,
    SpecError,
)
from fairtalk.models._user_code import UserCode, user_roots
from fairtalk.models.base import (
    BaseResponder,
    DecodingSettings,
    check_batch,
    collect_stream,
    make_fingerprint,
)

__all__ = ["PythonOptions", "PythonResponder"]

_MSG_SPEC = "malformed python spec {spec!r} (expected python:module:function or python:file.py:function)"
_MSG_IMPORT = "cannot import {module!r} for {spec!r}: {error}"
_MSG_ATTRIBUTE = "{module!r} has no callable {name!r} (spec {spec!r})"
_MSG_RAISED = "{target} raised {kind}: {error}"
_MSG_NOT_LIST = "{target} returned {kind}; a batched callable must return a list of strings"
_MSG_LENGTH = "{target} returned {n_results} responses for {n_contexts} contexts"
_MSG_NOT_STR = "{target} returned {kind} for item {index}; responses must be strings"
_MSG_TIMEOUT = "{target} did not return within timeout={timeout:g} s (the call was abandoned)"
#: The adapter cannot know whether the answers so far are kept (that depends on the run store): it does not say.
_MSG_EXIT = "{target} called sys.exit({code!r}) while answering; the run stopped"
_MSG_INTERRUPT = "{target} raised KeyboardInterrupt while answering; the run stopped"
_MSG_IMPORT_EXIT = "importing {module!r} for {spec!r} called sys.exit({code!r})"
_MSG_TIMEOUT_VALUE = "python: timeout must be > 0 seconds, or none (or inf) for no limit, got {value!r}"
#: Timeouts from here up (``inf`` included) mean no limit: a thread cannot wait longer than
#: ``threading.TIMEOUT_MAX``, and a deadline that far off overflows the clock.
NO_LIMIT_FROM = threading.TIMEOUT_MAX / 2
#: Default seconds one call may take (generous: a CPU LLM answering one item, or a batch).
DEFAULT_TIMEOUT = 300.0


@dataclass(frozen=True, slots=True)
class PythonOptions:
    """Options of the ``python:`` adapter: ``batched`` (None: the function's own ``batched`` attribute) and ``timeout``."""

    batched: bool | None = None
    timeout: float | None = DEFAULT_TIMEOUT

    def __post_init__(self) -> None:
        if self.timeout is not None and not self.timeout > 0:
            raise SpecError(_MSG_TIMEOUT_VALUE.format(value=self.timeout))
        if self.timeout is not None and self.timeout >= NO_LIMIT_FROM:  # inf, 1e10: no limit, not an OverflowError
            object.__setattr__(self, "timeout", None)


@dataclass(frozen=True, slots=True)
class _Loaded:
    fn: Callable[..., Any]
    module: ModuleType
    module_name: str | None
    new_modules: tuple[str, ...]


def _exec_file(path: Path, spec: str, module_part: str) -> ModuleType:
    """Import a model file afresh, with its folder on ``sys.path``; user modules cached from before are dropped."""
    folder = str(path.parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    neighbours = UserCode([path.parent])
    for name, mod in list(sys.modules.items()):
        file = getattr(mod, "__file__", None)
        if isinstance(file, str) and neighbours.contains(Path(file).resolve()):
            del sys.modules[name]
    digest = hashlib.blake2b(str(path).encode(), digest_size=6).hexdigest()
    file_spec = importlib.util.spec_from_file_location(f"_fairtalk_user_{path.stem}_{digest}", path)
    if file_spec is None or file_spec.loader is None:
        raise SpecError(_MSG_IMPORT.format(module=module_part, spec=spec, error="not a module"))
    module = importlib.util.module_from_spec(file_spec)
    sys.modules[file_spec.name] = module
    try:
        file_spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(file_spec.name, None)
        raise
    return module


def _load_callable(target: str) -> _Loaded:
    spec = f"python:{target}"
    module_part, sep, name = target.rpartition(":")
    if not sep or not module_part or not name:
        raise SpecError(_MSG_SPEC.format(spec=spec))
    before = set(sys.modules)
    is_file = module_part.endswith(".py") or "/" in module_part or "\\" in module_part
    try:
        if is_file:
            path = Path(module_part).resolve()
            if not path.is_file():
                error = "not a regular file (a folder, a pipe or a device)" if path.exists() else "file not found"
                raise SpecError(_MSG_IMPORT.format(module=module_part, spec=spec, error=error))
            module = _exec_file(path, spec, module_part)
        else:
            module = importlib.import_module(module_part)
    except SpecError:
        raise
    except SystemExit as exc:
        raise SpecError(_MSG_IMPORT_EXIT.format(module=module_part, spec=spec, code=exc.code)) from None
    except Exception as exc:
        raise SpecError(_MSG_IMPORT.format(module=module_part, spec=spec, error=exc)) from exc
    fn = getattr(module, name, None)
    if not callable(fn):
        raise SpecError(_MSG_ATTRIBUTE.format(module=module_part, name=name, spec=spec))
    new = tuple(sorted(set(sys.modules) - before))
    return _Loaded(fn, module, None if is_file else module_part, new)


def _user_code(loaded: _Loaded | None, fn: Callable[..., Any]) -> UserCode | None:
    """The model's module file and every user module it imports (None when it has no file)."""
    module = loaded.module if loaded is not None else sys.modules.get(getattr(fn, "__module__", ""), None)
    file = getattr(module, "__file__", None)
    if not isinstance(file, str) or not file.endswith(".py"):
        return None
    path = Path(file)
    name = loaded.module_name if loaded is not None else getattr(module, "__name__", None)
    if loaded is None and name is not None and name.startswith("_fairtalk_user_"):
        name = None
    code = UserCode(user_roots(path, name))
    code.add(path, always=True)
    if loaded is not None:
        code.add_loaded(loaded.new_modules)
    return code


class _Worker:
    """Runs calls on one daemon thread; a call past its timeout is abandoned with its thread."""

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[Any] | None = None

    def _loop(self, jobs: queue.SimpleQueue[Any]) -> None:
        while True:
            job = jobs.get()
            if job is None:
                return
            call, future = job
            try:
                future.set_result(call())
            except BaseException as exc:  # noqa: BLE001 - handed to the caller, SystemExit included
                future.set_exception(exc)

    def run(self, call: Callable[[], Any], timeout: float | None) -> tuple[bool, Any]:
        """``(True, result)``, ``(False, exception)``; raises TimeoutError past ``timeout``."""
        if self._jobs is None:
            self._jobs = queue.SimpleQueue()
            threading.Thread(target=self._loop, args=(self._jobs,), daemon=True, name="fairtalk-python-model").start()
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self._jobs.put((call, future))
        done, _ = concurrent.futures.wait([future], timeout=timeout)
        if not done:
            self._jobs.put(None)  # the thread exits once the abandoned call returns, if ever
            self._jobs = None
            raise TimeoutError
        exc = future.exception()
        return (True, future.result()) if exc is None else (False, exc)

    def close(self) -> None:
        if self._jobs is not None:
            self._jobs.put(None)
            self._jobs = None


class PythonResponder(BaseResponder):
    """Wrap a user callable (single or batched) as a responder.

    Parameters
    ----------
    fn : callable
        ``str -> str``, or ``list[str] -> list[str]`` when batched.
    name : str, optional
        Identity in the fingerprint (default ``module:qualname``).
    batched : bool, optional
        None: the function's ``batched`` attribute, else single.
    timeout : float or None
        Seconds one call may take; None: no limit.
    """

    def __init__(self, fn: Callable[..., Any], *, name: str | None = None, batched: bool | None = None,
                 timeout: float | None = DEFAULT_TIMEOUT, _loaded: _Loaded | None = None) -> None:  # fmt: skip
        options = PythonOptions(batched=batched, timeout=timeout)
        self.fn = fn
        self.name = name or f"{getattr(fn, '__module__', '?')}:{getattr(fn, '__qualname__', repr(fn))}"
        self.batched = bool(getattr(fn, "batched", False)) if options.batched is None else options.batched
        self.timeout = options.timeout
        code = _user_code(_loaded, fn)
        self._code = None if code is None else code.digest
        self.input_paths = () if code is None else tuple(str(p) for p in sorted(code.files))
        if self._code is None:  # no source file (a builtin, a lambda from a notebook): hash what inspect sees
            try:
                self._code = hashlib.sha256(inspect.getsource(fn).encode()).hexdigest()[:16]
            except (OSError, TypeError):
                self._code = None
        try:
            params = inspect.signature(fn).parameters
        except (TypeError, ValueError):
            params = {}  # type: ignore[assignment]
        self._pass_seed = ("seeds" if self.batched else "seed") in params
        self._pass_settings = "settings" in params
        self._worker = _Worker()

    @classmethod
    def options_for(cls, target: str) -> type[PythonOptions]:
        """The options this adapter takes."""
        return PythonOptions

    @classmethod
    def from_spec(cls, target: str, options: PythonOptions | None = None) -> PythonResponder:
        """Build from ``module:function`` or ``file.py:function`` (what follows ``python:``)."""
        options = options or PythonOptions()
        loaded = _load_callable(target)
        return cls(loaded.fn, name=target, batched=options.batched, timeout=options.timeout, _loaded=loaded)

    @property
    def fingerprint(self) -> str:
        """``python:<target>`` plus a hash of the model's code (its module and the user modules it imports)."""
        return make_fingerprint("python", self.name, code=self._code, batched=self.batched)

    def _call(self, arg: Any, seed_value: Any, settings: DecodingSettings) -> Any:
        kwargs: dict[str, Any] = {}
        if self._pass_seed:
            kwargs["seeds" if self.batched else "seed"] = seed_value
        if self._pass_settings:
            kwargs["settings"] = settings
        try:
            ok, value = self._worker.run(lambda: self.fn(arg, **kwargs), self.timeout)
        except TimeoutError:
            raise ResponderTimeout(_MSG_TIMEOUT.format(target=self.name, timeout=self.timeout)) from None
        if ok:
            return value
        if isinstance(value, SystemExit):
            raise ResponderAborted(_MSG_EXIT.format(target=self.name, code=value.code)) from value
        if isinstance(value, KeyboardInterrupt):
            raise ResponderAborted(_MSG_INTERRUPT.format(target=self.name)) from value
        if isinstance(value, ResponderError):
            raise value
        if not isinstance(value, Exception):  # GeneratorExit and other BaseExceptions: stop, saying what
            raise ResponderAborted(_MSG_RAISED.format(target=self.name, kind=type(value).__name__, error=value))
        raise ResponderError(_MSG_RAISED.format(target=self.name, kind=type(value).__name__, error=value)) from value

    def _check_item(self, value: Any, index: int) -> str:
        if not isinstance(value, str):
            raise BadResponse(_MSG_NOT_STR.format(target=self.name, kind=type(value).__name__, index=index))
        return value

    def respond(self, contexts: Sequence[str], settings: DecodingSettings, *, seeds: Sequence[int]) -> list[str]:
        """Call the function on the batch (or per item) and validate what it returns."""
        check_batch(contexts, seeds)
        if not contexts:
            return []
        if not self.batched:
            return [self._check_item(self._call(c, s, settings), i) for i, (c, s) in enumerate(zip(contexts, seeds))]
        out = self._call(list(contexts), list(seeds), settings)
        if not isinstance(out, list | tuple):
            raise BadResponse(_MSG_NOT_LIST.format(target=self.name, kind=type(out).__name__))
        if len(out) != len(contexts):
            raise BadResponse(_MSG_LENGTH.format(target=self.name, n_results=len(out), n_contexts=len(contexts)))
        return [self._check_item(v, i) for i, v in enumerate(out)]

    def respond_each(
        self, contexts: Sequence[str], settings: DecodingSettings, *, seeds: Sequence[int]
    ) -> list[str | ResponderError]:
        """Per-item results; a single callable is isolated per item without bisection."""
        if self.batched:
            return super().respond_each(contexts, settings, seeds=seeds)
        check_batch(contexts, seeds)
        return collect_stream(self._each(contexts, settings, seeds), len(contexts))

    @property
    def respond_stream(self) -> Callable[..., Iterator[tuple[int, str | ResponderError]]] | None:
        """``respond_stream(contexts, settings, *, seeds)`` of a single function; None for a batched one.

        It yields ``(index, answer or error)`` as each call returns, so that the run store
        commits every answer, and counts every failure, at once; closing it early makes no
        further call. A batched function answers per batch (``respond_each``), as sized by the store.
        """
        return None if self.batched else self._stream

    def _stream(
        self, contexts: Sequence[str], settings: DecodingSettings, *, seeds: Sequence[int]
    ) -> Iterator[tuple[int, str | ResponderError]]:
        check_batch(contexts, seeds)
        return self._each(contexts, settings, seeds)

    def _each(
        self, contexts: Sequence[str], settings: DecodingSettings, seeds: Sequence[int]
    ) -> Iterator[tuple[int, str | ResponderError]]:
        """One call per context, in order: ``(index, answer or the ResponderError it failed with)``."""
        for i, (c, s) in enumerate(zip(contexts, seeds)):
            try:
                item: str | ResponderError = self._check_item(self._call(c, s, settings), i)
            except ResponderError as exc:
                item = exc
            yield i, item

    def close(self) -> None:
        """Let the worker thread end."""
        self._worker.close()
