"""``python:module:function`` or ``python:path/to/file.py:function``: a user's callable as a model.

The callable is either *single* (``str -> str``, called once per context) or
*batched* (``list[str] -> list[str]``). Which one is decided by, in order: the
``batched=`` option, a ``batched`` attribute on the function (``fn.batched = True``),
else single. If the function has a ``seed`` parameter (single) or ``seeds``
parameter (batched), or a ``settings`` parameter, those are passed as keywords.
Exceptions the callable raises become :class:`~fairtalk.errors.ResponderError`.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from fairtalk.errors import BadResponse, ResponderError, SpecError
from fairtalk.models.base import (
    BaseResponder,
    DecodingSettings,
    as_bool,
    check_batch,
    check_options,
    make_fingerprint,
)

__all__ = ["PythonResponder"]

_MSG_SPEC = "malformed python spec {spec!r} (expected python:module:function or python:file.py:function)"
_MSG_IMPORT = "cannot import {module!r} for {spec!r}: {error}"
_MSG_ATTRIBUTE = "{module!r} has no callable {name!r} (spec {spec!r})"
_MSG_RAISED = "{target} raised {kind}: {error}"
_MSG_NOT_LIST = "{target} returned {kind}; a batched callable must return a list of strings"
_MSG_LENGTH = "{target} returned {n_results} responses for {n_contexts} contexts"
_MSG_NOT_STR = "{target} returned {kind} for item {index}; responses must be strings"


def _load_callable(target: str) -> Callable[..., Any]:
    spec = f"python:{target}"
    module_part, sep, name = target.rpartition(":")
    if not sep or not module_part or not name:
        raise SpecError(_MSG_SPEC.format(spec=spec))
    try:
        if module_part.endswith(".py") or "/" in module_part or "\\" in module_part:
            path = Path(module_part).resolve()
            if not path.is_file():
                raise SpecError(_MSG_IMPORT.format(module=module_part, spec=spec, error="file not found"))
            digest = hashlib.blake2b(str(path).encode(), digest_size=6).hexdigest()
            mod_name = f"_fairtalk_user_{path.stem}_{digest}"
            module = sys.modules.get(mod_name)
            if module is None:
                file_spec = importlib.util.spec_from_file_location(mod_name, path)
                if file_spec is None or file_spec.loader is None:
                    raise SpecError(_MSG_IMPORT.format(module=module_part, spec=spec, error="not a module"))
                module = importlib.util.module_from_spec(file_spec)
                sys.modules[mod_name] = module
                try:
                    file_spec.loader.exec_module(module)
                except BaseException:
                    del sys.modules[mod_name]
                    raise
        else:
            module = importlib.import_module(module_part)
    except SpecError:
        raise
    except Exception as exc:
        raise SpecError(_MSG_IMPORT.format(module=module_part, spec=spec, error=exc)) from exc
    fn = getattr(module, name, None)
    if not callable(fn):
        raise SpecError(_MSG_ATTRIBUTE.format(module=module_part, name=name, spec=spec))
    return fn


class PythonResponder(BaseResponder):
    """Wrap a user callable (single or batched) as a responder."""

    def __init__(self, fn: Callable[..., Any], *, name: str | None = None, batched: bool | None = None) -> None:
        self.fn = fn
        self.name = name or f"{getattr(fn, '__module__', '?')}:{getattr(fn, '__qualname__', repr(fn))}"
        self.batched = bool(getattr(fn, "batched", False)) if batched is None else batched
        try:
            source = inspect.getsource(fn)
        except (OSError, TypeError):
            source = None
        self._source_hash = None if source is None else hashlib.sha256(source.encode()).hexdigest()[:16]
        try:
            params = inspect.signature(fn).parameters
        except (TypeError, ValueError):
            params = {}  # type: ignore[assignment]
        self._pass_seed = ("seeds" if self.batched else "seed") in params
        self._pass_settings = "settings" in params

    @classmethod
    def from_spec(cls, rest: str, **options: Any) -> PythonResponder:
        """Build from ``python:module:function`` with option ``batched``."""
        check_options(f"python:{rest}", options, ("batched",))
        batched = options.get("batched")
        return cls(_load_callable(rest), name=rest, batched=None if batched is None else as_bool("batched", batched))

    @property
    def fingerprint(self) -> str:
        """``python:<target>`` plus a hash of the function's source when available."""
        return make_fingerprint("python", self.name, source=self._source_hash, batched=self.batched)

    def _call(self, arg: Any, seed_value: Any, settings: DecodingSettings) -> Any:
        kwargs: dict[str, Any] = {}
        if self._pass_seed:
            kwargs["seeds" if self.batched else "seed"] = seed_value
        if self._pass_settings:
            kwargs["settings"] = settings
        try:
            return self.fn(arg, **kwargs)
        except ResponderError:
            raise
        except Exception as exc:
            raise ResponderError(
                _MSG_RAISED.format(target=self.name, kind=type(exc).__name__, error=exc)
            ) from exc

    def _check_item(self, value: Any, index: int) -> str:
        if not isinstance(value, str):
            raise BadResponse(_MSG_NOT_STR.format(target=self.name, kind=type(value).__name__, index=index))
        return value

    def respond(
        self, contexts: Sequence[str], settings: DecodingSettings, *, seeds: Sequence[int]
    ) -> list[str]:
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
        out: list[str | ResponderError] = []
        for i, (c, s) in enumerate(zip(contexts, seeds)):
            try:
                out.append(self._check_item(self._call(c, s, settings), i))
            except ResponderError as exc:
                out.append(exc)
        return out
