"""Loading a ``python:`` model: the spec's module imported, its source files found, and the thread its calls run on."""

from __future__ import annotations

import concurrent.futures
import functools
import hashlib
import importlib
import importlib.machinery
import importlib.util
import inspect
import os
import queue
import sys
import threading
import types
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from fairtalk.errors import SpecError
from fairtalk.models._base import one_line
from fairtalk.models.python._user_code import UserCode, user_roots

__all__ = ["Loaded", "Worker", "callable_name", "defined_by", "load_callable", "resolved_target", "user_code"]

_MSG_SPEC = "malformed python spec {spec!r} (expected python:module:function or python:file.py:function)"
_MSG_IMPORT = "cannot import {module!r} for {spec!r}: {error}"
_MSG_ATTRIBUTE = "{module!r} has no callable {name!r} (spec {spec!r})"
_MSG_IMPORT_EXIT = "importing {module!r} for {spec!r} called sys.exit({code!r})"


@dataclass(frozen=True, slots=True)
class Loaded:
    """A callable imported from a ``python:`` spec: the function, its module, and the modules its import added."""

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


def _import_module(name: str) -> ModuleType:
    """Import module ``name``; one that is not found is looked for in the current folder too, as ``python -m`` does.

    The ``fairtalk`` command's ``sys.path`` starts at its own script folder, not the folder it
    runs in, so ``python:mybot:reply`` would miss ``./mybot.py``. The current folder goes last
    on ``sys.path``, and only when the module is found nowhere else, so it never shadows an
    installed package.
    """
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        top = name.partition(".")[0]
        here = os.getcwd()
        if exc.name != top or here in sys.path or importlib.machinery.PathFinder.find_spec(top, [here]) is None:
            raise
        sys.path.append(here)
        return importlib.import_module(name)


def _is_file(module_part: str) -> bool:
    """Whether ``python:`` names a file (``bot.py``, ``./bots/bot``), not a module."""
    return module_part.endswith(".py") or "/" in module_part or "\\" in module_part


def check_target(target: str) -> None:
    """SpecError when what ``python:TARGET`` names is not there: a malformed target, no such file, or no such module.

    Nothing is imported or run (a module's top-level package is looked for, as :func:`_import_module`
    does, in the current folder too); whether the function is there is known once it is loaded.
    """
    spec = f"python:{target}"
    module_part, sep, name = target.rpartition(":")
    if not sep or not module_part or not name:
        raise SpecError(_MSG_SPEC.format(spec=spec))
    if _is_file(module_part):
        path = Path(module_part).resolve()
        if not path.is_file():
            error = "not a regular file (a folder, a pipe or a device)" if path.exists() else "file not found"
            raise SpecError(_MSG_IMPORT.format(module=module_part, spec=spec, error=error))
        return
    top = module_part.partition(".")[0]
    try:
        found = top in sys.modules or importlib.util.find_spec(top) is not None
    except (ImportError, ValueError):
        found = False
    if not found and importlib.machinery.PathFinder.find_spec(top, [os.getcwd()]) is None:
        raise SpecError(_MSG_IMPORT.format(module=module_part, spec=spec, error=f"no module named {top!r}"))


def load_callable(target: str) -> Loaded:
    """Import what ``python:TARGET`` names (``module:function`` or ``file.py:function``); SpecError when it cannot."""
    spec = f"python:{target}"
    module_part, sep, name = target.rpartition(":")
    if not sep or not module_part or not name:
        raise SpecError(_MSG_SPEC.format(spec=spec))
    before = set(sys.modules)
    is_file = _is_file(module_part)
    try:
        if is_file:
            path = Path(module_part).resolve()
            if not path.is_file():
                error = "not a regular file (a folder, a pipe or a device)" if path.exists() else "file not found"
                raise SpecError(_MSG_IMPORT.format(module=module_part, spec=spec, error=error))
            module = _exec_file(path, spec, module_part)
        else:
            module = _import_module(module_part)
    except SpecError:
        raise
    except SystemExit as exc:
        raise SpecError(_MSG_IMPORT_EXIT.format(module=module_part, spec=spec, code=exc.code)) from None
    except Exception as exc:
        raise SpecError(_MSG_IMPORT.format(module=module_part, spec=spec, error=one_line(exc))) from exc
    fn = getattr(module, name, None)
    if not callable(fn):
        raise SpecError(_MSG_ATTRIBUTE.format(module=module_part, name=name, spec=spec))
    new = tuple(sorted(set(sys.modules) - before))
    return Loaded(fn, module, None if is_file else module_part, new)


def defined_by(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The function behind ``fn``: itself, what a ``functools.partial`` wraps, or the class of a callable object."""
    target: Callable[..., Any] = fn
    while isinstance(target, functools.partial):
        target = target.func
    if inspect.isfunction(target) or inspect.ismethod(target) or inspect.isbuiltin(target):
        return target
    return type(target)


def callable_name(fn: Callable[..., Any]) -> str:
    """``module:qualname`` of the function behind ``fn`` (a lambda's with its line): stable from run to run.

    Examples
    --------
    >>> import textwrap
    >>> callable_name(textwrap.dedent)
    'textwrap:dedent'
    """
    target = defined_by(fn)
    qualname = str(getattr(target, "__qualname__", type(target).__qualname__))
    if isinstance(target, types.FunctionType) and target.__name__ == "<lambda>":  # two lambdas of a module differ by line
        qualname += f"@{target.__code__.co_firstlineno}"
    return f"{getattr(target, '__module__', None) or '?'}:{qualname}"


def resolved_target(loaded: Loaded | None, name: str) -> str | None:
    """What a model's target names, resolved here: its module's real file and the function, ``/real/bot.py:reply``.

    ``name`` is the model's name (``bot.py:reply``, ``./bot.py:reply``, ``bot:reply``; a function's
    ``module:qualname``); the module is the one loaded for it (a function's: its own, by name). The
    same text as :func:`fairtalk.compare.python_target` of each spelling, resolved in this process
    (None: a module without a file, or a name without a function).
    """
    module_part, sep, function = name.rpartition(":")
    if not sep or not module_part or not function:
        return None
    module = loaded.module if loaded is not None else sys.modules.get(module_part)
    file = getattr(module, "__file__", None)
    if not isinstance(file, str):
        return None
    try:
        return f"{Path(file).resolve()}:{function}"
    except (OSError, RuntimeError):
        return None


def user_code(loaded: Loaded | None, fn: Callable[..., Any]) -> UserCode | None:
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


class Worker:
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
        """Let the thread end once its current call returns."""
        if self._jobs is not None:
            self._jobs.put(None)
            self._jobs = None
